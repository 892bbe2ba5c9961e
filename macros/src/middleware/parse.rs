//! Syntax of `#[middleware]`: its options, and the `#[hook(..)]` attributes of the block's
//! methods (taken off the methods, which stay ordinary methods).

use proc_macro2::{Span, TokenStream};
use syn::spanned::Spanned;
use syn::{ImplItem, ItemImpl};

use crate::attr::{Options, Place, segments};
use crate::ctxt::Ctxt;
use crate::hook::HookAttr;

/// `#[middleware(..)]` and its block's hooks.
pub(crate) struct Parsed {
    pub(crate) options: Options,
    /// For each method with `#[hook(..)]`: its index among the block's items, and the attribute.
    pub(crate) hooks: Vec<(usize, HookAttr)>,
    /// Each method with `#[check_answer]`: its index, and the attribute (for messages).
    pub(crate) check_answer: Vec<(usize, syn::Attribute)>,
    /// Each method with `#[contribute]`: its index, and the attribute (for messages).
    pub(crate) contribute: Vec<(usize, syn::Attribute)>,
}

pub(crate) fn parse(ctxt: &Ctxt, attr: TokenStream, block: &mut ItemImpl) -> Parsed {
    let options = Options::parse(ctxt, Place::Middleware, &segments(ctxt, attr));
    let mut hooks = Vec::new();
    let mut check_answer = Vec::new();
    let mut contribute = Vec::new();
    for (index, item) in block.items.iter_mut().enumerate() {
        let attrs = match item {
            ImplItem::Fn(method) => &mut method.attrs,
            ImplItem::Const(constant) => &mut constant.attrs,
            ImplItem::Type(alias) => &mut alias.attrs,
            ImplItem::Macro(mac) => &mut mac.attrs,
            _ => continue,
        };
        let (hook_attrs, rest): (Vec<_>, Vec<_>) = attrs
            .drain(..)
            .partition(|attr| attr.path().is_ident("hook"));
        let (check_attrs, rest): (Vec<_>, Vec<_>) = rest
            .into_iter()
            .partition(|attr| attr.path().is_ident("check_answer"));
        let (contribute_attrs, rest): (Vec<_>, Vec<_>) = rest
            .into_iter()
            .partition(|attr| attr.path().is_ident("contribute"));
        *attrs = rest;
        let is_fn = matches!(item, ImplItem::Fn(_));
        for attr in contribute_attrs {
            if is_fn {
                contribute.push((index, attr));
            } else {
                ctxt.error_spanned_by(&attr, "`#[contribute]` goes on a method");
            }
        }
        for attr in check_attrs {
            if is_fn {
                check_answer.push((index, attr));
            } else {
                ctxt.error_spanned_by(&attr, "`#[check_answer]` goes on a method");
            }
        }
        for attr in hook_attrs {
            if !is_fn {
                ctxt.error_spanned_by(&attr, "`#[hook]` goes on a method");
                continue;
            }
            let span = attr.span();
            let tokens = match &attr.meta {
                syn::Meta::List(list) => list.tokens.clone(),
                _ => TokenStream::new(),
            };
            hooks.push((
                index,
                HookAttr::parse_at(ctxt, tokens, Place::HookMethod, span),
            ));
        }
    }
    Parsed {
        options,
        hooks,
        check_answer,
        contribute,
    }
}

/// The span of the block's self type, for messages about the whole middleware.
pub(crate) fn self_span(block: &ItemImpl) -> Span {
    block.self_ty.span()
}
