//! The events of one run, kept for the clients that read them: each gets a number, a client
//! that reconnects (`Last-Event-ID`) reads those after the last it saw, then the rest as they
//! come. The run writes at its own pace, never waiting for a reader; what is kept is bounded,
//! by count and by bytes.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use futures::Stream;
use tokio::sync::Notify;

/// One event, encoded, with its number (from 1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Frame {
    pub(crate) seq: u64,
    pub(crate) data: Arc<str>,
}

#[derive(Debug)]
struct Kept {
    frames: VecDeque<Frame>,
    /// The number the next event gets.
    next: u64,
    /// The run wrote its last event.
    ended: bool,
    /// The most events kept: past it, the oldest are dropped.
    capacity: usize,
    /// The bytes of the events kept.
    bytes: usize,
    /// The most bytes kept: past it, the oldest are dropped (the newest is always kept).
    max_bytes: usize,
}

/// Why a reader cannot read from where it asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the run's events after #{after} are no longer kept (the oldest kept is #{oldest})")]
pub(crate) struct Gone {
    pub(crate) after: u64,
    pub(crate) oldest: u64,
}

/// A run's events.
#[derive(Debug)]
pub(crate) struct RunLog {
    kept: Mutex<Kept>,
    changed: Notify,
}

impl RunLog {
    /// A log keeping at most `capacity` events (at least one), of at most `max_bytes` in all
    /// (but always the newest).
    pub(crate) fn new(capacity: usize, max_bytes: usize) -> Self {
        Self {
            kept: Mutex::new(Kept {
                frames: VecDeque::new(),
                next: 1,
                ended: false,
                capacity: capacity.max(1),
                bytes: 0,
                max_bytes,
            }),
            changed: Notify::new(),
        }
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, Kept> {
        // Nothing panics while holding the lock: a poisoned log is still consistent.
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Adds an event; its number.
    pub(crate) fn push(&self, data: impl Into<Arc<str>>) -> u64 {
        let seq = {
            let mut kept = self.kept();
            let seq = kept.next;
            kept.next += 1;
            let data: Arc<str> = data.into();
            kept.bytes += data.len();
            kept.frames.push_back(Frame { seq, data });
            while kept.frames.len() > kept.capacity
                || (kept.bytes > kept.max_bytes && kept.frames.len() > 1)
            {
                if let Some(dropped) = kept.frames.pop_front() {
                    kept.bytes -= dropped.data.len();
                }
            }
            seq
        };
        self.changed.notify_waiters();
        seq
    }

    /// The run wrote its last event: readers end once they read it.
    pub(crate) fn end(&self) {
        self.kept().ended = true;
        self.changed.notify_waiters();
    }

    /// The event after `after` (the first kept when 0), `Ok(None)` at the end of an ended run,
    /// `Err` when it is no longer kept; waits while the run has not written it yet.
    async fn next_after(&self, after: u64) -> Result<Option<Frame>, Gone> {
        loop {
            // Registered before the state is read, so that a push in between wakes it.
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            {
                let kept = self.kept();
                let oldest = kept.frames.front().map_or(kept.next, |frame| frame.seq);
                if after + 1 < oldest && after + 1 < kept.next {
                    return Err(Gone { after, oldest });
                }
                if let Some(frame) = kept.frames.get((after + 1 - oldest) as usize) {
                    return Ok(Some(frame.clone()));
                }
                if kept.ended {
                    return Ok(None);
                }
            }
            changed.await;
        }
    }

    /// The events after `after` (0: from the first), then the rest as the run writes them,
    /// until its end. `Err` at once when the events after `after` are no longer kept; a reader
    /// that falls so far behind that the events it needs are dropped stops there (and may
    /// reconnect, to be told so).
    pub(crate) fn follow(
        self: Arc<Self>,
        after: u64,
    ) -> Result<impl Stream<Item = Frame> + Send + 'static, Gone> {
        {
            let kept = self.kept();
            let oldest = kept.frames.front().map_or(kept.next, |frame| frame.seq);
            if after + 1 < oldest && after + 1 < kept.next {
                return Err(Gone { after, oldest });
            }
        }
        Ok(futures::stream::unfold(
            (self, after),
            |(log, after)| async move {
                let frame = log.next_after(after).await.ok()??;
                let seq = frame.seq;
                Some((frame, (log, seq)))
            },
        ))
    }
}

#[cfg(test)]
mod tests {
    use futures::StreamExt;

    use super::*;

    fn data(frames: &[Frame]) -> Vec<&str> {
        frames.iter().map(|frame| &*frame.data).collect()
    }

    #[tokio::test]
    async fn a_reader_gets_what_was_written_then_what_comes_and_ends_with_the_run() {
        let log = Arc::new(RunLog::new(100, 1 << 20));
        log.push("a");
        log.push("b");
        let reader = tokio::spawn(Arc::clone(&log).follow(0).unwrap().collect::<Vec<_>>());
        tokio::task::yield_now().await;
        log.push("c");
        log.end();
        let frames = reader.await.unwrap();
        assert_eq!(data(&frames), ["a", "b", "c"]);
        assert_eq!(frames[2].seq, 3);
        // A reconnecting reader starts after the last it saw.
        let again: Vec<_> = Arc::clone(&log).follow(2).unwrap().collect().await;
        assert_eq!(data(&again), ["c"]);
        let none: Vec<_> = Arc::clone(&log).follow(3).unwrap().collect().await;
        assert!(none.is_empty());
        assert!(log.kept().ended);
    }

    #[tokio::test]
    async fn what_is_kept_is_bounded_and_a_reader_too_far_behind_is_told() {
        let log = Arc::new(RunLog::new(3, 1 << 20));
        for event in ["a", "b", "c", "d", "e"] {
            log.push(event);
        }
        log.end();
        assert_eq!(log.kept().frames.len(), 3);
        assert_eq!(
            Arc::clone(&log).follow(0).err(),
            Some(Gone {
                after: 0,
                oldest: 3
            })
        );
        let frames: Vec<_> = Arc::clone(&log).follow(2).unwrap().collect().await;
        assert_eq!(data(&frames), ["c", "d", "e"]);
    }

    #[tokio::test]
    async fn what_is_kept_is_bounded_by_bytes_too_and_the_newest_is_always_kept() {
        let log = Arc::new(RunLog::new(100, 10));
        for event in ["aaaa", "bbbb", "cccc"] {
            log.push(event);
        }
        assert_eq!(
            data(&log.kept().frames.iter().cloned().collect::<Vec<_>>()),
            ["bbbb", "cccc"]
        );
        assert_eq!(log.kept().bytes, 8);
        log.push("a long event, larger than the bound");
        assert_eq!(log.kept().frames.len(), 1);
        log.end();
        assert_eq!(
            Arc::clone(&log).follow(0).err(),
            Some(Gone {
                after: 0,
                oldest: 4
            })
        );
    }

    #[tokio::test]
    async fn a_slow_reader_whose_events_were_dropped_stops_instead_of_skipping_them() {
        let log = Arc::new(RunLog::new(2, 1 << 20));
        log.push("a");
        let mut reader = Arc::clone(&log).follow(0).unwrap().boxed();
        assert_eq!(&*reader.next().await.unwrap().data, "a");
        for event in ["b", "c", "d"] {
            log.push(event);
        }
        log.end();
        assert_eq!(reader.next().await, None);
    }
}
