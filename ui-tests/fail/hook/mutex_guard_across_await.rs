//! A `std::sync::MutexGuard` held across the `.await` of a wrap hook, so the hook's future is not
//! `Send`. rustc names the guard and the `.await` (the fix: end the guard's scope before
//! awaiting, or an async mutex), in its words: `Send`'s message is std's. The trait method
//! returns the hook's future through an identity `fn` returning `impl Future`, so the help line
//! names it "within `impl Future<Output = ..>`", not by the type of hookchain's that converts
//! its output (nothing is added to the future). A check of our own on the user's future was
//! tried: two errors, and the note on the guard lost. See the table in `hookchain-macros`' docs.

use std::sync::Mutex;

use hookchain::hook;
use hookchain::prelude::*;

static CALLS: Mutex<u32> = Mutex::new(0);

#[hook(wrap_model_call)]
async fn count(
    cx: &mut Context,
    request: ModelRequest,
    mut next: impl ModelNext,
) -> Result<ModelResponse, Error> {
    let mut calls = CALLS.lock().unwrap();
    *calls += 1;
    next.call(cx, request).await
}

fn main() {}
