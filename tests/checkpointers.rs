//! The checkpoint stores of the core: `InMemoryCheckpointer` and `FileCheckpointer` follow
//! every rule of the `Checkpointer` contract (`store_rules`), and the file store writes
//! atomically, off the executor, and reports what it cannot read.

mod store_rules;
mod support;

use std::path::Path;

use hookchain::Checkpoint;
use hookchain::interrupt::{CheckpointError, Checkpointer, FileCheckpointer, InMemoryCheckpointer};

/// The names of the files in `dir`.
fn file_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn in_memory_checkpointer_follows_the_rules() {
    store_rules::check(&InMemoryCheckpointer::new()).await;
}

#[tokio::test]
async fn file_checkpointer_follows_the_rules() {
    let dir = support::temp_dir("checkpointers", "rules");
    store_rules::check(&FileCheckpointer::new(&dir)).await;
    assert!(file_names(&dir).is_empty(), "{:?}", file_names(&dir));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `<dir>/<key>.json` (the directory created on the first write), a `.holder` file while a
/// worker holds the key, odd characters written `%XX`, and no temporary file left behind.
#[tokio::test]
async fn file_checkpointer_files() {
    let test_dir = support::temp_dir("checkpointers", "files");
    let dir = test_dir.join("store");
    let store = FileCheckpointer::new(&dir);
    let (paused, step) = (store_rules::pause().await, store_rules::step("s").await);
    assert!(!dir.exists());
    store.put("thread-9", &paused, "w").await.unwrap();
    store.put("thread-9", &paused, "w").await.unwrap();
    assert_eq!(file_names(&dir), ["thread-9.json"]);
    assert_eq!(store.path("thread-9").unwrap(), dir.join("thread-9.json"));
    let text = std::fs::read_to_string(dir.join("thread-9.json")).unwrap();
    assert_eq!(Checkpoint::from_json(&text).unwrap(), paused);

    store.put("a/b.c", &step, "w-1").await.unwrap();
    assert_eq!(
        file_names(&dir),
        ["a%2Fb%2Ec.holder", "a%2Fb%2Ec.json", "thread-9.json"]
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("a%2Fb%2Ec.holder")).unwrap(),
        "w-1"
    );
    std::fs::remove_dir_all(&test_dir).unwrap();
}

/// A corrupt checkpoint file (cut short) reads as `CheckpointError::Decode`, as every store's
/// corrupt entry does (`store_rules`), and deleting it leaves no file behind.
#[tokio::test]
async fn file_checkpointer_reports_a_corrupt_file() {
    let dir = support::temp_dir("checkpointers", "corrupt");
    let store = FileCheckpointer::new(&dir);
    store
        .put("t", &store_rules::pause().await, "w")
        .await
        .unwrap();
    let path = store.path("t").unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, &text[..text.len() - 10]).unwrap();
    store_rules::corrupt_entry_reads_as_decode(&store, "t").await;
    assert!(file_names(&dir).is_empty(), "{:?}", file_names(&dir));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A write that fails (here: the rename, onto a directory of the checkpoint's name) is an
/// `Io` error naming the path, and leaves no temporary file behind.
#[tokio::test]
async fn a_failed_file_write_removes_its_temporary_file() {
    let dir = support::temp_dir("checkpointers", "failed_write");
    let store = FileCheckpointer::new(&dir);
    std::fs::create_dir_all(dir.join("t.json").join("occupied")).unwrap();
    let error = store
        .put("t", &store_rules::pause().await, "w")
        .await
        .unwrap_err();
    assert!(matches!(error, CheckpointError::Io { .. }), "{error:?}");
    assert!(error.to_string().contains("t.json"), "{error}");
    assert_eq!(file_names(&dir), ["t.json"], "a temporary file was left");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// On a current-thread runtime the file operations run on the blocking threads (the only
/// executor thread is never blocked) and complete as they do elsewhere.
#[test]
fn file_checkpointer_works_off_the_executor_and_outside_any_runtime() {
    let dir = support::temp_dir("checkpointers", "off_executor");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let checkpoint = runtime.block_on(store_rules::pause());
    let store = FileCheckpointer::new(&dir);
    runtime.block_on(async {
        store.put("t", &checkpoint, "w").await.unwrap();
        assert_eq!(store.get("t").await.unwrap().as_ref(), Some(&checkpoint));
    });
    // Outside a runtime: in place.
    let claimed = futures::executor::block_on(store.claim("t", "w")).unwrap();
    assert_eq!(claimed.as_ref(), Some(&checkpoint));
    futures::executor::block_on(store.delete("t", "w")).unwrap();
    assert!(file_names(&dir).is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}
