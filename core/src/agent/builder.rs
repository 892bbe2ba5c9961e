//! Builds an [`Agent`].

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use super::durable::{DEFAULT_LEASE, DEFAULT_RETENTION, Durable};
use super::signing::Signing;
use super::{Agent, DEFAULT_AGENT_NAME, DEFAULT_MAX_STEPS, DEFAULT_TOOL_CONCURRENCY};
use super::{AgentBuildError, Durability};
use crate::__private::Internal;
use crate::interrupt::Checkpointer;
use crate::middleware::{Contributions, Middleware};
use crate::model::{Model, ModelSettings, ResponseFormat};
use crate::shared::Shared;
use crate::tool::{MessagePolicy, Tool, ToolExecution, ToolFailure, ToolRegistry};

/// Builds an [`Agent`]; see [`Agent::builder`].
#[derive(Debug)]
#[must_use = "call `build()` to get the agent"]
pub struct AgentBuilder<M, C = ()> {
    agent: Agent<M, C>,
    /// The leases and tombstones of a checkpointer, set in any order with it.
    leases: Leases,
}

/// How long a run's lease lasts, and its tombstone.
#[derive(Debug, Clone, Copy)]
struct Leases {
    ttl: Duration,
    retention: Duration,
}

impl<M: Model> AgentBuilder<M> {
    pub(super) fn new(model: M) -> Self {
        Self {
            agent: Agent {
                name: Cow::Borrowed(DEFAULT_AGENT_NAME),
                model,
                tools: ToolRegistry::new(),
                chain: (),
                system_prompt: None,
                settings: ModelSettings::new(),
                max_steps: DEFAULT_MAX_STEPS,
                tool_concurrency: DEFAULT_TOOL_CONCURRENCY,
                tool_execution: ToolExecution::Concurrent,
                tool_error_message: None,
                response_format: None,
                signing: Signing::default(),
                durable: None,
                worker: format!("worker-{}", crate::ids::fresh()).into(),
                members: Shared::new(<() as Middleware>::members(Internal::new())),
            },
            leases: Leases {
                ttl: DEFAULT_LEASE,
                retention: DEFAULT_RETENTION,
            },
        }
    }
}

/// An agent builder that has no middleware chain yet: `.chain(..)` is called once, with every
/// middleware (a second call would silently drop the first chain, so it does not compile).
///
/// The bound is on the builder rather than on its chain type: rustc adds a line "the trait `…`
/// is not implemented for `…`" to the message, which then reads "… for
/// `AgentBuilder<MyModel, audit>`" rather than pointing at the user's middleware as if it
/// should implement something.
#[diagnostic::on_unimplemented(
    message = "this agent already has a middleware chain",
    label = "a second `.chain(..)` would drop the first",
    note = "list every middleware in one call: `.chain((first, second))` or `.chain(chain![first, second])`"
)]
pub trait WithoutChain: sealed::Sealed {}

#[diagnostic::do_not_recommend]
impl<M> WithoutChain for AgentBuilder<M, ()> {}

mod sealed {
    pub trait Sealed {}
    impl<M> Sealed for super::AgentBuilder<M, ()> {}
}

impl<M: Model, C: Middleware> AgentBuilder<M, C> {
    /// Sets the middleware chain: a middleware, a tuple of them, or what `chain![..]` builds.
    ///
    /// Called once: the chain lists every middleware of the agent (`.chain((a, b))`); a second
    /// call does not compile rather than drop the first chain.
    pub fn chain<C2: Middleware>(self, chain: C2) -> AgentBuilder<M, C2>
    where
        Self: WithoutChain,
    {
        let Agent {
            name,
            model,
            tools,
            chain: _,
            system_prompt,
            settings,
            max_steps,
            tool_concurrency,
            tool_execution,
            tool_error_message,
            response_format,
            signing,
            durable,
            worker,
            members: _,
        } = self.agent;
        let leases = self.leases;
        let members = Shared::new(chain.instance_members(Internal::new()));
        AgentBuilder {
            agent: Agent {
                name,
                model,
                tools,
                chain,
                system_prompt,
                settings,
                max_steps,
                tool_concurrency,
                tool_execution,
                tool_error_message,
                response_format,
                signing,
                durable,
                worker,
                members,
            },
            leases,
        }
    }

    /// Names the agent (default [`DEFAULT_AGENT_NAME`]): its runs' spans are
    /// `invoke_agent {name}`, with `gen_ai.agent.name` = `name` (see [`agent`](super)).
    ///
    /// ```
    /// use hookchain::prelude::*;
    ///
    /// let agent = Agent::builder(ScriptedModel::new([])).name("support").build()?;
    /// assert_eq!(agent.name(), "support");
    /// # Ok::<(), hookchain::agent::AgentBuildError>(())
    /// ```
    pub fn name(mut self, name: impl Into<Cow<'static, str>>) -> Self {
        self.agent.name = name.into();
        self
    }

    /// Adds a tool.
    pub fn tool(mut self, tool: impl Tool) -> Self {
        self.agent.tools.register(tool);
        self
    }

    /// Replaces the tools with `tools`.
    pub fn tools(mut self, tools: ToolRegistry) -> Self {
        self.agent.tools = tools;
        self
    }

    /// Sets the system prompt of every model request.
    pub fn system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.agent.system_prompt = Some(prompt.into());
        self
    }

    /// Sets the sampling and length settings of every model request.
    pub fn settings(mut self, settings: ModelSettings) -> Self {
        self.agent.settings = settings;
        self
    }

    /// Bounds the number of steps per run (default [`DEFAULT_MAX_STEPS`]): a step is one pass
    /// through `before_model`, the model call (or a response standing in for it) and
    /// `after_model`, however many times a wrap calls the model in it. A run that would start
    /// one more step fails with [`Error::MaxStepsExceeded`](crate::Error::MaxStepsExceeded).
    pub fn max_steps(mut self, max_steps: usize) -> Self {
        self.agent.max_steps = max_steps;
        self
    }

    /// Bounds how many tool calls of one step run at the same time (default
    /// [`DEFAULT_TOOL_CONCURRENCY`]; at least 1).
    pub fn tool_concurrency(mut self, limit: usize) -> Self {
        self.agent.tool_concurrency = limit.max(1);
        self
    }

    /// Sets where the tool calls of a step run (default [`ToolExecution::Concurrent`]: polled
    /// together in the run's task). With the `tokio` feature, `ToolExecution::Spawned` runs
    /// each in a tokio task of its own, for tools that block or burn CPU; see
    /// [`ToolExecution`] for which to pick.
    ///
    /// ```
    /// use hookchain::prelude::*;
    /// use hookchain::tool::ToolExecution;
    ///
    /// let agent = Agent::builder(ScriptedModel::new([]))
    ///     .tool_execution(ToolExecution::Concurrent)
    ///     .build()?;
    /// # Ok::<(), hookchain::agent::AgentBuildError>(())
    /// ```
    pub fn tool_execution(mut self, execution: ToolExecution) -> Self {
        self.agent.tool_execution = execution;
        self
    }

    /// Sets what the model reads of a failed tool call (by default
    /// [`ToolFailure::message`](crate::tool::ToolFailure::message): the tool and the kind of
    /// failure, no internal detail). The full error still goes to `tracing` and to
    /// [`RunOutput::tool_failures`](crate::RunOutput::tool_failures).
    ///
    /// ```
    /// use hookchain::prelude::*;
    /// use hookchain::tool::ToolFailureKind;
    ///
    /// let agent = Agent::builder(ScriptedModel::new([]))
    ///     .tool_error_message(|failure| match failure.kind() {
    ///         ToolFailureKind::InvalidArguments => failure.message().to_owned(),
    ///         _ => format!("`{}` is unavailable right now; do without it", failure.tool()),
    ///     })
    ///     .build()?;
    /// # Ok::<(), hookchain::agent::AgentBuildError>(())
    /// ```
    pub fn tool_error_message(
        mut self,
        policy: impl Fn(&ToolFailure) -> String + Send + Sync + 'static,
    ) -> Self {
        self.agent.tool_error_message = Some(MessagePolicy::new(policy));
        self
    }

    /// Asks for answers that follow `format`'s JSON schema in every model request (structured
    /// output); read the final answer with [`ModelResponse::parse`](crate::ModelResponse::parse)
    /// or [`RunOutput::parse`](crate::RunOutput::parse).
    pub fn response_format(mut self, format: ResponseFormat) -> Self {
        self.agent.response_format = Some(format);
        self
    }

    /// Keeps the agent's runs in `store`, as much as `durability` says: its paused runs
    /// ([`Durability::Pauses`]), or also every step of a run in progress
    /// ([`Durability::EveryStep`]), so that a run whose process dies is resumed by another.
    /// See [`Durability`] for the keys and their life.
    ///
    /// ```
    /// use hookchain::interrupt::{Checkpointer, InMemoryCheckpointer};
    /// use hookchain::prelude::*;
    /// use hookchain::Durability;
    /// use std::sync::Arc;
    ///
    /// # futures::executor::block_on(async {
    /// let store = Arc::new(InMemoryCheckpointer::new());
    /// let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("Hi!")]))
    ///     .checkpointer(store.clone(), Durability::EveryStep)
    ///     .worker("worker-1")
    ///     .build()?;
    /// let mut thread = agent.thread();
    /// agent.run_in(&mut thread, "Hello").await?;
    /// // The run is over: its key holds its tombstone, free for the thread's next run.
    /// let stored = store.list().await?;
    /// assert!(stored[0].ended && stored[0].held_by.is_none());
    /// # Ok::<(), hookchain::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn checkpointer(
        mut self,
        store: impl Checkpointer + 'static,
        durability: Durability,
    ) -> Self {
        self.agent.durable = Durable::new(store, durability).map(Arc::new);
        self
    }

    /// Signs the checkpoints the agent hands out with the first of `keys`, and resumes only
    /// checkpoints one of `keys` signed: for checkpoints that pass through clients (see *A
    /// checkpoint is trusted input* on [`Checkpoint`](crate::Checkpoint)).
    ///
    /// Hand out [`Agent::sign_checkpoint`](super::Agent::sign_checkpoint)'s text and resume what
    /// comes back with [`ResumeFrom::signed`](super::ResumeFrom::signed): a checkpoint changed
    /// by one byte, signed with another key, or with its signature truncated or removed is
    /// refused with [`CheckpointError::Signature`](crate::interrupt::CheckpointError::Signature)
    /// before anything runs. So is a [`Checkpoint`](crate::Checkpoint) given as it is (this
    /// agent cannot tell where it has been); a key of the agent's checkpointer
    /// ([`ResumeFrom::stored`](super::ResumeFrom::stored)) resumes as always, the store's copy
    /// being the agent's own. To rotate keys, put the new one first and keep the old ones after
    /// it while checkpoints they signed may come back.
    ///
    /// ```
    /// use hookchain::interrupt::SigningKey;
    /// use hookchain::prelude::*;
    /// use hookchain::{ResumeFrom, chain, hook};
    ///
    /// #[hook(before_model)]
    /// fn ask(cx: &mut Context) -> Flow {
    ///     match cx.resume_value() {
    ///         Some(_) => Flow::Continue,
    ///         None => Flow::interrupt(serde_json::json!("go on?")),
    ///     }
    /// }
    ///
    /// # futures::executor::block_on(async {
    /// // 32 random bytes or more, from your secrets manager.
    /// let key = SigningKey::new("2026-11", [7u8; 32])?;
    /// let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("Hi!")]))
    ///     .chain(chain![ask])
    ///     .checkpoint_signing(&key)
    ///     .build()?;
    /// let paused = agent.run("Hello").await?;
    /// let checkpoint = paused.checkpoint.as_ref().unwrap();
    /// let sent = agent.sign_checkpoint(checkpoint)?;
    /// let answers = [(paused.interrupts()[0].id.clone(), serde_json::json!("yes"))];
    ///
    /// // The checkpoint as it is, unsigned: refused.
    /// assert!(agent.resume(checkpoint.clone(), answers.clone()).await.is_err());
    /// // Signed, as the client sent it back: resumed.
    /// let done = agent.resume(ResumeFrom::signed(sent), answers).await?;
    /// assert_eq!(done.text().as_deref(), Some("Hi!"));
    /// # Ok::<(), hookchain::Error>(())
    /// # }).unwrap();
    /// ```
    #[cfg(feature = "signing")]
    #[cfg_attr(docsrs, doc(cfg(feature = "signing")))]
    pub fn checkpoint_signing(mut self, keys: impl AsRef<[crate::interrupt::SigningKey]>) -> Self {
        self.agent.signing.keys = Some(keys.as_ref().into());
        self
    }

    /// Names the agent as a worker of its checkpointer (default: `worker-` and a fresh id):
    /// the holder of the leases of its runs in progress. Give each process its own name (a
    /// worker restarted under its name waits for its old leases to expire like anyone).
    pub fn worker(mut self, name: impl Into<String>) -> Self {
        self.agent.worker = name.into().into();
        self
    }

    /// How long a run's lease on its key lasts unless renewed (default 30 seconds): the run
    /// renews it every third of that (with the feature `tokio`; without it, each write renews
    /// it, so give it more than the longest step), and a run whose worker died may be taken
    /// over by any worker once it expired — no operator step. See *Leases* on
    /// [`Checkpointer`].
    pub fn lease(mut self, ttl: Duration) -> Self {
        self.leases.ttl = ttl;
        self
    }

    /// How long the tombstone of a run that ended stays under its key (default 24 hours): a
    /// replayed or duplicated resume within it is refused with
    /// [`ResumeError::Ended`](crate::interrupt::ResumeError::Ended); after it, with
    /// [`ResumeError::NotStored`](crate::interrupt::ResumeError::NotStored). Never run again.
    pub fn tombstone_retention(mut self, retention: Duration) -> Self {
        self.leases.retention = retention;
        self
    }

    /// The agent, with the tools and system-prompt pieces its middleware contribute (see
    /// [`Middleware::contribute`]), or why it cannot work as configured: two tools of one name
    /// (given to the agent or contributed), `max_steps(0)`, a zero lease. A misconfigured agent
    /// fails here, at startup, never on its first request.
    ///
    /// The contributed tools join the agent's; the pieces follow its system prompt, in the
    /// order the middleware are listed, separated by blank lines.
    ///
    /// ```
    /// use hookchain::agent::AgentBuildError;
    /// use hookchain::prelude::*;
    /// use hookchain::tool;
    ///
    /// /// Looks up an order.
    /// #[tool]
    /// async fn lookup(id: String) -> String {
    ///     id
    /// }
    ///
    /// let twice = Agent::builder(ScriptedModel::new([])).tool(lookup).tool(lookup).build();
    /// assert!(matches!(twice, Err(AgentBuildError::ToolRegisteredTwice { .. })));
    /// ```
    pub fn build(mut self) -> Result<Agent<M, C>, AgentBuildError> {
        if let Some(tool) = self.agent.tools.registered_twice() {
            return Err(AgentBuildError::ToolRegisteredTwice {
                tool: tool.to_owned(),
            });
        }
        if self.agent.max_steps == 0 {
            return Err(AgentBuildError::NoSteps);
        }
        if self.agent.durable.is_some() && self.leases.ttl.is_zero() {
            return Err(AgentBuildError::ZeroLease);
        }
        let mut contributions = Contributions::new();
        contributions.collect(&self.agent.chain);
        contributions.apply(&mut self.agent.tools, &mut self.agent.system_prompt)?;
        Ok(self.finish())
    }

    /// The agent, its checkpointer's leases set.
    fn finish(mut self) -> Agent<M, C> {
        if let Some(durable) = self.agent.durable.as_mut().and_then(Arc::get_mut) {
            durable.lease = self.leases.ttl;
            durable.retention = self.leases.retention;
        }
        self.agent
    }
}
