//! A minimal executor: polls a future on this thread with a no-op waker.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

/// Runs `future` to completion on this thread. Allocates nothing and sets nothing up, so a
/// benchmark of `run(call())` measures the call.
#[inline]
pub fn run<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
        // Nothing measured here ever returns `Pending`; stay correct if something does.
        std::thread::yield_now();
    }
}

/// Runs `future` to completion on this thread, polling it again at once when it returns
/// `Pending`: for futures that wake themselves and are ready when polled again (a streamed
/// run hands over one event per poll), so that what is measured is theirs, not a yield.
#[inline]
pub fn spin<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
    }
}
