//! The built-in middleware that apply to a model call, in their recommended order, set so that
//! none trips: what they cost an agent turn when all goes well (issue 14's budget: no heap
//! allocation per model call, at most 1 µs per turn over the empty chain).

use std::time::Duration;

use hookchain::Middleware;
use hookchain::builtin::token_budget::Budget;
use hookchain::builtin::{
    CircuitBreaker, ModelCallLimit, ModelFallback, ModelRetry, RateLimit, Timeout, TokenBudget,
};

/// Limits, budget, fallback, retry, breaker, rate limit and timeout around the model call.
///
/// The timeout's and the retry's timers need a tokio runtime with time enabled to be entered
/// (see [`timer_runtime`]); the calls themselves still run on the benchmark's executor.
pub fn model_path_chain() -> impl Middleware {
    hookchain::chain![
        ModelCallLimit::builder()
            .run_limit(1_000)
            .build()
            .expect("valid"),
        TokenBudget::builder()
            .run(Budget::new().total_tokens(1_000_000))
            .build()
            .expect("valid"),
        ModelFallback::builder()
            .model("backup")
            .build()
            .expect("valid"),
        ModelRetry::new(),
        CircuitBreaker::builder().build().expect("valid"),
        // Never full here: no call waits.
        RateLimit::builder()
            .requests(1 << 20)
            .interval(Duration::from_secs(1))
            .build()
            .expect("valid"),
        Timeout::builder()
            .model_call(Duration::from_secs(60))
            .build()
            .expect("valid"),
    ]
}

/// A current-thread tokio runtime with its timer, to be entered (`runtime.enter()`) around
/// runs through [`model_path_chain`].
pub fn timer_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a runtime")
}
