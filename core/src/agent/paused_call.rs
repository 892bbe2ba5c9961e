//! A tool call outside a run that waits for an answer: [`Agent::call_tool_or_pause`], and its
//! resume.

use serde::{Deserialize, Serialize};

use super::Agent;
use super::call_tool::call_context;
use super::run_loop::States;
use crate::__private::Internal;
use crate::context::{LayerAnswer, Raiser, ResumePoint, RunContext};
use crate::error::Error;
use crate::interrupt::{Answer, Interrupt, ResumeError, ToolAnswer};
use crate::message::{ToolCall, ToolResult};
use crate::middleware::{Hook, Middleware};
use crate::model::Model;

/// How a call of [`Agent::call_tool_or_pause`] (or [`Agent::resume_tool_call`]) ended: with
/// its result, or paused on an interrupt.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum CallOutcome {
    /// The call's result (an error result for a call that failed or was rejected).
    Done(ToolResult),
    /// A hook or the tool asked for an answer: resume with it
    /// ([`Agent::resume_tool_call`]).
    Paused(Box<PausedCall>),
}

impl CallOutcome {
    /// The result, or [`Error::ToolCallInterrupted`] with the interrupt of a paused call.
    ///
    /// # Errors
    ///
    /// [`Error::ToolCallInterrupted`] for a paused call.
    pub fn into_result(self) -> Result<ToolResult, Error> {
        match self {
            CallOutcome::Done(result) => Ok(result),
            CallOutcome::Paused(paused) => {
                Err(Error::ToolCallInterrupted(Box::new(paused.interrupt)))
            }
        }
    }
}

/// A tool call outside a run that an interrupt paused: the call (as the hooks before the one
/// that asked left it), what was asked, and what its resume needs. Data only
/// (`Serialize`/`Deserialize`): keep it where the answer will come from.
///
/// **Who resumes it decides how often it runs.** A paused call resumed twice runs twice: it is
/// not kept in the agent's checkpointer, and nothing refuses a second resume. Keep it where
/// one resume can be told from a replay (a store's claim, as `hookchain-mcp`'s served calls
/// do), and keep it where the caller cannot change it (it says which hook asked, and the
/// arguments that were gated).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PausedCall {
    /// The call.
    pub call: ToolCall,
    /// What was asked, and who asked.
    pub interrupt: Interrupt,
    /// The call's run id, kept across its resumes: its tool's
    /// [`idempotency_key`](crate::ToolContext::idempotency_key) stays the same.
    run_id: String,
    /// The answers given at earlier resumes to layers of the call's path: each stays its
    /// layer's until the call completes, as in a run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    answers: Vec<ToolAnswer>,
}

impl PausedCall {
    pub(super) fn new(
        call: ToolCall,
        interrupt: Interrupt,
        run_id: String,
        answers: Vec<ToolAnswer>,
    ) -> Self {
        PausedCall {
            call,
            interrupt,
            run_id,
            answers,
        }
    }

    /// The call's run id, the same in each of its rounds (the first half of its tool's
    /// [`idempotency_key`](crate::ToolContext::idempotency_key)).
    #[must_use]
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Whether the call's gate asked (an `after_model` hook: an approval), so the tool has not
    /// started; else a layer of its path or the tool itself did.
    #[must_use]
    pub fn at_gate(&self) -> bool {
        self.interrupt.hook == Some(Hook::AfterModel)
    }
}

impl<M: Model, C: Middleware> Agent<M, C> {
    /// Runs `call` as [`call_tool`](Self::call_tool) does, but a call that a hook or the tool
    /// interrupts pauses rather than fails: [`CallOutcome::Paused`], with what was asked; give
    /// the answer to [`resume_tool_call`](Self::resume_tool_call) to go on — later, in
    /// another process (the [`PausedCall`] is data).
    ///
    /// # Errors
    ///
    /// An error of an `after_model` hook (or its panic), as a run would end with it.
    ///
    /// ```
    /// use hookchain::agent::CallOutcome;
    /// use hookchain::builtin::human_in_the_loop::{
    ///     ApprovalResponse, Decision, HumanInTheLoop, ToolPolicy,
    /// };
    /// use hookchain::prelude::*;
    /// use hookchain::{chain, tool};
    ///
    /// /// Deletes a file.
    /// #[tool]
    /// async fn delete(path: String) -> String {
    ///     format!("deleted {path}")
    /// }
    ///
    /// # futures::executor::block_on(async {
    /// let approval = HumanInTheLoop::new().interrupt_on("delete", ToolPolicy::always());
    /// let agent = Agent::builder(ScriptedModel::new([]))
    ///     .tool(delete)
    ///     .chain(chain![approval])
    ///     .build()?;
    /// let call = ToolCall::new("c1", "delete", serde_json::json!({"path": "/tmp/x"}));
    /// let CallOutcome::Paused(paused) = agent.call_tool_or_pause(call).await? else {
    ///     panic!("the call waits for its approval");
    /// };
    /// assert!(paused.at_gate());
    /// // … the approval comes, later:
    /// let approved = serde_json::to_value(ApprovalResponse::new([Decision::Approve]))?;
    /// let outcome = agent.resume_tool_call(*paused, approved).await?;
    /// assert_eq!(outcome.into_result()?.content, "deleted /tmp/x");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub async fn call_tool_or_pause(&self, call: ToolCall) -> Result<CallOutcome, Error> {
        self.call_tool_or_pause_with(RunContext::new(), call).await
    }

    /// Resumes a [`PausedCall`] with `answer` to its interrupt: the hook that asked reads it
    /// (an approval's decisions, a question's answer) and the call goes on from there — at
    /// the gate, the hooks before the one that asked do not run again; on the call's path,
    /// the gate does not run again, and the layers that were answered before read their
    /// answers again. It may pause again (a tool that asks twice).
    ///
    /// The answer is checked first by whoever asked (a middleware's `#[check_answer]`, a
    /// tool's [`check_answer`](crate::Tool::check_answer)): nothing runs on an answer it
    /// refuses.
    ///
    /// # Errors
    ///
    /// - [`ResumeError::InvalidAnswer`] for an answer whoever asked refuses.
    /// - An error of an `after_model` hook (or its panic), as a run would end with it.
    pub async fn resume_tool_call(
        &self,
        paused: PausedCall,
        answer: serde_json::Value,
    ) -> Result<CallOutcome, Error> {
        self.resume_tool_call_with(RunContext::new(), paused, answer)
            .await
    }

    /// [`resume_tool_call`](Self::resume_tool_call), with `run_context` given to the call's
    /// hooks and tool.
    pub(super) async fn resume_tool_call_with(
        &self,
        run_context: RunContext,
        paused: PausedCall,
        answer: serde_json::Value,
    ) -> Result<CallOutcome, Error> {
        self.check_call_answer(&paused, &answer)?;
        let mut cx = call_context(run_context);
        cx.run_id.clone_from(&paused.run_id);
        // The ids of the interrupts it raises next are those of the run's next pause.
        cx.counters.pauses = paused.interrupt.id.pause().map_or(1, |pause| pause + 1);
        let at_gate = paused.at_gate();
        let PausedCall {
            call,
            interrupt,
            run_id,
            answers,
        } = paused;
        if at_gate {
            cx.resume = Some(ResumePoint {
                at: interrupt.member.unwrap_or(0),
                answer: Some(answer),
            });
            return self.gate_then_call(cx, call, run_id).await;
        }
        let mut layers: Vec<LayerAnswer> = answers
            .into_iter()
            .map(|kept| LayerAnswer {
                raiser: kept.raiser,
                answer: kept.answer,
                asked: kept.asked,
            })
            .collect();
        layers.push(LayerAnswer {
            raiser: interrupt.member.map_or(Raiser::Tool, Raiser::Member),
            answer,
            asked: interrupt.payload,
        });
        cx.tool_answers.insert(call.id.clone(), layers);
        let state = States::<C>::fresh(C::ThreadState::default());
        Ok(self.past_gate(&cx, &state, call, run_id).await)
    }

    /// Asks whoever raised the paused call's interrupt whether `answer` will do.
    fn check_call_answer(
        &self,
        paused: &PausedCall,
        answer: &serde_json::Value,
    ) -> Result<(), Error> {
        let interrupt = &paused.interrupt;
        let asked = Answer::new(interrupt, answer, &self.tools);
        let checked = match interrupt.member {
            Some(member) => self.chain.check_answer_at(member, &asked, Internal::new()),
            None => self
                .tools
                .check_answer(&paused.call, &asked)
                .map_err(Into::into),
        };
        checked.map_err(|source| {
            ResumeError::InvalidAnswer {
                id: interrupt.id.clone(),
                source,
            }
            .into()
        })
    }
}
