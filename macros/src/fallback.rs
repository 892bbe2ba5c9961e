//! What a macro emits next to its errors: an inert middleware, so code that uses the type (in a
//! `chain!`, say) gets no second error (thiserror's `fallback.rs`, tokio's default config).

use proc_macro2::TokenStream;
use quote::quote;
use syn::Generics;

use crate::private::Private;

/// `impl Middleware for self_ty` with no hook, in an anonymous const.
pub(crate) fn inert_middleware(
    p: &Private,
    self_ty: &TokenStream,
    generics: &Generics,
    name: &str,
) -> TokenStream {
    // Each type parameter assumed shareable, as in the real impl: a block with a mistake is not
    // also reported for a parameter missing `Send + Sync + 'static`.
    let mut generics = generics.clone();
    let idents: Vec<syn::Ident> = generics
        .type_params()
        .map(|param| param.ident.clone())
        .collect();
    let clause = generics.make_where_clause();
    for ident in idents {
        clause
            .predicates
            .push(syn::parse_quote!(#ident: #p::Shareable));
    }
    let (impl_generics, _, where_clause) = generics.split_for_impl();
    quote! {
        const _: () = {
            #[automatically_derived]
            impl #impl_generics #p::Middleware for #self_ty #where_clause {
                type State = ();
                type ThreadState = ();
                type StreamState = ();
                type Phase = #p::phase::Wrap;
                type WrapsModel = #p::False;
                type WrapsTool = #p::False;
                const NAME: &'static str = #name;
                const HOOKS: #p::HookSet = #p::HookSet::NONE;
            }
        };
    }
}
