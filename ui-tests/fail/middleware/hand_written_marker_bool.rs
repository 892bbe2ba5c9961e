//! A hand-written impl saying `bool` for `WrapsModel`: the marker is a type, `True` or `False`.

use hookchain::middleware::{False, phase};
use hookchain::prelude::*;

struct Audit;

impl Middleware for Audit {
    type State = ();
    type ThreadState = ();
    type StreamState = ();
    type Phase = phase::Wrap;
    type WrapsModel = bool;
    type WrapsTool = False;
    const NAME: &'static str = "Audit";
}

fn main() {}
