//! Plugins: middleware chosen at run time, at a fixed position of a static chain.
//!
//! A chain is one concrete type, fixed when the program is compiled. Some middleware are only
//! known when it runs: enabled by a configuration file, by a tenant's settings, by a feature
//! flag. A [`PluginRegistry`] holds *factories* that each make a middleware from such a
//! configuration (or opt out with `None`); [`build`](PluginRegistry::build) makes the
//! [`Plugins`] member that runs the middleware made, in order, where it is listed:
//!
//! ```
//! use hookchain::plugin::PluginRegistry;
//! use hookchain::prelude::*;
//! use hookchain::{chain, hook, middleware};
//!
//! #[hook(before_model, phase = input)]
//! fn stamp(request: &mut ModelRequest) {
//!     request.system_prompt = Some("Be brief.".into());
//! }
//!
//! /// Ends a run after so many model calls: a plugin with a run-scoped state.
//! struct CallLimit(u32);
//!
//! #[middleware(state = u32)]
//! impl CallLimit {
//!     #[hook(before_model, jumps = [end])]
//!     fn check(&self, calls: &mut u32) -> Flow {
//!         *calls += 1;
//!         if *calls > self.0 { Flow::end() } else { Flow::Continue }
//!     }
//! }
//!
//! #[hook(after_model)]
//! fn shout(response: &mut ModelResponse) {
//!     response.message = Message::assistant(response.message.text().to_uppercase());
//! }
//!
//! /// The configuration read at run time.
//! struct Settings {
//!     max_calls: Option<u32>,
//! }
//!
//! let mut registry = PluginRegistry::<Settings>::new();
//! registry.register("call_limit", |settings| settings.max_calls.map(CallLimit));
//! registry.register("never", |_| None::<CallLimit>);
//!
//! let plugins = registry.build(&Settings { max_calls: Some(5) });
//! let chain = chain![stamp, plugins, shout];
//! let names: Vec<_> = chain.describe().members().iter().map(|member| member.name).collect();
//! assert_eq!(names, ["stamp", "CallLimit", "shout"]);
//!
//! # futures::executor::block_on(async {
//! let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("hi")]))
//!     .chain(chain)
//!     .build()?;
//! assert_eq!(agent.run("Hello").await?.text().as_deref(), Some("HI"));
//! # Ok::<(), hookchain::Error>(())
//! # }).unwrap();
//! ```
//!
//! # Only the plugins pay for dynamic dispatch
//!
//! Any middleware can be a plugin — written with the DSL or by hand, even a chain — through
//! [`DynMiddleware`], its object-safe twin, implemented for every middleware. The static
//! members around a `Plugins` member keep their static, allocation-free calls; each plugin's
//! hook costs a virtual call and a boxed future (two for a wrap hook: its own and its `next`'s),
//! and the member a few small allocations per hook (see `BENCHMARKS.md`).
//!
//! # How the member behaves
//!
//! - **Order**: the plugins run at the member's position, first listed first — outermost for
//!   the wrap hooks, last for the `after_*` and per-event hooks — exactly as if they were
//!   listed there statically.
//! - **Hooks**: the member declares every hook, since the plugins are not known when the chain
//!   is compiled, and passes a hook through at once when none of its plugins has it (else it
//!   skips, at run time, the plugins without it). A per-event hook declared has a cost for the
//!   whole agent: the model's answers are streamed ([`Model::stream`](crate::Model::stream))
//!   also in unstreamed runs (the answer assembled is the same). A member whose plugins need
//!   no per-event hook can say so: [`PluginsWithoutEvents`]
//!   ([`PluginRegistry::build_without_events`]) does not declare it, and refuses a plugin with
//!   one rather than skip it.
//! - **Live streaming**: [`LIVE_STREAM`](crate::Middleware::LIVE_STREAM) is `false`: in a
//!   streamed run the answers are held back until `after_model` has run. A constant cannot
//!   depend on the plugins of a run, and a plugin with a `wrap_model_call` or `after_model`
//!   hook may change an answer after the consumer saw it.
//! - **Jumps, interrupts, errors**: each plugin's jumps are checked against its own
//!   [`JUMPS`](crate::Middleware::JUMPS); its errors, panics and interrupts are named after it
//!   (not after the member).
//! - **State**: each plugin's run and thread state is its own type, created with `Default`,
//!   kept type-erased, and saved in checkpoints as JSON beside the plugin's name (see
//!   [`PluginStates`]); a resumed run decodes it with the plugin's type.
//! - **Positions and resume**: the member takes [`Plugins::CAPACITY`] positions of the
//!   flattened chain, whatever its plugins, so that the positions a checkpoint records (of the
//!   plugins and of the members after them) do not depend on the plugins of a run; a plugin
//!   takes the next one (a boxed chain, one per member). An interrupt raised by a plugin names
//!   the plugin and its own position; the run resumes in that plugin, which alone reads the
//!   answer, and its [`check_answer`](crate::Middleware::check_answer) checks the answer.
//! - **Another set of plugins at resume is refused**: a checkpoint (or a thread) records the
//!   plugins' names, in order, with their states; resuming it (or running the thread) with
//!   other plugins fails at the member's first hook with [`PluginError::Changed`], before any
//!   plugin runs. (The checkpoint's chain fingerprint lists the member, not its plugins: they
//!   are not known when the agent is compiled.)
//! - **Required plugins fail closed**: a factory registered with
//!   [`register_required`](PluginRegistry::register_required) that fails is an error of
//!   [`try_build`](PluginRegistry::try_build); a member [`build`](PluginRegistry::build) made
//!   without it fails every run at its first hook ([`PluginError::Required`]), so a redaction
//!   or an approval plugin is never silently off. An optional factory's failure leaves its
//!   plugin out, with a `WARN`.
//! - **Describe**: `describe()` lists each plugin by its name at the member's position.
//! - **Contributions**: the tools and prompt pieces the plugins
//!   [`contribute`](crate::Middleware::contribute) are the agent's, as a static member's.
//!
//! What a plugin gives up, being chosen after the chain is compiled:
//!
//! - the chain's compile-time checks do not see it: its
//!   [`CONSTRAINTS`](crate::Middleware::CONSTRAINTS) (`before`, `after`, `requires`) and its
//!   phase are not checked, the member stands in the `Wrap` phase;
//! - the `TRACE` hook events of a chain (see [`agent`](crate::agent)) name the member
//!   (`plugins`), not its plugins, and on a resumed step may name wrongly which members after it
//!   ran before the pause (they count the member as one position, not
//!   [`CAPACITY`](PluginMember::CAPACITY)); errors, panics and interrupts name the plugin.

mod adapter;
mod error;
mod member;
mod onion;
mod registry;
mod state;

pub use adapter::{DynMiddleware, DynModelNext, DynToolNext};
pub use error::{FactoryError, PluginError};
pub use member::{
    CAPACITY, PluginMember, PluginStreamStates, Plugins, PluginsWithoutEvents, boxed,
};
pub use registry::PluginRegistry;
pub use state::{ErasedState, PluginStates};
