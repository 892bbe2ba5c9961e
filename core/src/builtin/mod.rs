//! The built-in middleware: ready-made, written with the DSL like a user's.
//!
//! This is the library; the mechanism they are built on (the [`Middleware`](crate::Middleware)
//! trait, chains, markers) lives in [`middleware`](crate::middleware). Each built-in is a file
//! (or folder) of its own here, with its builder, its rules and their tests. A builder's
//! `build()` checks the settings and names the one that cannot work in a [`ConfigError`].
//!
//! | middleware | what it does |
//! |---|---|
//! | [`CircuitBreaker`] | after repeated failures of a model, fails its calls at once for a cool-down (feature `tokio`) |
//! | [`HumanInTheLoop`] | pauses the run for a person to approve, edit, reject or answer tool calls |
//! | [`ModelFallback`] | sends a failed model call to the next model, through the inner middleware |
//! | [`ModelRetry`] | sends a failed model call again after a growing, jittered wait (feature `tokio`) |
//! | [`Timeout`] | fails a model call, or answers a tool call with an error, that takes too long (feature `tokio`) |
//! | [`ToolRetry`] | runs a failed tool call again after a growing, jittered wait (feature `tokio`) |

#[cfg(feature = "tokio")]
pub mod circuit_breaker;
pub mod config;
pub mod fallback;
pub mod human_in_the_loop;
#[cfg(feature = "tokio")]
pub mod retry;
#[cfg(feature = "tokio")]
pub mod timeout;

#[cfg(feature = "tokio")]
pub use circuit_breaker::CircuitBreaker;
pub use config::ConfigError;
pub use fallback::ModelFallback;
pub use human_in_the_loop::HumanInTheLoop;
#[cfg(feature = "tokio")]
pub use retry::{ModelRetry, ToolRetry};
#[cfg(feature = "tokio")]
pub use timeout::Timeout;
