//! Our requests to Bedrock's Converse format, and the answer's usage and stop reason back: pure
//! functions, tested with recorded wire JSON.

use std::borrow::Cow;

use hookchain_core::message::{Content, ContentPart, ImageSource};
use hookchain_core::model::{PromptCache, ToolChoice};
use hookchain_core::{Message, ModelRequest, Role, StopReason, Usage};
use serde_json::{Value, json};

use super::reasoning;
use super::wire::{
    Block, CachePoint, ConverseRequest, Image, ImageSource as WireImageSource, InferenceConfig,
    InputSchema, ResultBlock, SystemBlock, ToolConfig, ToolEntry, ToolResult, ToolSpec, ToolUse,
    Turn, WireUsage,
};
use crate::system_text::{json_instruction, system_texts};

/// The provider's name in errors and traces (OpenTelemetry's GenAI name for Bedrock).
pub(crate) const PROVIDER: &str = "aws.bedrock";

/// The most cache points Bedrock takes in one request.
const MAX_CACHE_POINTS: usize = 4;

/// The wire request for `request`; `fields` are the model's own request fields the builder
/// set (`additionalModelRequestFields`), which the request's extras of that name extend.
pub(crate) fn converse_request<'a>(
    request: &'a ModelRequest,
    fields: Option<&Value>,
) -> Result<ConverseRequest<'a>, UnsupportedImage> {
    // Converse has no JSON-schema mode for every model: a response format becomes an
    // instruction (as with Anthropic), which `ValidatedOutput` checks.
    let system_texts = system_texts(request, json_instruction(request));
    let cache = request.prompt_cache.as_deref();
    let prefix = cache.is_some_and(|cache| cache.prefix);
    let mut system: Vec<SystemBlock<'_>> =
        system_texts.into_iter().map(SystemBlock::Text).collect();
    let cached_system = prefix && !system.is_empty();
    if cached_system {
        system.push(SystemBlock::CachePoint(CachePoint::DEFAULT));
    }
    // The tools come before the system text in the prompt: a cache point after the system
    // text caches both; without system text, one after the tools does.
    let cached_tools = prefix && !cached_system && !request.tools.is_empty();
    let (mut messages, ends) = turns(&request.messages)?;
    if let Some(cache) = cache {
        mark_cache_points(
            &mut messages,
            &ends,
            cache,
            usize::from(cached_system || cached_tools),
        );
    }
    let mut extra = request.settings.extra.clone();
    let fields = merge_fields(fields, extra.remove("additionalModelRequestFields"));
    Ok(ConverseRequest {
        messages,
        system,
        inference_config: InferenceConfig {
            max_tokens: request.settings.max_tokens,
            temperature: request.settings.temperature,
            top_p: request.settings.top_p,
            stop_sequences: &request.settings.stop,
        },
        tool_config: tool_config(request, cached_tools),
        additional_model_request_fields: fields,
        extra,
    })
}

/// The builder's model fields, extended (key by key) by the request's.
fn merge_fields(builder: Option<&Value>, request: Option<Value>) -> Option<Value> {
    match (builder.cloned(), request) {
        (Some(Value::Object(mut ours)), Some(Value::Object(theirs))) => {
            ours.extend(theirs);
            Some(Value::Object(ours))
        }
        (ours, theirs) => theirs.or(ours),
    }
}

/// `toolConfig`: the tools, and the choice. Converse has no "none": with `ToolChoice::None`
/// the tools are not sent (a history with calls still needs the config, so then they are,
/// with the default choice).
fn tool_config(request: &ModelRequest, cached: bool) -> Option<ToolConfig<'_>> {
    if request.tools.is_empty() {
        return None;
    }
    let has_calls = request
        .messages
        .iter()
        .any(|message| !message.tool_calls.is_empty());
    let tool_choice = match &request.tool_choice {
        ToolChoice::None if !has_calls => return None,
        ToolChoice::Required => Some(json!({"any": {}})),
        ToolChoice::Tool(name) => Some(json!({"tool": {"name": name}})),
        // `Auto`, `None` with calls in the history, and choices this client does not know.
        _ => None,
    };
    let mut tools: Vec<ToolEntry<'_>> = request
        .tools
        .iter()
        .map(|spec| {
            ToolEntry::ToolSpec(ToolSpec {
                name: &spec.name,
                description: &spec.description,
                input_schema: InputSchema {
                    json: &spec.parameters,
                },
            })
        })
        .collect();
    if cached {
        tools.push(ToolEntry::CachePoint(CachePoint::DEFAULT));
    }
    Some(ToolConfig { tools, tool_choice })
}

/// Puts a cache point after each message of `cache.breakpoints` (a message that sent no block
/// gives its point to the message before it), the last ones first, within Bedrock's limit with
/// `taken` used already. Bedrock's cache points have its default TTL: the TTL is not sent.
fn mark_cache_points(
    turns: &mut [Turn<'_>],
    ends: &[Option<(usize, usize)>],
    cache: &PromptCache,
    taken: usize,
) {
    let mut left = MAX_CACHE_POINTS.saturating_sub(taken);
    // Inserting shifts the blocks after the point: insert from the end of the conversation.
    let mut points: Vec<(usize, usize)> = Vec::new();
    for &index in cache.breakpoints.iter().rev() {
        if left == 0 {
            break;
        }
        let at = ends
            .get(..=index.min(ends.len().saturating_sub(1)))
            .and_then(|ends| ends.iter().rev().flatten().next());
        if let Some(&point) = at
            && !points.contains(&point)
        {
            points.push(point);
            left -= 1;
        }
    }
    points.sort_unstable_by(|a, b| b.cmp(a));
    for (turn, block) in points {
        turns[turn]
            .content
            .insert(block + 1, Block::CachePoint(CachePoint::DEFAULT));
    }
}

/// The conversation as turns, and where each message's last block is (turn, block).
/// Consecutive messages of one role share a turn: Converse wants the results of one round of
/// calls in one user turn, and turns that alternate.
#[allow(clippy::type_complexity)]
fn turns(
    messages: &[Message],
) -> Result<(Vec<Turn<'_>>, Vec<Option<(usize, usize)>>), UnsupportedImage> {
    let mut turns: Vec<Turn<'_>> = Vec::new();
    let mut ends = Vec::with_capacity(messages.len());
    for message in messages {
        let (role, blocks) = match message.role {
            Role::System => {
                ends.push(None);
                continue;
            }
            Role::Assistant => ("assistant", assistant_blocks(message)),
            Role::Tool => ("user", vec![tool_result(message)?]),
            // Users, and a role this version does not know: the user's words.
            _ => ("user", user_blocks(&message.content)?),
        };
        // Converse rejects empty turns.
        if blocks.is_empty() {
            ends.push(None);
            continue;
        }
        match turns.last_mut() {
            Some(last) if last.role == role => last.content.extend(blocks),
            _ => turns.push(Turn {
                role,
                content: blocks,
            }),
        }
        let turn = turns.len() - 1;
        ends.push(Some((turn, turns[turn].content.len() - 1)));
    }
    Ok((turns, ends))
}

/// An image Converse cannot take: it reads images as bytes or from S3, never from a web URL.
#[derive(Debug, thiserror::Error)]
#[error(
    "Bedrock takes images as bytes (base64 or a `data:` URL) or from S3 (`s3://`), not from `{0}`"
)]
pub(crate) struct UnsupportedImage(pub(crate) String);

/// An image block: base64 as bytes, a `data:` URL decoded to its base64, an `s3://` URL as an
/// S3 location; the format from the media type or the extension.
fn image(source: &ImageSource) -> Result<Image<'_>, UnsupportedImage> {
    match source {
        ImageSource::Base64 { media_type, data } => Ok(Image {
            format: format_of(media_type),
            source: WireImageSource::Bytes(data),
        }),
        ImageSource::Url { url } => {
            if let Some(rest) = url.strip_prefix("data:")
                && let Some((media_type, data)) = rest.split_once(";base64,")
            {
                return Ok(Image {
                    format: format_of(media_type),
                    source: WireImageSource::Bytes(data),
                });
            }
            if url.starts_with("s3://") {
                let extension = url.rsplit('.').next().unwrap_or_default();
                return Ok(Image {
                    format: format_of(&format!("image/{}", extension.to_ascii_lowercase())),
                    source: WireImageSource::S3Location { uri: url },
                });
            }
            Err(UnsupportedImage(shown_url(url)))
        }
        _ => Err(UnsupportedImage(
            "an image source of a newer version".into(),
        )),
    }
}

/// A URL as an error may show it: without its query (it may hold a signature).
fn shown_url(url: &str) -> String {
    let shown = url.split(['?', '#']).next().unwrap_or(url);
    let mut shown: String = shown.chars().take(200).collect();
    if url.len() > shown.len() {
        shown.push('…');
    }
    shown
}

/// Converse's name of an image's format (`png`, `jpeg`, `gif`, `webp`); JPEG when unknown.
fn format_of(media_type: &str) -> &'static str {
    match media_type.trim().to_ascii_lowercase().as_str() {
        "image/png" => "png",
        "image/gif" => "gif",
        "image/webp" => "webp",
        _ => "jpeg",
    }
}

fn text_block<'a>(text: impl Into<Cow<'a, str>>) -> Block<'a> {
    Block::Text(text.into())
}

/// A user's content: text (empty text left out), images, other parts as text.
fn user_blocks(content: &Content) -> Result<Vec<Block<'_>>, UnsupportedImage> {
    let mut blocks = Vec::new();
    for part in content.parts() {
        match part {
            ContentPart::Text { text } if !text.is_empty() => blocks.push(text_block(text)),
            ContentPart::Image { source } => blocks.push(Block::Image(image(source)?)),
            ContentPart::Text { .. } => {}
            other => {
                let text = other.to_text_lossy();
                if !text.is_empty() {
                    blocks.push(text_block(text));
                }
            }
        }
    }
    Ok(blocks)
}

/// The model's own turn: the reasoning Bedrock wrote (from the message's metadata, signed or
/// redacted, which Bedrock requires back with tool results), its text, its calls. Reasoning
/// parts of the content are not sent: another provider's, or Bedrock's own shown as text, they
/// are not what Bedrock signed.
fn assistant_blocks(message: &Message) -> Vec<Block<'_>> {
    let mut blocks: Vec<Block<'_>> = reasoning::of(message)
        .map(Block::ReasoningContent)
        .collect();
    blocks.extend(
        message
            .content
            .parts()
            .iter()
            .filter_map(|part| match part {
                ContentPart::Text { text } if !text.is_empty() => Some(text_block(text)),
                _ => None,
            }),
    );
    blocks.extend(message.tool_calls.iter().map(|call| {
        Block::ToolUse(ToolUse {
            tool_use_id: &call.id,
            name: &call.name,
            input: &call.arguments,
        })
    }));
    blocks
}

/// A tool's result: its text, its JSON as JSON, its images, other parts as text; `error` when
/// the tool failed.
fn tool_result(message: &Message) -> Result<Block<'_>, UnsupportedImage> {
    let mut content = Vec::new();
    for part in message.content.parts() {
        match part {
            ContentPart::Json { value } => content.push(ResultBlock::Json(value)),
            ContentPart::Image { source } => content.push(ResultBlock::Image(image(source)?)),
            other => {
                let text = other.to_text_lossy();
                if !text.is_empty() {
                    content.push(ResultBlock::Text(text));
                }
            }
        }
    }
    // Converse rejects a result without content.
    if content.is_empty() {
        content.push(ResultBlock::Text(Cow::Borrowed("")));
    }
    Ok(Block::ToolResult(ToolResult {
        tool_use_id: message.tool_call_id.as_deref().unwrap_or_default(),
        content,
        status: message.is_error.then_some("error"),
    }))
}

/// Why the model stopped: `None` for a stop the answer cannot be used after (a malformed
/// tool call or result).
pub(crate) fn stop_reason(stop_reason: Option<&str>, has_tool_calls: bool) -> Option<StopReason> {
    Some(match stop_reason {
        Some("max_tokens" | "model_context_window_exceeded") => StopReason::MaxTokens,
        Some("stop_sequence") => StopReason::StopSequence,
        Some("guardrail_intervened" | "content_filtered") => StopReason::ContentFilter,
        Some("malformed_model_output" | "malformed_tool_use") => return None,
        Some("tool_use") => StopReason::ToolUse,
        // `end_turn`, and reasons added later.
        _ if has_tool_calls => StopReason::ToolUse,
        _ => StopReason::EndTurn,
    })
}

/// Our usage: the input count includes the cached tokens (Converse counts them apart).
pub(crate) fn usage(wire: WireUsage) -> Usage {
    Usage::new(
        wire.input_tokens
            .saturating_add(wire.cache_read_input_tokens)
            .saturating_add(wire.cache_write_input_tokens),
        wire.output_tokens,
    )
    .with_cache(wire.cache_read_input_tokens, wire.cache_write_input_tokens)
}
