//! The built-in middleware: ready-made, written with the DSL like a user's.
//!
//! This is the library; the mechanism they are built on (the [`Middleware`](crate::Middleware)
//! trait, chains, markers) lives in [`middleware`](crate::middleware). Each built-in is a file
//! (or folder) of its own here, with its builder, its rules and their tests.
//!
//! | middleware | what it does |
//! |---|---|
//! | [`CircuitBreaker`] | after repeated failures of a model, fails its calls at once for a cool-down (feature `tokio`) |
//! | [`ContextEditing`] | replaces older tool results by a placeholder in what the model reads, once the request is long (the history keeps them) |
//! | [`DynamicPrompt`] | computes the system prompt of every model call from the run and the request |
//! | [`HumanInTheLoop`] | pauses the run for a person to approve, edit, reject or answer tool calls |
//! | [`LlmToolSelector`] | a helper model picks at most N of the agent's tools for each model call; degrades to all tools |
//! | [`LoopDetection`] | warns the model about a repeated tool call (same tool, same arguments), then blocks it |
//! | [`ModelCallLimit`] | at most so many model calls per run and per thread |
//! | [`ModelFallback`] | sends a failed model call to the next model, through the inner middleware |
//! | [`ModelRetry`] | sends a failed model call again after a growing, jittered wait (feature `tokio`) |
//! | [`Pii`] | finds personal data (e-mail, card numbers, IP/MAC addresses, URLs, your own) and blocks, redacts, masks or hashes it in the history (feature `pii`) |
//! | [`RateLimit`] | at most N model calls per interval; a call over it waits for a slot (feature `tokio`) |
//! | [`Timeout`] | fails a model call, or answers a tool call with an error, that takes too long (feature `tokio`) |
//! | [`Summarization`] | replaces the older part of a long history by a summary a model writes; the removed messages go to the application |
//! | [`TodoList`] | gives the model a `write_todos` tool and a system-prompt piece to plan with; keeps the list in thread state |
//! | [`TokenBudget`] | at most so many input or output tokens (or so much money) per run and per thread |
//! | [`ToolCallLimit`] | at most so many tool calls (of every tool, or of one) per run and per thread |
//! | [`ToolCallRepair`] | parses arguments sent as a string or in a code fence, answers calls without a name, makes ids unique |
//! | [`ToolEmulator`] | a model plays the tools (all, or the listed ones): tests without side effects |
//! | [`ToolResultCache`] | keeps chosen tools' results for a time and serves them again, within a thread by default (feature `tokio`) |
//! | [`ToolRetry`] | runs a failed tool call again after a growing, jittered wait (feature `tokio`) |
//!
//! Token counting for them is in [`tokens`]: a [`TokenCounter`](tokens::TokenCounter) trait, an
//! approximate default, an exact counter (feature `tiktoken`) and a model's context size.
//!
//! Builders check their settings: a setting that cannot work is a [`ConfigError`] naming it.
//!
//! # Resilience: the order of the wraps
//!
//! Wraps nest in the order they are listed, the first outermost. For the model call, list the
//! resilience middleware in this order (leave out what you do not use):
//!
//! ```text
//! chain![ModelFallback, ModelRetry, CircuitBreaker, RateLimit, Timeout]
//!        outermost                                          innermost (next to the model)
//! ```
//!
//! - `ModelFallback` outermost: each model gets its retries before the next model is tried,
//!   and every fallback attempt passes through the retry, the breaker, the limit and the
//!   timeout again (the breaker keeps one circuit per model). Listed inside the retry instead,
//!   each retry runs through every model.
//! - `ModelRetry` outside `Timeout`: a timed-out attempt (a retryable `Timeout` error) is sent
//!   again, each attempt with the full time. Inside, the time would bound all attempts.
//! - `ModelRetry` outside `CircuitBreaker`: the breaker sees every attempt; once open, its
//!   error is not retryable, so the retry stops at once and the fallback moves on.
//! - `CircuitBreaker` outside `RateLimit`: a call refused by an open circuit takes no slot.
//! - `RateLimit` outside `Timeout`: the wait for a slot is not counted as the model's time,
//!   and every attempt sent takes a slot.
//!
//! ```
//! use std::time::Duration;
//! use hookchain::builtin::{CircuitBreaker, ModelFallback, ModelRetry, RateLimit, Timeout};
//!
//! let chain = hookchain::chain![
//!     ModelFallback::builder().model("backup").build()?,
//!     ModelRetry::new(),
//!     CircuitBreaker::builder().build()?,
//!     RateLimit::builder().requests(60).interval(Duration::from_secs(60)).build()?,
//!     Timeout::builder().model_call(Duration::from_secs(60)).build()?,
//! ];
//! # Ok::<(), hookchain::builtin::ConfigError>(())
//! ```
//!
//! When none of them trips, a model call through all five allocates nothing on the heap for
//! an empty request (`tests/zero_alloc.rs`); the retry and the fallback copy the request for
//! each attempt but the last (cheap: history and tools are shared; a system prompt is a copied
//! string).

mod canonical;
#[cfg(feature = "tokio")]
#[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
pub mod circuit_breaker;
/// The error of a built-in's builder: a setting that cannot work.
pub mod config {
    pub use crate::config::ConfigError;
}
pub mod context_editing;
pub mod dynamic_prompt;
pub mod fallback;
pub mod human_in_the_loop;
pub mod limit;
pub mod llm_tool_selector;
pub mod loop_detection;
pub mod model_call_limit;
#[cfg(feature = "pii")]
#[cfg_attr(docsrs, doc(cfg(feature = "pii")))]
pub mod pii;
pub mod prompt_caching;
#[cfg(feature = "tokio")]
#[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
pub mod rate_limit;
#[cfg(feature = "tokio")]
#[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
pub mod retry;
pub mod sub_agents;
pub mod summarization;
#[cfg(feature = "tokio")]
#[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
pub mod timeout;
pub mod todo_list;
pub mod token_budget;
pub mod tokens;
pub mod tool_call_limit;
pub mod tool_call_repair;
pub mod tool_emulator;
#[cfg(feature = "tokio")]
#[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
pub mod tool_result_cache;
pub mod validated_output;

#[cfg(feature = "tokio")]
pub use circuit_breaker::CircuitBreaker;
pub use config::ConfigError;
pub use context_editing::ContextEditing;
pub use dynamic_prompt::{DynamicPrompt, PromptMode};
pub use fallback::ModelFallback;
pub use human_in_the_loop::HumanInTheLoop;
pub use limit::{LimitExit, LimitScope};
pub use llm_tool_selector::LlmToolSelector;
pub use loop_detection::LoopDetection;
pub use model_call_limit::ModelCallLimit;
#[cfg(feature = "pii")]
#[cfg_attr(docsrs, doc(cfg(feature = "pii")))]
pub use pii::{Pii, PiiBlocked, PiiPlace, PiiStrategy, PiiType};
pub use prompt_caching::PromptCaching;
#[cfg(feature = "tokio")]
pub use rate_limit::RateLimit;
#[cfg(feature = "tokio")]
pub use retry::{ModelRetry, ToolRetry};
pub use sub_agents::SubAgents;
pub use summarization::Summarization;
#[cfg(feature = "tokio")]
pub use timeout::Timeout;
pub use todo_list::TodoList;
pub use token_budget::TokenBudget;
pub use tool_call_limit::ToolCallLimit;
pub use tool_call_repair::ToolCallRepair;
pub use tool_emulator::ToolEmulator;
#[cfg(feature = "tokio")]
#[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
pub use tool_result_cache::ToolResultCache;
pub use validated_output::ValidatedOutput;
