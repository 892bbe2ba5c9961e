//! The runs a server has going, and those that ended a short while ago, by their run id: a
//! request that names a run already known joins it (a client's retry never starts a second
//! run), and a client can read a run's events again after a disconnect.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use super::RunLog;

/// What starting a run found.
#[derive(Debug)]
pub(crate) enum Started {
    /// A new run: the caller runs it and writes its events to the log.
    New(Arc<RunLog>),
    /// The run is known (going, or ended a short while ago): its log.
    Joined(Arc<RunLog>),
}

/// Why a run cannot start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Refused {
    /// As many runs as the server takes are going.
    #[error("the server runs as many agents as it takes ({0}); try again later")]
    Busy(usize),
    /// The run id is known for another thread.
    #[error("the run id is taken by another thread")]
    OtherThread,
    /// The server is shutting down.
    #[error("the server is shutting down")]
    ShuttingDown,
}

#[derive(Debug)]
struct Entry {
    thread_id: String,
    log: Arc<RunLog>,
}

#[derive(Debug, Default)]
struct Known {
    runs: HashMap<String, Entry>,
    closed: bool,
}

/// The known runs.
#[derive(Debug)]
pub(crate) struct Runs {
    known: Mutex<Known>,
    /// The most runs going at once.
    max_running: usize,
    /// The most events kept per run.
    events_per_run: usize,
    /// How long an ended run's events are kept for a reconnecting client.
    keep_ended: Duration,
}

impl Runs {
    pub(crate) fn new(max_running: usize, events_per_run: usize, keep_ended: Duration) -> Self {
        Self {
            known: Mutex::default(),
            max_running,
            events_per_run,
            keep_ended,
        }
    }

    fn known(&self) -> std::sync::MutexGuard<'_, Known> {
        self.known.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Starts run `run_id` of `thread_id`, or joins it if it is known.
    pub(crate) fn start(&self, thread_id: &str, run_id: &str) -> Result<Started, Refused> {
        let mut known = self.known();
        if let Some(entry) = known.runs.get(run_id) {
            if entry.thread_id != thread_id {
                return Err(Refused::OtherThread);
            }
            return Ok(Started::Joined(Arc::clone(&entry.log)));
        }
        if known.closed {
            return Err(Refused::ShuttingDown);
        }
        let running = known
            .runs
            .values()
            .filter(|entry| !entry.log.is_ended())
            .count();
        if running >= self.max_running {
            return Err(Refused::Busy(self.max_running));
        }
        let log = Arc::new(RunLog::new(self.events_per_run));
        known.runs.insert(
            run_id.to_owned(),
            Entry {
                thread_id: thread_id.to_owned(),
                log: Arc::clone(&log),
            },
        );
        Ok(Started::New(log))
    }

    /// The log of run `run_id`, if it is known.
    pub(crate) fn get(&self, run_id: &str) -> Option<Arc<RunLog>> {
        self.known()
            .runs
            .get(run_id)
            .map(|entry| Arc::clone(&entry.log))
    }

    /// How many runs are going.
    pub(crate) fn running(&self) -> usize {
        self.known()
            .runs
            .values()
            .filter(|entry| !entry.log.is_ended())
            .count()
    }

    /// No new run starts from now on (a run already known can still be joined).
    pub(crate) fn close(&self) {
        self.known().closed = true;
    }

    /// Run `run_id` ended (its log too): forgotten after the time its events are kept.
    pub(crate) async fn forget_later(self: Arc<Self>, run_id: String) {
        tokio::time::sleep(self.keep_ended).await;
        self.known().runs.remove(&run_id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_known_run_is_joined_a_full_server_refuses_and_ended_runs_are_forgotten_later() {
        let runs = Arc::new(Runs::new(1, 10, Duration::from_secs(300)));
        let Ok(Started::New(log)) = runs.start("t", "r1") else {
            panic!("a new run");
        };
        assert!(matches!(runs.start("t", "r1"), Ok(Started::Joined(_))));
        assert_eq!(runs.start("other", "r1").unwrap_err(), Refused::OtherThread);
        assert_eq!(runs.start("t", "r2").unwrap_err(), Refused::Busy(1));
        log.end();
        assert_eq!(runs.running(), 0);
        assert!(matches!(runs.start("t", "r2"), Ok(Started::New(_))));
        let forget = tokio::spawn(Arc::clone(&runs).forget_later("r1".into()));
        tokio::time::sleep(Duration::from_secs(299)).await;
        assert!(runs.get("r1").is_some());
        tokio::time::sleep(Duration::from_secs(2)).await;
        forget.await.unwrap();
        assert!(runs.get("r1").is_none());
        runs.close();
        assert_eq!(runs.start("t", "r3").unwrap_err(), Refused::ShuttingDown);
    }
}
