//! [`ClientUrls`]: which URLs a client may send as the source of an image. A URL in a message
//! is fetched by whoever reads it — the model's provider with the server's credentials
//! (`s3://` on Bedrock, `gs://` on Gemini), or a self-hosted server from inside the network
//! (`http://169.254.169.254/…`) — so a client sends images as `data:` unless the server allows
//! a URL's scheme and host.

use axum::http::Uri;
use hookchain_core::Message;
use hookchain_core::message::{ContentPart, ImageSource};

/// The URLs a client may send as an image's source: none by default (images come as data),
/// or those of the `(scheme, host)` pairs allowed.
///
/// ```
/// use hookchain_axum::ClientUrls;
///
/// let urls = ClientUrls::none().allow("https", "images.example.com");
/// assert!(urls.allows("https://images.example.com/cat.png"));
/// assert!(!urls.allows("http://images.example.com/cat.png"));
/// assert!(!urls.allows("https://169.254.169.254/latest/meta-data/"));
/// assert!(!urls.allows("s3://bucket/key"));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClientUrls {
    allowed: Vec<(String, String)>,
}

impl ClientUrls {
    /// No URL: images as `data:` only (the default).
    #[must_use]
    pub fn none() -> Self {
        Self::default()
    }

    /// Also URLs of scheme `scheme` on host `host` (exactly: not its subdomains).
    #[must_use]
    pub fn allow(mut self, scheme: &str, host: &str) -> Self {
        self.allowed
            .push((scheme.to_ascii_lowercase(), host.to_ascii_lowercase()));
        self
    }

    /// Whether a client may send `url`.
    #[must_use]
    pub fn allows(&self, url: &str) -> bool {
        let Ok(uri) = url.parse::<Uri>() else {
            return false;
        };
        let (Some(scheme), Some(host)) = (uri.scheme_str(), uri.host()) else {
            return false;
        };
        let (scheme, host) = (scheme.to_ascii_lowercase(), host.to_ascii_lowercase());
        self.allowed.iter().any(|(allowed_scheme, allowed_host)| {
            *allowed_scheme == scheme && *allowed_host == host
        })
    }

    /// Whether every URL `message` carries is one a client may send.
    pub(crate) fn allow_all_in(&self, message: &Message) -> bool {
        message.content.parts().iter().all(|part| match part {
            ContentPart::Image { source } => match &**source {
                ImageSource::Url { url } => self.allows(url),
                _ => true,
            },
            _ => true,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_by_default_and_exactly_what_is_allowed_after() {
        assert!(!ClientUrls::none().allows("https://example.com/a.png"));
        let urls = ClientUrls::none().allow("HTTPS", "Images.Example.com");
        assert!(urls.allows("https://images.example.com/a.png"));
        assert!(urls.allows("HTTPS://IMAGES.EXAMPLE.COM:443/a.png"));
        assert!(!urls.allows("https://evil.images.example.com/a.png"));
        assert!(!urls.allows("https://user@evil.example/a.png"));
        assert!(!urls.allows("https://images.example.com@169.254.169.254/"));
        assert!(!urls.allows("not a url"));
        assert!(!urls.allows("gs://images.example.com/a.png"));
    }
}
