//! Streamed runs (`Agent::stream`): the events and their order, one path for the middleware
//! (a redaction lets nothing unredacted through, a held-back answer, a retry that voids what
//! was shown, a short-circuit streamed too), failures, interrupts, and a consumer that stops at
//! every event.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures::StreamExt;
use hookchain::builtin::ModelRetry;
use hookchain::message::validate_history;
use hookchain::middleware::{Emit, HookSet, phase};
use hookchain::model::{ModelEvent, StreamStep};
use hookchain::prelude::*;
use hookchain::{AgentEvent, EndReason, ModelError, RunOutput, StopReason, hook};
use serde_json::json;

fn text(index: usize, text: &str) -> StreamStep {
    ModelEvent::TextDelta {
        index,
        text: text.into(),
    }
    .into()
}

fn finish() -> StreamStep {
    ModelEvent::Finish {
        stop_reason: StopReason::EndTurn,
    }
    .into()
}

/// Every item of a streamed run, the run's output (or error) apart.
async fn drain(
    stream: hookchain::AgentStream<'_>,
) -> (Vec<AgentEvent>, Result<RunOutput, hookchain::Error>) {
    let mut items: Vec<Result<AgentEvent, hookchain::Error>> = stream.collect().await;
    let last = items
        .pop()
        .expect("a stream ends with its output or an error");
    let events = items
        .into_iter()
        .map(|item| item.expect("only the last item may be an error"))
        .collect();
    let output = last.map(|event| match event {
        AgentEvent::Output(output) => *output,
        other => panic!("the last event is the output, not {other:?}"),
    });
    (events, output)
}

/// The events, each as a short word, for comparing orders.
fn kinds(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .map(|event| match event {
            AgentEvent::Model(ModelEvent::TextDelta { text, .. }) => format!("text:{text}"),
            AgentEvent::Model(ModelEvent::ToolCallStart { name, .. }) => format!("call:{name}"),
            AgentEvent::Model(ModelEvent::ToolCallDelta { .. }) => "args".into(),
            AgentEvent::Model(ModelEvent::ToolCallEnd { .. }) => "call_end".into(),
            AgentEvent::Model(ModelEvent::Usage(_)) => "usage".into(),
            AgentEvent::Model(ModelEvent::Finish { .. }) => "finish".into(),
            AgentEvent::Model(other) => format!("{other:?}"),
            AgentEvent::ModelOutputVoided => "voided".into(),
            AgentEvent::MessageAdded(message) => format!("message:{:?}", message.role),
            AgentEvent::ToolCallStarted(call) => format!("started:{}", call.name),
            AgentEvent::ToolCallFinished(result) => format!("finished:{}", result.call_id),
            AgentEvent::Interrupted(_) => "interrupted".into(),
            AgentEvent::Output(_) => "output".into(),
            other => format!("{other:?}"),
        })
        .collect()
}

/// The text the consumer was shown: every text delta, in order.
fn shown(events: &[AgentEvent]) -> String {
    events.iter().filter_map(AgentEvent::text_delta).collect()
}

#[tokio::test]
async fn text_arrives_live_then_the_message_then_the_output() {
    let model = ScriptedModel::new([]).then_stream([text(0, "Hel"), text(0, "lo"), finish()]);
    let agent = Agent::builder(model).build().unwrap();
    let (events, output) = drain(agent.stream("Hi")).await;
    assert_eq!(
        kinds(&events),
        ["text:Hel", "text:lo", "finish", "message:Assistant"]
    );
    let output = output.unwrap();
    assert_eq!(output.text().as_deref(), Some("Hello"));
    assert_eq!(output.end, EndReason::Finished);
}

/// Greets someone.
#[hookchain::tool]
async fn greet(name: String) -> String {
    format!("Hello, {name}!")
}

#[tokio::test]
async fn a_step_with_tools_streams_the_calls_their_results_and_the_next_answer() {
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([ToolCall::new("c1", "greet", json!({"name": "Ada"}))]),
        ModelResponse::text("Done."),
    ]);
    let agent = Agent::builder(model).tool(greet).build().unwrap();
    let (events, output) = drain(agent.stream("Greet Ada")).await;
    assert_eq!(
        kinds(&events),
        [
            "call:greet",
            "args",
            "call_end",
            "usage",
            "finish",
            "message:Assistant",
            "started:greet",
            "finished:c1",
            "message:Tool",
            "text:Done.",
            "usage",
            "finish",
            "message:Assistant",
        ]
    );
    // What the events say is what the run returns.
    let output = output.unwrap();
    let added: Vec<Message> = events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::MessageAdded(message) => Some(Message::clone(message)),
            _ => None,
        })
        .collect();
    assert_eq!(added[..], output.messages[1..]);
    assert_eq!(output.text().as_deref(), Some("Done."));
}

#[tokio::test]
async fn a_streamed_run_returns_what_the_same_run_unstreamed_returns() {
    let responses = || {
        [
            ModelResponse::tool_calls([ToolCall::new("c1", "greet", json!({"name": "Ada"}))]),
            ModelResponse::text("Done."),
        ]
    };
    let streamed = Agent::builder(ScriptedModel::new(responses()))
        .tool(greet)
        .build()
        .unwrap();
    let (_, streamed) = drain(streamed.stream("Greet Ada")).await;
    let plain = Agent::builder(ScriptedModel::new(responses()))
        .tool(greet)
        .build()
        .unwrap();
    let plain = plain.run("Greet Ada").await.unwrap();
    let streamed = streamed.unwrap();
    assert_eq!(streamed.messages, plain.messages);
    assert_eq!(streamed.usage, plain.usage);
    assert_eq!(streamed.steps, plain.steps);
}

/// Redacts "secret" from the model's text as it streams, holding back the few characters that
/// could be the start of one (a bounded look-back), so that no delta ever shows it.
#[derive(Debug, Clone, Copy)]
struct RedactSecret;

/// The text of the current text block not yet let through.
#[derive(Debug, Default)]
struct Pending {
    index: usize,
    text: String,
}

const SECRET: &str = "secret";

impl RedactSecret {
    fn release(pending: &mut Pending, keep: usize, out: &mut impl Emit) -> Result<(), Error> {
        let text = pending.text.replace(SECRET, "[REDACTED]");
        let mut cut = text.len().saturating_sub(keep);
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        pending.text = text[cut..].to_owned();
        if cut > 0 {
            out.emit(ModelEvent::TextDelta {
                index: pending.index,
                text: text[..cut].to_owned(),
            })?;
        }
        Ok(())
    }
}

impl Middleware for RedactSecret {
    type State = ();
    type ThreadState = ();
    type StreamState = Pending;
    type Phase = phase::Output;
    type WrapsModel = hookchain::middleware::False;
    type WrapsTool = hookchain::middleware::False;
    const NAME: &'static str = "RedactSecret";
    const HOOKS: HookSet = HookSet::of(Hook::OnModelEvent);

    fn on_model_event<E: Emit>(
        &self,
        pending: &mut Pending,
        event: ModelEvent,
        out: &mut E,
    ) -> Result<(), Error> {
        match event {
            ModelEvent::TextDelta { index, text } => {
                if index != pending.index {
                    Self::release(pending, 0, out)?;
                    pending.index = index;
                }
                pending.text.push_str(&text);
                // Whatever could still become "secret" stays behind.
                Self::release(pending, SECRET.len() - 1, out)
            }
            other => {
                Self::release(pending, 0, out)?;
                out.emit(other)
            }
        }
    }
}

/// The same redaction, written with the DSL, the word configurable.
struct Redact {
    word: &'static str,
}

#[hookchain::middleware(phase = output)]
impl Redact {
    #[hook(on_model_event)]
    fn redact(
        &self,
        pending: &mut Pending,
        event: ModelEvent,
        out: &mut impl Emit,
    ) -> Result<(), Error> {
        let keep = self.word.len() - 1;
        match event {
            ModelEvent::TextDelta { index, text } => {
                pending.index = index;
                pending.text.push_str(&text);
                let redacted = pending.text.replace(self.word, "[REDACTED]");
                pending.text = redacted;
                RedactSecret::release(pending, keep, out)
            }
            other => {
                RedactSecret::release(pending, 0, out)?;
                out.emit(other)
            }
        }
    }
}

/// Leaves reasoning out of the answer: a `#[hook]` function on the events, with no state.
#[hook(on_model_event, phase = output)]
fn no_reasoning(event: ModelEvent, out: &mut impl Emit) -> Result<(), Error> {
    match event {
        ModelEvent::ReasoningDelta { .. } | ModelEvent::ReasoningSignature { .. } => Ok(()),
        other => out.emit(other),
    }
}

#[tokio::test]
async fn per_event_hooks_written_with_the_dsl_act_in_reverse_chain_order() {
    let model = || {
        ScriptedModel::new([]).then_stream([
            ModelEvent::ReasoningDelta {
                index: 0,
                text: "the secret is safe".into(),
            }
            .into(),
            text(1, "a sec"),
            text(1, "ret"),
            finish(),
        ])
    };
    let agent = Agent::builder(model())
        .chain(hookchain::chain![Redact { word: SECRET }, no_reasoning])
        .build()
        .unwrap();
    let (events, output) = drain(agent.stream("Tell me")).await;
    // The reasoning is gone; the text is let through as the look-back allows.
    assert_eq!(
        kinds(&events),
        ["text:a [REDA", "text:CTED]", "finish", "message:Assistant"]
    );
    let message = &output.unwrap().messages[1];
    assert_eq!(message.content, "a [REDACTED]");
    assert_eq!(
        hookchain::chain![Redact { word: SECRET }, no_reasoning]
            .describe()
            .order(Hook::OnModelEvent),
        ["no_reasoning", "Redact"]
    );
}

fn leaky_model() -> ScriptedModel {
    ScriptedModel::new([]).then_stream([
        text(0, "my sec"),
        text(0, "ret is "),
        text(0, "s"),
        text(0, "ecret"),
        text(0, ", no more"),
        finish(),
    ])
}

#[tokio::test]
async fn a_redaction_on_the_events_lets_no_unredacted_text_reach_the_consumer() {
    let agent = Agent::builder(leaky_model())
        .chain(RedactSecret)
        .build()
        .unwrap();
    let (events, output) = drain(agent.stream("Tell me")).await;
    // At no event: every prefix of what was shown is free of it.
    let mut seen = String::new();
    for delta in events.iter().filter_map(AgentEvent::text_delta) {
        seen.push_str(delta);
        assert!(!seen.contains(SECRET), "shown: {seen:?}");
    }
    assert_eq!(seen, "my [REDACTED] is [REDACTED], no more");
    // The history holds what the consumer was shown.
    let output = output.unwrap();
    assert_eq!(
        output.text().as_deref(),
        Some("my [REDACTED] is [REDACTED], no more")
    );
}

#[tokio::test]
async fn the_same_redaction_acts_on_an_unstreamed_run() {
    let agent = Agent::builder(leaky_model())
        .chain(RedactSecret)
        .build()
        .unwrap();
    let output = agent.run("Tell me").await.unwrap();
    assert_eq!(
        output.text().as_deref(),
        Some("my [REDACTED] is [REDACTED], no more")
    );
}

/// Redacts in `after_model` only: the answer is held back from a streamed run's consumer
/// until this has run.
#[hook(after_model)]
fn redact_after(response: &mut ModelResponse) {
    let text = response.message.text().replace(SECRET, "[REDACTED]");
    response.message.content = text.into();
}

#[tokio::test]
async fn an_after_model_redaction_holds_the_answer_back_until_it_has_run() {
    let agent = Agent::builder(leaky_model())
        .chain(redact_after)
        .build()
        .unwrap();
    let (events, output) = drain(agent.stream("Tell me")).await;
    assert_eq!(shown(&events), "my [REDACTED] is [REDACTED], no more");
    assert!(!events.iter().any(|event| {
        event
            .text_delta()
            .is_some_and(|delta| delta.contains("sec"))
    }));
    assert_eq!(
        output.unwrap().text().as_deref(),
        Some("my [REDACTED] is [REDACTED], no more")
    );
}

/// Declares (wrongly) that its `after_model` leaves the answer as it is: what was streamed is
/// voided and the answer kept is sent, so the consumer ends with what the history has.
#[hook(after_model, live_stream)]
fn shout(response: &mut ModelResponse) {
    let text = response.message.text().to_uppercase();
    response.message.content = text.into();
}

#[tokio::test]
async fn an_answer_changed_after_it_streamed_is_voided_and_sent_again() {
    let model = ScriptedModel::new([]).then_stream([text(0, "hi"), finish()]);
    let agent = Agent::builder(model).chain(shout).build().unwrap();
    let (events, output) = drain(agent.stream("Hi")).await;
    assert_eq!(
        kinds(&events),
        [
            "text:hi",
            "finish",
            "voided",
            "text:HI",
            "usage",
            "finish",
            "message:Assistant"
        ]
    );
    assert_eq!(output.unwrap().text().as_deref(), Some("HI"));
}

#[tokio::test(start_paused = true)]
async fn a_retried_call_voids_what_its_first_attempt_streamed() {
    let model = ScriptedModel::new([])
        .then_stream([
            text(0, "Hel"),
            StreamStep::Fail(ModelError::overloaded("busy")),
        ])
        .then_stream([text(0, "Hello"), finish()]);
    let agent = Agent::builder(model)
        .chain(ModelRetry::new())
        .build()
        .unwrap();
    let (events, output) = drain(agent.stream("Hi")).await;
    assert_eq!(
        kinds(&events),
        [
            "text:Hel",
            "voided",
            "text:Hello",
            "finish",
            "message:Assistant"
        ]
    );
    let output = output.unwrap();
    assert_eq!(output.text().as_deref(), Some("Hello"));
    assert_eq!(output.model_calls, 2);
}

/// Answers in place of the model.
#[hook(before_model)]
fn cached() -> Flow {
    Flow::respond(ModelResponse::text("From the cache."))
}

#[tokio::test]
async fn a_short_circuited_answer_streams_too() {
    let agent = Agent::builder(ScriptedModel::new([]))
        .chain(cached)
        .build()
        .unwrap();
    let (events, output) = drain(agent.stream("Hi")).await;
    assert_eq!(
        kinds(&events),
        [
            "text:From the cache.",
            "usage",
            "finish",
            "message:Assistant"
        ]
    );
    assert_eq!(output.unwrap().model_calls, 0);
}

#[tokio::test]
async fn a_failure_mid_stream_is_an_error_then_the_end() {
    let model = ScriptedModel::new([]).then_stream([
        text(0, "Hel"),
        StreamStep::Fail(ModelError::connection("reset")),
    ]);
    let agent = Agent::builder(model).build().unwrap();
    let mut stream = agent.stream("Hi");
    let first = stream.next().await.unwrap().unwrap();
    assert_eq!(first.text_delta(), Some("Hel"));
    let error = stream.next().await.unwrap().unwrap_err();
    assert!(matches!(error, hookchain::Error::Model(_)), "{error:?}");
    assert!(stream.next().await.is_none());
    assert!(stream.next().await.is_none());
}

/// Pauses before the first model call, for an answer.
#[hook(before_model)]
fn ask_first(cx: &mut Context) -> Flow {
    match cx.resume_value() {
        Some(_) => Flow::Continue,
        None => Flow::interrupt(json!({"question": "go on?"})),
    }
}

#[tokio::test]
async fn an_interrupt_is_an_event_and_the_resumed_run_streams_on() {
    let model = ScriptedModel::new([ModelResponse::text("Going on.")]);
    let agent = Agent::builder(model).chain(ask_first).build().unwrap();
    let (events, output) = drain(agent.stream("Hi")).await;
    assert_eq!(kinds(&events), ["interrupted"]);
    let AgentEvent::Interrupted(interrupt) = &events[0] else {
        unreachable!()
    };
    let output = output.unwrap();
    assert_eq!(output.end, EndReason::Interrupted);
    let checkpoint = output.checkpoint.unwrap();
    let answers = [(interrupt.id.clone(), json!(true))];
    let (events, output) = drain(agent.stream_resume(checkpoint, answers)).await;
    assert_eq!(
        kinds(&events),
        ["text:Going on.", "usage", "finish", "message:Assistant"]
    );
    assert_eq!(output.unwrap().end, EndReason::Finished);
}

/// An agent that calls `count` twice, then streams its answer.
fn counting_agent(runs: &Arc<AtomicUsize>) -> Agent<ScriptedModel> {
    let model = ScriptedModel::new([ModelResponse::tool_calls([
        ToolCall::new("c1", "count", json!({"text": "a"})),
        ToolCall::new("c2", "count", json!({"text": "b"})),
    ])])
    .then_stream([text(0, "Two"), text(0, " calls."), finish()]);
    Agent::builder(model)
        .tool(support::counting_tool("count", runs))
        .build()
        .unwrap()
}

/// A run in a thread whose consumer stops after `taken` items: the thread is as it was, no
/// tool ran that the consumer did not let start, and the thread runs on with a valid history.
async fn stop_after(taken: usize) -> Vec<String> {
    let runs = Arc::new(AtomicUsize::new(0));
    let agent = counting_agent(&runs);
    let mut thread = agent.thread();
    let mut stream = agent.stream_in(&mut thread, "Count");
    let mut events = Vec::new();
    for _ in 0..taken {
        match stream.next().await {
            Some(Ok(event)) => events.push(event),
            other => panic!("item {}: {other:?}", events.len()),
        }
    }
    drop(stream);
    let kinds = kinds(&events);
    // A tool runs once its `started` event was taken and the stream polled again.
    let started = kinds
        .iter()
        .take(taken.saturating_sub(1))
        .filter(|kind| kind.starts_with("started"))
        .count();
    assert!(runs.load(Ordering::SeqCst) <= started, "{kinds:?}");
    // The thread changes when the run ends: with its last item, the output.
    let ended = kinds.last().is_some_and(|kind| kind == "output");
    assert_eq!(thread.messages().is_empty(), !ended, "{kinds:?}");
    let again = Agent::builder(ScriptedModel::new([ModelResponse::text("Again.")]))
        .build()
        .unwrap();
    let output = again.run_in(&mut thread, "Count").await.unwrap();
    validate_history(&output.messages).unwrap();
    support::assert_no_dangling(&output.messages);
    kinds
}

#[tokio::test]
async fn a_consumer_that_stops_at_any_event_stops_the_run_there() {
    let runs = Arc::new(AtomicUsize::new(0));
    let (events, output) = drain(counting_agent(&runs).stream("Count")).await;
    assert_eq!(output.unwrap().text().as_deref(), Some("Two calls."));
    assert_eq!(runs.load(Ordering::SeqCst), 2);
    // Every position, the output's included.
    for taken in 0..=events.len() + 1 {
        let kinds = stop_after(taken).await;
        assert_eq!(kinds.len(), taken);
    }
}

/// Counts the model's events as they go through the per-event hooks.
struct Tally(Arc<AtomicUsize>);

#[hookchain::middleware]
impl Tally {
    #[hook(on_model_event)]
    fn tally(&self, event: ModelEvent, out: &mut impl Emit) -> Result<(), Error> {
        self.0.fetch_add(1, Ordering::SeqCst);
        out.emit(event)
    }
}

#[tokio::test]
async fn a_streamed_run_reads_the_model_only_a_few_events_ahead_of_its_consumer() {
    let read = Arc::new(AtomicUsize::new(0));
    let steps: Vec<StreamStep> = (0..100).map(|_| text(0, "x")).chain([finish()]).collect();
    let agent = Agent::builder(ScriptedModel::new([]).then_stream(steps))
        .chain(Tally(Arc::clone(&read)))
        .build()
        .unwrap();
    let mut stream = agent.stream("Hi");
    let mut taken = 0;
    for _ in 0..20 {
        assert!(matches!(stream.next().await, Some(Ok(_))));
        taken += 1;
        let ahead = read.load(Ordering::SeqCst) - taken;
        // The run hands over a few events at a time (8): never more than that ahead.
        assert!(ahead < 8, "{ahead} events read ahead of the consumer");
    }
    // The answer ends only once the consumer took every delta: then the message.
    let (events, output) = drain(stream).await;
    assert_eq!(output.unwrap().text().map(|text| text.len()), Some(100));
    assert_eq!(
        events.len(),
        80 + 2,
        "the deltas left, the finish, then the message"
    );
    assert!(matches!(events.last(), Some(AgentEvent::MessageAdded(_))));
}

/// Panics on the first event.
#[hook(on_model_event)]
fn explode(event: ModelEvent, out: &mut impl Emit) -> Result<(), Error> {
    let _ = (event, out);
    panic!("boom");
}

#[tokio::test]
async fn a_panicking_per_event_hook_fails_the_call_naming_itself() {
    let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("Hi")]))
        .chain(explode)
        .build()
        .unwrap();
    let (events, output) = drain(agent.stream("Hi")).await;
    assert!(events.is_empty(), "{events:?}");
    let error = output.unwrap_err();
    let hookchain::Error::Middleware(error) = &error else {
        panic!("{error:?}");
    };
    assert_eq!(error.middleware(), Some("explode"));
    assert_eq!(error.hook(), Some(Hook::OnModelEvent));
    // The same unstreamed.
    let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("Hi")]))
        .chain(explode)
        .build()
        .unwrap();
    let error = agent.run("Hi").await.unwrap_err();
    assert!(error.to_string().contains("on_model_event"), "{error}");
}

#[tokio::test]
async fn a_fallback_after_a_failure_mid_stream_voids_what_the_first_model_streamed() {
    use hookchain::builtin::ModelFallback;
    use hookchain::model::ModelRouter;
    let main = ScriptedModel::new([]).then_stream([
        text(0, "Partial"),
        StreamStep::Fail(ModelError::overloaded("busy")),
    ]);
    let backup = ScriptedModel::new([]).then_stream([text(0, "From the backup"), finish()]);
    let router = ModelRouter::new(main).route("backup", backup);
    let fallback = ModelFallback::builder().model("backup").build().unwrap();
    let agent = Agent::builder(router).chain(fallback).build().unwrap();
    let (events, output) = drain(agent.stream("Hi")).await;
    assert_eq!(
        kinds(&events),
        [
            "text:Partial",
            "voided",
            "text:From the backup",
            "finish",
            "message:Assistant"
        ]
    );
    assert_eq!(output.unwrap().text().as_deref(), Some("From the backup"));
}

/// Answers every model call itself, without calling `next`.
#[hook(wrap_model_call, live_stream)]
async fn canned() -> Result<ModelResponse, Error> {
    Ok(ModelResponse::text("Canned."))
}

#[tokio::test]
async fn a_wrap_that_answers_itself_streams_its_answer() {
    let agent = Agent::builder(ScriptedModel::new([]))
        .chain(canned)
        .build()
        .unwrap();
    let (events, output) = drain(agent.stream("Hi")).await;
    assert_eq!(
        kinds(&events),
        ["text:Canned.", "usage", "finish", "message:Assistant"]
    );
    assert_eq!(output.unwrap().model_calls, 0);
}

#[tokio::test]
async fn an_agent_in_an_arc_streams_into_a_spawned_task() {
    let agent = std::sync::Arc::new(
        Agent::builder(ScriptedModel::new([]).then_stream([text(0, "Hi"), finish()]))
            .build()
            .unwrap(),
    );
    // `'static` and `Send`: the stream can go where a web framework takes a response body.
    let stream = std::sync::Arc::clone(&agent).stream_owned("Hello");
    let (events, output) = tokio::spawn(drain(stream)).await.unwrap();
    assert_eq!(kinds(&events), ["text:Hi", "finish", "message:Assistant"]);
    assert_eq!(output.unwrap().text().as_deref(), Some("Hi"));
}
