//! The system text of a request, as providers without a system role in the conversation send
//! it apart: the system prompt, then the system messages, in order.

use std::borrow::Cow;

use hookchain_core::{Message, ModelRequest, Role};

/// What a response format becomes for a provider without a JSON-schema mode.
#[cfg(any(feature = "anthropic", feature = "bedrock"))]
pub(crate) fn json_instruction(request: &ModelRequest) -> Option<String> {
    request.response_format.as_ref().map(|format| {
        format!(
            "Answer with JSON only (no other text), following this JSON schema: {}",
            format.schema
        )
    })
}

/// The system prompt and the system messages (then `extra`, if any), empty texts left out.
pub(crate) fn system_texts(request: &ModelRequest, extra: Option<String>) -> Vec<Cow<'_, str>> {
    request
        .system_prompt
        .as_deref()
        .map(Cow::Borrowed)
        .into_iter()
        .chain(
            request
                .messages
                .iter()
                .filter(|message| message.role == Role::System)
                .map(Message::text),
        )
        .chain(extra.map(Cow::Owned))
        .filter(|text| !text.is_empty())
        .collect()
}
