//! Leases on stored runs: who may write a key, until when, and with which fencing token.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::{Checkpoint, CheckpointError};
use crate::model::{StopReason, Usage};

/// The right of one worker to write one key of a [`Checkpointer`](super::Checkpointer), until
/// [`expires_at`](Self::expires_at) unless renewed.
///
/// Every write carries its lease, and the store accepts it only while the key's current token
/// is this lease's [`token`](Self::token): once another worker has claimed the key (after the
/// lease expired), a paused-then-revived worker's writes are refused with
/// [`CheckpointError::LeaseLost`], whatever its clock says. Tokens of one key only grow, also
/// across the key's removal (a new one starts from the store's clock in microseconds).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    worker: String,
    token: u64,
    ttl: Duration,
    expires_at: SystemTime,
}

impl Lease {
    /// A lease of `worker`'s, fenced by `token`, for `ttl` from each write or renewal, now
    /// expiring at `expires_at`. For implementations of [`Checkpointer`](super::Checkpointer).
    #[must_use]
    pub fn new(
        worker: impl Into<String>,
        token: u64,
        ttl: Duration,
        expires_at: SystemTime,
    ) -> Self {
        Lease {
            worker: worker.into(),
            token,
            ttl,
            expires_at,
        }
    }

    /// The worker holding it.
    #[must_use]
    pub fn worker(&self) -> &str {
        &self.worker
    }

    /// The fencing token: the store refuses writes with any other.
    #[must_use]
    pub fn token(&self) -> u64 {
        self.token
    }

    /// How long a write or a renewal extends it.
    #[must_use]
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// When it expires unless renewed, by this worker's clock: a store that judges leases by
    /// a clock of its own (Postgres, by the database's) gives it as the time left when last
    /// heard, added to the worker's clock then.
    #[must_use]
    pub fn expires_at(&self) -> SystemTime {
        self.expires_at
    }

    /// The same lease, renewed until `expires_at`.
    #[cfg_attr(not(feature = "tokio"), allow(dead_code))]
    pub(crate) fn renewed(&mut self, expires_at: SystemTime) {
        self.expires_at = expires_at;
    }
}

/// What [`Checkpointer::claim`](super::Checkpointer::claim) got.
#[derive(Debug)]
pub enum Claim {
    /// The key is the claimer's: its lease, and what the key holds (`None`: nothing, or a
    /// tombstone past its retention; an error: what it holds does not decode, and the claimer
    /// may [`end`](super::Checkpointer::end) it).
    Granted {
        /// The claimer's lease.
        lease: Lease,
        /// What the key holds.
        record: Result<Option<Record>, CheckpointError>,
    },
    /// Another worker's lease on the key has not expired.
    Busy {
        /// The worker holding it.
        holder: String,
        /// When its lease expires unless renewed.
        until: SystemTime,
    },
}

/// What a key of a [`Checkpointer`](super::Checkpointer) holds.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Record {
    /// The checkpoint of a paused run, or of a run in progress (boxed: it holds a history).
    Checkpoint(Box<Checkpoint>),
    /// The run ended: what is left of it, for its retention.
    Ended(Tombstone),
}

/// What is left of a stored run that ended, under its key for a retention period: a replayed
/// or duplicated resume of it is refused with [`ResumeError::Ended`](super::ResumeError::Ended)
/// naming this, never run again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Tombstone {
    /// The run that ended.
    pub run_id: String,
    /// The last checkpoint it was resumed from or wrote.
    pub checkpoint: String,
    /// How it ended: `finished`, `jumped` (a hook ended it), `cancelled`
    /// ([`Agent::cancel_step`](crate::Agent::cancel_step)) or `abandoned` (its pause given up:
    /// [`Agent::abandon`](crate::Agent::abandon)).
    pub how: String,
    /// The worker that ran it to its end.
    pub by: String,
    /// When it ended, in milliseconds since the Unix epoch.
    pub ended_at: u64,
    /// Until when the store keeps it, in milliseconds since the Unix epoch.
    pub keep_until: u64,
    /// The run's history and state at its end, kept with the tombstone of a run that stored
    /// its steps: a worker can die after writing the end and before its caller heard of it,
    /// and the caller gets the run's end from here rather than never hearing of it — a thread
    /// as it was saved before the run ([`Agent::resume_in`](crate::Agent::resume_in) from
    /// [`ResumeFrom::stored`](crate::ResumeFrom::stored), no answers), a sub-agent's call run
    /// again. (So a tombstone is about as large as the run's last checkpoint.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) last: Option<Box<LastState>>,
}

/// A run's history and state at its end, kept with its [`Tombstone`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct LastState {
    /// The run at its end, as a step checkpoint.
    pub(crate) checkpoint: Checkpoint,
    /// How the run's last answer ended, as the provider said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) stop_reason: Option<StopReason>,
    /// What the run had spent when its thread last heard of it (its start, or the pause it
    /// resumed from): the thread's ledger is charged from there.
    #[serde(default)]
    pub(crate) charged_from: Usage,
}

impl Tombstone {
    /// The tombstone of `run_id`, last at `checkpoint`, ended `how` by `by` at `ended_at`,
    /// kept for `retention`.
    #[must_use]
    pub fn new(
        run_id: impl Into<String>,
        checkpoint: impl Into<String>,
        how: impl Into<String>,
        by: impl Into<String>,
        ended_at: SystemTime,
        retention: Duration,
    ) -> Self {
        let ended_at = millis(ended_at);
        Tombstone {
            run_id: run_id.into(),
            checkpoint: checkpoint.into(),
            how: how.into(),
            by: by.into(),
            ended_at,
            keep_until: ended_at
                .saturating_add(u64::try_from(retention.as_millis()).unwrap_or(u64::MAX)),
            last: None,
        }
    }

    /// The tombstone, keeping the run's history and state at its end.
    pub(crate) fn keeping(mut self, last: LastState) -> Self {
        self.last = Some(Box::new(last));
        self
    }

    /// Whether the store still keeps it at `now`.
    #[must_use]
    pub fn kept_at(&self, now: SystemTime) -> bool {
        millis(now) < self.keep_until
    }
}

impl fmt::Display for Tombstone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "run `{}` {} at {} ms since the epoch (worker `{}`, from checkpoint `{}`)",
            self.run_id, self.how, self.ended_at, self.by, self.checkpoint
        )
    }
}

/// Where a store reads the time: the system's clock, or another (tokio's pausable one, in
/// tests of leases and retention).
#[derive(Clone)]
pub struct Clock(Option<Arc<dyn Fn() -> SystemTime + Send + Sync>>);

impl Clock {
    /// The system's clock.
    #[must_use]
    pub fn system() -> Self {
        Clock(None)
    }

    /// A clock that reads `now`.
    pub fn from_fn(now: impl Fn() -> SystemTime + Send + Sync + 'static) -> Self {
        Clock(Some(Arc::new(now)))
    }

    /// The system's time when it is made, moved on by tokio's clock since: paused and
    /// advanced with it in a test (`#[tokio::test(start_paused = true)]`, `tokio::time::advance`).
    #[cfg(feature = "tokio")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
    #[must_use]
    pub fn tokio() -> Self {
        let (wall, start) = (SystemTime::now(), tokio::time::Instant::now());
        Clock::from_fn(move || wall + start.elapsed())
    }

    /// The time now.
    #[must_use]
    pub fn now(&self) -> SystemTime {
        self.0.as_ref().map_or_else(SystemTime::now, |now| now())
    }
}

impl Default for Clock {
    fn default() -> Self {
        Clock::system()
    }
}

impl fmt::Debug for Clock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() {
            "Clock(custom)"
        } else {
            "Clock(system)"
        })
    }
}

/// Milliseconds since the Unix epoch (0 before it).
#[must_use]
pub fn millis(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH).map_or(0, |since| {
        u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
    })
}

/// The time `millis` milliseconds after the Unix epoch.
#[must_use]
pub fn from_millis(millis: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(millis)
}
