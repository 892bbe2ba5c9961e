//! What a message says: text, images, the model's reasoning, and what tools return (JSON,
//! links to resources, resources themselves, audio), in order.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};

use super::{Audio, EmbeddedResource, ResourceLink};

/// The content of a [`Message`](super::Message): a sequence of [`ContentPart`]s.
///
/// Most messages are one piece of text, and that case costs no more than a `String`: it
/// compares equal to a `&str`, displays as its text, and serializes as a JSON string (the form
/// messages had before content parts existed, so older checkpoints and threads still load).
/// Content with images or reasoning serializes as an array of parts.
///
/// A tool's result is content too: a tool may return images, audio, structured JSON,
/// resources and links to resources beside its text (see [`Tool::call`](crate::Tool::call)).
///
/// ```
/// use hookchain::message::{Content, ContentPart};
///
/// let plain = Content::from("What is in this picture?");
/// assert_eq!(plain, "What is in this picture?");
///
/// let mut asking = plain.clone();
/// asking.push(ContentPart::image_url("https://example.com/cat.png"));
/// assert_eq!(asking.parts().len(), 2);
/// assert_eq!(asking.text(), "What is in this picture?"); // the text parts only
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Content {
    repr: Repr,
}

// One part inline: a text message allocates its string and nothing else, and `Content` is
// as small as a `String` (24 bytes: the parts other than text are boxed so that they fit in
// the niche of the string's capacity). Messages then stay at 128 bytes, which the compiler
// still moves without calling `memcpy` (a test holds the size).
#[derive(Clone, PartialEq, Eq)]
enum Repr {
    One(ContentPart),
    Many(Box<[ContentPart]>),
}

/// One part of a message's [`Content`].
///
/// Which parts a message holds depends on who wrote it: text anywhere; images in user messages
/// and tool results; reasoning in assistant messages; [`Json`](Self::Json),
/// [`ResourceLink`](Self::ResourceLink), [`Resource`](Self::Resource) and
/// [`Audio`](Self::Audio) in tool results.
///
/// Providers send what they support: a part a provider has no form for (reasoning for most
/// OpenAI-compatible servers, a reasoning block without the provider's signature) is left out
/// of the request, and a tool result's part a provider cannot take is sent as text (see
/// [`to_text_lossy`](Self::to_text_lossy)); each provider's docs say which. The parts other
/// than text are boxed, so that a text part costs no more than its `String`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ContentPart {
    /// A piece of text.
    Text {
        /// The text.
        text: String,
    },
    /// An image the model looks at (user messages).
    Image {
        /// Where the image comes from.
        source: Box<ImageSource>,
    },
    /// The model's reasoning ("thinking") before its answer (assistant messages).
    Reasoning(Box<Reasoning>),
    /// Reasoning the provider returned encrypted (Anthropic's redacted thinking): opaque data
    /// to send back as it is.
    RedactedReasoning {
        /// The provider's opaque data.
        data: Box<str>,
    },
    /// Structured data a tool returned (tool results): providers send it as compact JSON text.
    Json {
        /// The data.
        value: Box<serde_json::Value>,
    },
    /// A link to a resource a tool points at instead of returning it (tool results).
    ResourceLink(Box<ResourceLink>),
    /// A resource a tool returned with its contents, text or bytes (tool results).
    Resource(Box<EmbeddedResource>),
    /// An audio clip a tool returned (tool results): no provider takes it yet, and the model
    /// reads a placeholder naming its type and size.
    Audio(Box<Audio>),
}

/// The model's reasoning ("thinking") before its answer: a [`ContentPart::Reasoning`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Reasoning {
    /// The reasoning text.
    pub text: String,
    /// The provider's signature of the reasoning (Anthropic), which it requires when the
    /// reasoning is sent back to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

impl Reasoning {
    /// Reasoning without a signature.
    pub fn new(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            signature: None,
        }
    }

    /// The reasoning with the provider's `signature`.
    #[must_use]
    pub fn signed(mut self, signature: impl Into<String>) -> Self {
        self.signature = Some(signature.into());
        self
    }
}

/// Where an [`Image`](ContentPart::Image) comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ImageSource {
    /// An image the provider fetches (an `https:` or `data:` URL).
    Url {
        /// The URL.
        url: String,
    },
    /// An image sent inline.
    Base64 {
        /// Its media type (`image/png`, `image/jpeg`, …).
        media_type: String,
        /// The image's bytes, base64-encoded.
        data: String,
    },
}

impl ContentPart {
    /// A text part.
    pub fn text(text: impl Into<String>) -> Self {
        ContentPart::Text { text: text.into() }
    }

    /// An image the provider fetches from `url`.
    pub fn image_url(url: impl Into<String>) -> Self {
        ContentPart::Image {
            source: Box::new(ImageSource::Url { url: url.into() }),
        }
    }

    /// An inline image: `data` is the image's bytes base64-encoded, `media_type` its type
    /// (`image/png`, …).
    pub fn image_base64(media_type: impl Into<String>, data: impl Into<String>) -> Self {
        ContentPart::Image {
            source: Box::new(ImageSource::Base64 {
                media_type: media_type.into(),
                data: data.into(),
            }),
        }
    }

    /// A reasoning part without a signature.
    pub fn reasoning(text: impl Into<String>) -> Self {
        ContentPart::Reasoning(Box::new(Reasoning::new(text)))
    }

    /// A reasoning part with the provider's `signature`.
    pub fn signed_reasoning(text: impl Into<String>, signature: impl Into<String>) -> Self {
        ContentPart::Reasoning(Box::new(Reasoning::new(text).signed(signature)))
    }

    /// A redacted reasoning part: the provider's opaque `data`.
    pub fn redacted_reasoning(data: impl Into<Box<str>>) -> Self {
        ContentPart::RedactedReasoning { data: data.into() }
    }

    /// A part holding structured data (a tool's result).
    ///
    /// ```
    /// use hookchain::message::ContentPart;
    ///
    /// let part = ContentPart::json(serde_json::json!({"temperature": 18}));
    /// assert_eq!(part.to_text_lossy(), r#"{"temperature":18}"#);
    /// ```
    pub fn json(value: serde_json::Value) -> Self {
        ContentPart::Json {
            value: Box::new(value),
        }
    }

    /// A link to the resource at `uri`, named `name` (a tool's result); for a title, a
    /// description or a media type, make a [`ResourceLink`] and convert it.
    pub fn resource_link(uri: impl Into<String>, name: impl Into<String>) -> Self {
        ContentPart::ResourceLink(Box::new(ResourceLink::new(uri, name)))
    }

    /// A resource at `uri` a tool returns whole, whose contents are `text`, of type `mime_type`
    /// (`text/plain`, …); without a media type, make an [`EmbeddedResource`] and convert it.
    ///
    /// ```
    /// use hookchain::message::ContentPart;
    ///
    /// let part = ContentPart::resource_text("file:///srv/a.txt", "text/plain", "hello");
    /// assert_eq!(part.to_text_lossy(), "[resource: file:///srv/a.txt (text/plain)]\nhello");
    /// ```
    pub fn resource_text(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        Self::from(EmbeddedResource::text(uri, text).with_mime_type(mime_type))
    }

    /// A resource at `uri` a tool returns whole, whose contents are bytes, `data`
    /// base64-encoded, of type `mime_type` (`application/pdf`, …).
    pub fn resource_blob(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        data: impl Into<String>,
    ) -> Self {
        Self::from(EmbeddedResource::blob(uri, data).with_mime_type(mime_type))
    }

    /// An audio clip: `data` is its bytes base64-encoded, `media_type` its type (`audio/wav`,
    /// …).
    ///
    /// ```
    /// use hookchain::message::ContentPart;
    ///
    /// let part = ContentPart::audio_base64("audio/wav", "UklGRiYAAABXQVZF");
    /// // What a provider sends for it: its type and size, never its bytes.
    /// assert_eq!(part.to_text_lossy(), "[audio: audio/wav, 12 bytes]");
    /// ```
    pub fn audio_base64(media_type: impl Into<String>, data: impl Into<String>) -> Self {
        Self::from(Audio::new(media_type, data))
    }

    /// The text of a text part; `None` for other parts.
    #[inline]
    #[must_use]
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentPart::Text { text } => Some(text),
            _ => None,
        }
    }
}

impl From<ResourceLink> for ContentPart {
    fn from(link: ResourceLink) -> Self {
        ContentPart::ResourceLink(Box::new(link))
    }
}

impl From<EmbeddedResource> for ContentPart {
    fn from(resource: EmbeddedResource) -> Self {
        ContentPart::Resource(Box::new(resource))
    }
}

impl From<Audio> for ContentPart {
    fn from(audio: Audio) -> Self {
        ContentPart::Audio(Box::new(audio))
    }
}

impl ImageSource {
    /// The image as a URL: its own, or a `data:` URL of an inline image (the form
    /// OpenAI-compatible servers take both in).
    #[must_use]
    pub fn to_url(&self) -> Cow<'_, str> {
        match self {
            ImageSource::Url { url } => Cow::Borrowed(url),
            ImageSource::Base64 { media_type, data } => {
                Cow::Owned(format!("data:{media_type};base64,{data}"))
            }
        }
    }
}

impl Content {
    /// Content of one piece of text.
    pub fn text_only(text: impl Into<String>) -> Self {
        Self {
            repr: Repr::One(ContentPart::text(text)),
        }
    }

    /// The parts, in order.
    #[inline]
    #[must_use]
    pub fn parts(&self) -> &[ContentPart] {
        match &self.repr {
            Repr::One(part) => std::slice::from_ref(part),
            Repr::Many(parts) => parts,
        }
    }

    /// Adds `part` at the end.
    pub fn push(&mut self, part: ContentPart) {
        match &mut self.repr {
            // Empty text gives way: `Message::assistant("")` then a part is just that part.
            Repr::One(ContentPart::Text { text }) if text.is_empty() => {
                self.repr = Repr::One(part);
            }
            Repr::One(_) => {
                let Repr::One(first) = std::mem::replace(&mut self.repr, Repr::Many(Box::new([])))
                else {
                    unreachable!("matched `One` just above")
                };
                self.repr = Repr::Many(Box::new([first, part]));
            }
            // Rare and short: a boxed slice keeps `Content` small, at a copy per push.
            Repr::Many(parts) => {
                let mut grown = std::mem::take(parts).into_vec();
                grown.push(part);
                *parts = grown.into_boxed_slice();
            }
        }
    }

    /// Adds `text` at the end: to the last part if it is text, as a new part otherwise.
    pub fn push_text(&mut self, text: impl AsRef<str>) {
        let last = match &mut self.repr {
            Repr::One(part) => Some(part),
            Repr::Many(parts) => parts.last_mut(),
        };
        match last {
            Some(ContentPart::Text { text: buffer }) => buffer.push_str(text.as_ref()),
            _ => self.push(ContentPart::text(text.as_ref())),
        }
    }

    /// The text parts, joined (images, audio, reasoning, JSON, resources and links left out):
    /// what the model said, or what a person wrote. Borrowed unless there are several text
    /// parts. For everything a reader of text only can be shown, see
    /// [`to_text_lossy`](Self::to_text_lossy).
    #[inline]
    #[must_use]
    pub fn text(&self) -> Cow<'_, str> {
        // Small enough to inline where it is read: the common case is one part.
        match &self.repr {
            Repr::One(part) => Cow::Borrowed(part.as_text().unwrap_or_default()),
            Repr::Many(parts) => joined_text(parts),
        }
    }

    /// The text, if the content is one piece of text and nothing else.
    #[inline]
    #[must_use]
    pub fn as_text(&self) -> Option<&str> {
        match &self.repr {
            Repr::One(part) => part.as_text(),
            Repr::Many(_) => None,
        }
    }

    /// The reasoning parts' text, joined; `None` when there is no reasoning part.
    #[must_use]
    pub fn reasoning(&self) -> Option<Cow<'_, str>> {
        let mut texts = self.parts().iter().filter_map(|part| match part {
            ContentPart::Reasoning(reasoning) => Some(reasoning.text.as_str()),
            _ => None,
        });
        let first = texts.next()?;
        Some(joined(first, texts))
    }

    /// Whether there is nothing in it: no part, or only empty text.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.parts()
            .iter()
            .all(|part| part.as_text().is_some_and(str::is_empty))
    }

    /// Whether the content is only text (one or more text parts).
    #[must_use]
    pub fn is_text(&self) -> bool {
        self.parts().iter().all(|part| part.as_text().is_some())
    }
}

impl Default for Content {
    fn default() -> Self {
        Self::text_only(String::new())
    }
}

impl From<String> for Content {
    fn from(text: String) -> Self {
        Self::text_only(text)
    }
}

impl From<&str> for Content {
    fn from(text: &str) -> Self {
        Self::text_only(text)
    }
}

impl From<&String> for Content {
    fn from(text: &String) -> Self {
        Self::text_only(text.as_str())
    }
}

impl From<Cow<'_, str>> for Content {
    fn from(text: Cow<'_, str>) -> Self {
        Self::text_only(text.into_owned())
    }
}

impl From<ContentPart> for Content {
    fn from(part: ContentPart) -> Self {
        Self {
            repr: Repr::One(part),
        }
    }
}

impl From<Vec<ContentPart>> for Content {
    fn from(mut parts: Vec<ContentPart>) -> Self {
        match parts.len() {
            0 => Self::default(),
            1 => Self::from(parts.remove(0)),
            _ => Self {
                repr: Repr::Many(parts.into_boxed_slice()),
            },
        }
    }
}

impl FromIterator<ContentPart> for Content {
    fn from_iter<I: IntoIterator<Item = ContentPart>>(parts: I) -> Self {
        Self::from(parts.into_iter().collect::<Vec<_>>())
    }
}

/// The text parts of `parts`, joined.
fn joined_text(parts: &[ContentPart]) -> Cow<'_, str> {
    let mut texts = parts.iter().filter_map(ContentPart::as_text);
    texts
        .next()
        .map_or(Cow::Borrowed(""), |first| joined(first, texts))
}

/// `first` and `rest`, joined: borrowed when there is no rest.
fn joined<'a>(first: &'a str, mut rest: impl Iterator<Item = &'a str>) -> Cow<'a, str> {
    match rest.next() {
        None => Cow::Borrowed(first),
        Some(second) => Cow::Owned([first, second].into_iter().chain(rest).collect()),
    }
}

/// Content equals a string when it is that one piece of text.
impl PartialEq<str> for Content {
    fn eq(&self, other: &str) -> bool {
        self.as_text() == Some(other)
    }
}

impl PartialEq<&str> for Content {
    fn eq(&self, other: &&str) -> bool {
        self == *other
    }
}

impl PartialEq<String> for Content {
    fn eq(&self, other: &String) -> bool {
        self == other.as_str()
    }
}

impl PartialEq<Content> for str {
    fn eq(&self, other: &Content) -> bool {
        other == self
    }
}

impl PartialEq<Content> for &str {
    fn eq(&self, other: &Content) -> bool {
        other == *self
    }
}

/// Writes the text parts (see [`Content::text`]).
impl fmt::Display for Content {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.parts()
            .iter()
            .filter_map(ContentPart::as_text)
            .try_for_each(|text| f.write_str(text))
    }
}

/// Text shows as a string, as it did when content was a `String`; other content as its parts.
impl fmt::Debug for Content {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.as_text() {
            Some(text) => fmt::Debug::fmt(text, f),
            None => f.debug_list().entries(self.parts()).finish(),
        }
    }
}

impl Serialize for Content {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.as_text() {
            Some(text) => serializer.serialize_str(text),
            None => self.parts().serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ContentVisitor)
    }
}

/// Reads a string (text content, the older form) or an array of parts.
struct ContentVisitor;

impl<'de> Visitor<'de> for ContentVisitor {
    type Value = Content;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string or an array of content parts")
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Content, E> {
        Ok(Content::text_only(text))
    }

    fn visit_string<E: de::Error>(self, text: String) -> Result<Content, E> {
        Ok(Content::text_only(text))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Content, A::Error> {
        let mut parts = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(part) = seq.next_element()? {
            parts.push(part);
        }
        Ok(Content::from(parts))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn mixed() -> Content {
        Content::from(vec![
            ContentPart::reasoning("The user wants a cat."),
            ContentPart::text("Here "),
            ContentPart::image_base64("image/png", "iVBORw0KGgo="),
            ContentPart::text("it is."),
        ])
    }

    #[test]
    fn text_serializes_as_the_string_it_used_to_be() {
        let content = Content::from("hello");
        assert_eq!(serde_json::to_value(&content).unwrap(), json!("hello"));
        let back: Content = serde_json::from_value(json!("hello")).unwrap();
        assert_eq!(back, "hello");
    }

    #[test]
    fn parts_round_trip_through_their_documented_form() {
        let value = serde_json::to_value(mixed()).unwrap();
        assert_eq!(
            value,
            json!([
                {"type": "reasoning", "text": "The user wants a cat."},
                {"type": "text", "text": "Here "},
                {"type": "image", "source":
                    {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
                {"type": "text", "text": "it is."},
            ])
        );
        let back: Content = serde_json::from_value(value).unwrap();
        assert_eq!(back, mixed());
    }

    #[test]
    fn tool_result_parts_round_trip_through_their_documented_form() {
        let link = ResourceLink::new("file:///srv/a.txt", "a.txt").with_mime_type("text/plain");
        let content = Content::from(vec![
            ContentPart::json(json!({"rows": [1, 2]})),
            ContentPart::from(link),
        ]);
        let value = serde_json::to_value(&content).unwrap();
        assert_eq!(
            value,
            json!([
                {"type": "json", "value": {"rows": [1, 2]}},
                {"type": "resource_link", "uri": "file:///srv/a.txt", "name": "a.txt",
                    "mime_type": "text/plain"},
            ])
        );
        let back: Content = serde_json::from_value(value).unwrap();
        assert_eq!(back, content);
        assert_eq!(content.text(), "", "JSON and links are not text parts");
    }

    #[test]
    fn audio_and_resources_round_trip_through_their_documented_form() {
        let content = Content::from(vec![
            ContentPart::audio_base64("audio/wav", "UklGRg=="),
            ContentPart::resource_text("test://notes", "text/plain", "hi"),
            ContentPart::from(EmbeddedResource::blob("test://raw", "AAAA")),
        ]);
        let value = serde_json::to_value(&content).unwrap();
        assert_eq!(
            value,
            json!([
                {"type": "audio", "media_type": "audio/wav", "data": "UklGRg=="},
                {"type": "resource", "uri": "test://notes", "mime_type": "text/plain",
                    "text": "hi"},
                {"type": "resource", "uri": "test://raw", "blob": "AAAA"},
            ])
        );
        let back: Content = serde_json::from_value(value).unwrap();
        assert_eq!(back, content);
        assert_eq!(content.text(), "", "audio and resources are not text parts");
    }

    #[test]
    fn a_resource_without_text_or_blob_is_an_error_not_a_panic() {
        let error = serde_json::from_value::<Content>(json!([{"type": "resource", "uri": "a:b"}]))
            .unwrap_err();
        // serde's words: "no variant of enum ResourceContents found in flattened data".
        assert!(error.to_string().contains("ResourceContents"), "{error}");
        let error = serde_json::from_value::<Content>(json!([{"type": "audio", "data": "AAAA"}]))
            .unwrap_err();
        assert!(error.to_string().contains("media_type"), "{error}");
    }

    #[test]
    fn an_unknown_part_is_an_error_not_a_panic() {
        let error = serde_json::from_value::<Content>(json!([{"type": "hologram"}])).unwrap_err();
        assert!(error.to_string().contains("hologram"), "{error}");
        assert!(serde_json::from_value::<Content>(json!(42)).is_err());
    }

    #[test]
    fn text_joins_the_text_parts_only() {
        let content = mixed();
        assert_eq!(content.text(), "Here it is.");
        assert_eq!(content.to_string(), "Here it is.");
        assert_eq!(
            content.reasoning().as_deref(),
            Some("The user wants a cat.")
        );
        assert_ne!(
            content, "Here it is.",
            "equal to a string only when it is that text"
        );
        assert!(!content.is_text());
        assert!(matches!(content.text(), Cow::Owned(_)));
        assert!(matches!(Content::from("one").text(), Cow::Borrowed("one")));
    }

    #[test]
    fn pushing_onto_empty_text_replaces_it() {
        let mut content = Content::default();
        assert!(content.is_empty());
        content.push(ContentPart::image_url("https://example.com/a.png"));
        assert_eq!(content.parts().len(), 1);
        content.push(ContentPart::text("and this"));
        assert_eq!(content.parts().len(), 2);
        assert!(!content.is_empty());
        assert_eq!(content.reasoning(), None);
    }

    #[test]
    fn a_single_part_list_is_stored_inline() {
        let content = Content::from(vec![ContentPart::text("solo")]);
        assert_eq!(content.as_text(), Some("solo"));
        assert_eq!(Content::from(Vec::new()), "");
    }

    #[test]
    fn text_content_and_messages_stay_small() {
        assert_eq!(size_of::<ContentPart>(), size_of::<String>());
        assert_eq!(size_of::<Content>(), size_of::<String>());
        // At 128 bytes, moves of messages stay inline (no `memcpy` call); see `Repr`.
        assert!(size_of::<crate::Message>() <= 128);
    }

    #[test]
    fn inline_images_become_data_urls() {
        let ContentPart::Image { source } = ContentPart::image_base64("image/png", "AAAA") else {
            unreachable!()
        };
        assert_eq!(source.to_url(), "data:image/png;base64,AAAA");
    }
}
