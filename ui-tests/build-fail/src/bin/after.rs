// expect: middleware `Audit` must be listed after `Redact` (it declares `after = Redact`)
use hookchain::prelude::*;
use hookchain::{chain, middleware};

struct Redact;

#[middleware]
impl Redact {
    #[hook(before_model)]
    fn redact(&self, request: &mut ModelRequest) {
        let _ = request;
    }
}

struct Audit;

#[middleware(after = Redact)]
impl Audit {
    #[hook(before_model)]
    fn audit(&self) {}
}

fn main() {
    let _chain = chain![Audit, Redact];
}
