//! Human in the loop: tool calls a person must approve, edit, reject or answer before they run.
//!
//! ```
//! use hookchain::chain;
//! use hookchain::builtin::human_in_the_loop::{HumanInTheLoop, ToolPolicy, DecisionKind};
//!
//! let approval = HumanInTheLoop::new()
//!     .interrupt_on("delete_file", ToolPolicy::always().description("Deletes a file for good"))
//!     .interrupt_on("send_email", ToolPolicy::allowing([DecisionKind::Approve, DecisionKind::Reject]))
//!     .never("read_file");
//! let chain = chain![approval];
//! ```
//!
//! After each model answer, the calls of gated tools are collected into **one** interrupt
//! whose payload is an [`ApprovalRequest`]. The run resumes with an [`ApprovalResponse`]: one
//! [`Decision`] per action, in order. Approved calls run; edited calls run with the new
//! arguments (the history shows the edited call); rejected calls get an error result saying
//! so, which the model reads; `respond` supplies the result without running the tool. Every
//! tool call thus still gets exactly one result.

mod decision;

use std::collections::BTreeMap;

use hookchain_macros::middleware;

pub use decision::{
    ActionRequest, ApprovalRequest, ApprovalResponse, Decision, DecisionKind, HumanInTheLoopError,
};

use crate::context::Context;
use crate::interrupt::Answer;
use crate::message::ToolResult;
use crate::middleware::Flow;
use crate::model::ModelResponse;

/// Which decisions a person may take on a tool's calls, and what they are shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolPolicy {
    allowed: Vec<DecisionKind>,
    description: Option<String>,
}

impl ToolPolicy {
    /// Every decision allowed: approve, edit, reject, respond.
    #[must_use]
    pub fn always() -> Self {
        ToolPolicy {
            allowed: DecisionKind::ALL.to_vec(),
            description: None,
        }
    }

    /// Only these decisions.
    pub fn allowing(decisions: impl IntoIterator<Item = DecisionKind>) -> Self {
        ToolPolicy {
            allowed: decisions.into_iter().collect(),
            description: None,
        }
    }

    /// What the person is told about the tool.
    #[must_use]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }
}

/// Pauses the run for a person's decision on the calls of gated tools (see the
/// [module docs](self)).
#[derive(Debug, Clone, Default)]
pub struct HumanInTheLoop {
    /// The gated tools; a tool not listed never needs approval.
    policies: BTreeMap<String, ToolPolicy>,
}

impl HumanInTheLoop {
    /// No tool gated yet.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Calls of `tool` need a decision under `policy`.
    #[must_use]
    pub fn interrupt_on(mut self, tool: impl Into<String>, policy: ToolPolicy) -> Self {
        self.policies.insert(tool.into(), policy);
        self
    }

    /// Calls of `tool` never need a decision (the default for unlisted tools).
    #[must_use]
    pub fn never(mut self, tool: impl Into<String>) -> Self {
        self.policies.remove(&tool.into());
        self
    }
}

#[middleware(crate = crate, live_stream)]
impl HumanInTheLoop {
    /// Refuses, before the run resumes, an answer that is not an [`ApprovalResponse`], has the
    /// wrong number of decisions, takes a decision the call's policy does not allow, or edits
    /// arguments into something the tool does not accept.
    #[check_answer]
    fn check(&self, answer: &Answer<'_>) -> Result<(), HumanInTheLoopError> {
        let request: ApprovalRequest = answer.payload_as()?;
        let response: ApprovalResponse = answer.value_as()?;
        let actions = request.actions.iter();
        check_decisions(
            actions.map(|action| (action.name.as_str(), action.allowed_decisions.as_slice())),
            &response.decisions,
        )?;
        for (action, decision) in request.actions.iter().zip(&response.decisions) {
            if let Decision::Edit { arguments } = decision {
                answer
                    .check_tool_arguments(&action.name, arguments)
                    .map_err(|source| HumanInTheLoopError::EditedArguments {
                        tool: action.name.clone(),
                        source,
                    })?;
            }
        }
        Ok(())
    }

    /// Gates the calls of the response: interrupts with them, or applies the decisions.
    #[hook(after_model)]
    fn review(
        &self,
        cx: &mut Context,
        response: &mut ModelResponse,
    ) -> Result<Flow, HumanInTheLoopError> {
        // The gated calls, by index, with their policies.
        let gated: Vec<(usize, &ToolPolicy)> = response
            .message
            .tool_calls
            .iter()
            .enumerate()
            .filter_map(|(i, call)| Some((i, self.policies.get(&call.name)?)))
            .collect();
        if gated.is_empty() {
            return Ok(Flow::Continue);
        }
        let Some(answer) = cx.resume_as::<ApprovalResponse>() else {
            let actions = gated
                .iter()
                .map(|&(i, policy)| {
                    let call = &response.message.tool_calls[i];
                    ActionRequest {
                        call_id: call.id.clone(),
                        name: call.name.clone(),
                        arguments: call.arguments.clone(),
                        description: policy.description.clone(),
                        allowed_decisions: policy.allowed.clone(),
                    }
                })
                .collect();
            let request = ApprovalRequest { actions };
            return Ok(Flow::interrupt(serde_json::to_value(request)?));
        };
        let answer = answer?;
        // Checked before the resume already (`check`); checked again for a caller that runs
        // this hook without an agent.
        let calls = &response.message.tool_calls;
        check_decisions(
            gated
                .iter()
                .map(|&(i, policy)| (calls[i].name.as_str(), policy.allowed.as_slice())),
            &answer.decisions,
        )?;
        let mut results = Vec::new();
        for (&(i, _), decision) in gated.iter().zip(answer.decisions) {
            let call = &mut response.message.tool_calls[i];
            match decision {
                Decision::Approve => {}
                Decision::Edit { arguments } => call.arguments = arguments,
                Decision::Reject { message } => results.push(ToolResult::error(
                    &call.id,
                    format!(
                        "The user rejected this call of `{}`: {}",
                        call.name,
                        message.as_deref().unwrap_or("no reason given")
                    ),
                )),
                Decision::Respond { content } => results.push(ToolResult::ok(&call.id, content)),
            }
        }
        for result in results {
            cx.answer_tool_call(result);
        }
        Ok(Flow::Continue)
    }
}

/// One decision per action, each one its action's policy allows: `actions` are the tools'
/// names and allowed decisions, in order.
fn check_decisions<'a>(
    actions: impl ExactSizeIterator<Item = (&'a str, &'a [DecisionKind])>,
    decisions: &[Decision],
) -> Result<(), HumanInTheLoopError> {
    if decisions.len() != actions.len() {
        return Err(HumanInTheLoopError::DecisionCount {
            expected: actions.len(),
            found: decisions.len(),
        });
    }
    for ((tool, allowed), decision) in actions.zip(decisions) {
        if !allowed.contains(&decision.kind()) {
            return Err(HumanInTheLoopError::NotAllowed {
                tool: tool.to_owned(),
                decision: decision.kind(),
            });
        }
    }
    Ok(())
}
