//! A hand-written impl naming the enum `Phase` as its phase: the phase is a type,
//! `phase::Input`, `phase::Wrap` or `phase::Output`.

use hookchain::middleware::{False, Phase};
use hookchain::prelude::*;

struct Audit;

impl Middleware for Audit {
    type State = ();
    type ThreadState = ();
    type StreamState = ();
    type Phase = Phase;
    type WrapsModel = False;
    type WrapsTool = False;
    const NAME: &'static str = "Audit";
}

fn main() {}
