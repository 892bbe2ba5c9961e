//! Durable runs: what an agent writes to its [`Checkpointer`], and when.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::context::Context;
use crate::interrupt::{Checkpoint, CheckpointError, Checkpointer, Stored};

/// How much of its runs an agent keeps in its checkpointer
/// ([`AgentBuilder::checkpointer`](super::AgentBuilder::checkpointer)).
///
/// A run is kept under its thread's id (a run in a [`Thread`](super::Thread)) or else its run
/// id, held by the agent's [`worker`](super::AgentBuilder::worker) while it runs. When the run
/// ends, its key is deleted; when it fails, its key is released (its last checkpoint stays, for
/// a worker to resume it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Durability {
    /// Nothing is written: a paused run's checkpoint is in its output only, and yours to keep.
    Never,
    /// A paused run's checkpoint is written (its key free, for whoever has the answers to
    /// claim), and still in the output.
    #[default]
    Pauses,
    /// Also a checkpoint after every step of a run in progress: before each model call, when
    /// the model's answer is kept, and as each call of a step with several completes. A run whose
    /// process dies resumes from there ([`Agent::resume`](super::Agent::resume) with no
    /// answers) in another: no completed tool call runs again, and a call that was in flight
    /// runs again with the same
    /// [`idempotency_key`](crate::ToolContext::idempotency_key), so that the tool can tell.
    EveryStep,
}

/// An agent's checkpointer and its durability (`Pauses` or `EveryStep`: an agent that keeps
/// nothing has none).
pub(super) struct Durable {
    store: Arc<dyn ErasedCheckpointer>,
    mode: Durability,
}

impl fmt::Debug for Durable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Durable")
            .field("mode", &self.mode)
            .finish_non_exhaustive()
    }
}

impl Durable {
    /// The checkpointer `store` kept as `mode` says; `None` for [`Durability::Never`].
    pub(super) fn new(store: impl Checkpointer + 'static, mode: Durability) -> Option<Self> {
        (mode != Durability::Never).then(|| Durable {
            store: Arc::new(store),
            mode,
        })
    }

    /// Whether a checkpoint is written after every step.
    pub(super) fn every_step(&self) -> bool {
        self.mode == Durability::EveryStep
    }

    /// Writes `checkpoint` (a step, or a pause) under the run's key, for `worker`.
    pub(super) async fn put(
        &self,
        cx: &Context,
        checkpoint: &Checkpoint,
        worker: &str,
    ) -> Result<(), CheckpointError> {
        self.store.put(key(cx), checkpoint, worker).await
    }

    /// Before a run resumes (restored in `cx`): its key becomes `worker`'s, unless another
    /// worker holds it (then nothing runs). A checkpoint that was never stored resumes as it is.
    pub(super) async fn claim(&self, cx: &Context, worker: &str) -> Result<(), CheckpointError> {
        let key = key(cx);
        if self.store.claim(key, worker).await?.is_some() || self.store.get(key).await?.is_none() {
            return Ok(());
        }
        let holder = self
            .store
            .list()
            .await?
            .into_iter()
            .find(|stored| stored.key == key)
            .and_then(|stored| stored.held_by);
        Err(CheckpointError::Claimed {
            key: key.to_owned(),
            by: holder.unwrap_or_else(|| "another worker".to_owned()),
        })
    }

    /// The run ended: its key goes.
    pub(super) async fn ended(&self, cx: &Context, worker: &str) -> Result<(), CheckpointError> {
        self.store.delete(key(cx), worker).await
    }

    /// The run failed: its key is released, its last checkpoint kept for a worker to resume.
    pub(super) async fn failed(&self, cx: &Context, worker: &str) {
        if let Err(error) = self.store.release(key(cx), worker).await {
            tracing::warn!(
                key = key(cx),
                error = %crate::error::Report(&error),
                "the failed run's checkpoint could not be released"
            );
        }
    }
}

/// The key a run is kept under: its thread's id, or its own.
fn key(cx: &Context) -> &str {
    cx.thread_id
        .as_ref()
        .map_or(&cx.run_id, |thread| thread.as_str())
}

type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// [`Checkpointer`] as an object: the agent holds one whatever its type (one boxed future per
/// write, next to a store's I/O).
trait ErasedCheckpointer: Send + Sync {
    fn put<'a>(
        &'a self,
        key: &'a str,
        checkpoint: &'a Checkpoint,
        worker: &'a str,
    ) -> BoxFuture<'a, Result<(), CheckpointError>>;

    fn release<'a>(
        &'a self,
        key: &'a str,
        worker: &'a str,
    ) -> BoxFuture<'a, Result<bool, CheckpointError>>;

    fn claim<'a>(
        &'a self,
        key: &'a str,
        worker: &'a str,
    ) -> BoxFuture<'a, Result<Option<Checkpoint>, CheckpointError>>;

    fn get<'a>(
        &'a self,
        key: &'a str,
    ) -> BoxFuture<'a, Result<Option<Checkpoint>, CheckpointError>>;

    fn list(&self) -> BoxFuture<'_, Result<Vec<Stored>, CheckpointError>>;

    fn delete<'a>(
        &'a self,
        key: &'a str,
        worker: &'a str,
    ) -> BoxFuture<'a, Result<(), CheckpointError>>;
}

impl<T: Checkpointer> ErasedCheckpointer for T {
    fn put<'a>(
        &'a self,
        key: &'a str,
        checkpoint: &'a Checkpoint,
        worker: &'a str,
    ) -> BoxFuture<'a, Result<(), CheckpointError>> {
        Box::pin(Checkpointer::put(self, key, checkpoint, worker))
    }

    fn release<'a>(
        &'a self,
        key: &'a str,
        worker: &'a str,
    ) -> BoxFuture<'a, Result<bool, CheckpointError>> {
        Box::pin(Checkpointer::release(self, key, worker))
    }

    fn claim<'a>(
        &'a self,
        key: &'a str,
        worker: &'a str,
    ) -> BoxFuture<'a, Result<Option<Checkpoint>, CheckpointError>> {
        Box::pin(Checkpointer::claim(self, key, worker))
    }

    fn get<'a>(
        &'a self,
        key: &'a str,
    ) -> BoxFuture<'a, Result<Option<Checkpoint>, CheckpointError>> {
        Box::pin(Checkpointer::get(self, key))
    }

    fn list(&self) -> BoxFuture<'_, Result<Vec<Stored>, CheckpointError>> {
        Box::pin(Checkpointer::list(self))
    }

    fn delete<'a>(
        &'a self,
        key: &'a str,
        worker: &'a str,
    ) -> BoxFuture<'a, Result<(), CheckpointError>> {
        Box::pin(Checkpointer::delete(self, key, worker))
    }
}
