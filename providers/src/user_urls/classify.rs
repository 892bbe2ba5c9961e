//! What a URL in a user's message points at: inline data, the public web, a private network,
//! cloud storage, another scheme, or nothing that parses. No policy here, and no network: the
//! URL is read, never resolved nor fetched.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// What a URL points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A `data:` URL: the bytes are in the URL, nothing is fetched.
    Inline,
    /// An `http:` or `https:` URL whose host is neither a private address nor a private name.
    Public,
    /// An `http:` or `https:` URL whose host is a private, loopback, link-local (cloud
    /// metadata), shared (CGNAT) or otherwise non-public address, or a name that only a local
    /// network resolves.
    PrivateNetwork,
    /// A cloud storage URL (`s3://`, `gs://`, …), which the provider reads with the
    /// application's credentials.
    CloudStorage,
    /// A URL of another scheme (`file:`, `ftp:`, …).
    OtherScheme,
    /// Text that does not parse as a URL, or that URL parsers may read differently (a
    /// backslash, whitespace, control characters).
    Unparsable,
}

/// A URL's host, as compared with an allowlist's and shown in errors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Host {
    /// An IP address (IPv4 in any form the URL standard reads, `2130706433` included).
    Ip(IpAddr),
    /// A name, lower-cased, without a trailing dot (or a bucket's name, for cloud storage).
    Name(String),
}

impl Host {
    /// `host` read as an address if it is one (an IPv6 address in brackets or not), as a name
    /// otherwise. A parsed URL's host is exact this way: the URL standard has already turned
    /// every IPv4 form (`2130706433`, `0x7f.1`, `0177.0.0.1`) into dotted decimal.
    pub(crate) fn read(host: &str) -> Self {
        let host = host.trim();
        let bare = host
            .strip_prefix('[')
            .and_then(|host| host.strip_suffix(']'))
            .unwrap_or(host);
        match bare.parse::<IpAddr>() {
            Ok(ip) => Host::Ip(ip),
            Err(_) => Host::Name(normalized_name(host)),
        }
    }
}

impl fmt::Display for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Host::Ip(IpAddr::V6(ip)) => write!(f, "[{ip}]"),
            Host::Ip(ip) => write!(f, "{ip}"),
            Host::Name(name) => f.write_str(name),
        }
    }
}

/// A URL, classified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Classified {
    pub(crate) kind: Kind,
    /// The scheme, lower-cased (empty when the URL does not parse).
    pub(crate) scheme: String,
    /// The host, if the URL has one.
    pub(crate) host: Option<Host>,
}

/// The schemes of cloud storage: AWS S3 (and Hadoop's names for it), Google Cloud Storage,
/// Azure Blob and Data Lake storage.
const CLOUD_STORAGE: &[&str] = &[
    "s3", "s3a", "s3n", "gs", "gcs", "az", "azure", "abfs", "abfss", "wasb", "wasbs", "adl",
];

/// Names that only a local network resolves: reserved for it (`localhost`, `local`, `internal`,
/// `home.arpa`), or used for it by convention and never delegated as public top-level domains.
const PRIVATE_SUFFIXES: &[&str] = &[
    "localhost",
    "local",
    "internal",
    "home.arpa",
    "localdomain",
    "lan",
    "home",
    "corp",
    "intranet",
];

/// What `url` points at.
pub(crate) fn classify(url: &str) -> Classified {
    let unparsable = || Classified {
        kind: Kind::Unparsable,
        scheme: String::new(),
        host: None,
    };
    // A `data:` URL is let through unparsed: an inline image may be megabytes long.
    if let Some(scheme) = scheme_of(url)
        && scheme.eq_ignore_ascii_case("data")
    {
        return Classified {
            kind: Kind::Inline,
            scheme: "data".to_owned(),
            host: None,
        };
    }
    // The URL is sent as written, not as parsed here: text that parsers read differently
    // (`http://public.example\@10.0.0.1/`, a space before an `@`) could mean one host to this
    // check and another to the server that fetches it. The URL standard strips tabs and line
    // breaks, and reads a backslash as a slash; other parsers do not.
    if url
        .bytes()
        .any(|byte| byte.is_ascii_control() || byte == b' ' || byte == b'\\')
    {
        return unparsable();
    }
    let Ok(parsed) = reqwest::Url::parse(url) else {
        return unparsable();
    };
    let scheme = parsed.scheme().to_owned();
    let host = parsed.host_str().map(Host::read);
    let kind = match scheme.as_str() {
        // The URL standard finds a host in `http:host`, `http:/host` and `http:///host` too,
        // where other parsers find none, or a path: only `http://host` is sent.
        "http" | "https" if !has_two_slashes(url) => Kind::Unparsable,
        "http" | "https" => match &host {
            Some(host) if is_private(host) => Kind::PrivateNetwork,
            Some(_) => Kind::Public,
            // The URL standard gives every `http:` URL a host; were one missing, it is not
            // sent.
            None => Kind::Unparsable,
        },
        scheme if CLOUD_STORAGE.contains(&scheme) => Kind::CloudStorage,
        _ => Kind::OtherScheme,
    };
    Classified { kind, scheme, host }
}

/// The scheme of `url` (before the first `:`), if it is one by the URL standard's rules.
fn scheme_of(url: &str) -> Option<&str> {
    let (scheme, _) = url.split_once(':')?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic()
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
    .then_some(scheme)
}

/// Whether exactly two slashes follow the scheme's `:`, as in `http://host`.
fn has_two_slashes(url: &str) -> bool {
    url.split_once(':')
        .and_then(|(_, rest)| rest.strip_prefix("//"))
        .is_some_and(|rest| !rest.starts_with('/'))
}

/// A name as compared: lower-cased, without its trailing dot (`LocalHost.` is `localhost`).
fn normalized_name(name: &str) -> String {
    name.strip_suffix('.').unwrap_or(name).to_ascii_lowercase()
}

/// Whether `host` is on a private network (see [`Kind::PrivateNetwork`]).
fn is_private(host: &Host) -> bool {
    match host {
        Host::Ip(IpAddr::V4(ip)) => is_private_v4(*ip),
        Host::Ip(IpAddr::V6(ip)) => is_private_v6(*ip),
        Host::Name(name) => is_private_name(name),
    }
}

/// Whether an IPv4 address is anything but a public unicast address.
fn is_private_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    a == 0 // "this network", 0.0.0.0 included
        || ip.is_loopback() // 127.0.0.0/8
        || ip.is_private() // 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16
        || ip.is_link_local() // 169.254.0.0/16: the cloud metadata services
        || (a == 100 && (b & 0xc0) == 64) // 100.64.0.0/10: shared (CGNAT), Alibaba's metadata
        || (a == 192 && b == 0 && c == 0) // 192.0.0.0/24: IETF protocol assignments
        || (a == 198 && (b & 0xfe) == 18) // 198.18.0.0/15: benchmarking
        || ip.is_multicast() // 224.0.0.0/4
        || a >= 240 // 240.0.0.0/4, reserved, and the broadcast address
}

/// Whether an IPv6 address is anything but a public unicast address; an IPv4 address written
/// in IPv6 (mapped, compatible, NAT64, 6to4) is judged as that IPv4 address.
fn is_private_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = embedded_v4(ip) {
        return is_private_v4(v4);
    }
    let [first, second, third, ..] = ip.segments();
    ip.is_unspecified()
        || ip.is_loopback()
        || (first & 0xfe00) == 0xfc00 // fc00::/7: unique local (AWS's metadata is fd00:ec2::254)
        || (first & 0xffc0) == 0xfe80 // fe80::/10: link-local
        || (first & 0xffc0) == 0xfec0 // fec0::/10: site-local (deprecated)
        || ip.is_multicast() // ff00::/8
        || [first, second, third] == [0x64, 0xff9b, 1] // 64:ff9b:1::/48: local-use NAT64
}

/// The IPv4 address an IPv6 address carries: `::ffff:a.b.c.d` (mapped), `::a.b.c.d`
/// (compatible, deprecated; `::` and `::1` are handled as such too, and are private either
/// way), `64:ff9b::a.b.c.d` (NAT64) and `2002:aabb:ccdd::/48` (6to4).
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let tail = || Ipv4Addr::from(((u32::from(s[6])) << 16) | u32::from(s[7]));
    match s {
        [0, 0, 0, 0, 0, 0xffff, _, _] | [0, 0, 0, 0, 0, 0, _, _] => Some(tail()),
        [0x64, 0xff9b, 0, 0, 0, 0, _, _] => Some(tail()),
        [0x2002, high, low, ..] => Some(Ipv4Addr::from((u32::from(high) << 16) | u32::from(low))),
        _ => None,
    }
}

/// Whether a (lower-cased) name is only resolved on a local network: one without a dot (an
/// intranet's `wiki`, `metadata`, `localhost`), or under a private suffix
/// (`metadata.google.internal`, `printer.local`, `app.localhost`).
fn is_private_name(name: &str) -> bool {
    !name.contains('.')
        || PRIVATE_SUFFIXES.iter().any(|suffix| {
            name.strip_suffix(suffix)
                .is_some_and(|rest| rest.is_empty() || rest.ends_with('.'))
        })
}
