//! The [`Agent`]: a model, tools and a middleware chain, running the agent loop (the order of
//! the hooks is in [`Middleware`](crate::Middleware)'s docs).

mod builder;
mod entry;
mod innermost;
mod input;
mod output;
mod run_loop;
mod thread;

pub use builder::AgentBuilder;
pub use input::Input;
pub use output::{EndReason, RunOutput};
pub(crate) use thread::PauseMark;
pub use thread::{Thread, ThreadError, ThreadId};

use std::borrow::Cow;

use crate::model::{Model, ModelSettings, ResponseFormat};
use crate::tool::{MessagePolicy, ToolRegistry};

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
/// let agent = Agent::builder(model).system_prompt("Be brief.").build();
/// let output = agent.run("Hello").await?;
/// assert_eq!(output.text(), Some("Hi!"));
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
    tool_error_message: Option<MessagePolicy>,
    response_format: Option<ResponseFormat>,
}

impl<M: Model> Agent<M> {
    /// Starts building an agent around `model`, with no tools and an empty chain.
    pub fn builder(model: M) -> AgentBuilder<M> {
        AgentBuilder::new(model)
    }
}

impl<M, C> Agent<M, C> {
    /// The agent's name ([`AgentBuilder::name`]; [`DEFAULT_AGENT_NAME`] by default), as its
    /// runs' `invoke_agent` spans give it.
    pub fn name(&self) -> &str {
        &self.name
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

    /// The bound on model calls per run.
    pub fn max_steps(&self) -> usize {
        self.max_steps
    }
}
