//! A worker's future polled to a chosen await point, then handed back to die there.

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

/// A future as a worker runs it: boxed, `Send`, so that it can be dropped on another thread.
pub(crate) type Work<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// How many more times the worker's futures may return `Pending` before the worker dies, and
/// how many times they did: shared by the futures a worker runs one after the other (the legs
/// of a run: a run to its pause, then its resume), so that point k may fall in any of them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Budget {
    left: Option<usize>,
    /// How many times the futures returned `Pending` so far.
    pub(crate) pendings: usize,
}

impl Budget {
    /// A worker that never dies.
    pub(crate) fn unlimited() -> Self {
        Budget {
            left: None,
            pendings: 0,
        }
    }

    /// A worker that dies after its futures returned `Pending` `k` times (before the next poll;
    /// `k = 0`: before the first).
    pub(crate) fn dies_after(k: usize) -> Self {
        Budget {
            left: Some(k),
            pendings: 0,
        }
    }

    /// `dies_after(k)` for `Some(k)`, else unlimited.
    pub(crate) fn of(k: Option<usize>) -> Self {
        k.map_or_else(Self::unlimited, Self::dies_after)
    }
}

/// What became of a future driven with a [`Budget`].
pub(crate) enum Polled<'a, T> {
    /// It completed.
    Ready(T),
    /// The budget ran out: the future, still pending, at the point where its worker dies.
    Cut(Work<'a, T>),
}

/// Polls `work` until it completes or `budget` runs out (then hands it back, not dropped).
pub(crate) async fn drive<'a, T>(budget: &mut Budget, work: Work<'a, T>) -> Polled<'a, T> {
    let mut work = Some(work);
    std::future::poll_fn(move |cx| {
        if budget.left == Some(0) {
            return Poll::Ready(Polled::Cut(work.take().expect("polled after it was cut")));
        }
        let future = work.as_mut().expect("polled after it completed");
        match future.as_mut().poll(cx) {
            Poll::Ready(output) => Poll::Ready(Polled::Ready(output)),
            Poll::Pending => {
                budget.pendings += 1;
                if let Some(left) = &mut budget.left {
                    *left -= 1;
                }
                Poll::Pending
            }
        }
    })
    .await
}

/// How a worker whose future was cut dies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Death {
    /// The future is dropped in the runtime: the run's drop guard releases its key (a client
    /// that went away, a timeout).
    Released,
    /// The future is dropped on a thread outside any tokio runtime: nothing releases the key,
    /// the lease has to expire (a process that died; its renewals stop with it).
    Dead,
}

impl Death {
    /// Drops `work` as this death says.
    pub(crate) fn drop_work<T>(self, work: Work<'_, T>) {
        match self {
            Death::Released => drop(work),
            Death::Dead => std::thread::scope(|scope| {
                scope
                    .spawn(move || drop(work))
                    .join()
                    .expect("dropping the worker's future panicked");
            }),
        }
    }
}
