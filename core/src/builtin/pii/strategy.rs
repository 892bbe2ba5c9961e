//! What [`Pii`](super::Pii) does with what it finds.

use std::fmt::Write;

use sha2::{Digest, Sha256};

use super::detector::PiiType;

/// What becomes of a piece of personal data that was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PiiStrategy {
    /// Nothing is rewritten: the input stops the run, the model's answer stops the run, and
    /// a tool result is replaced by an error result; each error names the kind of data and
    /// how many were found ([`PiiBlocked`](super::PiiBlocked)).
    Block,
    /// Replaced by `[REDACTED_<KIND>]`: `[REDACTED_EMAIL]`, `[REDACTED_CREDIT_CARD]`.
    Redact,
    /// Partly hidden with `*`: a card keeps its last 4 digits (`**** **** **** 1111`), an
    /// e-mail address its domain (`****@example.com`), an IPv4 address its last octet
    /// (`*.*.*.23`), an IPv6 address its last group (`*:*:*:*:*:*:*:7334`; with an IPv4
    /// tail, its last octet: `*:*:*:*:*:*:*.*.*.23`), a MAC address its last octet
    /// (`**:**:**:**:**:5e`), a URL its scheme and host (`https://example.com/***`), your own
    /// detectors' findings their last 4 characters.
    Mask,
    /// Replaced by a stable hash, so that the same value reads the same everywhere without
    /// being readable: `[HASHED_EMAIL:<16 hex digits>]`, the first 8 bytes of the SHA-256 of
    /// the value's UTF-8 bytes, in lowercase hex. Stable across runs, processes and versions;
    /// unkeyed, so a short value (a card number) can be found again by trying them all: it
    /// hides a value from readers, not from a determined attacker.
    Hash,
}

/// The replacement of `value`, found by the detector `name` (a built-in kind, or `None`).
pub(super) fn replacement(
    strategy: PiiStrategy,
    name: &str,
    kind: Option<PiiType>,
    value: &str,
) -> String {
    match strategy {
        // Blocked text is never rewritten; the caller stops before.
        PiiStrategy::Block => value.to_owned(),
        PiiStrategy::Redact => format!("[REDACTED_{}]", name.to_uppercase()),
        PiiStrategy::Mask => mask(kind, value),
        PiiStrategy::Hash => {
            let digest = Sha256::digest(value.as_bytes());
            let mut hex = String::with_capacity(16);
            for byte in &digest[..8] {
                let _ = write!(hex, "{byte:02x}");
            }
            format!("[HASHED_{}:{hex}]", name.to_uppercase())
        }
    }
}

fn mask(kind: Option<PiiType>, value: &str) -> String {
    match kind {
        Some(PiiType::CreditCard) => keep_last_digits(value, 4),
        Some(PiiType::Email) => match value.rsplit_once('@') {
            Some((_, domain)) => format!("****@{domain}"),
            None => stars(value),
        },
        Some(PiiType::Ipv4) => match value.rsplit_once('.') {
            Some((_, last)) => format!("*.*.*.{last}"),
            None => stars(value),
        },
        Some(PiiType::Ipv6) => match value.rsplit_once(':') {
            // An IPv4 tail (`::ffff:192.168.1.23`) keeps its last octet, as an IPv4 address.
            Some((_, tail)) if tail.contains('.') => match tail.rsplit_once('.') {
                Some((_, last)) => format!("*:*:*:*:*:*:*.*.*.{last}"),
                None => stars(value),
            },
            Some((_, last)) => format!("*:*:*:*:*:*:*:{last}"),
            None => stars(value),
        },
        Some(PiiType::Mac) => {
            let separator = if value.contains('-') { '-' } else { ':' };
            let last = value.rsplit(separator).next().unwrap_or_default();
            format!("**{0}**{0}**{0}**{0}**{0}{last}", separator)
        }
        Some(PiiType::Url) => match value.split_once("://") {
            Some((scheme, rest)) => {
                let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
                // The user and password, if any, go too.
                let host = authority.rsplit('@').next().unwrap_or_default();
                format!("{scheme}://{host}/***")
            }
            None => stars(value),
        },
        None => keep_last_chars(value, 4),
    }
}

/// Every digit but the last `keep` replaced by `*`, separators kept.
fn keep_last_digits(value: &str, keep: usize) -> String {
    let digits = value.chars().filter(char::is_ascii_digit).count();
    let mut seen = 0;
    value
        .chars()
        .map(|c| {
            if c.is_ascii_digit() {
                seen += 1;
                if seen + keep <= digits { '*' } else { c }
            } else {
                c
            }
        })
        .collect()
}

/// Every character but the last `keep` replaced by `*` (all of them if there are no more
/// than `keep`: nothing of a short value is shown).
fn keep_last_chars(value: &str, keep: usize) -> String {
    let count = value.chars().count();
    if count <= keep {
        return stars(value);
    }
    value
        .chars()
        .enumerate()
        .map(|(i, c)| if i + keep < count { '*' } else { c })
        .collect()
}

fn stars(value: &str) -> String {
    "*".repeat(value.chars().count())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_keep_what_the_docs_say() {
        let masked = |kind, value| replacement(PiiStrategy::Mask, "x", Some(kind), value);
        assert_eq!(
            masked(PiiType::CreditCard, "4111 1111 1111 1111"),
            "**** **** **** 1111"
        );
        assert_eq!(
            masked(PiiType::Email, "ann@example.com"),
            "****@example.com"
        );
        assert_eq!(masked(PiiType::Ipv4, "10.1.2.23"), "*.*.*.23");
        assert_eq!(
            masked(PiiType::Ipv6, "2001:db8::7334"),
            "*:*:*:*:*:*:*:7334"
        );
        assert_eq!(
            masked(PiiType::Mac, "00-1a-2b-3c-4d-5e"),
            "**-**-**-**-**-5e"
        );
        assert_eq!(
            masked(PiiType::Url, "https://ann:pw@example.com/a?b=1"),
            "https://example.com/***"
        );
        assert_eq!(
            replacement(PiiStrategy::Mask, "id", None, "EMP-123456"),
            "******3456"
        );
    }

    #[test]
    fn the_hash_is_the_documented_one() {
        // `printf 'ann@example.com' | sha256sum | cut -c1-16`: stable across versions.
        let hashed = replacement(
            PiiStrategy::Hash,
            "email",
            Some(PiiType::Email),
            "ann@example.com",
        );
        assert_eq!(hashed, "[HASHED_EMAIL:71d4f55f72fa128d]");
    }
}
