//! The browser is hostile: a page of any site can make a signed-in user's browser send
//! requests to the server (with its cookies), and a page can point a name of its own at a
//! server on the user's machine (DNS rebinding). So, before anything else runs:
//!
//! - the `Host` must be one the server answers (by default loopback only);
//! - a request from a page (`Origin`, or `Sec-Fetch-Site`) must come from the server's own
//!   origin or one it allows; `Origin: null` (a sandboxed frame, a file) is refused;
//! - a body must be `application/json`: a page can send `text/plain` or a form to any site
//!   without asking (a CORS "simple request"), never JSON.

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

use super::Problem;
use super::builder::ServerBuildError;

/// The `Host`s a server answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Hosts {
    /// `localhost` (and its subdomains), `127.0.0.0/8`, `[::1]`.
    Loopback,
    /// These names (lowercase, without port).
    List(Vec<String>),
    /// Any.
    Any,
}

/// The checks, as configured.
#[derive(Debug)]
pub(crate) struct BrowserGuard {
    /// The origins allowed besides the server's own, lowercase, without a default port.
    origins: Vec<String>,
    hosts: Hosts,
}

impl BrowserGuard {
    pub(crate) fn new(origins: Vec<String>, hosts: Hosts) -> Result<Self, ServerBuildError> {
        let origins = origins
            .into_iter()
            .map(|origin| {
                normalized_origin(&origin)
                    .filter(|(_, authority)| !authority.is_empty())
                    .map(|(scheme, authority)| format!("{scheme}://{authority}"))
                    .ok_or(ServerBuildError::Origin(origin))
            })
            .collect::<Result<_, _>>()?;
        Ok(BrowserGuard { origins, hosts })
    }

    /// The origins allowed besides the server's own (for CORS).
    pub(crate) fn origins(&self) -> &[String] {
        &self.origins
    }

    /// Why `request` is refused, if it is.
    fn refusal(
        &self,
        method: &Method,
        headers: &HeaderMap,
        uri_host: Option<&str>,
    ) -> Option<Problem> {
        let host = headers
            .get(header::HOST)
            .and_then(|value| value.to_str().ok())
            .or(uri_host)
            .unwrap_or_default()
            .to_ascii_lowercase();
        if !self.answers(&host) {
            return Some(Problem::new(
                StatusCode::FORBIDDEN,
                "host_not_allowed",
                "this server does not answer for that host",
            ));
        }
        if !self.origin_allowed(headers, &host) {
            return Some(Problem::new(
                StatusCode::FORBIDDEN,
                "cross_origin",
                "requests from other sites' pages are refused",
            ));
        }
        if *method == Method::POST && !is_json(headers) {
            return Some(Problem::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
                "the body must be JSON, sent as `Content-Type: application/json`",
            ));
        }
        None
    }

    /// Whether the server answers for `host` (`name[:port]`).
    fn answers(&self, host: &str) -> bool {
        let name = host_name(host);
        match &self.hosts {
            Hosts::Any => true,
            Hosts::List(names) => names.iter().any(|allowed| allowed == name),
            Hosts::Loopback => is_loopback(name),
        }
    }

    /// Whether the request comes from no page, the server's own origin, or an allowed one.
    fn origin_allowed(&self, headers: &HeaderMap, host: &str) -> bool {
        let Some(origin) = headers.get(header::ORIGIN) else {
            // No `Origin`: not a page's cross-origin request (browsers send it on every one
            // but a simple GET), unless the browser says otherwise.
            return !matches!(
                headers.get("sec-fetch-site").map(HeaderValue::as_bytes),
                Some(b"cross-site" | b"same-site")
            );
        };
        let Some((scheme, authority)) = origin.to_str().ok().and_then(normalized_origin) else {
            return false;
        };
        if authority.is_empty() {
            return false;
        }
        authority == strip_default_port(&scheme, host)
            || self
                .origins
                .iter()
                .any(|allowed| *allowed == format!("{scheme}://{authority}"))
    }
}

/// The middleware: refuses what the guard refuses, before anything else runs.
pub(crate) async fn guard(
    State(guard): State<Arc<BrowserGuard>>,
    request: Request,
    next: Next,
) -> Response {
    let uri_host = request
        .uri()
        .authority()
        .map(|authority| authority.as_str().to_owned());
    match guard.refusal(request.method(), request.headers(), uri_host.as_deref()) {
        Some(problem) => problem.into_response(),
        None => next.run(request).await,
    }
}

/// Whether the body is declared JSON (`application/json`, with parameters or not).
fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .is_some_and(|media| media.trim().eq_ignore_ascii_case("application/json"))
}

/// `scheme://authority` of `origin`, lowercase, without the scheme's default port; `None` for
/// what is not one (`null`, a path, no scheme).
fn normalized_origin(origin: &str) -> Option<(String, String)> {
    let origin = origin.trim().to_ascii_lowercase();
    let (scheme, authority) = origin.split_once("://")?;
    if scheme.is_empty() || authority.contains(['/', '?', '#', '@']) {
        return None;
    }
    let authority = strip_default_port(scheme, authority).to_owned();
    Some((scheme.to_owned(), authority))
}

/// `authority` without `:80` for http and `:443` for https.
fn strip_default_port<'a>(scheme: &str, authority: &'a str) -> &'a str {
    let default = match scheme {
        "http" | "ws" => ":80",
        "https" | "wss" => ":443",
        _ => return authority,
    };
    authority.strip_suffix(default).unwrap_or(authority)
}

/// The name of `host` (`name[:port]`, `[v6]:port`), without its port.
fn host_name(host: &str) -> &str {
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split(']').next().unwrap_or_default();
    }
    host.rsplit_once(':')
        .filter(|(_, port)| port.bytes().all(|byte| byte.is_ascii_digit()))
        .map_or(host, |(name, _)| name)
}

/// Whether `name` is a loopback host: `localhost`, `*.localhost`, `127.0.0.0/8`, `::1`.
fn is_loopback(name: &str) -> bool {
    let name = name.trim_end_matches('.');
    name == "localhost"
        || name.ends_with(".localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|address| address.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        pairs
            .iter()
            .map(|(name, value)| {
                (
                    header::HeaderName::from_static(name),
                    HeaderValue::from_static(value),
                )
            })
            .collect()
    }

    fn code(
        guard: &BrowserGuard,
        method: Method,
        pairs: &[(&'static str, &'static str)],
    ) -> Option<&'static str> {
        guard
            .refusal(&method, &headers(pairs), None)
            .map(|problem| problem.code)
    }

    const JSON: (&str, &str) = ("content-type", "application/json");

    #[test]
    fn loopback_hosts_only_by_default() {
        let guard = BrowserGuard::new(Vec::new(), Hosts::Loopback).unwrap();
        for host in [
            "localhost:3000",
            "127.0.0.1:80",
            "[::1]:8080",
            "app.localhost",
            "127.1.2.3",
        ] {
            assert!(guard.answers(host), "{host}");
        }
        for host in [
            "evil.example:3000",
            "10.0.0.1",
            "",
            "localhost.evil.example",
        ] {
            assert!(!guard.answers(host), "{host}");
        }
        let named =
            BrowserGuard::new(Vec::new(), Hosts::List(vec!["chat.example.com".into()])).unwrap();
        assert!(named.answers("chat.example.com:443"));
        assert!(!named.answers("localhost"));
    }

    #[test]
    fn pages_of_other_origins_are_refused_and_the_servers_own_pass() {
        let guard = BrowserGuard::new(vec!["https://app.example.com".into()], Hosts::Any).unwrap();
        let host = ("host", "api.example.com");
        assert_eq!(
            code(&guard, Method::POST, &[host, JSON]),
            None,
            "no Origin: not a page"
        );
        assert_eq!(
            code(
                &guard,
                Method::POST,
                &[host, JSON, ("origin", "https://api.example.com")]
            ),
            None
        );
        assert_eq!(
            code(
                &guard,
                Method::POST,
                &[host, JSON, ("origin", "https://app.example.com:443")]
            ),
            None,
            "allowed, default port written out"
        );
        for origin in [
            "https://evil.example",
            "null",
            "https://app.example.com.evil.example",
        ] {
            let origin = HeaderValue::from_str(origin).unwrap();
            let mut map = headers(&[host, JSON]);
            map.insert(header::ORIGIN, origin);
            assert_eq!(
                guard
                    .refusal(&Method::POST, &map, None)
                    .map(|problem| problem.code),
                Some("cross_origin")
            );
        }
        assert_eq!(
            code(
                &guard,
                Method::GET,
                &[host, ("sec-fetch-site", "cross-site")]
            ),
            Some("cross_origin")
        );
        assert_eq!(
            code(
                &guard,
                Method::GET,
                &[host, ("sec-fetch-site", "same-origin")]
            ),
            None
        );
    }

    #[test]
    fn a_body_that_is_not_json_is_refused() {
        let guard = BrowserGuard::new(Vec::new(), Hosts::Loopback).unwrap();
        let host = ("host", "localhost");
        for content_type in [
            "text/plain",
            "application/x-www-form-urlencoded",
            "multipart/form-data",
        ] {
            let mut map = headers(&[host]);
            map.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
            assert_eq!(
                guard
                    .refusal(&Method::POST, &map, None)
                    .map(|problem| problem.code),
                Some("unsupported_media_type")
            );
        }
        assert_eq!(
            code(&guard, Method::POST, &[host]),
            Some("unsupported_media_type")
        );
        assert_eq!(
            code(
                &guard,
                Method::POST,
                &[host, ("content-type", "Application/JSON; charset=utf-8")]
            ),
            None
        );
        assert_eq!(code(&guard, Method::GET, &[host]), None);
    }

    #[test]
    fn an_origin_that_is_not_one_is_a_build_error() {
        assert!(BrowserGuard::new(vec!["app.example.com".into()], Hosts::Any).is_err());
        assert!(
            BrowserGuard::new(vec!["https://app.example.com/path".into()], Hosts::Any).is_err()
        );
    }
}
