//! Answers to `HumanInTheLoop`'s interrupts.

use hookchain::builtin::human_in_the_loop::{ApprovalRequest, ApprovalResponse};
use hookchain::{Checkpoint, InterruptId};

/// Approves every action `checkpoint` waits on.
pub(crate) fn approve_all(checkpoint: &Checkpoint) -> Vec<(InterruptId, serde_json::Value)> {
    checkpoint
        .interrupts()
        .iter()
        .map(|interrupt| {
            let request = ApprovalRequest::from_interrupt(interrupt).expect("an approval");
            ApprovalResponse::approve_all(&request).answer(interrupt)
        })
        .collect()
}
