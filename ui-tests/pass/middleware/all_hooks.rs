//! One `#[middleware]` with all six hooks, sync and async, with state; its other methods and
//! the hook methods stay ordinary methods.

use hookchain::prelude::*;
use hookchain::{chain, middleware};

#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct Counts {
    runs: u32,
    calls: u32,
}

#[derive(Debug, Clone)]
struct Everything {
    suffix: &'static str,
}

#[middleware(state = Counts)]
impl Everything {
    /// Not a hook: an ordinary method.
    fn new(suffix: &'static str) -> Self {
        Everything { suffix }
    }

    #[hook(before_agent)]
    fn start(&self, counts: &mut Counts) {
        counts.runs += 1;
    }

    #[hook(before_model)]
    async fn count(&self, cx: &mut Context, counts: &mut Counts, request: &mut ModelRequest) {
        counts.calls += 1;
        let _ = (cx, request);
    }

    #[hook(wrap_model_call)]
    async fn around<N: ModelNext>(
        &self,
        cx: &mut Context,
        request: ModelRequest,
        mut next: N,
    ) -> Result<ModelResponse, Error> {
        let mut response = next.call(cx, request).await?;
        response.message.content.push_text(self.suffix);
        Ok(response)
    }

    #[hook(after_model)]
    fn check(&self, response: &mut ModelResponse) -> Flow {
        let _ = response;
        Flow::Continue
    }

    #[hook(wrap_tool_call)]
    async fn tools(
        &self,
        counts: &Counts,
        cx: ToolContext<'_>,
        call: ToolCall,
        mut next: impl ToolNext,
    ) -> Result<ToolResult, Error> {
        let _ = counts.calls;
        Ok(next.call(cx, call).await)
    }

    #[hook(after_agent)]
    async fn finish(&self, cx: &mut Context, counts: &mut Counts) -> Result<(), Error> {
        assert_eq!(counts.calls as usize, cx.model_calls());
        Ok(())
    }
}

fn main() {
    let everything = Everything::new("!");
    let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("hello")]))
        .chain(chain![everything.clone()])
        .build().unwrap();
    let output = futures::executor::block_on(agent.run("hi")).unwrap();
    assert_eq!(output.text().as_deref(), Some("hello!"));

    // The hook methods are still methods.
    let mut counts = Counts::default();
    everything.start(&mut counts);
    assert_eq!(counts.runs, 1);
}
