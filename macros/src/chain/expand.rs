//! Generation for `chain!`: evaluate the elements in order, check each (is it a middleware?)
//! and each pair of neighbours (phase order) at the element's own tokens, group them into
//! tuples of at most 12 (nested for longer chains), and run the chain's compile-time checks.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use super::parse::ChainInput;
use crate::private::{Private, located};

/// The largest tuple the core implements `Middleware` for.
const GROUP: usize = 12;

pub(crate) fn expand(chain: &ChainInput) -> TokenStream {
    let p = Private::new(chain.krate.as_ref());
    if chain.elements.is_empty() {
        return quote!(());
    }
    let bindings: Vec<syn::Ident> = (0..chain.elements.len())
        .map(|i| format_ident!("__hookchain_{}", i))
        .collect();
    let lets = chain
        .elements
        .iter()
        .zip(&bindings)
        .map(|(element, binding)| quote!(let #binding = #element;));
    let is_middleware = chain
        .elements
        .iter()
        .zip(&bindings)
        .map(|(element, binding)| {
            let span = located(element.span());
            let p = p.at(span);
            let binding = syn::Ident::new(&binding.to_string(), span);
            // A trait method called by path, in a closure never called: a value that is not a
            // middleware is reported at the element with `Middleware`'s message, and with no note
            // pointing into hookchain (as a helper function's bound would add).
            quote_spanned!(span=> let _ = || #p::Middleware::describe(&#binding);)
        });
    // The check of each pair of neighbours sits at the later element.
    let phase_checks = chain.elements.iter().skip(1).zip(bindings.windows(2));
    let phase_checks = phase_checks.map(|(element, pair)| {
        let span = located(element.span());
        let previous = syn::Ident::new(&pair[0].to_string(), span);
        let next = syn::Ident::new(&pair[1].to_string(), span);
        let p = p.at(span);
        // By path, like the check above: a wrong order is `ListedAfter`'s message at the
        // element, with no note pointing at a helper function's bound.
        quote_spanned!(span=>
            #p::phase::ListedAfter::listed_after(
                (&#p::type_probe(&#next)).phase(),
                (&#p::type_probe(&#previous)).phase(),
            );
        )
    });
    let grouped = group(bindings.iter().map(|binding| quote!(#binding)).collect());
    quote! {{
        #[allow(unused_imports)]
        use #p::{ChainProbe as _, ChainProbeOther as _, PhaseProbe as _, PhaseProbeOther as _};
        #(#lets)*
        #(#is_middleware)*
        #(#phase_checks)*
        (&#p::Probe::new(#grouped)).checked()
    }}
}

/// The elements as one tuple of at most [`GROUP`] members, nesting groups for longer chains.
fn group(mut items: Vec<TokenStream>) -> TokenStream {
    while items.len() > GROUP {
        items = items
            .chunks(GROUP)
            .map(|chunk| quote!((#(#chunk,)*)))
            .collect();
    }
    quote!((#(#items,)*))
}

/// On a syntax error: the error, and the empty chain in place of the chain.
pub(crate) fn fallback(error: syn::Error) -> TokenStream {
    let error = error.to_compile_error();
    quote!({ #error () })
}
