use hookchain::hook;
use hookchain::prelude::*;

#[hook(on_model_event)]
fn pass(event: ModelEvent, out: &mut impl Emit) -> Flow {
    let _ = out.emit(event);
    Flow::Continue
}

fn main() {}
