//! The [`Agent`]: a model, tools and a middleware chain, running the agent loop (the order of
//! the hooks is in [`Middleware`](crate::Middleware)'s docs).
//!
//! # Tracing
//!
//! A run reports to [`tracing`](https://docs.rs/tracing) in spans named and attributed as
//! OpenTelemetry's [GenAI semantic conventions](https://opentelemetry.io/docs/specs/semconv/gen-ai/)
//! (development status) name them; `otel.name` is the name an OpenTelemetry exporter
//! (`tracing-opentelemetry`) gives the span. hookchain depends on `tracing` only: install any
//! subscriber, or none (then each span and event costs a level check and allocates nothing).
//!
//! | span (level) | `otel.name` | fields | one per |
//! |---|---|---|---|
//! | `invoke_agent` (`INFO`) | `invoke_agent {agent}` | `gen_ai.operation.name` = `invoke_agent`, `gen_ai.agent.name` ([`AgentBuilder::name`]), `gen_ai.conversation.id` (the [`Thread`]'s id, in a thread), `hookchain.run.id` (the run's id, the same across its resumes), `hookchain.max_steps`; at the end `gen_ai.usage.input_tokens`, `gen_ai.usage.output_tokens` (the run's totals so far) and `error.type` if the run failed | run, and resume of a paused run |
//! | `chat` (`INFO`), in `invoke_agent` | `chat {model}` | `gen_ai.operation.name` = `chat`, `gen_ai.provider.name` ([`Model::provider_name`]), `gen_ai.request.model` (the request's [`model`](crate::ModelRequest::model), else [`Model::model_name`]); when it answers `gen_ai.usage.input_tokens`, `gen_ai.usage.output_tokens`, `gen_ai.response.finish_reasons` (`stop`, `tool_calls`, `length`, `content_filter`), or `error.type` (the [`ModelErrorKind`](crate::ModelErrorKind) in snake case: `rate_limited`, `timeout`, …) | call the model really answers: each retry has its own, a call a wrap answers without calling `next` has none |
//! | `execute_tool` (`INFO`), in `invoke_agent` | `execute_tool {tool}` | `gen_ai.operation.name` = `execute_tool`, `gen_ai.tool.name`, `gen_ai.tool.call.id`; `error.type` when the result is an error (the [`ToolFailureKind`](crate::tool::ToolFailureKind) in snake case, or `tool_error` for an error result a hook made) | tool call the model asked for; the call's `wrap_tool_call` hooks and the tool run in it (concurrent calls each in their own) |
//!
//! And events:
//!
//! | event (level) | fields | when |
//! |---|---|---|
//! | `hook` (`TRACE`), in `invoke_agent` or `execute_tool` | `hookchain.middleware` (the member's [`NAME`](crate::Middleware::NAME)), `hookchain.hook` (`before_model`, `wrap_tool_call`, …) | one per member that ran a hook, in the order they ran, emitted when the chain's hook (or onion) returned: `before_*` up to the member that stopped the others, `after_model` in reverse, every `after_agent`; every wrap of an onion that reached the model or the tool, else the outermost only; a `wrap_tool_call` in its call's `execute_tool` |
//! | `model call short-circuited` (`DEBUG`), in `invoke_agent` | `hookchain.hook` = `wrap_model_call`, `hookchain.wraps` (the members that wrap the model call, outermost first: one of them answered) | the model-call onion answered without calling the model (no `chat` span) |
//! | `tool call short-circuited` (`DEBUG`), in `execute_tool` | `hookchain.hook` = `wrap_tool_call`, `hookchain.wraps` | the tool-call onion answered without running the tool (or paused it first) |
//! | `tool call failed` (`WARN`), in `execute_tool` | `tool`, `call_id`, `kind`, `error` (every cause) | a tool call failed |
//!
//! The hook events are `TRACE` because they are many (several per step and member) and tell
//! the story of the chain rather than of the run. The agent loop emits them after the fact,
//! from what it records anyway (the last member entered), not the chain as each member runs:
//! any per-member work on the model path — even testing a flag — cost the chain 16 to 67 %
//! more instructions per model call, where the loop's level check costs nothing measurable
//! (*Cost of tracing* in `BENCHMARKS.md`). Hence their two limits: an event a hook emits
//! itself comes before that hook's `hook` event, and of the wraps of a short-circuited call
//! only the outermost is known to have run. Events have the default targets
//! (`hookchain_core::…`): `RUST_LOG=hookchain_core=trace` shows them all. The README's
//! *Observability* section shows how to export the spans to OpenTelemetry.

mod abandon;
mod builder;
mod call_tool;
mod carry_over;
mod child_run;
mod durable;
mod entry;
mod gate_passed;
mod in_store;
mod innermost;
mod input;
mod interrupted;
mod leased;
mod owned;
mod owned_with;
mod paused_call;
mod resume;
mod resume_from;
mod run_loop;
mod signing;
mod step;
mod stream;
mod thread_stream;
mod told_late;
mod unseen;
mod with_context;

pub use crate::config::AgentBuildError;
pub(crate) use crate::pause::Held;
pub use builder::{AgentBuilder, WithoutChain};
pub use durable::Durability;
pub(crate) use durable::Durable;

use crate::interrupt::Members;
pub(crate) use crate::run::RunEvents;
pub use crate::run::{AgentEvent, SubAgentEvent};
pub use crate::run::{CleanupError, EndReason, RunOutput};
use crate::shared::Shared;
pub(crate) use crate::thread::PauseMark;
pub use crate::thread::{THREAD_FORMAT, Thread, ThreadError, ThreadId};
pub use gate_passed::GatePassed;
pub use input::{IntoRunInput, RunInput};
pub use owned_with::OwnedAgentWith;
pub use paused_call::{CallOutcome, PausedCall};
pub use resume_from::ResumeFrom;
pub use stream::{AgentStream, AwaitableStream};
pub use thread_stream::{AwaitableThreadStream, ThreadReturn, ThreadStream};
pub use unseen::UnseenRun;
pub use with_context::AgentWith;

use std::borrow::Cow;
use std::sync::Arc;

use crate::model::{Model, ModelSettings, ResponseFormat};
use crate::tool::{MessagePolicy, ToolExecution, ToolRegistry};

/// The default bound on steps per run (see [`AgentBuilder::max_steps`]).
pub const DEFAULT_MAX_STEPS: usize = 25;

/// The name of an agent that was not given one (see [`AgentBuilder::name`]).
pub const DEFAULT_AGENT_NAME: &str = "agent";

/// The default number of tool calls of one step that run at the same time.
pub const DEFAULT_TOOL_CONCURRENCY: usize = 8;

/// An agent: a model, its tools and a static middleware chain `C`.
///
/// Build one with [`Agent::builder`], run it with [`Agent::run`]. One agent serves any number of
/// runs, also concurrently: configuration lives in the agent and its middleware, the data of a
/// run in the run.
///
/// ```
/// use hookchain::prelude::*;
///
/// # futures::executor::block_on(async {
/// let model = ScriptedModel::new([ModelResponse::text("Hi!")]);
/// let agent = Agent::builder(model).system_prompt("Be brief.").build()?;
/// let output = agent.run("Hello").await?;
/// assert_eq!(output.text().as_deref(), Some("Hi!"));
/// # Ok::<(), hookchain::Error>(())
/// # }).unwrap();
/// ```
#[derive(Debug)]
pub struct Agent<M, C = ()> {
    name: Cow<'static, str>,
    model: M,
    tools: ToolRegistry,
    chain: C,
    system_prompt: Option<String>,
    settings: ModelSettings,
    max_steps: usize,
    tool_concurrency: usize,
    tool_execution: ToolExecution,
    tool_error_message: Option<MessagePolicy>,
    response_format: Option<ResponseFormat>,
    /// The keys it signs its checkpoints with, and resumes only checkpoints they signed.
    signing: signing::Signing,
    /// Where its runs are kept, and how much of them.
    durable: Option<Arc<Durable>>,
    /// Its name as a worker of its checkpointer.
    worker: Arc<str>,
    /// The chain's members as checkpoints and threads record them (made once, shared).
    members: Shared<Members>,
}

impl<M: Model> Agent<M> {
    /// Starts building an agent around `model`, with no tools and an empty chain.
    pub fn builder(model: M) -> AgentBuilder<M> {
        AgentBuilder::new(model)
    }
}

impl<M, C> Agent<M, C> {
    /// Whether it keeps its runs in a checkpointer.
    pub(crate) fn keeps_runs(&self) -> bool {
        self.durable.is_some()
    }

    /// The agent's name ([`AgentBuilder::name`]; [`DEFAULT_AGENT_NAME`] by default), as its
    /// runs' `invoke_agent` spans give it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The agent's name as a worker of its checkpointer
    /// ([`AgentBuilder::worker`]): claim a stored checkpoint with it, and the resumed run
    /// writes its key as the holder.
    pub fn worker(&self) -> &str {
        &self.worker
    }

    /// The model.
    pub fn model(&self) -> &M {
        &self.model
    }

    /// The middleware chain.
    pub fn chain(&self) -> &C {
        &self.chain
    }

    /// The tools.
    pub fn tools(&self) -> &ToolRegistry {
        &self.tools
    }

    /// The system prompt of every model request: the one the builder was given, then the
    /// pieces the middleware contribute (see
    /// [`Middleware::contribute`](crate::Middleware::contribute)).
    pub fn system_prompt(&self) -> Option<&str> {
        self.system_prompt.as_deref()
    }

    /// The bound on model calls per run.
    pub fn max_steps(&self) -> usize {
        self.max_steps
    }

    /// How long its lease on a run's key lasts unless renewed
    /// ([`AgentBuilder::lease`]); `None` when it has no
    /// [`checkpointer`](AgentBuilder::checkpointer) (its runs are not kept, nor leased).
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// use hookchain::interrupt::InMemoryCheckpointer;
    /// use hookchain::prelude::*;
    /// use hookchain::Durability;
    ///
    /// let model = || ScriptedModel::new([ModelResponse::text("Hi.")]);
    /// assert_eq!(Agent::builder(model()).build()?.lease(), None);
    /// let kept = Agent::builder(model())
    ///     .checkpointer(InMemoryCheckpointer::new(), Durability::Pauses)
    ///     .lease(Duration::from_secs(5))
    ///     .build()?;
    /// assert_eq!(kept.lease(), Some(Duration::from_secs(5)));
    /// # Ok::<(), hookchain::agent::AgentBuildError>(())
    /// ```
    pub fn lease(&self) -> Option<std::time::Duration> {
        self.durable.as_ref().map(|durable| durable.lease)
    }
}
