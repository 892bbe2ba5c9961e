//! A function under `#[hook]` or `#[tool]`, read without its body (kept as tokens: faster, and
//! still usable while the body is half-written), and the unit type both macros make of it.

use proc_macro2::{Delimiter, Group, TokenStream, TokenTree};
use quote::{ToTokens, quote, quote_spanned};
use syn::parse::{Parse, ParseStream};
use syn::{Attribute, Signature, Visibility};

use crate::private::Private;

/// A function whose body is kept as written.
pub(crate) struct FnItem {
    pub(crate) attrs: Vec<Attribute>,
    pub(crate) vis: Visibility,
    pub(crate) sig: Signature,
    /// The body, braces included, as written.
    pub(crate) body: TokenStream,
}

impl Parse for FnItem {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let attrs = input.call(Attribute::parse_outer)?;
        let vis = input.parse()?;
        let sig = input.parse()?;
        let body: Group = input.parse()?;
        if body.delimiter() != Delimiter::Brace {
            return Err(syn::Error::new(body.span(), "expected the function's body"));
        }
        Ok(FnItem {
            attrs,
            vis,
            sig,
            body: TokenTree::Group(body).into_token_stream(),
        })
    }
}

impl FnItem {
    /// `struct name;` with the function's docs, and the function itself as `name::call` (with
    /// `call_sig`, the function's signature as the macro re-emits it), documented by `call_doc`.
    pub(crate) fn unit_type(
        &self,
        p: &Private,
        call_sig: &Signature,
        call_doc: &str,
    ) -> TokenStream {
        let FnItem {
            attrs, vis, body, ..
        } = self;
        let ident = &self.sig.ident;
        let docs = attrs.iter().filter(|a| a.path().is_ident("doc"));
        let mut call_sig = call_sig.clone();
        call_sig.ident = syn::Ident::new("call", ident.span());
        let struct_token = quote_spanned!(ident.span()=> struct);
        quote! {
            #(#docs)*
            #[allow(non_camel_case_types)]
            #[derive(#p::Clone, #p::Copy, #p::Debug, #p::Default)]
            #vis #struct_token #ident;

            impl #ident {
                #[doc = #call_doc]
                #(#attrs)*
                #vis #call_sig #body
            }
        }
    }
}
