use hookchain::middleware;
use hookchain::prelude::*;

struct Counter {
    calls: u32,
}

#[middleware]
impl Counter {
    #[hook(before_model)]
    fn count(&mut self, request: &mut ModelRequest) {
        self.calls += 1;
        let _ = request;
    }
}

fn main() {}
