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
use hookchain_core::agent::{AgentEvent, ResumeFrom, RunOutput, Thread, ThreadId, UnseenRun};
use hookchain_core::interrupt::{Checkpoint, Position};
use hookchain_core::thread_store::{StoredThread, ThreadStore, ThreadStoreError};
use hookchain_core::{
    Agent, Error, Message, Middleware, Model, Principal, RunContext, ToolCall, ToolResult,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::sync::watch;

use super::Shared;
use super::random::random_hex;
use crate::agui::{AguiEncoder, AguiEvent, ClientPause};
use crate::runs::{RunKey, RunLog};

/// What a request asks of its thread.
#[derive(Debug)]
pub(crate) enum Turn {
    /// A new turn: the user's message, with the client's id for it.
    Message {
        message: Message,
        id: Option<String>,
    },
    /// The answers to the thread's pause, by the ids the client was shown.
    Resume(Vec<(String, Value)>),
    /// Give up the thread's pause (its waiting calls answered as not run).
    Abandon,
}

/// Where a run starts: its thread (its key in the stores, the id its client knows, what the
/// store held when the request checked its access), its id, and who asked.
#[derive(Debug)]
pub(crate) struct RunStart {
    pub(crate) key: ThreadId,
    pub(crate) client_thread_id: String,
    pub(crate) run_id: String,
    pub(crate) stored: Option<StoredThread<Value>>,
    pub(crate) principal: Principal,
}

/// How a run ended, as the agent ended it.
#[derive(Debug)]
enum Ended {
    /// Answered, or paused.
    Output(Box<RunOutput>),
    /// Its pause was given up; nothing ran. The tool messages that closed its calls.
    Abandoned(Vec<Message>),
}

/// Why a run ended without the agent's own end.
#[derive(Debug)]
enum Failure {
    /// The agent failed.
    Agent(Error),
    /// The store refused or failed.
    Store(ThreadStoreError),
    /// Nothing to abandon, or to answer.
    NotPaused,
    /// An answer names no interrupt of the pause.
    InvalidResume,
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

/// Runs `turn` in the thread of `start`, writing its events to `log`; ends the log.
pub(crate) async fn drive<M, C, S>(
    shared: Arc<Shared<M, C, S>>,
    start: RunStart,
    turn: Turn,
    log: Arc<RunLog>,
    mut shutdown: watch::Receiver<bool>,
) where
    M: Model + 'static,
    C: Middleware + 'static,
    C::ThreadState: Serialize + DeserializeOwned + Send,
    S: ThreadStore + 'static,
{
    let mut release = Release {
        shared: Arc::clone(&shared),
        run: RunKey {
            thread: start.key.as_str().to_owned(),
            run: start.run_id.clone(),
        },
        log: Arc::clone(&log),
        finished: false,
    };
    let mut encoder = AguiEncoder::new(start.client_thread_id.as_str(), start.run_id.as_str());
    push(&log, &encoder.start());
    let mut out = Vec::new();
    let ended = tokio::select! {
        ended = run(&shared, start, turn, &mut encoder, &log) => ended,
        _ = shutdown.wait_for(|closing| *closing) => Err(Failure::Shutdown),
    };
    match ended {
        Ok(Ended::Output(output)) => encoder.event(&AgentEvent::Output(output), &mut out),
        Ok(Ended::Abandoned(closed)) => encoder.abandoned(&closed, &mut out),
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
                Failure::InvalidResume => (
                    "invalid_resume",
                    "the answers name interrupts the pause does not have",
                ),
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
    // The log ends as `release` drops, once the thread is free: a client that reads the end
    // and sends its next turn at once finds the thread free.
    release.finished = true;
}

/// Frees a run's thread, ends its log and tells the registry that it ended, however the run's
/// task ends — answered, failed, or unwound by a panic or a runtime shutting down — so that
/// neither the thread nor a reader waits for it forever, and it counts as going no more.
struct Release<M, C, S> {
    shared: Arc<Shared<M, C, S>>,
    run: RunKey,
    log: Arc<RunLog>,
    /// The run wrote its last event.
    finished: bool,
}

impl<M, C, S> Drop for Release<M, C, S> {
    fn drop(&mut self) {
        self.shared.busy_threads().remove(&self.run.thread);
        self.shared.runs.ended(&self.run);
        if !self.finished {
            push(
                &self.log,
                &AguiEvent::RunError {
                    message: "the run stopped unexpectedly".to_owned(),
                    code: "internal",
                },
            );
        }
        self.log.end();
    }
}

/// The run itself: its events written as they come, its output once the thread is saved.
async fn run<M, C, S>(
    shared: &Shared<M, C, S>,
    start: RunStart,
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
    let RunStart {
        key,
        stored,
        principal,
        ..
    } = start;
    let (mut thread, version) = adopt(shared, stored, &key, &principal)?;
    let key = key.as_str();
    // Who asked goes to every run, resumed or not: it is never saved with a checkpoint. Every
    // run is kept after each step, whatever the agent's durability: a run a shutdown stops
    // goes on from its last completed call when its client sends it again.
    let mut run_context = RunContext::new().with(principal).with_steps_kept();
    // What a server that stopped (a shutdown, a crash) stored of the thread's run and never
    // saved in the thread: a step, a pause, the run's end.
    let unseen = agent
        .unseen_run(&thread)
        .await
        .map_err(Failure::Agent)?
        .map(UnseenRun::into_checkpoint);
    // The same turn, or the same answers, sent again (its client never read the run's end):
    // the run goes on from its last step (it took the answers already), or its pause or its
    // end is handed back, as it stands.
    let resent = match &turn {
        Turn::Message { id: Some(id), .. } => {
            let run = match unseen {
                Some(run) => Some(run),
                None if thread.is_paused() => {
                    agent.paused_run(&thread).await.map_err(Failure::Agent)?
                }
                None => None,
            };
            run.filter(|run| sent_as(run, id))
        }
        Turn::Resume(_) if thread.is_paused() => unseen,
        _ => None,
    };
    let stream = match turn {
        _ if resent.is_some() => {
            use_pause_view(encoder, shared, resent.as_ref());
            agent.with_context(run_context).stream_resume_in(
                &mut thread,
                ResumeFrom::stored(key),
                [],
            )
        }
        Turn::Message { message, id } => {
            let salt = random_hex();
            encoder.set_pause_view(view(shared, salt.clone()));
            // Strings always serialize.
            let _ = run_context.insert_saved(PAUSE_SALT, salt);
            if let Some(id) = id {
                let _ = run_context.insert_saved(MESSAGE_ID, id);
            }
            agent
                .with_context(run_context)
                .stream_in(&mut thread, message)
        }
        Turn::Resume(answers) => {
            let Some(pause) = agent.paused_run(&thread).await.map_err(Failure::Agent)? else {
                return Err(Failure::NotPaused);
            };
            let pause_view = pause_view(shared, &pause);
            let answers = pause_view
                .answers(pause.interrupts(), answers)
                .map_err(|_| Failure::InvalidResume)?;
            encoder.set_pause_view(pause_view);
            agent.with_context(run_context).stream_resume_in(
                &mut thread,
                ResumeFrom::stored(key),
                answers,
            )
        }
        Turn::Abandon => {
            // The calls the client was shown, that will not run: closed for it.
            let closed = agent
                .paused_run(&thread)
                .await
                .map_err(Failure::Agent)?
                .map(|pause| closed_calls(&pause))
                .unwrap_or_default();
            // Given up in the agent's store first: no late answer resumes it anywhere.
            if !agent.abandon(&mut thread).await.map_err(Failure::Agent)? {
                return Err(Failure::NotPaused);
            }
            shared
                .threads
                .save(&thread, version)
                .await
                .map_err(Failure::Store)?;
            return Ok(Ended::Abandoned(closed));
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

/// The results that close, for a client, the calls of the paused step `run` that will not run
/// now that its pause is given up: every call of the step that did not complete.
fn closed_calls(run: &Checkpoint) -> Vec<Message> {
    let not_run = |call: &ToolCall| {
        Message::tool(ToolResult::error(
            &call.id,
            format!(
                "tool call `{}` was not executed: the pause was given up",
                call.name
            ),
        ))
    };
    match run.position() {
        Position::AfterModel { response, .. } => {
            response.message.tool_calls.iter().map(not_run).collect()
        }
        Position::Tools { calls, results, .. } => calls
            .iter()
            .zip(results)
            .filter(|(_, result)| result.is_none())
            .map(|(call, _)| not_run(call))
            .collect(),
        _ => Vec::new(),
    }
}

/// The key under which a run saves the salt of its pauses' ids (see [`ClientPause`]): drawn
/// for each new turn, kept with the run's checkpoints, on the server.
const PAUSE_SALT: &str = "agui.pause_salt";

/// The client's view of pauses keyed by `salt`, with the server's metadata.
fn view<M, C, S>(shared: &Shared<M, C, S>, salt: String) -> ClientPause {
    let pause = ClientPause::new(salt);
    match &shared.interrupt_metadata {
        Some(metadata) => pause.with_metadata(Arc::clone(metadata)),
        None => pause,
    }
}

/// The client's view of the pauses of the run `run` checkpointed: keyed by the salt its turn
/// saved (or, for a run saved before salts were, its checkpoint's id, which no client sees).
pub(crate) fn pause_view<M, C, S>(shared: &Shared<M, C, S>, run: &Checkpoint) -> ClientPause {
    let salt = run
        .saved_value(PAUSE_SALT)
        .and_then(Value::as_str)
        .unwrap_or(run.id());
    view(shared, salt.to_owned())
}

/// Shows the pauses of the continued run `run` as its turn did.
fn use_pause_view<M, C, S>(
    encoder: &mut AguiEncoder,
    shared: &Shared<M, C, S>,
    run: Option<&Checkpoint>,
) {
    if let Some(run) = run {
        encoder.set_pause_view(pause_view(shared, run));
    }
}

/// The key under which a run saves the client's id of the message that started it.
const MESSAGE_ID: &str = "agui.message_id";

/// Whether the stopped run `run` was started by the client's message `id`.
fn sent_as(run: &Checkpoint, id: &str) -> bool {
    run.saved_value(MESSAGE_ID).and_then(Value::as_str) == Some(id)
}

/// The thread the request loaded, adopted by this agent's chain, with its version; a new one
/// (version 0), `key`, owned by `principal`, when none was stored.
fn adopt<M, C, S>(
    shared: &Shared<M, C, S>,
    stored: Option<StoredThread<Value>>,
    key: &ThreadId,
    principal: &Principal,
) -> Result<(Thread<C::ThreadState>, u64), Failure>
where
    M: Model,
    C: Middleware,
    C::ThreadState: DeserializeOwned,
{
    let Some(StoredThread {
        thread, version, ..
    }) = stored
    else {
        let thread = Thread::with_id(key.clone());
        return Ok((
            match principal.owner() {
                Some(owner) => thread.with_owner(owner),
                None => thread,
            },
            0,
        ));
    };
    let thread = shared
        .agent
        .adopt_thread(thread)
        .map_err(|error| Failure::Agent(error.into()))?;
    Ok((thread, version))
}
