//! Generation for `#[middleware]`: no decisions, no errors.

use proc_macro2::TokenStream;
use quote::{ToTokens, quote};
use syn::ItemImpl;

use super::parse::Parsed;
use super::validate::MiddlewareModel;
use crate::fallback;
use crate::private::Private;
use crate::trait_impl::{self, ImplModel};

/// The block as written (hook attributes removed) and the trait impls.
pub(crate) fn expand(block: &ItemImpl, parsed: &Parsed, model: MiddlewareModel<'_>) -> TokenStream {
    let p = Private::new(parsed.options.krate.as_ref());
    let options = &parsed.options;
    let implementation = trait_impl::expand(&ImplModel {
        private: p,
        self_ty: block.self_ty.to_token_stream(),
        generics: block.generics.clone(),
        name: options.name.as_ref(),
        type_name: model.type_name,
        phase: model.phase,
        state: options.state.clone(),
        thread_state: options.thread_state.clone(),
        live_stream: options.live_stream,
        hooks: model.hooks,
        before: options.before.clone(),
        after: options.after.clone(),
        requires: options.requires.clone(),
        check_answer: model.check_answer,
        contribute: model.contribute,
    });
    quote! {
        #block
        #implementation
    }
}

/// On error: the errors, the block as written, and an inert middleware, so code using the type
/// gets no second error.
pub(crate) fn fallback(block: &ItemImpl, parsed: &Parsed, error: syn::Error) -> TokenStream {
    let p = Private::new(parsed.options.krate.as_ref());
    let error = error.to_compile_error();
    if block.trait_.is_some() {
        return quote!(#error #block);
    }
    let self_ty = block.self_ty.to_token_stream();
    let name = self_ty.to_string();
    let inert = fallback::inert_middleware(&p, &self_ty, &block.generics, &name);
    quote! {
        #error
        #block
        #inert
    }
}
