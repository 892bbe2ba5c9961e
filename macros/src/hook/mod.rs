//! `#[hook(kind, ..)]` on a free function: the function becomes a unit type implementing
//! `Middleware`, and stays callable as `name::call(..)`.

mod expand;
mod parse;
mod validate;

pub(crate) use parse::HookAttr;
pub(crate) use validate::{jumps_fit, kind, literal_jumps_declared, phase_allows};

use proc_macro2::TokenStream;

use crate::ctxt::Ctxt;

pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let function = match syn::parse2::<parse::HookItem>(item.clone()) {
        Ok(function) => function,
        Err(error) => {
            let message = format!(
                "`#[hook]` goes on an `async fn` (or, inside a `#[middleware]` impl block, on a \
                 method): {error}"
            );
            let error = syn::Error::new(error.span(), message).to_compile_error();
            return quote::quote!(#item #error);
        }
    };
    if let Some(receiver) = function.sig.receiver() {
        // A free function with `self`, or a method in a plain impl block: the macro cannot tell
        // which, so the message covers both, and the function is given back without `self` and
        // with an empty body — valid in both places, so rustc adds no error of its own.
        let error = syn::Error::new_spanned(
            receiver,
            "a `#[hook]` function takes no `self`: remove it; for a hook with configuration, \
             write it as a method of a type whose impl block has `#[middleware]`",
        )
        .to_compile_error();
        let function = without_receiver(&function);
        return quote::quote!(#error #function);
    }
    let ctxt = Ctxt::new();
    let attr = parse::HookAttr::parse(&ctxt, attr);
    let model = validate::validate(&ctxt, &attr, &function);
    match (ctxt.check(), model) {
        (Ok(()), Some(model)) => expand::expand(&function, &attr, model),
        (Err(error), _) => expand::fallback(&function, &attr, error),
        (Ok(()), None) => unreachable!("validation reports an error whenever it returns no model"),
    }
}

/// The function with its `self` parameter removed and its body emptied.
fn without_receiver(function: &parse::HookItem) -> TokenStream {
    let mut sig = function.sig.clone();
    sig.inputs = sig
        .inputs
        .into_iter()
        .filter(|input| matches!(input, syn::FnArg::Typed(_)))
        .collect();
    let (attrs, vis) = (&function.attrs, &function.vis);
    quote::quote! {
        #(#attrs)*
        #[allow(unused_variables, clippy::empty_loop)]
        #vis #sig { loop {} }
    }
}
