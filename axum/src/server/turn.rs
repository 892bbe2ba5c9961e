//! One run, from the request that starts it to its last event: the thread loaded from the
//! store, the agent streamed in it, each event encoded into the run's log, the thread saved
//! with the version it was loaded at — and only then the run's end told, so that a client
//! never reads `RUN_FINISHED` for a turn the store refused.
//!
//! The run is a task of its own: a client that disconnects does not stop it (it pauses or
//! answers, and its thread is saved; the client reads it again from the log, or from the
//! thread). A shutdown's end of grace stops it: then its thread is left as it was before the
//! turn, and, if the agent kept the run's steps, the run is continued — not started over —
//! when the client sends the same turn (its message's id) or the same answers again.

use std::sync::Arc;

use futures::StreamExt;
use hookchain_core::agent::{AgentEvent, ResumeFrom, RunOutput, Thread, ThreadId};
use hookchain_core::interrupt::{Checkpoint, InterruptId};
use hookchain_core::thread_store::{StoredThread, ThreadStore, ThreadStoreError};
use hookchain_core::{Agent, Error, Message, Middleware, Model, RunContext};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::sync::watch;

use super::Shared;
use crate::agui::{AguiEncoder, AguiEvent};
use crate::runs::RunLog;

/// What a request asks of its thread.
#[derive(Debug)]
pub(crate) enum Turn {
    /// A new turn: the user's message, with the client's id for it.
    Message {
        message: Message,
        id: Option<String>,
    },
    /// The answers to the thread's pause.
    Resume(Vec<(InterruptId, Value)>),
    /// Give up the thread's pause (its waiting calls answered as not run).
    Abandon,
}

/// How a run ended, as the agent ended it.
#[derive(Debug)]
enum Ended {
    /// Answered, or paused.
    Output(Box<RunOutput>),
    /// Its pause was given up; nothing ran.
    Abandoned,
}

/// Why a run ended without the agent's own end.
#[derive(Debug)]
enum Failure {
    /// The agent failed.
    Agent(Error),
    /// The store refused or failed.
    Store(ThreadStoreError),
    /// Nothing to abandon.
    NotPaused,
    /// The server shut down first.
    Shutdown,
    /// The agent's stream ended without the run's output (never, unless a bug of ours).
    NoOutput,
}

/// Writes `event` to `log` as JSON.
fn push(log: &RunLog, event: &AguiEvent) {
    match serde_json::to_string(event) {
        Ok(json) => {
            log.push(json);
        }
        // Our events always serialize; were one not to, the client misses it, not the run.
        Err(error) => tracing::error!(%error, "an AG-UI event did not serialize"),
    }
}

/// Runs `turn` in thread `thread_id`, writing its events to `log`; ends the log.
pub(crate) async fn drive<M, C, S>(
    shared: Arc<Shared<M, C, S>>,
    thread_id: ThreadId,
    run_id: String,
    turn: Turn,
    log: Arc<RunLog>,
    mut shutdown: watch::Receiver<bool>,
) where
    M: Model + 'static,
    C: Middleware + 'static,
    C::ThreadState: Serialize + DeserializeOwned + Send,
    S: ThreadStore + 'static,
{
    let _release = Release {
        shared: Arc::clone(&shared),
        thread_id: thread_id.as_str().to_owned(),
        log: Arc::clone(&log),
    };
    let mut encoder = AguiEncoder::new(thread_id.as_str(), run_id.as_str());
    push(&log, &encoder.start());
    let mut out = Vec::new();
    let ended = tokio::select! {
        ended = run(&shared, &thread_id, turn, &mut encoder, &log) => ended,
        _ = shutdown.wait_for(|closing| *closing) => Err(Failure::Shutdown),
    };
    match ended {
        Ok(Ended::Output(output)) => encoder.event(&AgentEvent::Output(output), &mut out),
        Ok(Ended::Abandoned) => encoder.abandoned(&mut out),
        Err(Failure::Agent(error)) => {
            tracing::warn!(error = %hookchain_core::error::Report(&error), "the run failed");
            encoder.error(&error, &mut out);
        }
        Err(failure) => {
            let (code, message) = match &failure {
                Failure::Store(ThreadStoreError::Conflict { .. }) => (
                    "thread_conflict",
                    "another request changed the conversation during this run; load it again",
                ),
                Failure::NotPaused => ("not_paused", "the conversation is not paused"),
                Failure::Shutdown => (
                    "server_shutdown",
                    "the server shut down during the run; send the turn again",
                ),
                Failure::NoOutput => ("internal", "the agent failed"),
                _ => (
                    "thread_store",
                    "the conversation could not be loaded or saved",
                ),
            };
            match &failure {
                Failure::Store(error) => tracing::warn!(%error, "the thread store failed"),
                Failure::NoOutput => tracing::error!("the run's stream ended without its output"),
                _ => {}
            }
            out.push(AguiEvent::RunError {
                message: message.to_owned(),
                code,
            });
        }
    }
    for event in &out {
        push(&log, event);
    }
    log.end();
}

/// Frees a run's thread and ends its log however the run's task ends — answered, failed, or
/// unwound by a panic or a runtime shutting down — so that neither the thread nor a reader
/// waits for it forever.
struct Release<M, C, S> {
    shared: Arc<Shared<M, C, S>>,
    thread_id: String,
    log: Arc<RunLog>,
}

impl<M, C, S> Drop for Release<M, C, S> {
    fn drop(&mut self) {
        if !self.log.is_ended() {
            push(
                &self.log,
                &AguiEvent::RunError {
                    message: "the run stopped unexpectedly".to_owned(),
                    code: "internal",
                },
            );
            self.log.end();
        }
        self.shared.busy_threads().remove(&self.thread_id);
    }
}

/// The run itself: its events written as they come, its output once the thread is saved.
async fn run<M, C, S>(
    shared: &Shared<M, C, S>,
    thread_id: &ThreadId,
    turn: Turn,
    encoder: &mut AguiEncoder,
    log: &RunLog,
) -> Result<Ended, Failure>
where
    M: Model + 'static,
    C: Middleware + 'static,
    C::ThreadState: Serialize + DeserializeOwned + Send,
    S: ThreadStore,
{
    let agent: &Agent<M, C> = &shared.agent;
    let (mut thread, version) = load(shared, thread_id).await?;
    let stopped = agent
        .interrupted_run(&thread)
        .await
        .map_err(Failure::Agent)?;
    let stream = match turn {
        // The same turn, or the same answers, sent again after its run was stopped: the run
        // goes on from its last step (it already took the answers).
        Turn::Message { id: Some(id), .. }
            if stopped.as_ref().is_some_and(|run| sent_as(run, &id)) =>
        {
            agent.stream_resume_in(&mut thread, ResumeFrom::stored(thread_id.as_str()), [])
        }
        Turn::Resume(_) if thread.is_paused() && stopped.is_some() => {
            agent.stream_resume_in(&mut thread, ResumeFrom::stored(thread_id.as_str()), [])
        }
        Turn::Message { message, id } => {
            let mut run_context = RunContext::new();
            if let Some(id) = id {
                // A `String` always serializes.
                let _ = run_context.insert_saved(MESSAGE_ID, id);
            }
            agent
                .with_context(run_context)
                .stream_in(&mut thread, message)
        }
        Turn::Resume(answers) => {
            agent.stream_resume_in(&mut thread, ResumeFrom::stored(thread_id.as_str()), answers)
        }
        Turn::Abandon => {
            if !thread.abandon_pause() {
                return Err(Failure::NotPaused);
            }
            shared
                .threads
                .save(&thread, version)
                .await
                .map_err(Failure::Store)?;
            return Ok(Ended::Abandoned);
        }
    };
    let mut ended = None;
    {
        let mut stream = std::pin::pin!(stream);
        let mut out = Vec::new();
        while let Some(item) = stream.next().await {
            match item {
                Ok(AgentEvent::Output(output)) => ended = Some(Ok(output)),
                Ok(event) => {
                    encoder.event(&event, &mut out);
                    for event in out.drain(..) {
                        push(log, &event);
                    }
                }
                Err(error) => ended = Some(Err(error)),
            }
        }
    }
    // Saved whatever the end: a failed run may have changed the thread (what it spent).
    shared
        .threads
        .save(&thread, version)
        .await
        .map_err(Failure::Store)?;
    match ended {
        Some(Ok(output)) => Ok(Ended::Output(output)),
        Some(Err(error)) => Err(Failure::Agent(error)),
        None => Err(Failure::NoOutput),
    }
}

/// The key under which a run saves the client's id of the message that started it.
const MESSAGE_ID: &str = "agui.message_id";

/// Whether the stopped run `run` was started by the client's message `id`.
fn sent_as(run: &Checkpoint, id: &str) -> bool {
    run.saved_value(MESSAGE_ID).and_then(Value::as_str) == Some(id)
}

/// The thread, adopted by this agent's chain, with its version (0 for a new one).
async fn load<M, C, S>(
    shared: &Shared<M, C, S>,
    thread_id: &ThreadId,
) -> Result<(Thread<C::ThreadState>, u64), Failure>
where
    M: Model,
    C: Middleware,
    C::ThreadState: DeserializeOwned,
    S: ThreadStore,
{
    match shared.threads.load::<Value>(thread_id).await {
        Ok(Some(StoredThread {
            thread, version, ..
        })) => {
            let thread = shared
                .agent
                .adopt_thread(thread)
                .map_err(|error| Failure::Agent(error.into()))?;
            Ok((thread, version))
        }
        Ok(None) => Ok((Thread::with_id(thread_id.clone()), 0)),
        Err(error) => Err(Failure::Store(error)),
    }
}
