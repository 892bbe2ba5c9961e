//! A `#[hook]` whose body writes out the jumps it declares compiles, whichever way they are
//! written: `Flow::end()`, `Jump::..` paths however qualified, inside nested blocks and macros.

use hookchain::prelude::*;
use hookchain::{chain, hook};

#[hook(after_model, jumps = [model, tools, end])]
fn route(response: &mut ModelResponse) -> Flow {
    let flows = [Flow::Jump(hookchain::Jump::Model), Flow::Jump(Jump::Tools)];
    match response.message.content.as_text().unwrap() {
        "" => Flow::end(),
        "again" => {
            let [again, _] = flows;
            again
        }
        _ => vec![Flow::Jump(hookchain::middleware::Jump::Tools)].remove(0),
    }
}

/// A hook that declares nothing may still return a jump decided elsewhere: the chain checks it
/// when it runs.
#[hook(before_model)]
fn forward(cx: &mut Context) -> Flow {
    let _ = cx;
    decided_elsewhere()
}

fn decided_elsewhere() -> Flow {
    Flow::Continue
}

fn main() {
    let _ = chain![route, forward];
}
