//! `chain![a, b, c]`: a static chain of middleware, checked element by element.

mod expand;
mod parse;

use proc_macro2::TokenStream;

pub(crate) fn expand(input: TokenStream) -> TokenStream {
    match syn::parse2::<parse::ChainInput>(input) {
        Ok(mut chain) => {
            let errors = bare_nones(&mut chain);
            let chain = expand::expand(&chain);
            // Wrapped only with errors to show: `{ () }` for the empty chain would trip clippy's
            // `unused_unit` in the user's crate.
            if errors.is_empty() {
                chain
            } else {
                quote::quote!({ #errors #chain })
            }
        }
        Err(error) => {
            let message = format!(
                "{error}: `chain!` takes middleware separated by commas, as in `chain![a, b, c]`"
            );
            expand::fallback(syn::Error::new(error.span(), message))
        }
    }
}

/// A bare `None` names no middleware type, so the compiler cannot infer its type (and would say
/// so twice): reported here, once, with the fix, and replaced by the empty chain so that the rest
/// of the chain is still checked.
fn bare_nones(chain: &mut parse::ChainInput) -> TokenStream {
    let mut errors = TokenStream::new();
    for element in &mut chain.elements {
        let syn::Expr::Path(path) = element else {
            continue;
        };
        if path.qself.is_none() && path.path.is_ident("None") {
            let error = syn::Error::new_spanned(
                &*element,
                "a bare `None` names no middleware: write `None::<Audit>` with the middleware's \
                 type, or `flag.then_some(audit)` to switch a middleware on and off",
            );
            errors.extend(error.to_compile_error());
            *element = syn::parse_quote!(());
        }
    }
    errors
}
