//! A `HashMap` given as a tool-result cache's store.

use std::collections::HashMap;

use hookchain::builtin::ToolResultCache;

fn main() {
    let _ = ToolResultCache::builder().store(HashMap::<String, String>::new());
}
