use hookchain::hook;

#[hook(before_model, state = std::time::Instant)]
fn stamp(started: &mut std::time::Instant) {
    let _ = started;
}

fn main() {}
