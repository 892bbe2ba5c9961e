//! The rules of `#[middleware]`: an inherent impl block of a named type, at most one hook of
//! each kind, hooks that fit the phase, signatures that fit their hooks, and each hook declaring
//! the jumps its body writes out.

use quote::ToTokens;
use syn::{ImplItem, ItemImpl, Type};

use super::parse::{Parsed, self_span};
use crate::attr::{PhaseValue, Place};
use crate::ctxt::Ctxt;
use crate::hook::{jumps_fit, kind, literal_jumps_declared, phase_allows};
use crate::kinds::HookKind;
use crate::signature::{Declared, HookSig, validate as validate_signature};
use crate::trait_impl::HookImpl;

/// A `#[middleware]` block that passed every rule.
pub(crate) struct MiddlewareModel<'a> {
    pub(crate) type_name: String,
    pub(crate) phase: PhaseValue,
    pub(crate) hooks: Vec<HookImpl<'a>>,
    /// The method that checks answers to this middleware's interrupts, if any.
    pub(crate) check_answer: Option<&'a syn::Ident>,
    /// The method that contributes tools and system-prompt pieces, if any.
    pub(crate) contribute: Option<&'a syn::Ident>,
}

pub(crate) fn validate<'a>(
    ctxt: &Ctxt,
    parsed: &Parsed,
    block: &'a ItemImpl,
) -> Option<MiddlewareModel<'a>> {
    if let Some((_, path, _)) = &block.trait_ {
        ctxt.error_spanned_by(
            path,
            "`#[middleware]` goes on an inherent impl block (`impl Audit { .. }`) or on \
             `impl Middleware for Audit { .. }`, not on an impl of another trait",
        );
    }
    if let Some(unsafety) = &block.unsafety {
        ctxt.error_spanned_by(unsafety, "`#[middleware]` impl blocks cannot be `unsafe`");
    }
    let type_name = type_name(ctxt, block);
    let phase = parsed
        .options
        .phase
        .map_or(PhaseValue::Wrap, |(phase, _)| phase);
    let declared = Declared {
        state: parsed.options.state.as_ref(),
        thread: parsed.options.thread_state.as_ref(),
        mistaken: parsed.options.states_mistaken,
    };
    let mut hooks: Vec<HookImpl<'a>> = Vec::new();
    for (index, attr) in &parsed.hooks {
        let ImplItem::Fn(method) = &block.items[*index] else {
            continue;
        };
        let Some((kind, kind_ident)) = kind(ctxt, attr) else {
            continue;
        };
        for extra in &attr.extra_kinds {
            ctxt.error_spanned_by(
                extra,
                "one `#[hook(..)]` per method: give each hook its own method",
            );
        }
        if let Some(first) = hooks.iter().find(|hook| hook.sig.kind == kind) {
            ctxt.error_spanned_by(
                kind_ident,
                format!(
                    "a second `{}` hook: a middleware has at most one of each hook, and `{}` \
                     is already its `{}`",
                    kind.name(),
                    first.sig.original.ident,
                    kind.name()
                ),
            );
        }
        if let Err(why) = phase_allows(phase, kind) {
            ctxt.error_spanned_by(
                kind_ident,
                format!("{why} (or move this hook to another middleware)"),
            );
        }
        let jumps = jumps_fit(ctxt, attr, kind);
        // `jumps` misplaced on the block is reported there; the hooks' jumps then go unchecked.
        if !attr.options.jumps_mistaken && !parsed.options.jumps_mistaken {
            literal_jumps_declared(ctxt, kind, &jumps, method.block.to_token_stream());
        }
        let sig = HookSig::parse(kind, &method.sig);
        let roles = validate_signature(ctxt, &sig, Place::HookMethod, declared);
        hooks.push(HookImpl { sig, roles, jumps });
    }
    unmarked_hooks(ctxt, parsed, block);
    let check_answer = check_answer(ctxt, parsed, block);
    let contribute = contribute(ctxt, parsed, block);
    Some(MiddlewareModel {
        type_name: type_name?,
        phase,
        hooks,
        check_answer,
        contribute,
    })
}

/// Nothing silent: a method named like a hook but not marked would never run, and a block
/// without any hook would make a middleware that does nothing.
fn unmarked_hooks(ctxt: &Ctxt, parsed: &Parsed, block: &ItemImpl) {
    let marked = |index: usize| parsed.hooks.iter().any(|(at, _)| *at == index);
    let mut named_like_hooks = false;
    for (index, item) in block.items.iter().enumerate() {
        let ImplItem::Fn(method) = item else {
            continue;
        };
        let name = method.sig.ident.to_string();
        if let Some(kind) = HookKind::from_name(&name).filter(|_| !marked(index)) {
            named_like_hooks = true;
            ctxt.error_spanned_by(
                &method.sig.ident,
                format!(
                    "`{name}` is not a hook until it is marked: write `#[hook({})]` above it",
                    kind.name()
                ),
            );
        }
    }
    // A block that only contributes (a tool, a prompt piece) does something without hooks.
    if parsed.hooks.is_empty() && parsed.contribute.is_empty() && !named_like_hooks {
        ctxt.error_at(
            self_span(block),
            "this `#[middleware]` block has no hook: mark the methods that are hooks, as in \
             `#[hook(before_model)]`",
        );
    }
}

/// The `#[check_answer]` method: at most one, `fn name(&self, answer: &Answer<'_>) -> Result<(),
/// E>` (the return type is checked by the compiler, at the user's tokens).
fn check_answer<'a>(ctxt: &Ctxt, parsed: &Parsed, block: &'a ItemImpl) -> Option<&'a syn::Ident> {
    let found = one_method(
        ctxt,
        &parsed.check_answer,
        block,
        "check_answer",
        "a `#[check_answer]` method is a plain `fn` taking `&self` and the answer: \
         `fn check(&self, answer: &Answer<'_>) -> Result<(), E>`",
    )?;
    // A return type that is not a `Result` by its syntax (a `bool`, nothing): reported at the
    // user's type, rather than where the generated code converts the error.
    let sig = block.items.iter().find_map(|item| match item {
        ImplItem::Fn(method) if &method.sig.ident == found => Some(&method.sig),
        _ => None,
    })?;
    let message = "a `#[check_answer]` method returns `Result<(), E>`: `Ok(())` accepts the \
                   answer, `Err(reason)` refuses the resume (`E` is any error type, such as \
                   `hookchain::Error` or a `String`)";
    match &sig.output {
        syn::ReturnType::Default => {
            ctxt.error_spanned_by(&sig.ident, message);
            None
        }
        syn::ReturnType::Type(_, ty) if !named_result(ty) => {
            ctxt.error_spanned_by(ty, message);
            None
        }
        syn::ReturnType::Type(..) => Some(found),
    }
}

/// Whether `ty` may be a `Result` (by its name, or an alias the syntax cannot see through):
/// false for a tuple, a reference, and the standard types that are not one.
fn named_result(ty: &Type) -> bool {
    match ty {
        Type::Path(path) => path.path.segments.last().is_none_or(|last| {
            !matches!(
                last.ident.to_string().as_str(),
                "bool"
                    | "Option"
                    | "String"
                    | "str"
                    | "usize"
                    | "u8"
                    | "u16"
                    | "u32"
                    | "u64"
                    | "i8"
                    | "i16"
                    | "i32"
                    | "i64"
                    | "Flow"
                    | "Vec"
                    | "Box"
            )
        }),
        Type::Paren(inner) => named_result(&inner.elem),
        Type::Group(inner) => named_result(&inner.elem),
        _ => false,
    }
}

/// The `#[contribute]` method: at most one, `fn name(&self, to: &mut Contributions)`.
fn contribute<'a>(ctxt: &Ctxt, parsed: &Parsed, block: &'a ItemImpl) -> Option<&'a syn::Ident> {
    one_method(
        ctxt,
        &parsed.contribute,
        block,
        "contribute",
        "a `#[contribute]` method is a plain `fn` taking `&self` and the contributions: \
         `fn contribute(&self, to: &mut Contributions)`",
    )
}

/// The one method marked `#[attribute]`: a plain `fn` taking `&self` and one argument; a second
/// is an error at its attribute, a wrong shape an error at the method's name saying `shape`.
fn one_method<'a>(
    ctxt: &Ctxt,
    marked: &[(usize, syn::Attribute)],
    block: &'a ItemImpl,
    attribute: &str,
    shape: &str,
) -> Option<&'a syn::Ident> {
    let mut found = None;
    for (index, attr) in marked {
        let ImplItem::Fn(method) = &block.items[*index] else {
            continue;
        };
        if found.is_some() {
            ctxt.error_spanned_by(
                attr,
                format!("a second `#[{attribute}]`: a middleware has one"),
            );
            continue;
        }
        let sig = &method.sig;
        let takes_self = sig
            .receiver()
            .is_some_and(|receiver| receiver.reference.is_some() && receiver.mutability.is_none());
        if !takes_self || sig.inputs.len() != 2 || sig.asyncness.is_some() {
            ctxt.error_spanned_by(&sig.ident, shape);
            continue;
        }
        found = Some(&sig.ident);
    }
    found
}

/// The name of the block's type (`Audit` in `impl Audit` or `impl<T> Audit<T>`).
fn type_name(ctxt: &Ctxt, block: &ItemImpl) -> Option<String> {
    match &*block.self_ty {
        Type::Path(path) if path.qself.is_none() => path
            .path
            .segments
            .last()
            .map(|segment| segment.ident.to_string()),
        _ => {
            ctxt.error_at(
                self_span(block),
                "`#[middleware]` goes on the impl block of a named struct or enum",
            );
            None
        }
    }
}
