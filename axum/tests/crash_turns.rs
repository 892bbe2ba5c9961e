//! Crash schedules of the AG-UI server (DESIGN §21, issue 43 item 3): a turn's server killed
//! between any two of its events, its client retrying as an AG-UI client does — and still an
//! approved side effect runs at most once, and the finished turn reports each tool call's
//! result exactly once in its thread.
//!
//! # What a crash is here
//!
//! A server "process" is an [`AgentServer`] whose every write to the world outside it passes
//! through one [`Process`]: the checkpointer's writes (claim, put, renew, release, end), the
//! thread store's (save, delete) and the tools' effects. A process allowed `j` more writes makes
//! them, and blocks forever at the next one: from then on it changes nothing anywhere — its run
//! is stuck, its lease renewals too, and nothing it dropped later could let a key go — exactly
//! what the world sees of a process that died at that instant. (Dropping its tasks instead would
//! run their drop guards, which a `SIGKILL` never does; and a run is a task of its own, which a
//! client dropping its response does not stop.) Its router and the client's response are then
//! dropped, and a new server is built on the same stores: the restart.
//!
//! A request's writes and its events interleave in one order, the same in every run (one
//! current-thread runtime, in-memory stores, a model that is a function of its input). A crash
//! point is a place in that order: `j` writes made and `k` events read by the client, with `k`
//! anywhere from the events pushed before the `j`-th write to those pushed before the
//! `j + 1`-th. Every request of each scenario is crashed at every such point — in particular at
//! every boundary between two of its events, which is what the client can tell apart — and the
//! count is printed and checked against the boundaries measured.
//!
//! # How the client retries
//!
//! As `@ag-ui/client`'s `runAgent` does: every attempt is a new request with a **new `runId`**
//! and the same messages (the user's message keeps its `id`), or the same answers to the pause
//! (`resume`, the interrupt ids it was shown). The server continues a stopped run when it is
//! sent the same message (by its id) or the same answers again, whatever the run id; a run id
//! sent again to the *same* server would join the run it names instead (its old end, for
//! `DEFAULT_KEEP_ENDED`), which is why a client retries with a new one. When its stream ended
//! without the run's end, the client reads the thread (`GET /threads/{id}`), as the server's
//! docs ask: the turn's answer there, it is done; paused, it answers the interrupts shown (or,
//! none shown, sends its answers again); else it sends the same request again. When told
//! `thread_busy` (the dead server's lease
//! still holds the thread) it waits past the lease — tokio's paused clock, which the
//! checkpointer reads ([`Clock::tokio`]) — and retries. When it read `RUN_FINISHED` with an
//! interrupt it sends the approval; with the answer, it is done. At most [`MAX_ATTEMPTS`]
//! requests after the crash.
//!
//! # What is checked after each schedule
//!
//! - The client got the model's final answer (`RUN_FINISHED`'s result, or the thread as saved).
//! - Each tool call acted, under one idempotency key only; it acted a second time (with that key)
//!   only when the dead server had acted and died before keeping the call's result — the call
//!   was in flight — so an idempotent service acts once. No other call acted.
//! - `pay` acted only after the client sent the approval.
//! - The thread (`GET /threads/{id}`) is not paused, has exactly one tool result per tool call
//!   and ends with the model's answer.
//! - The approval sent once more after the end is refused (`RUN_ERROR`), and changes nothing.

#![forbid(unsafe_code)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime};

use axum::Router;
use axum::body::{Body, BodyDataStream};
use axum::http::{Request, StatusCode, header};
use axum::response::Response;
use futures::StreamExt;
use hookchain::builtin::human_in_the_loop::{HumanInTheLoop, ToolPolicy};
use hookchain::interrupt::{
    Checkpoint, CheckpointError, Checkpointer, Claim, Clock, InMemoryCheckpointer, Lease, Record,
    Stored, Tombstone,
};
use hookchain::prelude::*;
use hookchain::thread_store::{EncodedThread, InMemoryThreadStore, ThreadStore, ThreadStoreError};
use hookchain::{
    AgentBuilder, Content, Durability, Middleware, ModelRequest, Role, ThreadId, Tool, ToolError,
    ToolSpec,
};
use hookchain_axum::AgentServer;
use serde_json::{Value, json};
use tokio::sync::watch;
use tower::ServiceExt;

/// The agents' lease on a thread's key: a dead server holds its thread this long.
const LEASE: Duration = Duration::from_secs(30);
/// The client's thread.
const THREAD: &str = "t";
/// The most requests a client sends after the crash before the schedule counts as refused.
const MAX_ATTEMPTS: usize = 10;

/// One time a tool acted on the world.
#[derive(Debug, Clone)]
struct Act {
    tool: &'static str,
    call: String,
    key: String,
    /// The process that acted (1: the one that dies, when the schedule crashes).
    process: usize,
    /// Whether the client had sent an approval by then.
    approved: bool,
}

/// What outlives every server: the stores the servers share, the ledger the tools write, and
/// whether the client approved.
#[derive(Clone)]
struct World {
    checkpoints: Arc<InMemoryCheckpointer>,
    threads: Arc<InMemoryThreadStore>,
    ledger: Arc<Mutex<Vec<Act>>>,
    approved: Arc<AtomicBool>,
}

impl World {
    /// Empty stores; the checkpointer judges leases by tokio's (paused) clock.
    fn new() -> Self {
        World {
            checkpoints: Arc::new(InMemoryCheckpointer::new().with_clock(Clock::tokio())),
            threads: Arc::new(InMemoryThreadStore::new()),
            ledger: Arc::default(),
            approved: Arc::default(),
        }
    }

    fn ledger(&self) -> MutexGuard<'_, Vec<Act>> {
        self.ledger.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// What a process has written, and whether it died.
#[derive(Debug, Clone, Default)]
struct Writes {
    /// The writes made, from the process's start.
    done: usize,
    /// The number `done` may reach; the next write blocks forever.
    limit: Option<usize>,
    /// A write is blocked at the limit: the process died there.
    stuck: bool,
    /// Every later write blocks.
    dead: bool,
    /// What each write was (for the messages of failed checks).
    labels: Vec<String>,
}

/// A server process, as the world sees it: the sequence of its writes, cut where it dies.
struct Process {
    id: usize,
    writes: watch::Sender<Writes>,
}

impl Process {
    fn new(id: usize) -> Arc<Self> {
        Arc::new(Process {
            id,
            writes: watch::Sender::new(Writes::default()),
        })
    }

    /// Passed by every write of the process before it happens: returns if the process may
    /// write, and never returns once it died (or dies now, at its limit) — a dead process's
    /// write never lands.
    async fn write(&self, label: impl FnOnce() -> String) {
        let mut blocked = false;
        self.writes.send_modify(|writes| {
            if writes.dead || writes.limit == Some(writes.done) {
                writes.dead = true;
                writes.stuck = true;
                blocked = true;
            } else {
                writes.done += 1;
                writes.labels.push(label());
            }
        });
        if blocked {
            std::future::pending::<()>().await;
        }
    }

    /// The process dies at its `more`-th write from now (`0`: at the next).
    fn arm(&self, more: usize) {
        self.writes
            .send_modify(|writes| writes.limit = Some(writes.done + more));
    }

    /// The process is dead: no write of its lands any more.
    fn kill(&self) {
        self.writes.send_modify(|writes| writes.dead = true);
    }

    fn writes(&self) -> Writes {
        self.writes.borrow().clone()
    }

    /// Waits until `ready` holds of the process's writes.
    async fn until(&self, ready: impl Fn(&Writes) -> bool) {
        let mut writes = self.writes.subscribe();
        let waited = tokio::time::timeout(Duration::from_secs(3600), writes.wait_for(ready)).await;
        assert!(
            matches!(waited, Ok(Ok(_))),
            "the process never got there: {:?}",
            self.writes()
        );
    }
}

/// The checkpointer as a process uses it: every write passes the process first.
struct GatedCheckpoints {
    inner: Arc<InMemoryCheckpointer>,
    process: Arc<Process>,
}

impl Checkpointer for GatedCheckpoints {
    async fn claim(
        &self,
        key: &str,
        worker: &str,
        ttl: Duration,
    ) -> Result<Claim, CheckpointError> {
        self.process.write(|| format!("claim {key}")).await;
        Checkpointer::claim(&*self.inner, key, worker, ttl).await
    }

    async fn get(&self, key: &str) -> Result<Option<Record>, CheckpointError> {
        Checkpointer::get(&*self.inner, key).await
    }

    async fn list(&self) -> Result<Vec<Stored>, CheckpointError> {
        Checkpointer::list(&*self.inner).await
    }

    async fn put(
        &self,
        key: &str,
        checkpoint: &Checkpoint,
        lease: &Lease,
    ) -> Result<(), CheckpointError> {
        let what = if checkpoint.is_pause() {
            "pause"
        } else {
            "step"
        };
        self.process.write(|| format!("put {what} {key}")).await;
        Checkpointer::put(&*self.inner, key, checkpoint, lease).await
    }

    async fn renew(&self, key: &str, lease: &Lease) -> Result<SystemTime, CheckpointError> {
        self.process.write(|| format!("renew {key}")).await;
        Checkpointer::renew(&*self.inner, key, lease).await
    }

    async fn release(&self, key: &str, lease: &Lease) -> Result<bool, CheckpointError> {
        self.process.write(|| format!("release {key}")).await;
        Checkpointer::release(&*self.inner, key, lease).await
    }

    async fn end(
        &self,
        key: &str,
        lease: &Lease,
        tombstone: Option<&Tombstone>,
    ) -> Result<(), CheckpointError> {
        self.process.write(|| format!("end {key}")).await;
        Checkpointer::end(&*self.inner, key, lease, tombstone).await
    }
}

/// The thread store as a process uses it: every write passes the process first.
struct GatedThreads {
    inner: Arc<InMemoryThreadStore>,
    process: Arc<Process>,
}

impl ThreadStore for GatedThreads {
    async fn load_encoded(&self, id: &ThreadId) -> Result<Option<EncodedThread>, ThreadStoreError> {
        ThreadStore::load_encoded(&*self.inner, id).await
    }

    async fn save_encoded(
        &self,
        id: &ThreadId,
        json: &str,
        expected: u64,
    ) -> Result<u64, ThreadStoreError> {
        self.process
            .write(|| format!("save {} v{expected}", id.as_str()))
            .await;
        ThreadStore::save_encoded(&*self.inner, id, json, expected).await
    }

    async fn list(
        &self,
        after: Option<&ThreadId>,
        limit: usize,
    ) -> Result<Vec<ThreadId>, ThreadStoreError> {
        ThreadStore::list(&*self.inner, after, limit).await
    }

    async fn delete(&self, id: &ThreadId) -> Result<bool, ThreadStoreError> {
        self.process
            .write(|| format!("delete {}", id.as_str()))
            .await;
        ThreadStore::delete(&*self.inner, id).await
    }
}

/// A tool with an effect on the world: one ledger row each time it acts, under its call's
/// idempotency key (what it would hand an idempotent service), the act one write of its
/// process.
struct Effect {
    name: &'static str,
    world: World,
    process: Arc<Process>,
}

impl Tool for Effect {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new(self.name, "Acts on the world.", json!({"type": "object"}))
    }

    async fn call(&self, cx: ToolContext<'_>, _arguments: Value) -> Result<Content, ToolError> {
        let (call, key) = (cx.call_id().to_owned(), cx.idempotency_key());
        self.process.write(|| format!("{} {call}", self.name)).await;
        self.world.ledger().push(Act {
            tool: self.name,
            call,
            key,
            process: self.process.id,
            approved: self.world.approved.load(Ordering::SeqCst),
        });
        Ok(format!("{} done", self.name).into())
    }
}

/// How many tool results `request` holds: where the scripted turn is.
fn results(request: &ModelRequest) -> usize {
    request
        .messages
        .iter()
        .filter(|message| message.role == Role::Tool)
        .count()
}

/// A scenario: a turn, its tools and its model (a function of the conversation, so that a
/// restarted server's model answers a continued run as the dead one's would have).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scenario {
    /// `reserve`, then `pay` — which a person approves (`HumanInTheLoop`): the turn pauses, the
    /// client sends the approval — then the answer.
    Approval,
    /// `hotel` and `flight` in one step (run side by side), then the answer.
    Parallel,
}

impl Scenario {
    fn name(self) -> &'static str {
        match self {
            Scenario::Approval => "approval",
            Scenario::Parallel => "parallel",
        }
    }

    /// The tool calls of the finished turn: (tool, call id).
    fn calls(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Scenario::Approval => &[("reserve", "call_reserve"), ("pay", "call_pay")],
            Scenario::Parallel => &[("hotel", "call_hotel"), ("flight", "call_flight")],
        }
    }

    fn input(self) -> &'static str {
        match self {
            Scenario::Approval => "Reserve the room and pay for it",
            Scenario::Parallel => "Book the hotel and the flight",
        }
    }

    /// The model's answer at the end of the turn.
    fn answer(self) -> &'static str {
        match self {
            Scenario::Approval => "Reserved and paid.",
            Scenario::Parallel => "Both booked.",
        }
    }

    /// The model: the calls of the next step, or the answer.
    fn model(self) -> ScriptedModel {
        ScriptedModel::from_rule(move |request: &ModelRequest| {
            let done = results(request);
            let call = |(tool, id): (&str, &str)| ToolCall::new(id, tool, json!({}));
            let calls = self.calls();
            Ok(match (self, done) {
                (Scenario::Approval, 0 | 1) => ModelResponse::tool_calls([call(calls[done])]),
                (Scenario::Parallel, 0) => {
                    ModelResponse::tool_calls(calls.iter().map(|&pair| call(pair)))
                }
                _ => ModelResponse::text(self.answer()),
            })
        })
    }

    /// The routes of a server of this scenario run by `process` on `world`'s stores.
    fn router(self, world: &World, process: &Arc<Process>) -> Router {
        let effect = |name| Effect {
            name,
            world: world.clone(),
            process: Arc::clone(process),
        };
        let [(first, _), (second, _)] = self.calls() else {
            unreachable!("two calls per scenario")
        };
        let agent = Agent::builder(self.model())
            .tool(effect(first))
            .tool(effect(second));
        match self {
            Scenario::Approval => serve(
                world,
                process,
                agent.chain(HumanInTheLoop::new().interrupt_on("pay", ToolPolicy::always())),
            ),
            Scenario::Parallel => serve(world, process, agent),
        }
    }
}

/// The routes of the server of `agent`, its checkpointer and thread store `world`'s, every
/// write passing `process`.
fn serve<C>(world: &World, process: &Arc<Process>, agent: AgentBuilder<ScriptedModel, C>) -> Router
where
    C: Middleware<ThreadState = ()> + 'static,
{
    let checkpoints = GatedCheckpoints {
        inner: Arc::clone(&world.checkpoints),
        process: Arc::clone(process),
    };
    let agent = agent
        .checkpointer(checkpoints, Durability::EveryStep)
        .worker(format!("server-{}", process.id))
        .lease(LEASE)
        .build()
        .unwrap();
    let threads = GatedThreads {
        inner: Arc::clone(&world.threads),
        process: Arc::clone(process),
    };
    AgentServer::builder()
        .allow_anonymous()
        .build(Arc::new(agent), threads)
        .unwrap()
        .router()
}

/// A response's server-sent events, read one at a time as a client's parser reads them.
struct Events {
    body: BodyDataStream,
    buffer: String,
}

impl Events {
    fn of(response: Response) -> Self {
        Events {
            body: response.into_body().into_data_stream(),
            buffer: String::new(),
        }
    }

    /// The next event's data; `None` at the end of the stream. Cancel-safe: what a dropped
    /// call read stays in the buffer.
    async fn next(&mut self) -> Option<Value> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                // A block without data is a keep-alive comment.
                if let Some(data) = block.lines().find_map(|line| line.strip_prefix("data: ")) {
                    return Some(serde_json::from_str(data).unwrap());
                }
                continue;
            }
            let chunk = self.body.next().await?.unwrap();
            self.buffer.push_str(std::str::from_utf8(&chunk).unwrap());
        }
    }
}

/// The events `events` gives until `want` of them arrived — or, without `want`, until the
/// stream ends or `process` is stuck at a write (then every event it pushed before is read:
/// pushing one never waits, and the stream is polled before the process's state).
async fn read(events: &mut Events, process: &Process, want: Option<usize>) -> Vec<Value> {
    let mut seen = Vec::new();
    while want != Some(seen.len()) {
        tokio::select! {
            biased;
            event = events.next() => match event {
                Some(event) => seen.push(event),
                None => {
                    assert!(want.is_none(), "the stream ended after {} events", seen.len());
                    break;
                }
            },
            () = process.until(|writes| writes.stuck) => break,
        }
    }
    seen
}

/// A request with the common parts of every AG-UI `RunAgentInput`.
fn post(body: &Value) -> Request<Body> {
    Request::post("/")
        .header(header::HOST, "localhost")
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCEPT, "text/event-stream")
        .body(Body::from(body.to_string()))
        .unwrap()
}

/// What the client asks next.
#[derive(Debug, Clone)]
enum Ask {
    /// The turn: the user's message.
    Turn,
    /// The approval of the pause it read: its interrupts' ids.
    Approve(Vec<Value>),
}

/// What the client made of a response.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Heard {
    /// `RUN_FINISHED` with the answer.
    Answered,
    /// `RUN_FINISHED` with an interrupt.
    Paused,
    /// `thread_busy`: another server's lease still holds the thread.
    Busy,
    /// The stream ended without the run's end (the server died).
    Cut,
    /// A refusal the client cannot retry (its code).
    Failed(String),
}

/// An AG-UI client driving one turn to its end (see the module's doc).
struct Client {
    scenario: Scenario,
    next: Ask,
    /// Requests sent, for fresh run ids.
    sent: usize,
    /// The answer of the turn, once read.
    answer: Option<String>,
    /// The last approval sent.
    approval: Option<Value>,
}

impl Client {
    fn new(scenario: Scenario) -> Self {
        Client {
            scenario,
            next: Ask::Turn,
            sent: 0,
            answer: None,
            approval: None,
        }
    }

    /// The next request: the turn, or the approval; a new run id each time, as
    /// `@ag-ui/client` gives each `runAgent`.
    fn request(&mut self, world: &World) -> Request<Body> {
        self.sent += 1;
        let mut body = json!({
            "threadId": THREAD,
            "runId": format!("run-{}", self.sent),
            "state": null, "tools": [], "context": [], "forwardedProps": {},
            "messages": [{"id": "m1", "role": "user", "content": self.scenario.input()}],
        });
        if let Ask::Approve(ids) = &self.next {
            let resume: Vec<Value> = ids
                .iter()
                .map(|id| {
                    json!({"interruptId": id, "status": "resolved",
                           "payload": {"decisions": [{"type": "approve"}]}})
                })
                .collect();
            body["resume"] = Value::Array(resume);
            self.approval = Some(body.clone());
            world.approved.store(true, Ordering::SeqCst);
        }
        post(&body)
    }

    /// What the client makes of the events it read of a response, and what it asks next.
    fn heard(&mut self, events: &[Value]) -> Heard {
        let Some(last) = events.last() else {
            return Heard::Cut;
        };
        match last["type"].as_str() {
            Some("RUN_FINISHED") if last["outcome"]["type"] == "interrupt" => {
                let ids = last["outcome"]["interrupts"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|interrupt| interrupt["id"].clone())
                    .collect();
                self.next = Ask::Approve(ids);
                Heard::Paused
            }
            Some("RUN_FINISHED") => {
                self.answer = last["result"]["text"].as_str().map(str::to_owned);
                Heard::Answered
            }
            Some("RUN_ERROR") if last["code"] == "thread_busy" => Heard::Busy,
            Some("RUN_ERROR") => Heard::Failed(last["code"].as_str().unwrap_or("?").to_owned()),
            _ => Heard::Cut,
        }
    }
}

impl Client {
    /// After a cut stream, the thread as the server saved it (`GET /threads/{id}`): its answer,
    /// when the turn ended there (the client is done); its pause's interrupts, when it is
    /// paused (the client answers them, or answers them again); else nothing (the client sends
    /// the same request again). What it made of the thread.
    async fn saved(&mut self, router: &Router) -> Heard {
        let Some(saved) = saved_thread(router).await else {
            return Heard::Cut;
        };
        if saved["paused"] == true {
            let ids: Vec<Value> = saved["interrupts"]
                .as_array()
                .unwrap()
                .iter()
                .map(|interrupt| interrupt["id"].clone())
                .collect();
            // None shown: the stopped run had taken the answers already (the store holds where
            // it got to), and the client sends them again.
            if !ids.is_empty() {
                self.next = Ask::Approve(ids);
            }
            return Heard::Paused;
        }
        let last = saved["messages"]
            .as_array()
            .and_then(|messages| messages.last());
        match last {
            Some(last)
                if last["role"] == "assistant"
                    && last["toolCalls"]
                        .as_array()
                        .is_none_or(|calls| calls.is_empty()) =>
            {
                self.answer = last["content"].as_str().map(str::to_owned);
                Heard::Answered
            }
            _ => Heard::Cut,
        }
    }
}

/// What the client makes of a response that is not a stream (a problem): `thread_busy` is
/// retried, anything else is not.
async fn problem(response: Response) -> Heard {
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
        .await
        .unwrap();
    let problem: Value = serde_json::from_slice(&bytes).unwrap();
    match problem["code"].as_str() {
        Some("thread_busy") => Heard::Busy,
        code => Heard::Failed(code.unwrap_or("?").to_owned()),
    }
}

/// Where a schedule's server dies: in its `request`-th request (0: the turn), after `writes`
/// of that request's writes, its client having read `events` of its events (`None`: all it
/// pushed before the write it dies at).
#[derive(Debug, Clone, Copy)]
struct Crash {
    request: usize,
    writes: usize,
    events: Option<usize>,
}

/// What one request of a schedule did before the crash: its events read, its writes made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Leg {
    events: usize,
    writes: usize,
}

/// What a schedule did.
#[derive(Debug)]
struct Outcome {
    /// The requests up to the crash (all, without one).
    legs: Vec<Leg>,
    /// How the schedule went, for the messages of failed checks.
    story: Vec<String>,
}

/// Sends `request` to `router`; its events as read — cut as `crash` says, when the process
/// dies in it — or the client's reading of a problem response.
async fn send(router: &Router, request: Request<Body>) -> Result<Events, Heard> {
    let response = router.clone().oneshot(request).await.unwrap();
    let stream = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|kind| kind == "text/event-stream");
    if response.status() == StatusCode::OK && stream {
        Ok(Events::of(response))
    } else {
        Err(problem(response).await)
    }
}

/// Runs `scenario` from scratch on fresh stores, its server dying as `crash` says (then
/// restarted), its client retrying to the end; checks the promise. `writes` is how many writes
/// each request makes without a crash (where the process is known to have made them all).
async fn run_schedule(scenario: Scenario, crash: Option<Crash>, writes: &[usize]) -> Outcome {
    let world = World::new();
    let mut client = Client::new(scenario);
    let mut process = Process::new(1);
    let mut router = scenario.router(&world, &process);
    let mut outcome = Outcome {
        legs: Vec::new(),
        story: Vec::new(),
    };
    let mut crashed = false;
    let mut after_crash = 0;
    while client.answer.is_none() {
        let at = outcome.legs.len();
        let here = crash.filter(|crash| !crashed && crash.request == at);
        let before = process.writes().done;
        if let Some(crash) = here {
            process.arm(crash.writes);
        }
        let request = client.request(&world);
        let ask = format!("{:?}", client.next);
        let heard = match send(&router, request).await {
            Err(heard) => heard,
            Ok(mut events) => {
                let seen = read(&mut events, &process, here.and_then(|crash| crash.events)).await;
                if here.is_some() {
                    // The process reaches the point where it dies (it may still be short of it
                    // when the client read what it reads): stuck at a write, or done with the
                    // request's writes.
                    let all = writes.get(at).copied().unwrap_or(usize::MAX);
                    process
                        .until(|now| now.stuck || now.done - before == all)
                        .await;
                }
                if !crashed {
                    let made = process.writes();
                    outcome.legs.push(Leg {
                        events: seen.len(),
                        writes: made.done - before,
                    });
                    outcome.story.push(format!(
                        "{ask}: {} events, writes {:?}",
                        seen.len(),
                        &made.labels[before..]
                    ));
                }
                if here.is_some() {
                    // The kill: no later write of the process lands; its client's connection
                    // and its routes go. The restart: a new server on the same stores.
                    process.kill();
                    drop(events);
                    crashed = true;
                    process = Process::new(2);
                    router = scenario.router(&world, &process);
                }
                client.heard(&seen)
            }
        };
        outcome.story.push(format!("{ask}: {heard:?}"));
        if crashed {
            after_crash += 1;
            assert!(
                after_crash <= MAX_ATTEMPTS,
                "{}: the client was refused {MAX_ATTEMPTS} times after the crash {crash:?}: {:#?}",
                scenario.name(),
                outcome.story
            );
        }
        if heard == Heard::Cut {
            // The stream was cut before the run's end: what the server saved tells.
            let saved = client.saved(&router).await;
            outcome
                .story
                .push(format!("the thread as saved: {saved:?}"));
        }
        match heard {
            Heard::Answered | Heard::Paused | Heard::Cut => {}
            Heard::Busy => tokio::time::advance(LEASE + Duration::from_secs(1)).await,
            Heard::Failed(code) => panic!(
                "{}: the client was refused ({code}) after the crash {crash:?}: {:#?}",
                scenario.name(),
                outcome.story
            ),
        }
    }
    check(scenario, &world, &router, &client, crash, &outcome).await;
    outcome
}

/// Checks the promise after a schedule (see the module's doc), with its story in the message.
async fn check(
    scenario: Scenario,
    world: &World,
    router: &Router,
    client: &Client,
    crash: Option<Crash>,
    outcome: &Outcome,
) {
    let context = || format!("{} {crash:?}: {:#?}", scenario.name(), outcome.story);
    assert_eq!(
        client.answer.as_deref(),
        Some(scenario.answer()),
        "{}",
        context()
    );
    let ledger = world.ledger().clone();
    for act in &ledger {
        assert!(
            scenario.calls().contains(&(act.tool, act.call.as_str())),
            "an unexpected act {act:?}: {}",
            context()
        );
        if act.tool == "pay" {
            assert!(act.approved, "pay acted unapproved: {}", context());
        }
    }
    for &(tool, call) in scenario.calls() {
        let acts: Vec<&Act> = ledger
            .iter()
            .filter(|act| act.tool == tool && act.call == call)
            .collect();
        assert!(!acts.is_empty(), "{tool} never acted: {}", context());
        assert!(
            acts.iter().all(|act| act.key == acts[0].key),
            "{tool} acted under two keys {acts:?}: {}",
            context()
        );
        // A second act, by the restarted server, only of a call in flight when the first died.
        let by = |process| acts.iter().filter(|act| act.process == process).count();
        assert!(
            by(1) <= 1 && by(2) <= 1 && (by(2) == 0 || crash.is_some()),
            "{tool} acted {acts:?}: {}",
            context()
        );
    }
    let before = thread(router).await;
    assert_eq!(before["paused"], false, "{}", context());
    let messages = before["messages"].as_array().unwrap();
    let called: Vec<&str> = messages
        .iter()
        .filter_map(|message| message["toolCalls"].as_array())
        .flatten()
        .map(|call| call["id"].as_str().unwrap())
        .collect();
    let expected: Vec<&str> = scenario.calls().iter().map(|&(_, id)| id).collect();
    assert_eq!(called, expected, "{}", context());
    for id in &called {
        let results = messages
            .iter()
            .filter(|message| message["role"] == "tool" && message["toolCallId"] == *id)
            .count();
        assert_eq!(results, 1, "the results of {id}: {}", context());
    }
    let last = messages.last().unwrap();
    assert_eq!(
        (last["role"].as_str(), last["content"].as_str()),
        (Some("assistant"), Some(scenario.answer())),
        "{}",
        context()
    );
    // The approval once more, late: refused, and nothing changes.
    if let Some(approval) = &client.approval {
        let mut late = approval.clone();
        late["runId"] = json!("run-late");
        let heard = match send(router, post(&late)).await {
            Ok(mut events) => {
                let mut seen = Vec::new();
                while let Some(event) = events.next().await {
                    seen.push(event);
                }
                Client::new(scenario).heard(&seen)
            }
            Err(heard) => heard,
        };
        assert!(
            matches!(heard, Heard::Failed(_)),
            "a late approval: {heard:?}: {}",
            context()
        );
        assert_eq!(world.ledger().len(), ledger.len(), "{}", context());
        assert_eq!(thread(router).await, before, "{}", context());
    }
}

/// The thread as `GET /threads/{id}` shows it.
async fn thread(router: &Router) -> Value {
    saved_thread(router).await.expect("the thread is stored")
}

/// The thread as `GET /threads/{id}` shows it; `None` before it was first saved.
async fn saved_thread(router: &Router) -> Option<Value> {
    let request = Request::get(format!("/threads/{THREAD}"))
        .header(header::HOST, "localhost")
        .body(Body::empty())
        .unwrap();
    let response = router.clone().oneshot(request).await.unwrap();
    if response.status() == StatusCode::NOT_FOUND {
        return None;
    }
    assert_eq!(response.status(), StatusCode::OK);
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
        .await
        .unwrap();
    Some(serde_json::from_slice(&bytes).unwrap())
}

/// How many crash points `scenario` was run through, and how many event boundaries its
/// requests have.
#[derive(Debug, Clone, Copy, Default)]
struct Coverage {
    points: usize,
    boundaries: usize,
}

/// Runs `scenario` without a crash, then crashed at every point of every request (see the
/// module's doc): `j` writes made, the client having read any number of events from those
/// pushed before the `j`-th write to those pushed before the next.
async fn every_crash_point(scenario: Scenario) -> Coverage {
    let dry = run_schedule(scenario, None, &[]).await;
    eprintln!("{}: without a crash: {:#?}", scenario.name(), dry.story);
    let writes: Vec<usize> = dry.legs.iter().map(|leg| leg.writes).collect();
    let mut coverage = Coverage::default();
    for (request, leg) in dry.legs.iter().enumerate() {
        coverage.boundaries += leg.events + 1;
        // The events pushed before the write the process dies at, for the previous `j`.
        let mut pushed_before = 0;
        for j in 0..=leg.writes {
            let crash = |events| Crash {
                request,
                writes: j,
                events,
            };
            let probe = run_schedule(scenario, Some(crash(None)), &writes).await;
            assert_eq!(
                probe.legs[..request],
                dry.legs[..request],
                "the requests before the crash went as without one"
            );
            let pushed = probe.legs[request].events;
            assert!(pushed >= pushed_before, "{:#?}", probe.story);
            for events in pushed_before..pushed {
                run_schedule(scenario, Some(crash(Some(events))), &writes).await;
                coverage.points += 1;
            }
            coverage.points += 1;
            pushed_before = pushed;
        }
        assert_eq!(pushed_before, leg.events, "the last point read every event");
    }
    eprintln!(
        "{}: {} crash points covered ({} event boundaries)",
        scenario.name(),
        coverage.points,
        coverage.boundaries
    );
    assert!(coverage.points >= coverage.boundaries);
    coverage
}

#[tokio::test(start_paused = true)]
async fn a_turn_killed_at_every_point_finishes_on_retry_each_call_acting_once() {
    let mut total = Coverage::default();
    for scenario in [Scenario::Approval, Scenario::Parallel] {
        let covered = every_crash_point(scenario).await;
        total.points += covered.points;
        total.boundaries += covered.boundaries;
    }
    eprintln!(
        "in all: {} crash points covered ({} event boundaries)",
        total.points, total.boundaries
    );
    assert!(total.points >= total.boundaries);
}
