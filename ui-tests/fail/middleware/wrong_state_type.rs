use hookchain::middleware;
use hookchain::prelude::*;

struct Counter;

#[middleware(state = u32)]
impl Counter {
    #[hook(before_model)]
    fn count(&self, calls: &mut u64, request: &mut ModelRequest) {
        *calls += 1;
        let _ = request;
    }
}

fn main() {}
