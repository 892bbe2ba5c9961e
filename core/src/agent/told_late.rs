//! A run's end or pause its caller never heard of: its worker wrote it to the store and died
//! (or its caller went away) before the thread was kept, or before a parent's call recorded
//! its sub-agent's output. The tombstone keeps the run's last state, a pause is its own, and
//! the documented recovery hands either back — nothing runs.

use super::carry_over::{Carried, carry_over};
use super::entry::{finish, keep};
use super::resume::reopen;
use super::run_loop::Ending;
use super::{Agent, RunOutput, Thread};
use crate::context::{Ledger, RunContext};
use crate::error::Error;
use crate::interrupt::{Checkpoint, ResumeError};
use crate::middleware::Middleware;
use crate::model::{Model, Usage};
use crate::pause::LastState;

impl<M: Model, C: Middleware> Agent<M, C> {
    /// The end of `thread`'s current run, from the tombstone a stored resume was `refused`
    /// with: when the tombstone keeps the run's last state and the run is the one the thread
    /// is at (the thread has not counted it as ended). Any other refusal comes back as it was.
    pub(super) fn end_told_late(
        &self,
        run_context: RunContext,
        thread: &mut Thread<C::ThreadState>,
        refused: Error,
    ) -> Result<RunOutput, Error> {
        let Some((last, ending)) = kept_end(&refused).filter(|(last, _)| {
            last.checkpoint.thread.as_ref() == Some(&thread.id)
                && last.checkpoint.counters.runs == thread.runs
        }) else {
            return Err(refused);
        };
        let (mut cx, state, _) = self.restore(run_context, last.checkpoint.clone(), [])?;
        cx.stop_reason = last.stop_reason;
        // Charged as the run would have charged it: from what it had spent when the thread
        // last heard of it.
        cx.ledger = Some(Box::new(Ledger {
            thread_before: thread.spent,
            run_before: last.charged_from,
        }));
        keep(&self.members, thread, cx, state, Ok(ending))
    }

    /// `pause`, of `thread`'s current run, as a stored resume with no answers found it —
    /// maybe not the one the thread waits on, or the thread waits on none: handed back as it
    /// stands (the thread then waits on it), nothing run. A thread that was before the run is
    /// charged what the run spent up to the pause.
    pub(super) fn pause_told_late(
        &self,
        run_context: RunContext,
        thread: &mut Thread<C::ThreadState>,
        pause: Checkpoint,
    ) -> Result<RunOutput, Error> {
        let mut carried = pause.clone();
        let Carried { states, .. } = carry_over::<C>(&mut carried, &self.members)?;
        let (mut cx, _, _) = reopen(carried, run_context);
        if thread.paused.is_none() {
            cx.ledger = Some(Box::new(Ledger {
                thread_before: thread.spent,
                run_before: Usage::default(),
            }));
        }
        let mut output = keep(
            &self.members,
            thread,
            cx,
            states,
            Ok(Ending::Paused(Box::new(pause))),
        )?;
        output.stored = true;
        Ok(output)
    }

    /// The end of the run `run_id` (a sub-agent's, outside any thread), from the tombstone its
    /// start was `refused` with, when the tombstone keeps it. Any other refusal comes back as
    /// it was.
    pub(super) fn end_of_run(
        &self,
        run_context: RunContext,
        run_id: &str,
        refused: Error,
    ) -> Result<RunOutput, Error> {
        let Some((last, ending)) = kept_end(&refused).filter(|(last, _)| {
            last.checkpoint.thread.is_none() && last.checkpoint.run_id == run_id
        }) else {
            return Err(refused);
        };
        let (mut cx, _, _) = self.restore(run_context, last.checkpoint.clone(), [])?;
        cx.stop_reason = last.stop_reason;
        finish(cx, Ok(ending))
    }
}

/// The last state kept with the tombstone `refused` names — a stored resume's refusal
/// ([`ResumeError::Ended`], with no checkpoint given) — and how the run ended.
fn kept_end(refused: &Error) -> Option<(&LastState, Ending)> {
    let Error::Resume(resume) = refused else {
        return None;
    };
    let ResumeError::Ended {
        checkpoint: None,
        tombstone,
    } = &**resume
    else {
        return None;
    };
    let ending = match tombstone.how.as_str() {
        "jumped" => Ending::Jumped,
        "cancelled" => Ending::Cancelled,
        _ => Ending::Finished,
    };
    Some((tombstone.last.as_deref()?, ending))
}
