//! A `#[hook]` function is both a middleware in a chain and a function callable as
//! `name::call(..)`.

use hookchain::prelude::*;
use hookchain::{chain, hook};

#[hook(before_model)]
async fn stamp(request: &mut ModelRequest) {
    request.system_prompt = Some("stamped".into());
}

#[hook(after_model)]
fn shout(response: &mut ModelResponse) -> Flow {
    response.message.content = response.message.text().to_uppercase().into();
    Flow::Continue
}

fn main() {
    let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("hello")]))
        .chain(chain![stamp, shout])
        .build().unwrap();
    let output = futures::executor::block_on(agent.run("hi")).unwrap();
    assert_eq!(output.text().as_deref(), Some("HELLO"));

    let mut request = ModelRequest::default();
    futures::executor::block_on(stamp::call(&mut request));
    assert_eq!(request.system_prompt.as_deref(), Some("stamped"));

    let mut response = ModelResponse::text("quiet");
    assert!(shout::call(&mut response).is_continue());
    assert_eq!(response.message.content, "QUIET");
}
