//! Answers to `HumanInTheLoop`'s interrupts.

use hookchain::builtin::human_in_the_loop::ApprovalResponse;
use hookchain::{Checkpoint, InterruptId};

/// Approves every action `checkpoint` waits on (every interrupt must be an approval).
pub(crate) fn approve_all(checkpoint: &Checkpoint) -> Vec<(InterruptId, serde_json::Value)> {
    let answers = ApprovalResponse::approve_every(checkpoint.interrupts());
    assert_eq!(
        answers.len(),
        checkpoint.interrupts().len(),
        "an interrupt that is not an approval: {:?}",
        checkpoint.interrupts()
    );
    answers
}
