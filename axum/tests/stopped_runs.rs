//! A run stopped mid-way by a shutdown, and its client sending it again to the next server: the
//! run goes on from its last step — the tool it completed does not run again — whether it was
//! a new turn or the resume of an approved call; a client sending another message instead
//! starts a new turn. Two servers on one checkpointer and one thread store stand for a server
//! and its restart.

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, header};
use axum::response::Response;
use hookchain::builtin::human_in_the_loop::{HumanInTheLoop, ToolPolicy};
use hookchain::interrupt::InMemoryCheckpointer;
use hookchain::prelude::*;
use hookchain::thread_store::{InMemoryThreadStore, ThreadStore};
use hookchain::{Durability, Middleware, Model, ModelError, ModelRequest, Role, ThreadId};
use hookchain_axum::AgentServer;
use serde_json::{Value, json};
use tokio::sync::Notify;
use tower::ServiceExt;

static CHARGED: AtomicUsize = AtomicUsize::new(0);
static REFUNDED: AtomicUsize = AtomicUsize::new(0);
static SHIPPED: AtomicUsize = AtomicUsize::new(0);
static BILLED: AtomicUsize = AtomicUsize::new(0);

/// Bills the customer (counted).
#[hookchain::tool]
async fn bill() -> String {
    BILLED.fetch_add(1, Ordering::SeqCst);
    "billed".to_owned()
}

/// Charges the card (counted).
#[hookchain::tool]
async fn charge() -> String {
    CHARGED.fetch_add(1, Ordering::SeqCst);
    "charged".to_owned()
}

/// Refunds the order (counted).
#[hookchain::tool]
async fn refund() -> String {
    REFUNDED.fetch_add(1, Ordering::SeqCst);
    "refunded".to_owned()
}

/// Ships the order (counted).
#[hookchain::tool]
async fn ship() -> String {
    SHIPPED.fetch_add(1, Ordering::SeqCst);
    "shipped".to_owned()
}

/// A model that calls `tool` when the last message is the user's, and then, after the tool's
/// result, never answers: its server goes away mid-call. Says when it got stuck.
struct CallsThenStalls {
    tool: &'static str,
    stuck: Arc<Notify>,
}

impl Model for CallsThenStalls {
    fn invoke(
        &self,
        request: ModelRequest,
    ) -> impl Future<Output = Result<ModelResponse, ModelError>> + Send {
        let after_tool = request
            .messages
            .last()
            .is_some_and(|message| message.role == Role::Tool);
        let call = ToolCall::new("call_1", self.tool, json!({}));
        let stuck = Arc::clone(&self.stuck);
        async move {
            if after_tool {
                stuck.notify_one();
                std::future::pending::<()>().await;
            }
            Ok(ModelResponse::tool_calls([call]))
        }
    }
}

/// The stores a deployment's servers share, and how much of its runs the agent keeps.
#[derive(Clone, Default)]
struct Stores {
    checkpoints: Arc<InMemoryCheckpointer>,
    threads: Arc<InMemoryThreadStore>,
    /// Only pauses (and resumed runs): `Durability::Pauses`; else every step.
    pauses_only: bool,
}

impl Stores {
    fn server<M: Model + 'static, C: Middleware<ThreadState = ()> + 'static>(
        &self,
        model: M,
        tool: impl hookchain::Tool,
        chain: C,
    ) -> AgentServer<M, C, Arc<InMemoryThreadStore>> {
        let agent = Agent::builder(model)
            .tool(tool)
            .chain(chain)
            .checkpointer(
                Arc::clone(&self.checkpoints),
                if self.pauses_only {
                    Durability::Pauses
                } else {
                    Durability::EveryStep
                },
            )
            .build()
            .unwrap();
        AgentServer::builder()
            .allow_anonymous()
            .build(Arc::new(agent), Arc::clone(&self.threads))
            .unwrap()
    }

    /// A server whose model calls `tool`, then stalls (see [`CallsThenStalls`]); with the
    /// notification of its getting stuck.
    fn stalling<C: Middleware<ThreadState = ()> + 'static>(
        &self,
        tool_name: &'static str,
        tool: impl hookchain::Tool,
        chain: C,
    ) -> (
        AgentServer<CallsThenStalls, C, Arc<InMemoryThreadStore>>,
        Arc<Notify>,
    ) {
        let stuck = Arc::new(Notify::new());
        let model = CallsThenStalls {
            tool: tool_name,
            stuck: Arc::clone(&stuck),
        };
        (self.server(model, tool, chain), stuck)
    }

    async fn messages(&self, thread: &str) -> Vec<(Role, String)> {
        let stored = self.threads.load::<()>(&ThreadId::new(thread)).await;
        let thread = stored.unwrap().expect("the thread is stored");
        thread
            .thread
            .messages()
            .iter()
            .map(|message| (message.role, message.text().into_owned()))
            .collect()
    }
}

fn request(thread: &str, run: &str, extra: Value) -> Request<Body> {
    let mut body = json!({"threadId": thread, "runId": run, "messages": []});
    body.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    Request::post("/")
        .header(header::HOST, "localhost")
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_string()))
        .unwrap()
}

fn user(id: &str, text: &str) -> Value {
    json!({"messages": [{"id": id, "role": "user", "content": text}]})
}

async fn json_of(response: Response) -> Value {
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
        .await
        .unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

/// What `server` answers to `request` (as JSON: the request does not ask for a stream).
async fn answer<M, C>(
    server: &AgentServer<M, C, Arc<InMemoryThreadStore>>,
    request: Request<Body>,
) -> Value
where
    M: Model + 'static,
    C: Middleware<ThreadState = ()> + 'static,
{
    json_of(server.router().oneshot(request).await.unwrap()).await
}

/// Sends `request` to `server`, waits until its model is stuck, and shuts the server down
/// at once: the run is stopped.
async fn stopped_by_shutdown<M, C>(
    server: &AgentServer<M, C, Arc<InMemoryThreadStore>>,
    stuck: &Notify,
    request: Request<Body>,
) where
    M: Model + 'static,
    C: Middleware<ThreadState = ()> + 'static,
{
    let going = tokio::spawn(server.router().oneshot(request));
    stuck.notified().await;
    let report = server.shutdown(Duration::ZERO).await;
    assert_eq!((report.finished, report.stopped), (0, 1));
    let ended = json_of(going.await.unwrap().unwrap()).await;
    assert_eq!(ended["code"], "server_shutdown", "{ended:#}");
}

#[tokio::test]
async fn a_turn_stopped_by_a_shutdown_goes_on_when_sent_again_and_its_tool_runs_once() {
    let stores = Stores::default();
    let (first, stuck) = stores.stalling("charge", charge, ());
    stopped_by_shutdown(&first, &stuck, request("t", "r1", user("m1", "Pay"))).await;
    assert_eq!(CHARGED.load(Ordering::SeqCst), 1);
    // The thread is as it was before the turn.
    assert!(
        stores
            .threads
            .load::<()>(&ThreadId::new("t"))
            .await
            .unwrap()
            .is_none()
    );

    // The restarted server; the client sends its turn again (a new run id, the same message).
    let second = stores.server(
        ScriptedModel::new([ModelResponse::text("Paid.")]),
        charge,
        (),
    );
    let finished = answer(&second, request("t", "r2", user("m1", "Pay"))).await;
    assert_eq!(finished["type"], "RUN_FINISHED", "{finished:#}");
    assert_eq!(finished["result"]["text"], "Paid.");
    assert_eq!(CHARGED.load(Ordering::SeqCst), 1, "the charge ran again");
    assert_eq!(
        stores.messages("t").await,
        [
            (Role::User, "Pay".to_owned()),
            (Role::Assistant, String::new()),
            (Role::Tool, "charged".to_owned()),
            (Role::Assistant, "Paid.".to_owned()),
        ]
    );
    // One model call: the run went on from the charge's result.
    assert_eq!(second.agent().model().requests().len(), 1);
}

#[tokio::test]
async fn an_approval_whose_run_a_shutdown_stopped_is_not_run_again_when_sent_again() {
    let stores = Stores::default();
    let approval = || HumanInTheLoop::new().interrupt_on("refund", ToolPolicy::always());
    let (first, stuck) = stores.stalling("refund", refund, approval());
    let paused = answer(&first, request("t", "r1", user("m1", "Refund it"))).await;
    assert_eq!(paused["outcome"]["type"], "interrupt", "{paused:#}");
    let answers = json!({"resume": [{
        "interruptId": paused["outcome"]["interrupts"][0]["id"],
        "status": "resolved",
        "payload": {"decisions": [{"type": "approve"}]},
    }]});
    stopped_by_shutdown(&first, &stuck, request("t", "r2", answers.clone())).await;
    assert_eq!(REFUNDED.load(Ordering::SeqCst), 1);

    let second = stores.server(
        ScriptedModel::new([ModelResponse::text("Refunded.")]),
        refund,
        approval(),
    );
    let finished = answer(&second, request("t", "r3", answers)).await;
    assert_eq!(finished["result"]["text"], "Refunded.", "{finished:#}");
    assert_eq!(REFUNDED.load(Ordering::SeqCst), 1, "the refund ran again");
    let texts: Vec<String> = stores
        .messages("t")
        .await
        .into_iter()
        .map(|m| m.1)
        .collect();
    assert_eq!(texts, ["Refund it", "", "refunded", "Refunded."]);
}

#[tokio::test]
async fn another_message_after_a_stopped_turn_starts_a_turn_of_its_own() {
    let stores = Stores::default();
    let (first, stuck) = stores.stalling("ship", ship, ());
    stopped_by_shutdown(&first, &stuck, request("t", "r1", user("m1", "Ship it"))).await;

    let seen = Arc::new(Mutex::new(Vec::new()));
    let recorded = Arc::clone(&seen);
    let second = stores.server(
        ScriptedModel::from_rule(move |request: &ModelRequest| {
            recorded.lock().unwrap().push(request.messages.len());
            Ok(ModelResponse::text("What would you like?"))
        }),
        ship,
        (),
    );
    let finished = answer(&second, request("t", "r2", user("m2", "Never mind"))).await;
    assert_eq!(finished["result"]["text"], "What would you like?");
    assert_eq!(SHIPPED.load(Ordering::SeqCst), 1);
    // The model saw the new turn alone: the stopped run was given up.
    assert_eq!(*seen.lock().unwrap(), [1]);
    let texts: Vec<String> = stores
        .messages("t")
        .await
        .into_iter()
        .map(|m| m.1)
        .collect();
    assert_eq!(texts, ["Never mind", "What would you like?"]);
}

/// With an agent that keeps only its pauses (`Durability::Pauses`), the server keeps the runs
/// it starts after each step all the same: a turn a shutdown stopped after its tool ran goes
/// on when sent again, and the tool does not run again.
#[tokio::test]
async fn a_turn_stopped_by_a_shutdown_goes_on_when_sent_again_with_pauses_only() {
    let stores = Stores {
        pauses_only: true,
        ..Stores::default()
    };
    let (first, stuck) = stores.stalling("bill", bill, ());
    stopped_by_shutdown(&first, &stuck, request("t", "r1", user("m1", "Bill them"))).await;
    assert_eq!(BILLED.load(Ordering::SeqCst), 1);
    // The restarted server's model bills when it has not (a turn run from the start would).
    let second = stores.server(
        ScriptedModel::from_rule(|request| {
            let billed = request
                .messages
                .iter()
                .any(|message| message.role == Role::Tool);
            Ok(if billed {
                ModelResponse::text("Billed.")
            } else {
                ModelResponse::tool_calls([ToolCall::new("call_1", "bill", json!({}))])
            })
        }),
        bill,
        (),
    );
    let finished = answer(&second, request("t", "r2", user("m1", "Bill them"))).await;
    assert_eq!(finished["result"]["text"], "Billed.", "{finished:#}");
    assert_eq!(BILLED.load(Ordering::SeqCst), 1, "the bill was sent again");
}
