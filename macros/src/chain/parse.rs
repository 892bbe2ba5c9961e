//! Syntax of `chain!`: comma-separated expressions, optionally preceded by `crate = path;`.

use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{Expr, Path, Token};

/// The elements of `chain![..]`.
pub(crate) struct ChainInput {
    /// `crate = path;`, for a renamed dependency.
    pub(crate) krate: Option<Path>,
    pub(crate) elements: Vec<Expr>,
}

impl Parse for ChainInput {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let krate = if input.peek(Token![crate]) && input.peek2(Token![=]) {
            input.parse::<Token![crate]>()?;
            input.parse::<Token![=]>()?;
            let path = input.parse()?;
            input.parse::<Token![;]>()?;
            Some(path)
        } else {
            None
        };
        let elements = Punctuated::<Expr, Token![,]>::parse_terminated(input)?;
        Ok(ChainInput {
            krate,
            elements: elements.into_iter().collect(),
        })
    }
}
