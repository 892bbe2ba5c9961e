//! Our types to the Messages wire format and back: pure functions, tested with recorded wire
//! JSON.

use hookchain_core::message::{Content, ContentPart};
use hookchain_core::model::ToolChoice;
use hookchain_core::{
    Message, ModelError, ModelRequest, ModelResponse, Role, StopReason, ToolCall, Usage,
};
use serde_json::json;

use hookchain_core::model::{CacheTtl, PromptCache};

use crate::system_text::{json_instruction, system_texts};

use super::wire::{
    Block, CacheControl, ContentBlock, MessagesRequest, MessagesResponse, RequestBlock,
    RequestMessage, System, SystemBlock, Tool, ToolResultContent, WireUsage,
};
use crate::http::malformed;

/// The provider's name in errors.
pub(crate) const PROVIDER: &str = "anthropic";

/// Per-model options that shape the wire request.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Options<'a> {
    pub(crate) model: &'a str,
    pub(crate) max_tokens: u32,
    pub(crate) thinking_budget: Option<u32>,
    pub(crate) parallel_tool_calls: Option<bool>,
    pub(crate) stream: bool,
}

/// The wire request for `request`: system text apart, the conversation as alternating turns of
/// content blocks.
pub(crate) fn messages_request<'a>(
    request: &'a ModelRequest,
    options: Options<'a>,
) -> MessagesRequest<'a> {
    // Anthropic has no JSON-schema mode (a response format becomes an instruction), and no
    // system role in the conversation (system messages join the system text).
    let system = system_texts(request, json_instruction(request));
    let has_tools = !request.tools.is_empty();
    let cache = request.prompt_cache.as_deref();
    let breakpoint = cache.map(cache_control);
    let system = (!system.is_empty()).then(|| system.join("\n\n"));
    // The tools come before the system text in the prompt: a breakpoint on the system text
    // caches both; without one, the last tool carries it.
    let prefix = cache.is_some_and(|cache| cache.prefix);
    let cached_system = prefix && system.is_some();
    let cached_tools = prefix && !cached_system && has_tools;
    let tool_count = request.tools.len();
    let (mut messages, ends) = turns(&request.messages);
    if let Some(cache) = cache {
        mark_breakpoints(
            &mut messages,
            &ends,
            cache,
            usize::from(prefix && (cached_system || cached_tools)),
        );
    }
    MessagesRequest {
        model: options.model,
        max_tokens: request.settings.max_tokens.unwrap_or(options.max_tokens),
        system: system.map(|text| match breakpoint.filter(|_| cached_system) {
            Some(cache_control) => System::Cached([SystemBlock {
                kind: "text",
                text,
                cache_control,
            }]),
            None => System::Text(text),
        }),
        messages,
        tools: request
            .tools
            .iter()
            .enumerate()
            .map(|(i, spec)| Tool {
                name: &spec.name,
                description: &spec.description,
                input_schema: &spec.parameters,
                cache_control: breakpoint.filter(|_| cached_tools && i + 1 == tool_count),
            })
            .collect(),
        tool_choice: if has_tools {
            tool_choice(&request.tool_choice, options.parallel_tool_calls)
        } else {
            None
        },
        thinking: options
            .thinking_budget
            .map(|budget| json!({"type": "enabled", "budget_tokens": budget})),
        temperature: request.settings.temperature,
        top_p: request.settings.top_p,
        stop_sequences: &request.settings.stop,
        stream: options.stream,
        extra: &request.settings.extra,
    }
}

/// The most cache breakpoints Anthropic takes in one request.
const MAX_BREAKPOINTS: usize = 4;

/// A breakpoint with `cache`'s TTL.
fn cache_control(cache: &PromptCache) -> CacheControl {
    CacheControl {
        kind: "ephemeral",
        ttl: match cache.ttl {
            CacheTtl::OneHour => Some("1h"),
            // The default (5 minutes), and TTLs this client does not know yet.
            _ => None,
        },
    }
}

/// Puts a breakpoint on the last block of each message of `cache.breakpoints` (a message
/// that sent no block — a system message, an empty one — gives its breakpoint to the message
/// before it), the last ones first, within Anthropic's limit with `taken` used already.
fn mark_breakpoints(
    turns: &mut [RequestMessage<'_>],
    ends: &[Option<(usize, usize)>],
    cache: &PromptCache,
    taken: usize,
) {
    let mut left = MAX_BREAKPOINTS.saturating_sub(taken);
    for &index in cache.breakpoints.iter().rev() {
        if left == 0 {
            break;
        }
        let at = ends
            .get(..=index.min(ends.len().saturating_sub(1)))
            .and_then(|ends| ends.iter().rev().flatten().next());
        let Some(&(turn, block)) = at else {
            continue;
        };
        let slot = &mut turns[turn].content[block].cache_control;
        if slot.is_none() {
            *slot = Some(cache_control(cache));
            left -= 1;
        }
    }
}

/// The conversation as turns, and where each message's last block is (turn, block). Consecutive
/// messages of one role share a turn: Anthropic wants the results of one round of tool calls in
/// a single user turn.
fn turns(messages: &[Message]) -> (Vec<RequestMessage<'_>>, Vec<Option<(usize, usize)>>) {
    let mut turns: Vec<RequestMessage<'_>> = Vec::new();
    let mut ends = Vec::with_capacity(messages.len());
    for message in messages {
        let (role, blocks) = match message.role {
            Role::System => {
                ends.push(None);
                continue;
            }
            Role::User => ("user", blocks(message)),
            Role::Assistant => {
                let mut blocks = blocks(message);
                blocks.extend(message.tool_calls.iter().map(|call| RequestBlock::ToolUse {
                    id: &call.id,
                    name: &call.name,
                    input: &call.arguments,
                }));
                ("assistant", blocks)
            }
            Role::Tool => (
                "user",
                vec![RequestBlock::ToolResult {
                    tool_use_id: message.tool_call_id.as_deref().unwrap_or_default(),
                    content: tool_result_content(&message.content),
                    is_error: message.is_error,
                }],
            ),
            // A role this version does not know reads as the user's words.
            _ => ("user", blocks(message)),
        };
        // Anthropic rejects empty turns and empty text blocks.
        if blocks.is_empty() {
            ends.push(None);
            continue;
        }
        let blocks = blocks.into_iter().map(Block::from);
        match turns.last_mut() {
            Some(last) if last.role == role => last.content.extend(blocks),
            _ => turns.push(RequestMessage {
                role,
                content: blocks.collect(),
            }),
        }
        let turn = turns.len() - 1;
        ends.push(Some((turn, turns[turn].content.len() - 1)));
    }
    (turns, ends)
}

/// A message's content as blocks, in order: text (empty text left out, Anthropic rejects it),
/// images of user messages, and the thinking of assistant messages — signed or redacted, which
/// Anthropic requires back when thinking is used with tools. Reasoning without a signature
/// (another provider's) is left out: Anthropic would refuse it.
fn blocks(message: &Message) -> Vec<RequestBlock<'_>> {
    let assistant = message.role == Role::Assistant;
    message
        .content
        .parts()
        .iter()
        .filter_map(|part| match part {
            ContentPart::Text { text } if !text.is_empty() => {
                Some(RequestBlock::Text { text: text.into() })
            }
            ContentPart::Image { source } if !assistant => Some(RequestBlock::Image { source }),
            ContentPart::Reasoning(reasoning) if assistant => {
                let signature = reasoning.signature.as_deref()?;
                Some(RequestBlock::Thinking {
                    thinking: &reasoning.text,
                    signature,
                })
            }
            ContentPart::RedactedReasoning { data } if assistant => {
                Some(RequestBlock::RedactedThinking { data })
            }
            _ => None,
        })
        .collect()
}

/// A tool result's content: a string when it is text only (as it always was), otherwise
/// blocks — text and images as they are (an image by URL or base64), a JSON part as a text
/// block of compact JSON, a resource link as a text block (`Resource: <name> <<uri>>`, see
/// `Content::to_text_lossy`); empty text and reasoning are left out.
fn tool_result_content(content: &Content) -> ToolResultContent<'_> {
    if content.is_text() {
        return ToolResultContent::Text(content.text());
    }
    let blocks: Vec<_> = content
        .parts()
        .iter()
        .filter_map(|part| match part {
            ContentPart::Image { source } => Some(RequestBlock::Image { source }),
            other => Some(other.to_text_lossy())
                .filter(|text| !text.is_empty())
                .map(|text| RequestBlock::Text { text }),
        })
        .collect();
    if blocks.is_empty() {
        // Only reasoning, say: no block Anthropic accepts, and an empty array is refused.
        return ToolResultContent::Text("".into());
    }
    ToolResultContent::Blocks(blocks)
}

fn tool_choice(choice: &ToolChoice, parallel: Option<bool>) -> Option<serde_json::Value> {
    let mut value = match choice {
        ToolChoice::Auto if parallel.is_none() => return None,
        ToolChoice::None => return Some(json!({"type": "none"})),
        ToolChoice::Required => json!({"type": "any"}),
        ToolChoice::Tool(name) => json!({"type": "tool", "name": name}),
        // `Auto` with a parallelism setting, and choices this client does not know yet.
        _ => json!({"type": "auto"}),
    };
    if parallel == Some(false) {
        value["disable_parallel_tool_use"] = json!(true);
    }
    Some(value)
}

/// Our response for an unstreamed wire answer, thinking blocks kept (with their signatures)
/// as reasoning parts; an answer without content is malformed.
pub(crate) fn answer(wire: MessagesResponse) -> Result<ModelResponse, ModelError> {
    let Some(blocks) = wire.content else {
        return Err(malformed(PROVIDER, "the answer has no content"));
    };
    let mut content = Content::default();
    let mut calls = Vec::new();
    let mut last_is_call = false;
    for block in blocks {
        last_is_call = matches!(block, ContentBlock::ToolUse { .. });
        match block {
            ContentBlock::Text { text } => content.push_text(text),
            ContentBlock::Thinking {
                thinking,
                signature,
            } => content.push(if signature.is_empty() {
                ContentPart::reasoning(thinking)
            } else {
                ContentPart::signed_reasoning(thinking, signature)
            }),
            ContentBlock::RedactedThinking { data } => {
                content.push(ContentPart::redacted_reasoning(data));
            }
            ContentBlock::ToolUse { id, name, input } => {
                let input = if input.is_null() { json!({}) } else { input };
                calls.push(ToolCall::new(id, name, input));
            }
            ContentBlock::Other => {}
        }
    }
    // Cut off by the token limit, the last block, if a call, has only the arguments generated
    // before the cut (Anthropic sends them as a valid object): dropped, never run, as a
    // stream's call whose arguments stop mid-JSON.
    let cut_off = matches!(
        wire.stop_reason.as_deref(),
        Some("max_tokens" | "model_context_window_exceeded")
    );
    if cut_off && last_is_call {
        calls.pop();
    }
    let stop_reason = stop_reason(wire.stop_reason.as_deref(), !calls.is_empty());
    let message = Message::assistant_with_tool_calls(content, calls);
    Ok(ModelResponse::new(message, stop_reason)
        .with_usage(wire.usage.map_or(Usage::unreported(), usage)))
}

/// Why the model stopped.
pub(crate) fn stop_reason(stop_reason: Option<&str>, has_tool_calls: bool) -> StopReason {
    match stop_reason {
        Some("max_tokens" | "model_context_window_exceeded") => StopReason::MaxTokens,
        Some("stop_sequence") => StopReason::StopSequence,
        Some("refusal") => StopReason::Refusal,
        Some("tool_use") => StopReason::ToolUse,
        _ if has_tool_calls => StopReason::ToolUse,
        _ => StopReason::EndTurn,
    }
}

/// Our usage: the input count includes the cached tokens (Anthropic counts them apart).
pub(crate) fn usage(wire: WireUsage) -> Usage {
    let written = wire.cache_creation_input_tokens.unwrap_or(0);
    let read = wire.cache_read_input_tokens.unwrap_or(0);
    Usage::new(
        wire.input_tokens
            .saturating_add(written)
            .saturating_add(read),
        wire.output_tokens,
    )
    .with_cache(read, written)
}
