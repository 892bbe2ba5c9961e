//! Plugins chosen at run time (`hookchain::plugin`), one test per rule of the module docs:
//! order within the chain, hooks skipped per plugin, jumps, errors and panics named after the
//! plugin, wrap hooks (a retrying plugin), per-event hooks on a streamed run, interrupts and
//! resume (state kept, the answer to the plugin that asked, another set of plugins refused),
//! contributions, `describe()`, and the registry's factories (opt-out, failure, panic).

mod capture;
mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures::StreamExt;
use hookchain::error::Report;
use hookchain::middleware::{Contributions, Emit};
use hookchain::model::{ModelEvent, StreamStep};
use hookchain::plugin::{FactoryError, PluginError, PluginRegistry, Plugins, boxed};
use hookchain::prelude::*;
use hookchain::{
    AgentEvent, Checkpoint, EndReason, ModelError, RunOutput, StopReason, Thread, chain, hook,
    middleware, tool,
};
use serde_json::json;

use support::{
    Log, Recorder, echo_call, echo_tool, events, logged_model, middleware_error, new_log, push,
    take_events,
};

// ---------------------------------------------------------------------------------------------
// Plugins used by the tests
// ---------------------------------------------------------------------------------------------

/// Logs `<label>:<hook>` for its sequential hooks and counts its `before_model` runs in its run
/// state and its runs in its thread state; `after_model` appends `[<label> <calls>/<runs>]` to
/// the answer, which shows whether its states survived.
struct Counter {
    label: &'static str,
    log: Log,
}

#[derive(Debug, Default, Clone, serde::Serialize, serde::Deserialize)]
struct Runs(u32);

#[middleware(state = u32, thread_state = Runs)]
impl Counter {
    #[hook(before_agent)]
    fn start(&self, runs: &mut Runs) {
        runs.0 += 1;
        push(&self.log, format!("{}:before_agent", self.label));
    }

    #[hook(before_model)]
    fn count(&self, calls: &mut u32) {
        *calls += 1;
        push(&self.log, format!("{}:before_model", self.label));
    }

    #[hook(after_model)]
    fn report(&self, calls: &mut u32, runs: &mut Runs, response: &mut ModelResponse) {
        push(&self.log, format!("{}:after_model", self.label));
        let note = format!(" [{} {}/{}]", self.label, calls, runs.0);
        response.message.content.push_text(note);
    }

    #[hook(after_agent)]
    fn end(&self) {
        push(&self.log, format!("{}:after_agent", self.label));
    }
}

fn counter(label: &'static str, log: &Log) -> Counter {
    Counter {
        label,
        log: log.clone(),
    }
}

/// Pauses in `before_model` until answered; resumed, writes the answer into the system prompt.
#[hook(before_model)]
fn ask(cx: &mut Context, request: &mut ModelRequest) -> Flow {
    match cx.resume_as::<String>() {
        None => Flow::interrupt(json!({ "question": "may I?" })),
        Some(answer) => {
            request.system_prompt = Some(format!("answer={}", answer.expect("text")));
            Flow::Continue
        }
    }
}

/// Pauses in `after_model` until answered with a word it accepts (its `check_answer`).
struct Reviewer;

#[middleware]
impl Reviewer {
    #[hook(after_model)]
    fn review(&self, cx: &mut Context, response: &mut ModelResponse) -> Flow {
        match cx.resume_as::<String>() {
            None => Flow::interrupt(json!({ "review": response.message.text() })),
            Some(answer) => {
                response
                    .message
                    .content
                    .push_text(format!(" ({})", answer.expect("text")));
                Flow::Continue
            }
        }
    }

    #[check_answer]
    fn check(&self, answer: &hookchain::interrupt::Answer<'_>) -> Result<(), String> {
        match answer.value_as::<String>() {
            Ok(word) if word == "ok" || word == "fine" => Ok(()),
            _ => Err("answer \"ok\" or \"fine\"".to_owned()),
        }
    }
}

/// Ends the run from `before_model`.
#[hook(before_model, jumps = [end])]
fn stop() -> Flow {
    Flow::end()
}

/// Jumps to the end without declaring it.
struct Rogue;

impl Middleware for Rogue {
    type State = ();
    type ThreadState = ();
    type StreamState = ();
    type Phase = hookchain::middleware::phase::Input;
    type WrapsModel = hookchain::middleware::False;
    type WrapsTool = hookchain::middleware::False;
    const NAME: &'static str = "Rogue";
    const HOOKS: hookchain::middleware::HookSet =
        hookchain::middleware::HookSet::of(Hook::BeforeModel);
    const JUMPS: hookchain::middleware::JumpSet = hookchain::middleware::JumpSet::NONE;

    async fn before_model(
        &self,
        _cx: &mut Context,
        _state: &mut (),
        _thread: &mut (),
        _request: &mut ModelRequest,
    ) -> Result<Flow, Error> {
        Ok(Flow::end())
    }
}

/// Fails in `before_model`.
#[hook(before_model)]
fn broken() -> Result<(), Error> {
    Err(Error::hook("out of order"))
}

/// Panics in `after_model`.
#[hook(after_model)]
fn panicky(_response: &mut ModelResponse) {
    panic!("plugin bug");
}

/// Calls the model again once when it fails.
#[hook(wrap_model_call)]
async fn retry_once(
    cx: &mut Context,
    request: ModelRequest,
    mut next: impl ModelNext,
) -> Result<ModelResponse, Error> {
    match next.call(cx, request.clone()).await {
        Err(Error::Model(_)) => next.call(cx, request).await,
        answer => answer,
    }
}

/// Upper-cases the text of every event.
#[hook(on_model_event)]
fn shout(event: ModelEvent, out: &mut impl Emit) -> Result<(), Error> {
    match event {
        ModelEvent::TextDelta { index, text } => out.emit(ModelEvent::TextDelta {
            index,
            text: text.to_uppercase(),
        }),
        other => out.emit(other),
    }
}

/// Replaces `!` by `?` in the text of every event (listed before `shout`: sees its output).
#[hook(on_model_event)]
fn question(event: ModelEvent, out: &mut impl Emit) -> Result<(), Error> {
    match event {
        ModelEvent::TextDelta { index, text } => out.emit(ModelEvent::TextDelta {
            index,
            text: text.replace('!', "?"),
        }),
        other => out.emit(other),
    }
}

/// Pauses every tool call until answered `"yes"`.
struct Gate {
    label: &'static str,
}

#[middleware]
impl Gate {
    #[hook(wrap_tool_call)]
    async fn ask(
        &self,
        cx: ToolContext<'_>,
        call: ToolCall,
        mut next: impl ToolNext,
    ) -> Result<ToolResult, Error> {
        match cx.resume_value() {
            None => Err(Error::interrupt(json!({ "gate": self.label }))),
            Some(answer) if answer == "yes" => Ok(next.call(cx, call).await),
            Some(_) => Ok(ToolResult::error(
                &call.id,
                format!("{} said no", self.label),
            )),
        }
    }
}

/// Tells the time.
#[tool]
async fn clock() -> String {
    "12:00".to_owned()
}

/// Gives the agent a clock.
struct Clock;

#[middleware]
impl Clock {
    #[contribute]
    fn contribute(&self, to: &mut Contributions) {
        to.tool(clock).system_prompt("Call `clock` for the time.");
    }
}

fn plugins(list: Vec<Box<dyn hookchain::plugin::DynMiddleware>>) -> Plugins {
    Plugins::new(list).expect("within capacity")
}

/// The checkpoint of a paused run.
#[track_caller]
fn paused(output: &RunOutput) -> Checkpoint {
    assert_eq!(output.end, EndReason::Interrupted, "{output:#?}");
    *output.checkpoint.clone().expect("a checkpoint")
}

/// The checkpoint through JSON, as a store would keep it.
fn stored(checkpoint: &Checkpoint) -> Checkpoint {
    serde_json::from_str(&serde_json::to_string(checkpoint).unwrap()).unwrap()
}

// ---------------------------------------------------------------------------------------------
// Order, hooks, describe
// ---------------------------------------------------------------------------------------------

/// "The plugins run at the member's position, first listed first — outermost for the wrap
/// hooks, last for the after_* hooks": the same log as the same chain written statically.
#[tokio::test]
async fn plugins_run_at_their_position_as_if_listed_there() {
    let run = |dynamic: bool| async move {
        let log = new_log();
        let model = logged_model(
            &log,
            [
                ModelResponse::tool_calls([echo_call("c1", "x")]),
                ModelResponse::text("done"),
            ],
        );
        let builder = Agent::builder(model).tool(echo_tool(&log));
        let agent = if dynamic {
            let inner = plugins(vec![
                boxed(Recorder::new("b", &log)),
                boxed(Recorder::new("c", &log)),
            ]);
            builder
                .chain(chain![
                    Recorder::new("a", &log),
                    inner,
                    Recorder::new("d", &log)
                ])
                .build()
                .unwrap()
                .run("hi")
                .await
        } else {
            builder
                .chain(chain![
                    Recorder::new("a", &log),
                    Recorder::new("b", &log),
                    Recorder::new("c", &log),
                    Recorder::new("d", &log)
                ])
                .build()
                .unwrap()
                .run("hi")
                .await
        };
        assert_eq!(agent.unwrap().text().as_deref(), Some("done"));
        events(&log)
    };
    let static_log = run(false).await;
    assert!(static_log.contains(&"c:wrap_tool:enter:echo".to_owned()));
    assert_eq!(run(true).await, static_log);
}

/// "Describe lists each plugin by its name at the member's position", with its hooks; an
/// empty member lists nothing.
#[test]
fn describe_lists_each_plugin_by_name_at_the_members_position() {
    let log = new_log();
    let chain = chain![
        Recorder::new("a", &log),
        plugins(vec![boxed(stop), boxed(shout)]),
        broken
    ];
    let description = chain.describe();
    let names: Vec<_> = description.members().iter().map(|m| m.name).collect();
    assert_eq!(names, ["Recorder", "stop", "shout", "broken"]);
    assert_eq!(
        description.order(Hook::BeforeModel),
        ["Recorder", "stop", "broken"]
    );
    assert_eq!(description.order(Hook::OnModelEvent), ["shout"]);

    let empty = chain![broken, Plugins::default()].describe();
    assert_eq!(empty.members().len(), 1);
}

/// A plugin without a hook is skipped in it: only `Counter` logs `before_model`, and a chain
/// with no plugins runs as the chain without the member.
#[tokio::test]
async fn plugins_without_a_hook_are_skipped_and_an_empty_member_passes_through() {
    let log = new_log();
    let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("ok")]))
        .chain(chain![plugins(vec![
            boxed(shout),
            boxed(counter("n", &log))
        ])])
        .build()
        .unwrap();
    let output = agent.run("hi").await.unwrap();
    assert_eq!(output.text().as_deref(), Some("OK [n 1/1]"));
    assert_eq!(
        events(&log),
        [
            "n:before_agent",
            "n:before_model",
            "n:after_model",
            "n:after_agent"
        ]
    );

    let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("ok")]))
        .chain(chain![Plugins::default()])
        .build()
        .unwrap();
    assert_eq!(agent.run("hi").await.unwrap().text().as_deref(), Some("ok"));
}

// ---------------------------------------------------------------------------------------------
// Jumps, errors, panics
// ---------------------------------------------------------------------------------------------

/// "Each plugin's jumps are checked against its own JUMPS": a declared jump ends the run
/// before the members after the member run; an undeclared one is an error naming the plugin.
#[tokio::test]
async fn a_plugins_jump_is_taken_when_declared_and_refused_when_not() {
    let log = new_log();
    let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("never")]))
        .chain(chain![plugins(vec![boxed(stop)]), counter("after", &log)])
        .build()
        .unwrap();
    let output = agent.run("hi").await.unwrap();
    assert_eq!(output.end, EndReason::Jumped);
    assert_eq!(agent.model().calls(), 0);
    assert!(!events(&log).contains(&"after:before_model".to_owned()));

    let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("never")]))
        .chain(chain![plugins(vec![boxed(Rogue)])])
        .build()
        .unwrap();
    match agent.run("hi").await {
        Err(Error::UndeclaredJump {
            middleware, hook, ..
        }) => {
            assert_eq!(middleware, "Rogue");
            assert_eq!(hook, Hook::BeforeModel);
        }
        other => panic!("expected an undeclared jump, got {other:?}"),
    }
}

/// "Its errors and panics are named after it (not after the member)".
#[tokio::test]
async fn a_plugins_error_and_panic_are_named_after_the_plugin() {
    let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("ok")]))
        .chain(chain![plugins(vec![boxed(shout), boxed(broken)])])
        .build()
        .unwrap();
    let error = middleware_error(agent.run("hi").await);
    assert_eq!(error.middleware(), Some("broken"));
    assert_eq!(error.hook(), Some(Hook::BeforeModel));
    assert_eq!(error.inner().to_string(), "out of order");

    let log = new_log();
    let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("ok")]))
        .chain(chain![plugins(vec![
            boxed(counter("n", &log)),
            boxed(panicky)
        ])])
        .build()
        .unwrap();
    let error = middleware_error(agent.run("hi").await);
    assert_eq!(error.middleware(), Some("panicky"));
    assert_eq!(error.hook(), Some(Hook::AfterModel));
    // after_agent still ran.
    assert!(events(&log).contains(&"n:after_agent".to_owned()));
}

// ---------------------------------------------------------------------------------------------
// Wrap hooks and per-event hooks
// ---------------------------------------------------------------------------------------------

/// A retrying plugin wraps the model call: the first call fails, its retry answers; the
/// static member listed after the member is inside the onion (it sees both attempts).
#[tokio::test]
async fn a_retrying_plugin_wraps_the_members_listed_after_it() {
    let log = new_log();
    let model = ScriptedModel::new([])
        .then_fail(ModelError::overloaded("busy"))
        .then(ModelResponse::text("second try"));
    let agent = Agent::builder(model)
        .chain(chain![
            plugins(vec![boxed(retry_once)]),
            Recorder::new("inner", &log)
        ])
        .build()
        .unwrap();
    let output = agent.run("hi").await.unwrap();
    assert_eq!(output.text().as_deref(), Some("second try"));
    assert_eq!(agent.model().calls(), 2);
    let entered = events(&log)
        .iter()
        .filter(|event| *event == "inner:wrap_model:enter")
        .count();
    assert_eq!(entered, 2);
}

fn text(text: &str) -> StreamStep {
    ModelEvent::TextDelta {
        index: 0,
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

/// Per-event plugins on a streamed run act in reverse order (the last listed first), as static
/// ones: `question` (listed first) sees what `shout` emitted. The member is not live, so the
/// answer is held back until `after_model` ran, and the history holds what was streamed.
#[tokio::test]
async fn per_event_plugins_act_on_a_streamed_run_in_reverse_order() {
    let model = ScriptedModel::new([]).then_stream([text("hi"), text(" there!"), finish()]);
    let agent = Agent::builder(model)
        .chain(chain![plugins(vec![boxed(question), boxed(shout)])])
        .build()
        .unwrap();
    let items: Vec<_> = agent.stream("hello").collect().await;
    let mut streamed = String::new();
    let mut finished_before_text = false;
    let mut seen_finish = false;
    for item in &items {
        match item.as_ref().unwrap() {
            AgentEvent::Model(ModelEvent::TextDelta { text, .. }) => {
                streamed.push_str(text);
                finished_before_text |= seen_finish;
            }
            AgentEvent::Model(ModelEvent::Finish { .. }) => seen_finish = true,
            _ => {}
        }
    }
    assert_eq!(streamed, "HI THERE?");
    assert!(!finished_before_text);
    let Some(Ok(AgentEvent::Output(output))) = items.last() else {
        panic!("the last item is the output");
    };
    assert_eq!(output.text().as_deref(), Some("HI THERE?"));
}

/// The same plugins act on an unstreamed run (one path).
#[tokio::test]
async fn per_event_plugins_act_on_an_unstreamed_run() {
    let model = ScriptedModel::new([]).then_stream([text("hi!"), finish()]);
    let agent = Agent::builder(model)
        .chain(chain![plugins(vec![boxed(question), boxed(shout)])])
        .build()
        .unwrap();
    assert_eq!(
        agent.run("hello").await.unwrap().text().as_deref(),
        Some("HI?")
    );
}

// ---------------------------------------------------------------------------------------------
// Interrupts, state, resume
// ---------------------------------------------------------------------------------------------

/// "An interrupt raised by a plugin names the plugin and its own position; the run resumes in
/// that plugin", and "each plugin's state is saved in checkpoints": after a resume from JSON,
/// the plugin before the interrupter does not run again and its state still counts its run
/// before the pause; the plugin after it runs, and does not read the answer.
#[tokio::test]
async fn a_plugins_interrupt_resumes_in_that_plugin_with_the_plugins_states() {
    let log = new_log();
    let build = || {
        Agent::builder(logged_model(&log, [ModelResponse::text("hello")]))
            .chain(chain![
                counter("a", &log),
                plugins(vec![
                    boxed(counter("p", &log)),
                    boxed(ask),
                    boxed(counter("q", &log))
                ]),
                counter("c", &log)
            ])
            .build()
            .unwrap()
    };
    let agent = build();
    let output = agent.run("hi").await.unwrap();
    let checkpoint = stored(&paused(&output));
    let interrupt = &output.interrupts()[0];
    assert_eq!(interrupt.source, "ask");
    // `a` is member 0, the plugins start at 1: `ask` is the second.
    assert_eq!(interrupt.member, Some(2));
    assert_eq!(
        take_events(&log),
        [
            "a:before_agent",
            "p:before_agent",
            "q:before_agent",
            "c:before_agent",
            "a:before_model",
            "p:before_model"
        ]
    );

    // A new agent (a new process): the states come from the checkpoint's JSON.
    let agent = build();
    let answers = vec![(interrupt.id.clone(), json!("yes"))];
    let output = agent.resume(checkpoint, answers).await.unwrap();
    assert_eq!(
        output.text().as_deref(),
        Some("hello [c 1/1] [q 1/1] [p 1/1] [a 1/1]")
    );
    let after = take_events(&log);
    assert_eq!(
        after[..3],
        [
            "q:before_model".to_owned(),
            "c:before_model".to_owned(),
            "model".to_owned()
        ]
    );
    assert_eq!(
        agent.model().requests()[0].system_prompt.as_deref(),
        Some("answer=yes")
    );
}

/// The answer to a plugin's interrupt is checked by that plugin's `check_answer` before the
/// run resumes, and an `after_model` pause resumes with the plugins after it not run again.
#[tokio::test]
async fn a_plugins_check_answer_refuses_a_wrong_answer_before_the_run_resumes() {
    let log = new_log();
    let agent = Agent::builder(logged_model(&log, [ModelResponse::text("draft")]))
        .chain(chain![plugins(vec![
            boxed(Reviewer),
            boxed(counter("p", &log))
        ])])
        .build()
        .unwrap();
    let output = agent.run("hi").await.unwrap();
    let checkpoint = paused(&output);
    let id = output.interrupts()[0].id.clone();
    assert_eq!(output.interrupts()[0].source, "Reviewer");

    let refused = agent
        .resume(checkpoint.clone(), vec![(id.clone(), json!("meh"))])
        .await;
    assert!(
        matches!(&refused, Err(Error::Resume(_))),
        "expected a refused answer, got {refused:?}"
    );

    take_events(&log);
    let output = agent
        .resume(checkpoint, vec![(id, json!("fine"))])
        .await
        .unwrap();
    assert_eq!(output.text().as_deref(), Some("draft [p 1/1] (fine)"));
    assert!(!take_events(&log).contains(&"p:after_model".to_owned()));
}

/// "Another set of plugins at resume is refused" with [`PluginError::Changed`], naming both
/// sets, before any plugin runs.
#[tokio::test]
async fn resuming_with_other_plugins_is_refused() {
    let log = new_log();
    let agent = Agent::builder(logged_model(&log, [ModelResponse::text("hello")]))
        .chain(chain![plugins(vec![boxed(ask)])])
        .build()
        .unwrap();
    let output = agent.run("hi").await.unwrap();
    let checkpoint = paused(&output);
    let answers = vec![(output.interrupts()[0].id.clone(), json!("yes"))];

    let other = Agent::builder(logged_model(&log, [ModelResponse::text("hello")]))
        .chain(chain![plugins(vec![boxed(counter("x", &log)), boxed(ask)])])
        .build()
        .unwrap();
    take_events(&log);
    let error = middleware_error(other.resume(checkpoint, answers).await);
    assert_eq!(error.middleware(), Some("plugins"));
    let changed = error
        .inner()
        .downcast_ref::<PluginError>()
        .expect("a plugin error");
    match changed {
        PluginError::Changed { saved, current } => {
            assert_eq!(saved, &["ask"]);
            assert_eq!(current, &["Counter", "ask"]);
        }
        other => panic!("expected Changed, got {other:?}"),
    }
    assert!(events(&log).is_empty(), "{:?}", events(&log));
}

/// A plugin's thread state is kept across the runs of a thread.
#[tokio::test]
async fn a_plugins_thread_state_is_kept_across_a_threads_runs() {
    let log = new_log();
    let agent = Agent::builder(ScriptedModel::new([
        ModelResponse::text("one"),
        ModelResponse::text("two"),
    ]))
    .chain(chain![plugins(vec![boxed(counter("p", &log))])])
    .build()
    .unwrap();
    let mut thread = Thread::new();
    agent.run_in(&mut thread, "first").await.unwrap();
    let output = agent.run_in(&mut thread, "second").await.unwrap();
    assert_eq!(output.text().as_deref(), Some("two [p 1/2]"));
}

/// A plugin's `wrap_tool_call` interrupt: two gates as plugins each ask, in turn, and each
/// reads only its own answer (each has its own position).
#[tokio::test]
async fn gates_as_plugins_each_read_their_own_answer_on_the_tool_path() {
    let log = new_log();
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([echo_call("c1", "x")]),
        ModelResponse::text("done"),
    ]);
    let agent = Agent::builder(model)
        .tool(echo_tool(&log))
        .chain(chain![plugins(vec![
            boxed(Gate { label: "outer" }),
            boxed(Gate { label: "inner" })
        ])])
        .build()
        .unwrap();
    let output = agent.run("hi").await.unwrap();
    let first = &output.interrupts()[0];
    assert_eq!(first.source, "Gate");
    assert_eq!(first.payload, json!({ "gate": "outer" }));
    assert_eq!(first.member, Some(0));

    let answers = vec![(first.id.clone(), json!("yes"))];
    let output = agent
        .resume(stored(&paused(&output)), answers)
        .await
        .unwrap();
    let second = &output.interrupts()[0];
    assert_eq!(second.payload, json!({ "gate": "inner" }));
    assert_eq!(second.member, Some(1));
    assert!(events(&log).is_empty(), "the tool has not run yet");

    let answers = vec![(second.id.clone(), json!("yes"))];
    let output = agent
        .resume(stored(&paused(&output)), answers)
        .await
        .unwrap();
    assert_eq!(output.text().as_deref(), Some("done"));
    assert_eq!(events(&log), ["tool:echo"]);
}

// ---------------------------------------------------------------------------------------------
// Contributions
// ---------------------------------------------------------------------------------------------

/// "The tools and prompt pieces the plugins contribute are the agent's".
#[test]
fn a_plugins_contributions_are_the_agents() {
    let agent = Agent::builder(ScriptedModel::new([]))
        .system_prompt("You help.")
        .chain(chain![plugins(vec![boxed(Clock)])])
        .build()
        .unwrap();
    assert!(agent.tools().spec("clock").is_some());
    assert_eq!(
        agent.system_prompt(),
        Some("You help.\n\nCall `clock` for the time.")
    );
    let description = chain![plugins(vec![boxed(Clock)])].describe();
    assert_eq!(description.tools(), ["clock"]);
}

// ---------------------------------------------------------------------------------------------
// The registry
// ---------------------------------------------------------------------------------------------

struct Settings {
    stop: bool,
}

/// "None opts out; a failing factory (an error, or a panic) is skipped and logged (WARN),
/// never fatal": the plugins made are the others', in registration order.
#[test]
fn the_registry_skips_factories_that_opt_out_fail_or_panic() {
    let made = Arc::new(AtomicUsize::new(0));
    let mut registry = PluginRegistry::<Settings>::new();
    let counted = made.clone();
    registry
        .register("stop", |settings| settings.stop.then_some(stop))
        .register("shout", move |_| {
            counted.fetch_add(1, Ordering::Relaxed);
            Some(shout)
        })
        .register_fallible("broken", |_| Err::<Option<Clock>, _>("no licence"))
        .register("panics", |_| -> Option<Clock> { panic!("factory bug") })
        .register("clock", |_| Some(Clock));
    assert_eq!(
        registry.factories().collect::<Vec<_>>(),
        ["stop", "shout", "broken", "panics", "clock"]
    );

    let (plugins, captured) = capture::traced(|| registry.build(&Settings { stop: false }));
    assert_eq!(plugins.names().collect::<Vec<_>>(), ["shout", "Clock"]);
    assert_eq!(made.load(Ordering::Relaxed), 1);
    let warnings: Vec<_> = captured
        .events
        .iter()
        .filter(|event| event.level == tracing::Level::WARN)
        .map(|event| event.fields.get("error").cloned().unwrap_or_default())
        .collect();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(
        warnings[0].contains("`broken` failed: no licence"),
        "{warnings:?}"
    );
    assert!(
        warnings[1].contains("`panics` panicked: factory bug"),
        "{warnings:?}"
    );

    let plugins = registry.build(&Settings { stop: true });
    assert_eq!(
        plugins.names().collect::<Vec<_>>(),
        ["stop", "shout", "Clock"]
    );
}

/// "A required plugin that fails is an error, not a warning": `try_build` returns the failure
/// (an error, a panic, a plugin the member cannot run), naming the factory; `build` logs it at
/// ERROR and its member fails every run before the model is called. A required factory that
/// opts out (`Ok(None)`) is no failure.
#[tokio::test]
async fn a_required_plugin_that_fails_is_an_error_not_a_warning() {
    struct Licence(Option<&'static str>);
    let mut registry = PluginRegistry::<Licence>::new();
    registry
        .register("clock", |_| Some(Clock))
        .register_required("redact", |licence: &Licence| match licence.0 {
            Some("off") => Ok(None),
            Some(_) => Ok(Some(stop)),
            None => Err("no licence"),
        });

    let plugins = registry.try_build(&Licence(Some("key"))).unwrap();
    assert_eq!(plugins.names().collect::<Vec<_>>(), ["Clock", "stop"]);
    let plugins = registry.try_build(&Licence(Some("off"))).unwrap();
    assert_eq!(plugins.names().collect::<Vec<_>>(), ["Clock"]);

    let error = registry.try_build(&Licence(None)).unwrap_err();
    assert!(matches!(error, FactoryError::Failed { .. }), "{error:?}");
    assert_eq!(error.factory(), "redact");
    assert_eq!(
        Report(&error).to_string(),
        "the plugin factory `redact` failed: no licence"
    );

    // `build` fails closed: an ERROR, and a member that refuses every run.
    let (plugins, captured) = capture::traced(|| registry.build(&Licence(None)));
    assert!(plugins.is_refusing());
    let errors: Vec<_> = captured
        .events
        .iter()
        .filter(|event| event.level == tracing::Level::ERROR)
        .collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].fields["factory"], "redact");
    let log = new_log();
    let agent = Agent::builder(logged_model(&log, [ModelResponse::text("hello")]))
        .chain(chain![plugins])
        .build()
        .unwrap();
    let error = middleware_error(agent.run("hi").await);
    assert_eq!(error.middleware(), Some("plugins"));
    match error.inner().downcast_ref::<PluginError>() {
        Some(PluginError::Required { factory, source }) => {
            assert_eq!(factory, "redact");
            assert!(matches!(**source, FactoryError::Failed { .. }));
        }
        other => panic!("expected Required, got {other:?}"),
    }
    assert!(
        events(&log).is_empty(),
        "the model was called: {:?}",
        events(&log)
    );

    // A panic, and a plugin the member cannot run, are failures too.
    let mut registry = PluginRegistry::<()>::new();
    registry.register_required("panics", |_| -> Result<Option<Clock>, Error> {
        panic!("factory bug")
    });
    let error = registry.try_build(&()).unwrap_err();
    assert!(matches!(error, FactoryError::Panicked { .. }), "{error:?}");
    let mut registry = PluginRegistry::<()>::new();
    registry.register_required("shout", |_| Ok::<_, Error>(Some(shout)));
    let error = registry.try_build_without_events(&()).unwrap_err();
    assert!(matches!(error, FactoryError::PerEvent { .. }), "{error:?}");
    assert!(registry.build_without_events(&()).is_refusing());
}

/// A member takes [`Plugins::CAPACITY`] positions: `Plugins::new` refuses more plugins with a
/// `ConfigError` naming the field, and the registry leaves the extra ones out with a warning.
#[test]
fn plugins_past_the_capacity_are_refused_or_left_out() {
    let many = || {
        (0..=Plugins::CAPACITY)
            .map(|_| boxed(stop))
            .collect::<Vec<_>>()
    };
    let error = Plugins::new(many()).unwrap_err();
    assert_eq!(error.field(), "plugins");

    let mut registry = PluginRegistry::<()>::new();
    for _ in 0..=Plugins::CAPACITY {
        registry.register("stop", |_| Some(stop));
    }
    let (plugins, captured) = capture::traced(|| registry.build(&()));
    assert_eq!(plugins.len(), Plugins::CAPACITY);
    let warnings = captured
        .events
        .iter()
        .filter(|event| event.level == tracing::Level::WARN)
        .count();
    assert_eq!(warnings, 1);
}

/// The member sits where it is listed: a registry's plugins between two static members run
/// between them (the README's example, end to end).
#[tokio::test]
async fn a_registrys_plugins_run_between_the_static_members() {
    let log = new_log();
    let mut registry = PluginRegistry::<Log>::new();
    registry.register("counter", |log| Some(counter("p", log)));
    let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("ok")]))
        .chain(chain![
            counter("a", &log),
            registry.build(&log),
            counter("c", &log)
        ])
        .build()
        .unwrap();
    let output = agent.run("hi").await.unwrap();
    assert_eq!(output.text().as_deref(), Some("ok [c 1/1] [p 1/1] [a 1/1]"));
    assert_eq!(
        events(&log)[3..6],
        [
            "a:before_model".to_owned(),
            "p:before_model".to_owned(),
            "c:before_model".to_owned()
        ]
    );
}

/// `PluginsWithoutEvents` does not declare the per-event hook (so the model is not streamed
/// because of it) and refuses a per-event plugin rather than skip it: `new` with a
/// `ConfigError`, the registry by leaving it out with a warning. Its other plugins run.
#[tokio::test]
async fn plugins_without_events_refuse_per_event_plugins() {
    use hookchain::plugin::PluginsWithoutEvents;

    assert!(!<PluginsWithoutEvents as Middleware>::HOOKS.contains(Hook::OnModelEvent));
    assert!(<Plugins as Middleware>::HOOKS.contains(Hook::OnModelEvent));

    let error = PluginsWithoutEvents::new(vec![boxed(stop), boxed(shout)]).unwrap_err();
    assert_eq!(error.field(), "plugins");
    assert!(error.problem().contains("`shout`"), "{error}");

    let log = new_log();
    let mut registry = PluginRegistry::<Log>::new();
    registry
        .register("shout", |_| Some(shout))
        .register("counter", |log| Some(counter("p", log)));
    let (plugins, captured) = capture::traced(|| registry.build_without_events(&log));
    assert_eq!(plugins.names().collect::<Vec<_>>(), ["Counter"]);
    let warnings: Vec<_> = captured
        .events
        .iter()
        .filter(|event| event.level == tracing::Level::WARN)
        .map(|event| event.fields.get("error").cloned().unwrap_or_default())
        .collect();
    assert_eq!(warnings.len(), 1);
    assert!(warnings[0].contains("per-event hook"), "{warnings:?}");

    let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("ok")]))
        .chain(chain![plugins])
        .build()
        .unwrap();
    assert_eq!(
        agent.run("hi").await.unwrap().text().as_deref(),
        Some("ok [p 1/1]")
    );
}

/// A chain boxed as one plugin takes a position per member: an interrupt in its second member
/// names that member and its position, and the run resumes there (its first member does not
/// run again).
#[tokio::test]
async fn a_chain_as_one_plugin_resumes_at_its_interrupting_member() {
    let log = new_log();
    let build = || {
        Agent::builder(logged_model(&log, [ModelResponse::text("hello")]))
            .chain(chain![
                counter("a", &log),
                plugins(vec![
                    boxed(counter("p", &log)),
                    boxed(chain![counter("q", &log), ask])
                ]),
                counter("c", &log)
            ])
            .build()
            .unwrap()
    };
    let agent = build();
    let output = agent.run("hi").await.unwrap();
    let interrupt = &output.interrupts()[0];
    assert_eq!(interrupt.source, "ask");
    // `a` 0, the member from 1: `p` 1, `q` 2, `ask` 3.
    assert_eq!(interrupt.member, Some(3));
    let answers = vec![(interrupt.id.clone(), json!("yes"))];
    let checkpoint = stored(&paused(&output));
    take_events(&log);
    let output = build().resume(checkpoint, answers).await.unwrap();
    assert_eq!(
        output.text().as_deref(),
        Some("hello [c 1/1] [q 1/1] [p 1/1] [a 1/1]")
    );
    assert_eq!(
        take_events(&log)[..2],
        ["c:before_model".to_owned(), "model".to_owned()]
    );
}

/// "LIVE_STREAM is false": a constant cannot depend on the plugins of a run.
#[test]
fn a_plugin_member_holds_streamed_answers_back() {
    const { assert!(!<Plugins as Middleware>::LIVE_STREAM) };
    const { assert!(!<hookchain::plugin::PluginsWithoutEvents as Middleware>::LIVE_STREAM) };
}

/// Fails on the first event.
#[hook(on_model_event)]
fn refuse_events(_event: ModelEvent, _out: &mut impl Emit) -> Result<(), Error> {
    Err(Error::hook("no events today"))
}

/// A per-event plugin's error fails the model call, named after the plugin.
#[tokio::test]
async fn a_per_event_plugins_error_is_named_after_the_plugin() {
    let model = ScriptedModel::new([]).then_stream([text("hi"), finish()]);
    let agent = Agent::builder(model)
        .chain(chain![plugins(vec![boxed(shout), boxed(refuse_events)])])
        .build()
        .unwrap();
    let error = middleware_error(agent.run("hello").await);
    assert_eq!(error.middleware(), Some("refuse_events"));
    assert_eq!(error.hook(), Some(Hook::OnModelEvent));
}
