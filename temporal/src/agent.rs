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

use crate::{BoxFuture, StepContext, StepFailure, StepHandler, StepReply, StepRequest};

/// How often a step tells the server it is alive while nothing else happens (a long model
/// call): well within any heartbeat timeout worth setting (the SDK sends at most one per 80 %
/// of the timeout, so more often costs nothing on the wire).
const HEARTBEAT_EVERY: Duration = Duration::from_secs(1);

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
/// timeout: a step whose worker died is retried once the server misses its heartbeats, and it
/// can take the run over only once the dead worker's lease expired (sooner, it is retried
/// again).
///
/// - The first step's input is the workflow's: a text (the user's message) or a list of
///   [`Message`]s.
/// - A pause replies [`StepReply::Paused`] with the ids of the interrupts; the answers
///   ([`RunClient::answer`](crate::RunClient::answer)) are an object of those ids to the
///   answers (`{"<id>": {"decisions": [...]}}`).
/// - The end replies [`StepReply::Done`] with a JSON [`Summary`] as its text.
/// - The step heartbeats as it goes (each event of the model and the tools, at least every
///   second), and stops when the server cancels it; a cancelled run's cleanup cancels the
///   stored run ([`Agent::cancel_step`]).
pub struct AgentSteps<M, C> {
    agent: Arc<Agent<M, C>>,
}

impl<M, C> AgentSteps<M, C> {
    /// The steps of `agent`'s runs.
    pub fn new(agent: Arc<Agent<M, C>>) -> Self {
        Self { agent }
    }
}

impl<M, C> fmt::Debug for AgentSteps<M, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentSteps")
            .field("agent", &self.agent.name())
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
        Box::pin(async move {
            let StepRequest { key, step, input } = request;
            let events = if step == 1 {
                let input = run_input(input)?;
                agent.stream_start_step(key.clone(), input)
            } else {
                let answers = answers(input)?;
                agent.stream_step(&key, answers)
            };
            match drive(&ctx, events).await? {
                Ok(output) => Ok(reply(&output)),
                Err(error) => refusal(error),
            }
        })
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

/// Polls the step's events to its output, heartbeating as it goes; stops it (dropping it: its
/// key is released) when the server cancels the attempt.
async fn drive(
    ctx: &StepContext,
    mut events: hookchain_core::AgentStream<'_>,
) -> Result<Result<RunOutput, AgentError>, StepFailure> {
    let mut done = 0_usize;
    let mut beat = tokio::time::interval(HEARTBEAT_EVERY);
    beat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = ctx.cancelled() => return Err(StepFailure::cancelled()),
            _ = beat.tick() => {
                heartbeat(ctx, done).await;
            }
            event = events.next() => match event {
                Some(Ok(AgentEvent::Output(output))) => return Ok(Ok(*output)),
                Some(Ok(AgentEvent::ToolCallFinished(_))) => {
                    done += 1;
                    heartbeat(ctx, done).await;
                }
                Some(Ok(_)) => {}
                Some(Err(error)) => return Ok(Err(error)),
                None => return Ok(Err(AgentError::Checkpoint(Box::new(CheckpointError::Store {
                    what: "run the step",
                    source: "the step's stream ended without its output".into(),
                })))),
            },
        }
    }
}

/// What a heartbeat says: the tool calls this attempt completed (for the server's UI; the
/// store, not the heartbeat, is what the next attempt goes on from).
#[derive(Serialize)]
struct Progress {
    tool_calls_done: usize,
}

async fn heartbeat(ctx: &StepContext, done: usize) {
    // A heartbeat that cannot be serialized cannot happen (a count); the server learns the
    // step is alive from the next one either way.
    let _ = ctx
        .heartbeat(Progress {
            tool_calls_done: done,
        })
        .await;
}

fn reply(output: &RunOutput) -> StepReply {
    match output.end {
        EndReason::Stepped => StepReply::Next,
        EndReason::Interrupted => StepReply::Paused {
            interrupts: output
                .interrupts()
                .iter()
                .map(|interrupt| interrupt.id.to_string())
                .collect(),
        },
        _ => StepReply::Done {
            summary: serde_json::to_string(&Summary::of(output))
                .unwrap_or_else(|_| String::from("{}")),
        },
    }
}

/// A step refused before it ran: the run that ended already (a retried attempt whose first one
/// ended it) is done; the rest is a failure.
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
/// or the model's transient trouble, a key still held by a worker presumed dead), not when it
/// cannot (a bad input, answers that do not fit, a run past its steps).
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
