//! Syntax of `#[hook]`: the attribute's arguments and the function, whose body is kept as
//! tokens (never parsed: faster, and it still works while the body is half-written).

use proc_macro2::{Span, TokenStream, TokenTree};
use syn::{Ident, LitStr, Path};

use crate::attr::{Options, Place, Segment, segments};
use crate::ctxt::Ctxt;
use crate::kinds::HookKind;

/// The arguments of `#[hook(..)]`.
pub(crate) struct HookAttr {
    /// The kind as written, with what it names (if anything).
    pub(crate) kind: Option<(Ident, Option<HookKind>)>,
    /// Whether a kind written in a wrong form (a string, a path, `kind = ..`) that names no hook
    /// was already reported: no second error about a missing kind.
    pub(crate) kind_reported: bool,
    pub(crate) options: Options,
    /// Extra bare words after the kind (`#[hook(before_model, after_model)]`).
    pub(crate) extra_kinds: Vec<Ident>,
    /// Where a missing kind is reported.
    pub(crate) span: Span,
}

impl HookAttr {
    pub(crate) fn parse(ctxt: &Ctxt, tokens: TokenStream) -> HookAttr {
        Self::parse_at(ctxt, tokens, Place::HookFn, Span::call_site())
    }

    pub(crate) fn parse_at(ctxt: &Ctxt, tokens: TokenStream, place: Place, span: Span) -> HookAttr {
        let (first, rest) = split_first(tokens.clone());
        let mut kind_reported = false;
        let mut kind = None;
        let tokens = match misspelled_kind(&first) {
            Some(Misspelled { at, named, message }) => {
                ctxt.error_spanned_by(at, message);
                kind_reported = true;
                kind = named;
                rest
            }
            None => tokens,
        };
        let mut parts = segments(ctxt, tokens).into_iter().peekable();
        if kind.is_none() && !kind_reported {
            kind = match parts.peek() {
                Some(Segment { value: None, .. }) => parts.next().map(|segment| {
                    let kind = HookKind::from_name(&segment.key.to_string());
                    (segment.key, kind)
                }),
                // `kind = before_model`: the kind is written first, on its own.
                Some(Segment {
                    key,
                    value: Some(value),
                }) if key == "kind" || key == "hook" => {
                    let named = syn::parse2::<Ident>(value.clone()).ok().and_then(|ident| {
                        HookKind::from_name(&ident.to_string()).map(|kind| (ident, Some(kind)))
                    });
                    let example = named
                        .as_ref()
                        .and_then(|(_, kind)| *kind)
                        .map_or("before_model", HookKind::name);
                    ctxt.error_spanned_by(
                        key,
                        format!(
                            "the hook is written first, on its own, not as `{key} = ..`: \
                             `#[hook({example}, ..)]`"
                        ),
                    );
                    kind_reported = true;
                    parts.next();
                    named
                }
                _ => None,
            };
        }
        let (bare, options): (Vec<Segment>, Vec<Segment>) = parts.partition(|segment| {
            segment.value.is_none() && segment.key != "crate" && segment.key != "live_stream"
        });
        HookAttr {
            kind,
            kind_reported,
            options: Options::parse(ctxt, place, &options),
            extra_kinds: bare.into_iter().map(|segment| segment.key).collect(),
            span,
        }
    }
}

/// The tokens before the first top-level comma, and those after it.
fn split_first(tokens: TokenStream) -> (TokenStream, TokenStream) {
    let mut first = TokenStream::new();
    let mut trees = tokens.into_iter();
    for tree in trees.by_ref() {
        if matches!(&tree, TokenTree::Punct(punct) if punct.as_char() == ',') {
            break;
        }
        first.extend([tree]);
    }
    (first, trees.collect())
}

/// A kind written as a string (`"before_model"`) or a path (`Hook::BeforeModel`).
struct Misspelled {
    at: TokenStream,
    /// The kind it names, if it names one: read as written, so nothing else is reported.
    named: Option<(Ident, Option<HookKind>)>,
    message: String,
}

fn misspelled_kind(first: &TokenStream) -> Option<Misspelled> {
    if let Ok(literal) = syn::parse2::<LitStr>(first.clone()) {
        let kind = HookKind::from_name(&literal.value());
        let message = match kind {
            Some(kind) => format!(
                "the hook is named without quotes: `#[hook({})]`",
                kind.name()
            ),
            None => format!(
                "the hook is named without quotes, as in `#[hook(before_model)]`: one of {}",
                HookKind::list()
            ),
        };
        return Some(Misspelled {
            at: first.clone(),
            named: kind.map(|kind| (Ident::new(kind.name(), literal.span()), Some(kind))),
            message,
        });
    }
    let path = syn::parse2::<Path>(first.clone()).ok()?;
    if path.segments.len() < 2 {
        return None;
    }
    let last = path.segments.last()?.ident.clone();
    let kind = HookKind::ALL
        .into_iter()
        .find(|kind| last == kind.variant() || last == kind.name());
    let message = match kind {
        Some(kind) => format!(
            "the hook is named by its name alone, not a path: `#[hook({})]`",
            kind.name()
        ),
        None => format!(
            "the hook is named by its name alone, as in `#[hook(before_model)]`: one of {}",
            HookKind::list()
        ),
    };
    Some(Misspelled {
        at: first.clone(),
        named: kind.map(|kind| (Ident::new(kind.name(), last.span()), Some(kind))),
        message,
    })
}

/// A function under `#[hook]`.
pub(crate) use crate::fn_item::FnItem as HookItem;
