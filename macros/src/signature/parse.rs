//! Reads a signature into a model: syntax only, no judgement.

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{FnArg, GenericParam, ReturnType, Signature, Type, TypeParamBound, WherePredicate};

use crate::kinds::{Form, HookKind, Role};

/// One typed parameter of a hook function.
pub(crate) struct Param<'a> {
    /// What it is, if its type says (`None`: not a type any hook takes, or the state).
    pub(crate) role: Option<Role>,
    pub(crate) form: Form,
    /// For `next`: the trait it is bounded by (`ModelNext` or `ToolNext`).
    pub(crate) next_trait: Option<String>,
    pub(crate) ty: &'a Type,
}

/// A hook function's signature, read.
pub(crate) struct HookSig<'a> {
    pub(crate) kind: HookKind,
    pub(crate) original: &'a Signature,
    pub(crate) params: Vec<Param<'a>>,
    /// Where a wrong return type is reported: the `-> T`, or the name when there is none.
    pub(crate) output_span: Span,
}

impl<'a> HookSig<'a> {
    pub(crate) fn parse(kind: HookKind, original: &'a Signature) -> Self {
        let next_params = next_type_params(original);
        let params = original
            .inputs
            .iter()
            .filter_map(|arg| match arg {
                FnArg::Typed(typed) => Some(classify(&typed.ty, &next_params)),
                FnArg::Receiver(_) => None,
            })
            .collect();
        let output_span = match &original.output {
            ReturnType::Type(_, ty) => ty.span(),
            ReturnType::Default => original.ident.span(),
        };
        HookSig {
            kind,
            original,
            params,
            output_span,
        }
    }

    pub(crate) fn is_async(&self) -> bool {
        self.original.asyncness.is_some()
    }

    pub(crate) fn receiver(&self) -> Option<&'a syn::Receiver> {
        self.original.receiver()
    }
}

/// The function's type parameters bounded by `ModelNext` or `ToolNext`, with the trait.
fn next_type_params(sig: &Signature) -> Vec<(syn::Ident, String)> {
    let mut found = Vec::new();
    for param in &sig.generics.params {
        if let GenericParam::Type(ty) = param
            && let Some(name) = ty.bounds.iter().find_map(next_bound)
        {
            found.push((ty.ident.clone(), name));
        }
    }
    if let Some(clause) = &sig.generics.where_clause {
        for predicate in &clause.predicates {
            if let WherePredicate::Type(predicate) = predicate {
                let Type::Path(path) = &predicate.bounded_ty else {
                    continue;
                };
                let (Some(ident), Some(name)) = (
                    path.path.get_ident(),
                    predicate.bounds.iter().find_map(next_bound),
                ) else {
                    continue;
                };
                found.push((ident.clone(), name));
            }
        }
    }
    found
}

/// `ModelNext` or `ToolNext`, if the bound is one of them.
fn next_bound(bound: &TypeParamBound) -> Option<String> {
    let TypeParamBound::Trait(bound) = bound else {
        return None;
    };
    let last = bound.path.segments.last()?.ident.to_string();
    matches!(last.as_str(), "ModelNext" | "ToolNext").then_some(last)
}

/// Whether the bound is `Emit`.
fn emit_bound(bound: &TypeParamBound) -> bool {
    matches!(bound, TypeParamBound::Trait(bound)
        if bound.path.segments.last().is_some_and(|last| last.ident == "Emit"))
}

/// What a parameter is, from its type alone.
fn classify<'a>(ty: &'a Type, next_params: &[(syn::Ident, String)]) -> Param<'a> {
    let (form, inner) = match ty {
        Type::Reference(reference) if reference.mutability.is_some() => {
            (Form::Mut, &*reference.elem)
        }
        Type::Reference(reference) => (Form::Shared, &*reference.elem),
        _ => (Form::Owned, ty),
    };
    let mut param = Param {
        role: None,
        form,
        next_trait: None,
        ty,
    };
    match strip(inner) {
        Type::ImplTrait(implementation) => {
            if let Some(name) = implementation.bounds.iter().find_map(next_bound) {
                param.role = Some(Role::Next);
                param.next_trait = Some(name);
            } else if implementation.bounds.iter().any(emit_bound) {
                param.role = Some(Role::Out);
            }
        }
        Type::Path(path) if path.qself.is_none() => {
            if let Some(ident) = path.path.get_ident()
                && let Some((_, name)) = next_params.iter().find(|(p, _)| p == ident)
            {
                param.role = Some(Role::Next);
                param.next_trait = Some(name.clone());
                return param;
            }
            let last = path.path.segments.last().map(|s| s.ident.to_string());
            param.role = match last.as_deref() {
                Some("Context" | "ToolContext") => Some(Role::Context),
                Some("ModelRequest") => Some(Role::Request),
                Some("ModelResponse") => Some(Role::Response),
                Some("ToolCall") => Some(Role::Call),
                Some("ModelEvent") => Some(Role::Event),
                _ => None,
            };
        }
        _ => {}
    }
    param
}

fn strip(ty: &Type) -> &Type {
    match ty {
        Type::Paren(paren) => strip(&paren.elem),
        Type::Group(group) => strip(&group.elem),
        _ => ty,
    }
}
