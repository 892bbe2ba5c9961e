//! [`TiktokenCounter`]: exact token counts for OpenAI's models, with their BPE tables.

use std::fmt;

use tiktoken_rs::CoreBPE;
use tiktoken_rs::tokenizer::Tokenizer;

use super::{IMAGE_TOKENS, Piece, TokenCounter, visit_pieces};
use crate::message::Message;

/// Counts tokens exactly as OpenAI's tokenizers do (`o200k_base` for GPT-4o and later,
/// `cl100k_base` for GPT-4 and GPT-3.5), with the framing of OpenAI's chat format: 3 tokens
/// per message, 1 more for a name (OpenAI's cookbook). Images count 85 tokens each.
///
/// Exact for OpenAI's models; for other models it is a better estimate than characters, not
/// the truth. The tables are bundled with the crate (no download) and loaded once, on first
/// use.
///
/// ```
/// use hookchain::Message;
/// use hookchain::builtin::tokens::{TiktokenCounter, TokenCounter};
///
/// let counter = TiktokenCounter::for_model("gpt-4o")?;
/// // "Hello world" is 2 tokens in o200k_base, plus 3 of framing.
/// assert_eq!(counter.count_message(&Message::user("Hello world")), 5);
/// # Ok::<(), hookchain::builtin::tokens::UnknownTokenizer>(())
/// ```
#[derive(Clone, Copy)]
pub struct TiktokenCounter {
    bpe: &'static CoreBPE,
    tokenizer: Tokenizer,
}

/// No OpenAI tokenizer is known for the model name given to [`TiktokenCounter::for_model`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no OpenAI tokenizer is known for the model `{model}`")]
pub struct UnknownTokenizer {
    model: String,
}

impl UnknownTokenizer {
    /// The model name that was given.
    #[must_use]
    pub fn model(&self) -> &str {
        &self.model
    }
}

impl TiktokenCounter {
    /// The counter of `model` (`"gpt-4o"`, `"gpt-4.1-mini"`, `"gpt-3.5-turbo"`, …), by
    /// OpenAI's model-name prefixes.
    pub fn for_model(model: &str) -> Result<Self, UnknownTokenizer> {
        let tokenizer =
            tiktoken_rs::tokenizer::get_tokenizer(model).ok_or_else(|| UnknownTokenizer {
                model: model.to_owned(),
            })?;
        Ok(Self::with(tokenizer))
    }

    /// The `o200k_base` tokenizer (GPT-4o, GPT-4.1, o-series).
    #[must_use]
    pub fn o200k_base() -> Self {
        Self::with(Tokenizer::O200kBase)
    }

    /// The `cl100k_base` tokenizer (GPT-4, GPT-3.5).
    #[must_use]
    pub fn cl100k_base() -> Self {
        Self::with(Tokenizer::Cl100kBase)
    }

    fn with(tokenizer: Tokenizer) -> Self {
        // The tables are bundled with tiktoken-rs and parsed once per process.
        let bpe = match tokenizer {
            Tokenizer::O200kBase => tiktoken_rs::o200k_base_singleton(),
            Tokenizer::O200kHarmony => tiktoken_rs::o200k_harmony_singleton(),
            Tokenizer::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
            Tokenizer::P50kBase => tiktoken_rs::p50k_base_singleton(),
            Tokenizer::P50kEdit => tiktoken_rs::p50k_edit_singleton(),
            Tokenizer::R50kBase | Tokenizer::Gpt2 => tiktoken_rs::r50k_base_singleton(),
        };
        Self { bpe, tokenizer }
    }

    /// The tokens of `text`, without framing.
    #[must_use]
    pub fn count_text(&self, text: &str) -> u64 {
        self.bpe.encode_ordinary(text).len() as u64
    }
}

// Not listed in the message of a value that is not one (the trait's note names the choices).
#[diagnostic::do_not_recommend]
impl TokenCounter for TiktokenCounter {
    fn count_message(&self, message: &Message) -> u64 {
        const PER_MESSAGE: u64 = 3;
        const PER_NAME: u64 = 1;
        let mut tokens = PER_MESSAGE;
        if message.name.is_some() {
            tokens += PER_NAME;
        }
        visit_pieces(message, |piece| {
            let count = match piece {
                Piece::Text(text) => self.count_text(text),
                Piece::Placeholder(text) => self.count_text(&text),
                Piece::Json(value) => self.count_text(&value.to_string()),
                Piece::Image => IMAGE_TOKENS,
            };
            tokens = tokens.saturating_add(count);
        });
        tokens
    }
}

impl fmt::Debug for TiktokenCounter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TiktokenCounter")
            .field("tokenizer", &self.tokenizer)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::message::ToolCall;

    #[test]
    fn models_pick_their_tokenizer_and_unknown_ones_are_an_error() {
        assert_eq!(
            TiktokenCounter::for_model("gpt-4o").map(|c| c.tokenizer),
            Ok(Tokenizer::O200kBase)
        );
        assert_eq!(
            TiktokenCounter::for_model("gpt-4").map(|c| c.tokenizer),
            Ok(Tokenizer::Cl100kBase)
        );
        let unknown = TiktokenCounter::for_model("llama-3").unwrap_err();
        assert_eq!(unknown.model(), "llama-3");
    }

    #[test]
    fn names_and_tool_calls_count() {
        let counter = TiktokenCounter::o200k_base();
        let plain = counter.count_message(&Message::user("hello"));
        let named = counter.count_message(&Message::user("hello").with_name("ada"));
        assert_eq!(named, plain + 1 + counter.count_text("ada"));
        let call = ToolCall::new("c1", "search", json!({ "q": "paris" }));
        let calling = Message::assistant_with_tool_calls("", [call]);
        assert_eq!(
            counter.count_message(&calling),
            3 + counter.count_text("search") + counter.count_text(r#"{"q":"paris"}"#)
        );
    }
}
