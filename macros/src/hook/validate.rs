//! The rules of `#[hook]`: a known kind, options that fit it, a signature that fits it, and
//! declared targets for the jumps its body writes out.

use proc_macro2::TokenStream;

use crate::attr::{JumpValue, PhaseValue, Place};
use crate::ctxt::Ctxt;
use crate::jumps::literal_jumps;
use crate::kinds::HookKind;
use crate::signature::{Declared, HookSig, validate as validate_signature};
use crate::trait_impl::HookImpl;

use super::parse::{HookAttr, HookItem};

/// A `#[hook]` that passed every rule.
pub(crate) struct HookModel<'a> {
    pub(crate) hook: HookImpl<'a>,
    pub(crate) phase: PhaseValue,
}

pub(crate) fn validate<'a>(
    ctxt: &Ctxt,
    attr: &HookAttr,
    function: &'a HookItem,
) -> Option<HookModel<'a>> {
    let (kind, _) = kind(ctxt, attr)?;
    for extra in &attr.extra_kinds {
        ctxt.error_spanned_by(
            extra,
            "a `#[hook]` function implements one hook; for several, put `#[hook(..)]` methods in \
             a `#[middleware]` impl block",
        );
    }
    let phase = phase_fits(ctxt, attr, kind);
    let jumps = jumps_fit(ctxt, attr, kind);
    if !attr.options.jumps_mistaken {
        literal_jumps_declared(ctxt, kind, &jumps, function.body.clone());
    }
    let sig = HookSig::parse(kind, &function.sig);
    let declared = Declared {
        state: attr.options.state.as_ref(),
        thread: attr.options.thread_state.as_ref(),
        mistaken: attr.options.states_mistaken,
    };
    let roles = validate_signature(ctxt, &sig, Place::HookFn, declared);
    Some(HookModel {
        hook: HookImpl { sig, roles, jumps },
        phase,
    })
}

/// The hook's kind, or `None` after reporting why there is none.
pub(crate) fn kind<'a>(ctxt: &Ctxt, attr: &'a HookAttr) -> Option<(HookKind, &'a syn::Ident)> {
    match &attr.kind {
        None if attr.kind_reported => None,
        None => {
            ctxt.error_at(
                attr.span,
                format!(
                    "`#[hook]` needs the hook it implements first, e.g. `#[hook(before_model)]`: \
                     one of {}",
                    HookKind::list()
                ),
            );
            None
        }
        Some((ident, None)) => {
            let hint = HookKind::suggest(&ident.to_string())
                .map(|kind| format!("; did you mean `{}`?", kind.name()))
                .unwrap_or_default();
            ctxt.error_spanned_by(
                ident,
                format!(
                    "unknown hook `{ident}`: expected one of {}{hint}",
                    HookKind::list()
                ),
            );
            None
        }
        Some((ident, Some(kind))) => Some((*kind, ident)),
    }
}

/// Input middleware only have `before_*` hooks, Output middleware only `after_*` hooks.
pub(crate) fn phase_allows(phase: PhaseValue, kind: HookKind) -> Result<(), String> {
    let (allowed, purpose, other) = match phase {
        PhaseValue::Input if !kind.is_before() => (
            "`before_agent` and `before_model`",
            "prepares what the rest of the chain sees",
            "wrap` or `phase = output",
        ),
        PhaseValue::Output if !kind.is_after() => (
            "`after_model` and `after_agent`",
            "cleans up what the rest of the chain sees",
            "wrap` or `phase = input",
        ),
        _ => return Ok(()),
    };
    Err(format!(
        "an {} middleware {purpose}, so it may only have {allowed} hooks, not `{}`; use \
         `phase = {other}`",
        phase.type_name(),
        kind.name()
    ))
}

fn phase_fits(ctxt: &Ctxt, attr: &HookAttr, kind: HookKind) -> PhaseValue {
    let Some((phase, span)) = attr.options.phase else {
        return PhaseValue::Wrap;
    };
    if let Err(why) = phase_allows(phase, kind) {
        ctxt.error_at(span, why);
    }
    phase
}

pub(crate) fn jumps_fit(ctxt: &Ctxt, attr: &HookAttr, kind: HookKind) -> Vec<JumpValue> {
    let Some((jumps, span)) = &attr.options.jumps else {
        return Vec::new();
    };
    if !kind.can_jump() {
        ctxt.error_at(
            *span,
            format!(
                "a `{}` hook cannot jump (it does not return a `Flow`): remove `jumps`",
                kind.name()
            ),
        );
    }
    jumps.clone()
}

/// A jump written out in the body of a hook (`Flow::end()`, `Jump::Model`) must be declared by
/// that hook: reported at the jump, once per target (its first occurrence), naming the
/// attribute that declares it. Hooks that return no `Flow` are left to rustc.
pub(crate) fn literal_jumps_declared(
    ctxt: &Ctxt,
    kind: HookKind,
    declared: &[JumpValue],
    body: TokenStream,
) {
    if !kind.can_jump() {
        return;
    }
    let mut reported: Vec<JumpValue> = Vec::new();
    for jump in literal_jumps(body) {
        if declared.contains(&jump.target) || reported.contains(&jump.target) {
            continue;
        }
        reported.push(jump.target);
        let targets: Vec<&str> = declared
            .iter()
            .chain([&jump.target])
            .map(|target| target.name())
            .collect();
        ctxt.error_spanned_by(
            jump.tokens,
            format!(
                "this `{kind}` hook jumps to `{target}`, which it does not declare: add `{target}` \
                 to its jumps, as in `#[hook({kind}, jumps = [{targets}])]`",
                kind = kind.name(),
                target = jump.target.name(),
                targets = targets.join(", "),
            ),
        );
    }
}
