//! The thread stores of the core: `InMemoryThreadStore` and `FileThreadStore` follow every rule
//! of the `ThreadStore` contract (`thread_store_rules`); the file store writes one file per
//! thread and refuses what it cannot read; `Agent::run_in_store` loads, runs and saves, and
//! surfaces a conflict.

mod support;
mod thread_store_rules;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use hookchain::agent::THREAD_FORMAT;
use hookchain::prelude::*;
use hookchain::thread_store::{
    DynThreadStore, EncodedThread, FileThreadStore, InMemoryThreadStore, MAX_THREAD_LEN,
    ThreadStore, ThreadStoreError,
};
use hookchain::{EndReason, Error, Thread, ThreadError, ThreadId, chain, hook};
use serde_json::json;
use thread_store_rules::{conversation, load, texts};

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
async fn in_memory_thread_store_follows_the_rules() {
    thread_store_rules::check(&InMemoryThreadStore::new()).await;
    thread_store_rules::owners::unreadable_threads_are_not_owned(&InMemoryThreadStore::new()).await;
}

/// A shared store (`Arc`) is a store under the same rules; so is any store as a trait object
/// (in an `Arc` or a `Box`).
#[tokio::test]
async fn shared_and_dyn_thread_stores_follow_the_rules() {
    thread_store_rules::check(&Arc::new(InMemoryThreadStore::new())).await;
    let store: Arc<dyn DynThreadStore> = Arc::new(InMemoryThreadStore::new());
    thread_store_rules::check(&store).await;
    let dir = support::temp_dir("thread_stores", "dyn");
    let boxed: Box<dyn DynThreadStore> = Box::new(FileThreadStore::new(&dir));
    thread_store_rules::check(&boxed).await;
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_thread_store_follows_the_rules() {
    let dir = support::temp_dir("thread_stores", "rules");
    thread_store_rules::check(&FileThreadStore::new(&dir)).await;
    thread_store_rules::owners::unreadable_threads_are_not_owned(&FileThreadStore::new(&dir)).await;
    assert_eq!(file_names(&dir), [".lock"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Outside a runtime the file store works in place (no blocking pool to go to).
#[test]
fn file_thread_store_works_outside_a_runtime() {
    let dir = support::temp_dir("thread_stores", "no_runtime");
    let store = FileThreadStore::new(&dir);
    futures::executor::block_on(async {
        let thread = Thread::<()>::with_id(ThreadId::new("t"));
        assert_eq!(store.save(&thread, 0).await.unwrap(), 1);
        assert_eq!(load(&store, "t").await.version, 1);
    });
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `<dir>/<id>.json` (the directory created on the first save) holds the id, the version and
/// the thread as saved; odd characters are written `%XX`; an id too long for a file name is cut
/// and hashed, and still listed and loaded by its id.
#[tokio::test]
async fn file_thread_store_files() {
    let test_dir = support::temp_dir("thread_stores", "files");
    let dir = test_dir.join("threads");
    let store = FileThreadStore::new(&dir);
    assert!(!dir.exists());
    assert_eq!(store.list(None, 10).await.unwrap(), [] as [ThreadId; 0]);
    assert!(!store.delete(&ThreadId::new("none")).await.unwrap());
    assert!(!dir.exists());

    let thread = conversation("a/b.c", "hello").await;
    store.save(&thread, 0).await.unwrap();
    assert_eq!(file_names(&dir), [".lock", "a%2Fb%2Ec.json"]);
    let id = ThreadId::new("a/b.c");
    assert_eq!(store.path(&id).unwrap(), dir.join("a%2Fb%2Ec.json"));
    let text = std::fs::read_to_string(dir.join("a%2Fb%2Ec.json")).unwrap();
    let entry: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(entry["id"], json!("a/b.c"));
    assert_eq!(entry["version"], json!(1));
    assert_eq!(entry["thread"], serde_json::to_value(&thread).unwrap());

    let long = ThreadId::new(format!("{}{}", "x/".repeat(100), "end"));
    store
        .save(&Thread::<()>::with_id(long.clone()), 0)
        .await
        .unwrap();
    let cut = store.path(&long).unwrap();
    assert!(
        cut.file_name().unwrap().to_str().unwrap().contains('~'),
        "{cut:?}"
    );
    assert_eq!(
        store.list(None, 10).await.unwrap(),
        [id.clone(), long.clone()]
    );
    assert_eq!(load(&store, long.as_str()).await.thread.id(), &long);
    assert!(store.delete(&long).await.unwrap());
    std::fs::remove_dir_all(&test_dir).unwrap();
}

/// A thread file damaged on disk (truncated; a field renamed; not UTF-8; another thread's
/// entry copied over it) is refused naming the thread, still listed, and deleted on request.
#[tokio::test]
async fn a_damaged_thread_file_is_refused() {
    let dir = support::temp_dir("thread_stores", "damaged");
    let store = FileThreadStore::new(&dir);
    let path = store.path(&ThreadId::new("t")).unwrap();
    let damages: [fn(&str) -> Vec<u8>; 4] = [
        |text| text.as_bytes()[..text.len() / 2].to_vec(),
        |text| {
            text.replacen("\"messages\"", "\"messagez\"", 1)
                .into_bytes()
        },
        |text| [text.as_bytes(), &[0xff, 0xfe]].concat(),
        |text| {
            text.replacen("\"id\":\"t\"", "\"id\":\"u\"", 2)
                .into_bytes()
        },
    ];
    for damage in damages {
        store
            .save(&conversation("t", "hello").await, 0)
            .await
            .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let damaged = damage(&text);
        assert_ne!(damaged, text.as_bytes());
        std::fs::write(&path, damaged).unwrap();
        thread_store_rules::damaged_entry_is_refused(&store, "t").await;
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A thread file of a newer format is refused as such; a file larger than a thread may be is
/// refused before it is read.
#[tokio::test]
async fn newer_and_oversized_thread_files_are_refused() {
    let dir = support::temp_dir("thread_stores", "newer");
    let store = FileThreadStore::new(&dir);
    let id = ThreadId::new("t");
    store
        .save(&conversation("t", "hello").await, 0)
        .await
        .unwrap();
    let path = store.path(&id).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let newer = THREAD_FORMAT + 1;
    let text = text.replacen(
        &format!("\"format\":{THREAD_FORMAT}"),
        &format!("\"format\":{newer}"),
        1,
    );
    std::fs::write(&path, text).unwrap();
    let error = store.load::<()>(&id).await.unwrap_err();
    assert!(
        matches!(&error, ThreadStoreError::Format { id: named, found, supported: THREAD_FORMAT }
            if named == &id && *found == u64::from(newer)),
        "{error:?}"
    );

    // A sparse file: larger than any thread, without writing its bytes.
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.set_len(2 * MAX_THREAD_LEN as u64).unwrap();
    drop(file);
    let error = store.load::<()>(&id).await.unwrap_err();
    assert!(
        matches!(&error, ThreadStoreError::TooLarge { id: named, .. } if named == &id),
        "{error:?}"
    );
    assert!(store.delete(&id).await.unwrap());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `run_in_store` creates the thread on its first run, continues it on the next (the history
/// and the runs carried), and saves it each time, one version more.
#[tokio::test]
async fn run_in_store_loads_runs_and_saves() {
    let store = InMemoryThreadStore::new();
    let agent = thread_store_rules::agent(&["Hello!", "Still here."]);
    let id = ThreadId::new("c-1");
    let first = agent.run_in_store(&store, &id, "Hi").await.unwrap();
    assert_eq!(first.text().as_deref(), Some("Hello!"));
    let second = agent.run_in_store(&store, &id, "There?").await.unwrap();
    assert_eq!(second.text().as_deref(), Some("Still here."));
    let stored = load(&store, "c-1").await;
    assert_eq!(stored.version, 2);
    assert_eq!(stored.thread.runs(), 2);
    assert_eq!(
        texts(&stored.thread),
        ["Hi", "Hello!", "There?", "Still here."]
    );
}

/// A request handler's future is `Send`: requests run as tasks of their own, on a shared
/// agent and store; eight on eight threads each keep their own conversation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_run_in_tasks_of_their_own() {
    let store = Arc::new(InMemoryThreadStore::new());
    let answers = ["a"; 16];
    let agent = Arc::new(thread_store_rules::agent(&answers));
    let requests = (0..8).map(|i| {
        let (store, agent) = (Arc::clone(&store), Arc::clone(&agent));
        tokio::spawn(async move {
            let id = ThreadId::new(format!("c-{i}"));
            agent.run_in_store(&store, &id, "one").await?;
            agent.run_in_store(&store, &id, "two").await
        })
    });
    for done in futures::future::join_all(requests).await {
        done.unwrap().unwrap();
    }
    let ids = store.list(None, 100).await.unwrap();
    assert_eq!(ids.len(), 8);
    for id in ids {
        let stored = load(&*store, id.as_str()).await;
        assert_eq!((stored.version, texts(&stored.thread).len()), (2, 4));
    }
}

/// A store in which another writer saves each thread right after it is loaded: every save at
/// the loaded version then conflicts.
#[derive(Debug, Default)]
struct RacedStore {
    inner: InMemoryThreadStore,
    racing: AtomicBool,
}

impl ThreadStore for RacedStore {
    async fn load_encoded(&self, id: &ThreadId) -> Result<Option<EncodedThread>, ThreadStoreError> {
        let loaded = self.inner.load_encoded(id).await?;
        if self.racing.load(Ordering::SeqCst)
            && let Some(stored) = &loaded
        {
            self.inner
                .save_encoded(id, &stored.json, stored.version)
                .await?;
        }
        Ok(loaded)
    }

    async fn save_encoded(
        &self,
        id: &ThreadId,
        json: &str,
        expected: u64,
    ) -> Result<u64, ThreadStoreError> {
        self.inner.save_encoded(id, json, expected).await
    }

    async fn list(
        &self,
        after: Option<&ThreadId>,
        limit: usize,
    ) -> Result<Vec<ThreadId>, ThreadStoreError> {
        self.inner.list(after, limit).await
    }

    async fn delete(&self, id: &ThreadId) -> Result<bool, ThreadStoreError> {
        self.inner.delete(id).await
    }
}

/// When another request saved the thread while `run_in_store` ran, its save is refused with
/// the conflict (as `Error::ThreadStore`), and the stored thread is the other request's: this
/// run's turn is not in it.
#[tokio::test]
async fn run_in_store_surfaces_a_conflict() {
    let store = RacedStore::default();
    let agent = thread_store_rules::agent(&["one", "two"]);
    let id = ThreadId::new("c-2");
    agent.run_in_store(&store, &id, "first").await.unwrap();
    store.racing.store(true, Ordering::SeqCst);
    let error = agent.run_in_store(&store, &id, "second").await.unwrap_err();
    match &error {
        Error::ThreadStore(error) => assert!(
            matches!(
                **error,
                ThreadStoreError::Conflict {
                    expected: 1,
                    found: 2,
                    ..
                }
            ),
            "{error:?}"
        ),
        other => panic!("expected a conflict, got {other:?}"),
    }
    assert!(error.to_string().contains("another writer"), "{error}");
    store.racing.store(false, Ordering::SeqCst);
    let stored = load(&store, "c-2").await;
    assert_eq!(stored.version, 2);
    assert_eq!(texts(&stored.thread), ["first", "one"]);
}

/// Pauses before every model call.
#[hook(before_model)]
fn ask_first(cx: &mut Context) -> Flow {
    match cx.resume_value() {
        Some(_) => Flow::Continue,
        None => Flow::interrupt(json!("go?")),
    }
}

/// A paused run is saved with its pause; a run refused because of it saves nothing (the
/// version stays); `resume_in_store` resumes it and saves the thread.
#[tokio::test]
async fn a_paused_thread_resumes_in_the_store() {
    let store = InMemoryThreadStore::new();
    let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("done")]))
        .chain(chain![ask_first])
        .build()
        .unwrap();
    let id = ThreadId::new("c-3");
    let paused = agent.run_in_store(&store, &id, "start").await.unwrap();
    assert_eq!(paused.end, EndReason::Interrupted);
    let stored = store.load::<serde_json::Value>(&id).await.unwrap().unwrap();
    assert!(stored.thread.is_paused());
    assert_eq!(stored.version, 1);

    let refused = agent.run_in_store(&store, &id, "again").await.unwrap_err();
    assert!(
        matches!(&refused, Error::Thread(error) if matches!(**error, ThreadError::Paused { .. })),
        "{refused:?}"
    );
    assert_eq!(store.load_encoded(&id).await.unwrap().unwrap().version, 1);

    let checkpoint = paused.checkpoint.unwrap();
    let answers: Vec<_> = checkpoint
        .pending()
        .map(|i| (i.clone(), json!("go")))
        .collect();
    let done = agent
        .resume_in_store(&store, &id, checkpoint, answers)
        .await
        .unwrap();
    assert_eq!(done.text().as_deref(), Some("done"));
    let stored = store.load::<serde_json::Value>(&id).await.unwrap().unwrap();
    assert!(!stored.thread.is_paused());
    assert_eq!((stored.version, stored.thread.runs()), (2, 1));
}

/// A run that fails is saved with what it changed (here its input), and its error returned.
#[tokio::test]
async fn a_failed_run_is_saved_and_its_error_returned() {
    let store = InMemoryThreadStore::new();
    let model = ScriptedModel::new([]).then_fail(hookchain::ModelError::new(
        hookchain::ModelErrorKind::Overloaded,
        "down",
    ));
    let agent = Agent::builder(model).build().unwrap();
    let id = ThreadId::new("c-4");
    let error = agent.run_in_store(&store, &id, "hello").await.unwrap_err();
    assert!(matches!(error, Error::Model(_)), "{error:?}");
    let stored = load(&store, "c-4").await;
    assert_eq!(stored.version, 1);
    assert_eq!(texts(&stored.thread), ["hello"]);
}
