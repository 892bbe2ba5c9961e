//! Procedural macros of [hookchain](https://docs.rs/hookchain): `#[hook]`, `#[middleware]` and
//! `chain!`.
//!
//! Use them through the `hookchain` crate, which re-exports and documents them; the generated
//! code names only `::hookchain::__private`, so this crate is not meant to be depended on
//! directly. Set `HOOKCHAIN_MACROS_DEBUG=1` to print every expansion.

#![forbid(unsafe_code)]

mod attr;
mod chain;
mod ctxt;
mod hook;
mod kinds;
mod middleware;
mod private;
mod signature;
mod trait_impl;

use proc_macro::TokenStream;

/// See the `hookchain` crate's documentation of `#[hook]`.
#[proc_macro_attribute]
pub fn hook(attr: TokenStream, item: TokenStream) -> TokenStream {
    debug("hook", hook::expand(attr.into(), item.into()))
}

/// See the `hookchain` crate's documentation of `#[middleware]`.
#[proc_macro_attribute]
pub fn middleware(attr: TokenStream, item: TokenStream) -> TokenStream {
    debug("middleware", middleware::expand(attr.into(), item.into()))
}

/// See the `hookchain` crate's documentation of `chain!`.
#[proc_macro]
pub fn chain(input: TokenStream) -> TokenStream {
    debug("chain", chain::expand(input.into()))
}

/// Prints the expansion when `HOOKCHAIN_MACROS_DEBUG` is set.
fn debug(name: &str, output: proc_macro2::TokenStream) -> TokenStream {
    if std::env::var_os("HOOKCHAIN_MACROS_DEBUG").is_some() {
        eprintln!("hookchain-macros: #[{name}] expands to:\n{output}\n");
    }
    output.into()
}
