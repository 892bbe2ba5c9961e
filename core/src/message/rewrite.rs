//! Rewriting the text inside content, for the middleware that edit what the model reads
//! (personal data redaction).

use super::{Content, ContentPart, ResourceContents};

impl Content {
    /// The content with every piece of text a reader sees passed through `rewrite`: text
    /// parts, reasoning, the strings inside [`Json`](ContentPart::Json) parts (object keys are
    /// left as they are: rewriting two keys to one would lose a value), a resource link's
    /// name, title and description (not its URI, which must stay a link), and a text
    /// resource's text (not its URI). Images, audio and binary resources are not text, and are
    /// left as they are. `rewrite` returns
    /// `None` for text it leaves as it is; `Ok(None)` when nothing changed. Stops at the first
    /// error.
    // Only the `Pii` middleware (feature `pii`) rewrites content.
    #[cfg_attr(not(feature = "pii"), allow(dead_code))]
    pub(crate) fn try_rewrite_text<E>(
        &self,
        mut rewrite: impl FnMut(&str) -> Result<Option<String>, E>,
    ) -> Result<Option<Content>, E> {
        let mut changed = false;
        let mut parts = self.parts().to_vec();
        let mut apply = |text: &mut String| -> Result<(), E> {
            if let Some(rewritten) = rewrite(text)? {
                *text = rewritten;
                changed = true;
            }
            Ok(())
        };
        for part in &mut parts {
            match part {
                ContentPart::Text { text } => apply(text)?,
                ContentPart::Reasoning(reasoning) => apply(&mut reasoning.text)?,
                ContentPart::Json { value } => rewrite_json(value, &mut apply)?,
                ContentPart::ResourceLink(link) => {
                    apply(&mut link.name)?;
                    for text in [&mut link.title, &mut link.description]
                        .into_iter()
                        .flatten()
                    {
                        apply(text)?;
                    }
                }
                ContentPart::Resource(resource) => match &mut resource.contents {
                    ResourceContents::Text(text) => apply(text)?,
                    ResourceContents::Blob(_) => {}
                },
                ContentPart::Image { .. }
                | ContentPart::Audio(_)
                | ContentPart::RedactedReasoning { .. } => {}
            }
        }
        Ok(changed.then(|| parts.into_iter().collect()))
    }
}

/// Applies `apply` to every string in `value`, however deep.
fn rewrite_json<E>(
    value: &mut serde_json::Value,
    apply: &mut impl FnMut(&mut String) -> Result<(), E>,
) -> Result<(), E> {
    match value {
        serde_json::Value::String(text) => apply(text),
        serde_json::Value::Array(items) => items
            .iter_mut()
            .try_for_each(|item| rewrite_json(item, apply)),
        serde_json::Value::Object(object) => object
            .values_mut()
            .try_for_each(|item| rewrite_json(item, apply)),
        serde_json::Value::Null | serde_json::Value::Bool(_) | serde_json::Value::Number(_) => {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::message::ResourceLink;

    fn shout(text: &str) -> Result<Option<String>, ()> {
        Ok(text.contains("bob").then(|| text.replace("bob", "BOB")))
    }

    #[test]
    fn every_text_bearing_part_is_rewritten() {
        let content = Content::from(vec![
            ContentPart::text("hi bob"),
            ContentPart::image_url("https://example.com/bob.png"),
            ContentPart::json(json!({"bob": ["bob@x", 1, {"to": "bob"}]})),
            ContentPart::text("and bob again"),
            ContentPart::from(
                ResourceLink::new("file:///bob.txt", "bob.txt").with_description("from bob"),
            ),
            ContentPart::resource_text("file:///bob.md", "text/markdown", "# bob"),
            ContentPart::resource_blob("file:///bob.bin", "application/octet-stream", "bob="),
            ContentPart::audio_base64("audio/wav", "bob="),
        ]);
        let rewritten = content
            .try_rewrite_text(shout)
            .unwrap()
            .expect("something changed");
        assert_eq!(
            rewritten,
            Content::from(vec![
                ContentPart::text("hi BOB"),
                ContentPart::image_url("https://example.com/bob.png"),
                ContentPart::json(json!({"bob": ["BOB@x", 1, {"to": "BOB"}]})),
                ContentPart::text("and BOB again"),
                ContentPart::from(
                    ResourceLink::new("file:///bob.txt", "BOB.txt").with_description("from BOB"),
                ),
                ContentPart::resource_text("file:///bob.md", "text/markdown", "# BOB"),
                ContentPart::resource_blob("file:///bob.bin", "application/octet-stream", "bob="),
                ContentPart::audio_base64("audio/wav", "bob="),
            ])
        );
        assert_eq!(Content::from("alice").try_rewrite_text(shout), Ok(None));
    }

    #[test]
    fn the_first_error_stops_the_rewrite() {
        let content = Content::from(vec![ContentPart::text("a"), ContentPart::text("b")]);
        let mut seen = Vec::new();
        let result = content.try_rewrite_text(|text| {
            seen.push(text.to_owned());
            Err::<Option<String>, _>("blocked")
        });
        assert_eq!(result, Err("blocked"));
        assert_eq!(seen, ["a"]);
    }
}
