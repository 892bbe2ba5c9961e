//! Converse answers to [`ModelEvent`]s: the events of `ConverseStream` (blocks started, their
//! deltas, their stops, the message's stop, then its metadata), and an unstreamed answer read
//! as the events it would have streamed, so that the two cannot differ.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use hookchain_core::model::{ModelEvent, ResponseAssembler};
use hookchain_core::{ModelError, ModelResponse, StopReason};
use serde::de::DeserializeOwned;

use super::convert::{PROVIDER, stop_reason, usage};
use super::reasoning;
use super::wire::{
    BlockDelta, BlockStart, BlockStop, ConverseResponse, MessageStop, ReasoningContent,
    ReasoningText, StreamMetadata,
};
use crate::ApiError;
use crate::http::{Decoder, Event, classify_api_error, malformed};

/// Decodes the events of one answer, assembling it as it goes. Block indices are Converse's.
#[derive(Debug, Default)]
pub(crate) struct ConverseDecoder {
    assembler: ResponseAssembler,
    /// The blocks that are tool calls: their stop ends the call.
    tool_blocks: BTreeSet<usize>,
    /// The tool calls started and not stopped yet.
    open: BTreeSet<usize>,
    /// Why a stopped call's arguments do not parse: it was cut off if the message stops for
    /// `max_tokens` (then it is dropped); otherwise the answer is malformed.
    cut: Option<ModelError>,
    /// The reasoning blocks, by index, as they build up.
    reasoning: BTreeMap<usize, ReasoningContent>,
    /// `messageStop` came.
    stopped: bool,
}

impl ConverseDecoder {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// The events of a block starting (only tool calls announce themselves).
    fn start(&mut self, start: BlockStart, events: &mut Vec<ModelEvent>) {
        let index = start.content_block_index;
        if let Some(call) = start.start.and_then(|start| start.tool_use) {
            self.tool_blocks.insert(index);
            self.open.insert(index);
            events.push(ModelEvent::ToolCallStart {
                index,
                id: call.tool_use_id,
                name: call.name,
            });
        }
    }

    fn delta(&mut self, delta: BlockDelta, events: &mut Vec<ModelEvent>) {
        let index = delta.content_block_index;
        let delta = delta.delta;
        if let Some(text) = delta.text {
            events.push(ModelEvent::TextDelta { index, text });
        }
        if let Some(call) = delta.tool_use {
            events.push(ModelEvent::ToolCallDelta {
                index,
                arguments: call.input,
            });
        }
        if let Some(thought) = delta.reasoning_content {
            let block = self.reasoning.entry(index).or_default();
            if let Some(text) = thought.text {
                let kept = block
                    .reasoning_text
                    .get_or_insert_with(ReasoningText::default);
                kept.text.push_str(&text);
                events.push(ModelEvent::ReasoningDelta { index, text });
            }
            if let Some(signature) = thought.signature {
                block
                    .reasoning_text
                    .get_or_insert_with(ReasoningText::default)
                    .signature = Some(signature);
            }
            if let Some(data) = thought.redacted_content {
                block.redacted_content = Some(data);
            }
        }
    }

    fn stop(&mut self, stop: BlockStop, out: &mut VecDeque<ModelEvent>) -> Result<(), ModelError> {
        let index = stop.content_block_index;
        if self.tool_blocks.contains(&index) && self.open.remove(&index) {
            match self.assembler.end_tool_call(index) {
                // Recorded by the assembler already: only forwarded.
                Ok(end) => out.push_back(end),
                // Arguments that do not parse: the message's stop reason, still to come, says
                // whether the token limit cut them.
                Err(error) if self.cut.is_none() => self.cut = Some(error),
                Err(error) => return Err(error),
            }
        }
        Ok(())
    }

    /// The message's stop: its reasoning kept, then the finish.
    fn message_stop(
        &mut self,
        stop: MessageStop,
        events: &mut Vec<ModelEvent>,
    ) -> Result<(), ModelError> {
        if std::mem::replace(&mut self.stopped, true) {
            return Err(malformed(PROVIDER, "the answer stopped twice"));
        }
        let Some(stop_reason) =
            stop_reason(stop.stop_reason.as_deref(), !self.tool_blocks.is_empty())
        else {
            return Err(malformed(
                PROVIDER,
                &format!(
                    "the model's output was malformed (stop reason `{}`)",
                    stop.stop_reason.unwrap_or_default()
                ),
            ));
        };
        // A call cut off by the token limit is left open: the assembler drops it.
        if let Some(error) = self.cut.take()
            && stop_reason != StopReason::MaxTokens
        {
            return Err(error);
        }
        if stop_reason != StopReason::MaxTokens
            && let Some(&index) = self.open.first()
        {
            return Err(malformed(
                PROVIDER,
                &format!("the answer stopped inside the tool call of block {index}"),
            ));
        }
        let blocks: Vec<ReasoningContent> = std::mem::take(&mut self.reasoning)
            .into_values()
            .filter(|block| block.reasoning_text.is_some() || block.redacted_content.is_some())
            .collect();
        events.extend(reasoning::event(&blocks));
        events.push(ModelEvent::Finish { stop_reason });
        Ok(())
    }

    /// Decodes one event by its type; `Ok(true)` at `metadata`, the last.
    fn event(
        &mut self,
        kind: &str,
        data: &str,
        out: &mut VecDeque<ModelEvent>,
    ) -> Result<bool, ModelError> {
        let mut events = Vec::new();
        let mut closed = false;
        match kind {
            "messageStart" => {}
            "contentBlockStart" => self.start(parse(kind, data)?, &mut events),
            "contentBlockDelta" => self.delta(parse(kind, data)?, &mut events),
            "contentBlockStop" => self.stop(parse(kind, data)?, out)?,
            "messageStop" => self.message_stop(parse(kind, data)?, &mut events)?,
            "metadata" => {
                let metadata: StreamMetadata = parse(kind, data)?;
                events.extend(metadata.usage.map(|wire| ModelEvent::Usage(usage(wire))));
                closed = true;
            }
            exception if exception.starts_with("exception:") || exception.starts_with("error:") => {
                return Err(stream_error(exception, data));
            }
            // Events added to the API later.
            _ => {}
        }
        for event in events {
            self.assembler.push(&event)?;
            out.push_back(event);
        }
        if closed {
            self.assembler.check_complete()?;
        }
        Ok(closed)
    }

    /// An unstreamed answer, decoded as the stream it would have been.
    pub(crate) fn answer(mut self, wire: ConverseResponse) -> Result<ModelResponse, ModelError> {
        let mut out = VecDeque::new();
        let blocks = wire
            .output
            .and_then(|output| output.message)
            .map(|message| message.content)
            .unwrap_or_default();
        for (index, block) in blocks.into_iter().enumerate() {
            let mut events = Vec::new();
            if let Some(text) = block.text
                && !text.is_empty()
            {
                events.push(ModelEvent::TextDelta { index, text });
            }
            if let Some(thought) = block.reasoning_content {
                if let Some(text) = thought.reasoning_text.as_ref().map(|kept| &kept.text)
                    && !text.is_empty()
                {
                    events.push(ModelEvent::ReasoningDelta {
                        index,
                        text: text.clone(),
                    });
                }
                self.reasoning.insert(index, thought);
            }
            if let Some(call) = block.tool_use {
                self.tool_blocks.insert(index);
                self.open.insert(index);
                events.push(ModelEvent::ToolCallStart {
                    index,
                    id: call.tool_use_id,
                    name: call.name,
                });
                events.push(ModelEvent::ToolCallDelta {
                    index,
                    arguments: call.input.to_string(),
                });
            }
            for event in events {
                self.assembler.push(&event)?;
            }
            self.stop(
                BlockStop {
                    content_block_index: index,
                },
                &mut out,
            )?;
        }
        let mut events = Vec::new();
        events.extend(wire.usage.map(|wire| ModelEvent::Usage(usage(wire))));
        self.message_stop(
            MessageStop {
                stop_reason: wire.stop_reason,
            },
            &mut events,
        )?;
        for event in events {
            self.assembler.push(&event)?;
        }
        self.assembler.finish()
    }
}

fn parse<T: DeserializeOwned>(kind: &str, data: &str) -> Result<T, ModelError> {
    serde_json::from_str(data).map_err(|error| {
        malformed(
            PROVIDER,
            &format!("a `{kind}` event of the stream is not the expected JSON"),
        )
        .with_source(error)
    })
}

/// An exception (or an error) the stream ended with: `exception:throttlingException` with its
/// `{"message": …}`, classified by its type as an HTTP error would be.
fn stream_error(kind: &str, data: &str) -> ModelError {
    let (_, name) = kind.split_once(':').unwrap_or(("", kind));
    let mut error = ApiError::parse(None, data, &[]);
    if data.trim().is_empty() || error.message().is_empty() {
        error = ApiError::parse(
            None,
            &serde_json::json!({ "message": data }).to_string(),
            &[],
        );
    }
    classify_api_error(PROVIDER, error.with_type(name), None)
}

impl Decoder for ConverseDecoder {
    fn decode(
        &mut self,
        event: &Event,
        out: &mut VecDeque<ModelEvent>,
    ) -> Result<bool, ModelError> {
        self.event(&event.event, &event.data, out)
    }

    // Complete once the message stopped and every call ended, even if the usage was lost.
    fn end_of_body(&self) -> Result<(), ModelError> {
        self.assembler.check_complete()
    }

    fn finish(self) -> Result<ModelResponse, ModelError> {
        self.assembler.finish()
    }
}
