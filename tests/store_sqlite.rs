//! `SqliteCheckpointer` (feature `sqlite`) follows every rule of the `Checkpointer` contract
//! (`store_rules`), keeps what it stored across a reopen, reports a corrupt row as `Decode`,
//! and runs its blocking calls off the executor, on a current-thread runtime too. Its thread
//! store (`SqliteThreadStore`, in the same file) follows every rule of the `ThreadStore`
//! contract (`thread_store_rules`, owners and namespaces among them), keeps its threads across
//! a reopen, and refuses a damaged one naming it. (The migration of a file of an earlier
//! version, which needs SQLite by hand, is tested in the crate `hookchain-stores`.)

mod store_rules;
mod support;
mod thread_store_rules;

use hookchain::interrupt::{
    CheckpointError, Checkpointer, Clock, Record, SqliteCheckpointer, Stored,
};
use hookchain::thread_store::ThreadStore;
use hookchain::{Thread, ThreadId};
use store_rules::{busy, claim, store_as};

#[tokio::test(start_paused = true)]
async fn sqlite_checkpointer_follows_the_rules() {
    let dir = support::temp_dir("store_sqlite", "rules");
    let store = SqliteCheckpointer::open(dir.join("checkpoints.db"))
        .unwrap()
        .with_clock(Clock::tokio());
    store_rules::check(&store).await;
    drop(store);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// What was stored is there when the file is opened again, leases included; opening an
/// existing file does not touch its table.
#[tokio::test]
async fn a_reopened_store_keeps_what_was_stored() {
    let dir = support::temp_dir("store_sqlite", "reopen");
    let path = dir.join("checkpoints.db");
    let (paused, step) = (store_rules::pause().await, store_rules::step("s").await);
    let first = {
        let store = SqliteCheckpointer::open(&path).unwrap();
        store_as(&store, "paused", &paused, "w-1").await;
        store_as(&store, "running", &step, "w-2").await
    };
    let store = SqliteCheckpointer::open(&path).unwrap();
    assert_eq!(store.path(), path);
    assert_eq!(
        store.get("paused").await.unwrap(),
        Some(Record::Checkpoint(Box::new(paused)))
    );
    assert_eq!(
        store.get("running").await.unwrap(),
        Some(Record::Checkpoint(Box::new(step.clone())))
    );
    assert_eq!(
        store.list().await.unwrap(),
        [
            Stored::new("paused", None, false),
            Stored::new("running", Some("w-2".to_owned()), false)
        ]
    );
    // Still leased after the reopen, and its lease still writes.
    assert_eq!(busy(&store, "running", "w-1").await, "w-2");
    store.put("running", &step, &first).await.unwrap();
    drop(store);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A row whose checkpoint was damaged on disk (a field renamed in the file's bytes) reads as
/// `Decode`, not as a panic or `None`; a claim is granted with the error, and the claimer
/// ends it.
#[tokio::test]
async fn a_corrupt_row_reads_as_decode() {
    let dir = support::temp_dir("store_sqlite", "corrupt");
    let path = dir.join("checkpoints.db");
    {
        let store = SqliteCheckpointer::open(&path).unwrap();
        store_as(&store, "t", &store_rules::pause().await, "w").await;
    }
    // The last connection closed: the write-ahead log is in the file, and gone.
    let wal = dir.join("checkpoints.db-wal");
    assert!(
        std::fs::metadata(&wal).map_or(true, |wal| wal.len() == 0),
        "the WAL was not checkpointed"
    );
    let mut bytes = std::fs::read(&path).unwrap();
    let field = b"\"run_id\"";
    let at: Vec<usize> = bytes
        .windows(field.len())
        .enumerate()
        .filter(|(_, window)| window == field)
        .map(|(at, _)| at)
        .collect();
    assert_eq!(at.len(), 1, "the field is in the file once");
    bytes[at[0] + field.len() - 2] = b'x'; // "run_ix": the checkpoint misses a field.
    std::fs::write(&path, bytes).unwrap();

    let store = SqliteCheckpointer::open(&path).unwrap();
    store_rules::corrupt_entry_reads_as_decode(&store, "t").await;
    drop(store);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A file that is not a SQLite database is a `Store` error when opened, not a panic.
#[test]
fn a_file_that_is_not_a_database_is_a_store_error() {
    let dir = support::temp_dir("store_sqlite", "not_a_database");
    let path = dir.join("checkpoints.db");
    std::fs::write(
        &path,
        "not a database, but long enough to have a header of a sort",
    )
    .unwrap();
    let error = SqliteCheckpointer::open(&path).unwrap_err();
    assert!(
        matches!(error, CheckpointError::Store { what, .. } if what == "switch to WAL mode" || what == "create the table"),
        "{error:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// On a current-thread runtime (one executor thread) every rule holds: the blocking calls run
/// on tokio's blocking threads, the eight racing claims among them. Outside any runtime a
/// call is a `Store` error, not a panic and not a call blocking whatever polls it.
#[test]
fn sqlite_checkpointer_works_on_a_current_thread_runtime() {
    let dir = support::temp_dir("store_sqlite", "current_thread");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let store = SqliteCheckpointer::open(dir.join("checkpoints.db")).unwrap();
    runtime.block_on(async {
        let (lease, _) = claim(&store, "t", "w").await;
        store
            .put("t", &store_rules::pause().await, &lease)
            .await
            .unwrap();
        let claims =
            (0..8).map(|i| store.claim("t", if i == 0 { "a" } else { "b" }, store_rules::TTL));
        let granted = futures::future::join_all(claims)
            .await
            .into_iter()
            .filter(|claim| matches!(claim, Ok(hookchain::interrupt::Claim::Granted { .. })))
            .count();
        assert_eq!(granted, 1);
    });

    let outside = futures::executor::block_on(store.get("t")).unwrap_err();
    assert!(
        matches!(outside, CheckpointError::Store { what: "read", .. }),
        "{outside:?}"
    );
    drop(store);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_thread_store_follows_the_rules() {
    let dir = support::temp_dir("store_sqlite", "thread_rules");
    let store = SqliteCheckpointer::open(dir.join("agents.db")).unwrap();
    thread_store_rules::check(&store.threads()).await;
    thread_store_rules::owners::unreadable_threads_are_not_owned(&store.threads()).await;
    drop(store);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Threads and runs share the file: each keeps its own, and both are there after a reopen.
#[tokio::test]
async fn threads_and_runs_share_the_file_across_a_reopen() {
    let dir = support::temp_dir("store_sqlite", "thread_reopen");
    let path = dir.join("agents.db");
    let thread = thread_store_rules::conversation("t", "hello").await;
    let paused = store_rules::pause().await;
    {
        let store = SqliteCheckpointer::open(&path).unwrap();
        store.threads().save(&thread, 0).await.unwrap();
        store_as(&store, "t", &paused, "w").await;
    }
    let store = SqliteCheckpointer::open(&path).unwrap();
    let stored = thread_store_rules::load(&store.threads(), "t").await;
    assert_eq!((stored.version, stored.thread), (1, thread));
    assert_eq!(
        store.get("t").await.unwrap(),
        Some(Record::Checkpoint(Box::new(paused)))
    );
    assert!(store.threads().delete(&ThreadId::new("t")).await.unwrap());
    assert_eq!(store.list().await.unwrap().len(), 1);
    drop(store);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A thread damaged on disk (a field renamed in the file's bytes) is refused naming it, not a
/// panic or `None`; deleting it removes it.
#[tokio::test]
async fn a_damaged_thread_row_is_refused() {
    let dir = support::temp_dir("store_sqlite", "thread_damaged");
    let path = dir.join("agents.db");
    {
        let store = SqliteCheckpointer::open(&path).unwrap();
        let thread: Thread<()> = thread_store_rules::conversation("t", "hello").await;
        store.threads().save(&thread, 0).await.unwrap();
    }
    let mut bytes = std::fs::read(&path).unwrap();
    let field = b"\"messages\"";
    let at: Vec<usize> = bytes
        .windows(field.len())
        .enumerate()
        .filter(|(_, window)| window == field)
        .map(|(at, _)| at)
        .collect();
    assert_eq!(at.len(), 1, "the field is in the file once");
    bytes[at[0] + field.len() - 2] = b'z'; // "messagez": the thread misses a field.
    std::fs::write(&path, bytes).unwrap();

    let store = SqliteCheckpointer::open(&path).unwrap();
    thread_store_rules::damaged_entry_is_refused(&store.threads(), "t").await;
    drop(store);
    std::fs::remove_dir_all(&dir).unwrap();
}
