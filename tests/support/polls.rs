//! Futures stopped at a chosen poll, and a point where one can be: a worker dying anywhere.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};

/// Pending once (waking itself), then ready: a point where a run's worker can stop.
pub(crate) struct YieldOnce(bool);

impl YieldOnce {
    pub(crate) fn new() -> Self {
        YieldOnce(false)
    }
}

impl Future for YieldOnce {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<()> {
        if self.0 {
            return Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

/// `future`, polled at most `polls` times: `None` if it was still running then (its worker
/// stopped there, and the future is dropped).
pub(crate) async fn stopped_after<F: Future>(polls: usize, future: F) -> Option<F::Output> {
    let mut future = std::pin::pin!(future);
    let mut left = polls;
    std::future::poll_fn(move |cx| {
        if left == 0 {
            return Poll::Ready(None);
        }
        left -= 1;
        future.as_mut().poll(cx).map(Some)
    })
    .await
}
