//! The runs a server has going, and those that ended a short while ago, by their thread and
//! run id: a request that names a run already known joins it (a client's retry never starts a
//! second run), and a client can read a run's events again after a disconnect. What is kept is
//! bounded: runs going (in all, and per principal), ended runs (by count and by age).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

use super::RunLog;

/// A run, as the registry knows it: the key of its thread in the stores (namespaced by the
/// tenant) and the client's id for the run.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct RunKey {
    pub(crate) thread: String,
    pub(crate) run: String,
}

/// A known run.
#[derive(Debug, Clone)]
pub(crate) struct KnownRun {
    pub(crate) log: Arc<RunLog>,
    /// The owner of the run's thread (for the access check of a request that joins it or reads
    /// its events).
    pub(crate) owner: Option<String>,
}

/// What starting a run found.
#[derive(Debug)]
pub(crate) enum Started {
    /// A new run: the caller runs it and writes its events to the log.
    New(Arc<RunLog>),
    /// The run is known (going, or ended a short while ago).
    Joined(KnownRun),
}

/// Why a run cannot start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Refused {
    /// As many runs as the server takes are going.
    #[error("the server runs as many agents as it takes ({0}); try again later")]
    Busy(usize),
    /// As many runs of this principal as the server takes are going.
    #[error("you have as many runs going as the server takes ({0}); wait for one to end")]
    TooMany(usize),
    /// The server is shutting down.
    #[error("the server is shutting down")]
    ShuttingDown,
}

/// How much the registry keeps.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bounds {
    /// The most runs going at once.
    pub(crate) max_running: usize,
    /// The most runs of one principal going at once.
    pub(crate) max_running_per_principal: usize,
    /// The most events kept per run.
    pub(crate) events_per_run: usize,
    /// The most bytes of events kept per run.
    pub(crate) event_bytes_per_run: usize,
    /// How long an ended run's events are kept for a reconnecting client.
    pub(crate) keep_ended: Duration,
    /// The most ended runs kept.
    pub(crate) max_ended: usize,
}

#[derive(Debug)]
struct Entry {
    run: KnownRun,
    /// Whose run it is, for the limit per principal.
    principal: String,
    /// When it ended; `None` while it goes.
    ended: Option<Instant>,
}

#[derive(Debug, Default)]
struct Known {
    runs: HashMap<RunKey, Entry>,
    /// The ended runs, oldest first (each key once: a run ends once).
    ended: VecDeque<RunKey>,
    closed: bool,
}

/// The known runs.
#[derive(Debug)]
pub(crate) struct Runs {
    known: Mutex<Known>,
    bounds: Bounds,
}

impl Runs {
    pub(crate) fn new(bounds: Bounds) -> Self {
        Self {
            known: Mutex::default(),
            bounds,
        }
    }

    fn known(&self) -> std::sync::MutexGuard<'_, Known> {
        // Nothing panics while holding the lock: a poisoned registry is still consistent.
        let mut known = self.known.lock().unwrap_or_else(PoisonError::into_inner);
        known.forget_expired(self.bounds.keep_ended, self.bounds.max_ended);
        known
    }

    /// Starts run `key` for `principal` in a thread owned by `owner`, or joins it if it is
    /// known.
    pub(crate) fn start(
        &self,
        key: &RunKey,
        owner: Option<&str>,
        principal: &str,
    ) -> Result<Started, Refused> {
        let mut known = self.known();
        if let Some(entry) = known.runs.get(key) {
            return Ok(Started::Joined(entry.run.clone()));
        }
        if known.closed {
            return Err(Refused::ShuttingDown);
        }
        let going = || known.runs.values().filter(|entry| entry.ended.is_none());
        if going().count() >= self.bounds.max_running {
            return Err(Refused::Busy(self.bounds.max_running));
        }
        let max = self.bounds.max_running_per_principal;
        if going().filter(|entry| entry.principal == principal).count() >= max {
            return Err(Refused::TooMany(max));
        }
        let log = Arc::new(RunLog::new(
            self.bounds.events_per_run,
            self.bounds.event_bytes_per_run,
        ));
        known.runs.insert(
            key.clone(),
            Entry {
                run: KnownRun {
                    log: Arc::clone(&log),
                    owner: owner.map(str::to_owned),
                },
                principal: principal.to_owned(),
                ended: None,
            },
        );
        Ok(Started::New(log))
    }

    /// Run `key`, if it is known.
    pub(crate) fn get(&self, key: &RunKey) -> Option<KnownRun> {
        self.known().runs.get(key).map(|entry| entry.run.clone())
    }

    /// How many runs are going.
    pub(crate) fn running(&self) -> usize {
        self.known()
            .runs
            .values()
            .filter(|entry| entry.ended.is_none())
            .count()
    }

    /// How many runs are known, going or ended.
    #[cfg(test)]
    pub(crate) fn known_runs(&self) -> usize {
        self.known().runs.len()
    }

    /// No new run starts from now on (a run already known can still be joined).
    pub(crate) fn close(&self) {
        self.known().closed = true;
    }

    /// Run `key` ended (its log too): kept for the time its events are kept, while no more
    /// than the most ended runs are kept.
    pub(crate) fn ended(&self, key: &RunKey) {
        let mut known = self.known();
        if let Some(entry) = known.runs.get_mut(key)
            && entry.ended.is_none()
        {
            entry.ended = Some(Instant::now());
            known.ended.push_back(key.clone());
        }
        known.forget_expired(self.bounds.keep_ended, self.bounds.max_ended);
    }
}

impl Known {
    /// Forgets the ended runs older than `keep`, and the oldest past `max` of them.
    fn forget_expired(&mut self, keep: Duration, max: usize) {
        let now = Instant::now();
        while let Some(oldest) = self.ended.front() {
            let expired = self
                .runs
                .get(oldest)
                .and_then(|entry| entry.ended)
                .is_none_or(|ended| now.saturating_duration_since(ended) >= keep);
            if !expired && self.ended.len() <= max {
                break;
            }
            if let Some(key) = self.ended.pop_front() {
                self.runs.remove(&key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bounds() -> Bounds {
        Bounds {
            max_running: 2,
            max_running_per_principal: 1,
            events_per_run: 10,
            event_bytes_per_run: 1000,
            keep_ended: Duration::from_secs(300),
            max_ended: 2,
        }
    }

    fn key(thread: &str, run: &str) -> RunKey {
        RunKey {
            thread: thread.into(),
            run: run.into(),
        }
    }

    fn new_run(runs: &Runs, key: &RunKey, principal: &str) -> Arc<RunLog> {
        match runs.start(key, Some(principal), principal) {
            Ok(Started::New(log)) => log,
            other => panic!("a new run, not {other:?}"),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_known_run_is_joined_and_full_servers_and_principals_refuse() {
        let runs = Runs::new(bounds());
        let r1 = key("t", "r1");
        let log = new_run(&runs, &r1, "alice");
        let Ok(Started::Joined(joined)) = runs.start(&r1, Some("alice"), "alice") else {
            panic!("joined");
        };
        assert_eq!(joined.owner.as_deref(), Some("alice"));
        // The same run id in another thread is another run.
        assert_eq!(
            runs.start(&key("t2", "r1"), Some("alice"), "alice")
                .unwrap_err(),
            Refused::TooMany(1)
        );
        new_run(&runs, &key("t2", "r1"), "bob");
        assert_eq!(
            runs.start(&key("t3", "r"), Some("carol"), "carol")
                .unwrap_err(),
            Refused::Busy(2)
        );
        log.end();
        runs.ended(&r1);
        assert_eq!(runs.running(), 1);
        new_run(&runs, &key("t", "r2"), "alice");
        runs.close();
        assert_eq!(
            runs.start(&key("t", "r3"), None, "dave").unwrap_err(),
            Refused::ShuttingDown
        );
        assert!(runs.start(&r1, Some("alice"), "alice").is_ok());
    }

    #[tokio::test(start_paused = true)]
    async fn ended_runs_are_forgotten_by_age_and_by_count() {
        let runs = Runs::new(Bounds {
            max_running: 10,
            max_running_per_principal: 10,
            ..bounds()
        });
        let first = key("t", "r1");
        new_run(&runs, &first, "a").end();
        runs.ended(&first);
        tokio::time::sleep(Duration::from_secs(299)).await;
        assert!(runs.get(&first).is_some());
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert!(runs.get(&first).is_none(), "forgotten after 300 s");

        // Three ended runs, two kept: the oldest goes.
        for run in ["a", "b", "c"] {
            let key = key("t", run);
            new_run(&runs, &key, "a").end();
            runs.ended(&key);
        }
        assert_eq!(runs.known_runs(), 2);
        assert!(runs.get(&key("t", "a")).is_none());
        assert!(runs.get(&key("t", "c")).is_some());
        // A run going is never forgotten, however old.
        let going = key("t", "going");
        new_run(&runs, &going, "a");
        tokio::time::sleep(Duration::from_secs(3600)).await;
        assert!(runs.get(&going).is_some());
        assert_eq!(runs.known_runs(), 1);
    }
}
