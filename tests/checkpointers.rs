//! The checkpoint stores of the core: `InMemoryCheckpointer` and `FileCheckpointer` follow
//! every rule of the `Checkpointer` contract (`store_rules`), the file store writes atomically,
//! off the executor, and reports what it cannot read, and any store works as a trait object.

mod store_rules;
mod support;

use std::path::Path;
use std::sync::Arc;

use hookchain::interrupt::{
    CheckpointError, Checkpointer, Clock, DynCheckpointer, FileCheckpointer, InMemoryCheckpointer,
    Record, Slot,
};
use store_rules::{claim, store_as};

/// The names of the files in `dir`.
fn file_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[tokio::test(start_paused = true)]
async fn in_memory_checkpointer_follows_the_rules() {
    store_rules::check(&InMemoryCheckpointer::new().with_clock(Clock::tokio())).await;
}

#[tokio::test(start_paused = true)]
async fn file_checkpointer_follows_the_rules() {
    let dir = support::temp_dir("checkpointers", "rules");
    store_rules::check(&FileCheckpointer::new(&dir).with_clock(Clock::tokio())).await;
    assert_eq!(file_names(&dir), [".lock"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Every store is a `DynCheckpointer`, and the object (in an `Arc` or a `Box`) follows the
/// same rules.
#[tokio::test(start_paused = true)]
async fn a_store_as_a_trait_object_follows_the_rules() {
    let store: Arc<dyn DynCheckpointer> =
        Arc::new(InMemoryCheckpointer::new().with_clock(Clock::tokio()));
    store_rules::check(&store).await;
    let dir = support::temp_dir("checkpointers", "dyn");
    let boxed: Box<dyn DynCheckpointer> =
        Box::new(FileCheckpointer::new(&dir).with_clock(Clock::tokio()));
    store_rules::check(&boxed).await;
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `<dir>/<key>.json` (the directory created on the first write) holding the key's slot, odd
/// characters written `%XX`, and no temporary file left behind.
#[tokio::test]
async fn file_checkpointer_files() {
    let test_dir = support::temp_dir("checkpointers", "files");
    let dir = test_dir.join("store");
    let store = FileCheckpointer::new(&dir);
    let (paused, step) = (store_rules::pause().await, store_rules::step("s").await);
    assert!(!dir.exists());
    store_as(&store, "thread-9", &paused, "w").await;
    assert_eq!(file_names(&dir), [".lock", "thread-9.json"]);
    assert_eq!(store.path("thread-9").unwrap(), dir.join("thread-9.json"));
    let text = std::fs::read_to_string(dir.join("thread-9.json")).unwrap();
    let slot: Slot = serde_json::from_str(&text).unwrap();
    assert_eq!(slot.held_by, None);
    assert_eq!(
        slot.record(std::time::SystemTime::now()).unwrap(),
        Some(Record::Checkpoint(Box::new(paused)))
    );

    store_as(&store, "a/b.c", &step, "w-1").await;
    assert_eq!(
        file_names(&dir),
        [".lock", "a%2Fb%2Ec.json", "thread-9.json"]
    );
    std::fs::remove_dir_all(&test_dir).unwrap();
}

/// A file written by the version before leases (the checkpoint alone) reads as a free key
/// holding it, and is claimed and resumed as any.
#[tokio::test]
async fn file_checkpointer_reads_an_older_file() {
    let dir = support::temp_dir("checkpointers", "older");
    let store = FileCheckpointer::new(&dir);
    let paused = store_rules::pause().await;
    std::fs::write(store.path("old").unwrap(), paused.to_json().unwrap()).unwrap();
    assert_eq!(
        store.get("old").await.unwrap(),
        Some(Record::Checkpoint(Box::new(paused.clone())))
    );
    let (lease, record) = claim(&store, "old", "w").await;
    assert_eq!(record, Some(Record::Checkpoint(Box::new(paused))));
    store.end("old", &lease, None).await.unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A corrupt checkpoint file (cut short) reads as `CheckpointError::Decode`, as every store's
/// corrupt entry does (`store_rules`), and ending it leaves no file behind.
#[tokio::test]
async fn file_checkpointer_reports_a_corrupt_file() {
    let dir = support::temp_dir("checkpointers", "corrupt");
    let store = FileCheckpointer::new(&dir);
    store_as(&store, "t", &store_rules::pause().await, "w").await;
    let path = store.path("t").unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, &text[..text.len() - 10]).unwrap();
    assert!(matches!(
        store.get("t").await,
        Err(CheckpointError::Decode(_))
    ));
    // A file that is no slot at all cannot be claimed: removed by hand, it is gone.
    std::fs::remove_file(&path).unwrap();
    // A slot whose checkpoint is corrupt is granted with the error, and ended.
    let lease = store_as(&store, "t", &store_rules::pause().await, "w").await;
    let _ = lease;
    let mut slot: Slot = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let checkpoint = slot.checkpoint.take().unwrap();
    slot.checkpoint = Some(checkpoint[..checkpoint.len() - 10].to_owned());
    std::fs::write(&path, serde_json::to_string(&slot).unwrap()).unwrap();
    store_rules::corrupt_entry_reads_as_decode(&store, "t").await;
    assert_eq!(file_names(&dir), [".lock"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A write that fails (here: the rename, onto a directory of the checkpoint's name) is an
/// `Io` error naming the path, and leaves no temporary file behind.
#[tokio::test]
async fn a_failed_file_write_removes_its_temporary_file() {
    let dir = support::temp_dir("checkpointers", "failed_write");
    let store = FileCheckpointer::new(&dir);
    std::fs::create_dir_all(dir.join("t.json").join("occupied")).unwrap();
    let error = store.claim("t", "w", store_rules::TTL).await.unwrap_err();
    assert!(matches!(error, CheckpointError::Io { .. }), "{error:?}");
    assert!(error.to_string().contains("t.json"), "{error}");
    assert_eq!(
        file_names(&dir),
        [".lock", "t.json"],
        "a temporary file was left"
    );
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
        store_as(&store, "t", &checkpoint, "w").await;
        assert_eq!(
            store.get("t").await.unwrap(),
            Some(Record::Checkpoint(Box::new(checkpoint.clone())))
        );
    });
    // Outside a runtime: in place.
    let (lease, record) = futures::executor::block_on(claim(&store, "t", "w"));
    assert_eq!(record, Some(Record::Checkpoint(Box::new(checkpoint))));
    futures::executor::block_on(store.end("t", &lease, None)).unwrap();
    assert_eq!(file_names(&dir), [".lock"]);
    std::fs::remove_dir_all(&dir).unwrap();
}
