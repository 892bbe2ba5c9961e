//! Who may act on a thread, on the database stores: the cross-user suite of hookchain-axum
//! (`axum/tests/cross_user/suite.rs`) with the SQLite store (a file of the test's own) and the
//! Postgres store (a server the test starts itself, `pg`), each with its checkpointer in the
//! same database — a foreign id gets what an unknown id gets and changes nothing; tenants
//! keep apart; the owner does everything.

mod pg;

#[path = "../axum/tests/cross_user/suite.rs"]
mod suite;

/// hookchain-axum's items, as the suite names them.
mod axum_api {
    pub(crate) use hookchain::axum::*;
}

use hookchain::interrupt::{PostgresCheckpointer, SqliteCheckpointer};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_sqlite() {
    let dir = std::env::temp_dir().join(format!("hookchain-cross-user-db-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let runs = SqliteCheckpointer::open(dir.join("agent.db")).unwrap();
    let threads = runs.threads();
    suite::cross_user_attempts_fail_and_change_nothing(runs, threads).await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_postgres() {
    let server = pg::Postgres::start();
    let runs = PostgresCheckpointer::connect(&server.config())
        .await
        .expect("the test's server takes connections");
    let threads = runs.threads();
    suite::cross_user_attempts_fail_and_change_nothing(runs, threads).await;
}
