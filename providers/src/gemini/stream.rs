//! Gemini answers to [`ModelEvent`]s. A stream's chunks are whole `GenerateContentResponse`s
//! whose parts continue the answer (text as deltas, a function call whole in one part); an
//! unstreamed answer is one such chunk. Both are read here, so that they cannot differ.

use std::collections::{BTreeSet, VecDeque};

use hookchain_core::model::{ModelEvent, ResponseAssembler};
use hookchain_core::{ModelError, ModelResponse, StopReason};

use super::convert::{PROVIDER, stop_reason, usage};
use super::signatures::Signatures;
use super::wire::{GenerateResponse, Part};
use crate::ApiError;
use crate::http::{Decoder, Event, classify_api_error, malformed};

/// The kind of the block the last part went to: a part of another kind starts a new block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Thought,
    Call,
}

/// Decodes the chunks of one answer, assembling it as it goes. Block indices are ours: one per
/// run of text or thoughts, one per call.
#[derive(Debug, Default)]
pub(crate) struct ChunkDecoder {
    assembler: ResponseAssembler,
    /// The current block and its kind.
    current: Option<(Kind, usize)>,
    next_index: usize,
    /// The calls started, in order (their block indices); ended at the finish.
    calls: Vec<usize>,
    /// The calls ended (a finish reason may come twice).
    ended: BTreeSet<usize>,
    signatures: Signatures,
}

impl ChunkDecoder {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Decodes one chunk (or a whole answer).
    pub(crate) fn chunk(
        &mut self,
        chunk: GenerateResponse,
        out: &mut VecDeque<ModelEvent>,
    ) -> Result<(), ModelError> {
        if let Some(error) = chunk.error {
            let error = ApiError::parse(
                None,
                &serde_json::json!({ "error": error }).to_string(),
                &[],
            );
            return Err(classify_api_error(PROVIDER, error, None));
        }
        let mut events = Vec::new();
        // No usage at all leaves it unknown (the assembler's default).
        events.extend(
            chunk
                .usage_metadata
                .map(|wire| ModelEvent::Usage(usage(wire))),
        );
        let blocked = chunk
            .prompt_feedback
            .and_then(|feedback| feedback.block_reason)
            .is_some();
        let candidate = chunk.candidates.into_iter().next();
        if blocked && candidate.is_none() {
            // The prompt itself was blocked: no answer, and it is final.
            events.push(ModelEvent::Finish {
                stop_reason: StopReason::ContentFilter,
            });
        }
        let mut finish_reason = None;
        if let Some(candidate) = candidate {
            for part in candidate
                .content
                .into_iter()
                .flat_map(|content| content.parts)
            {
                self.part(part, &mut events)?;
            }
            finish_reason = candidate.finish_reason;
        }
        self.forward(events, out)?;
        if let Some(reason) = finish_reason {
            self.finish_reason(&reason, out)?;
        }
        Ok(())
    }

    /// The events of one part.
    fn part(&mut self, part: Part, events: &mut Vec<ModelEvent>) -> Result<(), ModelError> {
        if let Some(call) = part.function_call {
            let index = self.block(Kind::Call, true);
            let position = self.calls.len();
            let id = call
                .id
                .filter(|id| !id.is_empty())
                .unwrap_or_else(|| format!("call_{}", position + 1));
            if let Some(signature) = part.thought_signature {
                self.signatures.call(position, &id, &call.name, signature);
            }
            self.calls.push(index);
            events.push(ModelEvent::ToolCallStart {
                index,
                id,
                name: call.name,
            });
            match call.args {
                serde_json::Value::Null => {}
                args @ serde_json::Value::Object(_) => events.push(ModelEvent::ToolCallDelta {
                    index,
                    arguments: args.to_string(),
                }),
                _ => {
                    return Err(malformed(
                        PROVIDER,
                        "the arguments of a function call are not an object",
                    ));
                }
            }
            return Ok(());
        }
        if let Some(signature) = part.thought_signature {
            self.signatures.text(signature);
        }
        // An empty text part carries only a signature (the last chunk of a stream, often).
        let Some(text) = part.text.filter(|text| !text.is_empty()) else {
            return Ok(());
        };
        if part.thought {
            let index = self.block(Kind::Thought, false);
            events.push(ModelEvent::ReasoningDelta { index, text });
        } else {
            let index = self.block(Kind::Text, false);
            events.push(ModelEvent::TextDelta { index, text });
        }
        Ok(())
    }

    /// The index of the block a part of `kind` goes to: the current one if it is of that kind
    /// and may continue (text may, a call may not), else a new one.
    fn block(&mut self, kind: Kind, new: bool) -> usize {
        match self.current {
            Some((current, index)) if current == kind && !new => index,
            _ => {
                let index = self.next_index;
                self.next_index += 1;
                self.current = Some((kind, index));
                index
            }
        }
    }

    /// The answer's end: its calls end (but a last call cut by the token limit, which is
    /// dropped, never run), and the stop reason is given.
    fn finish_reason(
        &mut self,
        reason: &str,
        out: &mut VecDeque<ModelEvent>,
    ) -> Result<(), ModelError> {
        let Some(stop_reason) = stop_reason(reason, !self.calls.is_empty()) else {
            return Err(malformed(
                PROVIDER,
                &format!("the model made a function call Gemini could not use ({reason})"),
            ));
        };
        let cut =
            stop_reason == StopReason::MaxTokens && matches!(self.current, Some((Kind::Call, _)));
        let last = if cut {
            self.calls.last().copied()
        } else {
            None
        };
        for &index in &self.calls {
            if Some(index) == last || !self.ended.insert(index) {
                continue;
            }
            out.push_back(self.assembler.end_tool_call(index)?);
        }
        // The signatures before the finish: a reader that assembles the stream keeps them.
        let signatures = self.signatures.event();
        self.forward(
            signatures
                .into_iter()
                .chain([ModelEvent::Finish { stop_reason }])
                .collect(),
            out,
        )
    }

    fn forward(
        &mut self,
        events: Vec<ModelEvent>,
        out: &mut VecDeque<ModelEvent>,
    ) -> Result<(), ModelError> {
        for event in events {
            self.assembler.push(&event)?;
            out.push_back(event);
        }
        Ok(())
    }

    /// The whole answer, with its thought signatures in the message's metadata (the metadata
    /// event before the finish put them in the assembler).
    pub(crate) fn into_response(self) -> Result<ModelResponse, ModelError> {
        self.assembler.finish()
    }
}

/// Our response for an unstreamed answer: the one chunk of a stream. An answer without a
/// candidate is malformed, unless the prompt was blocked; one without a finish reason (a
/// lenient server) finished normally.
pub(crate) fn answer(mut wire: GenerateResponse) -> Result<ModelResponse, ModelError> {
    let blocked = wire
        .prompt_feedback
        .as_ref()
        .is_some_and(|feedback| feedback.block_reason.is_some());
    match wire.candidates.first_mut() {
        Some(candidate) => {
            candidate
                .finish_reason
                .get_or_insert_with(|| "STOP".to_owned());
        }
        None if blocked || wire.error.is_some() => {}
        None => return Err(malformed(PROVIDER, "the answer has no candidates")),
    }
    let mut decoder = ChunkDecoder::new();
    decoder.chunk(wire, &mut VecDeque::new())?;
    decoder.into_response()
}

impl Decoder for ChunkDecoder {
    fn decode(
        &mut self,
        event: &Event,
        out: &mut VecDeque<ModelEvent>,
    ) -> Result<bool, ModelError> {
        if event.data.trim().is_empty() {
            return Ok(false);
        }
        let chunk: GenerateResponse = serde_json::from_str(&event.data).map_err(|error| {
            malformed(PROVIDER, "a chunk of the stream is not the expected JSON").with_source(error)
        })?;
        self.chunk(chunk, out)?;
        // Gemini's stream has no closing event: it ends with the body.
        Ok(false)
    }

    fn end_of_body(&self) -> Result<(), ModelError> {
        self.assembler.check_complete()
    }

    fn finish(self) -> Result<ModelResponse, ModelError> {
        self.into_response()
    }
}
