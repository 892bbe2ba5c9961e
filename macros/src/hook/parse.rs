//! Syntax of `#[hook]`: the attribute's arguments and the function, whose body is kept as
//! tokens (never parsed: faster, and it still works while the body is half-written).

use proc_macro2::{Span, TokenStream};
use syn::Ident;

use crate::attr::{Options, Place, Segment, segments};
use crate::ctxt::Ctxt;
use crate::kinds::HookKind;

/// The arguments of `#[hook(..)]`.
pub(crate) struct HookAttr {
    /// The kind as written, with what it names (if anything).
    pub(crate) kind: Option<(Ident, Option<HookKind>)>,
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
        let mut parts = segments(ctxt, tokens).into_iter().peekable();
        let kind = match parts.peek() {
            Some(Segment { value: None, .. }) => parts.next().map(|segment| {
                let kind = HookKind::from_name(&segment.key.to_string());
                (segment.key, kind)
            }),
            _ => None,
        };
        let (bare, options): (Vec<Segment>, Vec<Segment>) =
            parts.partition(|segment| segment.value.is_none() && segment.key != "crate");
        HookAttr {
            kind,
            options: Options::parse(ctxt, place, &options),
            extra_kinds: bare.into_iter().map(|segment| segment.key).collect(),
            span,
        }
    }
}

/// A function under `#[hook]`.
pub(crate) use crate::fn_item::FnItem as HookItem;
