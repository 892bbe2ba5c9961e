//! The served tasks' store: any [`SlotStore`] (the crate's checkpointers in memory, in files,
//! in SQLite), a task's record kept as its slot's text and its runner as its slot's lease.

use std::time::{Duration, SystemTime};

use futures::future::BoxFuture;
use hookchain_core::interrupt::{CheckpointError, Slot, SlotStore};

use super::record::{TaskRecord, millis};

/// What the keys of tasks start with.
const PREFIX: &str = "mcp-task:";

/// A task's key in the store.
pub(super) fn key(id: &str) -> String {
    format!("{PREFIX}{id}")
}

/// A task as stored: its record and who runs it.
#[derive(Debug, Clone)]
pub(super) struct Stored {
    pub(super) record: TaskRecord,
    /// The worker running its call and until when its lease holds (milliseconds since the
    /// epoch), if one does.
    pub(super) runner: Option<(String, u64)>,
    /// The slot's fencing token: every change takes a new one, so a runner whose token is no
    /// longer the slot's knows its task was changed under it (cancelled, given up).
    pub(super) token: u64,
}

impl Stored {
    /// Whether a runner's lease holds at `now`.
    pub(super) fn runs(&self, now: u64) -> bool {
        self.runner.as_ref().is_some_and(|(_, until)| now < *until)
    }

    fn of(slot: &Slot) -> Result<Option<Stored>, CheckpointError> {
        let Some(text) = &slot.checkpoint else {
            return Ok(None);
        };
        let record = serde_json::from_str(text).map_err(|error| CheckpointError::Store {
            what: "read a served task",
            source: error.into(),
        })?;
        Ok(Some(Stored {
            record,
            runner: slot.held_by.clone().map(|worker| (worker, slot.expires_at)),
            token: slot.token,
        }))
    }
}

/// What a change does to a task.
pub(super) enum Change<T> {
    /// Leaves it as it is.
    Keep(T),
    /// Stores this record, run by `runner` for `lease` (or by no one).
    Put {
        record: TaskRecord,
        runner: Option<(String, Duration)>,
        then: T,
    },
    /// Removes it (it expired).
    Remove(T),
}

/// A change: given the task as stored (if it is) and the store's time now, in milliseconds.
pub(super) type ChangeFn<T> =
    Box<dyn FnOnce(Option<Stored>, u64) -> Result<Change<T>, CheckpointError> + Send>;

/// A [`SlotStore`] as the served tasks use it: one change at a time per task, atomically.
pub(super) trait TaskSlots: Send + Sync {
    /// The task `id` as stored, and the store's time now (milliseconds).
    fn load(&self, id: &str) -> BoxFuture<'_, Result<(Option<Stored>, u64), CheckpointError>>;

    /// The ids of the tasks stored that expired.
    fn expired(&self) -> BoxFuture<'_, Result<Vec<String>, CheckpointError>>;

    /// Applies `change` to task `id` atomically, and returns what it says.
    fn change_task(
        &self,
        id: &str,
        change: ChangeFn<Reply>,
    ) -> BoxFuture<'_, Result<Reply, CheckpointError>>;
}

/// What a change tells its caller (one type, so that the store's trait is an object).
pub(super) type Reply = super::serving::Reply;

impl<S: SlotStore + 'static> TaskSlots for S {
    fn load(&self, id: &str) -> BoxFuture<'_, Result<(Option<Stored>, u64), CheckpointError>> {
        let key = key(id);
        Box::pin(async move {
            let (slot, now) = self.read(&key).await?;
            let stored = match slot {
                Some(slot) => Stored::of(&slot)?,
                None => None,
            };
            Ok((stored, millis(now)))
        })
    }

    fn expired(&self) -> BoxFuture<'_, Result<Vec<String>, CheckpointError>> {
        Box::pin(async move {
            let (slots, now) = self.slots().await?;
            let now = millis(now);
            Ok(slots
                .iter()
                .filter_map(|(key, slot)| {
                    let id = key.strip_prefix(PREFIX)?;
                    // A slot that does not read is left to whoever reads it (and says why).
                    let stored = Stored::of(slot).ok()??;
                    stored.record.expired(now).then(|| id.to_owned())
                })
                .collect())
        })
    }

    fn change_task(
        &self,
        id: &str,
        change: ChangeFn<Reply>,
    ) -> BoxFuture<'_, Result<Reply, CheckpointError>> {
        let key = key(id);
        Box::pin(async move {
            self.transact(&key, move |slot, now: SystemTime| {
                let now = millis(now);
                let (stored, token) = match &slot {
                    Some(slot) => (Stored::of(slot)?, slot.token),
                    None => (None, 0),
                };
                match change(stored, now)? {
                    Change::Keep(then) => Ok((slot, then)),
                    Change::Remove(then) => Ok((None, then)),
                    Change::Put {
                        record,
                        runner,
                        then,
                    } => {
                        let text = serde_json::to_string(&record).map_err(|error| {
                            CheckpointError::Store {
                                what: "write a served task",
                                source: error.into(),
                            }
                        })?;
                        let (held_by, expires_at) = match runner {
                            Some((worker, lease)) => {
                                let lease = u64::try_from(lease.as_millis()).unwrap_or(u64::MAX);
                                (Some(worker), now.saturating_add(lease))
                            }
                            None => (None, 0),
                        };
                        let slot = Slot::new(Some(text), None, held_by, token + 1, expires_at);
                        Ok((Some(slot), then))
                    }
                }
            })
            .await
        })
    }
}
