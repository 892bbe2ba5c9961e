//! Where a history is cut: the part to summarize and the part kept, never between an
//! assistant's tool calls and their results.

use super::trigger::Bound;
use crate::builtin::tokens::TokenCounter;
use crate::message::{Message, Role};

/// The history cut in three: `..start` stays in place (leading system messages),
/// `start..end` is summarized, `end..` is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cut {
    pub(crate) start: usize,
    pub(crate) end: usize,
}

/// The cut of `messages` that keeps what `keep` says, or `None` when nothing is left to
/// summarize (everything is kept, or only earlier summaries would be).
///
/// The kept part begins at a message that is not a tool result, so an assistant message and
/// the results of its calls are on the same side of the cut; the last such unit is always
/// kept.
pub(crate) fn find_cut(
    messages: &[Message],
    keep: Bound,
    counter: &impl TokenCounter,
    is_summary: impl Fn(&Message) -> bool,
) -> Option<Cut> {
    let start = messages
        .iter()
        .position(|m| m.role != Role::System)
        .unwrap_or(messages.len());
    // Where a kept part may begin: any message after `start` that is not a tool result. The
    // last one is always kept (it holds the question, or the latest calls and results).
    let boundaries = || {
        (start..messages.len())
            .rev()
            .filter(|&i| messages[i].role != Role::Tool)
    };
    let mut end = boundaries().next()?;
    match keep {
        Bound::Messages(n) => {
            for boundary in boundaries() {
                end = boundary;
                if messages.len() - boundary >= n {
                    break;
                }
            }
            if messages.len() - end < n {
                return None;
            }
        }
        Bound::Tokens(budget) => {
            let mut kept = counter.count_messages(&messages[end..]);
            for boundary in boundaries().skip(1) {
                kept = kept.saturating_add(counter.count_messages(&messages[boundary..end]));
                if kept > budget {
                    break;
                }
                end = boundary;
            }
        }
    }
    let summarized = &messages[start..end];
    if summarized.is_empty() || summarized.iter().all(&is_summary) {
        return None;
    }
    Some(Cut { start, end })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::builtin::tokens::ApproximateCounter;
    use crate::message::{ToolCall, ToolResult};

    fn call(ids: &[&str]) -> Message {
        Message::assistant_with_tool_calls(
            "",
            ids.iter().map(|id| ToolCall::new(*id, "t", json!({}))),
        )
    }

    fn result(id: &str) -> Message {
        Message::tool(ToolResult::ok(id, "ok"))
    }

    fn cut(messages: &[Message], keep: Bound) -> Option<Cut> {
        find_cut(messages, keep, &ApproximateCounter::new(), |_| false)
    }

    #[test]
    fn a_cut_inside_a_group_moves_back_to_its_call_for_messages() {
        let history = [
            Message::user("a"),
            Message::assistant("b"),
            call(&["1", "2"]),
            result("1"),
            result("2"),
            Message::assistant("c"),
        ];
        // The last 2 messages would begin at a result: the group is kept whole.
        assert_eq!(
            cut(&history, Bound::Messages(2)),
            Some(Cut { start: 0, end: 2 })
        );
        assert_eq!(
            cut(&history, Bound::Messages(1)),
            Some(Cut { start: 0, end: 5 })
        );
        assert_eq!(cut(&history, Bound::Messages(6)), None);
    }

    #[test]
    fn a_token_bound_keeps_whole_groups_that_fit_and_the_last_at_least() {
        let counter = ApproximateCounter::new();
        let history = [Message::user("a"), call(&["1"]), result("1")];
        let group = counter.count_messages(&history[1..]);
        assert_eq!(
            cut(&history, Bound::Tokens(group)),
            Some(Cut { start: 0, end: 1 })
        );
        // Less than the last group: it is kept anyway.
        assert_eq!(
            cut(&history, Bound::Tokens(1)),
            Some(Cut { start: 0, end: 1 })
        );
        assert_eq!(cut(&history, Bound::Tokens(10_000)), None);
    }

    #[test]
    fn leading_system_messages_stay_and_summaries_alone_are_not_summarized_again() {
        let history = [
            Message::system("rules"),
            Message::user("summary"),
            Message::user("q"),
        ];
        assert_eq!(
            cut(&history, Bound::Messages(1)),
            Some(Cut { start: 1, end: 2 })
        );
        let again = find_cut(
            &history,
            Bound::Messages(1),
            &ApproximateCounter::new(),
            |m| m.text() == "summary",
        );
        assert_eq!(again, None);
    }
}
