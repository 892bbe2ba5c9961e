//! The connection string: `sslmode` and `sslrootcert`, which the store reads itself (with
//! libpq's meaning: tokio-postgres knows neither `verify-full` nor `sslrootcert`), and the rest,
//! which tokio-postgres reads.
//!
//! Nothing of the string goes into an error: it may hold a password.

use std::net::IpAddr;
use std::ops::Range;

use hookchain_core::interrupt::CheckpointError;
use percent_encoding::percent_decode_str;
use tokio_postgres::Config;
use tokio_postgres::config::Host;

/// libpq's `sslmode`, as the string asks for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum SslModeAsked {
    Disable,
    Allow,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslModeAsked {
    fn parse(value: &str) -> Option<Self> {
        Some(match value {
            "disable" => SslModeAsked::Disable,
            "allow" => SslModeAsked::Allow,
            "prefer" => SslModeAsked::Prefer,
            "require" => SslModeAsked::Require,
            "verify-ca" => SslModeAsked::VerifyCa,
            "verify-full" => SslModeAsked::VerifyFull,
            _ => return None,
        })
    }

    /// The value as written in a connection string.
    pub(super) fn name(self) -> &'static str {
        match self {
            SslModeAsked::Disable => "disable",
            SslModeAsked::Allow => "allow",
            SslModeAsked::Prefer => "prefer",
            SslModeAsked::Require => "require",
            SslModeAsked::VerifyCa => "verify-ca",
            SslModeAsked::VerifyFull => "verify-full",
        }
    }
}

/// A connection string read: tokio-postgres's [`Config`] of everything but `sslmode` and
/// `sslrootcert` (its own `sslmode` left at its default, for the caller to set), and those two.
pub(super) struct ConnectionString {
    pub(super) config: Config,
    pub(super) ssl_mode: Option<SslModeAsked>,
    /// `sslrootcert`: a PEM file of root certificates.
    pub(super) root_certificates: Option<String>,
}

impl ConnectionString {
    /// Reads `text`: a libpq-style string (`host=… user=…`) or a `postgres://` /
    /// `postgresql://` URL (`?sslmode=…&sslrootcert=…`).
    pub(super) fn parse(text: &str) -> Result<Self, CheckpointError> {
        let (rest, ours) = split(text);
        let mut ssl_mode = None;
        let mut root_certificates = None;
        for (key, value) in ours {
            match key {
                Ours::SslMode => {
                    ssl_mode = Some(SslModeAsked::parse(&value).ok_or_else(|| {
                        parse_error(
                            "`sslmode` is none of disable, allow, prefer, require, verify-ca, \
                             verify-full",
                        )
                    })?);
                }
                Ours::SslRootCert => root_certificates = Some(value),
            }
        }
        let config = rest
            .parse::<Config>()
            .map_err(|error| parse_error(redacted(&error)))?;
        Ok(ConnectionString {
            config,
            ssl_mode,
            root_certificates,
        })
    }
}

/// The first host of `config` that is not this machine (a name other than `localhost`, an
/// address other than a loopback one), if any: Unix sockets are this machine's.
pub(super) fn remote_host(config: &Config) -> Option<String> {
    let hosts = config.get_hosts().iter().filter_map(|host| match host {
        Host::Tcp(name) => (!is_loopback_name(name)).then(|| name.clone()),
        Host::Unix(_) => None,
    });
    let addresses = config
        .get_hostaddrs()
        .iter()
        .filter(|address| !address.to_canonical().is_loopback())
        .map(IpAddr::to_string);
    hosts.chain(addresses).next()
}

/// The first Unix socket of `config`, if any (`host=/var/run/postgresql`).
pub(super) fn unix_socket(config: &Config) -> Option<String> {
    config.get_hosts().iter().find_map(|host| match host {
        Host::Unix(path) => Some(path.display().to_string()),
        Host::Tcp(_) => None,
    })
}

/// `localhost`, or a loopback address (`127.0.0.0/8`, `::1`, `::ffff:127.0.0.1`).
fn is_loopback_name(name: &str) -> bool {
    name.eq_ignore_ascii_case("localhost")
        || name
            .parse::<IpAddr>()
            .is_ok_and(|address| address.to_canonical().is_loopback())
}

/// The parameters the store reads itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ours {
    SslMode,
    SslRootCert,
}

impl Ours {
    fn of(key: &str) -> Option<Ours> {
        match key {
            "sslmode" => Some(Ours::SslMode),
            "sslrootcert" => Some(Ours::SslRootCert),
            _ => None,
        }
    }
}

/// `text` without the parameters the store reads itself, and those, in order (the last of a
/// key wins, as in libpq). A string whose grammar is wrong is returned whole, for
/// tokio-postgres to refuse with its own error (it reads the same grammar).
fn split(text: &str) -> (String, Vec<(Ours, String)>) {
    let split = match url_query(text) {
        Some(query) => split_url(text, query),
        None => split_key_values(text),
    };
    split.unwrap_or_else(|| (text.to_owned(), Vec::new()))
}

/// Where the query of a URL starts (after its `?`), read as tokio-postgres reads a URL: the
/// credentials up to the first `@`, the hosts up to a `/` or a `?`, the database up to a `?`.
/// `None` for a string that is not a URL; an empty range for a URL without a query.
fn url_query(text: &str) -> Option<Range<usize>> {
    let start = ["postgres://", "postgresql://"]
        .iter()
        .find_map(|prefix| text.strip_prefix(prefix).map(|_| prefix.len()))?;
    let end = text.len();
    let mut at = start;
    if let Some(credentials) = text[at..].find('@') {
        at += credentials + 1;
    }
    match text[at..].find(['/', '?']) {
        Some(host_end) => at += host_end,
        None => return Some(end..end),
    }
    if text[at..].starts_with('/') {
        match text[at..].find('?') {
            Some(path_end) => at += path_end,
            None => return Some(end..end),
        }
    }
    Some(at + 1..end)
}

/// A URL without the store's parameters in its query.
fn split_url(text: &str, query: Range<usize>) -> Option<(String, Vec<(Ours, String)>)> {
    if query.is_empty() {
        return Some((text.to_owned(), Vec::new()));
    }
    let mut kept = Vec::new();
    let mut ours = Vec::new();
    let mut rest = &text[query.clone()];
    while !rest.is_empty() {
        let equals = rest.find('=')?;
        let (key, after) = (&rest[..equals], &rest[equals + 1..]);
        let (value, next) = match after.find('&') {
            Some(amp) => (&after[..amp], &after[amp + 1..]),
            None => (after, ""),
        };
        let parameter = &rest[..equals + 1 + value.len()];
        let decoded = percent_decode_str(key).decode_utf8().ok();
        match decoded.as_deref().and_then(Ours::of) {
            Some(key) => ours.push((key, percent_decode_str(value).decode_utf8().ok()?.into())),
            None => kept.push(parameter),
        }
        rest = next;
    }
    // The URL up to its `?`.
    let mut url = text[..query.start - 1].to_owned();
    if !kept.is_empty() {
        url.push('?');
        url.push_str(&kept.join("&"));
    }
    Some((url, ours))
}

/// A libpq-style string without the store's parameters (the others kept as written: quotes,
/// escapes).
fn split_key_values(text: &str) -> Option<(String, Vec<(Ours, String)>)> {
    let mut kept = Vec::new();
    let mut ours = Vec::new();
    let mut chars = text.char_indices().peekable();
    let position = |chars: &mut std::iter::Peekable<std::str::CharIndices<'_>>| {
        chars.peek().map_or(text.len(), |&(at, _)| at)
    };
    loop {
        while chars.next_if(|&(_, c)| c.is_whitespace()).is_some() {}
        let start = position(&mut chars);
        while chars
            .next_if(|&(_, c)| !c.is_whitespace() && c != '=')
            .is_some()
        {}
        let key = &text[start..position(&mut chars)];
        if key.is_empty() {
            break;
        }
        while chars.next_if(|&(_, c)| c.is_whitespace()).is_some() {}
        chars.next_if(|&(_, c)| c == '=')?;
        while chars.next_if(|&(_, c)| c.is_whitespace()).is_some() {}
        let mut value = String::new();
        if chars.next_if(|&(_, c)| c == '\'').is_some() {
            loop {
                match chars.next()?.1 {
                    '\'' => break,
                    '\\' => value.extend(chars.next().map(|(_, c)| c)),
                    c => value.push(c),
                }
            }
        } else {
            while let Some((_, c)) = chars.next_if(|&(_, c)| !c.is_whitespace()) {
                if c == '\\' {
                    value.extend(chars.next().map(|(_, c)| c));
                } else {
                    value.push(c);
                }
            }
            if value.is_empty() {
                return None;
            }
        }
        match Ours::of(key) {
            Some(key) => ours.push((key, value)),
            None => kept.push(&text[start..position(&mut chars)]),
        }
    }
    Some((kept.join(" "), ours))
}

/// tokio-postgres's error for a string it does not read, without the name of an unknown option:
/// in a string whose password is not quoted right, that "option" is part of the password.
fn redacted(error: &tokio_postgres::Error) -> String {
    let message = error.to_string();
    if message.contains("unknown option") {
        "invalid connection string: an unknown option (its name is left out of this error: in a \
         string whose values are not quoted right it may be part of a password)"
            .to_owned()
    } else {
        message
    }
}

fn parse_error(message: impl Into<String>) -> CheckpointError {
    CheckpointError::Store {
        what: "parse the connection string",
        source: message.into().into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split_ok(text: &str) -> (String, Vec<(Ours, String)>) {
        split(text)
    }

    #[test]
    fn key_values_lose_the_store_s_parameters_and_keep_the_rest_as_written() {
        let (rest, ours) = split_ok(
            "host=db  sslmode=verify-full password='a b\\'c' sslrootcert = '/etc/ca dir/ca.pem' \
             user=x\\ y",
        );
        assert_eq!(rest, "host=db password='a b\\'c' user=x\\ y");
        assert_eq!(
            ours,
            [
                (Ours::SslMode, "verify-full".to_owned()),
                (Ours::SslRootCert, "/etc/ca dir/ca.pem".to_owned()),
            ]
        );
        let config: Config = rest.parse().unwrap();
        assert_eq!(config.get_password(), Some(&b"a b'c"[..]));
        assert_eq!(config.get_user(), Some("x y"));
    }

    #[test]
    fn a_key_value_string_of_the_wrong_grammar_is_left_whole() {
        for text in ["host=db password='open", "host", "host=db sslmode="] {
            assert_eq!(split_ok(text), (text.to_owned(), Vec::new()), "{text}");
        }
    }

    #[test]
    fn urls_lose_the_store_s_parameters_from_their_query() {
        let cases = [
            (
                "postgresql://u:p%3F@db:5432/agents?sslmode=verify-full&application_name=a&sslrootcert=%2Fca.pem",
                "postgresql://u:p%3F@db:5432/agents?application_name=a",
            ),
            (
                "postgres://db/agents?sslmode=require",
                "postgres://db/agents",
            ),
            ("postgres://db?sslmode=disable", "postgres://db"),
            ("postgres://db/agents", "postgres://db/agents"),
            ("postgres://db", "postgres://db"),
            (
                "postgres://u@db/x?connect_timeout=5",
                "postgres://u@db/x?connect_timeout=5",
            ),
        ];
        for (url, rest) in cases {
            assert_eq!(split_ok(url).0, rest, "{url}");
        }
        let (_, ours) = split_ok(
            "postgresql://u:p%3F@db:5432/agents?sslmode=verify-full&application_name=a&sslrootcert=%2Fca.pem",
        );
        assert_eq!(
            ours,
            [
                (Ours::SslMode, "verify-full".to_owned()),
                (Ours::SslRootCert, "/ca.pem".to_owned()),
            ]
        );
        assert!(
            "postgresql://u:p%3F@db:5432/agents?application_name=a"
                .parse::<Config>()
                .is_ok()
        );
    }

    #[test]
    fn sslmode_takes_libpq_s_values_only() {
        let parsed = ConnectionString::parse("host=db sslmode=verify-ca").unwrap();
        assert_eq!(parsed.ssl_mode, Some(SslModeAsked::VerifyCa));
        let error = ConnectionString::parse("host=db sslmode=strict")
            .err()
            .unwrap();
        assert!(format!("{:?}", error).contains("none of"), "{error:?}");
    }

    #[test]
    fn an_unknown_option_is_not_named() {
        // A password with a space, unquoted: its second half reads as an option.
        let error = ConnectionString::parse("host=db password=hunter 2secret=x")
            .err()
            .unwrap();
        assert!(!format!("{error:?}").contains("2secret"), "{error:?}");
        let error = ConnectionString::parse("host=db password=hunter2 port=x")
            .err()
            .unwrap();
        assert!(!format!("{error:?}").contains("hunter2"), "{error:?}");
    }

    #[test]
    fn loopback_hosts_are_this_machine() {
        let remote = |text: &str| remote_host(&text.parse().unwrap());
        assert_eq!(remote("host=127.0.0.1"), None);
        assert_eq!(remote("host=localhost,::1,/var/run/postgresql"), None);
        assert_eq!(remote("host=127.0.0.2 hostaddr=127.0.0.1"), None);
        assert_eq!(remote("postgres://[::1]:5432/x"), None);
        assert_eq!(remote("host=db"), Some("db".to_owned()));
        assert_eq!(
            remote("host=localhost,10.0.0.1"),
            Some("10.0.0.1".to_owned())
        );
        assert_eq!(
            remote("host=localhost hostaddr=10.0.0.1"),
            Some("10.0.0.1".to_owned())
        );
    }
}
