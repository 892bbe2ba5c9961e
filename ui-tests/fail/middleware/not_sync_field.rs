//! A middleware counting calls in a `Cell`: a middleware is shared by every run, so it must be
//! `Sync`. One error, rustc's, at the type, naming the `Cell` (an atomic, or a `Mutex`). Each
//! hook of `Middleware` returning a future has `where Self: Sync` (implied by the supertrait),
//! and the methods `#[middleware]` writes assume `&Self: Send`, so no hook's future adds an
//! error of its own (5 errors before: the supertrait's three times, and one per hook).

use std::cell::Cell;

use hookchain::middleware;
use hookchain::prelude::*;

#[derive(Default)]
struct Counter {
    calls: Cell<u32>,
}

#[middleware]
impl Counter {
    #[hook(before_model)]
    async fn count(&self, request: &mut ModelRequest) {
        let _ = request;
        self.calls.set(self.calls.get() + 1);
    }

    #[hook(after_model)]
    async fn seen(&self, response: &mut ModelResponse) {
        let _ = response;
    }
}

fn main() {}
