//! User-defined `Result`, `Option` and `Box` shadow the prelude in the same file: generated code
//! names only `::hookchain::__private::…`, so all three macros still expand.

#![allow(dead_code)]

use hookchain::prelude::*;
use hookchain::{chain, hook, middleware};

/// Shadows `std::result::Result`.
type Result<T> = core::result::Result<T, Error>;

/// Shadows `std::option::Option`.
enum Option {
    Yes,
    No,
}

/// Shadows `std::boxed::Box`.
struct Box;

/// Shadows `std::marker::Send`, `Sync`, `Default`, `Clone`, `Copy` and `Debug`.
trait Send {}
trait Sync {}
trait Default {}
trait Clone {}
trait Copy {}
trait Debug {}

/// Shadows `std::future::Future`.
struct Future;

#[hook(before_model)]
async fn stamp(request: &mut ModelRequest) -> Result<()> {
    request.system_prompt = core::option::Option::Some("x".into());
    Ok(())
}

#[hook(wrap_model_call)]
async fn around(
    cx: &mut Context,
    request: ModelRequest,
    mut next: impl ModelNext,
) -> Result<ModelResponse> {
    next.call(cx, request).await
}

struct Audit;

#[middleware(state = u32)]
impl Audit {
    #[hook(after_model)]
    fn audit(&self, calls: &mut u32, response: &mut ModelResponse) -> Result<Flow> {
        *calls += 1;
        let _ = response;
        Ok(Flow::Continue)
    }
}

fn main() {
    let _ = (Option::Yes, Option::No, Box, Future);
    let _chain = chain![stamp, around, Audit, core::option::Option::Some(Audit)];
}
