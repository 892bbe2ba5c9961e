//! The owned (`'static`) streamed forms of every entry point: the stream holds its share of
//! the agent (and its thread), so it lives as long as it is read — what a web handler's
//! response body, or a spawned task, needs.

use std::sync::Arc;

use super::{Agent, AgentStream, IntoRunInput, ResumeFrom, RunInput, Thread, ThreadStream};
use crate::context::RunContext;
use crate::interrupt::InterruptId;
use crate::middleware::Middleware;
use crate::model::Model;

/// A resume's answers, collected (so that the caller's iterator need be neither `Send` nor
/// `'static`).
pub(super) type Answers = Vec<(InterruptId, serde_json::Value)>;

impl<M: Model + 'static, C: Middleware + 'static> Agent<M, C> {
    /// [`stream_in`](Self::stream_in) of an agent held in an [`Arc`], in a thread given by
    /// value: the stream owns both, and gives the thread back when the run ends (see
    /// [`ThreadStream`]: updated, or as it was if the stream is dropped before).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use futures::TryStreamExt;
    /// use hookchain::prelude::*;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), hookchain::Error> {
    /// let agent = Arc::new(Agent::builder(ScriptedModel::new([ModelResponse::text("Hello!")])).build()?);
    /// let thread = agent.thread(); // read from the application's store, say
    ///
    /// let mut stream = Arc::clone(&agent).stream_in_owned(thread, "Hi");
    /// let thread = tokio::spawn(async move {
    ///     while let Some(event) = stream.try_next().await? {
    ///         // send it to the client
    /// #       let _ = event;
    ///     }
    ///     Ok::<_, hookchain::Error>(stream.into_thread().await)
    /// })
    /// .await
    /// .unwrap()?;
    /// assert_eq!(thread.messages().len(), 2); // then saved in the application's store
    /// # Ok(())
    /// # }
    /// ```
    pub fn stream_in_owned(
        self: Arc<Self>,
        thread: Thread<C::ThreadState>,
        input: impl IntoRunInput,
    ) -> ThreadStream<C::ThreadState> {
        self.stream_in_owned_with(RunContext::new(), thread, input.into_run_input())
    }

    /// [`stream_resume`](Self::stream_resume) of an agent held in an [`Arc`]: the stream owns
    /// its share of the agent (see [`stream_owned`](Self::stream_owned)).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use futures::TryStreamExt;
    /// use hookchain::prelude::*;
    /// use hookchain::agent::AgentEvent;
    /// use hookchain::{EndReason, chain, hook};
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
    /// let model = ScriptedModel::new([ModelResponse::text("Hello!")]);
    /// let agent = Arc::new(Agent::builder(model).chain(chain![ask]).build()?);
    /// let paused = agent.run("Hi").await?;
    /// let id = paused.interrupts()[0].id.clone();
    ///
    /// let stream = Arc::clone(&agent)
    ///     .stream_resume_owned(paused.checkpoint.unwrap(), [(id, serde_json::json!(true))]);
    /// let events: Vec<AgentEvent> = stream.try_collect().await?;
    /// let Some(AgentEvent::Output(output)) = events.last() else { unreachable!() };
    /// assert_eq!(output.end, EndReason::Finished);
    /// # Ok::<(), hookchain::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn stream_resume_owned(
        self: Arc<Self>,
        from: impl Into<ResumeFrom>,
        answers: impl IntoIterator<Item = (InterruptId, serde_json::Value)>,
    ) -> AgentStream<'static> {
        // Collected now: the answers' iterator need not be `Send`, nor `'static`.
        let answers = answers.into_iter().collect();
        self.stream_resume_owned_with(RunContext::new(), from.into(), answers)
    }

    /// [`stream_resume_in`](Self::stream_resume_in) of an agent held in an [`Arc`], in a thread
    /// given by value: the stream owns both, and gives the thread back when the run ends (see
    /// [`ThreadStream`]).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use futures::StreamExt;
    /// use hookchain::prelude::*;
    /// use hookchain::{chain, hook};
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
    /// let model = ScriptedModel::new([ModelResponse::text("Hello!")]);
    /// let agent = Arc::new(Agent::builder(model).chain(chain![ask]).build()?);
    /// let mut thread = agent.thread();
    /// let paused = agent.run_in(&mut thread, "Hi").await?;
    /// let id = paused.interrupts()[0].id.clone();
    ///
    /// let (events, returned) = Arc::clone(&agent)
    ///     .stream_resume_in_owned(thread, paused.checkpoint.unwrap(), [(id, serde_json::json!(true))])
    ///     .split();
    /// events.for_each(|_| async {}).await; // to the client
    /// let thread = returned.await;
    /// assert!(!thread.is_paused());
    /// assert_eq!(thread.messages().last().unwrap().text(), "Hello!");
    /// # Ok::<(), hookchain::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn stream_resume_in_owned(
        self: Arc<Self>,
        thread: Thread<C::ThreadState>,
        from: impl Into<ResumeFrom>,
        answers: impl IntoIterator<Item = (InterruptId, serde_json::Value)>,
    ) -> ThreadStream<C::ThreadState> {
        let answers = answers.into_iter().collect();
        self.stream_resume_in_owned_with(RunContext::new(), thread, from.into(), answers)
    }

    /// [`stream_start_step`](Self::stream_start_step) of an agent held in an [`Arc`]: the
    /// stream owns its share of the agent (see [`stream_owned`](Self::stream_owned)).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use futures::TryStreamExt;
    /// use hookchain::interrupt::InMemoryCheckpointer;
    /// use hookchain::prelude::*;
    /// use hookchain::agent::AgentEvent;
    /// use hookchain::{Durability, EndReason};
    ///
    /// # futures::executor::block_on(async {
    /// let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("Done.")]))
    ///     .checkpointer(InMemoryCheckpointer::new(), Durability::Pauses)
    ///     .build()?;
    /// let agent = Arc::new(agent);
    /// // The step's events go to the caller's side channel (a browser, say), in any task.
    /// let events: Vec<AgentEvent> =
    ///     Arc::clone(&agent).stream_start_step_owned("order-42", "Go").try_collect().await?;
    /// let Some(AgentEvent::Output(output)) = events.last() else { unreachable!() };
    /// assert_eq!(output.end, EndReason::Finished);
    /// # Ok::<(), hookchain::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn stream_start_step_owned(
        self: Arc<Self>,
        key: impl Into<String>,
        input: impl IntoRunInput,
    ) -> AgentStream<'static> {
        self.stream_start_step_owned_with(RunContext::new(), key.into(), input.into_run_input())
    }

    /// [`stream_step`](Self::stream_step) of an agent held in an [`Arc`]: the stream owns its
    /// share of the agent, and the key (see [`stream_owned`](Self::stream_owned)).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use futures::TryStreamExt;
    /// use hookchain::interrupt::InMemoryCheckpointer;
    /// use hookchain::prelude::*;
    /// use hookchain::agent::AgentEvent;
    /// use hookchain::{Durability, EndReason};
    ///
    /// # futures::executor::block_on(async {
    /// let model = ScriptedModel::new([
    ///     ModelResponse::tool_calls([ToolCall::new("c1", "missing", serde_json::json!({}))]),
    ///     ModelResponse::text("Done."),
    /// ]);
    /// let agent = Arc::new(
    ///     Agent::builder(model)
    ///         .checkpointer(InMemoryCheckpointer::new(), Durability::Pauses)
    ///         .build()?,
    /// );
    /// let output = agent.start_step("order-42", "Go").await?;
    /// assert_eq!(output.end, EndReason::Stepped);
    ///
    /// // The key is owned by the stream: a key read from a request will do.
    /// let key = String::from("order-42");
    /// let events: Vec<AgentEvent> =
    ///     Arc::clone(&agent).stream_step_owned(key, []).try_collect().await?;
    /// let Some(AgentEvent::Output(output)) = events.last() else { unreachable!() };
    /// assert_eq!(output.text().as_deref(), Some("Done."));
    /// # Ok::<(), hookchain::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn stream_step_owned(
        self: Arc<Self>,
        key: impl Into<String>,
        answers: impl IntoIterator<Item = (InterruptId, serde_json::Value)>,
    ) -> AgentStream<'static> {
        let answers = answers.into_iter().collect();
        self.stream_step_owned_with(RunContext::new(), key.into(), answers)
    }

    /// [`stream_in_owned`](Self::stream_in_owned), with `run_context` given to the run.
    pub(super) fn stream_in_owned_with(
        self: Arc<Self>,
        run_context: RunContext,
        thread: Thread<C::ThreadState>,
        input: RunInput,
    ) -> ThreadStream<C::ThreadState> {
        ThreadStream::new(thread, move |queue, mut keeper| async move {
            self.run_in_with(run_context, Some(queue), keeper.thread(), input)
                .await
        })
    }

    /// [`stream_resume_owned`](Self::stream_resume_owned), with `run_context` given to the run.
    pub(super) fn stream_resume_owned_with(
        self: Arc<Self>,
        run_context: RunContext,
        from: ResumeFrom,
        answers: Answers,
    ) -> AgentStream<'static> {
        AgentStream::new(move |queue| async move {
            self.resume_with(run_context, Some(queue), from, answers)
                .await
        })
    }

    /// [`stream_resume_in_owned`](Self::stream_resume_in_owned), with `run_context` given to
    /// the run.
    pub(super) fn stream_resume_in_owned_with(
        self: Arc<Self>,
        run_context: RunContext,
        thread: Thread<C::ThreadState>,
        from: ResumeFrom,
        answers: Answers,
    ) -> ThreadStream<C::ThreadState> {
        ThreadStream::new(thread, move |queue, mut keeper| async move {
            self.resume_in_with(run_context, Some(queue), keeper.thread(), from, answers)
                .await
        })
    }

    /// [`stream_start_step_owned`](Self::stream_start_step_owned), with `run_context` given to
    /// the step.
    pub(super) fn stream_start_step_owned_with(
        self: Arc<Self>,
        run_context: RunContext,
        key: String,
        input: RunInput,
    ) -> AgentStream<'static> {
        AgentStream::new(move |queue| async move {
            self.start_step_with(run_context, Some(queue), key, input)
                .await
        })
    }

    /// [`stream_step_owned`](Self::stream_step_owned), with `run_context` given to the step.
    pub(super) fn stream_step_owned_with(
        self: Arc<Self>,
        run_context: RunContext,
        key: String,
        answers: Answers,
    ) -> AgentStream<'static> {
        AgentStream::new(move |queue| async move {
            self.step_with(run_context, Some(queue), &key, answers)
                .await
        })
    }
}
