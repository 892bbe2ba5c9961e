//! `Option<M>` and a nested chain are elements of `chain![..]` like any middleware.

use hookchain::prelude::*;
use hookchain::{chain, hook, middleware};

#[hook(before_model, phase = input)]
async fn scrub(request: &mut ModelRequest) {
    let _ = request;
}

#[hook(after_model)]
fn exclaim(response: &mut ModelResponse) {
    response.message.content.push_text("!");
}

#[hook(after_model, phase = output)]
fn question(response: &mut ModelResponse) {
    response.message.content.push_text("?");
}

struct Suffix(&'static str);

#[middleware]
impl Suffix {
    #[hook(after_model)]
    fn suffix(&self, response: &mut ModelResponse) {
        response.message.content.push_text(self.0);
    }
}

fn main() {
    let verbose = true;
    let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("hello")]))
        .chain(chain![
            scrub,
            verbose.then_some(exclaim),
            chain![],
            None::<Suffix>,
            chain![Suffix(" a"), Some(Suffix(" b"))],
            (exclaim,),
            question,
        ])
        .build().unwrap();
    let output = futures::executor::block_on(agent.run("hi")).unwrap();
    assert_eq!(output.text().as_deref(), Some("hello?! b a!"));
}
