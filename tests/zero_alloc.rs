//! The chain makes no heap allocation per call (one of the promises in the README).
//!
//! Allocations are counted per thread by `allocation-counter` (a counting global allocator behind
//! a safe API; the workspace forbids `unsafe`). Every future here runs on the test's own thread,
//! polled by a minimal executor with a no-op waker, so the counts hold only what the measured
//! code allocates.
//!
//! The chain under test has 10 members, each bumping its `u64` state in `before_model`, passing
//! through `wrap_model_call` and `wrap_tool_call`, and reading the response in `after_model`. It
//! is compared with the empty chain `()`, so the allocations of the model, the tools and the
//! agent loop cancel out.

use std::cell::Cell;
use std::convert::Infallible;
use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::task::{Context as TaskContext, Poll, Waker};

use hookchain::middleware::{Emit, False, HookSet, ModelWrap, ToolWrap, True, phase};
use hookchain::prelude::*;
use hookchain::{CallFrame, FnTool, Role, StopReason, Usage};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

/// Model calls (or tool calls, or runs) per measurement.
const CALLS: u64 = 1000;
/// Calls before measuring, so one-time set-up (thread-locals, tracing call sites) is not counted.
const WARM_UP: u64 = 10;

thread_local! {
    /// `wrap_model_call` hooks run on this thread (a `const` thread-local never allocates).
    static MODEL_WRAPS: Cell<u64> = const { Cell::new(0) };
    /// `wrap_tool_call` hooks run on this thread.
    static TOOL_WRAPS: Cell<u64> = const { Cell::new(0) };
}

fn bump(counter: &'static std::thread::LocalKey<Cell<u64>>) {
    counter.with(|count| count.set(count.get() + 1));
}

fn read(counter: &'static std::thread::LocalKey<Cell<u64>>) -> u64 {
    counter.with(Cell::get)
}

/// Runs `future` to completion on this thread; allocates nothing.
fn run<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = TaskContext::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
        std::thread::yield_now();
    }
}

/// Allocations made on this thread by `f`.
fn allocations(f: impl FnOnce()) -> u64 {
    allocation_counter::measure(f).count_total
}

/// One member of the measured chain.
#[derive(Debug, Clone, Copy)]
struct Bump;

impl Middleware for Bump {
    type State = u64;
    type ThreadState = ();
    type StreamState = ();
    type Phase = phase::Wrap;
    type WrapsModel = True;
    type WrapsTool = True;
    const NAME: &'static str = "Bump";
    const HOOKS: HookSet = HookSet::of(Hook::BeforeModel)
        .with(Hook::WrapModelCall)
        .with(Hook::AfterModel)
        .with(Hook::WrapToolCall);

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
        bump(&MODEL_WRAPS);
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

    async fn wrap_tool_call<N: ToolNext>(
        &self,
        cx: ToolContext<'_>,
        _count: &u64,
        _thread: &(),
        call: ToolCall,
        mut next: N,
    ) -> Result<ToolResult, Error> {
        bump(&TOOL_WRAPS);
        Ok(next.call(cx, call).await)
    }
}

type Ten = (Bump, Bump, Bump, Bump, Bump, Bump, Bump, Bump, Bump, Bump);
const TEN: Ten = (Bump, Bump, Bump, Bump, Bump, Bump, Bump, Bump, Bump, Bump);

/// A member whose wrap boxes the inner future, as a `Box<dyn>` chain would: one allocation per
/// model call. It shows that the measurement sees what a chain allocates.
#[derive(Debug, Clone, Copy)]
struct Boxing;

impl Middleware for Boxing {
    type State = ();
    type ThreadState = ();
    type StreamState = ();
    type Phase = phase::Wrap;
    type WrapsModel = True;
    type WrapsTool = False;
    const NAME: &'static str = "Boxing";
    const HOOKS: HookSet = HookSet::of(Hook::WrapModelCall);

    async fn wrap_model_call<N: ModelNext>(
        &self,
        cx: &mut Context,
        _state: &mut (),
        _thread: &mut (),
        request: ModelRequest,
        mut next: N,
    ) -> Result<ModelResponse, Error> {
        Box::pin(next.call(cx, request)).await
    }
}

/// The same ten members in nested groups, as `chain!` builds long chains.
type NestedTen = (
    (Bump, Bump, Bump),
    (Bump, (Bump, Bump), Bump),
    (Bump, Bump, Bump),
);
const NESTED_TEN: NestedTen = (
    (Bump, Bump, Bump),
    (Bump, (Bump, Bump), Bump),
    (Bump, Bump, Bump),
);

/// The innermost `next` of the model onion: answers without allocating.
struct Answer;

impl ModelNext for Answer {
    fn call(
        &mut self,
        _cx: &mut Context,
        request: ModelRequest,
    ) -> impl Future<Output = Result<ModelResponse, Error>> + Send {
        drop(request);
        std::future::ready(Ok(ModelResponse::new(
            Message::assistant(String::new()),
            StopReason::EndTurn,
        )
        .with_usage(Usage::new(1, 1))))
    }
}

/// The innermost `next` of the tool onion: answers without allocating.
struct ToolAnswer;

impl ToolNext for ToolAnswer {
    fn call(
        &mut self,
        _cx: ToolContext<'_>,
        call: ToolCall,
    ) -> impl Future<Output = ToolResult> + Send {
        std::future::ready(ToolResult::ok(call.id, String::new()))
    }
}

/// An empty request, as the agent makes one: its history and tools shared (reference counts
/// bumped, nothing allocated), everything else empty.
fn empty_request() -> ModelRequest {
    thread_local! {
        static EMPTY: ModelRequest = ModelRequest::default();
    }
    EMPTY.with(Clone::clone)
}

/// One model call through the chain's public hooks, as the agent loop makes it: `before_model`,
/// the onion built with `ModelWrap::layer`, `after_model`.
async fn model_call<C: Middleware>(
    chain: &C,
    cx: &mut Context,
    state: &mut C::State,
) -> ModelResponse {
    let mut request = empty_request();
    // The thread state of these chains is `()`s: nothing to keep across calls.
    let mut thread = C::ThreadState::default();
    let flow = chain
        .before_model(cx, state, &mut thread, &mut request)
        .await
        .expect("before_model");
    assert!(flow.is_continue());
    let mut response = {
        let mut onion = <C::WrapsModel as ModelWrap<C>>::layer(chain, state, &mut thread, Answer);
        onion.call(cx, request).await.expect("wrap_model_call")
    };
    let flow = chain
        .after_model(cx, state, &mut thread, &mut response)
        .await
        .expect("after_model");
    assert!(flow.is_continue());
    response
}

/// One model call through the chain's own `wrap_model_call` (which builds the onion itself).
async fn model_call_via_chain_hook<C: Middleware>(
    chain: &C,
    cx: &mut Context,
    state: &mut C::State,
) -> ModelResponse {
    let mut thread = C::ThreadState::default();
    chain
        .wrap_model_call(cx, state, &mut thread, empty_request(), Answer)
        .await
        .expect("wrap_model_call")
}

/// One tool call through the onion built with `ToolWrap::layer`.
async fn tool_call<C: Middleware>(chain: &C, cx: &Context, state: &C::State) -> ToolResult {
    // Empty strings and `Null` arguments: no allocation.
    let call = ToolCall::new(String::new(), String::new(), serde_json::Value::Null);
    let frame = CallFrame::new(String::new(), String::new());
    let thread = C::ThreadState::default();
    let mut onion = <C::WrapsTool as ToolWrap<C>>::layer(chain, state, &thread, 0, ToolAnswer);
    onion.call(ToolContext::new(cx, &frame), call).await
}

/// Allocations of `CALLS` model calls through `chain`, after a warm-up; and the final state.
fn measure_model_calls<C: Middleware>(chain: &C) -> (u64, C::State) {
    let mut cx = Context::new(Vec::new());
    let mut state = C::State::default();
    for _ in 0..WARM_UP {
        black_box(run(model_call(chain, &mut cx, &mut state)));
    }
    let allocs = allocations(|| {
        for _ in 0..CALLS {
            black_box(run(model_call(chain, &mut cx, &mut state)));
        }
    });
    (allocs, state)
}

#[test]
fn ten_member_chain_model_call_allocates_nothing() {
    let wraps_before = read(&MODEL_WRAPS);
    let (ten, state) = measure_model_calls(&TEN);
    let wraps = read(&MODEL_WRAPS) - wraps_before;
    let (empty, ()) = measure_model_calls(&());
    println!(
        "model call, hooks called directly: 10 members {ten} allocs / {CALLS} calls, empty chain {empty}"
    );

    // Every hook of every member ran on every call.
    let n = WARM_UP + CALLS;
    assert_eq!(state, (n, n, n, n, n, n, n, n, n, n));
    assert_eq!(wraps, 10 * n);

    assert_eq!(empty, 0, "the empty chain allocated");
    assert_eq!(
        ten, 0,
        "10 members allocated {ten} times in {CALLS} model calls"
    );
}

#[test]
fn the_measurement_sees_allocations_in_the_chain() {
    assert_eq!(allocations(|| drop(black_box(Box::new(1_u64)))), 1);
    let boxing = (
        Boxing, Boxing, Boxing, Boxing, Boxing, Boxing, Boxing, Boxing, Boxing, Boxing,
    );
    let (allocs, _) = measure_model_calls(&boxing);
    println!("model call, 10 members that box the inner future: {allocs} allocs / {CALLS} calls");
    assert_eq!(allocs, 10 * CALLS);
}

#[test]
fn nested_ten_member_chain_model_call_allocates_nothing() {
    let wraps_before = read(&MODEL_WRAPS);
    let (ten, state) = measure_model_calls(&NESTED_TEN);
    let wraps = read(&MODEL_WRAPS) - wraps_before;
    let n = WARM_UP + CALLS;
    assert_eq!(state, ((n, n, n), (n, (n, n), n), (n, n, n)));
    assert_eq!(wraps, 10 * n);
    assert_eq!(
        ten, 0,
        "10 nested members allocated {ten} times in {CALLS} model calls"
    );
}

#[test]
fn chain_wrap_model_call_hook_allocates_nothing() {
    fn measure<C: Middleware>(chain: &C) -> u64 {
        let mut cx = Context::new(Vec::new());
        let mut state = C::State::default();
        for _ in 0..WARM_UP {
            black_box(run(model_call_via_chain_hook(chain, &mut cx, &mut state)));
        }
        allocations(|| {
            for _ in 0..CALLS {
                black_box(run(model_call_via_chain_hook(chain, &mut cx, &mut state)));
            }
        })
    }
    let wraps_before = read(&MODEL_WRAPS);
    let ten = measure(&TEN);
    assert_eq!(read(&MODEL_WRAPS) - wraps_before, 10 * (WARM_UP + CALLS));
    let empty = measure(&());
    assert_eq!(empty, 0);
    assert_eq!(ten, 0, "10 members allocated {ten} times in {CALLS} wraps");
}

#[test]
fn ten_member_chain_tool_call_allocates_nothing() {
    fn measure<C: Middleware>(chain: &C) -> u64 {
        let cx = Context::new(Vec::new());
        let state = C::State::default();
        for _ in 0..WARM_UP {
            black_box(run(tool_call(chain, &cx, &state)));
        }
        allocations(|| {
            for _ in 0..CALLS {
                black_box(run(tool_call(chain, &cx, &state)));
            }
        })
    }
    let wraps_before = read(&TOOL_WRAPS);
    let ten = measure(&TEN);
    let wraps = read(&TOOL_WRAPS) - wraps_before;
    let nested = measure(&NESTED_TEN);
    let empty = measure(&());
    println!(
        "tool call, onion called directly: 10 members {ten} allocs / {CALLS} calls, nested {nested}, empty chain {empty}"
    );

    assert_eq!(wraps, 10 * (WARM_UP + CALLS));
    assert_eq!(empty, 0, "the empty chain allocated");
    assert_eq!(
        ten, 0,
        "10 members allocated {ten} times in {CALLS} tool calls"
    );
    assert_eq!(
        nested, 0,
        "10 nested members allocated {nested} times in {CALLS} tool calls"
    );
}

/// Ten named instances ([`Middleware::named`]): no allocation per model call or tool call
/// either, and a run allocates as the empty chain's.
#[test]
fn named_members_allocate_nothing_per_call() {
    fn named() -> impl Middleware<State = (u64, u64, u64, u64, u64, u64, u64, u64, u64, u64)> {
        (
            Bump.named("b0"),
            Bump.named("b1"),
            Bump.named("b2"),
            Bump.named("b3"),
            Bump.named("b4"),
            Bump.named("b5"),
            Bump.named("b6"),
            Bump.named("b7"),
            Bump.named("b8"),
            Bump.named("b9"),
        )
    }
    let chain = named();
    let (model, state) = measure_model_calls(&chain);
    let n = WARM_UP + CALLS;
    assert_eq!(state, (n, n, n, n, n, n, n, n, n, n));
    assert_eq!(
        model, 0,
        "10 named members allocated {model} times in {CALLS} model calls"
    );

    let cx = Context::new(Vec::new());
    let state = Default::default();
    for _ in 0..WARM_UP {
        black_box(run(tool_call(&chain, &cx, &state)));
    }
    let tools = allocations(|| {
        for _ in 0..CALLS {
            black_box(run(tool_call(&chain, &cx, &state)));
        }
    });
    assert_eq!(
        tools, 0,
        "10 named members allocated {tools} times in {CALLS} tool calls"
    );

    let (runs, ..) = measure_runs(named(), true);
    let (empty, ..) = measure_runs((), true);
    assert_eq!(
        runs, empty,
        "10 named members: {runs} allocs in {CALLS} runs, empty chain: {empty}"
    );
}

/// Arguments of the `ping` tool.
#[derive(Debug, Deserialize, JsonSchema)]
struct Ping {}

/// Allocations of `CALLS` whole runs of an agent with `chain`, after a warm-up; with the number
/// of model calls and tool calls of one run.
fn measure_runs<C: Middleware>(chain: C, calls_a_tool: bool) -> (u64, usize, usize) {
    let model = ScriptedModel::from_rule(move |request| {
        let last = request.messages.last().expect("a message");
        Ok(if calls_a_tool && last.role == Role::User {
            ModelResponse::tool_calls([ToolCall::new("call_1", "ping", json!({}))])
        } else {
            ModelResponse::text("done")
        })
    })
    .without_recording();
    let ping = FnTool::new("ping", "Answers pong.", |_: Ping| async {
        Ok::<_, Infallible>("pong")
    });
    let agent = Agent::builder(model)
        .tool(ping)
        .chain(chain)
        .build()
        .unwrap();

    let once = || {
        let output = run(agent.run("hi")).expect("the run succeeds");
        assert_eq!(output.text().as_deref(), Some("done"));
        black_box(output)
    };
    let first = once();
    for _ in 1..WARM_UP {
        once();
    }
    let allocs = allocations(|| {
        for _ in 0..CALLS {
            once();
        }
    });
    (allocs, first.model_calls, first.tool_calls)
}

#[test]
fn agent_run_with_ten_members_allocates_as_the_empty_chain() {
    let wraps_before = read(&MODEL_WRAPS);
    let (ten, model_calls, _) = measure_runs(TEN, false);
    let wraps = read(&MODEL_WRAPS) - wraps_before;
    let (empty, ..) = measure_runs((), false);
    println!(
        "Agent::run, 1 model call: 10 members {ten} allocs / {CALLS} runs ({} per run), empty chain {empty} ({} per run)",
        ten / CALLS,
        empty / CALLS
    );

    assert_eq!(model_calls, 1);
    assert_eq!(wraps, 10 * (WARM_UP + CALLS));
    assert_eq!(
        ten, empty,
        "10 members: {ten} allocs in {CALLS} runs, empty chain: {empty}"
    );
}

#[test]
fn agent_run_with_a_tool_call_and_ten_members_allocates_as_the_empty_chain() {
    let model_wraps_before = read(&MODEL_WRAPS);
    let tool_wraps_before = read(&TOOL_WRAPS);
    let (ten, model_calls, tool_calls) = measure_runs(TEN, true);
    let model_wraps = read(&MODEL_WRAPS) - model_wraps_before;
    let tool_wraps = read(&TOOL_WRAPS) - tool_wraps_before;
    let (empty, ..) = measure_runs((), true);
    println!(
        "Agent::run, 2 model calls + 1 tool call: 10 members {ten} allocs / {CALLS} runs ({} per run), empty chain {empty} ({} per run)",
        ten / CALLS,
        empty / CALLS
    );

    assert_eq!((model_calls, tool_calls), (2, 1));
    assert_eq!(model_wraps, 2 * 10 * (WARM_UP + CALLS));
    assert_eq!(tool_wraps, 10 * (WARM_UP + CALLS));
    assert_eq!(
        ten, empty,
        "10 members: {ten} allocs in {CALLS} runs, empty chain: {empty}"
    );
}

/// With a subscriber recording everything (a bare `tracing_subscriber` registry: every span,
/// every `TRACE` hook event), the members still allocate nothing: the 10-member chain's runs
/// allocate as the empty chain's, which make the same spans. One-time allocations (the
/// registry growing its span slab, a call site registering itself first on this thread while
/// other tests run) may land in either measurement: a few in all, where one per run would be
/// `CALLS`.
#[test]
fn agent_run_with_ten_members_allocates_as_the_empty_chain_with_a_subscriber() {
    let subscriber = tracing_subscriber::registry();
    let ((ten, model_calls, tool_calls), (empty, ..)) =
        tracing::subscriber::with_default(subscriber, || {
            measure_runs(TEN, true);
            measure_runs((), true);
            (measure_runs(TEN, true), measure_runs((), true))
        });
    println!(
        "Agent::run with a subscriber, 2 model calls + 1 tool call: 10 members {ten} allocs / {CALLS} runs ({} per run), empty chain {empty} ({} per run)",
        ten / CALLS,
        empty / CALLS
    );
    assert_eq!((model_calls, tool_calls), (2, 1));
    assert!(
        ten.abs_diff(empty) < 10,
        "10 members: {ten} allocs in {CALLS} runs, empty chain: {empty}"
    );
}

/// The macro-generated twin of [`Bump`]: the same hooks, written with `#[middleware]`.
#[derive(Debug, Clone, Copy)]
struct MacroBump;

#[hookchain::middleware(state = u64)]
impl MacroBump {
    #[hook(before_model)]
    fn count(&self, count: &mut u64) {
        *count += 1;
    }

    #[hook(wrap_model_call)]
    async fn pass_model(
        &self,
        cx: &mut Context,
        request: ModelRequest,
        mut next: impl ModelNext,
    ) -> Result<ModelResponse, Error> {
        bump(&MODEL_WRAPS);
        next.call(cx, request).await
    }

    #[hook(after_model)]
    async fn read(&self, response: &mut ModelResponse) {
        black_box(response.message.text().len());
    }

    #[hook(wrap_tool_call)]
    async fn pass_tool(
        &self,
        cx: ToolContext<'_>,
        call: ToolCall,
        mut next: impl ToolNext,
    ) -> Result<ToolResult, Error> {
        bump(&TOOL_WRAPS);
        Ok(next.call(cx, call).await)
    }
}

#[test]
fn macro_generated_ten_member_chain_allocates_nothing() {
    let chain = hookchain::chain![
        MacroBump, MacroBump, MacroBump, MacroBump, MacroBump, MacroBump, MacroBump, MacroBump,
        MacroBump, MacroBump,
    ];
    let wraps_before = read(&MODEL_WRAPS);
    let (allocs, state) = measure_model_calls(&chain);
    let wraps = read(&MODEL_WRAPS) - wraps_before;
    println!("model call, 10 macro-generated members: {allocs} allocs / {CALLS} calls");

    let n = WARM_UP + CALLS;
    assert_eq!(state, (n, n, n, n, n, n, n, n, n, n));
    assert_eq!(wraps, 10 * n);
    assert_eq!(
        allocs, 0,
        "10 macro-generated members allocated {allocs} times"
    );

    let cx = Context::new(Vec::new());
    let state = Default::default();
    let tool_wraps_before = read(&TOOL_WRAPS);
    let allocs = allocations(|| {
        for _ in 0..CALLS {
            black_box(run(tool_call(&chain, &cx, &state)));
        }
    });
    assert_eq!(read(&TOOL_WRAPS) - tool_wraps_before, 10 * CALLS);
    assert_eq!(
        allocs, 0,
        "10 macro-generated members allocated {allocs} times per tool call"
    );

    let (runs, ..) = measure_runs(chain, true);
    let (empty, ..) = measure_runs((), true);
    assert_eq!(
        runs, empty,
        "Agent::run with 10 macro-generated members vs the empty chain"
    );
}

/// The built-in resilience middleware on the model path, in their recommended order, set so
/// that none trips: a model call through them allocates nothing (issue 14's budget).
#[cfg(feature = "tokio")]
mod resilience {
    use std::time::Duration;

    use hookchain::builtin::{CircuitBreaker, ModelFallback, ModelRetry, RateLimit, Timeout};

    use super::*;

    fn chain() -> impl Middleware {
        hookchain::chain![
            ModelFallback::builder().model("backup").build().unwrap(),
            ModelRetry::new(),
            CircuitBreaker::builder().build().unwrap(),
            // Never full in these measurements: no call waits.
            RateLimit::builder()
                .requests(100_000)
                .interval(Duration::from_secs(1))
                .build()
                .unwrap(),
            Timeout::builder()
                .model_call(Duration::from_secs(60))
                .build()
                .unwrap(),
        ]
    }

    #[test]
    fn the_resilience_built_ins_allocate_nothing_per_model_call_when_none_trips() {
        // The timeout's timer and the retry's need a runtime with a clock; the calls still
        // run on this thread, under the counting executor.
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let _runtime = runtime.enter();

        let chain = chain();
        let (allocs, _) = measure_model_calls(&chain);
        println!("model call, 5 resilience built-ins: {allocs} allocs / {CALLS} calls");
        assert_eq!(
            allocs, 0,
            "the resilience built-ins allocated {allocs} times in {CALLS} model calls"
        );

        let (runs, model_calls, _) = measure_runs(chain, false);
        let (empty, ..) = measure_runs((), false);
        println!(
            "Agent::run with the 5 resilience built-ins: {runs} allocs / {CALLS} runs, empty chain {empty}"
        );
        assert_eq!(model_calls, 1);
        assert_eq!(
            runs, empty,
            "Agent::run with the resilience built-ins vs the empty chain"
        );
    }
}

/// The built-in limits on the model path, set so that none trips: model calls, tokens and tool
/// calls limited, loops detected, calls repaired (and, on the tool path, a cache of a tool
/// that is not called here). The cache needs tokio's clock: the feature `tokio`.
#[cfg(feature = "tokio")]
fn limit_builtins() -> (
    hookchain::builtin::ModelCallLimit,
    hookchain::builtin::TokenBudget,
    hookchain::builtin::ToolCallLimit,
    hookchain::builtin::LoopDetection,
    hookchain::builtin::ToolCallRepair,
    hookchain::builtin::ToolResultCache,
) {
    use hookchain::builtin::token_budget::Budget;
    use hookchain::builtin::{
        LoopDetection, ModelCallLimit, TokenBudget, ToolCallLimit, ToolCallRepair, ToolResultCache,
    };
    (
        ModelCallLimit::builder()
            .run_limit(u32::MAX)
            .thread_limit(u32::MAX)
            .build()
            .unwrap(),
        TokenBudget::builder()
            .run(Budget::new().total_tokens(u64::MAX))
            .thread(Budget::new().output_tokens(u64::MAX))
            .build()
            .unwrap(),
        ToolCallLimit::builder()
            .run_limit(u32::MAX)
            .thread_limit(u32::MAX)
            .build()
            .unwrap(),
        LoopDetection::default(),
        ToolCallRepair::new(),
        ToolResultCache::builder()
            .tool("search", std::time::Duration::from_secs(60))
            .build()
            .unwrap(),
    )
}

#[cfg(feature = "tokio")]
#[test]
fn limit_builtins_allocate_nothing_per_model_call_when_they_do_not_trip() {
    use hookchain::builtin::model_call_limit::RunModelCalls;

    let chain = limit_builtins();
    let (allocs, state) = measure_model_calls(&chain);
    println!("model call, the limit built-ins: {allocs} allocs / {CALLS} calls");
    // ModelCallLimit counted every call: its hook ran.
    let n = u32::try_from(WARM_UP + CALLS).unwrap();
    assert_eq!(state.0, RunModelCalls(n));
    assert_eq!(allocs, 0, "the limit built-ins allocated {allocs} times");

    // A tool call through LoopDetection's and the cache's wraps (a tool the cache skips).
    let cx = Context::new(Vec::new());
    let state = Default::default();
    let allocs = allocations(|| {
        for _ in 0..CALLS {
            black_box(run(tool_call(&chain, &cx, &state)));
        }
    });
    assert_eq!(
        allocs, 0,
        "the limit built-ins allocated {allocs} times per tool call"
    );

    // Whole runs (one model call, no tool call): as the empty chain.
    let (runs, ..) = measure_runs(limit_builtins(), false);
    let (empty, ..) = measure_runs((), false);
    assert_eq!(
        runs, empty,
        "Agent::run with the limit built-ins vs the empty chain"
    );
}

/// A member with a per-event hook: it counts the text it lets through in its stream state,
/// and edits nothing.
#[derive(Debug, Clone, Copy)]
struct Tally;

impl Middleware for Tally {
    type State = ();
    type ThreadState = ();
    type StreamState = usize;
    type Phase = phase::Wrap;
    type WrapsModel = False;
    type WrapsTool = False;
    const NAME: &'static str = "Tally";
    const HOOKS: HookSet = HookSet::of(Hook::OnModelEvent);

    fn on_model_event<E: Emit>(
        &self,
        seen: &mut usize,
        event: hookchain::model::ModelEvent,
        out: &mut E,
    ) -> Result<(), Error> {
        if let hookchain::model::ModelEvent::TextDelta { text, .. } = &event {
            *seen += text.len();
        }
        out.emit(event)
    }
}

/// The end of the per-event pipeline in the measurement: counts what arrives, keeps nothing.
struct Arrived(usize);

impl Emit for Arrived {
    fn emit(&mut self, event: hookchain::model::ModelEvent) -> Result<(), Error> {
        drop(black_box(event));
        self.0 += 1;
        Ok(())
    }
}

#[test]
fn ten_per_event_hooks_allocate_nothing_per_event() {
    fn measure<C: Middleware>(chain: &C) -> (u64, usize, C::StreamState) {
        // The events are made (and their text allocated) before the measurement: a model's
        // event carries owned text; the chain adds nothing to it.
        let events: Vec<hookchain::model::ModelEvent> = (0..CALLS)
            .map(|_| hookchain::model::ModelEvent::TextDelta {
                index: 0,
                text: "token".to_owned(),
            })
            .collect();
        let mut state = C::StreamState::default();
        let mut arrived = Arrived(0);
        let allocs = allocations(|| {
            for event in events {
                chain
                    .on_model_event(&mut state, event, &mut arrived)
                    .unwrap();
            }
        });
        (allocs, arrived.0, state)
    }
    let ten = hookchain::chain![
        Tally, Tally, Tally, Tally, Tally, Tally, Tally, Tally, Tally, Tally
    ];
    let (allocs, arrived, state) = measure(&ten);
    println!("per-event hooks: 10 members {allocs} allocs / {CALLS} events");
    let bytes = 5 * CALLS as usize;
    assert_eq!(arrived, CALLS as usize);
    assert_eq!(
        state,
        (
            bytes, bytes, bytes, bytes, bytes, bytes, bytes, bytes, bytes, bytes
        )
    );
    assert_eq!(
        allocs, 0,
        "10 per-event hooks allocated {allocs} times in {CALLS} events"
    );
    let (empty, arrived, ()) = measure(&());
    assert_eq!((empty, arrived), (0, CALLS as usize));
}
