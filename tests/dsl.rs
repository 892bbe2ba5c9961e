//! The macro DSL end to end: `#[hook]`, `#[middleware]` and `chain!` build middleware that run.

use hookchain::prelude::*;
use hookchain::{chain, hook, middleware};

/// Adds a line to the system prompt.
#[hook(before_model, phase = input)]
async fn stamp(request: &mut ModelRequest) {
    request.system_prompt = Some("stamped".into());
}

/// Counts model calls in its state.
#[derive(Debug, Default)]
struct Counter {
    label: &'static str,
}

#[middleware(state = u32)]
impl Counter {
    #[hook(before_model)]
    fn count(&self, calls: &mut u32) {
        *calls += 1;
    }

    #[hook(wrap_model_call)]
    async fn around(
        &self,
        cx: &mut Context,
        request: ModelRequest,
        mut next: impl ModelNext,
    ) -> Result<ModelResponse, Error> {
        let mut response = next.call(cx, request).await?;
        response.message.content.push_text(self.label);
        Ok(response)
    }

    #[hook(after_agent)]
    fn report(&self, cx: &mut Context, calls: &mut u32) {
        assert_eq!(*calls as usize, cx.step());
    }
}

#[tokio::test]
async fn hooks_and_middleware_run_in_a_chain() {
    let model = ScriptedModel::new([ModelResponse::text("hello")]);
    let agent = Agent::builder(model)
        .chain(chain![stamp, Counter { label: "!" }])
        .build()
        .unwrap();
    let output = agent.run("hi").await.unwrap();
    assert_eq!(output.text().as_deref(), Some("hello!"));
    let requests = agent.model().requests();
    assert_eq!(requests[0].system_prompt.as_deref(), Some("stamped"));
}

#[tokio::test]
async fn a_hook_function_stays_callable() {
    let mut request = ModelRequest::default();
    stamp::call(&mut request).await;
    assert_eq!(request.system_prompt.as_deref(), Some("stamped"));
}
