//! A generic `#[middleware]` type.

use hookchain::prelude::*;
use hookchain::{chain, middleware};

struct Tagged<T> {
    tag: T,
}

#[middleware]
impl<T: Send + Sync + 'static> Tagged<T>
where
    T: std::fmt::Display,
{
    #[hook(after_model)]
    fn tag(&self, response: &mut ModelResponse) {
        response
            .message
            .content
            .push_text(format!(" [{}]", self.tag));
    }
}

fn main() {
    let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("hello")]))
        .chain(chain![Tagged { tag: 1u8 }, Tagged { tag: "two" }])
        .build().unwrap();
    let output = futures::executor::block_on(agent.run("hi")).unwrap();
    assert_eq!(output.text().as_deref(), Some("hello [two] [1]"));
}
