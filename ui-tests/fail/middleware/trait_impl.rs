use hookchain::middleware;
use hookchain::prelude::*;

struct Audit;

trait Stamp {
    fn stamp(&self, request: &mut ModelRequest);
}

#[middleware]
impl Stamp for Audit {
    #[hook(before_model)]
    fn stamp(&self, request: &mut ModelRequest) {
        request.system_prompt = Some("x".into());
    }
}

fn main() {}
