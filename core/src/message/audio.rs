//! An audio clip a tool returned, sent inline.

use serde::{Deserialize, Serialize};

/// An audio clip, base64-encoded: a [`ContentPart::Audio`](super::ContentPart::Audio).
///
/// Tools return audio (an MCP server's `audio` content, a text-to-speech tool); no provider
/// takes it in a tool result yet, so the model reads a placeholder naming its type and size
/// (see [`ContentPart::to_text_lossy`](super::ContentPart::to_text_lossy)), never the bytes.
///
/// ```
/// use hookchain::message::{Audio, ContentPart};
///
/// let clip = Audio::new("audio/wav", "UklGRiYAAABXQVZF");
/// assert_eq!(clip.byte_len(), 12);
/// let part = ContentPart::from(clip);
/// assert_eq!(part.to_text_lossy(), "[audio: audio/wav, 12 bytes]");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Audio {
    /// Its media type (`audio/wav`, `audio/mpeg`, …).
    pub media_type: String,
    /// The clip's bytes, base64-encoded.
    pub data: String,
}

impl Audio {
    /// A clip of type `media_type` whose bytes, base64-encoded, are `data`.
    pub fn new(media_type: impl Into<String>, data: impl Into<String>) -> Self {
        Self {
            media_type: media_type.into(),
            data: data.into(),
        }
    }

    /// The size of the clip in bytes, read from the length of its base64 (nothing is decoded).
    #[must_use]
    pub fn byte_len(&self) -> usize {
        base64_byte_len(&self.data)
    }
}

/// The number of bytes `data`, base64, encodes: 3 per 4 characters, less the padding (`=`).
/// Whitespace is not counted (MIME base64 breaks lines); anything else is counted as a
/// character of base64, so that a size is always given, even for data that is not base64.
pub(crate) fn base64_byte_len(data: &str) -> usize {
    let significant = data
        .bytes()
        .filter(|byte| !byte.is_ascii_whitespace() && *byte != b'=')
        .count();
    significant * 3 / 4
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_size_is_read_from_the_base64() {
        assert_eq!(base64_byte_len(""), 0);
        assert_eq!(base64_byte_len("AAAA"), 3);
        assert_eq!(base64_byte_len("AAA="), 2);
        assert_eq!(base64_byte_len("AA=="), 1);
        assert_eq!(base64_byte_len("AA"), 1, "unpadded");
        assert_eq!(base64_byte_len("AAAA\r\nAAAA\n"), 6, "MIME line breaks");
    }
}
