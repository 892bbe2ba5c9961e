use hookchain::middleware;
use hookchain::prelude::*;

struct Limit {
    max: usize,
}

#[middleware]
impl Limit {
    #[hook(before_model, jumps = [end])]
    fn check(&self, cx: &mut Context) -> Flow {
        if cx.model_calls() >= self.max { Flow::end() } else { Flow::Continue }
    }

    // `end` is declared by `check` only: this hook may not end the run.
    #[hook(after_model)]
    fn inspect(&self, response: &mut ModelResponse) -> Flow {
        if response.message.content.is_empty() { Flow::end() } else { Flow::Continue }
    }
}

fn main() {}
