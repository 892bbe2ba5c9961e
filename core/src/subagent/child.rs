//! A child agent's run inside a tool call of its parent: started or resumed, streamed when the
//! parent is, its usage counted in the parent's, its pause the parent's interrupt.

use futures::StreamExt;

use super::depth::Depth;
use super::pause::{ChildAnswers, SubAgentPause};
use crate::agent::{Agent, AgentEvent, EndReason, ResumeFrom, RunInput, RunOutput, SubAgentEvent};
use crate::context::{ChildRunId, ParentStore, RunContext, ToolContext};
use crate::error::Error;
use crate::interrupt::{Answer, Checkpoint, InterruptId};
use crate::middleware::Middleware;
use crate::model::{Model, Usage};
use crate::tool::ToolError;

/// A child agent, as one tool call of its parent runs it.
pub(super) struct Child<'a, M, C> {
    pub(super) agent: &'a Agent<M, C>,
    /// The parent's tool it runs as.
    pub(super) tool: &'a str,
    pub(super) max_depth: usize,
    pub(super) inherit_context: bool,
}

/// How the child's run starts: afresh, or from its pause.
enum Start {
    Run(RunInput),
    Resume {
        checkpoint: Box<Checkpoint>,
        answers: Vec<(InterruptId, serde_json::Value)>,
        /// What the child had spent at its pause: counted in the parent's usage already.
        spent: Usage,
    },
}

impl<M: Model + 'static, C: Middleware + 'static> Child<'_, M, C> {
    /// Runs the child on `input()` — or, when the call is resumed from the child's pause, goes
    /// on from there with the answers — and returns its output, unless it paused again: then
    /// the call's error is the parent's interrupt ([`SubAgentPause`]).
    pub(super) async fn run(
        &self,
        cx: ToolContext<'_>,
        input: impl FnOnce() -> Result<RunInput, ToolError>,
    ) -> Result<RunOutput, ToolError> {
        let name = self.tool;
        let depth = cx.run_context.get::<Depth>().map_or(0, |depth| depth.0) + 1;
        if depth > self.max_depth {
            return Err(ToolError::for_model(
                name,
                format!(
                    "`{name}` was not run: it would be agent number {depth} in a chain of agents \
                     calling agents, past the limit of {}; do the task without it",
                    self.max_depth
                ),
            ));
        }
        let mut run_context = if self.inherit_context {
            cx.run_context.clone()
        } else {
            RunContext::new()
        };
        run_context.insert(Depth(depth));
        // A child without a store of its own keeps its runs in its parent's: run again after
        // the parent's worker died, it goes on from its last completed call.
        if let Some(store) = &cx.run().durable {
            run_context.insert(ParentStore(store.clone()));
        }
        let start = match (cx.resume_value(), cx.interrupt_payload()) {
            (Some(answer), Some(asked)) => {
                let pause = SubAgentPause::from_payload(asked).ok_or_else(|| {
                    ToolError::failed(name, "the interrupt is not a sub-agent's pause")
                })?;
                let answers = ChildAnswers::read(answer, &pause)
                    .map_err(|error| ToolError::failed(name, error))?;
                Start::Resume {
                    checkpoint: Box::new(pause.checkpoint),
                    answers: answers.answers.into_iter().collect(),
                    spent: pause.usage,
                }
            }
            _ => {
                // The child's run id is this call's idempotency key: the same when the parent's
                // call runs again (its worker died), so that the child's tools get the same
                // keys, and a system that deduplicates by them catches the repeat. (A resumed
                // child keeps its checkpoint's.)
                run_context.insert(ChildRunId(cx.idempotency_key()));
                Start::Run(input()?)
            }
        };
        let spent = match &start {
            Start::Run(_) => Usage::default(),
            Start::Resume { spent, .. } => *spent,
        };
        let output = self
            .go(cx, run_context, start)
            .await
            .map_err(|error| ToolError::failed(name, error))?
            .ok_or_else(|| {
                ToolError::failed(name, "the sub-agent's stream ended without its output")
            })?;
        cx.add_usage(output.usage.since(spent));
        if output.end != EndReason::Interrupted {
            return Ok(output);
        }
        let Some(checkpoint) = output.checkpoint else {
            return Err(ToolError::failed(
                name,
                "the sub-agent paused without a checkpoint",
            ));
        };
        let pause = SubAgentPause::new(self.agent.name(), name, *checkpoint, output.usage);
        let payload = serde_json::to_value(pause).map_err(|source| ToolError::Output {
            tool: name.to_owned(),
            source,
        })?;
        Err(ToolError::Interrupt { payload })
    }

    /// Runs the child: streamed when the parent is (its events forwarded, tagged, one at a
    /// time as the parent's consumer takes them), else plainly. `None`: a stream that ended
    /// without its output (which a stream never does).
    async fn go(
        &self,
        cx: ToolContext<'_>,
        run_context: RunContext,
        start: Start,
    ) -> Result<Option<RunOutput>, Error> {
        let child = self.agent.with_context(run_context);
        if cx.run().events.is_none() {
            return match start {
                Start::Run(input) => child.run(input).await,
                Start::Resume {
                    checkpoint,
                    answers,
                    ..
                } => child.resume(self.vouched(*checkpoint), answers).await,
            }
            .map(Some);
        }
        let mut events = match start {
            Start::Run(input) => child.stream(input),
            Start::Resume {
                checkpoint,
                answers,
                ..
            } => child.stream_resume(self.vouched(*checkpoint), answers),
        };
        while let Some(event) = events.next().await {
            match event? {
                AgentEvent::Output(output) => return Ok(Some(*output)),
                event => {
                    cx.run().emit(|| {
                        AgentEvent::SubAgent(SubAgentEvent {
                            call_id: cx.call_id().to_owned(),
                            agent: self.agent.name().to_owned(),
                            event: Box::new(event),
                        })
                    });
                    cx.run().delivered().await;
                }
            }
        }
        Ok(None)
    }
}

impl<M, C> Child<'_, M, C> {
    /// The child's `checkpoint`, as the child resumes it: it comes from the parent's checkpoint
    /// (stored by the parent, or verified by it if it signs its own), so the parent vouches for
    /// it — and a child that resumes only signed checkpoints from its callers
    /// ([`AgentBuilder::checkpoint_signing`](crate::AgentBuilder::checkpoint_signing)) is
    /// handed it signed with its own key.
    fn vouched(&self, checkpoint: Checkpoint) -> ResumeFrom {
        #[cfg(feature = "signing")]
        if let Ok(signed) = self.agent.sign_checkpoint(&checkpoint) {
            return ResumeFrom::signed(signed);
        }
        ResumeFrom::from(checkpoint)
    }
}

/// Checks the answer to a child's pause before the parent resumes: it must be
/// [`SubAgentPause::answer`]'s value, answering interrupts the child has.
pub(super) fn check_child_answer(tool: &str, answer: &Answer<'_>) -> Result<(), ToolError> {
    let pause = SubAgentPause::from_interrupt(answer.interrupt())
        .ok_or_else(|| ToolError::failed(tool, "the interrupt is not a sub-agent's pause"))?;
    ChildAnswers::read(answer.value(), &pause)
        .map(drop)
        .map_err(|error| ToolError::failed(tool, error))
}

/// What the parent's model reads of a child that ended without finishing (refused, filtered,
/// cut short, out of steps).
pub(super) fn unfinished(agent: &str, tool: &str, end: EndReason, output: &RunOutput) -> ToolError {
    let had = output
        .text()
        .filter(|text| !text.is_empty())
        .map(|text| format!("; what it had: {text}"))
        .unwrap_or_default();
    ToolError::for_model(
        tool,
        format!("the agent `{agent}` did not finish its task ({end:?}){had}"),
    )
}
