//! A resource a tool returned whole, rather than a link to it.

use serde::{Deserialize, Serialize};

use super::audio::base64_byte_len;

/// A resource (a file, a record) a tool returned with its contents, text or bytes: a
/// [`ContentPart::Resource`](super::ContentPart::Resource).
///
/// Its fields are those of an MCP embedded resource (`{"type": "resource", …}`), so that the
/// results of MCP tools keep them. Providers send a text resource's text with its URI, and a
/// binary resource as a placeholder naming its type and size (see
/// [`ContentPart::to_text_lossy`](super::ContentPart::to_text_lossy)); for a resource the model
/// should fetch only if it needs it, return a [`ResourceLink`](super::ResourceLink) instead.
///
/// ```
/// use hookchain::message::{ContentPart, EmbeddedResource, ResourceContents};
///
/// let notes = EmbeddedResource::text("file:///srv/notes.md", "# Notes").with_mime_type("text/markdown");
/// assert_eq!(notes.contents, ResourceContents::Text("# Notes".into()));
/// assert_eq!(
///     ContentPart::from(notes).to_text_lossy(),
///     "[resource: file:///srv/notes.md (text/markdown)]\n# Notes",
/// );
///
/// let logo = ContentPart::resource_blob("file:///srv/logo.ico", "image/x-icon", "AAABAA==");
/// assert_eq!(logo.to_text_lossy(), "[resource: file:///srv/logo.ico (image/x-icon, 4 bytes)]");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct EmbeddedResource {
    /// Where the resource is from (any URI: `https:`, `file:`, a server's own scheme).
    pub uri: String,
    /// Its media type (`text/plain`, `application/pdf`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// What it holds: text, or bytes. Serialized as a `text` or a `blob` field beside the
    /// others, as MCP writes it.
    #[serde(flatten)]
    pub contents: ResourceContents,
}

/// What an [`EmbeddedResource`] holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ResourceContents {
    /// Text.
    Text(String),
    /// Bytes, base64-encoded.
    Blob(String),
}

impl EmbeddedResource {
    /// The resource at `uri`, whose contents are `text`.
    pub fn text(uri: impl Into<String>, text: impl Into<String>) -> Self {
        Self::new(uri, ResourceContents::Text(text.into()))
    }

    /// The resource at `uri`, whose contents are bytes, `data` base64-encoded.
    pub fn blob(uri: impl Into<String>, data: impl Into<String>) -> Self {
        Self::new(uri, ResourceContents::Blob(data.into()))
    }

    fn new(uri: impl Into<String>, contents: ResourceContents) -> Self {
        Self {
            uri: uri.into(),
            mime_type: None,
            contents,
        }
    }

    /// The resource with its media type.
    #[must_use]
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// Its text, if it holds text.
    #[must_use]
    pub fn as_text(&self) -> Option<&str> {
        match &self.contents {
            ResourceContents::Text(text) => Some(text),
            ResourceContents::Blob(_) => None,
        }
    }

    /// The size of its contents in bytes: the text's, or the bytes' the blob encodes (read from
    /// the length of its base64: nothing is decoded).
    #[must_use]
    pub fn byte_len(&self) -> usize {
        match &self.contents {
            ResourceContents::Text(text) => text.len(),
            ResourceContents::Blob(data) => base64_byte_len(data),
        }
    }
}
