//! Recorded as rustc prints it, not improved: middleware chosen at run time kept as
//! `Vec<Box<dyn Middleware>>`. `Middleware` is not dyn compatible (generic, allocation-free
//! hooks; constants), and rustc has no attribute for this error (E0038), so it lists the trait's
//! items. The fix is `hookchain::plugin`: a `PluginRegistry`, or `Plugins::new` of
//! `plugin::boxed(middleware)` values (`Box<dyn DynMiddleware>`). See the table in
//! `hookchain-macros`' docs.

use hookchain::prelude::*;

fn main() {
    let _plugins: Vec<Box<dyn Middleware>> = Vec::new();
}
