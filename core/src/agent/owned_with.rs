//! [`OwnedAgentWith`]: an agent held in an [`Arc`], with the values to give its runs, for the
//! owned (`'static`) streams.

use std::sync::Arc;

use super::{Agent, AgentStream, IntoRunInput, ResumeFrom, Thread, ThreadStream};
use crate::context::RunContext;
use crate::interrupt::InterruptId;
use crate::middleware::Middleware;
use crate::model::Model;

/// An [`Agent`] held in an [`Arc`], with a [`RunContext`] to give to its runs; made by
/// [`Agent::with_context_owned`]. Its methods are the agent's owned streams
/// ([`stream_owned`](Agent::stream_owned), [`stream_in_owned`](Agent::stream_in_owned), …),
/// each run reading the context: what a web handler makes per request, with the request's
/// values, to return a stream as its response body.
///
/// Each stream gets its own share of the agent and of the same values (no copy).
#[derive(Debug)]
#[must_use = "call a `stream` form on it"]
pub struct OwnedAgentWith<M, C> {
    agent: Arc<Agent<M, C>>,
    run_context: RunContext,
}

impl<M, C> Agent<M, C> {
    /// [`with_context`](Self::with_context) of an agent held in an [`Arc`]: the handle owns
    /// its share of the agent, and so do the streams it starts (see
    /// [`stream_owned`](Self::stream_owned)).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use futures::TryStreamExt;
    /// use hookchain::prelude::*;
    /// use hookchain::{RunContext, tool};
    ///
    /// /// The tenant a request is for.
    /// struct Tenant(&'static str);
    ///
    /// /// Says whose data this is.
    /// #[tool]
    /// async fn whoami(cx: ToolContext<'_>) -> String {
    ///     cx.get::<Tenant>().map_or("nobody", |tenant| tenant.0).to_owned()
    /// }
    ///
    /// /// What a web handler returns: the run's events, with the request's values.
    /// fn handle(
    ///     agent: &Arc<Agent<ScriptedModel>>,
    ///     tenant: &'static str,
    /// ) -> impl futures::Stream<Item = Result<hookchain::AgentEvent, hookchain::Error>> + Send + 'static {
    ///     Arc::clone(agent)
    ///         .with_context_owned(RunContext::new().with(Tenant(tenant)))
    ///         .stream("Who am I?")
    /// }
    ///
    /// # futures::executor::block_on(async {
    /// let model = ScriptedModel::new([
    ///     ModelResponse::tool_calls([ToolCall::new("c1", "whoami", serde_json::json!({}))]),
    ///     ModelResponse::text("Done."),
    /// ]);
    /// let agent = Arc::new(Agent::builder(model).tool(whoami).build()?);
    /// let events: Vec<_> = handle(&agent, "acme").try_collect().await?;
    /// let Some(hookchain::AgentEvent::Output(output)) = events.last() else { unreachable!() };
    /// assert_eq!(output.messages[2].text(), "acme"); // the tool's result
    /// # Ok::<(), hookchain::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn with_context_owned(self: Arc<Self>, run_context: RunContext) -> OwnedAgentWith<M, C> {
        OwnedAgentWith {
            agent: self,
            run_context,
        }
    }
}

impl<M: Model + 'static, C: Middleware + 'static> OwnedAgentWith<M, C> {
    /// [`Agent::stream_owned`], with the run context.
    pub fn stream(&self, input: impl IntoRunInput) -> AgentStream<'static> {
        self.agent()
            .stream_owned_with(self.run_context.clone(), input.into_run_input())
    }

    /// [`Agent::stream_in_owned`], with the run context.
    pub fn stream_in(
        &self,
        thread: Thread<C::ThreadState>,
        input: impl IntoRunInput,
    ) -> ThreadStream<C::ThreadState> {
        self.agent()
            .stream_in_owned_with(self.run_context.clone(), thread, input.into_run_input())
    }

    /// [`Agent::stream_resume_owned`], with the run context: its typed values must be given
    /// again (a checkpoint has none); the paused run's saved values come back, except where
    /// the run context has one of the same key.
    pub fn stream_resume(
        &self,
        from: impl Into<ResumeFrom>,
        answers: impl IntoIterator<Item = (InterruptId, serde_json::Value)>,
    ) -> AgentStream<'static> {
        let answers = answers.into_iter().collect();
        self.agent()
            .stream_resume_owned_with(self.run_context.clone(), from.into(), answers)
    }

    /// [`Agent::stream_resume_in_owned`], with the run context (see
    /// [`stream_resume`](Self::stream_resume)).
    pub fn stream_resume_in(
        &self,
        thread: Thread<C::ThreadState>,
        from: impl Into<ResumeFrom>,
        answers: impl IntoIterator<Item = (InterruptId, serde_json::Value)>,
    ) -> ThreadStream<C::ThreadState> {
        let answers = answers.into_iter().collect();
        self.agent().stream_resume_in_owned_with(
            self.run_context.clone(),
            thread,
            from.into(),
            answers,
        )
    }

    /// [`Agent::stream_start_step_owned`], with the run context.
    pub fn stream_start_step(
        &self,
        key: impl Into<String>,
        input: impl IntoRunInput,
    ) -> AgentStream<'static> {
        self.agent().stream_start_step_owned_with(
            self.run_context.clone(),
            key.into(),
            input.into_run_input(),
        )
    }

    /// [`Agent::stream_step_owned`], with the run context (see
    /// [`stream_resume`](Self::stream_resume)).
    pub fn stream_step(
        &self,
        key: impl Into<String>,
        answers: impl IntoIterator<Item = (InterruptId, serde_json::Value)>,
    ) -> AgentStream<'static> {
        let answers = answers.into_iter().collect();
        self.agent()
            .stream_step_owned_with(self.run_context.clone(), key.into(), answers)
    }
}

impl<M, C> OwnedAgentWith<M, C> {
    /// A share of the agent, for one stream.
    fn agent(&self) -> Arc<Agent<M, C>> {
        Arc::clone(&self.agent)
    }

    /// The run context given to the runs.
    pub fn run_context(&self) -> &RunContext {
        &self.run_context
    }
}
