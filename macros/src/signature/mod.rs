//! A hook function's signature: which parameter is which (by its type), checked against the
//! hook's kind. Shared by `#[hook]` (free functions) and `#[middleware]` (methods).

mod parse;
mod validate;

pub(crate) use parse::HookSig;
pub(crate) use validate::{Declared, pretty, validate};
