//! Procedural macros of [hookchain](https://docs.rs/hookchain).
//!
//! Use them through the `hookchain` crate, which re-exports them; the generated code names only
//! `::hookchain::__private`, so this crate is not meant to be depended on directly.

#![forbid(unsafe_code)]
