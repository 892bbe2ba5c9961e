//! Owned (`Send + 'static`) streams of every entry point, spawned on a multi-threaded runtime:
//! a thread given by value comes back updated, or as it was when its stream is dropped early;
//! and the key of every entry point's pause, read from its output (or its stream's last
//! event), resumes it in a fresh agent on the same store.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures::{StreamExt, TryStreamExt};
use hookchain::builtin::human_in_the_loop::{ApprovalResponse, HumanInTheLoop, ToolPolicy};
use hookchain::interrupt::InMemoryCheckpointer;
use hookchain::prelude::*;
use hookchain::{
    AgentEvent, AgentStream, Content, Durability, EndReason, InterruptId, ResumeFrom, Role,
    RunContext, RunOutput, Thread, Tool, ToolError, ToolSpec,
};
use serde_json::json;

type PayAgent = Agent<ScriptedModel, HumanInTheLoop>;
type PayThread = Thread<<HumanInTheLoop as Middleware>::ThreadState>;

/// Fails to compile unless `value`'s type can be moved to another task and live as long as it
/// is read.
fn assert_send_static<T: Send + 'static>(_: &T) {}

/// The tenant a request is for, in its runs' context.
struct Tenant(&'static str);

/// The approved tool: counts its runs, and says whom it paid for (the run context's tenant).
struct Pay(Arc<AtomicUsize>);

impl Tool for Pay {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new("pay", "Pays.", json!({ "type": "object" }))
    }

    async fn call(&self, cx: ToolContext<'_>, _: serde_json::Value) -> Result<Content, ToolError> {
        self.0.fetch_add(1, Ordering::SeqCst);
        let tenant = cx.get::<Tenant>().map_or("nobody", |tenant| tenant.0);
        Ok(format!("paid for {tenant}").into())
    }
}

/// An agent that calls `pay` (which waits for approval) when the latest user message says
/// "pay", answers "paid" once it has, and "hello" to anything else; its pauses kept in `store`
/// (none without one).
fn agent(store: Option<&Arc<InMemoryCheckpointer>>, pays: &Arc<AtomicUsize>) -> Arc<PayAgent> {
    let model = ScriptedModel::from_rule(|request| {
        let latest_user = request
            .messages
            .iter()
            .rposition(|message| message.role == Role::User);
        let asked = latest_user.is_some_and(|at| request.messages[at].text() == "pay");
        let paid = latest_user.is_some_and(|at| {
            request.messages[at..]
                .iter()
                .any(|message| message.role == Role::Tool)
        });
        Ok(match (asked, paid) {
            (true, false) => {
                ModelResponse::tool_calls([ToolCall::new("call_pay", "pay", json!({}))])
            }
            (true, true) => ModelResponse::text("paid"),
            (false, _) => ModelResponse::text("hello"),
        })
    });
    let builder = Agent::builder(model)
        .tool(Pay(Arc::clone(pays)))
        .chain(HumanInTheLoop::new().interrupt_on("pay", ToolPolicy::always()));
    let builder = match store {
        Some(store) => builder.checkpointer(Arc::clone(store), Durability::Pauses),
        None => builder,
    };
    Arc::new(builder.build().expect("the agent builds"))
}

/// The run's output: the last event of its stream.
async fn output_of(stream: impl futures::Stream<Item = Result<AgentEvent, Error>>) -> RunOutput {
    let events: Vec<AgentEvent> = stream.try_collect().await.expect("the run succeeds");
    match events.into_iter().last() {
        Some(AgentEvent::Output(output)) => *output,
        other => panic!("the last event is the output, not {other:?}"),
    }
}

/// Approves every action the paused `output` waits on: the answers a client sends back with
/// the pause's key.
fn approvals(output: &RunOutput) -> Vec<(InterruptId, serde_json::Value)> {
    let answers = ApprovalResponse::approve_every(output.interrupts());
    assert_eq!(answers.len(), 1, "one approval: {:?}", output.interrupts());
    answers
}

#[test]
fn every_owned_stream_is_send_and_static() {
    let pays = Arc::new(AtomicUsize::new(0));
    let store = Arc::new(InMemoryCheckpointer::new());
    let agent = agent(Some(&store), &pays);
    let checkpoint = || ResumeFrom::stored("a key");
    // Built, never polled: only their types are checked here (the other tests run them).
    assert_send_static(&Arc::clone(&agent).stream_owned("pay"));
    assert_send_static(&Arc::clone(&agent).stream_in_owned(agent.thread(), "pay"));
    assert_send_static(&Arc::clone(&agent).stream_resume_owned(checkpoint(), []));
    let in_thread = Arc::clone(&agent).stream_resume_in_owned(agent.thread(), checkpoint(), []);
    assert_send_static(&in_thread);
    let (events, returned) = in_thread.split();
    assert_send_static(&events);
    assert_send_static(&returned);
    assert_send_static(&Arc::clone(&agent).stream_start_step_owned("k", "pay"));
    assert_send_static(&Arc::clone(&agent).stream_step_owned(String::from("k"), []));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thread_run_through_an_owned_stream_comes_back_with_the_new_messages() {
    let pays = Arc::new(AtomicUsize::new(0));
    let agent = agent(None, &pays);
    let mut thread = agent.thread();
    agent.run_in(&mut thread, "hi").await.unwrap();
    let id = thread.id().clone();

    let (events, returned) = Arc::clone(&agent)
        .stream_in_owned(thread, "hi again")
        .split();
    // The events are read by another task, as a response body would be.
    let body = tokio::spawn(output_of(events));
    let thread = tokio::spawn(returned).await.unwrap();
    let output = body.await.unwrap();

    assert_eq!(output.text().as_deref(), Some("hello"));
    assert_eq!(thread.id(), &id);
    assert_eq!(thread.runs(), 2);
    let texts: Vec<_> = thread.messages().iter().map(Message::text).collect();
    assert_eq!(texts, ["hi", "hello", "hi again", "hello"]);
    assert_eq!(thread.messages(), &output.messages[..]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_owned_thread_stream_read_to_its_end_gives_its_thread_back() {
    let pays = Arc::new(AtomicUsize::new(0));
    let agent = agent(None, &pays);
    let mut stream = Arc::clone(&agent).stream_in_owned(agent.thread(), "hi");
    let thread = tokio::spawn(async move {
        let mut events = 0;
        while stream.try_next().await.unwrap().is_some() {
            events += 1;
        }
        assert!(events > 1);
        stream.into_thread().await
    })
    .await
    .unwrap();
    assert_eq!(thread.messages().len(), 2);
    assert_eq!(thread.runs(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thread_resumes_through_an_owned_stream() {
    let pays = Arc::new(AtomicUsize::new(0));
    let store = Arc::new(InMemoryCheckpointer::new());
    let agent = agent(Some(&store), &pays);

    let (events, returned) = Arc::clone(&agent)
        .stream_in_owned(agent.thread(), "pay")
        .split();
    let paused = tokio::spawn(output_of(events)).await.unwrap();
    let thread = returned.await;
    assert_eq!(paused.end, EndReason::Interrupted);
    assert!(thread.is_paused());
    assert_eq!(pays.load(Ordering::SeqCst), 0);

    let answers = approvals(&paused);
    let key = paused.pause_key().expect("the pause is stored").to_owned();
    let stream =
        Arc::clone(&agent).stream_resume_in_owned(thread, ResumeFrom::stored(key), answers);
    let (events, returned) = stream.split();
    let output = tokio::spawn(output_of(events)).await.unwrap();
    let mut thread = tokio::spawn(returned).await.unwrap();

    assert_eq!(output.text().as_deref(), Some("paid"));
    assert_eq!(pays.load(Ordering::SeqCst), 1);
    assert!(!thread.is_paused());
    assert_eq!(
        thread.messages().last().map(Message::text).as_deref(),
        Some("paid")
    );
    // The thread is the one the run left: the next run goes on from it.
    let next = agent.run_in(&mut thread, "hi").await.unwrap();
    assert_eq!(next.text().as_deref(), Some("hello"));
    assert_eq!(thread.runs(), 2);
}

/// `thread` is `before`, but for what the runs dropped since spent.
fn assert_as_it_was(thread: &PayThread, before: &PayThread) {
    assert_eq!(thread.id(), before.id());
    assert_eq!(thread.messages(), before.messages());
    assert_eq!(thread.state(), before.state());
    assert_eq!(thread.runs(), before.runs());
    assert_eq!(thread.is_paused(), before.is_paused());
    assert!(thread.spent().input_tokens >= before.spent().input_tokens);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_owned_thread_stream_dropped_mid_run_gives_the_thread_back_as_it_was() {
    let pays = Arc::new(AtomicUsize::new(0));
    let agent = agent(None, &pays);
    let mut thread = agent.thread();
    agent.run_in(&mut thread, "hi").await.unwrap();
    let before = thread.clone();

    let (mut events, returned) = Arc::clone(&agent).stream_in_owned(thread, "pay").split();
    let read = tokio::spawn(async move {
        // The first event of the run (the model's first), then the client goes away.
        let first = events.next().await;
        drop(events);
        first
    });
    assert!(matches!(read.await.unwrap(), Some(Ok(_))));
    let thread = returned.await;
    assert_as_it_was(&thread, &before);
    assert_eq!(pays.load(Ordering::SeqCst), 0);

    // `into_thread` before the end does the same.
    let mut stream = Arc::clone(&agent).stream_in_owned(thread, "pay");
    assert!(stream.next().await.is_some());
    let thread = stream.into_thread().await;
    assert_as_it_was(&thread, &before);
    // Nothing of the dropped runs stayed: the thread runs on.
    let mut thread = thread;
    let output = agent.run_in(&mut thread, "hi").await.unwrap();
    assert_eq!(output.text().as_deref(), Some("hello"));
    assert_eq!(thread.messages().len(), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_owned_thread_stream_never_polled_gives_the_thread_back() {
    let pays = Arc::new(AtomicUsize::new(0));
    let agent = agent(None, &pays);
    let thread = agent.thread();
    let id = thread.id().clone();
    let stream = Arc::clone(&agent).stream_in_owned(thread, "hi");
    let thread = tokio::spawn(async move { stream.into_thread().await })
        .await
        .unwrap();
    assert_eq!(thread.id(), &id);
    assert!(thread.messages().is_empty());
}

/// How a pause is reached, from each entry point: its output, and the thread it paused in.
#[derive(Debug, Clone, Copy)]
enum Entry {
    Run,
    RunIn,
    Stream,
    StreamIn,
    StreamOwned,
    StreamInOwned,
}

impl Entry {
    const ALL: [Entry; 6] = [
        Entry::Run,
        Entry::RunIn,
        Entry::Stream,
        Entry::StreamIn,
        Entry::StreamOwned,
        Entry::StreamInOwned,
    ];

    async fn pause(self, agent: &Arc<PayAgent>) -> (RunOutput, Option<PayThread>) {
        let mut thread = agent.thread();
        match self {
            Entry::Run => (agent.run("pay").await.unwrap(), None),
            Entry::RunIn => (
                agent.run_in(&mut thread, "pay").await.unwrap(),
                Some(thread),
            ),
            Entry::Stream => (output_of(agent.stream("pay")).await, None),
            Entry::StreamIn => {
                let output = output_of(agent.stream_in(&mut thread, "pay")).await;
                (output, Some(thread))
            }
            Entry::StreamOwned => {
                let stream = Arc::clone(agent).stream_owned("pay");
                (tokio::spawn(output_of(stream)).await.unwrap(), None)
            }
            Entry::StreamInOwned => {
                let (events, returned) = Arc::clone(agent).stream_in_owned(thread, "pay").split();
                let output = tokio::spawn(output_of(events)).await.unwrap();
                (output, Some(returned.await))
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_key_of_every_entry_point_s_pause_resumes_it_in_a_fresh_agent() {
    for entry in Entry::ALL {
        let pays = Arc::new(AtomicUsize::new(0));
        let store = Arc::new(InMemoryCheckpointer::new());
        let (paused, thread) = entry.pause(&agent(Some(&store), &pays)).await;
        assert_eq!(paused.end, EndReason::Interrupted, "{entry:?}");
        let key = paused
            .pause_key()
            .expect("a stored pause has a key")
            .to_owned();
        let run_key = match &thread {
            Some(thread) => thread.id().as_str(),
            None => paused.checkpoint.as_ref().unwrap().run_id(),
        };
        assert_eq!(key, run_key, "{entry:?}");

        // A follow-up request: a fresh agent on the same store, the key and the answers.
        let fresh = agent(Some(&store), &pays);
        let answers = approvals(&paused);
        let output = match thread {
            Some(mut thread) => {
                let output = fresh
                    .resume_in(&mut thread, ResumeFrom::stored(key), answers)
                    .await;
                assert!(!thread.is_paused(), "{entry:?}");
                output
            }
            None => fresh.resume(ResumeFrom::stored(key), answers).await,
        };
        let output = output.unwrap_or_else(|error| panic!("{entry:?}: {error}"));
        assert_eq!(output.end, EndReason::Finished, "{entry:?}");
        assert_eq!(output.text().as_deref(), Some("paid"), "{entry:?}");
        assert_eq!(output.pause_key(), None, "{entry:?}");
        assert_eq!(pays.load(Ordering::SeqCst), 1, "{entry:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_owned_resume_by_key_finishes_the_run() {
    let pays = Arc::new(AtomicUsize::new(0));
    let store = Arc::new(InMemoryCheckpointer::new());
    let paused = agent(Some(&store), &pays).run("pay").await.unwrap();
    let key = paused.pause_key().unwrap().to_owned();

    let stream =
        agent(Some(&store), &pays).stream_resume_owned(ResumeFrom::stored(key), approvals(&paused));
    let output = tokio::spawn(output_of(stream)).await.unwrap();
    assert_eq!(output.text().as_deref(), Some("paid"));
    assert_eq!(pays.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn owned_steps_run_in_spawned_tasks_and_their_pause_has_its_key() {
    let pays = Arc::new(AtomicUsize::new(0));
    let store = Arc::new(InMemoryCheckpointer::new());
    let stream: AgentStream<'static> =
        agent(Some(&store), &pays).stream_start_step_owned("order-42", "pay");
    let paused = tokio::spawn(output_of(stream)).await.unwrap();
    assert_eq!(paused.end, EndReason::Interrupted);
    assert_eq!(paused.pause_key(), Some("order-42"));

    let mut output = paused;
    let mut answers = approvals(&output);
    // Each step by a fresh agent, as an engine's workers would run them; a few are enough.
    for _ in 0..4 {
        if output.end != EndReason::Interrupted && output.end != EndReason::Stepped {
            break;
        }
        let stream = agent(Some(&store), &pays).stream_step_owned("order-42", answers);
        output = tokio::spawn(output_of(stream)).await.unwrap();
        answers = Vec::new();
    }
    assert_eq!(output.text().as_deref(), Some("paid"));
    assert_eq!(pays.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pause_that_is_not_stored_has_no_key() {
    let pays = Arc::new(AtomicUsize::new(0));
    let agent = agent(None, &pays);
    let paused = agent.run("pay").await.unwrap();
    assert_eq!(paused.end, EndReason::Interrupted);
    assert!(paused.checkpoint.is_some());
    assert_eq!(paused.pause_key(), None);
    let finished = agent.run("hi").await.unwrap();
    assert_eq!(finished.pause_key(), None);
}

/// The text of the tool's result in `messages`.
fn paid_for(messages: &[Message]) -> Option<String> {
    messages
        .iter()
        .find(|message| message.role == Role::Tool)
        .map(|message| message.text().into_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn owned_streams_with_a_context_give_it_to_their_runs() {
    let pays = Arc::new(AtomicUsize::new(0));
    let store = Arc::new(InMemoryCheckpointer::new());
    let agent = agent(Some(&store), &pays);
    let request = || Arc::clone(&agent).with_context_owned(RunContext::new().with(Tenant("acme")));
    assert_send_static(&request());
    assert_send_static(&request().stream("pay"));
    assert_send_static(&request().stream_in(agent.thread(), "pay"));

    // A run, then its resume by key: each request with its values.
    let paused = tokio::spawn(output_of(request().stream("pay")))
        .await
        .unwrap();
    let key = paused.pause_key().unwrap().to_owned();
    let resumed = request().stream_resume(ResumeFrom::stored(key), approvals(&paused));
    let output = tokio::spawn(output_of(resumed)).await.unwrap();
    assert_eq!(paid_for(&output.messages).as_deref(), Some("paid for acme"));

    // In a thread.
    let (events, returned) = request().stream_in(agent.thread(), "pay").split();
    let paused = tokio::spawn(output_of(events)).await.unwrap();
    let thread = returned.await;
    let key = paused.pause_key().unwrap().to_owned();
    let stream = request().stream_resume_in(thread, ResumeFrom::stored(key), approvals(&paused));
    let (events, returned) = stream.split();
    tokio::spawn(output_of(events)).await.unwrap();
    let thread = returned.await;
    assert_eq!(
        paid_for(thread.messages()).as_deref(),
        Some("paid for acme")
    );

    // A step at a time.
    let paused = tokio::spawn(output_of(request().stream_start_step("k", "pay")))
        .await
        .unwrap();
    let stream = request().stream_step("k", approvals(&paused));
    let output = tokio::spawn(output_of(stream)).await.unwrap();
    assert_eq!(paid_for(&output.messages).as_deref(), Some("paid for acme"));
    assert_eq!(pays.load(Ordering::SeqCst), 3);

    // Without one, the tool finds none.
    let paused = agent.run("pay").await.unwrap();
    let output = agent
        .resume(
            ResumeFrom::stored(paused.pause_key().unwrap()),
            approvals(&paused),
        )
        .await
        .unwrap();
    assert_eq!(
        paid_for(&output.messages).as_deref(),
        Some("paid for nobody")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_refused_in_an_owned_thread_stream_gives_the_thread_back_unchanged() {
    let pays = Arc::new(AtomicUsize::new(0));
    let agent = agent(None, &pays);
    let mut thread = agent.thread();
    agent.run_in(&mut thread, "pay").await.unwrap();
    assert!(thread.is_paused());
    let before = thread.clone();

    // A paused thread refuses a new run: the error is the stream's only item.
    let (events, returned) = Arc::clone(&agent).stream_in_owned(thread, "hi").split();
    let items: Vec<_> = tokio::spawn(events.collect::<Vec<_>>()).await.unwrap();
    assert!(matches!(items[..], [Err(Error::Thread(_))]), "{items:?}");
    let thread = returned.await;
    assert_eq!(thread, before);
}
