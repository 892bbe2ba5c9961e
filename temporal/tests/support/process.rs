//! Workers in processes of their own: the test binary run again with an environment variable
//! set, whose test `worker_process` is then the worker's `main`.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use hookchain_temporal::{StepHandler, StepWorker, connect};

use super::DevServer;

/// In a worker process (`env` set to the directory of the run's store): runs a worker of
/// `task_queue` with the handler `handler` makes for that directory, until it is killed.
/// Returns at once in the test run itself.
pub fn serve_if_worker<H: StepHandler>(
    env: &str,
    task_queue: &str,
    handler: impl FnOnce(&Path) -> H,
) {
    let Some(dir) = std::env::var_os(env) else {
        return;
    };
    let dir = PathBuf::from(dir);
    let address = std::env::var("TEMPORAL_ADDRESS").expect("the server's address");
    let namespace = std::env::var("TEMPORAL_NAMESPACE").expect("the namespace");
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            let client = connect(&address, &namespace).await.unwrap();
            let worker = StepWorker::new(client, task_queue, handler(&dir)).unwrap();
            eprintln!("worker process {} polling", std::process::id());
            worker.run().await.unwrap();
        });
}

/// Runs this test binary as a worker process on `server` (its test `worker_process`), with
/// `env` set to `dir`.
pub fn spawn_worker(env: &str, server: &DevServer, dir: &Path) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "worker_process",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(env, dir)
        .env("TEMPORAL_ADDRESS", server.address())
        .env("TEMPORAL_NAMESPACE", server.namespace())
        .stdin(Stdio::null())
        .spawn()
        .expect("a worker process")
}
