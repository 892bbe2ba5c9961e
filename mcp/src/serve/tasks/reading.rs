//! A served task made, and read as it stands: a task whose replica's hold ran out is failed
//! (its replica stopped), one past its time to live forgotten.

use std::sync::atomic::Ordering;

use hookchain_core::interrupt::CheckpointError;
use rmcp::ErrorData as McpError;

use super::record::{TaskRecord, TaskState};
use super::serving::{Reply, fresh_id, visible};
use super::store::Change;
use super::{LEASE, ServedTasks};

/// How many tasks are made between two sweeps of the expired ones: the sweep reads the whole
/// store, so its cost is spread.
const SWEEP_EVERY: usize = 256;

impl ServedTasks {
    /// A new task of `principal`'s call of `tool`, working, held by this replica: its id and
    /// record (`None` in the unlikely case its new id was taken).
    pub(super) async fn create(
        &self,
        principal: Option<String>,
        tool: &str,
    ) -> Result<Option<(String, TaskRecord)>, CheckpointError> {
        self.sweep_now_and_then().await;
        let id = fresh_id();
        let (worker, ttl, tool) = (self.worker.clone(), self.ttl, tool.to_owned());
        let created = self
            .store
            .change_task(
                &id,
                Box::new(move |stored, now| {
                    if stored.is_some() {
                        return Ok(Change::Keep(Reply::Gone));
                    }
                    let record = TaskRecord {
                        principal,
                        tool,
                        created_at: now,
                        updated_at: now,
                        ttl_ms: u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX),
                        state: TaskState::Working,
                    };
                    Ok(Change::Put {
                        record: record.clone(),
                        runner: Some((worker, LEASE)),
                        then: Reply::Now(Box::new(record)),
                    })
                }),
            )
            .await?;
        Ok(match created {
            Reply::Now(record) => Some((id, *record)),
            _ => None,
        })
    }

    /// Task `id` as it stands, if it is `principal`'s and kept still.
    pub(super) async fn read(
        &self,
        id: &str,
        principal: Option<&str>,
    ) -> Result<Option<TaskRecord>, CheckpointError> {
        let (stored, now) = self.store.load(id).await?;
        if stored
            .as_ref()
            .is_some_and(|stored| stored.record.expired(now))
        {
            self.forget(id).await;
            return Ok(None);
        }
        let Some(stored) = visible(stored, principal, now) else {
            return Ok(None);
        };
        if matches!(stored.record.state, TaskState::Working) && !stored.runs(now) {
            return self.lost(id, stored.token).await;
        }
        Ok(Some(stored.record))
    }

    /// Task `id`, whose replica stopped while it ran it (held under `token`), failed: not run
    /// again, since whether its tool acted is unknown.
    async fn lost(&self, id: &str, token: u64) -> Result<Option<TaskRecord>, CheckpointError> {
        let changed = self
            .store
            .change_task(
                id,
                Box::new(move |stored, now| {
                    let Some(mut stored) = stored else {
                        return Ok(Change::Keep(Reply::Unknown));
                    };
                    if stored.token != token || stored.runs(now) {
                        // Changed meanwhile (renewed, ended): as it stands.
                        return Ok(Change::Keep(Reply::Now(Box::new(stored.record))));
                    }
                    stored.record.state = TaskState::failed(McpError::internal_error(
                        "the server running the task stopped before it ended; whether the tool \
                         acted is unknown, and it is not run again",
                        None,
                    ));
                    stored.record.updated_at = now;
                    Ok(Change::Put {
                        record: stored.record.clone(),
                        runner: None,
                        then: Reply::Now(Box::new(stored.record)),
                    })
                }),
            )
            .await?;
        Ok(match changed {
            Reply::Now(record) => Some(*record),
            _ => None,
        })
    }

    /// Removes the tasks that expired, once every [`SWEEP_EVERY`] tasks made: a task nobody
    /// reads again is not kept past its time to live for long.
    pub(super) async fn sweep_now_and_then(&self) {
        if self.made.fetch_add(1, Ordering::Relaxed) % SWEEP_EVERY != SWEEP_EVERY - 1 {
            return;
        }
        match self.store.expired().await {
            Ok(expired) => {
                for id in expired {
                    self.forget(&id).await;
                }
            }
            Err(error) => tracing::warn!(%error, "the served tasks that expired were not swept"),
        }
    }

    /// Removes task `id` from the store if it expired.
    async fn forget(&self, id: &str) {
        let removed = self
            .store
            .change_task(
                id,
                Box::new(|stored, now| {
                    Ok(match stored {
                        Some(stored) if stored.record.expired(now) => Change::Remove(Reply::Done),
                        _ => Change::Keep(Reply::Done),
                    })
                }),
            )
            .await;
        if let Err(error) = removed {
            tracing::warn!(task = %id, %error, "an expired served task was not removed");
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use hookchain_core::interrupt::{Clock, InMemoryCheckpointer};

    use super::super::ServedTasks;
    use super::super::record::TaskState;

    fn tasks() -> ServedTasks {
        ServedTasks::new(InMemoryCheckpointer::new().with_clock(Clock::tokio()))
            .ttl(Duration::from_secs(3600))
    }

    /// A task of alice's, made: its id.
    async fn alices(tasks: &ServedTasks) -> String {
        let created = tasks.create(Some("alice".into()), "render").await.unwrap();
        created.expect("a new id").0
    }

    /// A task whose replica stopped renewing its hold (died) reads as failed once the hold
    /// ran out — never as working forever, and never run again.
    #[tokio::test(start_paused = true)]
    async fn a_task_whose_replica_stopped_is_failed_once_its_hold_runs_out() {
        let tasks = tasks();
        let id = alices(&tasks).await;
        tokio::time::advance(Duration::from_secs(29)).await;
        let working = tasks.read(&id, Some("alice")).await.unwrap().unwrap();
        assert!(matches!(working.state, TaskState::Working), "{working:?}");
        tokio::time::advance(Duration::from_secs(2)).await;
        let lost = tasks.read(&id, Some("alice")).await.unwrap().unwrap();
        let TaskState::Failed { error } = &lost.state else {
            panic!("not failed: {lost:?}");
        };
        assert_eq!(error["code"], -32603);
        // Stored so: read again, the same.
        let again = tasks.read(&id, Some("alice")).await.unwrap().unwrap();
        assert!(matches!(again.state, TaskState::Failed { .. }));
    }

    /// A task is its principal's alone, and kept for its time to live only.
    #[tokio::test(start_paused = true)]
    async fn a_task_is_read_by_its_principal_within_its_time_to_live() {
        let tasks = tasks();
        let id = alices(&tasks).await;
        assert!(tasks.read(&id, Some("bob")).await.unwrap().is_none());
        assert!(tasks.read(&id, None).await.unwrap().is_none());
        assert!(
            tasks
                .read("no-such-task", Some("alice"))
                .await
                .unwrap()
                .is_none()
        );
        assert!(tasks.read(&id, Some("alice")).await.unwrap().is_some());
        tokio::time::advance(Duration::from_secs(3600)).await;
        assert!(tasks.read(&id, Some("alice")).await.unwrap().is_none());
    }

    /// Tasks nobody reads again are swept once they expired, as more are made: the store does
    /// not grow with every task ever made.
    #[tokio::test(start_paused = true)]
    async fn expired_tasks_are_swept_as_more_are_made() {
        let tasks = tasks();
        for _ in 0..super::SWEEP_EVERY - 1 {
            alices(&tasks).await;
        }
        tokio::time::advance(Duration::from_secs(3600)).await;
        assert_eq!(
            tasks.store.expired().await.unwrap().len(),
            super::SWEEP_EVERY - 1
        );
        let kept = alices(&tasks).await;
        assert!(tasks.store.expired().await.unwrap().is_empty());
        assert!(tasks.read(&kept, Some("alice")).await.unwrap().is_some());
    }
}
