//! Our types to the wire and back: pure functions, tested with recorded wire JSON.

use hookchain_core::message::{Content, ContentPart};
use hookchain_core::model::ToolChoice;
use hookchain_core::{
    Message, ModelError, ModelRequest, ModelResponse, Role, StopReason, ToolCall, Usage,
};
use serde_json::json;

use super::wire::{
    ChatRequest, ChatResponse, FunctionSpec, ImageUrl, RequestFunction, RequestMessage,
    RequestToolCall, StreamOptions, Tool, WireContent, WirePart, WireUsage,
};
use crate::http::malformed;

/// The provider's name in errors.
pub(crate) const PROVIDER: &str = "openai";

/// Per-model options that shape the wire request.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Options<'a> {
    pub(crate) model: &'a str,
    pub(crate) parallel_tool_calls: Option<bool>,
    pub(crate) stream: bool,
}

/// The wire request for `request`.
pub(crate) fn chat_request<'a>(request: &'a ModelRequest, options: Options<'a>) -> ChatRequest<'a> {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if let Some(system) = &request.system_prompt {
        messages.push(RequestMessage {
            role: "system",
            content: Some(WireContent::Text(system.into())),
            tool_calls: Vec::new(),
            tool_call_id: None,
        });
    }
    messages.extend(request.messages.iter().map(message));
    let has_tools = !request.tools.is_empty();
    ChatRequest {
        model: options.model,
        messages,
        tools: request
            .tools
            .iter()
            .map(|spec| Tool {
                kind: "function",
                function: FunctionSpec {
                    name: &spec.name,
                    description: &spec.description,
                    parameters: &spec.parameters,
                },
            })
            .collect(),
        // Some servers reject a tool choice without tools; `auto` is everyone's default.
        tool_choice: if has_tools {
            tool_choice(&request.tool_choice)
        } else {
            None
        },
        parallel_tool_calls: options.parallel_tool_calls.filter(|_| has_tools),
        temperature: request.settings.temperature,
        max_tokens: request.settings.max_tokens,
        top_p: request.settings.top_p,
        stop: &request.settings.stop,
        stream: options.stream,
        stream_options: options.stream.then_some(StreamOptions {
            include_usage: true,
        }),
        response_format: request.response_format.as_ref().map(|format| {
            serde_json::json!({
                "type": "json_schema",
                "json_schema": {
                    "name": format.name,
                    "schema": format.schema,
                    "strict": format.strict,
                },
            })
        }),
        prompt_cache_key: request
            .prompt_cache
            .as_ref()
            .and_then(|cache| cache.key.as_deref()),
        extra: &request.settings.extra,
    }
}

fn message(message: &Message) -> RequestMessage<'_> {
    let role = match message.role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
        // A role this version does not know reads as the user's words.
        _ => "user",
    };
    let only_calls =
        message.role == Role::Assistant && message.content.is_empty() && message.has_tool_calls();
    RequestMessage {
        role,
        content: (!only_calls).then(|| content(message)),
        tool_calls: message
            .tool_calls
            .iter()
            .map(|call| RequestToolCall {
                id: &call.id,
                kind: "function",
                function: RequestFunction {
                    name: &call.name,
                    arguments: call.arguments.to_string(),
                },
            })
            .collect(),
        tool_call_id: message.tool_call_id.as_deref(),
    }
}

/// A message's content on the wire: images go as parts of user messages (the only ones that
/// take them); reasoning is not sent back (the servers that send it want it left out).
/// Everything else is text, as [`Content::to_text_lossy`] writes it: a tool result's JSON as
/// compact JSON, a resource link as a line with its URI, and an image in a tool result (which
/// a `tool` message cannot hold) as a placeholder naming its media type. One piece of text is
/// sent as the string it is.
fn content(message: &Message) -> WireContent<'_> {
    let parts = message.content.parts();
    let has_image = |part: &ContentPart| matches!(part, ContentPart::Image { .. });
    if message.role != Role::User || !parts.iter().any(has_image) {
        return WireContent::Text(message.content.to_text_lossy());
    }
    WireContent::Parts(
        parts
            .iter()
            .filter_map(|part| match part {
                ContentPart::Text { text } => Some(WirePart::Text { text: text.into() }),
                ContentPart::Image { source } => Some(WirePart::ImageUrl {
                    image_url: ImageUrl {
                        url: source.to_url(),
                    },
                }),
                // JSON and links as text; reasoning (written as nothing) left out.
                other => Some(other.to_text_lossy())
                    .filter(|text| !text.is_empty())
                    .map(|text| WirePart::Text { text }),
            })
            .collect(),
    )
}

fn tool_choice(choice: &ToolChoice) -> Option<serde_json::Value> {
    match choice {
        ToolChoice::Auto => None,
        ToolChoice::None => Some(json!("none")),
        ToolChoice::Required => Some(json!("required")),
        ToolChoice::Tool(name) => Some(json!({"type": "function", "function": {"name": name}})),
        // A choice this client does not know yet: leave it to the model.
        _ => None,
    }
}

/// Our response for an unstreamed wire answer (reasoning a server sends comes first in the
/// content); no choice at all is malformed.
pub(crate) fn answer(wire: ChatResponse) -> Result<ModelResponse, ModelError> {
    let Some(choice) = wire.choices.into_iter().next() else {
        return Err(malformed(PROVIDER, "the answer has no choices"));
    };
    let message = choice.message;
    // A call the token limit cut off has arguments that do not parse: dropped, as in a stream.
    let cut_off = choice.finish_reason.as_deref() == Some("length");
    let mut calls = Vec::with_capacity(message.tool_calls.len());
    for (index, call) in message.tool_calls.into_iter().enumerate() {
        let arguments = match arguments(&call.function.name, call.function.arguments) {
            Ok(arguments) => arguments,
            Err(_) if cut_off => continue,
            Err(error) => return Err(error),
        };
        // An empty id is no id (some local servers send one), as in a stream.
        let id = (call.id)
            .filter(|id| !id.is_empty())
            .unwrap_or_else(|| format!("call_{index}"));
        calls.push(ToolCall::new(id, call.function.name, arguments));
    }
    let refusal = message.refusal.filter(|text| !text.is_empty());
    let stop_reason = stop_reason(
        choice.finish_reason.as_deref(),
        !calls.is_empty(),
        refusal.is_some(),
    );
    let mut content = Content::default();
    if let Some(reasoning) = message.reasoning_content.or(message.reasoning)
        && !reasoning.is_empty()
    {
        content.push(ContentPart::reasoning(reasoning));
    }
    // A refusal is the answer's text (after any text, as a stream has it).
    let mut text = message.content.unwrap_or_default();
    text.extend(refusal);
    content.push_text(text);
    let message = Message::assistant_with_tool_calls(content, calls);
    Ok(ModelResponse::new(message, stop_reason)
        .with_usage(wire.usage.map_or(Usage::unreported(), usage)))
}

/// Arguments as JSON text (the standard), or as an object (some servers); none means `{}`.
fn arguments(
    name: &str,
    arguments: Option<serde_json::Value>,
) -> Result<serde_json::Value, ModelError> {
    match arguments {
        None | Some(serde_json::Value::Null) => Ok(json!({})),
        Some(serde_json::Value::String(text)) if text.trim().is_empty() => Ok(json!({})),
        Some(serde_json::Value::String(text)) => serde_json::from_str(&text).map_err(|error| {
            malformed(
                PROVIDER,
                &format!("the arguments of tool call `{name}` are not valid JSON"),
            )
            .with_source(error)
        }),
        Some(object) => Ok(object),
    }
}

/// Why the model stopped; a server that says `stop` (or nothing) while calling tools means
/// tool use, and while refusing (the answer had a `refusal`), a refusal.
pub(crate) fn stop_reason(
    finish_reason: Option<&str>,
    has_tool_calls: bool,
    refused: bool,
) -> StopReason {
    match finish_reason {
        Some("length") => StopReason::MaxTokens,
        Some("content_filter") => StopReason::ContentFilter,
        _ if refused => StopReason::Refusal,
        Some("tool_calls" | "function_call") => StopReason::ToolUse,
        _ if has_tool_calls => StopReason::ToolUse,
        _ => StopReason::EndTurn,
    }
}

/// Our usage; the prompt count includes the cached tokens, as ours does.
pub(crate) fn usage(wire: WireUsage) -> Usage {
    let cached = wire
        .prompt_tokens_details
        .map_or(0, |details| details.cached_tokens);
    Usage::new(wire.prompt_tokens, wire.completion_tokens).with_cache(cached, 0)
}
