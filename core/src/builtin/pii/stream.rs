//! `Pii` on a stream: the model's text is rewritten as it arrives, holding back no more than
//! the longest match a detector can make, so that no personal data reaches the consumer of a
//! streamed run (nor the history: the answer is assembled from what is let through).

use super::{Pii, PiiPlace};
use crate::error::Error;
use crate::middleware::Emit;
use crate::model::ModelEvent;

/// The text of a streamed answer that `Pii` has not let through yet: per block, the tail that
/// could still be the start of a match.
#[derive(Debug, Default)]
pub struct PendingText {
    blocks: Vec<Pending>,
}

#[derive(Debug)]
struct Pending {
    index: usize,
    reasoning: bool,
    text: String,
}

impl Pending {
    fn delta(&self, text: String) -> ModelEvent {
        let index = self.index;
        if self.reasoning {
            ModelEvent::ReasoningDelta { index, text }
        } else {
            ModelEvent::TextDelta { index, text }
        }
    }
}

impl Pii {
    /// One event of the model's answer: text and reasoning are rewritten and let through as far
    /// as no match can still span them; the rest is let through at the end of the answer.
    pub(super) fn stream_event(
        &self,
        pending: &mut PendingText,
        event: ModelEvent,
        out: &mut impl Emit,
    ) -> Result<(), Error> {
        if !self.output {
            return out.emit(event);
        }
        let (index, reasoning, text) = match event {
            ModelEvent::TextDelta { index, text } => (index, false, text),
            ModelEvent::ReasoningDelta { index, text } => (index, true, text),
            ModelEvent::Finish { .. } => {
                for block in std::mem::take(&mut pending.blocks) {
                    self.let_through(block, out)?;
                }
                return out.emit(event);
            }
            other => return out.emit(other),
        };
        let at = match pending.blocks.iter().position(|block| block.index == index) {
            Some(at) => at,
            None => {
                pending.blocks.push(Pending {
                    index,
                    reasoning,
                    text: String::new(),
                });
                pending.blocks.len() - 1
            }
        };
        let block = &mut pending.blocks[at];
        block.text.push_str(&text);
        let (released, used) = self
            .release(&block.text, false, PiiPlace::Output)
            .map_err(|blocked| self.blocked(blocked))?;
        if used > 0 {
            let event = block.delta(released.into_owned());
            block.text.drain(..used);
            out.emit(event)?;
        }
        Ok(())
    }

    /// Lets through all that `block` holds: the answer is finished.
    fn let_through(&self, block: Pending, out: &mut impl Emit) -> Result<(), Error> {
        let (released, _) = self
            .release(&block.text, true, PiiPlace::Output)
            .map_err(|blocked| self.blocked(blocked))?;
        if released.is_empty() {
            return Ok(());
        }
        let event = block.delta(released.into_owned());
        out.emit(event)
    }
}
