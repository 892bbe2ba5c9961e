//! The step activity of a hookchain [`Agent`]: each step of a run is one step of the agent
//! ([`Agent::start_step`], [`Agent::step`]) on the run stored under the workflow's id in the
//! agent's checkpointer. The workflow's history carries the key, the answers and a summary —
//! never the run's history, which lives in the store.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use hookchain_core::interrupt::{CheckpointError, InterruptId, ResumeError};
use hookchain_core::{Agent, AgentEvent, EndReason, Error as AgentError, Message, RunInput};
use hookchain_core::{Middleware, Model, RunOutput};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::heartbeat::Heartbeats;
use crate::{
    BoxFuture, Error, InterruptSummary, MAX_RUN_STEPS, StepContext, StepFailure, StepHandler,
    StepPolicy, StepReply, StepRequest,
};

/// The most of the final answer's text a run's summary carries (the workflow's result lands in
/// its history, which Temporal caps); the whole answer stays in the agent's store until the
/// run's tombstone replaces it.
pub const SUMMARY_TEXT_LIMIT: usize = 16 * 1024;

/// A [`StepHandler`] that runs the steps of an [`Agent`]'s runs: the agent's own middleware,
/// tools and store, one step per activity.
///
/// The agent needs a [`checkpointer`](hookchain_core::AgentBuilder::checkpointer) shared by
/// every worker (Postgres, or SQLite or files on one machine): between steps the run lives
/// there, so any worker may run the next step. Give the store's lease
/// ([`lease`](hookchain_core::AgentBuilder::lease)) less time than the policy's heartbeat
/// timeout, as [`policy`](Self::policy) does: a step whose worker died is retried once the
/// server misses its heartbeats, and it can take the run over only once the dead worker's
/// lease expired (sooner, it is refused and retried again).
///
/// - The first step's input is the workflow's: a text (the user's message) or a list of
///   [`Message`]s.
/// - A pause replies [`StepReply::Paused`] with the ids of the interrupts; the answers
///   ([`RunClient::resume`](crate::RunClient::resume), or
///   [`answer`](crate::RunClient::answer)) are an object of those ids to the answers
///   (`{"<id>": {"decisions": [...]}}`).
/// - Answers that do not fit the run where its store has it (to a pause it is past: a
///   duplicated webhook, the retry of a step whose first attempt took them) are dropped, and
///   the step goes on without them: a paused run is reported paused as it stands, and the
///   workflow waits for its answers again. A late answer never fails the run.
/// - The end replies [`StepReply::Done`] with a JSON [`Summary`] as its text.
/// - The step heartbeats from a task of its own (see *Heartbeats* in the crate's docs), and
///   stops when the server cancels it; a cancelled run's cleanup cancels the stored run
///   ([`Agent::cancel_step`]).
pub struct AgentSteps<M, C> {
    agent: Arc<Agent<M, C>>,
    on_event: Option<OnEvent>,
}

/// What [`AgentSteps::on_event`] calls (a callback, not the chain: one per worker).
type OnEvent = Arc<dyn Fn(StepEvent<'_>) + Send + Sync>;

/// An event of a step as it runs, for [`AgentSteps::on_event`]: the run's key, the step, and
/// the agent's event (a streamed token, a tool call's end, the step's output).
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct StepEvent<'a> {
    /// The run's key (the workflow's id).
    pub key: &'a str,
    /// The step of the run, from 1 (as the workflow counts them).
    pub step: u32,
    /// The attempt of the step, from 1: a retried step tells again what its failed attempt
    /// told up to where the store had it (its completed tool calls are not run again).
    pub attempt: u32,
    /// The agent's event.
    pub event: &'a AgentEvent,
}

/// The part of the agent's lease by which the heartbeat timeout exceeds it, and the longest the
/// SDK holds a step's heartbeats back: a third, the period of the lease's renewals in core
/// (which also starts no tool call with less than a third of the lease left). A dead worker's
/// lease runs out at most a lease after it died; the server, which hears from the step at
/// least every third of the lease, misses it at least a lease after: the retry finds the run
/// free.
const LEASE_PARTS: u32 = 3;

/// The shortest heartbeat throttle: a lease of milliseconds (a test's) does not make the SDK
/// call the server at that pace.
const MIN_HEARTBEAT_THROTTLE: Duration = Duration::from_millis(100);

impl<M, C> AgentSteps<M, C> {
    /// The steps of `agent`'s runs.
    ///
    /// # Errors
    ///
    /// [`Error::NoCheckpointer`] when the agent has no
    /// [`checkpointer`](hookchain_core::AgentBuilder::checkpointer): between steps its runs
    /// would live nowhere.
    pub fn new(agent: Arc<Agent<M, C>>) -> Result<Self, Error> {
        if agent.lease().is_none() {
            return Err(Error::NoCheckpointer);
        }
        Ok(Self {
            agent,
            on_event: None,
        })
    }

    /// Calls `f` with every event of every step this worker runs, as it happens: the side
    /// channel through which a run's tokens and progress reach its user (a channel, a pub/sub
    /// topic), never through Temporal. `f` runs on the step's task: it should hand the event
    /// on, not wait (the heartbeats go on meanwhile, from a task of their own).
    ///
    /// Example: *Steps* in the docs of `hookchain::temporal`.
    #[must_use]
    pub fn on_event(mut self, f: impl Fn(StepEvent<'_>) + Send + Sync + 'static) -> Self {
        self.on_event = Some(Arc::new(f));
        self
    }

    /// The [`StepPolicy`] this agent's runs want, from its settings: a heartbeat timeout of its
    /// [`lease`](hookchain_core::AgentBuilder::lease) and a third (the period of the lease's
    /// renewals: a dead worker's step is retried once its lease has expired), at most twice its
    /// [`max_steps`](hookchain_core::AgentBuilder::max_steps) steps and one (each model call
    /// is a step, and so is each resume after a pause; at most [`MAX_RUN_STEPS`]), and
    /// [`StepPolicy::default`]'s timeout and retries. Start its runs with it, or with a policy
    /// of yours derived from it.
    ///
    /// The timeout holds on the workers of this `AgentSteps`, which send the server a step's
    /// heartbeats at least every third of the lease
    /// ([`heartbeat_throttle`](StepHandler::heartbeat_throttle)).
    pub fn policy(&self) -> StepPolicy {
        let lease = self.agent.lease().unwrap_or_default();
        let max_steps = self.agent.max_steps().saturating_mul(2).saturating_add(1);
        StepPolicy {
            heartbeat_timeout: Some(lease + lease / LEASE_PARTS),
            max_steps: u32::try_from(max_steps).map_or(MAX_RUN_STEPS, |max| max.min(MAX_RUN_STEPS)),
            ..StepPolicy::default()
        }
    }
}

impl<M, C> fmt::Debug for AgentSteps<M, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentSteps")
            .field("agent", &self.agent.name())
            .field("on_event", &self.on_event.is_some())
            .finish_non_exhaustive()
    }
}

/// How a run ended, as [`StepReply::Done`]'s summary says it (JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Summary {
    /// How the run ended: `finished`, `refused`, `filtered`, `truncated`, `jumped`,
    /// `cancelled`, or `ended` (it had ended before this step: a retried step whose first
    /// attempt ended it).
    pub end: String,
    /// The final answer's text, up to [`SUMMARY_TEXT_LIMIT`] bytes.
    pub text: Option<String>,
    /// Whether `text` was cut to the limit.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// The run's steps.
    pub steps: usize,
    /// The run's tokens, in and out.
    pub input_tokens: u64,
    /// See `input_tokens`.
    pub output_tokens: u64,
}

impl Summary {
    /// Reads a summary from [`RunOutcome::summary`](crate::RunOutcome::summary).
    ///
    /// # Errors
    ///
    /// The JSON error, if `summary` is not one.
    pub fn parse(summary: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(summary)
    }

    fn of(output: &RunOutput) -> Self {
        let text = output.text().map(|text| text.into_owned());
        let truncated = text
            .as_ref()
            .is_some_and(|text| text.len() > SUMMARY_TEXT_LIMIT);
        let text = text.map(|mut text| {
            if truncated {
                let mut end = SUMMARY_TEXT_LIMIT;
                while !text.is_char_boundary(end) {
                    end -= 1;
                }
                text.truncate(end);
            }
            text
        });
        Summary {
            end: end_name(output.end).to_owned(),
            text,
            truncated,
            steps: output.steps,
            input_tokens: output.usage.input_tokens,
            output_tokens: output.usage.output_tokens,
        }
    }
}

fn end_name(end: EndReason) -> &'static str {
    match end {
        EndReason::Finished => "finished",
        EndReason::Refused => "refused",
        EndReason::Filtered => "filtered",
        EndReason::Truncated => "truncated",
        EndReason::Jumped => "jumped",
        EndReason::Cancelled => "cancelled",
        _ => "ended",
    }
}

impl<M, C> StepHandler for AgentSteps<M, C>
where
    M: Model + 'static,
    C: Middleware + 'static,
{
    fn step(
        &self,
        ctx: StepContext,
        request: StepRequest,
    ) -> BoxFuture<Result<StepReply, StepFailure>> {
        let agent = Arc::clone(&self.agent);
        let on_event = self.on_event.clone();
        Box::pin(async move {
            let StepRequest { key, step, input } = request;
            let tell = |event: &AgentEvent| {
                if let Some(on_event) = &on_event {
                    on_event(StepEvent {
                        key: &key,
                        step,
                        attempt: ctx.attempt(),
                        event,
                    });
                }
            };
            let ran = if step == 1 {
                let input = run_input(input)?;
                drive(&ctx, agent.stream_start_step(key.clone(), input), &tell).await?
            } else {
                let answers = answers(input)?;
                let answered = !answers.is_empty();
                match drive(&ctx, agent.stream_step(&key, answers), &tell).await? {
                    Err(error) if answered && answers_do_not_fit(&error) => {
                        tracing::warn!(
                            key,
                            step,
                            error = %hookchain_core::error::Report(&error),
                            "answers that do not fit the run where it stands (late, or \
                             delivered twice) dropped: the step goes on without them"
                        );
                        drive(&ctx, agent.stream_step(&key, []), &tell).await?
                    }
                    ran => ran,
                }
            };
            match ran {
                Ok(output) => Ok(reply(&output)),
                Err(error) => refusal(error),
            }
        })
    }

    /// A third of the agent's lease: the server hears from a step as often as the store does.
    fn heartbeat_throttle(&self) -> Option<Duration> {
        let lease = self.agent.lease()?;
        Some((lease / LEASE_PARTS).max(MIN_HEARTBEAT_THROTTLE))
    }

    fn cleanup(&self, key: String) -> BoxFuture<Result<(), StepFailure>> {
        let agent = Arc::clone(&self.agent);
        Box::pin(async move {
            match agent.cancel_step(&key).await {
                Ok(_) => Ok(()),
                // Nothing left to cancel.
                Err(AgentError::Resume(error))
                    if matches!(
                        *error,
                        ResumeError::Ended { .. } | ResumeError::NotStored { .. }
                    ) =>
                {
                    Ok(())
                }
                Err(error) => Err(failure(error)),
            }
        })
    }
}

/// Polls the step's events to its output, heartbeating from a task of their own meanwhile
/// (a tool that blocks this task's thread does not silence them); stops it (dropping it: its
/// key is released) when the server cancels the attempt.
async fn drive(
    ctx: &StepContext,
    mut events: hookchain_core::AgentStream<'_>,
    tell: impl Fn(&AgentEvent),
) -> Result<Result<RunOutput, AgentError>, StepFailure> {
    // Stopped when this returns, or is dropped.
    let heartbeats = Heartbeats::start(ctx).await;
    loop {
        tokio::select! {
            () = ctx.cancelled() => return Err(StepFailure::cancelled()),
            event = events.next() => match event {
                Some(Ok(event)) => {
                    tell(&event);
                    match event {
                        AgentEvent::Output(output) => return Ok(Ok(*output)),
                        AgentEvent::ToolCallFinished(_) => heartbeats.tool_call_done(),
                        _ => {}
                    }
                }
                Some(Err(error)) => return Ok(Err(error)),
                None => return Ok(Err(AgentError::Checkpoint(Box::new(CheckpointError::Store {
                    what: "run the step",
                    source: "the step's stream ended without its output".into(),
                })))),
            },
        }
    }
}

fn reply(output: &RunOutput) -> StepReply {
    match output.end {
        EndReason::Stepped => StepReply::Next,
        EndReason::Interrupted => StepReply::Paused {
            interrupts: output
                .interrupts()
                .iter()
                .map(|interrupt| {
                    let summary = InterruptSummary::new(interrupt.id.to_string())
                        .source(interrupt.source.clone())
                        .payload_of(&interrupt.payload);
                    match &interrupt.tool_call_id {
                        Some(id) => summary.tool_call_id(id.clone()),
                        None => summary,
                    }
                })
                .collect(),
        },
        _ => StepReply::Done {
            summary: serde_json::to_string(&Summary::of(output))
                .unwrap_or_else(|_| String::from("{}")),
        },
    }
}

/// A step refused before it ran: the run that ended already (a retried attempt whose first one
/// ended it) is done — with its answer when its tombstone kept its end, as a run that keeps its
/// steps does (then the step hands the end back, and is not refused); the rest is a failure.
fn refusal(error: AgentError) -> Result<StepReply, StepFailure> {
    if let AgentError::Resume(resume) = &error
        && let ResumeError::Ended { tombstone, .. } = &**resume
    {
        let summary = Summary {
            end: "ended".to_owned(),
            text: None,
            truncated: false,
            steps: 0,
            input_tokens: 0,
            output_tokens: 0,
        };
        tracing::info!(
            run = tombstone.run_id,
            how = tombstone.how,
            "the run had ended before this step: done"
        );
        let summary = serde_json::to_string(&summary).unwrap_or_else(|_| String::from("{}"));
        return Ok(StepReply::Done { summary });
    }
    Err(failure(error))
}

/// The failure of a step that failed: retryable when another attempt may do better (the store
/// or the model's transient trouble, a key still held by a worker presumed dead, a lease
/// running out), not when it cannot (a bad input, a run past its steps). Answers that do not
/// fit never get here: the step goes on without them ([`answers_do_not_fit`]).
fn failure(error: AgentError) -> StepFailure {
    let retryable = match &error {
        AgentError::Model(error) => error.is_retryable(),
        AgentError::Checkpoint(_) => true,
        AgentError::Middleware(_) => true,
        _ => false,
    };
    let error = hookchain_core::error::Report(&error).to_string();
    if retryable {
        StepFailure::retryable(error)
    } else {
        StepFailure::non_retryable(error)
    }
}

/// Whether the step was refused, before anything ran, for its answers alone: they name no
/// interrupt the run waits on, or leave one of them unanswered. Core drops answers to the
/// pauses a run is past already; these are answers it cannot tell apart from a late one (an id
/// written by hand, a pause answered in parts), and they must not end a run that waits for the
/// right ones.
fn answers_do_not_fit(error: &AgentError) -> bool {
    matches!(
        error,
        AgentError::Resume(resume) if matches!(
            **resume,
            ResumeError::UnknownInterrupt { .. }
                | ResumeError::MissingAnswer { .. }
                | ResumeError::DuplicateAnswer { .. }
        )
    )
}

/// The run's input, from the workflow's: a text, or a list of messages.
fn run_input(input: Option<Value>) -> Result<RunInput, StepFailure> {
    match input {
        Some(Value::String(text)) => Ok(RunInput::from(text)),
        Some(messages @ Value::Array(_)) => serde_json::from_value::<Vec<Message>>(messages)
            .map(RunInput)
            .map_err(|error| StepFailure::non_retryable(format!("the run's input: {error}"))),
        other => Err(StepFailure::non_retryable(format!(
            "the run's input is a text or a list of messages, not {other:?}"
        ))),
    }
}

/// The answers to a pause, from the signal's: an object of interrupt ids to answers; none
/// (`None`) for a step that goes on from a step.
fn answers(input: Option<Value>) -> Result<Vec<(InterruptId, Value)>, StepFailure> {
    match input {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(answers) => serde_json::from_value::<BTreeMap<InterruptId, Value>>(answers)
            .map(|answers| answers.into_iter().collect())
            .map_err(|error| {
                StepFailure::non_retryable(format!(
                    "the answers are an object of interrupt ids to answers: {error}"
                ))
            }),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use hookchain_core::interrupt::InMemoryCheckpointer;
    use hookchain_core::{Durability, ModelResponse, ScriptedModel};

    use super::*;

    fn model() -> ScriptedModel {
        ScriptedModel::new([ModelResponse::text("Hi.")])
    }

    #[test]
    fn answers_that_do_not_fit_the_pause_are_told_from_other_refusals() {
        let pending = vec![InterruptId::new("1/pay")];
        let unknown = ResumeError::UnknownInterrupt {
            id: InterruptId::new("0/pay"),
            pending: pending.clone(),
        };
        assert!(answers_do_not_fit(&AgentError::from(unknown)));
        let missing = ResumeError::MissingAnswer {
            id: InterruptId::new("1/pay"),
        };
        assert!(answers_do_not_fit(&AgentError::from(missing)));
        assert!(!answers_do_not_fit(&AgentError::from(
            ResumeError::NoCheckpointer
        )));
    }

    #[test]
    fn an_agent_without_a_store_is_refused() {
        let agent = Agent::builder(model()).build().unwrap();
        assert!(matches!(
            AgentSteps::new(Arc::new(agent)),
            Err(Error::NoCheckpointer)
        ));
    }

    #[test]
    fn the_policy_follows_the_agents_lease_and_steps() {
        let agent = Agent::builder(model())
            .checkpointer(InMemoryCheckpointer::new(), Durability::Pauses)
            .lease(Duration::from_secs(7))
            .max_steps(12)
            .build()
            .unwrap();
        let policy = AgentSteps::new(Arc::new(agent)).unwrap().policy();
        assert_eq!(
            policy.heartbeat_timeout,
            Some(Duration::from_secs(7) * 4 / 3)
        );
        assert_eq!(policy.max_steps, 25);
        assert_eq!(policy.start_to_close, StepPolicy::default().start_to_close);
        policy.validate().unwrap();

        // The server hears from a step as often as the store renews its lease.
        let steps = AgentSteps::new(Arc::new(
            Agent::builder(model())
                .checkpointer(InMemoryCheckpointer::new(), Durability::Pauses)
                .lease(Duration::from_secs(30))
                .build()
                .unwrap(),
        ))
        .unwrap();
        assert_eq!(steps.heartbeat_throttle(), Some(Duration::from_secs(10)));
        assert_eq!(
            steps.policy().heartbeat_timeout,
            Some(Duration::from_secs(40))
        );

        let many = Agent::builder(model())
            .checkpointer(InMemoryCheckpointer::new(), Durability::Pauses)
            .max_steps(usize::MAX)
            .build()
            .unwrap();
        let policy = AgentSteps::new(Arc::new(many)).unwrap().policy();
        assert_eq!(policy.max_steps, MAX_RUN_STEPS);
        policy.validate().unwrap();
    }
}
