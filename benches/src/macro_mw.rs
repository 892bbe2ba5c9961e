//! Variants (a) and (b), and the sequential-hooks chains: middleware written with the macros,
//! composed with `chain!`.

use std::hint::black_box;

use hookchain::middleware::{False, HookSet, True, phase};
use hookchain::prelude::*;
use hookchain::{hook, middleware};

/// (a) A middleware none of whose hooks is on the model-call path: it has only `after_agent`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Absent;

#[middleware]
impl Absent {
    #[hook(after_agent)]
    fn done(&self) {}
}

/// (b) Active on every step of the model call: bumps its per-run counter in `before_model`,
/// passes through `wrap_model_call`, reads the response in `after_model`. Sequential hooks are
/// plain `fn`s (the form the `#[hook]` docs recommend when a hook does not await).
#[derive(Debug, Clone, Copy, Default)]
pub struct Active;

#[middleware(state = u64)]
impl Active {
    #[hook(before_model)]
    fn count(&self, count: &mut u64) {
        *count += 1;
    }

    #[hook(wrap_model_call)]
    async fn pass(
        &self,
        cx: &mut Context,
        request: ModelRequest,
        mut next: impl ModelNext,
    ) -> Result<ModelResponse, Error> {
        next.call(cx, request).await
    }

    #[hook(after_model)]
    fn read(&self, response: &mut ModelResponse) {
        black_box(response.message.text().len());
    }
}

/// (b, async) [`Active`] with its sequential hooks written as `async fn`s, as a user who does
/// not know about plain `fn` hooks would.
#[derive(Debug, Clone, Copy, Default)]
pub struct ActiveAsync;

#[middleware(state = u64)]
impl ActiveAsync {
    #[hook(before_model)]
    async fn count(&self, count: &mut u64) {
        *count += 1;
    }

    #[hook(wrap_model_call)]
    async fn pass(
        &self,
        cx: &mut Context,
        request: ModelRequest,
        mut next: impl ModelNext,
    ) -> Result<ModelResponse, Error> {
        next.call(cx, request).await
    }

    #[hook(after_model)]
    async fn read(&self, response: &mut ModelResponse) {
        black_box(response.message.text().len());
    }
}

/// (b, manual) [`Active`]'s hooks in a hand-written `impl Middleware` (no macro): separates what
/// the macros' generated code costs from what the chain itself costs.
#[derive(Debug, Clone, Copy, Default)]
pub struct Manual;

impl Middleware for Manual {
    type State = u64;
    type ThreadState = ();
    type StreamState = ();
    type Phase = phase::Wrap;
    type WrapsModel = True;
    type WrapsTool = False;
    const NAME: &'static str = "Manual";
    const HOOKS: HookSet = HookSet::of(Hook::BeforeModel)
        .with(Hook::WrapModelCall)
        .with(Hook::AfterModel);

    async fn before_model(
        &self,
        _cx: &mut Context,
        count: &mut u64,
        _thread: &mut (),
        _request: &mut ModelRequest,
    ) -> Result<Flow, Error> {
        *count += 1;
        Ok(Flow::Continue)
    }

    async fn wrap_model_call<N: ModelNext>(
        &self,
        cx: &mut Context,
        _count: &mut u64,
        _thread: &mut (),
        request: ModelRequest,
        mut next: N,
    ) -> Result<ModelResponse, Error> {
        next.call(cx, request).await
    }

    async fn after_model(
        &self,
        _cx: &mut Context,
        _count: &mut u64,
        _thread: &mut (),
        response: &mut ModelResponse,
    ) -> Result<Flow, Error> {
        black_box(response.message.text().len());
        Ok(Flow::Continue)
    }
}

/// [`Active`] plus a pass-through `wrap_tool_call`: every hook of a step has work. The agent
/// turn uses it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Full;

#[middleware(state = u64)]
impl Full {
    #[hook(before_model)]
    fn count(&self, count: &mut u64) {
        *count += 1;
    }

    #[hook(wrap_model_call)]
    async fn pass(
        &self,
        cx: &mut Context,
        request: ModelRequest,
        mut next: impl ModelNext,
    ) -> Result<ModelResponse, Error> {
        next.call(cx, request).await
    }

    #[hook(after_model)]
    fn read(&self, response: &mut ModelResponse) {
        black_box(response.message.text().len());
    }

    #[hook(wrap_tool_call)]
    async fn pass_tool(
        &self,
        cx: ToolContext<'_>,
        call: ToolCall,
        mut next: impl ToolNext,
    ) -> Result<ToolResult, Error> {
        Ok(next.call(cx, call).await)
    }
}

/// Sequential hooks only: bumps a per-run counter in `before_model` (a plain `fn`).
#[hook(before_model, state = u64)]
pub fn bump(count: &mut u64) {
    *count += 1;
}

/// Sequential hooks only, as an `async fn` (the shape the prototype measured).
#[hook(before_model, state = u64)]
pub async fn bump_async(count: &mut u64) {
    *count += 1;
}

/// The chains of the model-call table, one per N in [`crate::NS`], of `$m` repeated.
#[macro_export]
macro_rules! chains_of {
    ($m:expr) => {
        (
            hookchain::chain![],
            hookchain::chain![$m],
            hookchain::chain![$m, $m, $m, $m, $m],
            hookchain::chain![$m, $m, $m, $m, $m, $m, $m, $m, $m, $m],
            hookchain::chain![
                $m, $m, $m, $m, $m, $m, $m, $m, $m, $m, $m, $m, $m, $m, $m, $m, $m, $m, $m, $m, $m,
                $m, $m, $m, $m, $m, $m, $m, $m, $m, $m, $m,
            ],
        )
    };
}

/// Ten `$m` in one chain.
#[macro_export]
macro_rules! ten_of {
    ($m:expr) => {
        hookchain::chain![$m, $m, $m, $m, $m, $m, $m, $m, $m, $m]
    };
}
