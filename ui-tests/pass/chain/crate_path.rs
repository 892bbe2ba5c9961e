//! `chain![crate = path; ..]` names the hookchain crate by the given path.

use hookchain::prelude::*;
use hookchain::{chain, hook};

#[hook(before_model, crate = hookchain)]
async fn stamp(request: &mut ModelRequest) {
    request.system_prompt = Some("stamped".into());
}

fn main() {
    let _one = chain![crate = hookchain; stamp];
    let _two = chain![crate = ::hookchain; stamp, stamp,];
    let _none = chain![crate = hookchain;];
}
