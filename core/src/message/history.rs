//! The rule every history sent to a model obeys, as real providers enforce it: each assistant
//! message with tool calls is followed, right after it, by exactly one tool result per call,
//! before any other message.

use super::{Message, Role, ToolCall, ToolResult};

/// How a history breaks the tool-call rule (see [`validate_history`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HistoryError {
    /// An assistant's tool call has no result before the next non-tool message (or the end).
    #[error(
        "tool call `{call_id}` of message {index} has no result right after it: each tool call \
         needs one tool result before any other message"
    )]
    UnansweredCall {
        /// The assistant message's index in the history.
        index: usize,
        /// The call without a result.
        call_id: String,
    },
    /// A tool message that does not answer a call of the assistant message right before its
    /// group of results.
    #[error(
        "tool result {index} (for call `{call_id}`) does not follow the assistant message that \
         made the call"
    )]
    OrphanResult {
        /// The tool message's index in the history.
        index: usize,
        /// The call id it names (empty if it names none).
        call_id: String,
    },
    /// A second result for one call.
    #[error("tool result {index} answers call `{call_id}` a second time")]
    DuplicateResult {
        /// The second result's index in the history.
        index: usize,
        /// The call answered twice.
        call_id: String,
    },
    /// Two calls of one assistant message share an id.
    #[error("message {index} makes two tool calls with the id `{call_id}`")]
    DuplicateCallId {
        /// The assistant message's index in the history.
        index: usize,
        /// The shared id.
        call_id: String,
    },
}

/// Checks that `messages` is a history a provider accepts: every assistant message with tool
/// calls is followed, right after it, by exactly one tool result per call (in any order) before
/// any other message, and every tool result answers a call that way.
///
/// The agent keeps every history it sends in this shape; a [`Model`](crate::Model) may call
/// this to refuse a request the way a provider would. [`ScriptedModel`](crate::ScriptedModel)
/// does.
///
/// ```
/// use hookchain::message::{HistoryError, validate_history};
/// use hookchain::{Message, ToolCall, ToolResult};
///
/// let call = ToolCall::new("c1", "search", serde_json::json!({}));
/// let mut history = vec![
///     Message::user("Find it"),
///     Message::assistant_with_tool_calls("", [call]),
///     Message::user("Hurry up"),
/// ];
/// assert!(matches!(
///     validate_history(&history),
///     Err(HistoryError::UnansweredCall { index: 1, .. })
/// ));
/// history.insert(2, Message::tool(ToolResult::ok("c1", "found")));
/// assert_eq!(validate_history(&history), Ok(()));
/// ```
pub fn validate_history(messages: &[Message]) -> Result<(), HistoryError> {
    check(messages, false)
}

/// [`validate_history`], except that the last group of tool calls may still wait for results
/// (a history between a model answer and its tools: what hooks may leave while editing).
pub(crate) fn check_editable(messages: &[Message]) -> Result<(), HistoryError> {
    check(messages, true)
}

/// The first call whose id an earlier call of `calls` already has: their results could not
/// be told apart. (A model answers with a few calls: the quadratic scan allocates nothing.)
#[inline]
pub(crate) fn repeated_call_id(calls: &[ToolCall]) -> Option<&ToolCall> {
    // Checked on every model answer, which most often makes one call or none: that case
    // inline, the scan out of line.
    if calls.len() < 2 {
        return None;
    }
    first_repeated(calls)
}

/// Renames each of `calls` whose id a call of `history` has already (servers number ids per
/// answer, and a client names missing ones `call_N`): `<id>_<n>` with the first `n` from 2 that
/// no call has, so that every call of a history has its own id (what providers ask) and its own
/// idempotency key. Returns the renamings, `(old, new)`; none (and no allocation) when no id
/// repeats.
pub(crate) fn rename_repeated_ids(
    history: &[Message],
    calls: &mut [ToolCall],
) -> Vec<(String, String)> {
    if calls.is_empty() {
        return Vec::new();
    }
    let taken = |id: &str, calls: &[ToolCall]| {
        calls.iter().any(|call| call.id == id)
            || history
                .iter()
                .any(|message| message.tool_calls.iter().any(|call| call.id == id))
    };
    let mut renamed = Vec::new();
    for i in 0..calls.len() {
        if !history
            .iter()
            .any(|message| message.tool_calls.iter().any(|call| call.id == calls[i].id))
        {
            continue;
        }
        let fresh = (2_u64..)
            .map(|n| format!("{}_{n}", calls[i].id))
            .find(|id| !taken(id, calls))
            .unwrap_or_default();
        renamed.push((std::mem::replace(&mut calls[i].id, fresh.clone()), fresh));
    }
    renamed
}

fn first_repeated(calls: &[ToolCall]) -> Option<&ToolCall> {
    calls
        .iter()
        .enumerate()
        .find(|(k, call)| calls[..*k].iter().any(|earlier| earlier.id == call.id))
        .map(|(_, call)| call)
}

fn check(messages: &[Message], pending_tail: bool) -> Result<(), HistoryError> {
    let call_id = |m: &Message| m.tool_call_id.clone().unwrap_or_default();
    let mut i = 0;
    loop {
        // Plain messages (most of a long history) ask nothing: skipped in one tight scan.
        match messages[i..]
            .iter()
            .position(|m| m.role == Role::Tool || !m.tool_calls.is_empty())
        {
            Some(skip) => i += skip,
            None => return Ok(()),
        }
        let message = &messages[i];
        if message.role == Role::Tool {
            return Err(HistoryError::OrphanResult {
                index: i,
                call_id: call_id(message),
            });
        }
        let calls = &message.tool_calls;
        if let Some(call) = repeated_call_id(calls) {
            return Err(HistoryError::DuplicateCallId {
                index: i,
                call_id: call.id.clone(),
            });
        }
        let mut answered = vec![false; calls.len()];
        let mut j = i + 1;
        while let Some(result) = messages.get(j).filter(|m| m.role == Role::Tool) {
            let id = result.tool_call_id.as_deref();
            match calls.iter().position(|call| Some(call.id.as_str()) == id) {
                None => {
                    return Err(HistoryError::OrphanResult {
                        index: j,
                        call_id: call_id(result),
                    });
                }
                Some(k) if answered[k] => {
                    return Err(HistoryError::DuplicateResult {
                        index: j,
                        call_id: call_id(result),
                    });
                }
                Some(k) => answered[k] = true,
            }
            j += 1;
        }
        let at_tail = j == messages.len();
        if let Some(k) = answered.iter().position(|done| !done)
            && !(at_tail && pending_tail)
        {
            return Err(HistoryError::UnansweredCall {
                index: i,
                call_id: calls[k].id.clone(),
            });
        }
        i = j;
    }
}

/// Gives every call of the last group still waiting for a result one, right after its group:
/// the result in `completed` with its id if there is one, else an error result with `why`'s
/// text. Interior groups are closed the same way.
pub(crate) fn close_pending(
    messages: &mut Vec<Message>,
    mut completed: Vec<ToolResult>,
    why: impl Fn(&ToolCall) -> String,
) {
    answer_groups(messages, true, |call| {
        match completed
            .iter()
            .position(|result| result.call_id == call.id)
        {
            Some(at) => completed.swap_remove(at),
            None => ToolResult::error(&call.id, why(call)),
        }
    });
}

/// Gives every call that a later message left without a result (not the last group, which
/// the run may still execute) an error result with `why`'s text, right after its group.
/// Returns the number of results added.
pub(crate) fn close_interior(
    messages: &mut Vec<Message>,
    why: impl Fn(&ToolCall) -> String,
) -> usize {
    answer_groups(messages, false, |call| {
        ToolResult::error(&call.id, why(call))
    })
}

/// Inserts `answer(call)` after the group of each call without a result (the last group too
/// if `tail`); returns how many were inserted.
fn answer_groups(
    messages: &mut Vec<Message>,
    tail: bool,
    mut answer: impl FnMut(&ToolCall) -> ToolResult,
) -> usize {
    // (where, results), found front to back, inserted back to front so indices stay valid.
    let mut inserts: Vec<(usize, Vec<Message>)> = Vec::new();
    let mut i = 0;
    while i < messages.len() {
        if !messages[i].has_tool_calls() {
            i += 1;
            continue;
        }
        let mut end = i + 1;
        while messages.get(end).is_some_and(|m| m.role == Role::Tool) {
            end += 1;
        }
        if end < messages.len() || tail {
            let group = &messages[i + 1..end];
            let missing: Vec<Message> = messages[i]
                .tool_calls
                .iter()
                .filter(|call| {
                    !group
                        .iter()
                        .any(|m| m.tool_call_id.as_deref() == Some(call.id.as_str()))
                })
                .map(|call| Message::tool(answer(call)).with_name(&call.name))
                .collect();
            if !missing.is_empty() {
                inserts.push((end, missing));
            }
        }
        i = end;
    }
    let mut added = 0;
    for (at, results) in inserts.into_iter().rev() {
        added += results.len();
        messages.splice(at..at, results);
    }
    added
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn call(id: &str) -> ToolCall {
        ToolCall::new(id, "t", json!({}))
    }

    fn calls(ids: &[&str]) -> Message {
        Message::assistant_with_tool_calls("", ids.iter().map(|id| call(id)))
    }

    fn result(id: &str) -> Message {
        Message::tool(ToolResult::ok(id, "ok"))
    }

    #[test]
    fn answered_groups_in_any_order_are_valid() {
        let history = [
            Message::user("u"),
            calls(&["a", "b"]),
            result("b"),
            result("a"),
            Message::assistant("done"),
        ];
        assert_eq!(validate_history(&history), Ok(()));
    }

    #[test]
    fn a_result_after_another_message_is_an_orphan() {
        let history = [calls(&["a"]), Message::user("u"), result("a")];
        assert!(matches!(
            validate_history(&history),
            Err(HistoryError::UnansweredCall { index: 0, .. })
        ));
        assert!(matches!(
            check(&history[1..], true),
            Err(HistoryError::OrphanResult { index: 1, .. })
        ));
    }

    #[test]
    fn duplicates_are_refused() {
        let twice = [calls(&["a"]), result("a"), result("a")];
        assert!(matches!(
            validate_history(&twice),
            Err(HistoryError::DuplicateResult { index: 2, .. })
        ));
        let same_id = [calls(&["a", "a"]), result("a")];
        assert!(matches!(
            validate_history(&same_id),
            Err(HistoryError::DuplicateCallId { index: 0, .. })
        ));
    }

    #[test]
    fn only_the_last_group_may_wait_while_editing() {
        let waiting = [Message::user("u"), calls(&["a", "b"]), result("a")];
        assert!(validate_history(&waiting).is_err());
        assert_eq!(check_editable(&waiting), Ok(()));
        let interior = [calls(&["a"]), Message::user("u")];
        assert!(check_editable(&interior).is_err());
    }

    #[test]
    fn closing_puts_results_right_after_each_group() {
        let mut history = vec![
            calls(&["a", "b"]),
            result("a"),
            Message::user("next"),
            calls(&["c"]),
        ];
        assert_eq!(close_interior(&mut history, |_| "skipped".into()), 1);
        assert_eq!(history[2].tool_call_id.as_deref(), Some("b"));
        assert_eq!(history[3].content, "next");
        assert!(check_editable(&history).is_ok());
        close_pending(&mut history, vec![ToolResult::ok("c", "kept")], |_| {
            "x".into()
        });
        assert_eq!(
            history.last().map(|m| m.content.as_text()),
            Some(Some("kept"))
        );
        assert_eq!(validate_history(&history), Ok(()));
    }
}
