//! [`Leased`]: the loop's future, holding its run's lease.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};

use super::durable::ReleaseOnDrop;
use super::run_loop::Ending;
use crate::error::Error;

/// The future renewing a run's lease: it ends only when the lease is lost, with the error that
/// ends the run. Boxed: a run that keeps nothing has none, and the loop's future nests no deeper
/// for it.
pub(super) type Renewing<'a> = Pin<Box<dyn Future<Output = Error> + Send + 'a>>;

pin_project_lite::pin_project! {
    /// The loop's future `run`, with its run's lease, if the agent keeps its runs: renewed while
    /// the run goes on (the run stops, with the store's error, if the lease is lost), and
    /// released if this future is dropped before the run settled. A struct, not an `async fn`:
    /// every state machine between a run and its deepest wrap hook counts against the
    /// compiler's query depth (see `Agent::go`).
    pub(super) struct Leased<'a, F> {
        #[pin]
        run: F,
        renewing: Option<Renewing<'a>>,
        release: Option<ReleaseOnDrop>,
        // Whether the run gave way once, for its renewals' task to start.
        yielded: bool,
    }
}

impl<'a, F> Leased<'a, F> {
    /// `run`, renewing its lease with `renewing` and releasing it with `release` if dropped.
    pub(super) fn new(run: F, lease: Option<(Renewing<'a>, ReleaseOnDrop)>) -> Self {
        let (renewing, release) = lease.unzip();
        Leased {
            run,
            renewing,
            release,
            yielded: false,
        }
    }
}

impl<F: Future<Output = Result<Ending, Error>>> Future for Leased<'_, F> {
    type Output = Result<Ending, Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        let this = self.project();
        if this.renewing.is_some() && !*this.yielded {
            // The renewals' task was just spawned from this one, into the slot of this thread
            // that no other thread takes from: were the run to go on to a tool that blocks this
            // thread, the renewals would never start. Giving way once lets them start (here,
            // or on another thread).
            *this.yielded = true;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        // The renewals first: a run whose lease is lost goes no further (not into another tool
        // call). They never report a loss once the run writes its end (`LeaseWatch::settle`).
        if let Some(renewing) = this.renewing
            && let Poll::Ready(lost) = renewing.as_mut().poll(cx)
        {
            // The run stops here: another worker has its key. Nothing of ours to release.
            *this.renewing = None;
            if let Some(release) = this.release.take() {
                release.disarm();
            }
            return Poll::Ready(Err(lost));
        }
        let ending = std::task::ready!(this.run.poll(cx));
        // The run settled: the loop released or ended its key itself.
        if let Some(release) = this.release.take() {
            release.disarm();
        }
        Poll::Ready(ending)
    }
}
