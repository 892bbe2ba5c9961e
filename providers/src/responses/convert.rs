//! Our requests to the Responses wire format, and the answer's usage and stop reason back: pure
//! functions, tested with recorded wire JSON.

use std::borrow::Cow;

use hookchain_core::message::{Content, ContentPart};
use hookchain_core::model::ToolChoice;
use hookchain_core::{Message, ModelRequest, Role, StopReason, Usage};
use serde_json::{Value, json};

use super::reasoning_items;
use super::wire::{
    FunctionTool, InputContent, InputFunctionCall, InputFunctionCallOutput, InputItem,
    InputMessage, ReasoningConfig, ResponsesRequest, WireUsage,
};
use crate::system_text::system_texts;

/// The provider's name in errors and traces (OpenTelemetry's GenAI name for OpenAI).
pub(crate) const PROVIDER: &str = "openai";

/// The model's own options that shape the wire request.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Options<'a> {
    pub(crate) model: &'a str,
    pub(crate) parallel_tool_calls: Option<bool>,
    pub(crate) reasoning_effort: Option<&'a str>,
    pub(crate) reasoning_summary: bool,
    pub(crate) store: bool,
    /// Whether the model reasons: then, unstored, its reasoning comes back encrypted.
    pub(crate) reasons: bool,
    pub(crate) stream: bool,
}

/// The wire request for `request`: the system text as `instructions`, the conversation as
/// input items.
pub(crate) fn responses_request<'a>(
    request: &'a ModelRequest,
    options: Options<'a>,
) -> ResponsesRequest<'a> {
    // The system prompt and the system messages: the Responses API's `instructions`.
    let system = system_texts(request, None);
    let has_tools = !request.tools.is_empty();
    let reasoning = (options.reasoning_effort.is_some() || options.reasoning_summary).then(|| {
        ReasoningConfig {
            effort: options.reasoning_effort,
            summary: options.reasoning_summary.then_some("auto"),
        }
    });
    ResponsesRequest {
        model: options.model,
        instructions: (!system.is_empty()).then(|| system.join("\n\n")),
        input: request.messages.iter().flat_map(items).collect(),
        tools: request
            .tools
            .iter()
            .map(|spec| FunctionTool {
                kind: "function",
                name: &spec.name,
                description: &spec.description,
                parameters: &spec.parameters,
                strict: false,
            })
            .collect(),
        tool_choice: has_tools
            .then(|| tool_choice(&request.tool_choice))
            .flatten(),
        parallel_tool_calls: options.parallel_tool_calls.filter(|_| has_tools),
        temperature: request.settings.temperature,
        top_p: request.settings.top_p,
        max_output_tokens: request.settings.max_tokens,
        text: request.response_format.as_ref().map(|format| {
            json!({"format": {
                "type": "json_schema",
                "name": format.name,
                "schema": format.schema,
                "strict": format.strict,
            }})
        }),
        reasoning,
        store: options.store,
        // Unstored, the reasoning is lost unless it comes back encrypted with the answer (and
        // goes back with the history); a model that does not reason rejects the ask.
        include: if !options.store && options.reasons {
            vec!["reasoning.encrypted_content"]
        } else {
            Vec::new()
        },
        stream: options.stream,
        prompt_cache_key: request
            .prompt_cache
            .as_ref()
            .and_then(|cache| cache.key.as_deref()),
        extra: &request.settings.extra,
    }
}

/// `tool_choice`; `None` leaves the API's default (`auto`).
fn tool_choice(choice: &ToolChoice) -> Option<Value> {
    match choice {
        ToolChoice::None => Some(json!("none")),
        ToolChoice::Required => Some(json!("required")),
        ToolChoice::Tool(name) => Some(json!({"type": "function", "name": name})),
        // `Auto`, and choices this client does not know yet.
        _ => None,
    }
}

/// The input items of one message.
fn items(message: &Message) -> Vec<InputItem<'_>> {
    match message.role {
        // In `instructions`.
        Role::System => Vec::new(),
        Role::Assistant => assistant_items(message),
        Role::Tool => vec![InputItem::FunctionCallOutput(InputFunctionCallOutput {
            kind: "function_call_output",
            call_id: message.tool_call_id.as_deref().unwrap_or_default(),
            output: message.content.to_text_lossy(),
        })],
        // Users, and a role this version does not know: the user's words.
        _ => {
            let content = user_content(&message.content);
            if content.is_empty() {
                return Vec::new();
            }
            vec![InputItem::Message(InputMessage {
                kind: "message",
                role: "user",
                content,
            })]
        }
    }
}

/// A user's content: text (empty text left out) and images; JSON and links as text.
fn user_content(content: &Content) -> Vec<InputContent<'_>> {
    content
        .parts()
        .iter()
        .filter_map(|part| match part {
            ContentPart::Image { source } => Some(InputContent::InputImage {
                image_url: source.to_url(),
            }),
            other => Some(other.to_text_lossy())
                .filter(|text| !text.is_empty())
                .map(|text| InputContent::InputText { text }),
        })
        .collect()
}

/// The model's own turn: its reasoning items (what it thought before writing the rest), its
/// text, then its calls. Reasoning parts are not sent as text: the reasoning items carry them.
fn assistant_items(message: &Message) -> Vec<InputItem<'_>> {
    let mut items: Vec<InputItem<'_>> = reasoning_items::of(message)
        .map(InputItem::Reasoning)
        .collect();
    let text: Vec<InputContent<'_>> = message
        .content
        .parts()
        .iter()
        .filter_map(|part| match part {
            ContentPart::Text { text } if !text.is_empty() => Some(InputContent::OutputText {
                text: Cow::Borrowed(text),
                annotations: [],
            }),
            _ => None,
        })
        .collect();
    if !text.is_empty() {
        items.push(InputItem::Message(InputMessage {
            kind: "message",
            role: "assistant",
            content: text,
        }));
    }
    items.extend(message.tool_calls.iter().map(|call| {
        InputItem::FunctionCall(InputFunctionCall {
            kind: "function_call",
            call_id: &call.id,
            name: &call.name,
            arguments: call.arguments.to_string(),
        })
    }));
    items
}

/// Why the model stopped, for a response's `status` and `incomplete_details.reason`: an
/// incomplete answer was cut by the token limit, unless a filter stopped it.
pub(crate) fn stop_reason(
    status: &str,
    incomplete_reason: Option<&str>,
    has_tool_calls: bool,
    refused: bool,
) -> StopReason {
    match (status, incomplete_reason) {
        ("incomplete", Some("content_filter")) => StopReason::ContentFilter,
        ("incomplete", _) => StopReason::MaxTokens,
        _ if refused => StopReason::Refusal,
        _ if has_tool_calls => StopReason::ToolUse,
        _ => StopReason::EndTurn,
    }
}

/// Our usage: the input count includes the cached tokens, the output the reasoning, as ours do.
pub(crate) fn usage(wire: WireUsage) -> Usage {
    let cached = wire
        .input_tokens_details
        .map_or(0, |details| details.cached_tokens);
    Usage::new(wire.input_tokens, wire.output_tokens).with_cache(cached, 0)
}
