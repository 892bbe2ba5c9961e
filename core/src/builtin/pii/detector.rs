//! What [`Pii`](super::Pii) looks for: the built-in kinds of personal data, and your own.

use std::fmt;
use std::net::Ipv6Addr;
use std::ops::Range;
use std::sync::{Arc, LazyLock};

use regex::Regex;

/// A kind of personal data [`Pii`](super::Pii) can find by itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PiiType {
    /// An e-mail address (`name@example.com`).
    Email,
    /// A payment card number: 13 to 19 digits, spaces or dashes between them allowed, that
    /// pass the Luhn check (a digit string that fails it is not a card number).
    CreditCard,
    /// An IPv4 address (`192.168.0.23`).
    Ipv4,
    /// An IPv6 address (`2001:db8::1`), any form `std::net::Ipv6Addr` parses.
    Ipv6,
    /// A MAC address (`00:1a:2b:3c:4d:5e` or with dashes).
    Mac,
    /// A URL with a scheme (`http`, `https`, `ftp`): `https://example.com/path?q=1`.
    Url,
}

impl PiiType {
    /// Every built-in kind.
    pub const ALL: [PiiType; 6] = [
        PiiType::Email,
        PiiType::CreditCard,
        PiiType::Ipv4,
        PiiType::Ipv6,
        PiiType::Mac,
        PiiType::Url,
    ];

    /// Its name in errors, logs and replacements (`email` → `[REDACTED_EMAIL]`).
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            PiiType::Email => "email",
            PiiType::CreditCard => "credit_card",
            PiiType::Ipv4 => "ipv4",
            PiiType::Ipv6 => "ipv6",
            PiiType::Mac => "mac_address",
            PiiType::Url => "url",
        }
    }

    /// The longest text it matches, in bytes (what a stream holds back; see
    /// [`Pii::release`](super::Pii::release)). A URL is unbounded: past 2,048 bytes, a
    /// streamed URL may be split.
    #[must_use]
    pub const fn max_len(self) -> usize {
        match self {
            PiiType::Email => 254,
            // 19 digits and a separator between each two.
            PiiType::CreditCard => 37,
            PiiType::Ipv4 => 15,
            PiiType::Ipv6 => 45,
            PiiType::Mac => 17,
            PiiType::Url => 2048,
        }
    }

    /// The byte ranges of `text` it matches, in order.
    fn find(self, text: &str) -> Vec<Range<usize>> {
        let ranges = REGEXES[self as usize].find_iter(text).map(|m| m.range());
        match self {
            PiiType::CreditCard => ranges.flat_map(|r| cards_in(text, r)).collect(),
            PiiType::Url => ranges
                .map(|r| r.start..r.start + trim_url_end(&text[r]).len())
                .collect(),
            PiiType::Ipv6 => ipv6_ranges(text),
            _ => ranges.collect(),
        }
    }
}

impl fmt::Display for PiiType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The built-in kinds' patterns, in the order of [`PiiType`]; compiled once, on first use.
static REGEXES: LazyLock<[Regex; 6]> = LazyLock::new(|| {
    [
        r"(?i)\b[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}\b",
        // Runs of digit groups, one space or dash between two: `cards_in` finds the cards.
        r"[0-9]+(?:[ -][0-9]+)*",
        r"\b(?:(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\b",
        // Candidates only: `ipv6_ranges` keeps those `Ipv6Addr` parses.
        r"[0-9A-Fa-f:.]{2,45}",
        r"(?i)\b[0-9a-f]{2}(?::[0-9a-f]{2}){5}\b|\b[0-9a-f]{2}(?:-[0-9a-f]{2}){5}\b",
        r#"(?i)\b(?:https?|ftp)://[^\s<>"'`]+"#,
    ]
    .map(|pattern| Regex::new(pattern).expect("the built-in patterns are valid"))
});

/// Whether the digits of `candidate` (separators ignored) are a card number: 13 to 19 of
/// them, passing the Luhn check.
pub(super) fn luhn(candidate: &str) -> bool {
    let digits: Vec<u32> = candidate.chars().filter_map(|c| c.to_digit(10)).collect();
    if !(13..=19).contains(&digits.len()) {
        return false;
    }
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| match (i % 2, d * 2) {
            (0, _) => d,
            (_, doubled) if doubled > 9 => doubled - 9,
            (_, doubled) => doubled,
        })
        .sum();
    sum.is_multiple_of(10)
}

/// The card numbers inside `run`, a run of digit groups of `text` (one space or dash between
/// two): from the leftmost group that starts a word, the longest span of whole groups that
/// ends a word and passes [`luhn`], then on after it. A card is found wherever it stands in
/// the run: after an order number (`order 123456 4111 1111 1111 1111`), or with digits after
/// it (`4111 1111 1111 1111 192`).
fn cards_in(text: &str, run: Range<usize>) -> Vec<Range<usize>> {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let groups: Vec<Range<usize>> = text[run.clone()]
        .split([' ', '-'])
        .scan(run.start, |at, group| {
            let range = *at..*at + group.len();
            *at = range.end + 1;
            Some(range)
        })
        .collect();
    // Glued to a word before or after it, the run's first or last group is no card's edge.
    let first = usize::from(text[..run.start].chars().next_back().is_some_and(word));
    let ends_word = !text[run.end..].chars().next().is_some_and(word);
    let mut cards = Vec::new();
    let mut i = first;
    while i < groups.len() {
        let mut digits = 0;
        let mut longest = None;
        for (j, group) in groups.iter().enumerate().skip(i) {
            digits += group.len();
            if digits > 19 {
                break;
            }
            let edge = j + 1 < groups.len() || ends_word;
            if digits >= 13 && edge && luhn(&text[groups[i].start..group.end]) {
                longest = Some(j);
            }
        }
        match longest {
            Some(j) => {
                cards.push(groups[i].start..groups[j].end);
                i = j + 1;
            }
            None => i += 1,
        }
    }
    cards
}

/// A URL without the punctuation that ends the sentence around it.
fn trim_url_end(url: &str) -> &str {
    url.trim_end_matches(['.', ',', ';', ':', '!', '?', ')', ']', '}'])
}

/// The IPv6 addresses of `text`: candidates (hex digits, colons, dots) not inside a longer
/// word, that have two colons or more and parse.
fn ipv6_ranges(text: &str) -> Vec<Range<usize>> {
    let word = |c: char| c.is_ascii_alphanumeric() || c == ':' || c == '_';
    REGEXES[PiiType::Ipv6 as usize]
        .find_iter(text)
        .filter(|m| {
            let before = text[..m.start()].chars().next_back();
            let after = text[m.end()..].chars().next();
            !before.is_some_and(word)
                && !after.is_some_and(word)
                && m.as_str().matches(':').count() >= 2
                && m.as_str().parse::<Ipv6Addr>().is_ok()
        })
        .map(|m| m.range())
        .collect()
}

/// A detector of your own: a function from a text to the byte ranges it finds.
pub(super) type FindFn = Arc<dyn Fn(&str) -> Vec<Range<usize>> + Send + Sync>;

/// One detector of a [`Pii`](super::Pii).
#[derive(Clone)]
pub(super) enum Detector {
    BuiltIn(PiiType),
    Regex {
        name: Arc<str>,
        regex: Regex,
        max_len: usize,
    },
    Function {
        name: Arc<str>,
        find: FindFn,
        max_len: usize,
    },
}

impl Detector {
    pub(super) fn name(&self) -> &str {
        match self {
            Detector::BuiltIn(kind) => kind.name(),
            Detector::Regex { name, .. } | Detector::Function { name, .. } => name,
        }
    }

    pub(super) fn max_len(&self) -> usize {
        match self {
            Detector::BuiltIn(kind) => kind.max_len(),
            Detector::Regex { max_len, .. } | Detector::Function { max_len, .. } => *max_len,
        }
    }

    /// The byte ranges of `text` this detector finds; ranges that are empty, out of `text` or
    /// not on character boundaries (a custom function's mistakes) are dropped.
    pub(super) fn find(&self, text: &str) -> Vec<Range<usize>> {
        let mut ranges = match self {
            Detector::BuiltIn(kind) => return kind.find(text),
            Detector::Regex { regex, .. } => regex.find_iter(text).map(|m| m.range()).collect(),
            Detector::Function { find, .. } => find(text),
        };
        ranges.retain(|r| {
            r.start < r.end && text.is_char_boundary(r.start) && text.is_char_boundary(r.end)
        });
        ranges
    }

    pub(super) fn built_in(&self) -> Option<PiiType> {
        match self {
            Detector::BuiltIn(kind) => Some(*kind),
            _ => None,
        }
    }
}

impl fmt::Debug for Detector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Detector::BuiltIn(kind) => write!(f, "{kind:?}"),
            Detector::Regex { name, regex, .. } => write!(f, "Regex({name}: {})", regex.as_str()),
            Detector::Function { name, .. } => write!(f, "Function({name})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(kind: PiiType, text: &str) -> Vec<String> {
        kind.find(text)
            .into_iter()
            .map(|r| text[r].to_owned())
            .collect()
    }

    #[test]
    fn credit_cards_are_luhn_checked() {
        assert_eq!(
            found(PiiType::CreditCard, "card 4111 1111 1111 1111."),
            ["4111 1111 1111 1111"]
        );
        assert_eq!(
            found(PiiType::CreditCard, "card 4111-1111-1111-1112"),
            Vec::<String>::new()
        );
        assert_eq!(
            found(PiiType::CreditCard, "id 5500005555555559"),
            ["5500005555555559"]
        );
        assert_eq!(
            found(PiiType::CreditCard, "no 12 4111 1111 1111 1111 192"),
            ["4111 1111 1111 1111"]
        );
        assert_eq!(
            found(
                PiiType::CreditCard,
                "x4111 1111 1111 1111 and 4111111111111111y"
            ),
            Vec::<String>::new()
        );
        assert_eq!(
            found(
                PiiType::CreditCard,
                "4111 1111 1111 1111-5500 0055 5555 5559"
            ),
            ["4111 1111 1111 1111", "5500 0055 5555 5559"]
        );
    }

    #[test]
    fn addresses() {
        assert_eq!(
            found(PiiType::Email, "mail Ann.Lee+x@mail.example.org!"),
            ["Ann.Lee+x@mail.example.org"]
        );
        assert_eq!(
            found(PiiType::Ipv4, "from 10.0.0.254 and 999.1.1.1"),
            ["10.0.0.254"]
        );
        assert_eq!(
            found(PiiType::Ipv6, "at 2001:db8::8a2e:370:7334, not 12:30:45"),
            ["2001:db8::8a2e:370:7334"]
        );
        assert_eq!(
            found(PiiType::Mac, "nic 00:1A:2B:3C:4D:5E"),
            ["00:1A:2B:3C:4D:5E"]
        );
        assert_eq!(
            found(PiiType::Url, "see https://example.com/a?b=1)."),
            ["https://example.com/a?b=1"]
        );
    }

    #[test]
    fn a_mac_address_is_no_ipv6_address() {
        assert!(found(PiiType::Ipv6, "nic 00:1A:2B:3C:4D:5E").is_empty());
    }
}
