// A return type of the user's own is checked by the compiler, and still reported once per hook,
// at the user's `-> T`, in words (`async fn` or plain `fn`).
use hookchain::hook;
use hookchain::prelude::*;

struct Verdict;

#[hook(before_model)]
async fn judge(request: &mut ModelRequest) -> Verdict {
    let _ = request;
    Verdict
}

#[hook(after_agent)]
fn report() -> Verdict {
    Verdict
}

fn main() {}
