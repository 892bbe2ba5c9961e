use std::rc::Rc;

use hookchain::prelude::*;
use hookchain::hook;

async fn tick() {}

#[hook(before_model)]
async fn stamp(request: &mut ModelRequest) {
    let shared = Rc::new(1);
    tick().await;
    request.system_prompt = Some(shared.to_string());
}

fn main() {}
