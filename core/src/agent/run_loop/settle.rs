//! Settling a run with the agent's checkpointer once the loop has ended: a pause's checkpoint
//! written (its key freed), an ended run's tombstone, a failed run's key released for another
//! worker — and the store's error after the end kept for the output rather than lost.

use super::Ending;
use crate::agent::CleanupError;
use crate::agent::durable::Durable;
use crate::context::Context;
use crate::error::Error;
use crate::interrupt::{Checkpoint, CheckpointError};

/// Writes how the run ended to the agent's store: a pause's checkpoint (its key freed for the
/// answers), or the run's end (a tombstone, if it stored anything). A failed run's key is
/// released (its last checkpoint kept for a worker to resume), unless it was lost already. A
/// run that ended keeps its output when the store fails after it: the error goes beside it.
/// `last`, the run's history and state at its end, goes with its tombstone.
pub(super) async fn settle(
    durable: &Durable,
    cx: &mut Context,
    ending: Result<Ending, Error>,
    last: Option<Checkpoint>,
) -> Result<Ending, Error> {
    let Some(held) = cx.held.as_deref() else {
        return ending;
    };
    // The renewals stop: what this writes ends or frees the lease, and a renewal refused
    // because of it is not the run's loss (it was, now and then, under load).
    held.watch.settle();
    match ending {
        Ok(Ending::Paused(checkpoint)) => {
            durable.put(held, &checkpoint).await?;
            Ok(Ending::Paused(checkpoint))
        }
        Ok(Ending::Stepped) => {
            // The step's checkpoint is stored: the key is free for the next step, anywhere.
            durable.release(&held.key, &held.lease).await;
            Ok(Ending::Stepped)
        }
        Ok(ending) => {
            let how = match ending {
                Ending::Jumped => "jumped",
                Ending::Cancelled => "cancelled",
                _ => "finished",
            };
            let stored = durable.keeps_steps(cx);
            if !stored && held.found {
                // The run wrote nothing: what the key held (a pause a stale copy of the thread
                // did not know of, a tombstone) stays as it was.
                durable.release(&held.key, &held.lease).await;
                return Ok(ending);
            }
            if let Err(error) = durable.ended(held, cx, how, stored, last).await {
                tracing::warn!(
                    key = held.key,
                    error = %crate::error::Report(&error),
                    "the run ended, but its store could not be cleaned up"
                );
                cx.cleanup_error = Some(CleanupError(std::sync::Arc::new(error)));
            }
            Ok(ending)
        }
        Err(error) => {
            let lost = matches!(&error, Error::Checkpoint(error)
                if matches!(**error, CheckpointError::Claimed { .. } | CheckpointError::LeaseLost { .. }));
            if !lost {
                durable.release(&held.key, &held.lease).await;
            }
            Err(error)
        }
    }
}
