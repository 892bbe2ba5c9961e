//! The server's HTTP surface, without a browser or a node client: the JSON and SSE forms of a
//! run, a reconnect from `Last-Event-ID`, the thread endpoint, request ids, problem responses
//! for every refusal, one turn at a time per thread, and shutdown on tokio's paused clock.
//! (The spans of a request are `request_spans.rs`'s, a binary of its own.)

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use axum::response::Response;
use hookchain::prelude::*;
use hookchain::thread_store::{InMemoryThreadStore, ThreadStore};
use hookchain::{Model, ModelError, ModelRequest, ThreadId};
use hookchain_axum::AgentServer;
use serde_json::{Value, json};
use tokio::sync::Notify;
use tower::ServiceExt;

/// A model that answers `Hello!` once `open` is notified (at once if it was before).
#[derive(Clone)]
struct Gate {
    open: Arc<Notify>,
}

impl Model for Gate {
    fn invoke(
        &self,
        _request: ModelRequest,
    ) -> impl std::future::Future<Output = Result<ModelResponse, ModelError>> + Send {
        let open = Arc::clone(&self.open);
        async move {
            open.notified().await;
            Ok(ModelResponse::text("Hello!"))
        }
    }
}

fn turn(thread: &str, run: &str, text: &str) -> Value {
    json!({"threadId": thread, "runId": run, "state": null, "tools": [], "context": [],
           "forwardedProps": {}, "messages": [{"id": "m1", "role": "user", "content": text}]})
}

fn post(body: &Value, stream: bool) -> Request<Body> {
    let mut request = Request::post("/")
        .header(header::HOST, "localhost")
        .header(header::CONTENT_TYPE, "application/json")
        .header("x-request-id", "req-42");
    if stream {
        request = request.header(header::ACCEPT, "text/event-stream");
    }
    request.body(Body::from(body.to_string())).unwrap()
}

async fn body(response: Response) -> String {
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
        .await
        .unwrap();
    String::from_utf8(bytes.to_vec()).unwrap()
}

async fn json_of(response: Response) -> Value {
    serde_json::from_str(&body(response).await).unwrap()
}

/// The `(id, data)` of each server-sent event of `text`.
fn frames(text: &str) -> Vec<(u64, Value)> {
    text.split("\n\n")
        .filter_map(|block| {
            let id = block.lines().find_map(|line| line.strip_prefix("id: "))?;
            let data = block.lines().find_map(|line| line.strip_prefix("data: "))?;
            Some((id.parse().unwrap(), serde_json::from_str(data).unwrap()))
        })
        .collect()
}

/// A `GET` of `path`, as a client on loopback sends it.
fn get(path: &str) -> Request<Body> {
    Request::get(path)
        .header(header::HOST, "localhost")
        .body(Body::empty())
        .unwrap()
}

/// The server of `agent`, for anyone (the tests' client is on loopback).
fn anonymous<M: Model + 'static, S: ThreadStore + 'static>(
    agent: Agent<M>,
    threads: S,
) -> AgentServer<M, (), S> {
    AgentServer::builder()
        .allow_anonymous()
        .build(Arc::new(agent), threads)
        .unwrap()
}

fn scripted(
    answers: impl IntoIterator<Item = ModelResponse>,
) -> AgentServer<ScriptedModel, (), InMemoryThreadStore> {
    let agent = Agent::builder(ScriptedModel::new(answers)).build().unwrap();
    anonymous(agent, InMemoryThreadStore::new())
}

#[tokio::test]
async fn a_turn_answers_as_json_or_as_events_and_the_thread_keeps_it() {
    let server = scripted([ModelResponse::text("Hello!"), ModelResponse::text("Again!")]);
    let router = server.router();
    let response = router
        .clone()
        .oneshot(post(&turn("t1", "r1", "Hi"), false))
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["x-request-id"], "req-42");
    let finished = json_of(response).await;
    assert_eq!(finished["type"], "RUN_FINISHED");
    assert_eq!(finished["result"]["text"], "Hello!");
    assert_eq!(finished["outcome"]["type"], "success");

    let response = router
        .clone()
        .oneshot(post(&turn("t1", "r2", "More"), true))
        .await
        .unwrap();
    assert_eq!(
        response.headers()[header::CONTENT_TYPE],
        "text/event-stream"
    );
    let events = frames(&body(response).await);
    let ids: Vec<u64> = events.iter().map(|(id, _)| *id).collect();
    assert_eq!(ids, [1, 2, 3, 4, 5]);
    let kinds: Vec<&str> = events
        .iter()
        .map(|(_, event)| event["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "RUN_STARTED",
            "TEXT_MESSAGE_START",
            "TEXT_MESSAGE_CONTENT",
            "TEXT_MESSAGE_END",
            "RUN_FINISHED"
        ]
    );
    // A reconnect reads the events after the last one seen.
    let mut reconnect = get("/threads/t1/runs/r2/events");
    reconnect
        .headers_mut()
        .insert("last-event-id", "3".parse().unwrap());
    let events = frames(&body(router.clone().oneshot(reconnect).await.unwrap()).await);
    assert_eq!(events.iter().map(|(id, _)| *id).collect::<Vec<_>>(), [4, 5]);

    let thread = json_of(router.clone().oneshot(get("/threads/t1")).await.unwrap()).await;
    assert_eq!(thread["version"], 2);
    assert_eq!(thread["paused"], false);
    let texts: Vec<&str> = thread["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|message| message["content"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["Hi", "Hello!", "More", "Again!"]);
}

/// A problem response's status and code, checking its form.
async fn problem(response: Response) -> (StatusCode, String) {
    let status = response.status();
    assert_eq!(
        response.headers()[header::CONTENT_TYPE],
        "application/problem+json"
    );
    let problem = json_of(response).await;
    assert_eq!(problem["status"], status.as_u16());
    assert_eq!(
        problem["type"],
        format!(
            "urn:hookchain:problem:{}",
            problem["code"].as_str().unwrap()
        )
    );
    (status, problem["code"].as_str().unwrap().to_owned())
}

#[tokio::test]
async fn refusals_are_problem_responses_that_say_what_to_fix() {
    let server = scripted([]);
    let router = server.router();
    let send = |request: Request<Body>| router.clone().oneshot(request);
    let not_json = Request::post("/")
        .header(header::HOST, "localhost")
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from("{"))
        .unwrap();
    assert_eq!(
        problem(send(not_json).await.unwrap()).await,
        (StatusCode::BAD_REQUEST, "invalid_input".into())
    );
    let assistant_last = json!({"threadId": "t", "runId": "r",
        "messages": [{"id": "1", "role": "assistant", "content": "Hi"}]});
    assert_eq!(
        problem(send(post(&assistant_last, false)).await.unwrap()).await,
        (StatusCode::BAD_REQUEST, "invalid_input".into())
    );
    let unknown_run = get("/threads/t/runs/nope/events");
    assert_eq!(
        problem(send(unknown_run).await.unwrap()).await,
        (StatusCode::NOT_FOUND, "unknown_run".into())
    );
    let unknown_thread = get("/threads/nope");
    assert_eq!(
        problem(send(unknown_thread).await.unwrap()).await,
        (StatusCode::NOT_FOUND, "unknown_thread".into())
    );
    let huge = turn("t", "r", &"x".repeat(5 * 1024 * 1024));
    assert_eq!(
        send(post(&huge, false)).await.unwrap().status(),
        StatusCode::PAYLOAD_TOO_LARGE
    );
    // The model has no answer: a model failure, told without the model's own words.
    let (status, code) = problem(send(post(&turn("t", "r", "Hi"), false)).await.unwrap()).await;
    assert_eq!(
        (status, code.as_str()),
        (StatusCode::BAD_GATEWAY, "model_failed")
    );
}

#[tokio::test]
async fn a_thread_runs_one_turn_at_a_time_and_a_retry_joins_the_run() {
    let open = Arc::new(Notify::new());
    let agent = Agent::builder(Gate {
        open: Arc::clone(&open),
    })
    .build()
    .unwrap();
    let server = anonymous(agent, InMemoryThreadStore::new());
    let router = server.router();
    let first = tokio::spawn(router.clone().oneshot(post(&turn("t", "r1", "Hi"), false)));
    while server.running() == 0 {
        tokio::task::yield_now().await;
    }
    let busy = router
        .clone()
        .oneshot(post(&turn("t", "r2", "Hi"), false))
        .await
        .unwrap();
    assert_eq!(
        problem(busy).await,
        (StatusCode::CONFLICT, "thread_busy".into())
    );
    // The same run again (a client's retry): joined, not started twice.
    let retry = tokio::spawn(router.clone().oneshot(post(&turn("t", "r1", "Hi"), false)));
    tokio::task::yield_now().await;
    assert_eq!(server.running(), 1);
    open.notify_one();
    for response in [first.await.unwrap().unwrap(), retry.await.unwrap().unwrap()] {
        assert_eq!(json_of(response).await["result"]["text"], "Hello!");
    }
}

#[tokio::test(start_paused = true)]
async fn shutdown_waits_its_grace_then_stops_runs_leaving_their_threads_as_they_were() {
    let open = Arc::new(Notify::new());
    let agent = Agent::builder(Gate { open }).build().unwrap();
    let threads = Arc::new(InMemoryThreadStore::new());
    let server = anonymous(agent, Arc::clone(&threads));
    let router = server.router();
    let stuck = tokio::spawn(router.clone().oneshot(post(&turn("t", "r1", "Hi"), true)));
    while server.running() == 0 {
        tokio::task::yield_now().await;
    }
    let report = server.shutdown(Duration::from_secs(10)).await;
    assert_eq!((report.finished, report.stopped), (0, 1));
    let events = frames(&body(stuck.await.unwrap().unwrap()).await);
    let last = &events.last().unwrap().1;
    assert_eq!(
        (last["type"].as_str(), last["code"].as_str()),
        (Some("RUN_ERROR"), Some("server_shutdown"))
    );
    assert!(
        threads
            .load::<()>(&ThreadId::new("t"))
            .await
            .unwrap()
            .is_none()
    );
    let refused = router
        .oneshot(post(&turn("t", "r2", "Hi"), false))
        .await
        .unwrap();
    assert_eq!(
        problem(refused).await,
        (StatusCode::SERVICE_UNAVAILABLE, "shutting_down".into())
    );
}

/// A run's task dropped without ending (its runtime shut down) frees its thread and ends its
/// events, so that neither waits forever.
#[test]
fn a_run_whose_task_is_dropped_frees_its_thread_and_ends_its_events() {
    let agent = Agent::builder(Gate {
        open: Arc::new(Notify::new()),
    })
    .build()
    .unwrap();
    let server = anonymous(agent, InMemoryThreadStore::new());
    let doomed = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let router = server.router();
    doomed.block_on(async {
        let started = tokio::spawn(router.clone().oneshot(post(&turn("t", "r1", "Hi"), true)));
        while server.running() == 0 {
            tokio::task::yield_now().await;
        }
        drop(started);
    });
    drop(doomed);
    assert_eq!(server.running(), 0);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let reconnect = get("/threads/t/runs/r1/events");
        let events = frames(&body(router.clone().oneshot(reconnect).await.unwrap()).await);
        let last = &events.last().unwrap().1;
        assert_eq!(last["code"], "internal", "{events:?}");
        // The thread is free: another turn is taken (and waits on the model, so it is busy).
        let next = router
            .oneshot(post(&turn("t", "r2", "Hi"), true))
            .await
            .unwrap();
        assert_eq!(next.status(), StatusCode::OK);
    });
}

/// The thread is free before the run's end is told: a client that reads `RUN_FINISHED` and
/// sends its next turn at once is never refused as busy (it was, now and then, when the thread
/// was freed after the log ended).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_sent_as_soon_as_the_last_one_ended_is_taken() {
    let agent = Agent::builder(ScriptedModel::from_rule(|_| Ok(ModelResponse::text("Hi!"))))
        .build()
        .unwrap();
    let server = anonymous(agent, InMemoryThreadStore::new());
    let router = server.router();
    for turn_number in 0..50 {
        let response = router
            .clone()
            .oneshot(post(&turn("t", &format!("r{turn_number}"), "Hi"), false))
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK, "turn {turn_number}");
    }
}

/// Nested under a path of the application's, the agent answers there with a trailing slash
/// too, and an unknown route is a problem response, not a bare `404`.
#[tokio::test]
async fn nested_the_agent_answers_with_or_without_a_trailing_slash() {
    let server = scripted([ModelResponse::text("Hello!"), ModelResponse::text("Again!")]);
    let app = server.mount("/agent");
    for (path, run) in [("/agent", "r1"), ("/agent/", "r2")] {
        let mut request = post(&turn("t", run, "Hi"), false);
        *request.uri_mut() = path.parse().unwrap();
        let response = app.clone().oneshot(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{path}");
    }
    let mut unknown = get("/agent/nowhere");
    *unknown.uri_mut() = "/agent/nowhere".parse().unwrap();
    assert_eq!(
        problem(app.oneshot(unknown).await.unwrap()).await,
        (StatusCode::NOT_FOUND, "not_found".into())
    );
}

/// A principal has at most so many runs going: past it, `429` with a `Retry-After`, and a
/// run of another thread once one of its runs ended.
#[tokio::test]
async fn a_principal_runs_at_most_its_share_at_once() {
    let open = Arc::new(Notify::new());
    let agent = Agent::builder(Gate {
        open: Arc::clone(&open),
    })
    .build()
    .unwrap();
    let server = AgentServer::builder()
        .allow_anonymous()
        .max_running_per_principal(1)
        .build(Arc::new(agent), InMemoryThreadStore::new())
        .unwrap();
    let router = server.router();
    let first = tokio::spawn(router.clone().oneshot(post(&turn("t1", "r1", "Hi"), false)));
    while server.running() == 0 {
        tokio::task::yield_now().await;
    }
    let refused = router
        .clone()
        .oneshot(post(&turn("t2", "r2", "Hi"), false))
        .await
        .unwrap();
    assert_eq!(refused.headers()[header::RETRY_AFTER], "1");
    assert_eq!(
        problem(refused).await,
        (StatusCode::TOO_MANY_REQUESTS, "too_many_runs".into())
    );
    open.notify_one();
    assert_eq!(first.await.unwrap().unwrap().status(), StatusCode::OK);
    open.notify_one();
    let next = router
        .oneshot(post(&turn("t2", "r3", "Hi"), false))
        .await
        .unwrap();
    assert_eq!(next.status(), StatusCode::OK);
}
