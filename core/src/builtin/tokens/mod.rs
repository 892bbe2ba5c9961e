//! Token counting: how long a history is in a model's tokens, and how much fits in its
//! context window.
//!
//! [`Summarization`](super::Summarization) and [`ContextEditing`](super::ContextEditing)
//! measure histories with a [`TokenCounter`]. [`ApproximateCounter`] (the default) needs
//! nothing and is close enough for triggers; `TiktokenCounter` (feature `tiktoken`) counts
//! exactly for OpenAI's models. A [`ModelProfile`] says how large the model's context window
//! is, for settings given as a fraction of it.
//!
//! ```
//! use hookchain::Message;
//! use hookchain::builtin::tokens::{ApproximateCounter, ModelProfile, TokenCounter};
//!
//! let counter = ApproximateCounter::new();
//! let history = [Message::user("What is the capital of France?")];
//! // 30 characters: 8 tokens of text (a token per 4 characters, rounded up), 4 of framing.
//! assert_eq!(counter.count_messages(&history), 12);
//!
//! let profile = ModelProfile::new(128_000);
//! assert_eq!(profile.tokens_at(0.5), 64_000);
//! ```

mod approximate;
mod profile;
#[cfg(feature = "tiktoken")]
#[cfg_attr(docsrs, doc(cfg(feature = "tiktoken")))]
mod tiktoken;

pub use approximate::ApproximateCounter;
pub use profile::ModelProfile;
#[cfg(feature = "tiktoken")]
#[cfg_attr(docsrs, doc(cfg(feature = "tiktoken")))]
pub use tiktoken::{TiktokenCounter, UnknownTokenizer};

use crate::message::{ContentPart, Message, ResourceContents};

/// Counts the tokens a model reads for messages.
///
/// Implement it for your model's tokenizer; [`ApproximateCounter`] and `TiktokenCounter`
/// (feature `tiktoken`) are provided. A count includes what the message costs besides its
/// text (the role and framing a provider adds around each message).
///
/// ```
/// use hookchain::Message;
/// use hookchain::builtin::tokens::TokenCounter;
///
/// /// One token per word, and one per message.
/// struct Words;
///
/// impl TokenCounter for Words {
///     fn count_message(&self, message: &Message) -> u64 {
///         1 + message.text().split_whitespace().count() as u64
///     }
/// }
///
/// assert_eq!(Words.count_messages(&[Message::user("one two three")]), 4);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a token counter",
    label = "not a token counter",
    note = "a token counter is an `ApproximateCounter`, a `TiktokenCounter` (feature `tiktoken`), \
            or a type with a hand-written `impl TokenCounter` (`count_message`); a closure is \
            not one: put it in a type of yours that implements the trait"
)]
pub trait TokenCounter: Send + Sync {
    /// The tokens of `message`: its text, reasoning, tool calls (name and arguments), images,
    /// a tool result's JSON (as compact JSON text) and resource links (their URI, name, title,
    /// description and media type, as text), and its framing.
    fn count_message(&self, message: &Message) -> u64;

    /// The tokens of `messages` (by default the sum of each message's count).
    fn count_messages(&self, messages: &[Message]) -> u64 {
        messages
            .iter()
            .map(|message| self.count_message(message))
            .fold(0, u64::saturating_add)
    }
}

#[diagnostic::do_not_recommend]
impl<C: TokenCounter + ?Sized> TokenCounter for &C {
    fn count_message(&self, message: &Message) -> u64 {
        (**self).count_message(message)
    }

    fn count_messages(&self, messages: &[Message]) -> u64 {
        (**self).count_messages(messages)
    }
}

#[diagnostic::do_not_recommend]
impl<C: TokenCounter + ?Sized> TokenCounter for std::sync::Arc<C> {
    fn count_message(&self, message: &Message) -> u64 {
        (**self).count_message(message)
    }

    fn count_messages(&self, messages: &[Message]) -> u64 {
        (**self).count_messages(messages)
    }
}

/// What a counter reads of a message besides its framing: the texts it counts, and the
/// images, which have no text.
pub(crate) enum Piece<'a> {
    /// Text the tokenizer reads.
    Text(&'a str),
    /// Tool-call arguments (JSON) the tokenizer reads once written out.
    Json(&'a serde_json::Value),
    /// An image (its tokens depend on its size, which a counter cannot see).
    Image,
    /// The text a provider sends in place of a part it cannot send (an audio clip, a binary
    /// resource): a short placeholder, never the bytes.
    Placeholder(String),
}

/// Calls `visit` with every piece of `message` a model reads.
pub(crate) fn visit_pieces<'a>(message: &'a Message, mut visit: impl FnMut(Piece<'a>)) {
    for part in message.content.parts() {
        match part {
            ContentPart::Text { text } => visit(Piece::Text(text)),
            ContentPart::Reasoning(reasoning) => visit(Piece::Text(&reasoning.text)),
            ContentPart::RedactedReasoning { data } => visit(Piece::Text(data)),
            ContentPart::Image { .. } => visit(Piece::Image),
            // What the providers send for them: compact JSON, a link's line of text.
            ContentPart::Json { value } => visit(Piece::Json(value)),
            ContentPart::ResourceLink(link) => {
                [Some(&link.uri), Some(&link.name)]
                    .into_iter()
                    .chain([&link.title, &link.description, &link.mime_type].map(Option::as_ref))
                    .flatten()
                    .for_each(|text| visit(Piece::Text(text)));
            }
            ContentPart::Resource(resource) => match &resource.contents {
                // Its text with a line naming it, as the providers send it.
                ResourceContents::Text(text) => {
                    [Some(&resource.uri), resource.mime_type.as_ref(), Some(text)]
                        .into_iter()
                        .flatten()
                        .for_each(|text| visit(Piece::Text(text)));
                }
                _ => visit(Piece::Placeholder(part.to_text_lossy().into_owned())),
            },
            ContentPart::Audio(_) => visit(Piece::Placeholder(part.to_text_lossy().into_owned())),
        }
    }
    for call in &message.tool_calls {
        visit(Piece::Text(&call.name));
        visit(Piece::Json(&call.arguments));
    }
    if let Some(name) = &message.name {
        visit(Piece::Text(name));
    }
}

/// The tokens an image is counted as: OpenAI's price of a low-detail image (85), a middle
/// ground between a thumbnail and a full page (a counter cannot see the image's size).
pub(crate) const IMAGE_TOKENS: u64 = 85;
