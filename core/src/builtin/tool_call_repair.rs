//! Tool call repair: fixes the malformed tool calls some models make, before they run.
//!
//! ```
//! use hookchain::builtin::ToolCallRepair;
//! use hookchain::message::validate_history;
//! use hookchain::{Agent, ModelResponse, ScriptedModel, ToolCall};
//! # futures::executor::block_on(async {
//! // Arguments as a string, twice the same id, no tool name.
//! let model = ScriptedModel::new([
//!     ModelResponse::tool_calls([
//!         ToolCall::new("c", "missing_tool", serde_json::json!("{\"q\": 1}")),
//!         ToolCall::new("c", "", serde_json::json!({})),
//!     ]),
//!     ModelResponse::text("done"),
//! ]);
//! let agent = Agent::builder(model).chain(ToolCallRepair::new()).build()?;
//! let output = agent.run("Hi").await.unwrap();
//! let calls = &output.messages[1].tool_calls;
//! assert_eq!(calls[0].arguments, serde_json::json!({ "q": 1 }));
//! assert_ne!(calls[0].id, calls[1].id);
//! assert!(validate_history(&output.messages).is_ok());
//! # Ok::<(), hookchain::agent::AgentBuildError>(())
//! # }).unwrap();
//! ```
//!
//! # Rules
//!
//! Applied in `after_model`, to the model's answer before it enters the history and before
//! its calls run, so the history holds the repaired calls and their results agree with them:
//!
//! - Arguments sent as a JSON string, or as a string holding a Markdown code fence
//!   (```` ```json … ``` ````), are parsed; the call gets the object they hold. A string that
//!   does not hold a JSON object is left as it is (the tool then refuses it, and says why).
//! - A call with an empty (or blank) tool name is answered with an error result saying so: it
//!   does not run, and it is never dropped without a result.
//! - Empty ids and ids an earlier call of the answer already has are replaced with unique
//!   ones (`call_<n>`, or the old id with `_<n>`). Without this middleware, an answer with two
//!   calls of one id is refused (a `MalformedResponse` error) before any of them runs.
//!
//! It is an `Output` middleware (only an `after_model` hook), so a chain places it last and its
//! `after_model` runs first: every other `after_model` hook sees the repaired calls.

use serde_json::Value;

use hookchain_macros::middleware;

use crate::context::Context;
use crate::message::{ToolCall, ToolResult};
use crate::model::ModelResponse;

/// Repairs malformed tool calls (see the [module docs](self)). It has no settings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ToolCallRepair;

impl ToolCallRepair {
    /// The middleware.
    #[must_use]
    pub fn new() -> Self {
        ToolCallRepair
    }
}

#[middleware(crate = crate, live_stream, phase = output)]
impl ToolCallRepair {
    /// Repairs the answer's calls.
    #[hook(after_model)]
    fn repair(&self, cx: &mut Context, response: &mut ModelResponse) {
        let calls = &mut response.message.tool_calls;
        for call in calls.iter_mut() {
            if let Value::String(text) = &call.arguments
                && let Some(arguments) = parse_arguments(text)
            {
                tracing::debug!(tool = %call.name, call_id = %call.id, "tool call arguments parsed from a string");
                call.arguments = arguments;
            }
        }
        for i in 0..calls.len() {
            let (earlier, rest) = calls.split_at_mut(i);
            let Some((call, later)) = rest.split_first_mut() else {
                break;
            };
            if call.id.is_empty() || earlier.iter().any(|other| other.id == call.id) {
                let id = unique_id(&call.id, i, earlier, later);
                tracing::debug!(tool = %call.name, old = %call.id, new = %id, "tool call id made unique");
                call.id = id;
            }
        }
        for call in calls.iter().filter(|call| call.name.trim().is_empty()) {
            tracing::warn!(call_id = %call.id, "tool call without a tool name");
            cx.answer_tool_call(ToolResult::error(
                &call.id,
                "This tool call names no tool, so nothing ran. Call a tool by its name.",
            ));
        }
    }
}

/// The object `text` holds, as JSON or in a Markdown code fence.
fn parse_arguments(text: &str) -> Option<Value> {
    let text = text.trim();
    let json = match text.strip_prefix("```") {
        // The fence's first line may name the language (```json).
        Some(fenced) => {
            let (_, body) = fenced.split_once('\n')?;
            body.trim_end().strip_suffix("```")?
        }
        None => text,
    };
    match serde_json::from_str(json.trim()) {
        Ok(object @ Value::Object(_)) => Some(object),
        _ => None,
    }
}

/// An id no other call of the answer has: `call_<i>` for an empty one, `<id>_<i>` for a
/// duplicate, with a further `_<n>` should that be taken too.
fn unique_id(id: &str, i: usize, earlier: &[ToolCall], later: &[ToolCall]) -> String {
    let base = if id.is_empty() {
        format!("call_{i}")
    } else {
        format!("{id}_{i}")
    };
    let taken = |candidate: &str| earlier.iter().chain(later).any(|call| call.id == candidate);
    let mut candidate = base.clone();
    let mut n = 1;
    while taken(&candidate) {
        candidate = format!("{base}_{n}");
        n += 1;
    }
    candidate
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn arguments_are_parsed_from_json_and_fences() {
        assert_eq!(parse_arguments(r#" {"a": 1} "#), Some(json!({"a": 1})));
        assert_eq!(
            parse_arguments("```json\n{\"a\": [1, 2]}\n```"),
            Some(json!({"a": [1, 2]}))
        );
        assert_eq!(
            parse_arguments("```\n{\"a\": 1}\n```\n"),
            Some(json!({"a": 1}))
        );
        assert_eq!(parse_arguments("not json"), None);
        assert_eq!(parse_arguments("[1, 2]"), None);
        assert_eq!(parse_arguments("```json {\"a\": 1}```"), None);
    }

    #[test]
    fn ids_avoid_every_other_call() {
        let calls = [
            ToolCall::new("a", "t", json!({})),
            ToolCall::new("a_1", "t", json!({})),
        ];
        assert_eq!(unique_id("a", 1, &calls[..1], &calls[1..]), "a_1_1");
        assert_eq!(unique_id("", 0, &[], &calls), "call_0");
    }
}
