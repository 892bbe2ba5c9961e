//! [`ApproximateCounter`]: tokens estimated from characters, with no tokenizer.

use super::{IMAGE_TOKENS, Piece, TokenCounter, visit_pieces};
use crate::message::Message;

/// Estimates tokens from characters: one token per `chars_per_token` characters (4 by
/// default, rounded up), plus `per_message` tokens of framing per message (4 by default),
/// and 85 per image.
///
/// Four characters per token is the usual rule of thumb for English with OpenAI's and
/// Anthropic's tokenizers; code, numbers and other languages take more tokens per character,
/// so set a lower ratio (3, say) to err on the safe side. Tool calls count their name and
/// their arguments as JSON text; reasoning counts as text; so does a tool result's JSON
/// (written out compactly) and the fields of a resource link. An image counts 85 whatever its
/// size (OpenAI's price of a low-detail image): the counter cannot see its size.
///
/// ```
/// use hookchain::Message;
/// use hookchain::builtin::tokens::{ApproximateCounter, TokenCounter};
///
/// let counter = ApproximateCounter::new().chars_per_token(3).per_message(3);
/// // "Hello!" is 6 characters: 2 tokens, plus 3 of framing.
/// assert_eq!(counter.count_message(&Message::user("Hello!")), 5);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApproximateCounter {
    chars_per_token: u64,
    per_message: u64,
}

impl Default for ApproximateCounter {
    fn default() -> Self {
        Self::new()
    }
}

impl ApproximateCounter {
    /// 4 characters per token, 4 tokens of framing per message.
    #[must_use]
    pub const fn new() -> Self {
        Self {
            chars_per_token: 4,
            per_message: 4,
        }
    }

    /// Characters per token; 0 is taken as 1 (a count never divides by zero).
    #[must_use]
    pub const fn chars_per_token(mut self, chars: u64) -> Self {
        self.chars_per_token = if chars == 0 { 1 } else { chars };
        self
    }

    /// Tokens of framing per message (the role and separators a provider adds).
    #[must_use]
    pub const fn per_message(mut self, tokens: u64) -> Self {
        self.per_message = tokens;
        self
    }
}

// Not listed in the message of a value that is not one (the trait's note names the choices).
#[diagnostic::do_not_recommend]
impl TokenCounter for ApproximateCounter {
    fn count_message(&self, message: &Message) -> u64 {
        let mut chars: u64 = 0;
        let mut images: u64 = 0;
        visit_pieces(message, |piece| match piece {
            Piece::Text(text) => chars = chars.saturating_add(text.chars().count() as u64),
            Piece::Placeholder(text) => chars = chars.saturating_add(text.chars().count() as u64),
            Piece::Json(value) => chars = chars.saturating_add(json_chars(value)),
            Piece::Image => images += 1,
        });
        chars
            .div_ceil(self.chars_per_token)
            .saturating_add(images.saturating_mul(IMAGE_TOKENS))
            .saturating_add(self.per_message)
    }
}

/// The length of `value` written as compact JSON, without writing it out.
fn json_chars(value: &serde_json::Value) -> u64 {
    use serde_json::Value;
    let string = |s: &str| s.chars().count() as u64 + 2;
    match value {
        Value::Null => 4,
        Value::Bool(b) => {
            if *b {
                4
            } else {
                5
            }
        }
        Value::Number(n) => n.to_string().len() as u64,
        Value::String(s) => string(s),
        Value::Array(items) => {
            2 + items.iter().map(json_chars).sum::<u64>() + items.len().saturating_sub(1) as u64
        }
        Value::Object(map) => {
            2 + map
                .iter()
                .map(|(key, value)| string(key) + 1 + json_chars(value))
                .sum::<u64>()
                + map.len().saturating_sub(1) as u64
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::message::{ContentPart, ToolCall};

    #[test]
    fn json_length_is_the_compact_form() {
        for value in [
            json!(null),
            json!({ "q": "paris", "n": [1, 2.5, true], "o": {} }),
            json!(["é", false]),
        ] {
            assert_eq!(json_chars(&value), value.to_string().chars().count() as u64);
        }
    }

    #[test]
    fn tool_calls_and_images_count() {
        let counter = ApproximateCounter::new();
        let call = ToolCall::new("c1", "search", json!({ "q": "paris" }));
        // "search" (6) + {"q":"paris"} (13) = 19 chars: 5 tokens, + 4.
        let message = Message::assistant_with_tool_calls("", [call]);
        assert_eq!(counter.count_message(&message), 9);
        let image = Message::user(vec![ContentPart::image_url("https://x/y.png")]);
        assert_eq!(counter.count_message(&image), IMAGE_TOKENS + 4);
    }

    #[test]
    fn a_rich_tool_result_counts_its_json_links_and_images() {
        let counter = ApproximateCounter::new();
        let result = Message::user(vec![
            ContentPart::text("abcd"),
            // {"q":"paris"}: 13 chars.
            ContentPart::json(json!({ "q": "paris" })),
            // "a:b" and "cd": 5 chars.
            ContentPart::resource_link("a:b", "cd"),
            ContentPart::image_url("https://x/y.png"),
        ]);
        // 4 + 13 + 5 = 22 chars: 6 tokens, + an image, + 4 of framing.
        assert_eq!(counter.count_message(&result), 6 + IMAGE_TOKENS + 4);
    }

    #[test]
    fn audio_and_binary_resources_count_as_their_placeholders_never_their_bytes() {
        let counter = ApproximateCounter::new();
        let result = Message::user(vec![
            // What a provider sends, "[audio: audio/wav, 3000000 bytes]": 33 chars.
            ContentPart::audio_base64("audio/wav", "A".repeat(4_000_000)),
            // "t:a", "text/plain" and "hello": 18 chars.
            ContentPart::resource_text("t:a", "text/plain", "hello"),
        ]);
        // 33 + 18 = 51 chars: 13 tokens, + 4 of framing.
        assert_eq!(counter.count_message(&result), 17);
    }
}
