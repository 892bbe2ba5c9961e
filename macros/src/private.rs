//! The path generated code names everything through: `::hookchain::__private`, or
//! `<crate>::__private` when the user renamed the dependency with `crate = path`.

use proc_macro2::{Span, TokenStream};
use quote::quote;

/// The tokens of the private path.
#[derive(Clone)]
pub(crate) struct Private(TokenStream);

impl Private {
    pub(crate) fn new(krate: Option<&syn::Path>) -> Self {
        Private(match krate {
            Some(path) => quote!(#path::__private),
            None => quote!(::hookchain::__private),
        })
    }

    /// The path with its tokens located at `span` (call-site hygiene, user location), so that
    /// an error about an item reached through it points at the user's code.
    pub(crate) fn at(&self, span: Span) -> TokenStream {
        let located = located(span);
        self.0
            .clone()
            .into_iter()
            .map(|mut tree| {
                tree.set_span(located);
                tree
            })
            .collect()
    }
}

impl quote::ToTokens for Private {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        self.0.to_tokens(tokens);
    }
}

/// `span`'s location with call-site hygiene: generated code that an error may point at, at the
/// user's token, while it still resolves names as the macro's output does.
pub(crate) fn located(span: Span) -> Span {
    Span::call_site().located_at(span)
}
