use hookchain::hook;
use hookchain::prelude::*;

#[hook(on_model_event, phase = input)]
fn pass(event: ModelEvent, out: &mut impl Emit) -> Result<(), Error> {
    out.emit(event)
}

fn main() {}
