//! The bound on what the model reads of one tool result: a server's answer can be as large as
//! a message may be (16 MiB), and all of it would be sent to the model, on every later turn.

use hookchain_core::message::{ContentPart, ImageSource, ResourceContents};

/// The parts of a result within `max_bytes`, in order. Text (and JSON, and a text resource, as
/// their text) is kept until the bound and cut there on a character boundary; an image, an
/// audio clip, a binary resource or a link that does not fit in what is left is dropped (a
/// smaller part after it may still fit): their bytes count, not the placeholder a provider
/// sends for them, as they are kept in the history. A note, a text part at
/// the end, says how many bytes were cut and which parts were dropped, so that the model knows
/// it did not read everything.
pub(crate) fn within_bound(parts: Vec<ContentPart>, max_bytes: usize) -> Vec<ContentPart> {
    let mut left = max_bytes;
    let mut kept = Vec::with_capacity(parts.len());
    let mut cut_bytes = 0;
    let mut dropped = Dropped::default();
    for part in parts {
        let size = sent_bytes(&part);
        if size <= left {
            left -= size;
            kept.push(part);
            continue;
        }
        let text = match &part {
            ContentPart::Text { text } => text.clone(),
            ContentPart::Json { value } => value.to_string(),
            // Its text after the line naming it, as a provider sends it.
            ContentPart::Resource(resource)
                if matches!(resource.contents, ResourceContents::Text(_)) =>
            {
                part.to_text_lossy().into_owned()
            }
            other => {
                dropped.add(other);
                continue;
            }
        };
        let end = text.floor_char_boundary(left);
        cut_bytes += text.len() - end;
        if end > 0 {
            kept.push(ContentPart::text(&text[..end]));
        }
        // The bound is reached (what is left is less than a character): a later part small
        // enough to fit would read oddly after text cut short, and is cut or dropped too.
        left = 0;
    }
    if cut_bytes > 0 || !dropped.is_empty() {
        let note = note(cut_bytes, &dropped);
        // Text parts in a row are joined as they are: the note on a line of its own.
        let note = if kept.is_empty() {
            note
        } else {
            format!("\n{note}")
        };
        kept.push(ContentPart::text(note));
    }
    kept
}

/// The bytes of `part` kept in the history: a text's, an image's or an audio clip's data (or
/// URL), a resource's contents (text or base64) and URI, the text that stands for any other
/// part.
fn sent_bytes(part: &ContentPart) -> usize {
    match part {
        ContentPart::Text { text } => text.len(),
        ContentPart::Image { source } => match &**source {
            ImageSource::Url { url } => url.len(),
            ImageSource::Base64 { media_type, data } => media_type.len() + data.len(),
            // A kind of image newer than this crate: its JSON, a fair measure of its size.
            other => serde_json::to_string(other).map_or(usize::MAX, |json| json.len()),
        },
        ContentPart::Audio(audio) => audio.media_type.len() + audio.data.len(),
        ContentPart::Resource(resource) => {
            let contents = match &resource.contents {
                // A text resource is sent with a line naming it: what is sent, or more.
                ResourceContents::Text(_) => return part.to_text_lossy().len(),
                ResourceContents::Blob(data) => data.len(),
                // A kind of contents newer than this crate: its JSON, a fair measure.
                other => serde_json::to_string(other).map_or(usize::MAX, |json| json.len()),
            };
            resource.uri.len() + resource.mime_type.as_ref().map_or(0, String::len) + contents
        }
        other => other.to_text_lossy().len(),
    }
}

/// The parts dropped, by kind.
#[derive(Default)]
struct Dropped {
    images: usize,
    audio: usize,
    resources: usize,
    links: usize,
    others: usize,
}

impl Dropped {
    fn add(&mut self, part: &ContentPart) {
        match part {
            ContentPart::Image { .. } => self.images += 1,
            ContentPart::Audio(_) => self.audio += 1,
            ContentPart::Resource(_) => self.resources += 1,
            ContentPart::ResourceLink(_) => self.links += 1,
            _ => self.others += 1,
        }
    }

    fn is_empty(&self) -> bool {
        self.images + self.audio + self.resources + self.links + self.others == 0
    }

    /// `2 images and 1 resource link`.
    fn describe(&self) -> String {
        let kinds: Vec<String> = [
            (self.images, "image", "images"),
            (self.audio, "audio clip", "audio clips"),
            (self.resources, "resource", "resources"),
            (self.links, "resource link", "resource links"),
            (self.others, "other part", "other parts"),
        ]
        .into_iter()
        .filter(|(count, ..)| *count > 0)
        .map(|(count, one, many)| {
            let kind = if count == 1 { one } else { many };
            format!("{} {kind}", grouped(count))
        })
        .collect();
        match kinds.as_slice() {
            [] => String::new(),
            [one] => one.clone(),
            [first @ .., last] => format!("{} and {last}", first.join(", ")),
        }
    }
}

/// What the model reads where the result was cut: `[… 7,340,032 more bytes cut: …]`.
fn note(cut_bytes: usize, dropped: &Dropped) -> String {
    let mut what = Vec::new();
    if cut_bytes > 0 {
        what.push(format!("{} more bytes cut", grouped(cut_bytes)));
    }
    if !dropped.is_empty() {
        what.push(format!("{} dropped", dropped.describe()));
    }
    format!(
        "[… {}: the result was larger than this agent takes]",
        what.join(", ")
    )
}

/// `n` with its thousands grouped, for a person (or a model) to read: `7,340,032`.
fn grouped(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

#[cfg(test)]
mod tests {
    use hookchain_core::message::ResourceLink;
    use serde_json::json;

    use super::*;

    fn texts(parts: &[ContentPart]) -> Vec<&str> {
        parts.iter().filter_map(ContentPart::as_text).collect()
    }

    #[test]
    fn a_result_within_the_bound_is_kept_whole() {
        let parts = vec![
            ContentPart::text("abc"),
            ContentPart::image_base64("image/png", "AAAA"),
            ContentPart::json(json!({"a": 1})),
        ];
        assert_eq!(within_bound(parts.clone(), 1024), parts);
        // Exactly at the bound: 3 + (9 + 4) + 7 bytes.
        assert_eq!(within_bound(parts.clone(), 23), parts);
    }

    #[test]
    fn text_is_cut_on_a_character_boundary_with_a_note() {
        // `€` is 3 bytes: a bound of 10 falls inside the fourth.
        let parts = within_bound(vec![ContentPart::text("€".repeat(10))], 10);
        assert_eq!(
            texts(&parts),
            [
                "€€€",
                "\n[… 21 more bytes cut: the result was larger than this agent takes]"
            ]
        );
    }

    #[test]
    fn later_text_counts_as_cut_and_json_is_cut_as_text() {
        let parts = within_bound(
            vec![
                ContentPart::json(json!({"key": "value"})),
                ContentPart::text("after"),
            ],
            6,
        );
        assert_eq!(
            texts(&parts),
            [
                r#"{"key""#,
                "\n[… 14 more bytes cut: the result was larger than this agent takes]"
            ]
        );
    }

    #[test]
    fn images_and_links_that_do_not_fit_are_dropped_and_named() {
        let link = ContentPart::from(ResourceLink::new("file:///a-long-name.txt", "a"));
        let parts = within_bound(
            vec![
                ContentPart::image_base64("image/png", "A".repeat(100)),
                ContentPart::text("small"),
                ContentPart::image_base64("image/png", "A".repeat(100)),
                link,
            ],
            20,
        );
        assert_eq!(
            texts(&parts),
            [
                "small",
                "\n[… 2 images and 1 resource link dropped: the result was larger than this \
                 agent takes]"
            ]
        );
        assert_eq!(parts.len(), 2, "{parts:?}");
    }

    #[test]
    fn audio_and_binary_resources_count_their_bytes_and_are_dropped_whole() {
        let big = "A".repeat(1000);
        let parts = within_bound(
            vec![
                ContentPart::audio_base64("audio/wav", big.as_str()),
                ContentPart::resource_blob("test://raw", "application/octet-stream", big.as_str()),
                ContentPart::audio_base64("audio/wav", "AAAA"),
            ],
            100,
        );
        assert_eq!(
            parts,
            [
                ContentPart::audio_base64("audio/wav", "AAAA"),
                ContentPart::text(
                    "\n[… 1 audio clip and 1 resource dropped: the result was larger than this \
                     agent takes]"
                ),
            ]
        );
        // Within the bound, kept as they are: 9 + 4, then 10 + 24 + 4 bytes.
        let small = vec![
            ContentPart::audio_base64("audio/wav", "AAAA"),
            ContentPart::resource_blob("test://raw", "application/octet-stream", "AAAA"),
        ];
        assert_eq!(within_bound(small.clone(), 51), small);
        let cut = within_bound(small.clone(), 50);
        assert_eq!(cut[0], small[0]);
        assert!(
            cut[1].as_text().unwrap().contains("1 resource dropped"),
            "{cut:?}"
        );
    }

    #[test]
    fn a_text_resource_is_cut_as_its_text() {
        let resource = ContentPart::resource_text("test://a", "text/plain", "x".repeat(100));
        let parts = within_bound(vec![resource], 30);
        assert_eq!(
            texts(&parts),
            [
                "[resource: test://a (text/plai",
                "\n[… 104 more bytes cut: the result was larger than this agent takes]"
            ]
        );
    }

    #[test]
    fn a_result_cut_and_dropped_says_both() {
        let parts = within_bound(
            vec![
                ContentPart::text("x".repeat(30)),
                ContentPart::image_base64("image/png", "AAAA"),
            ],
            10,
        );
        assert_eq!(
            texts(&parts)[1],
            "\n[… 20 more bytes cut, 1 image dropped: the result was larger than this agent \
             takes]"
        );
    }

    #[test]
    fn nothing_fits_in_a_bound_of_zero() {
        let parts = within_bound(vec![ContentPart::text("abc")], 0);
        assert_eq!(
            texts(&parts),
            ["[… 3 more bytes cut: the result was larger than this agent takes]"]
        );
    }

    #[test]
    fn numbers_are_grouped_by_thousands() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1000), "1,000");
        assert_eq!(grouped(7_340_032), "7,340,032");
        assert_eq!(grouped(123_456_789_012), "123,456,789,012");
    }
}
