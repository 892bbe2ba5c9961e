use hookchain::middleware;
use hookchain::prelude::*;

struct Audit;

#[middleware]
impl Audit {
    #[hook(before_model, phase = input)]
    fn stamp(&self, request: &mut ModelRequest) {
        request.system_prompt = Some("x".into());
    }
}

fn main() {}
