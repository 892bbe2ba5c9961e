//! Checks of a user's type that report, in words and at the user's token, the first bound the
//! type misses: a `const` that panics with the macro's message (see `__private::Has`). One
//! error, naming the missing bound and the fix, and no trait of ours.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote_spanned};
use syn::Type;

use crate::private::{Private, located};

/// One question about the type (`DEFAULT`, answered by `Has<T>` or the trait `NoDefault`), and
/// what to say when the answer is no.
pub(crate) struct Bound {
    /// The type asked about, when not the checked type itself (a `Result`'s `T`).
    pub(crate) of: Option<Type>,
    pub(crate) question: &'static str,
    pub(crate) otherwise: &'static str,
    pub(crate) missing: String,
    /// The fix for this bound, in place of the check's own.
    pub(crate) fix: Option<String>,
}

impl Bound {
    pub(crate) fn new(question: &'static str, otherwise: &'static str, missing: String) -> Self {
        Bound {
            of: None,
            question,
            otherwise,
            missing,
            fix: None,
        }
    }

    /// `fix` said when this bound is the one missing, in place of the check's.
    pub(crate) fn fix(mut self, fix: impl Into<String>) -> Self {
        self.fix = Some(fix.into());
        self
    }

    /// The question asked about `of` instead.
    pub(crate) fn of(mut self, of: &Type) -> Self {
        self.of = Some(of.clone());
        self
    }
}

/// Whether `ty` can be named in a `const` on its own: no reference, lifetime, `Self`, `impl` or
/// `dyn`.
pub(crate) fn nameable(ty: &Type) -> bool {
    fn walk(tokens: TokenStream) -> bool {
        tokens.into_iter().all(|tree| match tree {
            proc_macro2::TokenTree::Punct(punct) => !matches!(punct.as_char(), '&' | '\''),
            proc_macro2::TokenTree::Ident(ident) => {
                ident != "Self" && ident != "impl" && ident != "dyn"
            }
            proc_macro2::TokenTree::Group(group) => walk(group.stream()),
            proc_macro2::TokenTree::Literal(_) => true,
        })
    }
    walk(ty.to_token_stream())
}

/// `ty` as the user wrote it, without the spaces of a token stream (`std::time::Instant`).
pub(crate) fn type_text(ty: &Type) -> String {
    let mut text = ty.to_token_stream().to_string();
    for (spaced, tight) in [
        (" :: ", "::"),
        (":: ", "::"),
        (" < ", "<"),
        ("< ", "<"),
        (" <", "<"),
        (" >", ">"),
        (" ,", ","),
        ("& ", "&"),
        ("' ", "'"),
    ] {
        text = text.replace(spaced, tight);
    }
    text
}

/// Whether `ty` names one of `params` (or `Self`): a `const` cannot, so such a type is checked
/// by a bound instead.
pub(crate) fn mentions(ty: &Type, params: &[&syn::Ident]) -> bool {
    fn walk(tokens: TokenStream, params: &[&syn::Ident]) -> bool {
        tokens.into_iter().any(|tree| match tree {
            proc_macro2::TokenTree::Ident(ident) => {
                ident == "Self" || params.iter().any(|param| ident == **param)
            }
            proc_macro2::TokenTree::Group(group) => walk(group.stream(), params),
            _ => false,
        })
    }
    walk(ty.to_token_stream(), params)
}

/// A `const` that fails, at `ty`, with `lead` followed by the first of `bounds` `ty` misses,
/// and `fix` on a second line.
pub(crate) fn first_missing(
    p: &Private,
    ty: &Type,
    lead: &str,
    bounds: &[Bound],
    fix: &str,
) -> TokenStream {
    let span: Span = located(syn::spanned::Spanned::span(ty));
    let pp = p.at(span);
    let imports = bounds.iter().map(|bound| {
        let otherwise = syn::Ident::new(bound.otherwise, span);
        quote_spanned!(span=> #[allow(unused_imports)] use #pp::#otherwise as _;)
    });
    // The call's parentheses at the type's last token: the error underlines the whole type.
    let last = ty
        .to_token_stream()
        .into_iter()
        .last()
        .map_or(span, |tree| located(tree.span()));
    let mut chain = quote_spanned!(span=> {});
    for bound in bounds.iter().rev() {
        let question = syn::Ident::new(bound.question, span);
        let asked = bound.of.as_ref().unwrap_or(ty);
        let fix = bound.fix.as_deref().unwrap_or(fix);
        let message = format!("{lead}: {}\n{fix}", bound.missing);
        let mut arguments = proc_macro2::Group::new(
            proc_macro2::Delimiter::Parenthesis,
            // Through `{}`: a type written with braces is not a format string.
            quote_spanned!(span=> "{}", #message),
        );
        arguments.set_span(last);
        chain = quote_spanned! {span=>
            if !<#pp::Has<#asked>>::#question {
                #pp::panic! #arguments
            } else #chain
        };
    }
    quote_spanned! {span=>
        const _: () = {
            #(#imports)*
            #chain
        };
    }
}
