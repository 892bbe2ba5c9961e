//! Chat Completions chunks to [`ModelEvent`]s: the quirks of each server's streaming live here.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use hookchain_core::model::{ModelEvent, ResponseAssembler};
use hookchain_core::{ModelError, ModelResponse};

use super::convert::{PROVIDER, stop_reason, usage};
use super::wire::{ChatChunk, ToolCallDelta};
use crate::ApiError;
use crate::http::{Decoder, Event, classify_api_error, malformed};

/// Block indices of the answer: reasoning, then text, then the tool calls in the server's order.
const REASONING: usize = 0;
const TEXT: usize = 1;
const FIRST_CALL: usize = 2;

/// A tool call whose start has not been sent: the name may come after the id, and arguments
/// may come before both (servers differ).
#[derive(Debug, Default)]
struct PendingCall {
    id: Option<String>,
    name: Option<String>,
    arguments: String,
}

/// Decodes the chunks of one streamed answer, assembling it as it goes.
#[derive(Debug, Default)]
pub(crate) struct ChunkDecoder {
    assembler: ResponseAssembler,
    /// Calls (by the server's tool-call index) not started yet.
    pending: BTreeMap<usize, PendingCall>,
    /// How many tool calls the answer has so far.
    calls: usize,
    started: BTreeSet<usize>,
    /// The block indices of the calls started and not ended, in order.
    open: Vec<usize>,
    /// The text is a refusal (sent as `refusal`, not `content`).
    refused: bool,
}

impl ChunkDecoder {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Decodes one chunk.
    pub(crate) fn chunk(
        &mut self,
        chunk: ChatChunk,
        out: &mut VecDeque<ModelEvent>,
    ) -> Result<(), ModelError> {
        if let Some(error) = chunk.error {
            let error = ApiError::parse(None, &error.to_string(), &[]);
            return Err(classify_api_error(PROVIDER, error, None));
        }
        let mut events = Vec::new();
        // We ask for one choice; a server that sends more is answered by the first.
        for choice in chunk.choices.into_iter().filter(|choice| choice.index == 0) {
            let delta = choice.delta;
            if let Some(text) = delta.reasoning_content.or(delta.reasoning)
                && !text.is_empty()
            {
                events.push(ModelEvent::ReasoningDelta {
                    index: REASONING,
                    text,
                });
            }
            if let Some(text) = delta.content.filter(|text| !text.is_empty()) {
                events.push(ModelEvent::TextDelta { index: TEXT, text });
            }
            // A refusal is the answer's text, as an unstreamed answer has it.
            if let Some(text) = delta.refusal.filter(|text| !text.is_empty()) {
                self.refused = true;
                events.push(ModelEvent::TextDelta { index: TEXT, text });
            }
            for call in delta.tool_calls {
                self.tool_call(call, &mut events)?;
            }
            if let Some(reason) = choice.finish_reason {
                self.record(&events, out)?;
                events.clear();
                self.finish(&reason, out)?;
            }
        }
        if let Some(wire) = chunk.usage {
            events.push(ModelEvent::Usage(usage(wire)));
        }
        self.record(&events, out)
    }

    fn tool_call(
        &mut self,
        call: ToolCallDelta,
        events: &mut Vec<ModelEvent>,
    ) -> Result<(), ModelError> {
        // Servers that send each call whole may leave the index out: each is a new call.
        let position = call.index.unwrap_or(self.calls);
        // The index is the server's: one near `usize::MAX` has no block number (and would
        // overflow the count of calls below).
        let Some(index) = FIRST_CALL.checked_add(position) else {
            return Err(malformed(
                PROVIDER,
                &format!("tool call index {position} of the stream is out of range"),
            ));
        };
        let arguments = call.function.arguments.unwrap_or_default();
        if self.started.contains(&position) {
            // Later pieces; some servers repeat the id or name on every piece: ignored.
            if !arguments.is_empty() {
                events.push(ModelEvent::ToolCallDelta { index, arguments });
            }
            return Ok(());
        }
        self.calls = self.calls.max(position + 1);
        let pending = self.pending.entry(position).or_default();
        pending.id = pending.id.take().or(call.id.filter(|id| !id.is_empty()));
        pending.name = pending
            .name
            .take()
            .or(call.function.name.filter(|name| !name.is_empty()));
        pending.arguments.push_str(&arguments);
        if pending.name.is_some() {
            self.start(position, events);
        }
        Ok(())
    }

    /// Sends the start of a pending call, and the argument text that came before it.
    fn start(&mut self, position: usize, events: &mut Vec<ModelEvent>) {
        let Some(pending) = self.pending.remove(&position) else {
            return;
        };
        // No overflow: `tool_call` checked every pending position.
        let index = FIRST_CALL + position;
        events.push(ModelEvent::ToolCallStart {
            index,
            id: pending.id.unwrap_or_else(|| format!("call_{position}")),
            name: pending.name.unwrap_or_default(),
        });
        if !pending.arguments.is_empty() {
            events.push(ModelEvent::ToolCallDelta {
                index,
                arguments: pending.arguments,
            });
        }
        self.started.insert(position);
        self.open.push(index);
    }

    /// The finish reason ends every call (Chat Completions has no end event per call). At
    /// `length`, a call the token limit cut off (no name yet, or arguments that do not parse)
    /// is dropped: the assembler leaves it out of the answer, which stops for `MaxTokens`.
    fn finish(&mut self, reason: &str, out: &mut VecDeque<ModelEvent>) -> Result<(), ModelError> {
        let cut_off = reason == "length";
        if cut_off {
            self.pending.retain(|_, call| call.name.is_some());
        }
        if let Some((&position, _)) = self.pending.iter().find(|(_, call)| call.name.is_none()) {
            return Err(malformed(
                PROVIDER,
                &format!("tool call #{position} of the stream never got a name"),
            ));
        }
        let mut starts = Vec::new();
        let positions: Vec<usize> = self.pending.keys().copied().collect();
        for position in positions {
            self.start(position, &mut starts);
        }
        self.record(&starts, out)?;
        for index in std::mem::take(&mut self.open) {
            match self.assembler.end_tool_call(index) {
                Ok(end) => out.push_back(end),
                Err(_) if cut_off => {}
                Err(error) => return Err(error),
            }
        }
        let finish = ModelEvent::Finish {
            stop_reason: stop_reason(Some(reason), self.calls > 0, self.refused),
        };
        self.record(std::slice::from_ref(&finish), out)
    }

    fn record(
        &mut self,
        events: &[ModelEvent],
        out: &mut VecDeque<ModelEvent>,
    ) -> Result<(), ModelError> {
        for event in events {
            self.assembler.push(event)?;
            out.push_back(event.clone());
        }
        Ok(())
    }
}

impl Decoder for ChunkDecoder {
    fn decode(
        &mut self,
        event: &Event,
        out: &mut VecDeque<ModelEvent>,
    ) -> Result<bool, ModelError> {
        let data = event.data.trim();
        if data == "[DONE]" {
            self.assembler.check_complete()?;
            return Ok(true);
        }
        if data.is_empty() {
            return Ok(false);
        }
        let chunk: ChatChunk = serde_json::from_str(data).map_err(|error| {
            malformed(PROVIDER, "a chunk of the stream is not the expected JSON").with_source(error)
        })?;
        self.chunk(chunk, out)?;
        Ok(false)
    }

    // A body that ends after the finish reason but without `[DONE]` still holds the whole
    // answer (only a usage chunk may be missing); before it, the answer was cut.
    fn end_of_body(&self) -> Result<(), ModelError> {
        self.assembler.check_complete()
    }

    fn finish(self) -> Result<ModelResponse, ModelError> {
        self.assembler.finish()
    }
}
