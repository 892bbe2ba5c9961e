//! Every rule a hook function's signature must follow; each broken rule is one error at the
//! user's token, saying the fix.

use quote::ToTokens;
use syn::{GenericParam, Type};

use super::parse::{HookSig, Param};
use crate::attr::Place;
use crate::ctxt::Ctxt;
use crate::kinds::{Form, HookKind, Role};

/// The state types a middleware declares (`state = S`, `thread_state = T`).
#[derive(Clone, Copy)]
pub(crate) struct Declared<'a> {
    pub(crate) state: Option<&'a Type>,
    pub(crate) thread: Option<&'a Type>,
    /// Whether the two were reported as one type: a state parameter taken twice is then that
    /// mistake's follow-on, not reported again.
    pub(crate) mistaken: bool,
}

/// Checks `sig` and returns the role of each typed parameter, in order (for the call the
/// generated code makes).
pub(crate) fn validate(
    ctxt: &Ctxt,
    sig: &HookSig<'_>,
    place: Place,
    declared: Declared<'_>,
) -> Vec<Role> {
    check_qualifiers(ctxt, sig);
    check_receiver(ctxt, sig, place);
    check_generics(ctxt, sig);
    let mut roles: Vec<Role> = Vec::new();
    for param in &sig.params {
        let role = role_of(ctxt, sig, param, declared);
        if let Some(role) = role {
            let follow_on = declared.mistaken && matches!(role, Role::State | Role::ThreadState);
            if roles.contains(&role) && !follow_on {
                ctxt.error_spanned_by(
                    param.ty,
                    format!(
                        "{} is already a parameter of this hook: each is taken at most once",
                        role.describe()
                    ),
                );
            }
            roles.push(role);
        } else {
            roles.push(Role::State);
        }
    }
    check_return(ctxt, sig);
    roles
}

fn check_qualifiers(ctxt: &Ctxt, sig: &HookSig<'_>) {
    let original = sig.original;
    let kind = sig.kind;
    if let (Some(asyncness), HookKind::OnModelEvent) = (&original.asyncness, kind) {
        ctxt.error_spanned_by(
            asyncness,
            "an `on_model_event` hook is a plain `fn`: it runs on every event of the answer \
             and cannot wait; remove `async`",
        );
    }
    if original.asyncness.is_none() && kind.is_wrap() {
        ctxt.error_spanned_by(
            original.fn_token,
            format!(
                "a `{}` hook is an `async fn`: it awaits `next`; write `async fn {}`",
                kind.name(),
                original.ident
            ),
        );
    }
    if let Some(constness) = &original.constness {
        ctxt.error_spanned_by(constness, "a hook cannot be a `const fn`: remove `const`");
    }
    if let Some(unsafety) = &original.unsafety {
        ctxt.error_spanned_by(unsafety, "a hook cannot be an `unsafe fn`: remove `unsafe`");
    }
    if let Some(abi) = &original.abi {
        ctxt.error_spanned_by(abi, "a hook cannot have an ABI: remove it");
    }
    if let Some(variadic) = &original.variadic {
        ctxt.error_spanned_by(variadic, "a hook cannot be variadic");
    }
}

fn check_receiver(ctxt: &Ctxt, sig: &HookSig<'_>, place: Place) {
    if place != Place::HookMethod {
        return;
    }
    match sig.receiver() {
        None => {
            let first = sig.original.inputs.first();
            let at = first.map_or_else(
                || sig.original.ident.to_token_stream(),
                ToTokens::to_token_stream,
            );
            ctxt.error_spanned_by(
                at,
                "a hook method takes `&self` first: the middleware's configuration",
            );
        }
        Some(receiver) if receiver.reference.is_none() || receiver.mutability.is_some() => ctxt
            .error_spanned_by(
                receiver,
                "a hook method takes `&self`: the middleware is shared by every run; keep \
                 per-run data in its state",
            ),
        Some(_) => {}
    }
}

fn check_generics(ctxt: &Ctxt, sig: &HookSig<'_>) {
    let next_params: Vec<&Param<'_>> = sig
        .params
        .iter()
        .filter(|param| param.role == Some(Role::Next))
        .collect();
    for param in &sig.original.generics.params {
        match param {
            GenericParam::Lifetime(_) => {}
            GenericParam::Type(ty) => {
                let used_as_next = next_params.iter().any(
                    |next| matches!(next.ty, Type::Path(path) if path.path.is_ident(&ty.ident)),
                );
                if !(sig.kind.is_wrap() && used_as_next) {
                    ctxt.error_spanned_by(
                        param,
                        "a hook function cannot be generic (except over its `next`): put \
                         configuration in the fields of a `#[middleware]` type",
                    );
                }
            }
            GenericParam::Const(_) => ctxt.error_spanned_by(
                param,
                "a hook function cannot have const parameters: put configuration in the fields \
                 of a `#[middleware]` type",
            ),
        }
    }
}

/// The role of `param` in this hook, or `None` after reporting why it has none.
fn role_of(
    ctxt: &Ctxt,
    sig: &HookSig<'_>,
    param: &Param<'_>,
    declared: Declared<'_>,
) -> Option<Role> {
    let kind = sig.kind;
    let has_state = declared.state.is_some() || declared.thread.is_some();
    // The per-event hook's only other parameter is its stream state, whatever its type — but
    // not the run's or the thread's state type: the hook would silently get a fresh per-call
    // value of it, never the state the other hooks see.
    if kind == HookKind::OnModelEvent && param.role.is_none() && param.form == Form::Mut {
        if let Type::Reference(reference) = param.ty {
            let written = pretty(&reference.elem);
            let clash = [("state", declared.state), ("thread state", declared.thread)]
                .into_iter()
                .find(|(_, ty)| ty.is_some_and(|ty| pretty(ty) == written));
            if let Some((option, _)) = clash {
                ctxt.error_spanned_by(
                    &reference.elem,
                    format!(
                        "`on_model_event` cannot take the middleware's {option} (`{written}`): \
                         it runs per event, without it, and a `&mut {written}` here would be a \
                         fresh value per model call; give its per-call stream state a type of \
                         its own, and read the {option} in `after_model`"
                    ),
                );
                return None;
            }
        }
        return Some(Role::StreamState);
    }
    let Some(role) = param.role else {
        // Not a type any hook takes: a state, if there is one and it is passed by reference —
        // the thread state if written as declared, else the run state (whose type is then
        // checked, with a message naming the declared type).
        let state_form = kind.form(Role::State).unwrap_or(Form::Mut);
        if has_state && param.form == state_form {
            let written = match param.ty {
                Type::Reference(reference) => pretty(&reference.elem),
                other => pretty(other),
            };
            let is_thread = declared
                .thread
                .is_some_and(|thread| pretty(thread) == written)
                || declared.state.is_none();
            return Some(if is_thread {
                Role::ThreadState
            } else {
                Role::State
            });
        }
        let written = pretty(param.ty);
        let fix = match (&param.ty, has_state) {
            (Type::Reference(reference), false) => format!(
                "; if it is the state, declare its type on the attribute: `state = {}`",
                pretty(&reference.elem)
            ),
            (_, true) => format!(
                "; the state is passed as `{}`",
                Role::State.spelled(state_form, "")
            ),
            (_, false) => String::new(),
        };
        ctxt.error_spanned_by(
            param.ty,
            format!(
                "`{written}` is not a parameter {} `{}` hook takes: it takes {}{fix}",
                article(kind),
                kind.name(),
                kind.accepted()
            ),
        );
        return None;
    };
    let Some(form) = kind.form(role) else {
        let hint = HookKind::taking(role)
            .filter(|other| *other != kind)
            .map(|other| format!("; did you mean `#[hook({})]`?", other.name()))
            .unwrap_or_default();
        ctxt.error_spanned_by(
            param.ty,
            format!(
                "`{}` hooks do not take {}: they take {}{hint}",
                kind.name(),
                role.describe(),
                kind.accepted()
            ),
        );
        return None;
    };
    let next_trait = if kind.on_tool_path() {
        "ToolNext"
    } else {
        "ModelNext"
    };
    if role == Role::Next {
        if param.next_trait.as_deref() != Some(next_trait) {
            ctxt.error_spanned_by(
                param.ty,
                format!(
                    "the `next` of a `{}` hook is `impl {next_trait}`",
                    kind.name()
                ),
            );
            return None;
        }
        if param.form != Form::Owned {
            ctxt.error_spanned_by(
                param.ty,
                format!(
                    "`next` is taken by value: `mut next: impl {next_trait}` (`next.call(..)` \
                     borrows it, so it can be called again)"
                ),
            );
            return None;
        }
        return Some(role);
    }
    if param.form != form {
        ctxt.error_spanned_by(
            param.ty,
            format!(
                "`{}` takes {} as `{}`",
                kind.name(),
                role.describe(),
                role.spelled(form, next_trait)
            ),
        );
        return None;
    }
    Some(role)
}

/// "a" or "an", before the hook's name.
fn article(kind: HookKind) -> &'static str {
    if kind.name().starts_with('a') {
        "an"
    } else {
        "a"
    }
}

/// A return type that no hook of its kind can have, when its syntax tells (a reference, a tuple,
/// a standard type, another kind's type): one error at the type, listing what to return. Other
/// types (a type of the user's, an alias) are checked by the compiler, at the same place.
fn check_return(ctxt: &Ctxt, sig: &HookSig<'_>) {
    let syn::ReturnType::Type(_, ty) = &sig.original.output else {
        return;
    };
    let kind = sig.kind;
    let (values, allowed): (&[&str], &str) = match kind {
        HookKind::BeforeAgent | HookKind::BeforeModel | HookKind::AfterModel => (
            &["()", "Flow"],
            "`()`, `Flow`, `Result<(), E>` or `Result<Flow, E>`",
        ),
        HookKind::AfterAgent | HookKind::OnModelEvent => (&["()"], "`()` or `Result<(), E>`"),
        HookKind::WrapModelCall => (
            &["ModelResponse"],
            "`ModelResponse` or `Result<ModelResponse, E>`",
        ),
        HookKind::WrapToolCall => (&["ToolResult"], "`ToolResult` or `Result<ToolResult, E>`"),
    };
    let ok = match result_ok(ty) {
        Some(Some(ok)) => ok,
        // `Result` without arguments: left to the compiler.
        Some(None) => return,
        None => ty,
    };
    if !certainly_not(ok, values) {
        return;
    }
    ctxt.error_spanned_by(
        ty,
        format!(
            "`{}` is not a return type {} `{}` hook can have: return {allowed}, where `E` is any \
             error type (converting into `Box<dyn std::error::Error + Send + Sync>`)",
            pretty(ty),
            article(kind),
            kind.name(),
        ),
    );
}

/// For `Result<T, ..>` (by its name), `Some(Some(T))`; `Some(None)` without arguments.
fn result_ok(ty: &Type) -> Option<Option<&Type>> {
    let Type::Path(path) = ty else { return None };
    let last = path.path.segments.last()?;
    if path.qself.is_some() || last.ident != "Result" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(arguments) = &last.arguments else {
        return Some(None);
    };
    Some(arguments.args.iter().find_map(|argument| match argument {
        syn::GenericArgument::Type(ty) => Some(ty),
        _ => None,
    }))
}

/// Whether the syntax of `ty` shows it is none of `values` (`()`, `Flow`, `ModelResponse`,
/// `ToolResult`), even through an alias: a reference, a tuple, a standard type, a `Result`,
/// or another of hookchain's types.
fn certainly_not(ty: &Type, values: &[&str]) -> bool {
    const NOT_A_RETURN: &[&str] = &[
        "String",
        "str",
        "bool",
        "char",
        "u8",
        "u16",
        "u32",
        "u64",
        "u128",
        "usize",
        "i8",
        "i16",
        "i32",
        "i64",
        "i128",
        "isize",
        "f32",
        "f64",
        "Option",
        "Vec",
        "Box",
        "Result",
        "Flow",
        "ModelResponse",
        "ToolResult",
        "ModelRequest",
        "ToolCall",
        "Message",
        "Content",
        "Value",
    ];
    match ty {
        Type::Paren(inner) => certainly_not(&inner.elem, values),
        Type::Group(inner) => certainly_not(&inner.elem, values),
        Type::Tuple(tuple) => !(tuple.elems.is_empty() && values.contains(&"()")),
        Type::Reference(_) | Type::Slice(_) | Type::Array(_) | Type::Ptr(_) | Type::BareFn(_) => {
            true
        }
        Type::Path(path) if path.qself.is_none() => path.path.segments.last().is_some_and(|last| {
            let name = last.ident.to_string();
            NOT_A_RETURN.contains(&name.as_str()) && !values.contains(&name.as_str())
        }),
        _ => false,
    }
}

/// A type as a person writes it (`&mut Counts`, not `& mut Counts`).
pub(crate) fn pretty(ty: &Type) -> String {
    ty.to_token_stream()
        .to_string()
        .replace("& mut ", "&mut ")
        .replace("& ", "&")
        .replace(" :: ", "::")
        .replace(":: ", "::")
        .replace(" < ", "<")
        .replace("< ", "<")
        .replace(" >", ">")
        .replace(" ,", ",")
}
