use hookchain::hook;
use hookchain::prelude::*;

#[hook(before_model)]
fn stamp(request: &mut ModelRequest) {
    request.system_prompt = Some("x".into());
}

fn main() {
    let mut request = ModelRequest::default();
    stamp(&mut request);
}
