use hookchain::hook;
use hookchain::prelude::*;

#[hook(after_model, jumps = [model])]
fn retry_or_stop(response: &mut ModelResponse) -> Flow {
    if response.message.content.is_empty() {
        Flow::Jump(Jump::Model)
    } else {
        Flow::Jump(hookchain::Jump::End)
    }
}

fn main() {}
