//! `chain![a, b, c]`: a static chain of middleware, checked element by element.

mod expand;
mod parse;

use proc_macro2::TokenStream;

pub(crate) fn expand(input: TokenStream) -> TokenStream {
    match syn::parse2::<parse::ChainInput>(input) {
        Ok(chain) => expand::expand(&chain),
        Err(error) => {
            let message = format!(
                "{error}: `chain!` takes middleware separated by commas, as in `chain![a, b, c]`"
            );
            expand::fallback(syn::Error::new(error.span(), message))
        }
    }
}
