//! `#[middleware(..)]` on an impl block: its `#[hook(..)]` methods become one middleware; the
//! other methods, and the hook methods themselves, stay ordinary methods. On an
//! `impl Middleware for X` block, it completes the impl instead (see `trait_form`).

mod expand;
mod parse;
mod trait_form;
mod validate;

use proc_macro2::TokenStream;

use crate::ctxt::Ctxt;

pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut block = match syn::parse2::<syn::ItemImpl>(item.clone()) {
        Ok(block) => block,
        Err(error) => {
            let message =
                format!("`#[middleware]` goes on an impl block (`impl Audit {{ .. }}`): {error}");
            let error = syn::Error::new(error.span(), message).to_compile_error();
            return quote::quote!(#item #error);
        }
    };
    if trait_form::is_middleware_impl(&block) {
        return trait_form::expand(attr, block);
    }
    let ctxt = Ctxt::new();
    let parsed = parse::parse(&ctxt, attr, &mut block);
    let model = validate::validate(&ctxt, &parsed, &block);
    match (ctxt.check(), model) {
        (Ok(()), Some(model)) => expand::expand(&block, &parsed, model),
        (Err(error), _) => expand::fallback(&block, &parsed, error),
        (Ok(()), None) => unreachable!("validation reports an error whenever it returns no model"),
    }
}
