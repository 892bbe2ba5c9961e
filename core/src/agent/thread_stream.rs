//! [`ThreadStream`]: a streamed run in a thread the stream owns, and [`ThreadReturn`], which
//! gives the thread back once the run is over.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context as TaskContext, Poll, Waker};

use futures::Stream;
use futures::stream::FusedStream;

use super::{AgentEvent, AgentStream, RunOutput, Thread, ThreadId};
use crate::error::Error;
use crate::run::EventQueue;

/// A streamed run in a [`Thread`] it owns, made by
/// [`Agent::stream_in_owned`](crate::Agent::stream_in_owned) and
/// [`Agent::stream_resume_in_owned`](crate::Agent::stream_resume_in_owned): `Send` and
/// `'static`, so a web handler can return it as a response body or spawn it, and save the
/// thread once the run is over.
///
/// Its items are an [`AgentStream`]'s, and the run goes on only while they are read, as
/// there. The thread comes back through a [`ThreadReturn`]: [`split`](Self::split) the stream
/// into its events and the return (the events for the response body, the return for whoever
/// saves the thread), or call [`into_thread`](Self::into_thread) once the events are read.
///
/// The thread comes back as the borrowed forms
/// ([`Agent::stream_in`](crate::Agent::stream_in)) leave theirs: updated (the run's messages,
/// thread-scoped state, the pause it waits on) once the run has ended or paused; as it was
/// before the run, but for what the run spent ([`Thread::spent`]), if the stream is dropped
/// (or [`into_thread`](Self::into_thread) called) before — nothing more of the run runs then.
#[must_use = "a stream does nothing unless polled"]
pub struct ThreadStream<S> {
    events: AgentStream<'static>,
    thread: ThreadReturn<S>,
}

impl<S: Default + Send + 'static> ThreadStream<S> {
    /// The stream of the run `start` makes in `thread`, given the queue its events go to and
    /// the keeper that holds the thread while the run has it.
    pub(super) fn new<F>(
        thread: Thread<S>,
        start: impl FnOnce(Arc<EventQueue>, Keeper<S>) -> F,
    ) -> Self
    where
        F: Future<Output = Result<RunOutput, Error>> + Send + 'static,
    {
        let returned = Arc::new(Returned::default());
        let keeper = Keeper {
            thread,
            returned: Arc::clone(&returned),
        };
        ThreadStream {
            events: AgentStream::new(|queue| start(queue, keeper)),
            thread: ThreadReturn { returned },
        }
    }
}

impl<S> ThreadStream<S> {
    /// The run's events, and the return of its thread: hand the events to whoever reads them
    /// (a response body), and await the thread where it is saved. The thread comes back when
    /// the run ends or pauses (before its last events are read), or when the events are
    /// dropped (see [`ThreadStream`]).
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
    /// let (events, returned) = Arc::clone(&agent).stream_in_owned(thread, "Hi").split();
    /// // The events go to the client (a server-sent-events body, say), read by another task.
    /// let body = tokio::spawn(events.try_collect::<Vec<_>>());
    /// let thread = returned.await; // then saved in the application's store
    /// assert_eq!(thread.messages().len(), 2);
    /// assert!(body.await.unwrap()?.last().is_some());
    /// # Ok(())
    /// # }
    /// ```
    pub fn split(self) -> (AgentStream<'static>, ThreadReturn<S>) {
        (self.events, self.thread)
    }

    /// The thread back: awaited, once the stream has ended, it is the thread the run left. A
    /// run still going ends here, as when the stream is dropped (see [`ThreadStream`]), and the
    /// thread comes back at once.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use futures::TryStreamExt;
    /// use hookchain::prelude::*;
    ///
    /// # futures::executor::block_on(async {
    /// let agent = Arc::new(Agent::builder(ScriptedModel::new([ModelResponse::text("Hello!")])).build()?);
    /// let mut stream = Arc::clone(&agent).stream_in_owned(agent.thread(), "Hi");
    /// while let Some(event) = stream.try_next().await? {
    ///     // send it to the client
    /// #   let _ = event;
    /// }
    /// let thread = stream.into_thread().await;
    /// assert_eq!(thread.messages().len(), 2); // "Hi", "Hello!"
    /// # Ok::<(), hookchain::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn into_thread(self) -> ThreadReturn<S> {
        // Dropping the events drops the run, whose keeper gives the thread back.
        drop(self.events);
        self.thread
    }
}

impl<S> Stream for ThreadStream<S> {
    type Item = Result<AgentEvent, Error>;

    fn poll_next(self: Pin<&mut Self>, task: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        Pin::new(&mut self.get_mut().events).poll_next(task)
    }
}

/// What an awaited stream would have to be, and a [`ThreadStream`] is not: implemented by no
/// stream of a run. A `ThreadStream` is read event by event and its thread taken back with
/// [`into_thread`](ThreadStream::into_thread); `agent.stream_in_owned(thread, input).await` is
/// refused with a message of ours naming that (the same device as
/// [`AwaitableStream`](super::AwaitableStream)'s).
#[diagnostic::on_unimplemented(
    message = "a thread's stream is read event by event, not awaited",
    label = "not a future: read its events, then take the thread back with `into_thread`",
    note = "read the events with `futures::StreamExt`: `while let Some(event) = stream.next().await {{ .. }}`, \
            then `let thread = stream.into_thread().await;`; for the output alone, \
            `agent.run_in(&mut thread, input).await?`"
)]
pub trait AwaitableThreadStream: super::stream::Unawaitable {}

/// Never holds (no stream is [`AwaitableThreadStream`]): only here so that awaiting a
/// `ThreadStream` names the fix. Its output lets a `?` after the `.await` type-check, so the
/// mistake is one error.
#[doc(hidden)]
impl<S> Future for ThreadStream<S>
where
    (ThreadStream<S>,): AwaitableThreadStream,
{
    type Output = Result<ThreadStream<S>, Error>;

    fn poll(self: Pin<&mut Self>, _: &mut TaskContext<'_>) -> Poll<Self::Output> {
        unreachable!("no `ThreadStream` is an `AwaitableThreadStream`")
    }
}

impl<S> FusedStream for ThreadStream<S> {
    fn is_terminated(&self) -> bool {
        self.events.is_terminated()
    }
}

impl<S> fmt::Debug for ThreadStream<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ThreadStream")
            .field("events", &self.events)
            .finish_non_exhaustive()
    }
}

/// The [`Thread`] of a [`ThreadStream`], coming back: a future that resolves to the thread
/// once its run has ended or paused, or its stream was dropped (see [`ThreadStream`]).
///
/// It resolves to the thread once; it never resolves while the run goes on and its events
/// are neither read nor dropped (a stream forgotten keeps its thread).
#[must_use = "the thread comes back only to whoever awaits it"]
pub struct ThreadReturn<S> {
    returned: Arc<Returned<S>>,
}

impl<S> Future for ThreadReturn<S> {
    type Output = Thread<S>;

    fn poll(self: Pin<&mut Self>, task: &mut TaskContext<'_>) -> Poll<Thread<S>> {
        let mut returned = self.returned.lock();
        match returned.thread.take() {
            Some(thread) => Poll::Ready(thread),
            None => {
                returned.waker = Some(task.waker().clone());
                Poll::Pending
            }
        }
    }
}

impl<S> fmt::Debug for ThreadReturn<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ThreadReturn")
            .field("returned", &self.returned.lock().thread.is_some())
            .finish()
    }
}

/// Where a run puts its thread back, and who waits for it.
struct Returned<S> {
    state: Mutex<ReturnedState<S>>,
}

struct ReturnedState<S> {
    thread: Option<Thread<S>>,
    waker: Option<Waker>,
}

impl<S> Default for Returned<S> {
    fn default() -> Self {
        Returned {
            state: Mutex::new(ReturnedState {
                thread: None,
                waker: None,
            }),
        }
    }
}

impl<S> Returned<S> {
    fn lock(&self) -> MutexGuard<'_, ReturnedState<S>> {
        // Nothing panics while holding the lock: a poisoned state is still consistent.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Holds a [`ThreadStream`]'s thread while its run has it, and gives it back when dropped —
/// with the run's future, whether the run ended or not: the run borrows the thread from it, so
/// whatever the run leaves there (an updated thread, or the thread as it was with what the run
/// spent charged) is what comes back.
pub(super) struct Keeper<S: Default> {
    thread: Thread<S>,
    returned: Arc<Returned<S>>,
}

impl<S: Default> Keeper<S> {
    /// The thread, for the run.
    pub(super) fn thread(&mut self) -> &mut Thread<S> {
        &mut self.thread
    }
}

impl<S: Default> Drop for Keeper<S> {
    fn drop(&mut self) {
        // An empty stand-in takes the thread's place (one small allocation per run, for its
        // empty history); it is dropped with the keeper.
        let thread = std::mem::replace(
            &mut self.thread,
            Thread::with_id(ThreadId::new(String::new())),
        );
        let waker = {
            let mut returned = self.returned.lock();
            returned.thread = Some(thread);
            returned.waker.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}
