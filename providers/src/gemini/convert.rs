//! Our requests to the Gemini wire format, and the answer's usage and finish reason back: pure
//! functions, tested with recorded wire JSON.

use std::borrow::Cow;
use std::collections::HashMap;

use hookchain_core::message::{Content, ContentPart, ImageSource};
use hookchain_core::model::ToolChoice;
use hookchain_core::tool::gemini_schema;
use hookchain_core::{Message, ModelRequest, Role, StopReason, Usage};
use serde_json::{Value, json};

use super::signatures;
use super::wire::{
    Blob, FileData, FunctionDeclaration, FunctionResponse, GenerateRequest, GenerationConfig,
    RequestCall, RequestPart, SystemInstruction, TextPart, ThinkingConfig, Tools, Turn,
    UsageMetadata,
};
use crate::system_text::system_texts;

/// The provider's name in errors and traces (OpenTelemetry's GenAI name for the Gemini API).
pub(crate) const PROVIDER: &str = "gcp.gemini";

/// The wire request for `request`: the system text apart, the conversation as alternating
/// `user` and `model` turns of parts.
pub(crate) fn generate_request<'a>(
    request: &'a ModelRequest,
    thinking: Option<ThinkingConfig>,
) -> GenerateRequest<'a> {
    // Gemini has no system role in the conversation: system messages join the system text.
    let system = system_texts(request, None);
    let format = request.response_format.as_ref();
    // Top-level extras go as they are; `generationConfig` ones join our generation config.
    let mut extra = request.settings.extra.clone();
    extra.remove("generationConfig");
    GenerateRequest {
        contents: turns(&request.messages),
        system_instruction: (!system.is_empty()).then(|| SystemInstruction {
            parts: [TextPart {
                text: system.join("\n\n"),
            }],
        }),
        tools: if request.tools.is_empty() {
            Vec::new()
        } else {
            vec![Tools {
                function_declarations: request
                    .tools
                    .iter()
                    .map(|spec| FunctionDeclaration {
                        name: &spec.name,
                        description: &spec.description,
                        parameters: gemini_schema(&spec.parameters),
                    })
                    .collect(),
            }]
        },
        tool_config: (!request.tools.is_empty())
            .then(|| tool_config(&request.tool_choice))
            .flatten(),
        generation_config: GenerationConfig {
            temperature: request.settings.temperature,
            top_p: request.settings.top_p,
            max_output_tokens: request.settings.max_tokens,
            stop_sequences: &request.settings.stop,
            response_mime_type: format.map(|_| "application/json"),
            response_schema: format.map(|format| gemini_schema(&format.schema)),
            thinking_config: thinking,
            extra: request
                .settings
                .extra
                .get("generationConfig")
                .and_then(Value::as_object),
        },
        extra,
    }
}

/// `toolConfig` for a tool choice; `None` leaves Gemini's default (`AUTO`).
fn tool_config(choice: &ToolChoice) -> Option<Value> {
    let config = match choice {
        ToolChoice::None => json!({"mode": "NONE"}),
        ToolChoice::Required => json!({"mode": "ANY"}),
        ToolChoice::Tool(name) => json!({"mode": "ANY", "allowedFunctionNames": [name]}),
        // `Auto`, and choices this client does not know yet.
        _ => return None,
    };
    Some(json!({"functionCallingConfig": config}))
}

/// The conversation as turns. Consecutive messages of one role share a turn: Gemini wants the
/// results of one round of calls in one `user` turn, in the order of the calls.
fn turns(messages: &[Message]) -> Vec<Turn<'_>> {
    // Tool messages the application wrote may not name their tool; their call does.
    let mut call_names: HashMap<&str, &str> = HashMap::new();
    let mut turns: Vec<Turn<'_>> = Vec::new();
    for message in messages {
        let (role, parts) = match message.role {
            Role::System => continue,
            Role::Assistant => {
                for call in &message.tool_calls {
                    call_names.insert(&call.id, &call.name);
                }
                ("model", model_parts(message))
            }
            Role::Tool => {
                let call_id = message.tool_call_id.as_deref().unwrap_or_default();
                let name = message
                    .name
                    .as_deref()
                    .or_else(|| call_names.get(call_id).copied())
                    .unwrap_or_default();
                ("user", tool_result_parts(name, message))
            }
            // Users, and a role this version does not know: the user's words.
            _ => ("user", user_parts(&message.content)),
        };
        // Gemini rejects turns without parts.
        if parts.is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some(last) if last.role == role => last.parts.extend(parts),
            _ => turns.push(Turn { role, parts }),
        }
    }
    turns
}

fn text_part<'a>(text: impl Into<Cow<'a, str>>) -> RequestPart<'a> {
    RequestPart {
        text: Some(text.into()),
        ..RequestPart::default()
    }
}

/// An image: inline bytes as `inlineData`; a URL as `fileData`, its type guessed from its
/// extension (Gemini requires one).
fn image_part(source: &ImageSource) -> Option<RequestPart<'_>> {
    match source {
        ImageSource::Base64 { media_type, data } => Some(RequestPart {
            inline_data: Some(Blob {
                mime_type: media_type,
                data,
            }),
            ..RequestPart::default()
        }),
        ImageSource::Url { url } => Some(RequestPart {
            file_data: Some(FileData {
                mime_type: image_type(url),
                file_uri: url,
            }),
            ..RequestPart::default()
        }),
        _ => None,
    }
}

/// The media type of an image URL, by its extension (JPEG when it has none we know).
fn image_type(url: &str) -> &'static str {
    let path = url
        .split(['?', '#'])
        .next()
        .unwrap_or(url)
        .to_ascii_lowercase();
    match path.rsplit('.').next() {
        Some("png") => "image/png",
        Some("webp") => "image/webp",
        Some("gif") => "image/gif",
        Some("heic") => "image/heic",
        Some("heif") => "image/heif",
        _ => "image/jpeg",
    }
}

/// A user's content: text (empty text left out) and images.
fn user_parts(content: &Content) -> Vec<RequestPart<'_>> {
    content
        .parts()
        .iter()
        .filter_map(|part| match part {
            ContentPart::Text { text } if !text.is_empty() => Some(text_part(text.as_str())),
            ContentPart::Image { source } => image_part(source),
            ContentPart::Text { .. } => None,
            other => Some(other.to_text_lossy())
                .filter(|text| !text.is_empty())
                .map(text_part),
        })
        .collect()
}

/// The model's own turn: its text, then its calls, each with the signature Gemini gave it.
/// Reasoning is left out: Gemini takes its thoughts back through the signatures, not as text.
fn model_parts(message: &Message) -> Vec<RequestPart<'_>> {
    let mut parts: Vec<RequestPart<'_>> = message
        .content
        .parts()
        .iter()
        .filter_map(|part| match part {
            ContentPart::Text { text } if !text.is_empty() => Some(text_part(text.as_str())),
            _ => None,
        })
        .collect();
    if let (Some(signature), Some(last)) = (signatures::of_text(message), parts.last_mut()) {
        last.thought_signature = Some(signature);
    }
    parts.extend(
        message
            .tool_calls
            .iter()
            .enumerate()
            .map(|(position, call)| RequestPart {
                function_call: Some(RequestCall {
                    name: &call.name,
                    args: &call.arguments,
                }),
                thought_signature: signatures::of_call(message, position, call),
                ..RequestPart::default()
            }),
    );
    parts
}

/// A tool's result: a `functionResponse` whose `response` is `{"result": …}` (`{"error": …}`
/// for a failure) — the JSON a tool returned as it is, anything else as text — then the images
/// it returned, as parts of the same turn.
fn tool_result_parts<'a>(name: &'a str, message: &'a Message) -> Vec<RequestPart<'a>> {
    let parts = message.content.parts();
    let value = match parts {
        [ContentPart::Json { value }] => (**value).clone(),
        _ => {
            let text: Vec<Cow<'_, str>> = parts
                .iter()
                .filter(|part| !matches!(part, ContentPart::Image { .. }))
                .map(ContentPart::to_text_lossy)
                .filter(|text| !text.is_empty())
                .collect();
            Value::String(text.join("\n"))
        }
    };
    let key = if message.is_error { "error" } else { "result" };
    let mut out = vec![RequestPart {
        function_response: Some(FunctionResponse {
            name,
            response: json!({ key: value }),
        }),
        ..RequestPart::default()
    }];
    out.extend(parts.iter().filter_map(|part| match part {
        ContentPart::Image { source } => image_part(source),
        _ => None,
    }));
    out
}

/// Why the model stopped, for a `finishReason`: `None` for the reasons that make the answer
/// unusable (a malformed or unexpected function call), which are errors.
pub(crate) fn stop_reason(finish_reason: &str, has_tool_calls: bool) -> Option<StopReason> {
    Some(match finish_reason {
        "MAX_TOKENS" => StopReason::MaxTokens,
        "SAFETY"
        | "RECITATION"
        | "BLOCKLIST"
        | "PROHIBITED_CONTENT"
        | "SPII"
        | "IMAGE_SAFETY"
        | "IMAGE_PROHIBITED_CONTENT"
        | "IMAGE_RECITATION" => StopReason::ContentFilter,
        "MALFORMED_FUNCTION_CALL" | "UNEXPECTED_TOOL_CALL" => return None,
        // `STOP`, `OTHER`, and reasons added later.
        _ if has_tool_calls => StopReason::ToolUse,
        _ => StopReason::EndTurn,
    })
}

/// Our usage: the prompt count includes the cached tokens; the thoughts are output.
pub(crate) fn usage(wire: UsageMetadata) -> Usage {
    Usage::new(
        wire.prompt_token_count
            .saturating_add(wire.tool_use_prompt_token_count),
        wire.candidates_token_count
            .saturating_add(wire.thoughts_token_count),
    )
    .with_cache(wire.cached_content_token_count, 0)
}
