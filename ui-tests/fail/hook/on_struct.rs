use hookchain::hook;

#[hook(before_model)]
struct Stamp;

fn main() {}
