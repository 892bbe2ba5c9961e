use hookchain::prelude::*;

fn main() {
    let _ = Agent::builder("gpt-4o-mini");
}
