//! Streamed runs: the same runs as [`Agent::run`] and its forms, yielding [`AgentEvent`]s as
//! they happen.

use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};

use futures::Stream;
use futures::stream::FusedStream;

use super::{Agent, AgentEvent, IntoRunInput, ResumeFrom, RunInput, RunOutput, Thread};
use crate::context::RunContext;
use crate::error::Error;
use crate::interrupt::InterruptId;
use crate::middleware::Middleware;
use crate::model::Model;
use crate::run::EventQueue;

/// A run's future, boxed: one allocation per run keeps [`AgentStream`] nameable.
type RunFuture<'a> = Pin<Box<dyn Future<Output = Result<RunOutput, Error>> + Send + 'a>>;

/// A streamed run: a [`Stream`] of [`AgentEvent`]s, ending with
/// [`AgentEvent::Output`] or an error (then nothing more).
///
/// The run makes progress only while the stream is polled, and never more than one event
/// ahead of what the consumer took — but for the model's answer, read up to 8 events ahead
/// (through the per-event hooks) to hand them over together; nothing is spawned. Dropping
/// the stream drops the run at that point: nothing more runs (no other hook, no tool, no
/// `after_agent`), and a
/// [`Thread`] is left as it was before the run. Consume it with `futures`' `StreamExt` (or
/// `TryStreamExt`: the items are `Result`s).
#[must_use = "a stream does nothing unless polled"]
pub struct AgentStream<'a> {
    run: Option<RunFuture<'a>>,
    queue: Arc<EventQueue>,
    /// Events taken from the queue and not yet handed over: the queue is locked once for a
    /// batch of events, not for each.
    taken: VecDeque<AgentEvent>,
    /// The last item, once the run has ended: yielded after the events still queued.
    last: Option<Result<AgentEvent, Error>>,
}

impl<'a> AgentStream<'a> {
    /// The stream of the run `start` makes, given the queue its events go to.
    pub(super) fn new<F>(start: impl FnOnce(Arc<EventQueue>) -> F) -> Self
    where
        F: Future<Output = Result<RunOutput, Error>> + Send + 'a,
    {
        let queue = Arc::new(EventQueue::default());
        Self {
            run: Some(Box::pin(start(Arc::clone(&queue)))),
            queue,
            taken: VecDeque::new(),
            last: None,
        }
    }
}

impl Stream for AgentStream<'_> {
    type Item = Result<AgentEvent, Error>;

    fn poll_next(self: Pin<&mut Self>, task: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        // The run is polled only once its consumer has taken every event (see `EventQueue`).
        if let Some(event) = this.next_event() {
            return Poll::Ready(Some(Ok(event)));
        }
        if let Some(run) = &mut this.run {
            match run.as_mut().poll(task) {
                Poll::Pending => {
                    return this
                        .next_event()
                        .map_or(Poll::Pending, |event| Poll::Ready(Some(Ok(event))));
                }
                Poll::Ready(result) => {
                    this.run = None;
                    this.last = Some(result.map(|output| AgentEvent::Output(Box::new(output))));
                    if let Some(event) = this.next_event() {
                        return Poll::Ready(Some(Ok(event)));
                    }
                }
            }
        }
        Poll::Ready(this.last.take())
    }
}

impl AgentStream<'_> {
    /// The next event the run queued, if any.
    #[inline(always)]
    fn next_event(&mut self) -> Option<AgentEvent> {
        if self.taken.is_empty() {
            self.queue.take_into(&mut self.taken);
        }
        self.taken.pop_front()
    }
}

impl FusedStream for AgentStream<'_> {
    fn is_terminated(&self) -> bool {
        self.run.is_none() && self.last.is_none() && self.taken.is_empty() && self.queue.is_empty()
    }
}

/// What an awaited stream would have to be, and an [`AgentStream`] is not: implemented by no
/// stream of a run. An `AgentStream` is read event by event (`StreamExt::next`,
/// `TryStreamExt::try_next`), not awaited; `agent.stream(input).await` is refused with a message
/// of ours naming the fix rather than std's "is not a future". (`AgentStream` has a `Future`
/// impl that requires this trait of the stream in a one-element tuple, which never holds: a
/// bound on the stream itself would be reported in std's words.)
#[diagnostic::on_unimplemented(
    message = "an agent's stream is read event by event, not awaited",
    label = "not a future: read its events, or call `run`",
    note = "read the events with `futures::StreamExt`: `while let Some(event) = stream.next().await {{ .. }}` \
            (each a `Result`; `TryStreamExt::try_next` takes the `?`); for the output alone, \
            `agent.run(input).await?`"
)]
pub trait AwaitableStream: awaitable::Sealed {}

mod awaitable {
    /// Implemented by nothing: no type outside this crate can be an `AwaitableStream` or an
    /// `AwaitableThreadStream`.
    pub trait Sealed {}
}

pub(super) use awaitable::Sealed as Unawaitable;

/// Never holds (no stream is [`AwaitableStream`]): only here so that awaiting an `AgentStream`
/// names the fix. Its output lets the `?` that usually follows the `.await` type-check, so the
/// mistake is one error.
#[doc(hidden)]
impl<'a> Future for AgentStream<'a>
where
    (AgentStream<'a>,): AwaitableStream,
{
    type Output = Result<AgentStream<'a>, Error>;

    fn poll(self: Pin<&mut Self>, _: &mut TaskContext<'_>) -> Poll<Self::Output> {
        unreachable!("no `AgentStream` is an `AwaitableStream`")
    }
}

impl fmt::Debug for AgentStream<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentStream")
            .field("running", &self.run.is_some())
            .finish_non_exhaustive()
    }
}

impl<M: Model, C: Middleware> Agent<M, C> {
    /// [`run`](Self::run), streamed: the run's events as they happen, the model's answer token
    /// by token, ending with its output.
    ///
    /// The middleware act on a streamed run as on any other (see *Streaming* in
    /// [`middleware`](crate::middleware)): the consumer receives what enters the history, never
    /// what a hook would have changed.
    ///
    /// ```
    /// use futures::TryStreamExt;
    /// use hookchain::prelude::*;
    /// use hookchain::agent::AgentEvent;
    ///
    /// # futures::executor::block_on(async {
    /// let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("Hello!")])).build()?;
    /// let mut stream = agent.stream("Hi");
    /// let mut shown = String::new();
    /// while let Some(event) = stream.try_next().await? {
    ///     if let Some(text) = event.text_delta() {
    ///         shown.push_str(text); // print it, send it to a browser, …
    ///     }
    ///     if let AgentEvent::Output(output) = event {
    ///         assert_eq!(output.text().as_deref(), Some("Hello!"));
    ///     }
    /// }
    /// assert_eq!(shown, "Hello!");
    /// # Ok::<(), hookchain::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn stream(&self, input: impl IntoRunInput) -> AgentStream<'_> {
        self.stream_with(RunContext::new(), input.into_run_input())
    }

    /// [`stream`](Self::stream) of an agent held in an [`Arc`]: the stream owns its share of
    /// the agent, so it lives as long as it is read — what a web handler returns (a
    /// server-sent-events body, say) needs.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use futures::StreamExt;
    /// use hookchain::prelude::*;
    ///
    /// fn events(agent: &Arc<Agent<ScriptedModel>>) -> impl futures::Stream + Send + 'static {
    ///     Arc::clone(agent).stream_owned("Hi")
    /// }
    ///
    /// # futures::executor::block_on(async {
    /// let agent = Arc::new(Agent::builder(ScriptedModel::new([ModelResponse::text("Hello!")])).build()?);
    /// let items = events(&agent).count().await;
    /// assert_eq!(items, 5); // the text, usage, finish, the message, the output
    /// # Ok::<(), hookchain::agent::AgentBuildError>(())
    /// # }).unwrap();
    /// ```
    pub fn stream_owned(self: Arc<Self>, input: impl IntoRunInput) -> AgentStream<'static>
    where
        M: 'static,
        C: 'static,
    {
        self.stream_owned_with(RunContext::new(), input.into_run_input())
    }

    /// [`stream_owned`](Self::stream_owned), with `run_context` given to the run.
    pub(super) fn stream_owned_with(
        self: Arc<Self>,
        run_context: RunContext,
        input: RunInput,
    ) -> AgentStream<'static>
    where
        M: 'static,
        C: 'static,
    {
        AgentStream::new(move |queue| async move {
            self.run_with(run_context, Some(queue), input).await
        })
    }

    /// [`stream`](Self::stream), with `run_context` given to the run.
    pub(super) fn stream_with(&self, run_context: RunContext, input: RunInput) -> AgentStream<'_> {
        AgentStream::new(|queue| self.run_with(run_context, Some(queue), input))
    }

    /// [`run_in`](Self::run_in), streamed (see [`stream`](Self::stream)). The thread changes
    /// only when the run ends or pauses: a stream dropped before leaves it as it was.
    pub fn stream_in<'a>(
        &'a self,
        thread: &'a mut Thread<C::ThreadState>,
        input: impl IntoRunInput,
    ) -> AgentStream<'a> {
        self.stream_in_with(RunContext::new(), thread, input.into_run_input())
    }

    /// [`stream_in`](Self::stream_in), with `run_context` given to the run.
    pub(super) fn stream_in_with<'a>(
        &'a self,
        run_context: RunContext,
        thread: &'a mut Thread<C::ThreadState>,
        input: RunInput,
    ) -> AgentStream<'a> {
        AgentStream::new(|queue| self.run_in_with(run_context, Some(queue), thread, input))
    }

    /// [`resume`](Self::resume), streamed (see [`stream`](Self::stream)).
    pub fn stream_resume(
        &self,
        from: impl Into<ResumeFrom>,
        answers: impl IntoIterator<Item = (InterruptId, serde_json::Value)>,
    ) -> AgentStream<'_> {
        self.stream_resume_with(RunContext::new(), from.into(), answers)
    }

    /// [`stream_resume`](Self::stream_resume), with `run_context` given to the run.
    pub(super) fn stream_resume_with(
        &self,
        run_context: RunContext,
        from: ResumeFrom,
        answers: impl IntoIterator<Item = (InterruptId, serde_json::Value)>,
    ) -> AgentStream<'_> {
        // Collected now: the answers' iterator need not be `Send`.
        let answers: Vec<_> = answers.into_iter().collect();
        AgentStream::new(|queue| self.resume_with(run_context, Some(queue), from, answers))
    }

    /// [`resume_in`](Self::resume_in), streamed (see [`stream`](Self::stream)).
    pub fn stream_resume_in<'a>(
        &'a self,
        thread: &'a mut Thread<C::ThreadState>,
        from: impl Into<ResumeFrom>,
        answers: impl IntoIterator<Item = (InterruptId, serde_json::Value)>,
    ) -> AgentStream<'a> {
        self.stream_resume_in_with(RunContext::new(), thread, from.into(), answers)
    }

    /// [`stream_resume_in`](Self::stream_resume_in), with `run_context` given to the run.
    pub(super) fn stream_resume_in_with<'a>(
        &'a self,
        run_context: RunContext,
        thread: &'a mut Thread<C::ThreadState>,
        from: ResumeFrom,
        answers: impl IntoIterator<Item = (InterruptId, serde_json::Value)>,
    ) -> AgentStream<'a> {
        let answers: Vec<_> = answers.into_iter().collect();
        AgentStream::new(|queue| {
            self.resume_in_with(run_context, Some(queue), thread, from, answers)
        })
    }
}
