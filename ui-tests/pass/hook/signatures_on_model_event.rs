//! Every accepted signature of the per-event hook: with and without a stream state, returning
//! `()` or a `Result`, as a function and as a method; and `live_stream` on both attributes.

use hookchain::prelude::*;
use hookchain::{chain, hook, middleware};

#[hook(on_model_event)]
fn pass_through(event: ModelEvent, out: &mut impl Emit) -> Result<(), Error> {
    out.emit(event)
}

#[hook(on_model_event, phase = output)]
fn count(seen: &mut usize, event: ModelEvent, out: &mut impl Emit) -> Result<(), Error> {
    *seen += 1;
    out.emit(event)
}

#[hook(on_model_event)]
fn drop_all(event: ModelEvent, out: &mut impl Emit) {
    let _ = (event, out);
}

#[hook(after_model, live_stream)]
fn observe(response: &mut ModelResponse) {
    let _ = response;
}

struct Filter {
    word: &'static str,
}

#[middleware(live_stream)]
impl Filter {
    #[hook(on_model_event)]
    fn filter(
        &self,
        held: &mut String,
        event: ModelEvent,
        out: &mut impl Emit,
    ) -> Result<(), Error> {
        held.push_str(self.word);
        out.emit(event)
    }

    #[hook(after_model)]
    fn check(&self, response: &mut ModelResponse) {
        let _ = response;
    }
}

const _: () = {
    assert!(<observe as Middleware>::LIVE_STREAM);
    assert!(<Filter as Middleware>::LIVE_STREAM);
    assert!(<pass_through as Middleware>::LIVE_STREAM);
};

fn main() {
    let chain = chain![
        pass_through,
        drop_all,
        observe,
        Filter { word: "x" },
        count
    ];
    let _ = chain.describe();
}
