//! Turning a stream of [`ModelEvent`]s back into a [`ModelResponse`].

use std::collections::BTreeMap;

use super::ModelError;
use super::{ModelEvent, ModelResponse, StopReason, Usage};
use crate::message::{Content, ContentPart, Message, Reasoning, ToolCall};

/// Assembles the [`ModelEvent`]s of a streamed call into the [`ModelResponse`] an unstreamed
/// call would return.
///
/// Rules:
/// - text and reasoning deltas are concatenated per block, the blocks in index order;
/// - a tool call's argument fragments are concatenated and parsed as JSON when the call ends
///   (no fragments mean `{}`); JSON that does not parse is a
///   [`MalformedResponse`](crate::ModelErrorKind::MalformedResponse) error, never a panic;
/// - usage events are running totals: each count keeps the largest value seen; an answer
///   without any usage event has [`Usage::unreported`] (unknown, not 0);
/// - a stream that ends without [`Finish`](ModelEvent::Finish), or inside a tool call, was
///   truncated: [`finish`](Self::finish) fails with `MalformedResponse` instead of returning a
///   partial answer;
/// - but a tool call still open when the answer finishes with
///   [`StopReason::MaxTokens`] was cut off by the token limit: it is dropped (never run), and
///   the answer is the rest, with that stop reason.
///
/// Reasoning blocks become [`Reasoning`](crate::message::ContentPart::Reasoning) parts of the
/// message's content (with their signature), in block order with the text.
///
/// ```
/// use hookchain::model::{ModelEvent, ResponseAssembler};
/// use hookchain::StopReason;
///
/// let mut assembler = ResponseAssembler::new();
/// for event in [
///     ModelEvent::TextDelta { index: 0, text: "Let me check. ".into() },
///     ModelEvent::ToolCallStart { index: 1, id: "c1".into(), name: "weather".into() },
///     ModelEvent::ToolCallDelta { index: 1, arguments: "{\"city\":".into() },
///     ModelEvent::ToolCallDelta { index: 1, arguments: "\"Paris\"}".into() },
/// ] {
///     assembler.push(&event)?;
/// }
/// let end = assembler.end_tool_call(1)?; // the ToolCallEnd event, to forward
/// assert!(matches!(end, ModelEvent::ToolCallEnd { index: 1, .. }));
/// assembler.push(&ModelEvent::Finish { stop_reason: StopReason::ToolUse })?;
///
/// let response = assembler.finish()?;
/// assert_eq!(response.message.content, "Let me check. ");
/// assert_eq!(response.message.tool_calls[0].arguments["city"], "Paris");
/// # Ok::<(), hookchain::ModelError>(())
/// ```
#[derive(Debug, Default)]
pub struct ResponseAssembler {
    blocks: BTreeMap<usize, Block>,
    /// The running totals, once a usage event came.
    usage: Option<Usage>,
    stop_reason: Option<StopReason>,
    /// The provider's data for the message's metadata ([`ModelEvent::Metadata`]).
    metadata: BTreeMap<String, serde_json::Value>,
}

#[derive(Debug)]
enum Block {
    Text(String),
    Reasoning {
        text: String,
        signature: Option<String>,
    },
    Redacted(String),
    /// A tool call whose arguments are still arriving.
    OpenCall {
        id: String,
        name: String,
        arguments: String,
    },
    EndedCall(ToolCall),
}

impl Block {
    fn kind(&self) -> &'static str {
        match self {
            Block::Text(_) => "text",
            Block::Reasoning { .. } | Block::Redacted(_) => "reasoning",
            Block::OpenCall { .. } | Block::EndedCall(_) => "tool call",
        }
    }
}

impl ResponseAssembler {
    /// An assembler that has seen no event.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Records one event.
    ///
    /// Fails with `MalformedResponse` on an event that contradicts the ones before: a block
    /// that changes kind, argument fragments or an end for a tool call that was not started, a
    /// call started or ended twice.
    pub fn push(&mut self, event: &ModelEvent) -> Result<(), ModelError> {
        match event {
            ModelEvent::TextDelta { index, text } => {
                match self
                    .blocks
                    .entry(*index)
                    .or_insert(Block::Text(String::new()))
                {
                    Block::Text(buffer) => buffer.push_str(text),
                    other => return Err(kind_clash(*index, other, "text")),
                }
            }
            ModelEvent::ReasoningDelta { index, text } => {
                match self.blocks.entry(*index).or_insert(Block::Reasoning {
                    text: String::new(),
                    signature: None,
                }) {
                    Block::Reasoning { text: buffer, .. } => buffer.push_str(text),
                    other => return Err(kind_clash(*index, other, "reasoning")),
                }
            }
            ModelEvent::ReasoningSignature { index, signature } => {
                match self.blocks.entry(*index).or_insert(Block::Reasoning {
                    text: String::new(),
                    signature: None,
                }) {
                    Block::Reasoning {
                        signature: buffer, ..
                    } => buffer.get_or_insert_default().push_str(signature),
                    other => return Err(kind_clash(*index, other, "reasoning signature")),
                }
            }
            ModelEvent::RedactedReasoning { index, data } => {
                if let Some(block) = self.blocks.get(index) {
                    return Err(kind_clash(*index, block, "redacted reasoning"));
                }
                self.blocks.insert(*index, Block::Redacted(data.clone()));
            }
            ModelEvent::ToolCallStart { index, id, name } => {
                if let Some(block) = self.blocks.get(index) {
                    return Err(malformed(format!(
                        "tool call #{index} started where a {} block already is",
                        block.kind()
                    )));
                }
                self.blocks.insert(
                    *index,
                    Block::OpenCall {
                        id: id.clone(),
                        name: name.clone(),
                        arguments: String::new(),
                    },
                );
            }
            ModelEvent::ToolCallDelta { index, arguments } => match self.blocks.get_mut(index) {
                Some(Block::OpenCall {
                    arguments: buffer, ..
                }) => buffer.push_str(arguments),
                Some(other) => return Err(kind_clash(*index, other, "tool call argument")),
                None => {
                    return Err(malformed(format!(
                        "arguments arrived for tool call #{index}, which never started"
                    )));
                }
            },
            ModelEvent::ToolCallEnd { index, call } => match self.blocks.get(index) {
                // A provider that assembled the call itself: take its call.
                Some(Block::OpenCall { .. }) | None => {
                    self.blocks.insert(*index, Block::EndedCall(call.clone()));
                }
                Some(Block::EndedCall(_)) => {
                    return Err(malformed(format!("tool call #{index} ended twice")));
                }
                Some(other) => return Err(kind_clash(*index, other, "tool call")),
            },
            ModelEvent::Usage(usage) => {
                let so_far = self.usage.unwrap_or_default();
                self.usage = Some(Usage {
                    input_tokens: so_far.input_tokens.max(usage.input_tokens),
                    output_tokens: so_far.output_tokens.max(usage.output_tokens),
                    cache_read_tokens: so_far.cache_read_tokens.max(usage.cache_read_tokens),
                    cache_write_tokens: so_far.cache_write_tokens.max(usage.cache_write_tokens),
                    unreported_calls: so_far.unreported_calls.max(usage.unreported_calls),
                });
            }
            ModelEvent::Metadata { key, value } => {
                self.metadata.insert(key.clone(), value.clone());
            }
            ModelEvent::Finish { stop_reason } => self.stop_reason = Some(*stop_reason),
        }
        Ok(())
    }

    /// Ends the open tool call `index`: parses its arguments, records the call and returns the
    /// [`ToolCallEnd`](ModelEvent::ToolCallEnd) event to forward (it is recorded already; do not
    /// push it again).
    ///
    /// For providers whose streams have no end event per call (OpenAI's Chat Completions ends
    /// them all with the finish reason). Fails with `MalformedResponse` if the call was not
    /// started or its arguments are not JSON.
    pub fn end_tool_call(&mut self, index: usize) -> Result<ModelEvent, ModelError> {
        let call = match self.blocks.get(&index) {
            Some(Block::OpenCall {
                id,
                name,
                arguments,
            }) => ToolCall::new(id.clone(), name.clone(), parse_arguments(name, arguments)?),
            Some(Block::EndedCall(_)) => {
                return Err(malformed(format!("tool call #{index} ended twice")));
            }
            Some(other) => return Err(kind_clash(index, other, "tool call")),
            None => {
                return Err(malformed(format!(
                    "tool call #{index} ended but never started"
                )));
            }
        };
        self.blocks.insert(index, Block::EndedCall(call.clone()));
        Ok(ModelEvent::ToolCallEnd { index, call })
    }

    /// Ends every tool call still open, in index order, returning their
    /// [`ToolCallEnd`](ModelEvent::ToolCallEnd) events (see [`end_tool_call`](Self::end_tool_call)).
    pub fn end_open_tool_calls(&mut self) -> Result<Vec<ModelEvent>, ModelError> {
        let open: Vec<usize> = self
            .blocks
            .iter()
            .filter(|(_, block)| matches!(block, Block::OpenCall { .. }))
            .map(|(index, _)| *index)
            .collect();
        open.into_iter()
            .map(|index| self.end_tool_call(index))
            .collect()
    }

    /// The usage received so far: [`Usage::unreported`] until a usage event came.
    #[must_use]
    pub fn usage(&self) -> Usage {
        self.usage.unwrap_or(Usage::unreported())
    }

    /// Whether a [`Finish`](ModelEvent::Finish) event was pushed.
    #[must_use]
    pub fn is_finished(&self) -> bool {
        self.stop_reason.is_some()
    }

    /// Whether the events so far make a complete answer: `Ok` once a finish event arrived and
    /// every tool call ended; otherwise the `MalformedResponse` error [`finish`](Self::finish)
    /// would return, for a stream that ends here.
    pub fn check_complete(&self) -> Result<(), ModelError> {
        match self.stop_reason {
            None => {
                return Err(malformed(
                    "the model's stream ended before the answer was finished (truncated)",
                ));
            }
            // The calls still open were cut by the token limit: `finish` drops them.
            Some(StopReason::MaxTokens) => return Ok(()),
            Some(_) => {}
        }
        for (index, block) in &self.blocks {
            if let Block::OpenCall { name, .. } = block {
                return Err(malformed(format!(
                    "the model's stream ended inside tool call #{index} (`{name}`): its \
                     arguments are truncated"
                )));
            }
        }
        Ok(())
    }

    /// The assembled response.
    ///
    /// Fails with `MalformedResponse` if the stream was truncated: no finish event, or a tool
    /// call that never ended (see [`check_complete`](Self::check_complete)).
    pub fn finish(self) -> Result<ModelResponse, ModelError> {
        self.check_complete()?;
        let stop_reason = self.stop_reason.unwrap_or_default();
        let usage = self.usage();
        let mut content = Content::default();
        let mut calls = Vec::new();
        for block in self.blocks.into_values() {
            match block {
                Block::Text(text) => content.push_text(text),
                Block::Reasoning { text, signature } => {
                    let mut reasoning = Reasoning::new(text);
                    reasoning.signature = signature;
                    content.push(ContentPart::Reasoning(Box::new(reasoning)));
                }
                Block::Redacted(data) => content.push(ContentPart::redacted_reasoning(data)),
                Block::EndedCall(call) => calls.push(call),
                // Cut off by the token limit (`check_complete` allows no other): dropped.
                Block::OpenCall { .. } => {}
            }
        }
        let mut message = Message::assistant_with_tool_calls(content, calls);
        message.metadata.extend(self.metadata);
        Ok(ModelResponse::new(message, stop_reason).with_usage(usage))
    }
}

/// Parses a tool call's accumulated argument text; no text at all means no arguments.
fn parse_arguments(name: &str, arguments: &str) -> Result<serde_json::Value, ModelError> {
    if arguments.trim().is_empty() {
        return Ok(serde_json::Value::Object(serde_json::Map::new()));
    }
    serde_json::from_str(arguments).map_err(|error| {
        malformed(format!(
            "the arguments of tool call `{name}` are not valid JSON"
        ))
        .with_source(error)
    })
}

fn kind_clash(index: usize, block: &Block, event: &str) -> ModelError {
    malformed(format!(
        "a {event} event arrived for block #{index}, which is a {} block",
        block.kind()
    ))
}

fn malformed(message: impl Into<String>) -> ModelError {
    ModelError::malformed_response(message)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::model::ModelErrorKind;

    fn text(index: usize, text: &str) -> ModelEvent {
        ModelEvent::TextDelta {
            index,
            text: text.into(),
        }
    }

    fn start(index: usize, id: &str, name: &str) -> ModelEvent {
        ModelEvent::ToolCallStart {
            index,
            id: id.into(),
            name: name.into(),
        }
    }

    fn delta(index: usize, arguments: &str) -> ModelEvent {
        ModelEvent::ToolCallDelta {
            index,
            arguments: arguments.into(),
        }
    }

    fn finish(stop_reason: StopReason) -> ModelEvent {
        ModelEvent::Finish { stop_reason }
    }

    fn assemble(events: &[ModelEvent]) -> Result<ModelResponse, ModelError> {
        let mut assembler = ResponseAssembler::new();
        for event in events {
            assembler.push(event)?;
        }
        assembler.end_open_tool_calls()?;
        assembler.finish()
    }

    fn assert_malformed(result: Result<impl std::fmt::Debug, ModelError>, needle: &str) {
        let error = result.expect_err("expected a malformed-response error");
        assert_eq!(error.kind(), ModelErrorKind::MalformedResponse, "{error}");
        assert!(error.to_string().contains(needle), "{error}");
    }

    #[test]
    fn text_blocks_are_joined_in_index_order() {
        let response = assemble(&[
            text(2, "world"),
            text(0, "Hello"),
            text(1, ", "),
            text(2, "!"),
            finish(StopReason::EndTurn),
        ])
        .unwrap();
        assert_eq!(response.message.content, "Hello, world!");
        assert!(response.message.tool_calls.is_empty());
        assert_eq!(response.stop_reason, StopReason::EndTurn);
    }

    #[test]
    fn tool_calls_are_assembled_in_index_order() {
        let response = assemble(&[
            start(3, "b", "second"),
            start(1, "a", "first"),
            delta(3, "{\"n\":"),
            delta(1, "{\"x\": [1,"),
            delta(3, "2}"),
            delta(1, " 2]}"),
            finish(StopReason::ToolUse),
        ])
        .unwrap();
        let calls = &response.message.tool_calls;
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0], ToolCall::new("a", "first", json!({"x": [1, 2]})));
        assert_eq!(calls[1], ToolCall::new("b", "second", json!({"n": 2})));
    }

    #[test]
    fn empty_arguments_mean_an_empty_object() {
        let mut assembler = ResponseAssembler::new();
        assembler.push(&start(0, "c", "now")).unwrap();
        // A server (vLLM) may send an empty fragment; whitespace only is empty too.
        assembler.push(&delta(0, " ")).unwrap();
        let end = assembler.end_tool_call(0).unwrap();
        assert_eq!(
            end,
            ModelEvent::ToolCallEnd {
                index: 0,
                call: ToolCall::new("c", "now", json!({}))
            }
        );
    }

    #[test]
    fn invalid_argument_json_is_malformed_with_the_parse_error_as_source() {
        let mut assembler = ResponseAssembler::new();
        assembler.push(&start(0, "c", "lookup")).unwrap();
        assembler.push(&delta(0, "{\"q\": ")).unwrap();
        let error = assembler.end_tool_call(0).unwrap_err();
        assert_eq!(error.kind(), ModelErrorKind::MalformedResponse);
        assert!(error.to_string().contains("`lookup`"), "{error}");
        assert!(std::error::Error::source(&error).is_some());
    }

    #[test]
    fn a_stream_without_finish_is_truncated() {
        assert_malformed(assemble(&[text(0, "Hel")]), "truncated");
        assert_malformed(assemble(&[]), "truncated");
    }

    #[test]
    fn a_stream_ending_inside_a_tool_call_is_truncated() {
        let mut assembler = ResponseAssembler::new();
        assembler.push(&start(0, "c", "lookup")).unwrap();
        assembler.push(&delta(0, "{\"q\": \"x\"}")).unwrap();
        assembler.push(&finish(StopReason::ToolUse)).unwrap();
        assert_malformed(assembler.finish(), "inside tool call #0 (`lookup`)");
    }

    #[test]
    fn contradictory_events_are_malformed() {
        let mut assembler = ResponseAssembler::new();
        assert_malformed(assembler.push(&delta(4, "{}")), "never started");
        assert_malformed(assembler.end_tool_call(4), "never started");
        assembler.push(&text(0, "hi")).unwrap();
        assert_malformed(assembler.push(&start(0, "c", "t")), "text block");
        assert_malformed(
            assembler.push(&ModelEvent::ReasoningDelta {
                index: 0,
                text: "hm".into(),
            }),
            "text block",
        );
        assembler.push(&start(1, "c", "t")).unwrap();
        assert_malformed(assembler.push(&text(1, "x")), "tool call block");
        assembler.end_tool_call(1).unwrap();
        assert_malformed(assembler.end_tool_call(1), "ended twice");
        let call = ToolCall::new("c", "t", json!({}));
        assert_malformed(
            assembler.push(&ModelEvent::ToolCallEnd { index: 1, call }),
            "ended twice",
        );
    }

    #[test]
    fn a_whole_call_may_arrive_as_one_end_event() {
        let call = ToolCall::new("c", "t", json!({"a": 1}));
        let response = assemble(&[
            ModelEvent::ToolCallEnd {
                index: 0,
                call: call.clone(),
            },
            finish(StopReason::ToolUse),
        ])
        .unwrap();
        assert_eq!(response.message.tool_calls, [call]);
    }

    #[test]
    fn reasoning_becomes_a_signed_part_before_the_text() {
        let mut assembler = ResponseAssembler::new();
        for event in [
            ModelEvent::ReasoningDelta {
                index: 0,
                text: "The user ".into(),
            },
            ModelEvent::ReasoningDelta {
                index: 0,
                text: "greets me.".into(),
            },
            ModelEvent::ReasoningSignature {
                index: 0,
                signature: "sig".into(),
            },
            ModelEvent::RedactedReasoning {
                index: 1,
                data: "opaque".into(),
            },
            text(2, "Hi!"),
            finish(StopReason::EndTurn),
        ] {
            assembler.push(&event).unwrap();
        }
        let message = assembler.finish().unwrap().message;
        assert_eq!(message.text(), "Hi!");
        assert_eq!(
            message.content.parts(),
            [
                ContentPart::signed_reasoning("The user greets me.", "sig"),
                ContentPart::redacted_reasoning("opaque"),
                ContentPart::text("Hi!"),
            ]
        );
    }

    #[test]
    fn a_redacted_block_takes_no_deltas() {
        let events = [
            ModelEvent::RedactedReasoning {
                index: 0,
                data: "opaque".into(),
            },
            ModelEvent::ReasoningDelta {
                index: 0,
                text: "peek".into(),
            },
        ];
        assert_malformed(assemble(&events), "reasoning");
    }

    #[test]
    fn usage_events_are_running_totals() {
        let mut assembler = ResponseAssembler::new();
        // Anthropic's shape: input at the start, output growing, cache counts once.
        assembler
            .push(&ModelEvent::Usage(Usage::new(25, 1).with_cache(100, 0)))
            .unwrap();
        assembler
            .push(&ModelEvent::Usage(Usage::new(0, 15)))
            .unwrap();
        assert_eq!(assembler.usage(), Usage::new(25, 15).with_cache(100, 0));
        // Usage may follow the finish (OpenAI's `include_usage` chunk does).
        assembler.push(&finish(StopReason::EndTurn)).unwrap();
        assembler
            .push(&ModelEvent::Usage(Usage::new(25, 16)))
            .unwrap();
        assert!(assembler.is_finished());
        let response = assembler.finish().unwrap();
        assert_eq!(response.usage, Usage::new(25, 16).with_cache(100, 0));
    }

    #[test]
    fn a_call_still_open_at_a_max_tokens_finish_is_dropped_and_the_rest_kept() {
        let mut assembler = ResponseAssembler::new();
        for event in [
            text(0, "Writing both files."),
            start(1, "c1", "write"),
            delta(1, r#"{"path":"a"}"#),
            start(2, "c2", "write"),
            delta(2, r#"{"path":"b","text":"cut he"#),
        ] {
            assembler.push(&event).unwrap();
        }
        assembler.end_tool_call(1).unwrap();
        assert!(assembler.end_tool_call(2).is_err());
        let mut cut = ResponseAssembler::new();
        cut.push(&start(2, "c2", "write")).unwrap();
        // Any other finish leaves the call truncated.
        cut.push(&finish(StopReason::EndTurn)).unwrap();
        assert_malformed(cut.check_complete(), "truncated");
        assembler.push(&finish(StopReason::MaxTokens)).unwrap();
        let response = assembler.finish().unwrap();
        assert_eq!(response.stop_reason, StopReason::MaxTokens);
        assert_eq!(response.message.content, "Writing both files.");
        assert_eq!(
            response.message.tool_calls,
            [ToolCall::new("c1", "write", json!({"path": "a"}))]
        );
    }

    #[test]
    fn no_usage_event_means_unknown_usage_not_zero() {
        let response = assemble(&[text(0, "x"), finish(StopReason::MaxTokens)]).unwrap();
        assert_eq!(response.usage, Usage::unreported());
        assert!(!response.usage.is_known());
        assert_eq!(response.stop_reason, StopReason::MaxTokens);
    }

    /// Every way to cut `json` at one or two char boundaries assembles the same arguments.
    #[test]
    fn arguments_split_anywhere_assemble_the_same() {
        let samples = [
            r#"{"city": "Zürich", "days": 3, "units": "metric"}"#,
            r#"{"q":"a \"quoted\" \\ backslash \u00e9","n":-12.5e3,"ok":true,"x":null}"#,
            r#"{"nested": {"list": [1, [2, {"k": "v"}], "🦀"]}, "empty": {}}"#,
            "{}",
        ];
        for json in samples {
            let expected: serde_json::Value = serde_json::from_str(json).unwrap();
            let cuts: Vec<usize> = (0..=json.len())
                .filter(|&i| json.is_char_boundary(i))
                .collect();
            for (n, &first) in cuts.iter().enumerate() {
                for &second in &cuts[n..] {
                    let pieces = [&json[..first], &json[first..second], &json[second..]];
                    let mut events = vec![start(7, "id", "tool")];
                    events.extend(pieces.iter().map(|piece| delta(7, piece)));
                    events.push(finish(StopReason::ToolUse));
                    let response = assemble(&events).unwrap();
                    assert_eq!(
                        response.message.tool_calls[0].arguments, expected,
                        "cuts at {first} and {second} of {json}"
                    );
                }
            }
        }
    }

    /// Token-by-token (one char per fragment, as llama.cpp streams) and random fragment sizes
    /// from a fixed-seed generator.
    #[test]
    fn arguments_in_arbitrary_fragments_assemble_the_same() {
        let json = r#"{"path": "/tmp/a b/ü.txt", "lines": [1, 2, 3], "flag": false}"#;
        let expected: serde_json::Value = serde_json::from_str(json).unwrap();
        let chars: Vec<String> = json.chars().map(String::from).collect();
        let mut events = vec![start(0, "id", "read")];
        events.extend(chars.iter().map(|c| delta(0, c)));
        events.push(finish(StopReason::ToolUse));
        assert_eq!(
            assemble(&events).unwrap().message.tool_calls[0].arguments,
            expected
        );

        let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..500 {
            let mut events = vec![start(0, "id", "read")];
            let mut rest = json;
            while !rest.is_empty() {
                // xorshift64: a deterministic sequence, so a failure reproduces.
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let mut cut = (seed % 9) as usize;
                while cut < rest.len() && !rest.is_char_boundary(cut) {
                    cut += 1;
                }
                let cut = cut.min(rest.len());
                events.push(delta(0, &rest[..cut]));
                rest = &rest[cut..];
            }
            events.push(finish(StopReason::ToolUse));
            assert_eq!(
                assemble(&events).unwrap().message.tool_calls[0].arguments,
                expected
            );
        }
    }

    /// Truncating the arguments anywhere before their end never panics and never yields a
    /// call: it is a malformed-response error.
    #[test]
    fn arguments_cut_short_anywhere_are_malformed_not_a_panic() {
        let json = r#"{"city": "Paris", "days": [1, 2]}"#;
        for cut in 1..json.len() {
            let events = [
                start(0, "id", "weather"),
                delta(0, &json[..cut]),
                finish(StopReason::ToolUse),
            ];
            assert_malformed(assemble(&events), "not valid JSON");
        }
    }
}
