//! Run- and thread-scoped state, taken by type in any hook, and a `#[check_answer]` method.

use hookchain::interrupt::Answer;
use hookchain::prelude::*;
use hookchain::{chain, hook, middleware};
use serde::{Deserialize, Serialize};

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
struct Totals {
    calls: u64,
}

struct Limits;

#[middleware(state = u32, thread_state = Totals)]
impl Limits {
    #[hook(before_model)]
    fn count(&self, run: &mut u32, thread: &mut Totals) {
        *run += 1;
        thread.calls += 1;
    }

    #[hook(wrap_tool_call)]
    async fn tools(
        &self,
        thread: &Totals,
        cx: ToolContext<'_>,
        run: &u32,
        call: ToolCall,
        mut next: impl ToolNext,
    ) -> Result<ToolResult, Error> {
        let _ = (thread.calls, run);
        Ok(next.call(cx, call).await)
    }

    #[hook(after_agent)]
    fn report(&self, thread: &mut Totals) {
        let _ = thread.calls;
    }

    #[check_answer]
    fn check(&self, answer: &Answer<'_>) -> Result<(), Error> {
        let _ = answer.value();
        Ok(())
    }
}

#[hook(before_model, thread_state = Totals)]
fn thread_only(totals: &mut Totals) {
    totals.calls += 1;
}

fn main() {
    let _ = chain![Limits, thread_only];
}
