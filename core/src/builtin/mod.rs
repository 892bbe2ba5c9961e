//! The built-in middleware: ready-made, written with the DSL like a user's.
//!
//! This is the library; the mechanism they are built on (the [`Middleware`](crate::Middleware)
//! trait, chains, markers) lives in [`middleware`](crate::middleware). Each built-in is a file
//! (or folder) of its own here, with its builder, its rules and their tests.
//!
//! | middleware | what it does |
//! |---|---|
//! | [`HumanInTheLoop`] | pauses the run for a person to approve, edit, reject or answer tool calls |
//! | [`LoopDetection`] | warns the model about a repeated tool call (same tool, same arguments), then blocks it |
//! | [`ModelCallLimit`] | at most so many model calls per run and per thread |
//! | [`TokenBudget`] | at most so many input or output tokens (or so much money) per run and per thread |
//! | [`ToolCallLimit`] | at most so many tool calls (of every tool, or of one) per run and per thread |
//! | [`ToolCallRepair`] | parses arguments sent as a string or in a code fence, answers calls without a name, makes ids unique |
//! | [`ToolResultCache`] | keeps chosen tools' results for a time and serves them again (feature `tokio`) |
//!
//! Builders check their settings: a setting that cannot work is a [`ConfigError`] naming it.

mod canonical;
pub mod config;
pub mod human_in_the_loop;
pub mod limit;
pub mod loop_detection;
pub mod model_call_limit;
pub mod token_budget;
pub mod tool_call_limit;
pub mod tool_call_repair;
#[cfg(feature = "tokio")]
#[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
pub mod tool_result_cache;

pub use config::ConfigError;
pub use human_in_the_loop::HumanInTheLoop;
pub use limit::{LimitExit, LimitScope};
pub use loop_detection::LoopDetection;
pub use model_call_limit::ModelCallLimit;
pub use token_budget::TokenBudget;
pub use tool_call_limit::ToolCallLimit;
pub use tool_call_repair::ToolCallRepair;
#[cfg(feature = "tokio")]
#[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
pub use tool_result_cache::ToolResultCache;
