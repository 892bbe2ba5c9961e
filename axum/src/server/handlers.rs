//! The request handlers: start (or join) a run, read a run's events, read a thread, list the
//! principal's threads. Each is reached only past the browser guard and the authorizer, and
//! checks the thread's access before it reads anything of it.

use std::convert::Infallible;
use std::sync::Arc;

use axum::Extension;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use hookchain_core::Principal;
use hookchain_core::agent::ThreadId;
use hookchain_core::thread_store::ThreadStore;
use hookchain_core::{Middleware, Model};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tracing::Instrument;

use super::access::Action;
use super::request_id::RequestId;
use super::threads::{allowed, client_id, load_checked, store_failed, thread_key, unknown_thread};
use super::turn::{RunStart, Turn, drive, pause_view};
use super::{AgentServer, Problem};
use crate::agui::{RunAgentInput, agui_messages};
use crate::runs::{KnownRun, Refused, RunKey, RunLog, Started};

fn bad_input(detail: impl std::fmt::Display) -> Problem {
    Problem::new(StatusCode::BAD_REQUEST, "invalid_input", detail.to_string())
}

/// The turn a request asks for.
fn turn_of(input: &RunAgentInput) -> Result<Turn, Problem> {
    match input.resumes().map_err(bad_input)? {
        Some(true) => Ok(Turn::Resume(
            input
                .resume
                .iter()
                .map(|entry| {
                    (
                        entry.interrupt_id.clone(),
                        entry.payload.clone().unwrap_or(Value::Null),
                    )
                })
                .collect(),
        )),
        Some(false) => Ok(Turn::Abandon),
        None => Ok(Turn::Message {
            message: input.user_message().map_err(bad_input)?,
            id: input.user_message_id().map(str::to_owned),
        }),
    }
}

impl Turn {
    /// What the turn does to its thread, for the access check.
    fn action(&self) -> Action {
        match self {
            Turn::Message { .. } => Action::Run,
            Turn::Resume(_) => Action::Resume,
            Turn::Abandon => Action::Cancel,
        }
    }
}

/// The number of the last event a client saw (`Last-Event-ID`), 0 for none.
fn last_event_id(headers: &HeaderMap) -> u64 {
    headers
        .get("last-event-id")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.trim().parse().ok())
        .unwrap_or(0)
}

fn wants_stream(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .any(|value| value.contains("text/event-stream"))
}

/// The key the runs of `principal` count under, for its limit of runs going.
fn quota_key(principal: &Principal) -> String {
    match principal.tenant() {
        Some(tenant) => format!("{tenant}/{}", principal.id()),
        None => principal.id().to_owned(),
    }
}

/// `POST /`: starts the run the input asks for (or joins it), and answers with its events.
pub(super) async fn start<M, C, S>(
    State(server): State<AgentServer<M, C, S>>,
    Extension(principal): Extension<Principal>,
    request_id: Option<Extension<RequestId>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response
where
    M: Model + 'static,
    C: Middleware + 'static,
    C::ThreadState: Serialize + DeserializeOwned + Send,
    S: ThreadStore + 'static,
{
    let input: RunAgentInput = match serde_json::from_slice(&body) {
        Ok(input) => input,
        Err(error) => {
            return bad_input(format!("the body is not an AG-UI RunAgentInput: {error}"))
                .into_response();
        }
    };
    if let Err(error) = input.check_ids() {
        return bad_input(error).into_response();
    }
    let turn = match turn_of(&input) {
        Ok(turn) => turn,
        Err(problem) => return problem.into_response(),
    };
    let shared = &server.shared;
    if let Turn::Message { message, .. } = &turn
        && !shared.client_urls.allow_all_in(message)
    {
        return Problem::new(
            StatusCode::BAD_REQUEST,
            "url_not_allowed",
            "this server takes images as data (`{\"type\": \"data\"}`), not by URL",
        )
        .into_response();
    }
    // `check_ids` took the id: it is one a client may send.
    let Some(key) = thread_key(&principal, &input.thread_id) else {
        return unknown_thread().into_response();
    };
    let run_key = RunKey {
        thread: key.as_str().to_owned(),
        run: input.run_id.clone(),
    };
    // A run sent again (a client's retry, a reconnect) joins the run known.
    if let Some(known) = shared.runs.get(&run_key) {
        return join(&server, &principal, &input.thread_id, known, &headers).await;
    }
    let stored = match load_checked(shared, &principal, &key, turn.action()).await {
        Ok(stored) => stored,
        Err(problem) => return problem.into_response(),
    };
    // A thread that does not exist can only be made, by a new turn.
    if stored.is_none() && !matches!(turn, Turn::Message { .. }) {
        return unknown_thread().into_response();
    }
    let owner = match &stored {
        Some(stored) => stored.thread.owner().map(str::to_owned),
        None => principal.owner().map(str::to_owned),
    };
    let log = {
        // One lock over the checks and the start, so that two requests for one thread cannot
        // both start.
        let mut busy = shared.busy_threads();
        if let Some(busy_owner) = busy.get(key.as_str()) {
            // A thread a run is making (not stored yet) is its maker's.
            if stored.is_none()
                && !allowed(
                    shared,
                    &principal,
                    &input.thread_id,
                    busy_owner.as_deref(),
                    turn.action(),
                )
            {
                return unknown_thread().into_response();
            }
            if shared.runs.get(&run_key).is_none() {
                return Problem::new(
                    StatusCode::CONFLICT,
                    "thread_busy",
                    "the conversation has a run going; wait for its end",
                )
                .into_response();
            }
        }
        match shared
            .runs
            .start(&run_key, owner.as_deref(), &quota_key(&principal))
        {
            Ok(Started::Joined(known)) => Err(known),
            Ok(Started::New(log)) => {
                busy.insert(key.as_str().to_owned(), owner);
                let span = tracing::info_span!(
                    "agui_run",
                    thread_id = %input.thread_id,
                    run_id = %input.run_id,
                    request_id = request_id.as_ref().map(|id| id.0.0.as_str()),
                );
                let run = drive(
                    Arc::clone(shared),
                    RunStart {
                        key,
                        client_thread_id: input.thread_id.clone(),
                        run_id: input.run_id.clone(),
                        stored,
                        principal: principal.clone(),
                    },
                    turn,
                    Arc::clone(&log),
                    shared.stop.subscribe(),
                );
                tokio::spawn(run.instrument(span));
                Ok(log)
            }
            Err(refused) => return refusal(&refused),
        }
    };
    match log {
        Ok(log) => respond(log, &headers).await,
        // Started by another request since this one looked.
        Err(known) => join(&server, &principal, &input.thread_id, known, &headers).await,
    }
}

/// The answer of a request that joins the known run `known` of the thread `thread_id`: its
/// events, if the principal may read the thread.
async fn join<M, C, S>(
    server: &AgentServer<M, C, S>,
    principal: &Principal,
    thread_id: &str,
    known: KnownRun,
    headers: &HeaderMap,
) -> Response {
    let owner = known.owner.as_deref();
    if !allowed(&server.shared, principal, thread_id, owner, Action::Read) {
        return unknown_thread().into_response();
    }
    respond(known.log, headers).await
}

/// The run's events as the client asked: streamed, or its last as JSON once it ends.
async fn respond(log: Arc<RunLog>, headers: &HeaderMap) -> Response {
    if wants_stream(headers) {
        stream(log, last_event_id(headers))
    } else {
        last_event(log).await
    }
}

fn refusal(refused: &Refused) -> Response {
    match refused {
        Refused::Busy(_) => {
            Problem::new(StatusCode::SERVICE_UNAVAILABLE, "busy", refused.to_string())
                .retry_after(1)
                .into_response()
        }
        Refused::TooMany(_) => Problem::new(
            StatusCode::TOO_MANY_REQUESTS,
            "too_many_runs",
            refused.to_string(),
        )
        .retry_after(1)
        .into_response(),
        Refused::ShuttingDown => Problem::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "shutting_down",
            refused.to_string(),
        )
        .retry_after(5)
        .into_response(),
    }
}

/// The run's events after `after`, as server-sent events with their numbers as ids.
fn stream(log: Arc<RunLog>, after: u64) -> Response {
    match log.follow(after) {
        Ok(frames) => {
            let events = frames.map(|frame| {
                Ok::<_, Infallible>(
                    Event::default()
                        .id(frame.seq.to_string())
                        .data(&*frame.data),
                )
            });
            Sse::new(events)
                .keep_alive(KeepAlive::default())
                .into_response()
        }
        Err(gone) => {
            Problem::new(StatusCode::GONE, "events_gone", gone.to_string()).into_response()
        }
    }
}

/// The HTTP status of each `RUN_ERROR` code, for a client that asked for JSON.
const RUN_ERROR_STATUS: [(&str, StatusCode); 14] = [
    ("thread_conflict", StatusCode::CONFLICT),
    ("not_paused", StatusCode::CONFLICT),
    ("invalid_resume", StatusCode::CONFLICT),
    ("thread_busy", StatusCode::CONFLICT),
    ("unknown_thread", StatusCode::NOT_FOUND),
    ("invalid_input", StatusCode::BAD_REQUEST),
    ("server_shutdown", StatusCode::SERVICE_UNAVAILABLE),
    ("model_unavailable", StatusCode::SERVICE_UNAVAILABLE),
    ("model_rate_limited", StatusCode::SERVICE_UNAVAILABLE),
    ("context_too_long", StatusCode::BAD_GATEWAY),
    ("content_filtered", StatusCode::BAD_GATEWAY),
    ("max_steps", StatusCode::BAD_GATEWAY),
    ("model_failed", StatusCode::BAD_GATEWAY),
    ("thread_store", StatusCode::INTERNAL_SERVER_ERROR),
];

/// The run's last event, once it ended: `RUN_FINISHED` as JSON, or `RUN_ERROR` as a problem.
async fn last_event(log: Arc<RunLog>) -> Response {
    let last = match log.follow(0) {
        Ok(frames) => {
            frames
                .fold(None, |_, frame| async move { Some(frame) })
                .await
        }
        Err(_) => None,
    };
    let Some(last) = last else {
        return Problem::new(StatusCode::GONE, "events_gone", "the run's events are gone")
            .into_response();
    };
    let event: Value = serde_json::from_str(&last.data).unwrap_or(Value::Null);
    if event["type"] == "RUN_FINISHED" {
        return (StatusCode::OK, axum::Json(event)).into_response();
    }
    let (code, status) = event["code"]
        .as_str()
        .and_then(|code| RUN_ERROR_STATUS.iter().find(|(known, _)| *known == code))
        .copied()
        .unwrap_or(("internal", StatusCode::INTERNAL_SERVER_ERROR));
    let detail = event["message"]
        .as_str()
        .unwrap_or("the run failed")
        .to_owned();
    Problem::new(status, code, detail).into_response()
}

/// `GET /threads/{thread_id}/runs/{run_id}/events`: a run's events after `Last-Event-ID`.
pub(super) async fn events<M, C, S>(
    State(server): State<AgentServer<M, C, S>>,
    Extension(principal): Extension<Principal>,
    Path((thread_id, run_id)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    let known = thread_key(&principal, &thread_id)
        .and_then(|key| {
            server.shared.runs.get(&RunKey {
                thread: key.as_str().to_owned(),
                run: run_id,
            })
        })
        .filter(|known| {
            allowed(
                &server.shared,
                &principal,
                &thread_id,
                known.owner.as_deref(),
                Action::Read,
            )
        });
    match known {
        Some(known) => stream(known.log, last_event_id(&headers)),
        None => Problem::new(
            StatusCode::NOT_FOUND,
            "unknown_run",
            "no run of that id is going or recently ended in that conversation",
        )
        .into_response(),
    }
}

/// `GET /threads/{thread_id}`: the conversation, and what its pause asks, if it is paused.
pub(super) async fn thread<M, C, S>(
    State(server): State<AgentServer<M, C, S>>,
    Extension(principal): Extension<Principal>,
    Path(thread_id): Path<String>,
) -> Response
where
    M: Model + 'static,
    C: Middleware + 'static,
    S: ThreadStore,
{
    let shared = &server.shared;
    let Some(key) = thread_key(&principal, &thread_id) else {
        return unknown_thread().into_response();
    };
    let stored = match load_checked(shared, &principal, &key, Action::Read).await {
        Ok(Some(stored)) => stored,
        Ok(None) => return unknown_thread().into_response(),
        Err(problem) => return problem.into_response(),
    };
    let thread = &stored.thread;
    let interrupts = match shared.agent.paused_run(thread).await {
        Ok(Some(pause)) => pause_view(shared, &pause).interrupts(pause.interrupts()),
        Ok(None) => Vec::new(),
        Err(error) => return store_failed(&error).into_response(),
    };
    axum::Json(json!({
        "threadId": thread_id,
        "version": stored.version,
        "paused": thread.is_paused(),
        "interrupts": interrupts,
        "messages": agui_messages(&thread_id, thread.messages()),
    }))
    .into_response()
}

/// The query of `GET /threads`.
#[derive(Debug, Deserialize)]
pub(super) struct Page {
    /// The last id of the page before.
    after: Option<String>,
    /// The most ids (default and most: [`MAX_PAGE`]).
    limit: Option<usize>,
}

/// The most thread ids `GET /threads` answers at once.
const MAX_PAGE: usize = 100;

/// `GET /threads?after=&limit=`: the ids of the principal's threads, in the order of their
/// bytes, a page at a time (`next` names the last, for the next page; `null` at the end).
pub(super) async fn list<M, C, S: ThreadStore>(
    State(server): State<AgentServer<M, C, S>>,
    Extension(principal): Extension<Principal>,
    Query(page): Query<Page>,
) -> Response {
    let limit = page.limit.unwrap_or(MAX_PAGE).clamp(1, MAX_PAGE);
    // The anonymous principal owns nothing: it lists nothing (it reaches threads by id).
    let Some(owner) = principal.owner() else {
        return axum::Json(json!({ "threads": [], "next": null })).into_response();
    };
    let mut cursor = page.after.and_then(|after| thread_key(&principal, &after));
    let mut threads = Vec::new();
    let mut more = true;
    while threads.len() < limit && more {
        let found = match server
            .shared
            .threads
            .list_owned(owner, cursor.as_ref(), limit)
            .await
        {
            Ok(found) => found,
            Err(error) => return store_failed(&error).into_response(),
        };
        more = found.len() == limit;
        cursor = found.last().cloned().or(cursor);
        // The same id in another tenant is another principal: only this one's namespace.
        threads.extend(
            found
                .iter()
                .filter(|key| in_namespace(&principal, key))
                .map(|key| client_id(&principal, key).to_owned())
                .take(limit - threads.len()),
        );
    }
    let next = (threads.len() == limit)
        .then(|| threads.last().cloned())
        .flatten();
    axum::Json(json!({
        "threads": threads.iter().map(|id| json!({ "threadId": id })).collect::<Vec<_>>(),
        "next": next,
    }))
    .into_response()
}

/// Whether `key` is in the namespace of `principal`'s threads.
fn in_namespace(principal: &Principal, key: &ThreadId) -> bool {
    match principal.tenant() {
        Some(tenant) => key.namespace() == Some(tenant),
        None => !key.as_str().contains('/'),
    }
}

/// Any other path: a problem, not a bare `404`.
pub(super) async fn not_found() -> Response {
    Problem::new(StatusCode::NOT_FOUND, "not_found", "no such route").into_response()
}
