//! The code the benchmarks measure, shared by the criterion benches (`benches/*.rs`) and the
//! instruction counter (`src/bin/instructions.rs`, run under callgrind).
//!
//! Every variant makes the same model call: a default [`ModelRequest`] in, a ready
//! [`ModelResponse`] out of a fake innermost model ([`fixtures::answer`]), which allocates
//! nothing. What differs is what sits around it:
//!
//! | module                | variant | what it is |
//! |-----------------------|---------|------------|
//! | [`macro_mw`]          | (a) (b) | hookchain chains of `#[middleware]`/`#[hook]` middleware, driven as the agent loop drives them ([`fixtures::model_call`]) |
//! | [`hand`]              | (c)     | the same work written by hand, no framework: the limit |
//! | [`dyn_chain`]         | (d)     | `Vec<Arc<dyn Middleware>>` with boxed futures: the design the peers use |
//! | [`synaptic`]          | (e)     | Synaptic 0.4.0's `MiddlewareChain` |
//! | `rig` (feature `rig`) | (f)     | Rig 0.44.0's agent hooks (`AgentHook`), a run of one model call |
//! | [`agent`]             |         | one `Agent::run` (2 model calls, 1 tool call), and the same turn by hand |
//! | [`streaming`]         |         | one `Agent::stream` of 1000 text deltas, 0 and 10 per-event hooks, and the same by hand |
//! | [`plugins`]           |         | the same middleware as plugins (`hookchain::plugin::Plugins`) beside static members |
//!
//! Futures are polled by [`exec::run`], a minimal poll loop with a no-op waker: every future
//! here completes on its first poll, so what is measured is the call, not a runtime.

// No `recursion_limit` here: the 32 nested hand-written `async fn`s of (c) build without it. The
// bench that builds the 32-member hookchain onion of (b) raises it (benches/model_call.rs).

pub mod agent;
pub mod builtins;
pub mod dyn_chain;
pub mod exec;
pub mod fixtures;
pub mod hand;
pub mod macro_mw;
pub mod plugins;
#[cfg(feature = "rig")]
pub mod rig;
pub mod streaming;
pub mod synaptic;

/// The chain lengths of the model-call table.
pub const NS: [usize; 5] = [0, 1, 5, 10, 32];

/// What a peer's fake model waits for before it answers a call (nothing, or the scale probe's
/// gate).
pub type Wait = std::sync::Arc<
    dyn Fn() -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>> + Send + Sync,
>;
