//! [`AgentWith`]: an agent borrowed with the values to give its runs.

use super::{Agent, AgentStream, IntoRunInput, ResumeFrom, RunOutput, Thread};
use crate::context::RunContext;
use crate::error::Error;
use crate::interrupt::InterruptId;
use crate::middleware::Middleware;
use crate::model::Model;

/// An [`Agent`] with a [`RunContext`] to give to its runs; made by
/// [`Agent::with_context`]. Its methods are the agent's, each run reading the context.
///
/// It borrows the agent and is cheap to make: make one per request, with the request's values.
/// Each run gets its own share of the same values (no copy).
#[derive(Debug)]
#[must_use = "call `run`, `run_in`, `resume`, `resume_in` or a `stream` form on it"]
pub struct AgentWith<'a, M, C> {
    pub(super) agent: &'a Agent<M, C>,
    pub(super) run_context: RunContext,
}

impl<M, C> Agent<M, C> {
    /// This agent, with `run_context` given to the runs started through the handle: every hook
    /// and tool of them reads it ([`Context::get`](crate::Context::get)).
    ///
    /// ```
    /// use hookchain::prelude::*;
    /// use hookchain::{RunContext, tool};
    ///
    /// /// A database handle the application owns.
    /// struct Db {
    ///     greeting: &'static str,
    /// }
    ///
    /// /// Greets someone.
    /// #[tool]
    /// async fn greet(cx: ToolContext<'_>, name: String) -> String {
    ///     let greeting = cx.get::<Db>().map_or("Hello", |db| db.greeting);
    ///     format!("{greeting}, {name}!")
    /// }
    ///
    /// # futures::executor::block_on(async {
    /// let model = ScriptedModel::new([
    ///     ModelResponse::tool_calls([ToolCall::new("c1", "greet", serde_json::json!({"name": "Ada"}))]),
    ///     ModelResponse::text("Done."),
    /// ]);
    /// let agent = Agent::builder(model).tool(greet).build()?;
    /// let db = Db { greeting: "Grüezi" };
    /// // The tool answers "Grüezi, Ada!".
    /// let output = agent.with_context(RunContext::new().with(db)).run("Greet Ada").await?;
    /// assert_eq!(output.text().as_deref(), Some("Done."));
    /// # Ok::<(), hookchain::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn with_context(&self, run_context: RunContext) -> AgentWith<'_, M, C> {
        AgentWith {
            agent: self,
            run_context,
        }
    }
}

impl<M: Model, C: Middleware> AgentWith<'_, M, C> {
    /// [`Agent::run`], with the run context.
    pub async fn run(&self, input: impl IntoRunInput) -> Result<RunOutput, Error> {
        self.agent
            .run_with(self.run_context.clone(), None, input.into_run_input())
            .await
    }

    /// [`Agent::run_in`], with the run context.
    pub async fn run_in(
        &self,
        thread: &mut Thread<C::ThreadState>,
        input: impl IntoRunInput,
    ) -> Result<RunOutput, Error> {
        self.agent
            .run_in_with(
                self.run_context.clone(),
                None,
                thread,
                input.into_run_input(),
            )
            .await
    }

    /// [`Agent::resume`], with the run context: its typed values must be given again (a
    /// checkpoint has none); the paused run's saved values come back, except where the run
    /// context has one of the same key.
    pub async fn resume(
        &self,
        from: impl Into<ResumeFrom>,
        answers: impl IntoIterator<Item = (InterruptId, serde_json::Value)>,
    ) -> Result<RunOutput, Error> {
        self.agent
            .resume_with(self.run_context.clone(), None, from.into(), answers)
            .await
    }

    /// [`Agent::resume_in`], with the run context (see [`resume`](Self::resume)).
    pub async fn resume_in(
        &self,
        thread: &mut Thread<C::ThreadState>,
        from: impl Into<ResumeFrom>,
        answers: impl IntoIterator<Item = (InterruptId, serde_json::Value)>,
    ) -> Result<RunOutput, Error> {
        self.agent
            .resume_in_with(self.run_context.clone(), None, thread, from.into(), answers)
            .await
    }

    /// [`Agent::start_step`], with the run context.
    pub async fn start_step(
        &self,
        key: impl Into<String>,
        input: impl IntoRunInput,
    ) -> Result<RunOutput, Error> {
        self.agent
            .start_step_with(
                self.run_context.clone(),
                None,
                key.into(),
                input.into_run_input(),
            )
            .await
    }

    /// [`Agent::step`], with the run context (see [`resume`](Self::resume)).
    pub async fn step(
        &self,
        key: &str,
        answers: impl IntoIterator<Item = (InterruptId, serde_json::Value)>,
    ) -> Result<RunOutput, Error> {
        let answers = answers.into_iter().collect();
        self.agent
            .step_with(self.run_context.clone(), None, key, answers)
            .await
    }

    /// [`Agent::cancel_step`], with the run context (for the `after_agent` hooks).
    pub async fn cancel_step(&self, key: &str) -> Result<RunOutput, Error> {
        self.agent
            .cancel_step_with(self.run_context.clone(), key)
            .await
    }

    /// The run context given to the runs.
    pub fn run_context(&self) -> &RunContext {
        &self.run_context
    }
}

impl<'a, M: Model, C: Middleware> AgentWith<'a, M, C> {
    /// [`Agent::stream`], with the run context.
    pub fn stream(&self, input: impl IntoRunInput) -> AgentStream<'a> {
        self.agent
            .stream_with(self.run_context.clone(), input.into_run_input())
    }

    /// [`Agent::stream_in`], with the run context.
    pub fn stream_in(
        &self,
        thread: &'a mut Thread<C::ThreadState>,
        input: impl IntoRunInput,
    ) -> AgentStream<'a> {
        self.agent
            .stream_in_with(self.run_context.clone(), thread, input.into_run_input())
    }

    /// [`Agent::stream_resume`], with the run context (see [`resume`](Self::resume)).
    pub fn stream_resume(
        &self,
        from: impl Into<ResumeFrom>,
        answers: impl IntoIterator<Item = (InterruptId, serde_json::Value)>,
    ) -> AgentStream<'a> {
        self.agent
            .stream_resume_with(self.run_context.clone(), from.into(), answers)
    }

    /// [`Agent::stream_resume_in`], with the run context (see [`resume`](Self::resume)).
    pub fn stream_resume_in(
        &self,
        thread: &'a mut Thread<C::ThreadState>,
        from: impl Into<ResumeFrom>,
        answers: impl IntoIterator<Item = (InterruptId, serde_json::Value)>,
    ) -> AgentStream<'a> {
        self.agent
            .stream_resume_in_with(self.run_context.clone(), thread, from.into(), answers)
    }

    /// [`Agent::stream_start_step`], with the run context.
    pub fn stream_start_step(
        &self,
        key: impl Into<String>,
        input: impl IntoRunInput,
    ) -> AgentStream<'a> {
        self.agent.stream_start_step_with(
            self.run_context.clone(),
            key.into(),
            input.into_run_input(),
        )
    }

    /// [`Agent::stream_step`], with the run context (see [`resume`](Self::resume)).
    pub fn stream_step(
        &self,
        key: &'a str,
        answers: impl IntoIterator<Item = (InterruptId, serde_json::Value)>,
    ) -> AgentStream<'a> {
        let answers = answers.into_iter().collect();
        self.agent
            .stream_step_with(self.run_context.clone(), key, answers)
    }
}
