//! `#[tool]` on a free function (which becomes a unit type implementing `Tool`, and stays
//! callable as `name::call(..)`) or on an impl block holding one `&self` method (its type
//! implements `Tool`).

mod expand;
mod parse;
mod validate;

use proc_macro2::TokenStream;
use quote::quote;

use crate::ctxt::Ctxt;
use crate::private::Private;
use parse::{ToolAttr, ToolItem};

pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let parsed = match syn::parse2::<ToolItem>(item.clone()) {
        Ok(parsed) => parsed,
        Err(error) => {
            let message = format!(
                "`#[tool]` goes on an `async fn` or on an impl block with one `&self` method: \
                 {error}"
            );
            let error = syn::Error::new(error.span(), message).to_compile_error();
            return quote!(#item #error);
        }
    };
    let ctxt = Ctxt::new();
    let attr = ToolAttr::parse(&ctxt, attr);
    let p = Private::new(attr.krate.as_ref());
    match parsed {
        ToolItem::Other(item, kind) => {
            ctxt.error_at(
                kind,
                "`#[tool]` goes on an `async fn`, or on an impl block with one `&self` method \
                 (the tool's state is the type's fields)",
            );
            let error = ctxt.check().err().map(|error| error.to_compile_error());
            quote!(#error #item)
        }
        ToolItem::Fn(function) => {
            if let Some(receiver) = function.sig.receiver() {
                // A method in a plain impl block: anything generated next to it would not be
                // valid there, so the method is given back as it is, with the error alone.
                ctxt.error_spanned_by(
                    receiver,
                    "`#[tool]` on a method: put `#[tool]` on the impl block instead, with the \
                     tool's method alone in it: `#[tool] impl Search { async fn search(&self, \
                     …) }`",
                );
                let error = ctxt.check().err().map(|error| error.to_compile_error());
                return quote!(#error #item);
            }
            let model = validate::validate_fn(&ctxt, &attr, &function);
            match (ctxt.check(), model) {
                (Ok(()), Some(model)) => expand::expand_fn(&p, &function, &model),
                (Err(error), _) => expand::fallback_fn(&p, &function, error),
                (Ok(()), None) => {
                    unreachable!("validation reports an error whenever it returns no model")
                }
            }
        }
        ToolItem::Impl(block) => {
            let model = validate::validate_impl(&ctxt, &attr, &block);
            match (ctxt.check(), model) {
                (Ok(()), Some(model)) => expand::expand_impl(&p, &block, &model),
                (Err(error), _) => expand::fallback_impl(&p, &block, error),
                (Ok(()), None) => {
                    unreachable!("validation reports an error whenever it returns no model")
                }
            }
        }
    }
}
