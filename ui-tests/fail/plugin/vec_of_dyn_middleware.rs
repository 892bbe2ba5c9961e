//! Middleware chosen at run time kept as `Vec<Box<dyn Middleware>>` (the fix is
//! `hookchain::plugin`: a `PluginRegistry`, or `Plugins::new` of `plugin::boxed(middleware)`
//! values, `Box<dyn DynMiddleware>`). E0038 has no attribute of its own; `Middleware` has
//! `Sized` as a supertrait, so rustc exempts every item of the trait and gives the one reason
//! "it requires `Self: Sized`": 9 lines (it listed the 19 constants, associated types and hooks
//! that are not dyn compatible, 66 lines, before). rustc shows no note of ours here, so the
//! error cannot name `hookchain::plugin`. See the table in `hookchain-macros`' docs.

use hookchain::prelude::*;

fn main() {
    let _plugins: Vec<Box<dyn Middleware>> = Vec::new();
}
