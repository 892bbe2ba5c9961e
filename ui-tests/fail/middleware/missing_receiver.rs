use hookchain::middleware;
use hookchain::prelude::*;

struct Audit;

#[middleware]
impl Audit {
    #[hook(before_model)]
    fn stamp(request: &mut ModelRequest) {
        request.system_prompt = Some("x".into());
    }
}

fn main() {}
