use hookchain::hook;
use hookchain::prelude::*;

#[hook(before_model)]
async fn stamp<T: Default>(request: &mut ModelRequest) {
    let _ = T::default();
    request.system_prompt = Some("x".into());
}

fn main() {}
