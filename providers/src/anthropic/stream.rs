//! Messages stream events to [`ModelEvent`]s.

use std::collections::{BTreeSet, VecDeque};

use hookchain_core::model::{ModelEvent, ResponseAssembler};
use hookchain_core::{ModelError, ModelResponse, StopReason};

use super::convert::{PROVIDER, stop_reason, usage};
use super::wire::{BlockDelta, ContentBlock, StreamEvent};
use crate::ApiError;
use crate::http::{Decoder, Event, classify_api_error, malformed};

/// Decodes the events of one streamed answer, assembling it as it goes. Anthropic's block
/// indices are the events' indices.
#[derive(Debug, Default)]
pub(crate) struct EventDecoder {
    assembler: ResponseAssembler,
    /// The blocks that are tool calls: their stop ends the call.
    tool_blocks: BTreeSet<usize>,
    /// The tool calls started and not stopped yet.
    open: BTreeSet<usize>,
    /// Why a stopped call's arguments do not parse: it was cut off if the message stops for
    /// `max_tokens` (then it is dropped); otherwise the answer is malformed.
    cut: Option<ModelError>,
}

impl EventDecoder {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Decodes one event; `Ok(true)` at `message_stop`.
    pub(crate) fn event(
        &mut self,
        event: StreamEvent,
        out: &mut VecDeque<ModelEvent>,
    ) -> Result<bool, ModelError> {
        let mut events = Vec::new();
        match event {
            // No usage in the stream at all leaves it unknown (the assembler's default).
            StreamEvent::MessageStart { message } => {
                events.extend(message.usage.map(|wire| ModelEvent::Usage(usage(wire))));
            }
            StreamEvent::ContentBlockStart {
                index,
                content_block,
            } => match content_block {
                ContentBlock::Text { text } => {
                    if !text.is_empty() {
                        events.push(ModelEvent::TextDelta { index, text });
                    }
                }
                ContentBlock::Thinking {
                    thinking,
                    signature,
                } => {
                    if !thinking.is_empty() {
                        events.push(ModelEvent::ReasoningDelta {
                            index,
                            text: thinking,
                        });
                    }
                    if !signature.is_empty() {
                        events.push(ModelEvent::ReasoningSignature { index, signature });
                    }
                }
                ContentBlock::RedactedThinking { data } => {
                    events.push(ModelEvent::RedactedReasoning { index, data });
                }
                ContentBlock::ToolUse { id, name, input } => {
                    self.tool_blocks.insert(index);
                    self.open.insert(index);
                    events.push(ModelEvent::ToolCallStart { index, id, name });
                    // Streams start calls with `{}` and send the input as deltas; a server that
                    // sends the input whole here is taken at its word.
                    if input.as_object().is_some_and(|object| !object.is_empty()) {
                        events.push(ModelEvent::ToolCallDelta {
                            index,
                            arguments: input.to_string(),
                        });
                    }
                }
                ContentBlock::Other => {}
            },
            StreamEvent::ContentBlockDelta { index, delta } => match delta {
                BlockDelta::TextDelta { text } => {
                    events.push(ModelEvent::TextDelta { index, text })
                }
                BlockDelta::InputJsonDelta { partial_json } => {
                    events.push(ModelEvent::ToolCallDelta {
                        index,
                        arguments: partial_json,
                    });
                }
                BlockDelta::ThinkingDelta { thinking } => {
                    events.push(ModelEvent::ReasoningDelta {
                        index,
                        text: thinking,
                    });
                }
                BlockDelta::SignatureDelta { signature } => {
                    events.push(ModelEvent::ReasoningSignature { index, signature });
                }
                BlockDelta::Other => {}
            },
            StreamEvent::ContentBlockStop { index } => {
                if self.tool_blocks.contains(&index) {
                    // Recorded by the assembler already: only forwarded.
                    match self.assembler.end_tool_call(index) {
                        Ok(end) => out.push_back(end),
                        // Arguments that do not parse: the message's stop reason, still to
                        // come, says whether the token limit cut them.
                        Err(error) if self.open.contains(&index) && self.cut.is_none() => {
                            self.cut = Some(error);
                        }
                        Err(error) => return Err(error),
                    }
                    self.open.remove(&index);
                }
            }
            StreamEvent::MessageDelta { delta, usage: wire } => {
                events.extend(wire.map(|wire| ModelEvent::Usage(usage(wire))));
                let stop_reason =
                    stop_reason(delta.stop_reason.as_deref(), !self.tool_blocks.is_empty());
                // A call cut off by the token limit is left open: the assembler drops it.
                if let Some(error) = self.cut.take()
                    && stop_reason != StopReason::MaxTokens
                {
                    return Err(error);
                }
                events.push(ModelEvent::Finish { stop_reason });
            }
            StreamEvent::MessageStop => {
                self.assembler.check_complete()?;
                return Ok(true);
            }
            StreamEvent::Error { error } => {
                let error = ApiError::parse(None, &error.to_string(), &[]);
                return Err(classify_api_error(PROVIDER, error, None));
            }
            StreamEvent::Ping | StreamEvent::Other => {}
        }
        for event in events {
            self.assembler.push(&event)?;
            out.push_back(event);
        }
        Ok(false)
    }
}

impl Decoder for EventDecoder {
    fn decode(
        &mut self,
        event: &Event,
        out: &mut VecDeque<ModelEvent>,
    ) -> Result<bool, ModelError> {
        if event.data.trim().is_empty() {
            return Ok(false);
        }
        let parsed: StreamEvent = serde_json::from_str(&event.data).map_err(|error| {
            malformed(PROVIDER, "an event of the stream is not the expected JSON")
                .with_source(error)
        })?;
        self.event(parsed, out)
    }

    // Complete once the message delta gave the stop reason and every call ended, even if
    // `message_stop` itself was lost.
    fn end_of_body(&self) -> Result<(), ModelError> {
        self.assembler.check_complete()
    }

    fn finish(self) -> Result<ModelResponse, ModelError> {
        self.assembler.finish()
    }
}
