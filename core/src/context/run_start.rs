//! Where a run's messages begin after a hook edited the history.
//!
//! A run's answer is looked for from its first message on ([`RunOutput::text`]); an edit that
//! removes or merges older messages (a trimmer, a summarizer) moves that start. An edit is
//! arbitrary code, so the start is found again by comparing the history before and after: the
//! messages kept in front and at the end are the same, what lies between was replaced.
//!
//! [`RunOutput::text`]: crate::RunOutput::text

use crate::message::Message;

/// `start` in `before`, carried to `after`: kept when everything before it is unchanged,
/// shifted when it lies in the unchanged tail, and the start of the replacement when the edit
/// replaced messages of the run itself (a summary that took in the run's first messages begins
/// the run).
pub(super) fn carried(before: &[Message], after: &[Message], start: usize) -> usize {
    // The usual edits (appending, redacting this run's messages) leave the front alone: one
    // comparison of it, no search for the tail.
    if before
        .get(..start)
        .is_some_and(|front| after.get(..start) == Some(front))
    {
        return start;
    }
    let kept_in_front = before.iter().zip(after).take_while(|(a, b)| a == b).count();
    let room = before.len().min(after.len()) - kept_in_front;
    let kept_at_end = before
        .iter()
        .rev()
        .zip(after.iter().rev())
        .take(room)
        .take_while(|(a, b)| a == b)
        .count();
    if start >= before.len() - kept_at_end {
        start + after.len() - before.len()
    } else {
        kept_in_front.min(start)
    }
}

#[cfg(test)]
mod tests {
    use super::carried;
    use crate::message::Message;

    fn texts(texts: &[&str]) -> Vec<Message> {
        texts.iter().map(|text| Message::user(*text)).collect()
    }

    #[test]
    fn appending_or_editing_the_run_keeps_the_start() {
        let before = texts(&["old", "answer", "input"]);
        assert_eq!(
            carried(&before, &texts(&["old", "answer", "input", "more"]), 2),
            2
        );
        assert_eq!(
            carried(&before, &texts(&["old", "answer", "redacted"]), 2),
            2
        );
    }

    #[test]
    fn removing_older_messages_moves_the_start_back() {
        let before = texts(&["a", "b", "c", "input", "answer"]);
        assert_eq!(carried(&before, &texts(&["c", "input", "answer"]), 3), 1);
        assert_eq!(carried(&before, &texts(&["input", "answer"]), 3), 0);
    }

    #[test]
    fn a_summary_of_older_messages_moves_the_start_to_after_it() {
        let before = texts(&["a", "b", "c", "input"]);
        assert_eq!(carried(&before, &texts(&["a", "summary", "input"]), 3), 2);
    }

    #[test]
    fn a_summary_taking_in_the_runs_first_messages_begins_the_run() {
        let before = texts(&["a", "b", "input", "call", "result", "answer"]);
        let after = texts(&["a", "summary", "answer"]);
        assert_eq!(carried(&before, &after, 2), 1);
    }

    #[test]
    fn a_history_emptied_or_cleared_to_the_run_stays_in_bounds() {
        let before = texts(&["a", "b", "input"]);
        assert_eq!(carried(&before, &[], 2), 0);
        assert_eq!(carried(&before, &texts(&["x"]), 2), 0);
        assert_eq!(carried(&before, &texts(&["input"]), 2), 0);
    }
}
