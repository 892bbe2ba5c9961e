//! Runs in a thread kept in a [`ThreadStore`]: load (or create), run, save with the version.

use super::{Agent, IntoRunInput, ResumeFrom, RunOutput, Thread, ThreadId};
use crate::error::Error;
use crate::interrupt::InterruptId;
use crate::middleware::Middleware;
use crate::model::Model;
use crate::thread_store::{StoredThread, ThreadStore, ThreadStoreError};

impl<M: Model, C: Middleware> Agent<M, C> {
    /// [`run_in`](Self::run_in) the thread `id` of `store`: loads it (an empty thread of that
    /// id if none is stored), runs the agent on `input` in it, and saves it with the version it
    /// was loaded at — the request handler of a conversation, in one call.
    ///
    /// A thread stored by a chain that changed since is carried over as
    /// [`adopt_thread`](Self::adopt_thread) does. When another request saved the thread while
    /// this one ran, the save is refused with [`Error::ThreadStore`] holding
    /// [`ThreadStoreError::Conflict`]: the stored thread is the other request's, and this run's
    /// output is dropped (its tool calls did run: see *Optimistic concurrency* on
    /// [`ThreadStore`], and give the agent a checkpointer to refuse the second run before it
    /// starts). A run that fails is saved too when it changed the thread (its history, what it
    /// spent), and its error returned; a save that fails then is logged (WARN), not returned.
    ///
    /// ```
    /// use hookchain::prelude::*;
    /// use hookchain::thread_store::{InMemoryThreadStore, ThreadStore};
    /// use hookchain::ThreadId;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), hookchain::Error> {
    /// let store = InMemoryThreadStore::new();
    /// let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("Hello!")])).build()?;
    /// let id = ThreadId::new("conversation-1");
    /// let output = agent.run_in_store(&store, &id, "Hi").await?;
    /// assert_eq!(output.text().as_deref(), Some("Hello!"));
    /// assert_eq!(store.load::<()>(&id).await?.unwrap().thread.runs(), 1);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn run_in_store(
        &self,
        store: &impl ThreadStore,
        id: &ThreadId,
        input: impl IntoRunInput,
    ) -> Result<RunOutput, Error> {
        let input = input.into_run_input();
        let (mut thread, version) = self.load_or_create(store, id).await?;
        let before = encoded(&thread);
        let ran = self.run_in(&mut thread, input).await;
        save_after(store, &thread, version, before, ran).await
    }

    /// [`resume_in`](Self::resume_in) the thread `id` of `store`: loads it, resumes its paused
    /// run from `from` with `answers`, and saves it with the version it was loaded at, as
    /// [`run_in_store`](Self::run_in_store) does (a conflict is
    /// [`ThreadStoreError::Conflict`]). A thread that is not stored waits on no checkpoint:
    /// the resume is refused before anything runs.
    pub async fn resume_in_store(
        &self,
        store: &impl ThreadStore,
        id: &ThreadId,
        from: impl Into<ResumeFrom>,
        answers: impl IntoIterator<Item = (InterruptId, serde_json::Value)>,
    ) -> Result<RunOutput, Error> {
        let (from, answers): (ResumeFrom, Vec<_>) = (from.into(), answers.into_iter().collect());
        let (mut thread, version) = self.load_or_create(store, id).await?;
        let before = encoded(&thread);
        let ran = self.resume_in(&mut thread, from, answers).await;
        save_after(store, &thread, version, before, ran).await
    }

    /// The thread `id` of `store` for this agent's chain, with its version; an empty one at
    /// version 0 if none is stored.
    async fn load_or_create(
        &self,
        store: &impl ThreadStore,
        id: &ThreadId,
    ) -> Result<(Thread<C::ThreadState>, u64), Error> {
        match store.load::<serde_json::Value>(id).await? {
            Some(StoredThread { thread, version }) => Ok((self.adopt_thread(thread)?, version)),
            None => {
                let mut thread = Thread::with_id(id.clone());
                thread.chain = Some(self.members.clone());
                Ok((thread, 0))
            }
        }
    }
}

/// The thread's JSON, to tell whether a failed run changed it; `None` if it does not encode
/// (then it is saved, and the save says why it cannot be).
fn encoded<S: serde::Serialize>(thread: &Thread<S>) -> Option<String> {
    serde_json::to_string(thread).ok()
}

/// Saves `thread`, loaded at `version`, after a run that ended as `ran`: the run's output, or
/// the save's error; a failed run's error, its thread saved if it changed (`before`).
async fn save_after<S: serde::Serialize>(
    store: &impl ThreadStore,
    thread: &Thread<S>,
    version: u64,
    before: Option<String>,
    ran: Result<RunOutput, Error>,
) -> Result<RunOutput, Error> {
    match ran {
        Ok(output) => {
            store.save(thread, version).await?;
            Ok(output)
        }
        Err(error) => {
            let changed = before.is_none() || before != encoded(thread);
            if changed && let Err(failed) = store.save(thread, version).await {
                warn_unsaved(thread.id(), &failed);
            }
            Err(error)
        }
    }
}

/// Logs that the thread `id` of a failed run could not be saved (the run's error is returned).
fn warn_unsaved(id: &ThreadId, error: &ThreadStoreError) {
    tracing::warn!(
        thread = %id,
        error = %crate::error::Report(error),
        "the thread of a failed run could not be saved"
    );
}
