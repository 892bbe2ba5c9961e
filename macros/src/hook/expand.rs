//! Generation for `#[hook]`: no decisions, no errors.

use proc_macro2::TokenStream;
use quote::quote;

use super::parse::{HookAttr, HookItem};
use super::validate::HookModel;
use crate::fallback;
use crate::private::Private;
use crate::trait_impl::{self, ImplModel};

/// The unit type, the function as its associated `call`, and the trait impls.
pub(crate) fn expand(function: &HookItem, attr: &HookAttr, model: HookModel<'_>) -> TokenStream {
    let p = Private::new(attr.options.krate.as_ref());
    let ident = &function.sig.ident;
    let implementation = trait_impl::expand(&ImplModel {
        private: p.clone(),
        self_ty: quote!(#ident),
        generics: syn::Generics::default(),
        name: attr.options.name.as_ref(),
        type_name: ident.to_string(),
        phase: model.phase,
        state: attr.options.state.clone(),
        thread_state: attr.options.thread_state.clone(),
        live_stream: attr.options.live_stream,
        hooks: vec![model.hook],
        before: Vec::new(),
        after: Vec::new(),
        requires: Vec::new(),
        check_answer: None,
        contribute: None,
    });
    let unit = unit_type(function, &p);
    quote! {
        #unit
        #implementation
    }
}

/// On error: the errors, the function as written (still callable as `name::call`), and an inert
/// middleware in place of the hook, so code using it gets no second error.
pub(crate) fn fallback(function: &HookItem, attr: &HookAttr, error: syn::Error) -> TokenStream {
    let p = Private::new(attr.options.krate.as_ref());
    let ident = &function.sig.ident;
    let inert = fallback::inert_middleware(
        &p,
        &quote!(#ident),
        &syn::Generics::default(),
        &ident.to_string(),
    );
    let unit = unit_type(function, &p);
    let error = error.to_compile_error();
    quote! {
        #error
        #unit
        #inert
    }
}

/// `struct name;` and the function as `name::call`.
fn unit_type(function: &HookItem, p: &Private) -> TokenStream {
    function.unit_type(
        p,
        &function.sig,
        "The hook function itself, callable on its own (in unit tests, say).",
    )
}
