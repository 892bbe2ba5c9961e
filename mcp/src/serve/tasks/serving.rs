//! The requests of the tasks extension an [`McpToolServer`] answers: a task made of a
//! `tools/call`, `tasks/get`, `tasks/update` and `tasks/cancel`.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};

use hookchain_core::interrupt::CheckpointError;
use hookchain_core::{
    CallOutcome, Error, GatePassed, Middleware, Model, PausedCall, RunContext, ToolCall,
};
use rmcp::model::{CallToolResponse, CreateTaskResult, GetTaskResult, InputResponses, TaskStatus};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use serde_json::Value;
use tokio::sync::oneshot;

use super::super::McpToolServer;
use super::super::asking::NotAnswered;
use super::record::{TaskRecord, TaskState};
use super::store::{Change, Stored};
use super::{LEASE, ServedTasks};

/// A served call, on its way.
type Calling = Pin<Box<dyn Future<Output = Result<CallOutcome, Error>> + Send>>;

/// The call a task runs.
pub(crate) enum TaskCall {
    /// A new call.
    Fresh(ToolCall),
    /// A call paused before its gate, resumed with its client's answer.
    Resumed(Box<PausedCall>, Value),
}

impl TaskCall {
    fn name(&self) -> &str {
        match self {
            TaskCall::Fresh(call) => &call.name,
            TaskCall::Resumed(paused, _) => &paused.call.name,
        }
    }
}

/// What became of a call served as a task.
pub(crate) enum Started {
    /// It passed its gate: a task runs it, and this is the client's answer.
    Task(CallToolResponse),
    /// It ended before its gate let it by (paused for an answer, or answered by a hook).
    Ended(Result<CallOutcome, Error>),
}

/// Whether the client of `context` takes tasks (SEP-2663; for its session or, SEP-2575, in
/// this request's `_meta`).
pub(crate) fn takes_tasks(context: &RequestContext<RoleServer>) -> bool {
    context
        .client_capabilities()
        .is_some_and(|capabilities| capabilities.supports_tasks())
}

/// What a change of a task tells the request that made it.
pub(crate) enum Reply {
    /// No such task, for this principal: unknown, expired, or someone else's.
    Unknown,
    /// The task, as it stands now.
    Now(Box<TaskRecord>),
    /// The change was made.
    Done,
    /// The hold was renewed under this token.
    Token(u64),
    /// The task is no longer the run's that asked.
    Gone,
    /// Every question answered: the call goes on, held under `token`.
    Resume {
        paused: Box<PausedCall>,
        answer: Value,
        token: u64,
    },
    /// The answers are refused, for this reason.
    Refused(&'static str),
}

/// A new task's id: 128 bits from keys the OS's randomness seeded (`RandomState`), hex. Not
/// what keeps a task its principal's (that is the record's principal), but not guessable.
pub(super) fn fresh_id() -> String {
    use std::hash::BuildHasher;
    let random = std::collections::hash_map::RandomState::new();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_nanos());
    let high = random.hash_one((1_u8, nanos, std::process::id()));
    let low = random.hash_one((2_u8, nanos, std::process::id()));
    format!("{high:016x}{low:016x}")
}

/// The answer to a request naming a task that does not exist (or is someone else's).
fn unknown_task() -> McpError {
    McpError::invalid_params("no such task", None)
}

/// The answer to a request whose store failed.
fn store_failed(error: &hookchain_core::interrupt::CheckpointError) -> McpError {
    tracing::error!(%error, "the served tasks' store failed");
    McpError::internal_error("the tasks' store failed", None)
}

impl ServedTasks {
    /// Applies `change` to task `id` if it is `principal`'s and kept still (it is told the
    /// task and the store's time); else leaves it and tells [`Reply::Unknown`].
    async fn change_own(
        &self,
        id: &str,
        principal: Option<String>,
        change: impl FnOnce(Stored, u64) -> Result<Change<Reply>, CheckpointError> + Send + 'static,
    ) -> Result<Reply, CheckpointError> {
        self.store
            .change_task(
                id,
                Box::new(
                    move |stored, now| match visible(stored, principal.as_deref(), now) {
                        Some(stored) => change(stored, now),
                        None => Ok(Change::Keep(Reply::Unknown)),
                    },
                ),
            )
            .await
    }
}

/// `stored`, if it is `principal`'s and not expired at `now`.
pub(super) fn visible(stored: Option<Stored>, principal: Option<&str>, now: u64) -> Option<Stored> {
    stored.filter(|stored| {
        stored.record.principal.as_deref() == principal && !stored.record.expired(now)
    })
}

impl<M, C> McpToolServer<M, C>
where
    M: Model + Send + Sync + 'static,
    C: Middleware + Send + Sync + 'static,
{
    /// The tasks that serve the tool `name` to the client of `context`, if they do: the tool
    /// is one of them, and the client takes tasks (it declared the extension, for its session
    /// or in the request).
    pub(crate) fn tasks_for(
        &self,
        name: &str,
        context: &RequestContext<RoleServer>,
    ) -> Option<&ServedTasks> {
        let tasks = self.settings.tasks.as_ref()?;
        tasks.support(name)?;
        takes_tasks(context).then_some(tasks)
    }

    /// Runs `call` until it passes its gate, then as a task: stored, working, held by this
    /// replica, and run on in the background; the task exists (a `tasks/get` on any replica
    /// finds it) before the client hears of it. A call that ends before its gate lets it by —
    /// paused for an approval, answered by a hook — ends here, for the client to read as a
    /// call's outcome: asked before anything acted, with an input-required result.
    pub(crate) async fn start_task(
        &self,
        tasks: &ServedTasks,
        call: TaskCall,
        mut run_context: RunContext,
        principal: Option<String>,
        context: &RequestContext<RoleServer>,
    ) -> Result<Started, McpError> {
        let (passed, mut gate) = oneshot::channel::<()>();
        let passed = Mutex::new(Some(passed));
        run_context.insert(GatePassed::new(move || {
            if let Some(passed) = passed.lock().unwrap_or_else(PoisonError::into_inner).take() {
                let _ = passed.send(());
            }
        }));
        let name = call.name().to_owned();
        let agent = Arc::clone(&self.agent);
        let mut calling: Calling = Box::pin(async move {
            let agent = agent.with_context(run_context);
            match call {
                TaskCall::Fresh(call) => agent.call_tool_or_pause(call).await,
                TaskCall::Resumed(paused, answer) => agent.resume_tool_call(*paused, answer).await,
            }
        });
        let ended = tokio::select! {
            biased;
            outcome = &mut calling => Some(outcome),
            // The call holds the sender until it ends: it has not ended, so this is word.
            _ = &mut gate => None,
        };
        // A call can pass its gate and end in one poll (a tool that asks before it awaits).
        let passed = ended.is_none() || gate.try_recv().is_ok();
        let ended = match ended {
            Some(outcome) if !passed => return Ok(Started::Ended(outcome)),
            ended => ended,
        };
        let (id, record) = tasks
            .create(principal, &name)
            .await
            // Dropping the call stops its tool at its next `.await`.
            .map_err(|error| store_failed(&error))?
            .ok_or_else(|| McpError::internal_error("a task's id was taken", None))?;
        let capabilities = context.client_capabilities().unwrap_or_default();
        match ended {
            None => tasks.run(id.clone(), name, 1, calling, capabilities),
            Some(outcome) => tasks.finish(&id, &name, 1, outcome, &capabilities).await,
        }
        let task = record.task(&id, TaskStatus::Working, tasks.poll_interval);
        Ok(Started::Task(CallToolResponse::Task(
            CreateTaskResult::new(task),
        )))
    }

    /// `tasks/get`: the task as it stands.
    pub(crate) async fn task_now(
        &self,
        id: &str,
        context: &RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        let tasks = self.served_tasks()?;
        let principal = self.principal_of(context)?;
        let record = tasks
            .read(id, principal.as_deref())
            .await
            .map_err(|error| store_failed(&error))?
            .ok_or_else(unknown_task)?;
        Ok(GetTaskResult::new(record.detailed(id, tasks.poll_interval)))
    }

    /// `tasks/update`: the client's answers to the questions of a task that waits. Once every
    /// question is answered, the call goes on here, in the background.
    pub(crate) async fn answer_task(
        &self,
        id: &str,
        responses: InputResponses,
        context: &RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let tasks = self.served_tasks()?;
        let principal = self.principal_of(context)?;
        let worker = tasks.worker.clone();
        let changed = tasks
            .change_own(id, principal, move |mut stored, now| {
                let TaskState::InputRequired {
                    paused,
                    asking,
                    requests,
                    answered,
                } = &mut stored.record.state
                else {
                    // Not waiting (answered already, or over): nothing to take.
                    return Ok(Change::Keep(Reply::Done));
                };
                for (key, response) in responses {
                    // Only what was asked, and each once.
                    if requests.contains_key(&key) && !answered.contains_key(&key) {
                        answered.insert(key, response);
                    }
                }
                stored.record.updated_at = now;
                let answer = match asking.answer(requests, answered) {
                    Ok(answer) => answer,
                    Err(NotAnswered::Missing) => {
                        return Ok(Change::Put {
                            record: stored.record,
                            runner: None,
                            then: Reply::Done,
                        });
                    }
                    Err(NotAnswered::Invalid(why)) => {
                        return Ok(Change::Keep(Reply::Refused(why)));
                    }
                };
                let paused = paused.clone();
                stored.record.state = TaskState::Working;
                Ok(Change::Put {
                    record: stored.record,
                    runner: Some((worker, LEASE)),
                    then: Reply::Resume {
                        paused,
                        answer,
                        token: stored.token + 1,
                    },
                })
            })
            .await
            .map_err(|error| store_failed(&error))?;
        match changed {
            Reply::Unknown => Err(unknown_task()),
            Reply::Refused(why) => Err(McpError::invalid_params(why, None)),
            Reply::Resume {
                paused,
                answer,
                token,
            } => {
                let name = paused.call.name.clone();
                let agent = std::sync::Arc::clone(&self.agent);
                let run_context = self.run_context(context)?;
                let calling = async move {
                    agent
                        .with_context(run_context)
                        .resume_tool_call(*paused, answer)
                        .await
                };
                let capabilities = context.client_capabilities().unwrap_or_default();
                tasks.run(id.to_owned(), name, token, calling, capabilities);
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// `tasks/cancel`: the task cancelled, unless it is over (then as it was). Its call is
    /// dropped at once if it runs here, else at its replica's next renewal.
    pub(crate) async fn cancel_task_now(
        &self,
        id: &str,
        context: &RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let tasks = self.served_tasks()?;
        let principal = self.principal_of(context)?;
        let changed = tasks
            .change_own(id, principal, move |mut stored, now| {
                if stored.record.state.is_terminal() {
                    return Ok(Change::Keep(Reply::Done));
                }
                stored.record.state = TaskState::Cancelled;
                stored.record.updated_at = now;
                Ok(Change::Put {
                    record: stored.record,
                    runner: None,
                    then: Reply::Done,
                })
            })
            .await
            .map_err(|error| store_failed(&error))?;
        if matches!(changed, Reply::Unknown) {
            return Err(unknown_task());
        }
        tasks.stop_here(id);
        Ok(())
    }

    /// The server's tasks, or the error of a server that serves none (rmcp answers
    /// method-not-found before this when the extension is not advertised).
    fn served_tasks(&self) -> Result<&ServedTasks, McpError> {
        self.settings
            .tasks
            .as_ref()
            .ok_or_else(|| McpError::invalid_params("this server serves no tasks", None))
    }

    /// Who makes the request of `context`.
    fn principal_of(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> Result<Option<String>, McpError> {
        Ok(self
            .run_context(context)?
            .get::<hookchain_core::Principal>()
            .map(|who| who.id().to_owned()))
    }
}
