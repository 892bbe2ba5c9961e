//! Runs that stopped before they ended — their process died, or their future was dropped — as
//! a service finds them again: the run a thread's checkpointer still holds in progress, and
//! the background work a dropped run leaves (letting its key go), waited for before a process
//! exits.

use super::{Agent, Thread};
use crate::error::Error;
use crate::interrupt::{Checkpoint, Record};

impl<M, C> Agent<M, C> {
    /// The run of `thread` that stopped before it ended, if the agent's checkpointer holds one:
    /// the checkpoint of a run in progress (not a pause) of the thread's current run, kept
    /// after its last completed step ([`Durability::EveryStep`](super::Durability::EveryStep),
    /// or any run resumed from the store). Its process died, or its future was dropped (a
    /// timeout, a server shutting down); the thread was left as before the run.
    ///
    /// Continue it with [`resume_in`](Self::resume_in) from
    /// [`ResumeFrom::stored`](super::ResumeFrom::stored) (the thread's id) and no answers: no
    /// completed tool call runs again. Starting a new run in the thread instead gives it up
    /// (its checkpoint is replaced; the calls it completed are in no history). A service that
    /// is sent the same request again (a client retrying after a restart) continues the run
    /// rather than starting it over; [`Checkpoint::saved_value`] reads back what it saved of
    /// the request ([`RunContext::with_saved`](crate::RunContext::with_saved)) to tell.
    ///
    /// `None` with no checkpointer. A run found may still be going in another worker (the
    /// store is read, not claimed): resuming it is then refused with
    /// [`CheckpointError::Claimed`](crate::interrupt::CheckpointError::Claimed) while that
    /// worker's lease lasts — as it is for a run whose process died, until its lease expires.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicBool, Ordering};
    /// use std::time::Duration;
    ///
    /// use hookchain::interrupt::InMemoryCheckpointer;
    /// use hookchain::prelude::*;
    /// use hookchain::{Durability, ResumeFrom, ToolCall, tool};
    ///
    /// static STUCK_ONCE: AtomicBool = AtomicBool::new(true);
    ///
    /// /// Hangs the first time (its worker is gone), answers after.
    /// #[tool]
    /// async fn deploy() -> String {
    ///     if STUCK_ONCE.swap(false, Ordering::SeqCst) {
    ///         std::future::pending::<()>().await;
    ///     }
    ///     "deployed".to_owned()
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), hookchain::Error> {
    /// let model = ScriptedModel::new([
    ///     ModelResponse::tool_calls([ToolCall::new("c1", "deploy", serde_json::json!({}))]),
    ///     ModelResponse::text("Deployed."),
    /// ]);
    /// let agent = Agent::builder(model)
    ///     .tool(deploy)
    ///     .checkpointer(InMemoryCheckpointer::new(), Durability::EveryStep)
    ///     .build()?;
    /// let mut thread = agent.thread();
    /// let stopped = tokio::time::timeout(Duration::from_millis(50), agent.run_in(&mut thread, "Ship it")).await;
    /// assert!(stopped.is_err());
    /// agent.settle().await; // the dropped run's key let go
    ///
    /// assert!(agent.interrupted_run(&thread).await?.is_some());
    /// let id = thread.id().as_str().to_owned();
    /// let output = agent.resume_in(&mut thread, ResumeFrom::stored(id), []).await?;
    /// assert_eq!(output.text().as_deref(), Some("Deployed."));
    /// assert!(agent.interrupted_run(&thread).await?.is_none());
    /// # Ok(())
    /// # }
    /// ```
    pub async fn interrupted_run<S>(
        &self,
        thread: &Thread<S>,
    ) -> Result<Option<Checkpoint>, Error> {
        let Some(durable) = &self.durable else {
            return Ok(None);
        };
        let key = thread.id.as_str();
        let Some(stored) = durable.stored(key).await? else {
            return Ok(None);
        };
        let Record::Checkpoint(checkpoint) = stored else {
            return Ok(None);
        };
        let of_this_run = !checkpoint.is_pause()
            && checkpoint.thread.as_ref() == Some(&thread.id)
            && checkpoint.counters.runs == thread.runs;
        Ok(of_this_run.then_some(*checkpoint))
    }

    /// The checkpoint `thread`'s pause waits on, as the agent's checkpointer holds it: what the
    /// pause asks ([`Checkpoint::interrupts`]) and what the paused run saved
    /// ([`Checkpoint::saved_value`]), for a service that shows a paused conversation again (a
    /// page reloaded) or reads back what it saved before it resumes.
    ///
    /// Also a pause of the thread's current run that the thread was never told of (its
    /// worker died after storing it, before the thread was kept): it is answered the same way,
    /// from the store.
    ///
    /// `None` when the thread has no such pause, when the agent has no checkpointer, or when
    /// the store holds something else under the thread's key (a resume of the pause would then
    /// be refused too).
    pub async fn paused_run<S>(&self, thread: &Thread<S>) -> Result<Option<Checkpoint>, Error> {
        let Some(durable) = &self.durable else {
            return Ok(None);
        };
        let Some(Record::Checkpoint(checkpoint)) = durable.stored(thread.id.as_str()).await? else {
            return Ok(None);
        };
        let waited_on = checkpoint.is_pause()
            && match &thread.paused {
                Some(pause) => checkpoint.id == pause.checkpoint,
                // Not told of it: the thread's current run's, the thread as before it.
                None => {
                    checkpoint.thread.as_ref() == Some(&thread.id)
                        && checkpoint.counters.runs == thread.runs
                }
            };
        Ok(waited_on.then_some(*checkpoint))
    }

    /// Waits until the agent's runs whose futures were dropped (cancelled, their clients gone)
    /// have let their keys go. A dropped run cannot wait for its checkpointer, so it lets its
    /// key go in a task of its own; a process that exits before that task ends leaves the key
    /// held until its lease expires ([`AgentBuilder::lease`](super::AgentBuilder::lease)), and
    /// the run cannot be continued until then. Call it after your last run stopped and before
    /// the process exits (bound it with a timeout: a store that does not answer holds it).
    /// Completes at once for an agent with no checkpointer, or without the feature `tokio`.
    pub async fn settle(&self) {
        if let Some(durable) = &self.durable {
            durable.settled().await;
        }
    }
}
