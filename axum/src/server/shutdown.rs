//! Stopping a server: no new run, the running ones given a grace period, the rest stopped.

use std::time::Duration;

use hookchain_core::thread_store::ThreadStore;
use hookchain_core::{Middleware, Model};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::AgentServer;

/// How a shutdown went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ShutdownReport {
    /// Runs that ended within the grace period.
    pub finished: usize,
    /// Runs stopped at its end (their threads left as before their turn).
    pub stopped: usize,
}

/// How often the runs still going are counted while waiting.
const POLL: Duration = Duration::from_millis(20);

impl<M, C, S> AgentServer<M, C, S>
where
    M: Model + 'static,
    C: Middleware + 'static,
    C::ThreadState: Serialize + DeserializeOwned + Send,
    S: ThreadStore + 'static,
{
    /// Refuses new runs (`503 shutting_down`), waits up to `grace` for the running ones to
    /// end (answer or pause, their threads saved), then stops the rest: their clients read
    /// `RUN_ERROR` `server_shutdown`, their threads stay as they were before the turn, and
    /// their runs are continued when their clients send them again (see [`AgentServer`]).
    /// Returns once every run has ended and let its key go in the agent's checkpointer (for
    /// at most the agent's lease). Call it from the shutdown signal given to
    /// [`axum::serve()`]'s `with_graceful_shutdown`, which then waits for the streams to close.
    pub async fn shutdown(&self, grace: Duration) -> ShutdownReport {
        let runs = &self.shared.runs;
        runs.close();
        let before = runs.running();
        let waited = tokio::time::timeout(grace, async {
            while runs.running() > 0 {
                tokio::time::sleep(POLL).await;
            }
        })
        .await;
        let stopped = if waited.is_ok() { 0 } else { runs.running() };
        self.shared.stop.send_replace(true);
        while runs.running() > 0 {
            tokio::time::sleep(POLL).await;
        }
        // The stopped runs let their keys go in tasks of their own: waited for, so that the next
        // process can continue them at once rather than when their leases expire (past which
        // waiting is pointless).
        let agent = &self.shared.agent;
        let _ = tokio::time::timeout(agent.lease().unwrap_or_default(), agent.settle()).await;
        ShutdownReport {
            finished: before - stopped,
            stopped,
        }
    }
}
