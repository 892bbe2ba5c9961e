//! # hookchain
//!
//! Middleware for LLM agents, composed statically and checked by the compiler.
//!
//! An agent run calls a model in a loop, runs the tools the model asks for, and stops when the
//! model answers without calling tools. Middleware hook into that loop — before and after the
//! run, before and after every model call, and around every model and tool call — to retry,
//! cache, redact, limit, approve or trace. In hookchain a chain of middleware is one concrete
//! type: no `Box<dyn>`, no boxed futures, no allocation per call, and hooks a middleware does not
//! implement cost nothing.
//!
//! ```
//! use hookchain::prelude::*;
//! use hookchain::middleware::{HookSet, False, phase};
//!
//! /// Counts the model calls of a run, in its per-run state.
//! #[derive(Debug)]
//! struct CountCalls;
//!
//! impl Middleware for CountCalls {
//!     type State = u32;
//!     type Phase = phase::Wrap;
//!     type WrapsModel = False;
//!     type WrapsTool = False;
//!     const NAME: &'static str = "CountCalls";
//!     const HOOKS: HookSet = HookSet::of(Hook::BeforeModel);
//!
//!     async fn before_model(
//!         &self,
//!         _cx: &mut Context,
//!         calls: &mut u32,
//!         _request: &mut ModelRequest,
//!     ) -> Result<Flow, Error> {
//!         *calls += 1;
//!         Ok(Flow::Continue)
//!     }
//! }
//!
//! # futures::executor::block_on(async {
//! let model = ScriptedModel::new([ModelResponse::text("Hello!")]);
//! let agent = Agent::builder(model).chain((CountCalls,)).build();
//! let output = agent.run("Hi").await?;
//! assert_eq!(output.text(), Some("Hello!"));
//! # Ok::<(), hookchain::Error>(())
//! # }).unwrap();
//! ```
//!
//! See [`Middleware`] for the order in which hooks run and what each may do.

#![forbid(unsafe_code)]

pub use hookchain_core::*;
pub use hookchain_macros::{chain, hook, middleware};

/// The README's examples, compiled and run as doctests so they cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
