use hookchain::hook;
use hookchain::prelude::*;

#[hook(on_model_event)]
fn pass(event: ModelEvent, mut out: impl Emit) -> Result<(), Error> {
    out.emit(event)
}

fn main() {}
