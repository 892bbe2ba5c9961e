//! Giving up a thread's pause where it is kept: in the agent's checkpointer first — its key
//! then holds a tombstone `abandoned`, so no copy of the thread, no worker and no late answer
//! resumes it — and then in the thread.

use super::{Agent, Thread};
use crate::error::Error;

impl<M, C> Agent<M, C> {
    /// Gives up `thread`'s pause: the pause's checkpoint is replaced in the agent's
    /// checkpointer by a tombstone `abandoned` (a resume of it, by this thread, a stale copy of
    /// it or any worker, is refused as ended), then the thread closes the pause's calls as
    /// [`Thread::abandon_pause`] does. Returns whether there was a pause. Without a
    /// checkpointer, the thread alone changes.
    ///
    /// Refused, and nothing changes, while another worker holds the thread's key (a resume of
    /// the pause is running: [`CheckpointError::Claimed`](crate::interrupt::CheckpointError::Claimed)),
    /// or when the pause was answered and its run went on past it
    /// ([`ResumeError::Superseded`](crate::interrupt::ResumeError::Superseded): continue that
    /// run from [`ResumeFrom::stored`](super::ResumeFrom::stored) instead) or to its end
    /// ([`ResumeError::Ended`](crate::interrupt::ResumeError::Ended)) — its calls ran, and
    /// giving it up would record them as not run.
    ///
    /// ```
    /// use hookchain::builtin::human_in_the_loop::{HumanInTheLoop, ToolPolicy};
    /// use hookchain::interrupt::InMemoryCheckpointer;
    /// use hookchain::prelude::*;
    /// use hookchain::{Durability, ResumeFrom, tool};
    ///
    /// /// Pays an invoice.
    /// #[tool]
    /// async fn pay(invoice: String) -> String {
    ///     format!("paid {invoice}")
    /// }
    ///
    /// # futures::executor::block_on(async {
    /// let agent = Agent::builder(ScriptedModel::new([ModelResponse::tool_calls([ToolCall::new(
    ///     "c1",
    ///     "pay",
    ///     serde_json::json!({"invoice": "INV-7"}),
    /// )])]))
    /// .tool(pay)
    /// .chain(HumanInTheLoop::new().interrupt_on("pay", ToolPolicy::always()))
    /// .checkpointer(InMemoryCheckpointer::new(), Durability::Pauses)
    /// .build()?;
    /// let mut thread = agent.thread();
    /// let paused = agent.run_in(&mut thread, "Pay INV-7").await?;
    /// let stale = thread.clone(); // a second tab's copy
    ///
    /// assert!(agent.abandon(&mut thread).await?);
    /// // The approval, late, from the stale copy: refused, nothing paid.
    /// let approve = hookchain::builtin::human_in_the_loop::ApprovalResponse::approve_every(
    ///     paused.interrupts(),
    /// );
    /// let key = thread.id().as_str().to_owned();
    /// let late = agent.resume_in(&mut stale.clone(), ResumeFrom::stored(key), approve).await;
    /// assert!(late.is_err());
    /// # Ok::<(), hookchain::Error>(())
    /// # }).unwrap();
    /// ```
    pub async fn abandon<S>(&self, thread: &mut Thread<S>) -> Result<bool, Error> {
        let Some(pause) = &thread.paused else {
            return Ok(false);
        };
        if let Some(durable) = &self.durable {
            Box::pin(durable.abandon(thread.id.as_str(), &self.worker, &pause.checkpoint)).await?;
        }
        Ok(thread.abandon_pause())
    }
}
