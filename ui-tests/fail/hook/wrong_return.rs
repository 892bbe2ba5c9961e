use hookchain::prelude::*;
use hookchain::hook;

#[hook(before_model)]
async fn stamp(request: &mut ModelRequest) -> String {
    request.system_prompt.clone().unwrap_or_default()
}

fn main() {}
