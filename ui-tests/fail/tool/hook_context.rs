use hookchain::prelude::*;
use hookchain::tool;

/// Tells the call's id.
#[tool]
async fn whoami(cx: &mut Context, name: String) -> String {
    let _ = cx;
    name
}

fn main() {}
