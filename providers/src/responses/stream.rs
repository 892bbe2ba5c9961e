//! Responses answers to [`ModelEvent`]s. A stream's events name the output item they belong to
//! (`output_index`): text, summary and argument deltas, then each item whole when it is done,
//! then the whole response. An unstreamed answer is read as a stream of its items' `done`
//! events and its end, so that the two cannot differ.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use hookchain_core::model::{ModelEvent, ResponseAssembler};
use hookchain_core::{ModelError, ModelResponse};
use serde_json::{Value, json};

use super::convert::{PROVIDER, stop_reason, usage};
use super::reasoning_items::ReasoningItems;
use super::wire::{OutputItem, Response, StreamEvent};
use crate::ApiError;
use crate::http::{Decoder, Event, classify_api_error, malformed};

/// What a block holds: each output item has at most one block of each kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Reasoning,
    Text,
    Call,
}

/// A function call of the answer, by its output item.
#[derive(Debug, Clone, Copy, Default)]
struct CallState {
    /// Argument deltas came: the `done` item's arguments are not sent again.
    streamed: bool,
    ended: bool,
}

/// Decodes the events of one answer, assembling it as it goes. Block indices are ours, given
/// in the order the blocks appear.
#[derive(Debug, Default)]
pub(crate) struct ResponseDecoder {
    assembler: ResponseAssembler,
    blocks: BTreeMap<(u64, Kind), usize>,
    calls: BTreeMap<u64, CallState>,
    /// The items whose text or summary came as deltas.
    streamed: BTreeSet<(u64, Kind)>,
    /// The last summary part of each reasoning item that sent deltas.
    summary_parts: BTreeMap<u64, u64>,
    /// The items done (a `done` event may come twice, and the final response repeats them).
    done: BTreeSet<u64>,
    /// The position of each item by its id, in the order the ids came, for a stream whose
    /// events have no `output_index` (llama.cpp's): its final response lists the same items,
    /// with the same ids, in the same order.
    positions: BTreeMap<String, u64>,
    refused: bool,
    reasoning_items: ReasoningItems,
}

impl ResponseDecoder {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// The position of an event's item: its `output_index`, or without one, its id's place
    /// among the ids seen (without either, the first item's: one item, as before).
    fn position(&mut self, output_index: Option<u64>, id: Option<&str>) -> u64 {
        match (output_index, id) {
            (Some(index), _) => index,
            (None, Some(id)) => {
                let next = self.positions.len() as u64;
                *self.positions.entry(id.to_owned()).or_insert(next)
            }
            (None, None) => 0,
        }
    }

    /// The block of `kind` of the output item `item`, numbered on first sight.
    fn block(&mut self, item: u64, kind: Kind) -> usize {
        let next = self.blocks.len();
        *self.blocks.entry((item, kind)).or_insert(next)
    }

    fn emit(
        &mut self,
        event: ModelEvent,
        out: &mut VecDeque<ModelEvent>,
    ) -> Result<(), ModelError> {
        self.assembler.push(&event)?;
        out.push_back(event);
        Ok(())
    }

    /// Decodes one event of the stream; `Ok(true)` once the answer is over.
    pub(crate) fn event(
        &mut self,
        event: StreamEvent,
        out: &mut VecDeque<ModelEvent>,
    ) -> Result<bool, ModelError> {
        let id = event.item_id.as_deref().or_else(|| {
            let item = event.item.as_ref()?;
            item.id.as_deref()
        });
        let item = self.position(event.output_index, id);
        match event.kind.as_str() {
            "response.output_text.delta" | "response.refusal.delta" => {
                let Some(text) = event.delta.filter(|text| !text.is_empty()) else {
                    return Ok(false);
                };
                if event.kind == "response.refusal.delta" {
                    self.refused = true;
                }
                self.streamed.insert((item, Kind::Text));
                let index = self.block(item, Kind::Text);
                self.emit(ModelEvent::TextDelta { index, text }, out)?;
            }
            "response.reasoning_summary_text.delta" => {
                let Some(mut text) = event.delta.filter(|text| !text.is_empty()) else {
                    return Ok(false);
                };
                // The summary's parts are paragraphs, as an unstreamed answer joins them.
                let part = event.summary_index.unwrap_or_default();
                if self
                    .summary_parts
                    .insert(item, part)
                    .is_some_and(|last| last != part)
                {
                    text.insert_str(0, "\n\n");
                }
                self.streamed.insert((item, Kind::Reasoning));
                let index = self.block(item, Kind::Reasoning);
                self.emit(ModelEvent::ReasoningDelta { index, text }, out)?;
            }
            // The reasoning itself, where a server sends it rather than a summary (llama.cpp).
            "response.reasoning_text.delta" => {
                let Some(text) = event.delta.filter(|text| !text.is_empty()) else {
                    return Ok(false);
                };
                self.streamed.insert((item, Kind::Reasoning));
                let index = self.block(item, Kind::Reasoning);
                self.emit(ModelEvent::ReasoningDelta { index, text }, out)?;
            }
            "response.output_item.added" => {
                if let Some(added) = event.item.filter(|added| added.kind == "function_call") {
                    self.start_call(item, &added, out)?;
                }
            }
            "response.function_call_arguments.delta" => {
                let Some(arguments) = event.delta.filter(|text| !text.is_empty()) else {
                    return Ok(false);
                };
                let Some(call) = self.calls.get_mut(&item) else {
                    return Err(malformed(
                        PROVIDER,
                        &format!("arguments arrived for output item #{item}, not a started call"),
                    ));
                };
                call.streamed = true;
                let index = self.block(item, Kind::Call);
                self.emit(ModelEvent::ToolCallDelta { index, arguments }, out)?;
            }
            "response.output_item.done" => {
                if let Some(done) = event.item {
                    self.item_done(item, &done, out)?;
                }
            }
            "response.completed" | "response.incomplete" => {
                let Some(response) = event.response else {
                    return Err(malformed(
                        PROVIDER,
                        "the stream's last event has no response",
                    ));
                };
                self.end(response, out)?;
                return Ok(true);
            }
            "response.failed" => {
                let error = event.response.and_then(|response| response.error);
                return Err(failure(error));
            }
            // Created, in progress, parts added and done, texts done: nothing new.
            _ => {}
        }
        Ok(false)
    }

    /// Starts the function call of output item `item` (once).
    fn start_call(
        &mut self,
        item: u64,
        call: &OutputItem,
        out: &mut VecDeque<ModelEvent>,
    ) -> Result<(), ModelError> {
        if self.calls.contains_key(&item) {
            return Ok(());
        }
        let Some(name) = call.name.clone().filter(|name| !name.is_empty()) else {
            return Err(malformed(PROVIDER, "a function call has no name"));
        };
        let id = call
            .call_id
            .clone()
            .filter(|id| !id.is_empty())
            .unwrap_or_else(|| format!("call_{}", self.calls.len() + 1));
        self.calls.insert(item, CallState::default());
        let index = self.block(item, Kind::Call);
        self.emit(ModelEvent::ToolCallStart { index, id, name }, out)
    }

    /// An output item is complete: what did not come as deltas comes from it, a call ends
    /// (unless the token limit cut it: it is left open, then dropped, never run), and a
    /// reasoning item is kept for the next request.
    fn item_done(
        &mut self,
        item: u64,
        done: &OutputItem,
        out: &mut VecDeque<ModelEvent>,
    ) -> Result<(), ModelError> {
        if !self.done.insert(item) {
            return Ok(());
        }
        match done.kind.as_str() {
            "message" if !self.streamed.contains(&(item, Kind::Text)) => {
                for part in &done.content {
                    let text = match part.kind.as_str() {
                        "output_text" => part.text.clone(),
                        "refusal" => {
                            self.refused = true;
                            part.refusal.clone()
                        }
                        _ => None,
                    };
                    if let Some(text) = text.filter(|text| !text.is_empty()) {
                        let index = self.block(item, Kind::Text);
                        self.emit(ModelEvent::TextDelta { index, text }, out)?;
                    }
                }
            }
            "reasoning" => {
                self.reasoning_items.keep(done);
                if !self.streamed.contains(&(item, Kind::Reasoning)) {
                    let mut parts: Vec<&str> = done
                        .summary
                        .iter()
                        .map(|part| part.text.as_str())
                        .filter(|text| !text.is_empty())
                        .collect();
                    // Without a summary, the reasoning itself, if the server gave it.
                    if parts.is_empty() {
                        parts = done
                            .content
                            .iter()
                            .filter(|part| part.kind == "reasoning_text")
                            .filter_map(|part| part.text.as_deref())
                            .filter(|text| !text.is_empty())
                            .collect();
                    }
                    if !parts.is_empty() {
                        let index = self.block(item, Kind::Reasoning);
                        let text = parts.join("\n\n");
                        self.emit(ModelEvent::ReasoningDelta { index, text }, out)?;
                    }
                }
            }
            "function_call" => {
                self.start_call(item, done, out)?;
                let index = self.block(item, Kind::Call);
                let call = self.calls.get(&item).copied().unwrap_or_default();
                if !call.streamed {
                    let arguments = match &done.arguments {
                        None | Some(Value::Null) => String::new(),
                        Some(Value::String(text)) => text.clone(),
                        Some(object @ Value::Object(_)) => object.to_string(),
                        Some(_) => {
                            return Err(malformed(
                                PROVIDER,
                                "the arguments of a function call are not JSON text",
                            ));
                        }
                    };
                    if !arguments.is_empty() {
                        self.emit(ModelEvent::ToolCallDelta { index, arguments }, out)?;
                    }
                }
                if done.status.as_deref() != Some("incomplete") {
                    self.end_call(item, out)?;
                }
            }
            // A message streamed already, and the built-in tools' items: nothing to add.
            _ => {}
        }
        Ok(())
    }

    fn end_call(&mut self, item: u64, out: &mut VecDeque<ModelEvent>) -> Result<(), ModelError> {
        let Some(call) = self.calls.get_mut(&item) else {
            return Ok(());
        };
        if call.ended {
            return Ok(());
        }
        call.ended = true;
        let index = self.block(item, Kind::Call);
        out.push_back(self.assembler.end_tool_call(index)?);
        Ok(())
    }

    /// The whole response: the items not done yet (all of them, unstreamed), the usage, and
    /// the stop reason. At the token limit, calls still open were cut: they stay open, and the
    /// assembler drops them.
    fn end(
        &mut self,
        response: Response,
        out: &mut VecDeque<ModelEvent>,
    ) -> Result<(), ModelError> {
        let status = response.status.as_deref().unwrap_or("completed");
        match status {
            "failed" => return Err(failure(response.error)),
            "completed" | "incomplete" => {}
            other => {
                return Err(malformed(
                    PROVIDER,
                    &format!("the answer is not finished (status `{other}`)"),
                ));
            }
        }
        for (index, done) in (0..).zip(&response.output) {
            // The items a stream named by id are found by id (llama.cpp's stream has no
            // `output_index`): by their index, the second would be taken for a new one.
            let item = if self.positions.is_empty() {
                index
            } else {
                self.position(None, done.id.as_deref())
            };
            self.item_done(item, done, out)?;
        }
        let cut = status == "incomplete";
        if !cut {
            let open: Vec<u64> = self.calls.keys().copied().collect();
            for item in open {
                self.end_call(item, out)?;
            }
        }
        if let Some(wire) = response.usage {
            self.emit(ModelEvent::Usage(usage(wire)), out)?;
        }
        let reason = response
            .incomplete_details
            .and_then(|details| details.reason);
        let has_calls = self.calls.values().any(|call| call.ended);
        let stop_reason = stop_reason(status, reason.as_deref(), has_calls, self.refused);
        // The reasoning items before the finish: a reader that assembles the stream keeps them.
        if let Some(items) = self.reasoning_items.event() {
            self.emit(items, out)?;
        }
        self.emit(ModelEvent::Finish { stop_reason }, out)
    }

    /// The whole answer, with its reasoning items in the message's metadata (the metadata
    /// event before the finish put them in the assembler).
    pub(crate) fn into_response(self) -> Result<ModelResponse, ModelError> {
        self.assembler.finish()
    }
}

/// The error a failed response or an `error` event reports: `{"code", "message"}`.
fn api_error(error: &Value) -> ModelError {
    let body = json!({ "error": error }).to_string();
    classify_api_error(PROVIDER, ApiError::parse(None, &body, &[]), None)
}

/// The error an `error` event reports: nested, `{"type": "error", "error": {"code", "message",
/// "param"}}`, as OpenAI sends it, or flat, `{"type": "error", "code", "message", "param"}`, as
/// its reference shows it and compatible servers send it. Read flat, a nested event would
/// have no code and no message: not retried, whatever it said.
fn event_error(event: &Value) -> &Value {
    event
        .get("error")
        .filter(|error| error.is_object())
        .unwrap_or(event)
}

/// The error of a failed response: the one it reports, or, without one, a response that
/// cannot be understood (nothing says what went wrong, nor whether to retry).
fn failure(error: Option<Value>) -> ModelError {
    match error {
        Some(error @ Value::Object(_)) => api_error(&error),
        _ => malformed(PROVIDER, "the response failed without an error"),
    }
}

/// Our response for an unstreamed answer. One without output is malformed, unless the token
/// limit stopped it before it wrote anything (while reasoning).
pub(crate) fn answer(wire: Response) -> Result<ModelResponse, ModelError> {
    let status = wire.status.as_deref().unwrap_or("completed");
    if wire.output.is_empty() && !matches!(status, "incomplete" | "failed") {
        return Err(malformed(PROVIDER, "the answer has no output"));
    }
    let mut decoder = ResponseDecoder::new();
    decoder.end(wire, &mut VecDeque::new())?;
    decoder.into_response()
}

impl Decoder for ResponseDecoder {
    fn decode(
        &mut self,
        event: &Event,
        out: &mut VecDeque<ModelEvent>,
    ) -> Result<bool, ModelError> {
        let data = event.data.trim();
        if data.is_empty() {
            return Ok(false);
        }
        // OpenAI sends none, but compatible servers may close the stream as Chat Completions
        // does: the answer must be whole by then.
        if data == "[DONE]" {
            self.assembler.check_complete()?;
            return Ok(true);
        }
        let value: Value = serde_json::from_str(data).map_err(|error| {
            malformed(PROVIDER, "an event of the stream is not JSON").with_source(error)
        })?;
        if event.event == "error" || value.get("type").and_then(Value::as_str) == Some("error") {
            return Err(api_error(event_error(&value)));
        }
        let mut parsed: StreamEvent = serde_json::from_value(value).map_err(|error| {
            malformed(PROVIDER, "an event of the stream is not the expected JSON")
                .with_source(error)
        })?;
        // The event's name says its type where the data does not.
        if parsed.kind.is_empty() {
            parsed.kind.clone_from(&event.event);
        }
        self.event(parsed, out)
    }

    // The stream ends with `response.completed` (or `incomplete`): a body that ends before it
    // was cut.
    fn end_of_body(&self) -> Result<(), ModelError> {
        self.assembler.check_complete()
    }

    fn finish(self) -> Result<ModelResponse, ModelError> {
        self.into_response()
    }
}
