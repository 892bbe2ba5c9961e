use hookchain::hook;
use hookchain::prelude::*;

#[hook(on_model_event)]
fn pass(cx: &mut Context, event: ModelEvent, out: &mut impl Emit) -> Result<(), Error> {
    let _ = cx;
    out.emit(event)
}

fn main() {}
