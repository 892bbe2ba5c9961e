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
        // A method in a plain impl block: anything generated next to it would not be valid
        // there, so the method is given back as it is, with the error alone.
        let error = syn::Error::new_spanned(
            receiver,
            "`#[hook]` on a method: put `#[middleware]` on the impl block, which turns its \
             `#[hook]` methods into one middleware",
        )
        .to_compile_error();
        return quote::quote!(#error #item);
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
