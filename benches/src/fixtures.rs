//! The fake model every variant calls, and the driver of a hookchain model call.

use std::future::{Future, Ready, ready};

use hookchain::__private::Internal;
use hookchain::middleware::ModelWrap;
use hookchain::prelude::*;
use hookchain::{StopReason, Usage};

/// The fake model's answer: an empty assistant message. Allocates nothing.
#[inline]
pub fn response() -> ModelResponse {
    ModelResponse::new(Message::assistant(String::new()), StopReason::EndTurn)
        .with_usage(Usage::new(1, 1))
}

/// The fake model call itself: consumes the request, answers at once.
#[inline]
pub fn answer(request: ModelRequest) -> Ready<Result<ModelResponse, Error>> {
    drop(request);
    ready(Ok(response()))
}

/// The innermost `next` of a hookchain onion: the fake model.
#[derive(Debug, Clone, Copy, Default)]
pub struct Answer;

impl ModelNext for Answer {
    #[inline]
    fn call(
        &mut self,
        _cx: &mut Context,
        request: ModelRequest,
    ) -> impl Future<Output = Result<ModelResponse, Error>> + Send {
        answer(request)
    }
}

/// An empty request, as the agent makes one: its history and tool specs shared (reference
/// counts bumped, nothing allocated), everything else empty.
pub fn empty_request() -> ModelRequest {
    thread_local! {
        static EMPTY: ModelRequest = ModelRequest::default();
    }
    EMPTY.with(Clone::clone)
}

/// One model call through `chain`, made as the agent loop makes it (`core/src/agent/run_loop.rs`,
/// `drive`, `before_model`, `after_model`): `before_model` of the chain, skipped when no member
/// has it; the wrap onion built with `ModelWrap::layer` around the model; `after_model`, skipped
/// likewise. Errors are attributed to the chain as the loop does.
pub async fn model_call<C: Middleware>(
    chain: &C,
    cx: &mut Context,
    state: &mut C::State,
) -> Result<ModelResponse, Error> {
    // The benchmarked chains keep no thread-scoped state: `()`s, a local the optimizer drops
    // (passed in from outside, the same `()`s cost the chain's sync hooks their inlining).
    let mut thread = C::ThreadState::default();
    model_call_body!(chain, cx, state, &mut thread)
}

/// [`model_call`] with the chain's thread-scoped state kept by the caller, as a run keeps it
/// across its steps (a `Plugins` member's holds a state per plugin, created at its first hook).
pub async fn model_call_in<C: Middleware>(
    chain: &C,
    cx: &mut Context,
    state: &mut C::State,
    thread: &mut C::ThreadState,
) -> Result<ModelResponse, Error> {
    model_call_body!(chain, cx, state, thread)
}

/// The body of both: one macro rather than one `async fn` awaiting the other, which would add
/// a future of its own to every measured call.
macro_rules! model_call_body {
    ($chain:expr, $cx:expr, $state:expr, $thread:expr) => {{
        let (chain, cx, state, thread) = ($chain, $cx, $state, $thread);
        let mut request = empty_request();
        if C::HOOKS.contains(Hook::BeforeModel) {
            let flow = if C::SYNC_HOOKS.contains(Hook::BeforeModel) {
                chain.before_model_sync(cx, state, thread, &mut request, Internal::new())
            } else {
                chain.before_model(cx, state, thread, &mut request).await
            }
            .map_err(|error| error.attribute(C::NAME, Hook::BeforeModel))?;
            match flow {
                Flow::Continue => {}
                Flow::Respond(response) => return Ok(*response),
                flow => unexpected(flow),
            }
        }
        let mut response = {
            let mut onion = <C::WrapsModel as ModelWrap<C>>::layer(chain, state, thread, Answer);
            onion.call(cx, request).await?
        };
        if C::HOOKS.contains(Hook::AfterModel) {
            let flow = if C::SYNC_HOOKS.contains(Hook::AfterModel) {
                chain.after_model_sync(cx, state, thread, &mut response, Internal::new())
            } else {
                chain.after_model(cx, state, thread, &mut response).await
            }
            .map_err(|error| error.attribute(C::NAME, Hook::AfterModel))?;
            match flow {
                Flow::Continue => {}
                Flow::Respond(replacement) => response = *replacement,
                flow => unexpected(flow),
            }
        }
        Ok(response)
    }};
}
use model_call_body;

#[cold]
#[inline(never)]
fn unexpected(flow: Flow) -> ! {
    panic!("no benchmarked hook jumps, got {flow:?}")
}
