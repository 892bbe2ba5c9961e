//! A link to a resource the model can ask for, rather than the resource itself.

use serde::{Deserialize, Serialize};

/// A link to a resource (a file, a page, a record), with what a reader needs to decide whether
/// to fetch it: a [`ContentPart::ResourceLink`](super::ContentPart::ResourceLink).
///
/// Its fields are those of an MCP `resource_link`, so that the results of MCP tools keep them.
///
/// ```
/// use hookchain::message::{ContentPart, ResourceLink};
///
/// let link = ResourceLink::new("file:///srv/report.pdf", "report.pdf")
///     .with_title("Quarterly report")
///     .with_mime_type("application/pdf");
/// assert_eq!(link.uri, "file:///srv/report.pdf");
/// let part = ContentPart::from(link);
/// # let _ = part;
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ResourceLink {
    /// Where the resource is (any URI: `https:`, `file:`, a server's own scheme).
    pub uri: String,
    /// Its name, as its server names it (a file name, say).
    pub name: String,
    /// A title for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its media type (`application/pdf`, `text/plain`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
}

impl ResourceLink {
    /// A link to `uri`, named `name`.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
        }
    }

    /// The link with a title for people.
    #[must_use]
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// The link with a description of the resource.
    #[must_use]
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// The link with the resource's media type.
    #[must_use]
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }
}
