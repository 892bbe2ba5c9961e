use hookchain::middleware;
use hookchain::prelude::*;

struct Audit;

#[middleware]
impl Audit {
    #[hook(before_model)]
    fn count(&self) {}

    fn after_model(&self, response: &mut ModelResponse) {
        let _ = response;
    }
}

fn main() {}
