//! Who may act on a thread, from outside: the cross-user suite (`suite.rs`) on the thread
//! stores of the core — in memory and in files — with their checkpointers. (The database
//! stores run it in the workspace's `tests/cross_user_databases.rs`.)

mod suite;

/// This crate's items, as the suite names them.
mod axum_api {
    pub(crate) use hookchain_axum::*;
}

use std::sync::Arc;

use hookchain::interrupt::{FileCheckpointer, InMemoryCheckpointer};
use hookchain::thread_store::{FileThreadStore, InMemoryThreadStore};

#[tokio::test]
async fn in_memory() {
    suite::cross_user_attempts_fail_and_change_nothing(
        InMemoryCheckpointer::new(),
        Arc::new(InMemoryThreadStore::new()),
    )
    .await;
}

#[tokio::test]
async fn in_files() {
    let dir = std::env::temp_dir().join(format!("hookchain-cross-user-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    suite::cross_user_attempts_fail_and_change_nothing(
        FileCheckpointer::new(dir.join("runs")),
        Arc::new(FileThreadStore::new(dir.join("threads"))),
    )
    .await;
    let _ = std::fs::remove_dir_all(&dir);
}
