//! `#![deny(warnings)]` on a file using all three macros: the expansions add no warning.

#![deny(warnings)]

use hookchain::prelude::*;
use hookchain::{chain, hook, middleware};

/// Stamps the system prompt.
#[hook(before_model, phase = input)]
pub async fn stamp(request: &mut ModelRequest) {
    request.system_prompt = Some("stamped".into());
}

/// Retries once.
#[hook(wrap_model_call)]
async fn retry(
    cx: &mut Context,
    request: ModelRequest,
    mut next: impl ModelNext,
) -> Result<ModelResponse, Error> {
    match next.call(cx, request.clone()).await {
        Ok(response) => Ok(response),
        Err(_) => next.call(cx, request).await,
    }
}

/// Counts calls.
#[derive(Debug, Default)]
pub struct Counter {
    label: &'static str,
}

#[middleware(state = u32, after = stamp)]
impl Counter {
    #[hook(before_model)]
    fn count(&self, calls: &mut u32) {
        *calls += 1;
    }

    #[hook(after_model, jumps = [end])]
    async fn label(&self, response: &mut ModelResponse) -> Flow {
        response.message.content.push_text(self.label);
        Flow::Continue
    }
}

#[hook(after_model, phase = output)]
fn redact(response: &mut ModelResponse) {
    response.message.content = response.message.text().replace("secret", "***").into();
}

fn main() {
    let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("a secret")]))
        .chain(chain![stamp, retry, Counter { label: "!" }, redact])
        .build().unwrap();
    let output = futures::executor::block_on(agent.run("hi")).unwrap();
    assert_eq!(output.text().as_deref(), Some("a ***!"));
}
