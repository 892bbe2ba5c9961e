use hookchain::hook;
use hookchain::prelude::*;

#[hook(before_model)]
async fn audit(request: &mut ModelRequest) {
    let _ = request;
}

#[hook(after_model)]
async fn redact(response: &mut ModelResponse) {
    let _ = response;
}

fn main() {
    let agent = Agent::builder(ScriptedModel::new([]))
        .chain(audit)
        .chain(redact)
        .build().unwrap();
    let _ = agent;
}
