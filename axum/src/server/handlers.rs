//! The request handlers: start (or join) a run, read a run's events, read a thread.

use std::convert::Infallible;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use hookchain_core::agent::ThreadId;
use hookchain_core::interrupt::InterruptId;
use hookchain_core::thread_store::ThreadStore;
use hookchain_core::{Middleware, Model};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::sync::Arc;
use tracing::Instrument;

use super::request_id::RequestId;
use super::turn::{Turn, drive};
use super::{AgentServer, Problem};
use crate::agui::{RunAgentInput, agui_messages};
use crate::runs::{Refused, RunLog, Started};

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
                        InterruptId::new(entry.interrupt_id.clone()),
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

/// `POST /`: starts the run the input asks for (or joins it), and answers with its events.
pub(super) async fn start<M, C, S>(
    State(server): State<AgentServer<M, C, S>>,
    request_id: Option<axum::Extension<RequestId>>,
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
    let shared = &server.shared;
    let log = {
        // One lock over both checks, so that two requests for one thread cannot both start.
        let mut busy = shared.busy_threads();
        if shared.runs.get(&input.run_id).is_none() && busy.contains(&input.thread_id) {
            return Problem::new(
                StatusCode::CONFLICT,
                "thread_busy",
                "the conversation has a run going; wait for its end",
            )
            .into_response();
        }
        let turn = match turn_of(&input) {
            Ok(turn) => turn,
            Err(problem) => return problem.into_response(),
        };
        match shared.runs.start(&input.thread_id, &input.run_id) {
            Ok(Started::Joined(log)) => log,
            Ok(Started::New(log)) => {
                busy.insert(input.thread_id.clone());
                let span = tracing::info_span!(
                    "agui_run",
                    thread_id = %input.thread_id,
                    run_id = %input.run_id,
                    request_id = request_id.as_ref().map(|id| id.0.0.as_str()),
                );
                let run = drive(
                    Arc::clone(shared),
                    ThreadId::new(input.thread_id.clone()),
                    input.run_id.clone(),
                    turn,
                    Arc::clone(&log),
                    shared.stop.subscribe(),
                );
                let runs = Arc::clone(&shared.runs);
                let run_id = input.run_id.clone();
                tokio::spawn(
                    async move {
                        run.await;
                        runs.forget_later(run_id).await;
                    }
                    .instrument(span),
                );
                log
            }
            Err(refused) => return refusal(&refused),
        }
    };
    if wants_stream(&headers) {
        stream(log, last_event_id(&headers))
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
        Refused::ShuttingDown => Problem::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "shutting_down",
            refused.to_string(),
        )
        .retry_after(5)
        .into_response(),
        Refused::OtherThread => {
            Problem::new(StatusCode::CONFLICT, "run_id_taken", refused.to_string()).into_response()
        }
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
const RUN_ERROR_STATUS: [(&str, StatusCode); 13] = [
    ("thread_conflict", StatusCode::CONFLICT),
    ("not_paused", StatusCode::CONFLICT),
    ("invalid_resume", StatusCode::CONFLICT),
    ("thread_busy", StatusCode::CONFLICT),
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

/// `GET /runs/{run_id}/events`: a run's events after `Last-Event-ID`.
pub(super) async fn events<M, C, S>(
    State(server): State<AgentServer<M, C, S>>,
    Path(run_id): Path<String>,
    headers: HeaderMap,
) -> Response {
    match server.shared.runs.get(&run_id) {
        Some(log) => stream(log, last_event_id(&headers)),
        None => Problem::new(
            StatusCode::NOT_FOUND,
            "unknown_run",
            "no run of that id is going or recently ended",
        )
        .into_response(),
    }
}

/// `GET /threads/{thread_id}`: the conversation.
pub(super) async fn thread<M, C, S>(
    State(server): State<AgentServer<M, C, S>>,
    Path(thread_id): Path<String>,
) -> Response
where
    S: ThreadStore,
{
    let id = ThreadId::new(thread_id);
    match server.shared.threads.load::<Value>(&id).await {
        Ok(Some(stored)) => axum::Json(json!({
            "threadId": id.as_str(),
            "version": stored.version,
            "paused": stored.thread.is_paused(),
            "messages": agui_messages(id.as_str(), stored.thread.messages()),
        }))
        .into_response(),
        Ok(None) => Problem::new(
            StatusCode::NOT_FOUND,
            "unknown_thread",
            "no conversation of that id",
        )
        .into_response(),
        Err(error) => {
            tracing::warn!(%error, "the thread store failed");
            Problem::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "thread_store",
                "the conversation could not be loaded",
            )
            .into_response()
        }
    }
}
