//! Finding personal data in a text and rewriting it: the core that the hooks (and, later, a
//! stream's per-event hook) call.

use std::borrow::Cow;
use std::ops::Range;
use std::sync::Arc;

use super::detector::Detector;
use super::error::{PiiBlocked, PiiPlace};
use super::strategy::{PiiStrategy, replacement};

/// A detector and what to do with what it finds.
#[derive(Debug, Clone)]
pub(super) struct Rule {
    pub(super) detector: Detector,
    pub(super) strategy: PiiStrategy,
    /// What `Redact` writes instead of `[REDACTED_<NAME>]`, if the application said.
    pub(super) redacted_as: Option<Arc<str>>,
}

/// One finding: where, and by which rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Found {
    pub(super) range: Range<usize>,
    pub(super) rule: usize,
}

/// The findings of every rule in `text`, in order and without overlaps: of two overlapping
/// findings the one that starts first wins (the longer at the same start), so a URL with an
/// e-mail address inside is one URL.
pub(super) fn find_all(rules: &[Rule], text: &str) -> Vec<Found> {
    let mut all: Vec<Found> = rules
        .iter()
        .enumerate()
        .flat_map(|(rule, r)| {
            r.detector
                .find(text)
                .into_iter()
                .map(move |range| Found { range, rule })
        })
        .collect();
    all.sort_by(|a, b| {
        (a.range.start, b.range.end, a.rule).cmp(&(b.range.start, a.range.end, b.rule))
    });
    let mut kept: Vec<Found> = Vec::with_capacity(all.len());
    for found in all {
        if kept
            .last()
            .is_none_or(|last| found.range.start >= last.range.end)
        {
            kept.push(found);
        }
    }
    kept
}

/// `text` with `found` rewritten, or the blocked kinds and their counts.
pub(super) fn rewrite<'t>(
    rules: &[Rule],
    text: &'t str,
    found: &[Found],
    place: PiiPlace,
) -> Result<Cow<'t, str>, PiiBlocked> {
    if found.is_empty() {
        return Ok(Cow::Borrowed(text));
    }
    let blocked: Vec<(String, usize)> = rules
        .iter()
        .enumerate()
        .filter(|(_, rule)| rule.strategy == PiiStrategy::Block)
        .map(|(i, rule)| {
            let count = found.iter().filter(|f| f.rule == i).count();
            (rule.detector.name().to_owned(), count)
        })
        .filter(|&(_, count)| count > 0)
        .collect();
    if !blocked.is_empty() {
        return Err(PiiBlocked {
            place,
            found: blocked,
        });
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for f in found {
        let rule = &rules[f.rule];
        out.push_str(&text[at..f.range.start]);
        match (&rule.redacted_as, rule.strategy) {
            (Some(text), PiiStrategy::Redact) => out.push_str(text),
            _ => out.push_str(&replacement(
                rule.strategy,
                rule.detector.name(),
                rule.detector.built_in(),
                &text[f.range.clone()],
            )),
        }
        at = f.range.end;
    }
    out.push_str(&text[at..]);
    Ok(Cow::Owned(out))
}

/// How many bytes of `pending` (a stream's text not yet released) can be released now: all
/// of it when the stream is `finished`; else all but the last `look_back` bytes, and never a
/// finding cut in two nor one that reaches the end of `pending` (it may go on in the next
/// chunk).
pub(super) fn releasable(
    found: &[Found],
    pending: &str,
    look_back: usize,
    finished: bool,
) -> usize {
    if finished {
        return pending.len();
    }
    let mut cut = pending.len().saturating_sub(look_back);
    while !pending.is_char_boundary(cut) {
        cut -= 1;
    }
    for f in found {
        if f.range.start < cut && (f.range.end > cut || f.range.end == pending.len()) {
            cut = f.range.start;
            break;
        }
    }
    cut
}
