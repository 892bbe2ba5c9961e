//! A served task's call, run in the background on the replica that took it: its hold on the
//! task renewed while it runs, its cancellation obeyed, and how it ended stored.

use std::future::Future;

use hookchain_core::tool::{ToolFailure, ToolFailureKind};
use hookchain_core::{CallOutcome, Error};
use rmcp::ErrorData as McpError;
use rmcp::model::ClientCapabilities;

use super::super::asking::Asking;
use super::super::content::call_tool_result;
use super::super::resuming::{cannot_ask, failed};
use super::record::TaskState;
use super::serving::Reply;
use super::store::{Change, Stored};
use super::{LEASE, ServedTasks};

impl ServedTasks {
    /// Runs `calling`, the call of task `id` that this replica holds under `token`, in a
    /// task of its own, and stores how it ended — unless the task was changed under it
    /// (cancelled; given up when its hold was lost), which stops it.
    pub(super) fn run<F>(
        &self,
        id: String,
        name: String,
        token: u64,
        calling: F,
        capabilities: ClientCapabilities,
    ) where
        F: Future<Output = Result<CallOutcome, Error>> + Send + 'static,
    {
        let stop = self.run_here(&id);
        let tasks = self.clone();
        tokio::spawn(async move {
            let mut token = token;
            tokio::pin!(calling);
            let every = LEASE / 3;
            let mut renewal = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
            let outcome = loop {
                tokio::select! {
                    biased;
                    outcome = &mut calling => break Some(outcome),
                    () = stop.notified() => break None,
                    _ = renewal.tick() => match tasks.renew(&id, token).await {
                        Some(renewed) => token = renewed,
                        // Dropping the call stops the tool at its next `.await`.
                        None => break None,
                    },
                }
            };
            tasks.ran_here(&id);
            if let Some(outcome) = outcome {
                tasks
                    .finish(&id, &name, token, outcome, &capabilities)
                    .await;
            }
        });
    }

    /// Renews this replica's hold on task `id`: its new token, or `None` when the task is no
    /// longer this run's (cancelled, failed, or the store cannot be reached: another replica
    /// may count it lost, so this one stops).
    async fn renew(&self, id: &str, token: u64) -> Option<u64> {
        let worker = self.worker.clone();
        let renewed = self
            .store
            .change_task(
                id,
                Box::new(move |stored, _now| {
                    Ok(match held(stored, token) {
                        Some(stored) => Change::Put {
                            record: stored.record,
                            runner: Some((worker, LEASE)),
                            then: Reply::Token(token + 1),
                        },
                        None => Change::Keep(Reply::Gone),
                    })
                }),
            )
            .await;
        match renewed {
            Ok(Reply::Token(token)) => Some(token),
            Ok(_) => None,
            Err(error) => {
                tracing::warn!(task = %id, %error, "a served task's hold was not renewed: it stops");
                None
            }
        }
    }

    /// Stores how task `id`'s call ended, if the task is still this run's.
    pub(super) async fn finish(
        &self,
        id: &str,
        name: &str,
        token: u64,
        outcome: Result<CallOutcome, Error>,
        capabilities: &ClientCapabilities,
    ) {
        let state = ended(id, name, outcome, capabilities);
        let stored = self
            .store
            .change_task(
                id,
                Box::new(move |stored, now| {
                    Ok(match held(stored, token) {
                        Some(mut stored) => {
                            stored.record.state = state;
                            stored.record.updated_at = now;
                            Change::Put {
                                record: stored.record,
                                runner: None,
                                then: Reply::Done,
                            }
                        }
                        None => Change::Keep(Reply::Gone),
                    })
                }),
            )
            .await;
        match stored {
            Ok(Reply::Done) => {}
            Ok(_) => {
                tracing::info!(task = %id, "a served task was changed while its call ran (cancelled): its end is not kept")
            }
            Err(error) => tracing::error!(task = %id, %error, "a served task's end was not stored"),
        }
    }
}

/// `stored`, if it is a working task held under `token`.
fn held(stored: Option<Stored>, token: u64) -> Option<Stored> {
    stored
        .filter(|stored| stored.token == token && matches!(stored.record.state, TaskState::Working))
}

/// Where a task stands once its call ended with `outcome`.
fn ended(
    id: &str,
    name: &str,
    outcome: Result<CallOutcome, Error>,
    capabilities: &ClientCapabilities,
) -> TaskState {
    let completed = |result: rmcp::model::CallToolResult| match serde_json::to_value(result) {
        Ok(serde_json::Value::Object(result)) => TaskState::Completed { result },
        _ => TaskState::failed(McpError::internal_error(
            "the call's result was not kept",
            None,
        )),
    };
    let paused = match outcome {
        Ok(CallOutcome::Done(result)) => {
            let kind = result.failure().map(ToolFailure::kind);
            if matches!(
                kind,
                Some(ToolFailureKind::Panicked | ToolFailureKind::Middleware)
            ) {
                // Not what the tool reported (an error result, `completed`), but the server
                // failing: a task `failed`, its reason in the operator's log.
                tracing::warn!(task = %id, tool = %name, "a served task's call failed in the server (a panic, a hook's error)");
                return TaskState::failed(McpError::internal_error(
                    "the call failed in the server",
                    None,
                ));
            }
            return completed(call_tool_result(result));
        }
        Ok(CallOutcome::Paused(paused)) => paused,
        Ok(_) => return completed(failed(name)),
        Err(Error::ToolCallInterrupted(interrupt)) => {
            return completed(cannot_ask(name, &interrupt.source));
        }
        Err(error) => {
            // A hook's error: the operator gets why, the client an error without internals.
            tracing::warn!(
                task = %id,
                error = %hookchain_core::error::Report(&error),
                "a served task's call failed in the agent's chain"
            );
            return TaskState::failed(McpError::internal_error(
                "the call failed in the server",
                None,
            ));
        }
    };
    let Some(asking) = Asking::of(&paused.interrupt) else {
        return completed(cannot_ask(name, &paused.interrupt.source));
    };
    let Some(requests) = asking.input_requests(&paused.interrupt, capabilities) else {
        // The call needs what the client did not declare it can give (SEP-2575).
        let required = asking.required_capabilities(&paused.interrupt);
        return TaskState::failed(McpError::missing_required_client_capability(required));
    };
    TaskState::InputRequired {
        paused,
        asking,
        requests,
        answered: Default::default(),
    }
}
