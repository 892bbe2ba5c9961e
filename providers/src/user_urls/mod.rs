//! The guard on URLs in users' messages: which image URLs a provider may be sent, so that a
//! served agent does not fetch for its users what only the server may reach.

mod classify;

#[cfg(test)]
mod tests;

use hookchain_core::message::{ContentPart, ImageSource};
use hookchain_core::{ModelError, ModelRequest, Role};

use classify::{Classified, Host, Kind, classify};

/// Which URLs in users' messages a provider may be sent (every provider's builder takes one:
/// `.user_urls(…)`).
///
/// A model provider fetches the image URLs it is given, with its own reach and rights: Bedrock
/// reads `s3://` objects with the application's AWS credentials, Gemini reads `gs://` objects
/// with the project's, and a self-hosted OpenAI-compatible server fetches
/// `http://169.254.169.254/…` (the cloud's metadata, its credentials) or `http://10.…` from
/// inside the network. When the user of a served agent writes the message, the user would
/// choose what the server fetches. So by default ([`UserUrls::new`]), a provider refuses,
/// before sending anything, a request whose user messages hold an image URL that is:
///
/// - **cloud storage**: `s3:`, `s3a:`, `s3n:`, `gs:`, `gcs:`, `az:`, `azure:`, `abfs:`,
///   `abfss:`, `wasb:`, `wasbs:`, `adl:`;
/// - **on a private network**: an address that is loopback, private (10/8, 172.16/12,
///   192.168/16), link-local (169.254/16, the metadata services), shared (100.64/10), `0/8`,
///   multicast, reserved or broadcast; in IPv6 loopback, unspecified, unique local (`fc00::/7`),
///   link-local (`fe80::/10`), multicast, or an IPv4 address of those written in IPv6
///   (`[::ffff:169.254.169.254]`); every form the URL standard reads counts (`2130706433`,
///   `0x7f.1`, ports, `user@` before the host). Or a name only a local network resolves: one
///   without a dot (`metadata`, `wiki`), `localhost`, or one under `.localhost`, `.local`,
///   `.internal` (`metadata.google.internal`), `.home.arpa`, `.localdomain`, `.lan`, `.home`,
///   `.corp`, `.intranet`;
/// - **of another scheme** than `http`, `https` and `data` (`file:`, `ftp:`, …);
/// - **not a URL**, or written so that URL parsers may read it differently (a backslash,
///   whitespace or control characters).
///
/// The request then fails with an
/// [`InvalidRequest`](hookchain_core::ModelErrorKind::InvalidRequest) error naming the URL's
/// scheme and host (never the whole URL, which may hold credentials) and the setting that
/// allows it. Inline images (base64, `data:` URLs) and public `https:` URLs are always sent.
///
/// Only **user** messages are checked: the system prompt, the model's messages and tools'
/// results are written by the application and its tools, which choose their URLs.
///
/// # Limits
///
/// The URL is read, never resolved: a public name whose address is private
/// (`169.254.169.254.nip.io`), or a public URL that redirects to a private one, is not caught.
/// The first line of defence is the server's own allowlist of what users may send (the AG-UI
/// server takes `data:` images only, by default); this guard is the last, in the provider.
///
/// # Allowing more
///
/// An application that means its users to send such URLs (a Bedrock application whose users
/// pick images from its S3 bucket, an agent on a private network) allows them on the model:
///
/// ```
/// use hookchain::providers::UserUrls;
///
/// // S3 and the like (`s3://`, `gs://`, …), read with the application's credentials.
/// let storage = UserUrls::new().allow_cloud_storage();
/// // One intranet host (or one bucket: `s3://uploads/…` has the host `uploads`), no other.
/// let wiki = UserUrls::new().allow_host("wiki.corp").allow_host("uploads");
/// // Any private address or name; `file:` URLs too.
/// let local = UserUrls::new().allow_private_network().allow_scheme("file");
/// assert_ne!(storage, wiki);
/// assert_eq!(UserUrls::new(), UserUrls::default());
/// # assert_ne!(local, UserUrls::new());
/// ```
///
/// and gives it to the provider's builder, for example
/// `BedrockModel::builder(…).user_urls(UserUrls::new().allow_cloud_storage())`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UserUrls {
    cloud_storage: bool,
    private_network: bool,
    hosts: Vec<Host>,
    schemes: Vec<String>,
}

impl UserUrls {
    /// The default: inline images and public `http:`/`https:` URLs only (see [`UserUrls`]).
    #[must_use]
    pub const fn new() -> Self {
        Self {
            cloud_storage: false,
            private_network: false,
            hosts: Vec::new(),
            schemes: Vec::new(),
        }
    }

    /// Allows cloud storage URLs (`s3://`, `gs://`, and the others [`UserUrls`] lists), which
    /// the provider reads with the application's credentials: any object those credentials
    /// can read, a user may then have the model read. [`allow_host`](Self::allow_host) allows
    /// one bucket instead.
    #[must_use]
    pub fn allow_cloud_storage(mut self) -> Self {
        self.cloud_storage = true;
        self
    }

    /// Allows `http:` and `https:` URLs on a private network: private, loopback and
    /// link-local addresses (the cloud's metadata service included) and local names.
    /// [`allow_host`](Self::allow_host) allows one host instead.
    #[must_use]
    pub fn allow_private_network(mut self) -> Self {
        self.private_network = true;
        self
    }

    /// Allows the `http:`, `https:` and cloud storage URLs whose host is `host` (without a
    /// port), whatever it is: a private name (`wiki.corp`, matched whole and case-insensitively, not its
    /// subdomains), a private address (`10.0.0.7`, `[fd00::7]`), or a bucket (`s3://uploads/…`
    /// and `gs://uploads/…` have the host `uploads`). It allows no other scheme.
    #[must_use]
    pub fn allow_host(mut self, host: impl AsRef<str>) -> Self {
        self.hosts.push(Host::read(host.as_ref()));
        self
    }

    /// Allows the URLs of `scheme` (`"s3"`, `"file"`; case-insensitive, with or without the
    /// `:`), whatever their host: `allow_scheme("s3")` lets S3 through but not `gs:`, and
    /// `allow_scheme("http")` lets every `http:` URL through, private ones included.
    #[must_use]
    pub fn allow_scheme(mut self, scheme: impl AsRef<str>) -> Self {
        let scheme = scheme.as_ref().trim();
        let scheme = scheme.strip_suffix(':').unwrap_or(scheme);
        self.schemes.push(scheme.to_ascii_lowercase());
        self
    }

    /// Fails, before anything is sent, if a user message of `request` holds a URL this policy
    /// does not allow; `provider` names the provider in the error.
    pub(crate) fn check(&self, provider: &str, request: &ModelRequest) -> Result<(), ModelError> {
        let users = request.messages.iter().enumerate().filter(|(_, message)| {
            // A role this version does not know is checked: providers send it as the user's.
            !matches!(message.role, Role::System | Role::Assistant | Role::Tool)
        });
        for (index, message) in users {
            for url in message.content.parts().iter().filter_map(fetched_url) {
                let url = classify(url);
                if !self.allows(&url) {
                    return Err(refused(provider, index, &url));
                }
            }
        }
        Ok(())
    }

    /// Whether a URL of this kind, scheme and host may be sent.
    fn allows(&self, url: &Classified) -> bool {
        let host_allowed = || {
            url.host
                .as_ref()
                .is_some_and(|host| self.hosts.contains(host))
        };
        match url.kind {
            Kind::Inline | Kind::Public => true,
            Kind::Unparsable => false,
            _ if self.schemes.contains(&url.scheme) => true,
            Kind::PrivateNetwork => self.private_network || host_allowed(),
            Kind::CloudStorage => self.cloud_storage || host_allowed(),
            Kind::OtherScheme => false,
        }
    }
}

/// The URL a part has the provider fetch, if any: an image's. Other parts of a user message
/// (a resource link's URI among them) are sent as text, which no provider fetches.
fn fetched_url(part: &ContentPart) -> Option<&str> {
    match part {
        ContentPart::Image { source } => match &**source {
            ImageSource::Url { url } => Some(url),
            _ => None,
        },
        _ => None,
    }
}

/// The error for a refused URL: what it is (its scheme and host only) and what allows it.
fn refused(provider: &str, index: usize, url: &Classified) -> ModelError {
    let shown = match &url.host {
        Some(host) => format!("`{}://{}`", url.scheme, shortened(&host.to_string())),
        None => format!("`{}:`", url.scheme),
    };
    let (what, allow) = match url.kind {
        Kind::CloudStorage => (
            format!(
                "is in cloud storage ({shown}), which the provider would read with this \
                 application's credentials"
            ),
            "`.user_urls(UserUrls::new().allow_cloud_storage())`, or `.allow_host(\"<bucket>\")` \
             for one bucket"
                .to_owned(),
        ),
        Kind::PrivateNetwork => (
            format!(
                "is on a private network ({shown}), which the provider's server would fetch \
                 from inside it"
            ),
            "`.user_urls(UserUrls::new().allow_private_network())`, or `.allow_host(\"<host>\")` \
             for one host"
                .to_owned(),
        ),
        Kind::OtherScheme => (
            format!("has the scheme {shown} (only `http`, `https` and `data` are sent)"),
            format!(
                "`.user_urls(UserUrls::new().allow_scheme(\"{}\"))`",
                shortened(&url.scheme)
            ),
        ),
        Kind::Unparsable | Kind::Inline | Kind::Public => {
            return ModelError::invalid_request(format!(
                "{provider} request refused before sending: the image URL of the user message \
                 at index {index} does not parse, or URL parsers may read it differently \
                 (a backslash, whitespace); send the image inline (base64 or a `data:` URL) \
                 or at a well-formed `https:` URL"
            ));
        }
    };
    ModelError::invalid_request(format!(
        "{provider} request refused before sending: the image URL of the user message at index \
         {index} {what}; if the application means its users to send such URLs, give the \
         model's builder {allow}"
    ))
}

/// `text`, cut to 100 characters: a host shown in an error stays readable.
fn shortened(text: &str) -> String {
    match text.char_indices().nth(100) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

/// The setter every provider's builder has for its [`UserUrls`] (kept in `self.config`): one
/// definition, so that the builders cannot drift apart.
macro_rules! user_urls_setter {
    () => {
        /// Which image URLs of users' messages the model may be sent (default
        /// [`UserUrls::new`](crate::UserUrls::new): inline images and public `http:`/`https:`
        /// URLs). A request with another (cloud storage, a private network, another scheme)
        /// fails with an `InvalidRequest` error before anything is sent; see
        /// [`UserUrls`](crate::UserUrls) for what each setting allows.
        pub fn user_urls(mut self, policy: crate::UserUrls) -> Self {
            self.config.user_urls = policy;
            self
        }
    };
}
pub(crate) use user_urls_setter;
