//! In a `#[middleware]` block each hook declares the jumps its body writes out; a hook that
//! declares none compiles as long as its body writes none.

use hookchain::prelude::*;
use hookchain::{chain, middleware};

struct Limit {
    max: usize,
}

#[middleware]
impl Limit {
    #[hook(before_agent, jumps = [end])]
    fn start(&self) -> Flow {
        if self.max == 0 { Flow::end() } else { Flow::Continue }
    }

    #[hook(before_model, jumps = [end, tools])]
    fn check(&self, cx: &mut Context) -> Flow {
        if cx.model_calls() >= self.max {
            Flow::Jump(Jump::End)
        } else if cx.model_calls() == 1 {
            Flow::Jump(Jump::Tools)
        } else {
            Flow::Continue
        }
    }

    #[hook(after_model)]
    fn inspect(&self, response: &mut ModelResponse) -> Flow {
        let _ = response;
        Flow::Continue
    }
}

fn main() {
    let _ = chain![Limit { max: 3 }];
}
