//! Content as text, for the places that can only take text: a provider whose tool messages
//! are text, a transcript for a summary, a token count.

use std::borrow::Cow;

use super::{
    Audio, Content, ContentPart, EmbeddedResource, ImageSource, ResourceContents, ResourceLink,
};

impl ContentPart {
    /// The part as text, for a reader that takes only text:
    ///
    /// | part | text |
    /// |------|------|
    /// | text | the text, as it is |
    /// | JSON | the value as compact JSON (`{"a":1}`) |
    /// | resource link | `Resource: <title, else name> <<uri>>`, then ` (<mime type>)` and ` — <description>` when it has them |
    /// | image | `[image: <media type>]` for an inline image or a `data:` URL, `[image: <url>]` for another URL |
    /// | resource, text | `[resource: <uri> (<mime type>)]`, then its text on the next line |
    /// | resource, bytes | `[resource: <uri> (<mime type>, <size> bytes)]`: never the bytes |
    /// | audio | `[audio: <media type>, <size> bytes]`: never the bytes |
    /// | reasoning, redacted reasoning | nothing: the model's reasoning is not part of what it says |
    ///
    /// ```
    /// use hookchain::message::{ContentPart, ResourceLink};
    ///
    /// assert_eq!(ContentPart::image_base64("image/png", "iVBORw0KGgo=").to_text_lossy(), "[image: image/png]");
    /// let link = ResourceLink::new("file:///srv/report.pdf", "report.pdf").with_mime_type("application/pdf");
    /// assert_eq!(
    ///     ContentPart::from(link).to_text_lossy(),
    ///     "Resource: report.pdf <file:///srv/report.pdf> (application/pdf)",
    /// );
    /// ```
    #[must_use]
    pub fn to_text_lossy(&self) -> Cow<'_, str> {
        match self {
            ContentPart::Text { text } => Cow::Borrowed(text),
            ContentPart::Json { value } => Cow::Owned(value.to_string()),
            ContentPart::ResourceLink(link) => Cow::Owned(link_line(link)),
            ContentPart::Image { source } => Cow::Owned(image_placeholder(source)),
            ContentPart::Resource(resource) => Cow::Owned(resource_text(resource)),
            ContentPart::Audio(audio) => Cow::Owned(audio_placeholder(audio)),
            ContentPart::Reasoning(_) | ContentPart::RedactedReasoning { .. } => Cow::Borrowed(""),
        }
    }
}

impl Content {
    /// The content as text, for a reader that takes only text: each part as
    /// [`ContentPart::to_text_lossy`] writes it (text as it is, JSON as compact JSON, a resource
    /// link as a line with its URI, a resource as its URI then its text, an image, audio or
    /// binary resource as a placeholder naming its media type, reasoning left out). Text parts in a row are joined as they are, as [`text`](Self::text) joins
    /// them; every other part is on a line of its own. Borrowed when the content is one piece
    /// of text.
    ///
    /// ```
    /// use hookchain::message::{Content, ContentPart};
    ///
    /// let result = Content::from(vec![
    ///     ContentPart::text("Found it: "),
    ///     ContentPart::text("the chart."),
    ///     ContentPart::image_base64("image/png", "iVBORw0KGgo="),
    ///     ContentPart::json(serde_json::json!({"points": 3})),
    ///     ContentPart::resource_link("https://example.com/data.csv", "data.csv"),
    /// ]);
    /// assert_eq!(
    ///     result.to_text_lossy(),
    ///     "Found it: the chart.\n[image: image/png]\n{\"points\":3}\n\
    ///      Resource: data.csv <https://example.com/data.csv>",
    /// );
    /// assert_eq!(Content::from("plain").to_text_lossy(), "plain");
    /// ```
    #[must_use]
    pub fn to_text_lossy(&self) -> Cow<'_, str> {
        if let Some(text) = self.as_text() {
            return Cow::Borrowed(text);
        }
        let mut written = String::new();
        // Whether the last part written was text: `None` before the first.
        let mut after_text = None;
        for part in self.parts() {
            let rendered = part.to_text_lossy();
            if rendered.is_empty() {
                continue;
            }
            let is_text = matches!(part, ContentPart::Text { .. });
            if after_text.is_some_and(|after_text| !(after_text && is_text)) {
                written.push('\n');
            }
            written.push_str(&rendered);
            after_text = Some(is_text);
        }
        Cow::Owned(written)
    }
}

/// `Resource: <label> <<uri>> (<mime type>) — <description>`, the optional pieces left out
/// when absent.
fn link_line(link: &ResourceLink) -> String {
    let label = link.title.as_deref().unwrap_or(&link.name);
    let mut line = format!("Resource: {label} <{}>", link.uri);
    if let Some(mime_type) = &link.mime_type {
        line.push_str(&format!(" ({mime_type})"));
    }
    if let Some(description) = &link.description {
        line.push_str(&format!(" — {description}"));
    }
    line
}

/// `[resource: <uri> (<mime type>)]` then the text on the next line, or
/// `[resource: <uri> (<mime type>, <size> bytes)]` for bytes, which are never written.
fn resource_text(resource: &EmbeddedResource) -> String {
    let uri = &resource.uri;
    let mime_type = resource.mime_type.as_deref();
    match &resource.contents {
        ResourceContents::Text(text) => match mime_type {
            Some(mime_type) => format!("[resource: {uri} ({mime_type})]\n{text}"),
            None => format!("[resource: {uri}]\n{text}"),
        },
        ResourceContents::Blob(_) => {
            let size = resource.byte_len();
            match mime_type {
                Some(mime_type) => format!("[resource: {uri} ({mime_type}, {size} bytes)]"),
                None => format!("[resource: {uri} ({size} bytes)]"),
            }
        }
    }
}

/// `[audio: <media type>, <size> bytes]`: the bytes are never written.
fn audio_placeholder(audio: &Audio) -> String {
    let size = audio.byte_len();
    if audio.media_type.is_empty() {
        format!("[audio: {size} bytes]")
    } else {
        format!("[audio: {}, {size} bytes]", audio.media_type)
    }
}

/// `[image: <media type>]`, or `[image: <url>]` for an image at a URL that is not a `data:` URL
/// (whose type is unknown without fetching it). The bytes of an inline image are never
/// written: a placeholder stays short.
fn image_placeholder(source: &ImageSource) -> String {
    let named = match source {
        ImageSource::Base64 { media_type, .. } => media_type.as_str(),
        ImageSource::Url { url } => match url.strip_prefix("data:") {
            // `data:image/png;base64,...`: the type ends at the first `;` or `,`.
            Some(data) => data.split([';', ',']).next().unwrap_or_default(),
            None => url.as_str(),
        },
    };
    if named.is_empty() {
        "[image]".to_owned()
    } else {
        format!("[image: {named}]")
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_data_url_names_its_type_and_never_its_bytes() {
        let image = ContentPart::image_url("data:image/jpeg;base64,/9j/4AAQ");
        assert_eq!(image.to_text_lossy(), "[image: image/jpeg]");
        assert_eq!(ContentPart::image_url("data:,").to_text_lossy(), "[image]");
        let remote = ContentPart::image_url("https://example.com/cat.png");
        assert_eq!(
            remote.to_text_lossy(),
            "[image: https://example.com/cat.png]"
        );
    }

    #[test]
    fn a_link_says_what_it_has() {
        let link = ResourceLink::new("db://orders/42", "order-42")
            .with_title("Order 42")
            .with_description("the customer's last order");
        assert_eq!(
            ContentPart::from(link).to_text_lossy(),
            "Resource: Order 42 <db://orders/42> — the customer's last order"
        );
    }

    #[test]
    fn audio_and_binary_resources_name_their_size_and_never_their_bytes() {
        let audio = ContentPart::audio_base64(
            "audio/wav",
            "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=",
        );
        assert_eq!(audio.to_text_lossy(), "[audio: audio/wav, 44 bytes]");
        assert_eq!(
            ContentPart::audio_base64("", "AAAA").to_text_lossy(),
            "[audio: 3 bytes]"
        );
        let blob = ContentPart::from(EmbeddedResource::blob("db://blobs/7", "AAAAAA=="));
        assert_eq!(blob.to_text_lossy(), "[resource: db://blobs/7 (4 bytes)]");
    }

    #[test]
    fn a_text_resource_is_its_uri_then_its_text() {
        let untyped = ContentPart::from(EmbeddedResource::text("test://notes", "line 1\nline 2"));
        assert_eq!(
            untyped.to_text_lossy(),
            "[resource: test://notes]\nline 1\nline 2"
        );
        let content = Content::from(vec![
            ContentPart::text("Read:"),
            ContentPart::resource_text("test://a", "application/json", r#"{"a":1}"#),
            ContentPart::audio_base64("audio/mpeg", "AAAA"),
        ]);
        assert_eq!(
            content.to_text_lossy(),
            "Read:\n[resource: test://a (application/json)]\n{\"a\":1}\n[audio: audio/mpeg, 3 bytes]"
        );
    }

    #[test]
    fn reasoning_and_empty_text_leave_no_stray_lines() {
        let content = Content::from(vec![
            ContentPart::reasoning("think"),
            ContentPart::text(""),
            ContentPart::json(json!([1, 2])),
            ContentPart::text("done"),
        ]);
        assert_eq!(content.to_text_lossy(), "[1,2]\ndone");
        assert_eq!(Content::from(Vec::new()).to_text_lossy(), "");
    }
}
