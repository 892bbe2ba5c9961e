//! The cross-user suite, for any thread store (and the checkpointer beside it): a second user
//! who knows or guesses a thread's id — reading, starting a turn, approving, editing,
//! cancelling, listing, following a run's events, joining a run — gets the same `404` as for
//! an id that does not exist, and changes nothing; the owner does all of it. Tenants with
//! principals of the same id keep apart. Included by `axum/tests/cross_user/main.rs` (memory,
//! files) and the workspace's `tests/cross_user_databases.rs` (SQLite, Postgres), which each
//! define `axum_api` (this crate's items).

use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use hookchain::builtin::human_in_the_loop::{HumanInTheLoop, ToolPolicy};
use hookchain::interrupt::Checkpointer;
use hookchain::prelude::*;
use hookchain::thread_store::ThreadStore;
use hookchain::{
    Content, Durability, ModelError, Role, ThreadId, Tool, ToolContext, ToolError, ToolSpec,
};
use serde_json::{Value, json};
use tower::ServiceExt;

use crate::axum_api::{AgentServer, Denied, Principal};
use hookchain::auth::http::request::Parts;

/// The payments made: `(who, invoice)`, the effect the test counts.
pub(crate) type Ledger = Arc<Mutex<Vec<(String, String)>>>;

/// Pays an invoice: records who paid it in the ledger.
struct Pay {
    ledger: Ledger,
}

impl Tool for Pay {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            "pay",
            "Pays an invoice.",
            json!({"type": "object", "properties": {"invoice": {"type": "string"}}}),
        )
    }

    async fn call(&self, cx: ToolContext<'_>, arguments: Value) -> Result<Content, ToolError> {
        let who = cx
            .get::<Principal>()
            .map_or("nobody".to_owned(), |principal| principal.id().to_owned());
        let invoice = arguments["invoice"].as_str().unwrap_or_default().to_owned();
        self.ledger.lock().unwrap().push((who, invoice.clone()));
        Ok(format!("paid {invoice}").into())
    }
}

/// The server of an agent that pays invoices once a person approves, its runs kept in
/// `checkpointer`, its threads in `threads`; who asks is the `x-user` header (in the tenant of
/// `x-tenant`), and a request without it is refused.
pub(crate) fn payments_server<K, S>(
    checkpointer: K,
    threads: S,
    ledger: &Ledger,
) -> AgentServer<ScriptedModel, HumanInTheLoop, S>
where
    K: Checkpointer + 'static,
    S: ThreadStore + 'static,
{
    let pay = Pay {
        ledger: Arc::clone(ledger),
    };
    let model = ScriptedModel::from_rule(|request: &ModelRequest| {
        let last = request.messages.last();
        if last.is_some_and(|message| message.role == Role::Tool) {
            return Ok::<_, ModelError>(ModelResponse::text("Done."));
        }
        let said = last
            .map(|message| message.text().into_owned())
            .unwrap_or_default();
        let invoice = said.trim_start_matches("pay ").to_owned();
        Ok(ModelResponse::tool_calls([ToolCall::new(
            format!("call_{}", request.messages.len()),
            "pay",
            json!({ "invoice": invoice }),
        )]))
    });
    let agent = Agent::builder(model)
        .tool(pay)
        .chain(HumanInTheLoop::new().interrupt_on("pay", ToolPolicy::always()))
        .checkpointer(checkpointer, Durability::Pauses)
        .build()
        .unwrap();
    AgentServer::builder()
        .authorize(|parts: &Parts| {
            let header = |name: &str| {
                parts
                    .headers
                    .get(name)
                    .and_then(|value| value.to_str().ok())
                    .map(str::to_owned)
            };
            let (user, tenant) = (header("x-user"), header("x-tenant"));
            async move {
                let user = user.ok_or_else(|| {
                    Denied::unauthenticated("sign in first").with_challenge("Bearer")
                })?;
                let principal = Principal::new(user);
                Ok(match tenant {
                    Some(tenant) => principal.with_tenant(tenant),
                    None => principal,
                })
            }
        })
        .build(Arc::new(agent), threads)
        .unwrap()
}

/// A user of the server: who sends the requests.
pub(crate) struct User {
    router: axum::Router,
    name: Option<&'static str>,
    tenant: Option<&'static str>,
}

impl User {
    pub(crate) fn new(router: &axum::Router, name: &'static str) -> Self {
        User {
            router: router.clone(),
            name: Some(name),
            tenant: None,
        }
    }

    pub(crate) fn in_tenant(mut self, tenant: &'static str) -> Self {
        self.tenant = Some(tenant);
        self
    }

    fn request(&self, request: axum::http::request::Builder) -> axum::http::request::Builder {
        let mut request = request.header(header::HOST, "localhost");
        if let Some(name) = self.name {
            request = request.header("x-user", name);
        }
        if let Some(tenant) = self.tenant {
            request = request.header("x-tenant", tenant);
        }
        request
    }

    async fn send(&self, request: Request<Body>) -> (StatusCode, Value) {
        let response = self.router.clone().oneshot(request).await.unwrap();
        let status = response.status();
        let bytes = axum::body::to_bytes(response.into_body(), 1 << 22)
            .await
            .unwrap();
        let text = String::from_utf8(bytes.to_vec()).unwrap();
        let value = serde_json::from_str(&text).unwrap_or(Value::String(text));
        (status, value)
    }

    /// `POST /` with `body`, answered as JSON.
    pub(crate) async fn post(&self, body: &Value) -> (StatusCode, Value) {
        let request = self
            .request(Request::post("/"))
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(body.to_string()))
            .unwrap();
        self.send(request).await
    }

    /// `POST /` with `body`, answered as events: the status and the body's text.
    pub(crate) async fn post_stream(&self, body: &Value) -> (StatusCode, Value) {
        let request = self
            .request(Request::post("/"))
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::ACCEPT, "text/event-stream")
            .body(Body::from(body.to_string()))
            .unwrap();
        self.send(request).await
    }

    pub(crate) async fn get(&self, path: &str) -> (StatusCode, Value) {
        let request = self
            .request(Request::get(path))
            .body(Body::empty())
            .unwrap();
        self.send(request).await
    }
}

pub(crate) fn turn(thread: &str, run: &str, text: &str) -> Value {
    json!({"threadId": thread, "runId": run, "state": null, "tools": [], "context": [],
           "forwardedProps": {}, "messages": [{"id": format!("m-{run}"), "role": "user", "content": text}]})
}

pub(crate) fn resume(thread: &str, run: &str, interrupt: &str, payload: Value) -> Value {
    json!({"threadId": thread, "runId": run, "messages": [],
           "resume": [{"interruptId": interrupt, "status": "resolved", "payload": payload}]})
}

pub(crate) fn cancel(thread: &str, run: &str, interrupt: &str) -> Value {
    json!({"threadId": thread, "runId": run, "messages": [],
           "resume": [{"interruptId": interrupt, "status": "cancelled"}]})
}

/// Checks that `body` (an answer, as JSON or as the text of its events) carries nothing of
/// the server's own: no checkpoint, no run-context value, no interrupt id as the agent makes it
/// (which names the hook and the middleware).
fn assert_no_internals(what: &str, body: &Value) {
    let text = match body {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    for internal in [
        "checkpoint",
        "agui.",
        "after_model",
        "wrap_tool_call",
        "\"chain\"",
    ] {
        assert!(
            !text.contains(internal),
            "{what} carries `{internal}`: {text}"
        );
    }
}

/// The ids of the threads `user` lists.
async fn listed(user: &User) -> Vec<String> {
    let (status, page) = user.get("/threads").await;
    assert_eq!(status, StatusCode::OK, "{page}");
    page["threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|thread| thread["threadId"].as_str().unwrap().to_owned())
        .collect()
}

/// The thread `key` as stored: its version and whether it is paused.
async fn stored(threads: &impl ThreadStore, key: &str) -> (u64, bool) {
    let stored = threads
        .load::<Value>(&ThreadId::new(key))
        .await
        .unwrap()
        .expect("the thread is stored");
    (stored.version, stored.thread.is_paused())
}

/// Every cross-user attempt fails as an unknown id would, and changes nothing; the owner's
/// same requests succeed. `threads` is the store the server keeps its threads in.
pub(crate) async fn cross_user_attempts_fail_and_change_nothing<K, S>(checkpointer: K, threads: S)
where
    K: Checkpointer + 'static,
    S: ThreadStore + Clone + 'static,
{
    let ledger = Ledger::default();
    let server = payments_server(checkpointer, threads.clone(), &ledger);
    let router = server.router();
    let alice = User::new(&router, "alice");
    let bob = User::new(&router, "bob");

    // Alice's turn pauses for her approval of the payment.
    let (status, paused) = alice.post(&turn("t-alice", "r1", "pay INV-7")).await;
    assert_eq!(status, StatusCode::OK, "{paused}");
    assert_eq!(paused["outcome"]["type"], "interrupt", "{paused}");
    let interrupt = paused["outcome"]["interrupts"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    // An opaque id: 128 bits in hex, naming no hook, middleware or call.
    assert_eq!(interrupt.len(), 32, "{interrupt}");
    assert!(interrupt.bytes().all(|byte| byte.is_ascii_hexdigit()));
    assert_no_internals("the paused turn", &paused);
    let before = stored(&threads, "t-alice").await;
    assert_eq!(before, (1, true));

    // What an unknown id gets, to compare each refusal with.
    let (unknown_status, unknown_body) = bob.get("/threads/no-such-thread").await;
    assert_eq!(unknown_status, StatusCode::NOT_FOUND);

    // Bob, knowing the thread's id (and the interrupt's, and the run's).
    let approve = json!({"decisions": [{"type": "approve"}]});
    let edit = json!({"decisions": [{"type": "edit", "arguments": {"invoice": "BOB-1"}}]});
    let attempts = [
        ("read", bob.get("/threads/t-alice").await),
        ("events", bob.get("/threads/t-alice/runs/r1/events").await),
        (
            "approve",
            bob.post(&resume("t-alice", "b1", &interrupt, approve.clone()))
                .await,
        ),
        (
            "edit",
            bob.post(&resume("t-alice", "b2", &interrupt, edit)).await,
        ),
        (
            "cancel",
            bob.post(&cancel("t-alice", "b3", &interrupt)).await,
        ),
        ("turn", bob.post(&turn("t-alice", "b4", "pay BOB-2")).await),
        (
            "join alice's run",
            bob.post(&turn("t-alice", "r1", "pay INV-7")).await,
        ),
        (
            "stream a turn",
            bob.post_stream(&turn("t-alice", "b5", "pay BOB-3")).await,
        ),
    ];
    for (what, (status, body)) in attempts {
        if what == "events" {
            assert_eq!(status, StatusCode::NOT_FOUND, "{what}: {body}");
            assert_eq!(body["code"], "unknown_run", "{what}");
            let (_, unknown) = bob.get("/threads/no-such-thread/runs/r1/events").await;
            assert_eq!(body, unknown, "{what}: as for an unknown thread");
            continue;
        }
        assert_eq!(
            (status, &body),
            (unknown_status, &unknown_body),
            "{what}: the same answer as an unknown id"
        );
    }
    assert!(listed(&bob).await.is_empty());
    // Without credentials: refused before anything, with the challenge.
    let anonymous = User {
        router: router.clone(),
        name: None,
        tenant: None,
    };
    let (status, body) = anonymous.get("/threads/t-alice").await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::UNAUTHORIZED, Some("unauthenticated"))
    );
    // Nothing changed: no payment, the thread as it was, still paused.
    assert!(ledger.lock().unwrap().is_empty());
    assert_eq!(stored(&threads, "t-alice").await, before);

    // Alice does all of it.
    let (status, thread) = alice.get("/threads/t-alice").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(thread["paused"], true);
    assert_eq!(thread["interrupts"][0]["id"], interrupt.as_str());
    assert_no_internals("the thread", &thread);
    assert_eq!(listed(&alice).await, ["t-alice"]);
    let (status, events) = alice.get("/threads/t-alice/runs/r1/events").await;
    assert_eq!(status, StatusCode::OK, "{events}");
    assert_no_internals("the run's events", &events);
    let (status, done) = alice
        .post(&resume("t-alice", "r2", &interrupt, approve.clone()))
        .await;
    assert_eq!(status, StatusCode::OK, "{done}");
    assert_eq!(done["result"]["text"], "Done.");
    assert_eq!(
        *ledger.lock().unwrap(),
        [("alice".to_owned(), "INV-7".to_owned())],
        "paid once, as alice"
    );
    // A late approval (a second tab) runs nothing again.
    let (status, late) = alice
        .post(&resume("t-alice", "r3", &interrupt, approve))
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{late}");
    assert_eq!(ledger.lock().unwrap().len(), 1);

    // Alice gives up her next payment: the call she was shown is closed, and never runs.
    let (_, paused) = alice.post(&turn("t-alice", "r4", "pay INV-8")).await;
    let interrupt = paused["outcome"]["interrupts"][0]["id"].as_str().unwrap();
    let (status, events) = alice.post_stream(&cancel("t-alice", "r5", interrupt)).await;
    assert_eq!(status, StatusCode::OK);
    let events = events.as_str().unwrap();
    assert!(events.contains("TOOL_CALL_RESULT"), "{events}");
    assert!(events.contains("was not executed"), "{events}");
    // A late approval of the cancelled payment, from a second tab: refused, nothing paid.
    let approve = json!({"decisions": [{"type": "approve"}]});
    let (status, late) = alice
        .post(&resume("t-alice", "r6", interrupt, approve))
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{late}");
    assert_eq!(ledger.lock().unwrap().len(), 1);

    // Bob's thread of the same id as one of alice's does not exist: his own is his.
    let (status, _) = bob.post(&turn("t-bob", "b6", "pay BOB-4")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(listed(&bob).await, ["t-bob"]);
    assert_eq!(listed(&alice).await, ["t-alice"]);

    // Tenants keep apart, even for principals of the same id and threads of the same id.
    let acme = User::new(&router, "carol").in_tenant("acme");
    let globex = User::new(&router, "carol").in_tenant("globex");
    let (status, _) = acme.post(&turn("shared-id", "c1", "pay ACME-1")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        globex.get("/threads/shared-id").await.0,
        StatusCode::NOT_FOUND
    );
    let (status, _) = globex.post(&turn("shared-id", "c2", "pay GLOBEX-1")).await;
    assert_eq!(status, StatusCode::OK, "globex's own thread of that id");
    assert_eq!(listed(&acme).await, ["shared-id"]);
    assert_eq!(listed(&globex).await, ["shared-id"]);
    assert_eq!(stored(&threads, "acme/shared-id").await.0, 1);
    assert_eq!(stored(&threads, "globex/shared-id").await.0, 1);
    // A principal without a tenant cannot name a tenant's key.
    let (status, body) = User::new(&router, "carol")
        .get("/threads/acme%2Fshared-id")
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
}
