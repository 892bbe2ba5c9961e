//! Shared helpers for the integration tests.
//!
//! - [`Recorder`]: a hand-written middleware implementing all six hooks that appends one event
//!   per hook to a shared [`Log`] (`"a:before_model"`, `"a:wrap_tool:enter:echo"`, …) and can be
//!   told to return a [`Flow`], fail, retry or short-circuit in a given hook.
//! - [`logged_model`]: a [`ScriptedModel`] that also appends `"model"` to the log.
//! - [`echo_tool`] / [`counting_tool`]: tools that log `"tool:<name>"` or count their runs.
//! - [`assert_no_dangling`]: every tool call in a history has exactly one result.
//! - [`EffectTool`]: a tool whose runs are recorded (in memory or in a file), with their
//!   idempotency keys; [`temp_dir`]: a fresh directory for one test.
//! - The crash schedules' harness (features `sqlite` and `postgres`; `crash/mod.rs` tells
//!   it): scenarios, a ledger, stores with clocks, workers stopped at a chosen await point,
//!   the recovery and the property (`tests/crash_schedules.rs`).

// Each test binary that declares `mod support;` uses only part of it.
#![allow(dead_code)]

mod approvals;
mod clock;
#[cfg(all(feature = "sqlite", feature = "postgres"))] // It crashes the database stores.
mod crash;
mod effects;
mod polls;

#[allow(unused_imports)] // Each test binary uses part of them.
pub(crate) use approvals::approve_all;
#[allow(unused_imports)] // Each test binary uses part of them.
pub(crate) use clock::ManualClock;
#[cfg(all(feature = "sqlite", feature = "postgres"))]
#[allow(unused_imports)] // Each test binary uses part of them.
pub(crate) use crash::{
    App, Budget, Death, Finding, Journal, Kind, LEASE, Ledger, Outcome, Scenario, Schedule, Stores,
    Tag, Tally, ThreadOf, Twist, Worker, first_worker, recover, run_schedule, scenarios,
};
#[allow(unused_imports)] // Each test binary uses part of them.
pub(crate) use effects::{EffectTool, Effects, temp_dir};
#[allow(unused_imports)] // Each test binary uses part of them.
pub(crate) use polls::{YieldOnce, stopped_after};

/// The texts of the tool results in `messages`, in order (what a scripted model's rule reads
/// to decide its next answer).
pub(crate) fn tool_texts(messages: &[hookchain::Message]) -> Vec<String> {
    messages
        .iter()
        .filter(|message| message.role == Role::Tool)
        .map(|message| message.text().into_owned())
        .collect()
}

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use hookchain::middleware::{HookSet, True, phase};
use hookchain::prelude::*;
use hookchain::{FnTool, MiddlewareError, ModelError, Role, RunOutput, Tool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

/// The shared event log of one test.
pub(crate) type Log = Arc<Mutex<Vec<String>>>;

/// A new, empty log.
pub(crate) fn new_log() -> Log {
    Log::default()
}

/// Appends `event` to `log`.
pub(crate) fn push(log: &Log, event: impl Into<String>) {
    log.lock().unwrap().push(event.into());
}

/// A snapshot of the events logged so far.
pub(crate) fn events(log: &Log) -> Vec<String> {
    log.lock().unwrap().clone()
}

/// Drains the log: the events so far, leaving it empty.
pub(crate) fn take_events(log: &Log) -> Vec<String> {
    std::mem::take(&mut *log.lock().unwrap())
}

/// The [`MiddlewareError`] of a run that failed in a hook.
#[track_caller]
pub(crate) fn middleware_error(result: Result<RunOutput, Error>) -> MiddlewareError {
    match result {
        Err(Error::Middleware(error)) => *error,
        other => panic!("expected Error::Middleware, got {other:?}"),
    }
}

/// What a sequential hook of a [`Recorder`] does after logging its event.
#[derive(Debug, Clone)]
pub(crate) enum Act {
    /// Return `Flow::Continue` (or `Ok(())`).
    Continue,
    /// Return this flow.
    Return(Flow),
    /// Fail with `Error::hook(message)`; the chain names the middleware and the hook.
    Fail(&'static str),
}

/// What a `wrap_*` hook of a [`Recorder`] does between its enter and exit events.
#[derive(Debug, Clone)]
pub(crate) enum WrapAct<T> {
    /// Call `next` once.
    Pass,
    /// Call `next` twice with the same input and return the second outcome.
    Retry,
    /// Never call `next`; return this instead.
    ShortCircuit(T),
    /// Fail with `Error::middleware(Recorder::NAME, hook, message)` (no exit event).
    Fail(&'static str),
}

/// A middleware implementing every hook, logging `"<label>:<event>"` for each.
///
/// Events: `before_agent`, `before_model`, `wrap_model:enter`, `wrap_model:exit`, `after_model`,
/// `wrap_tool:enter:<tool>`, `wrap_tool:exit:<tool>`, `after_agent`. By default every hook
/// passes through; the builder methods change one hook's behaviour.
#[derive(Debug, Clone)]
pub(crate) struct Recorder {
    label: &'static str,
    log: Log,
    before_agent: Act,
    before_model: Act,
    after_model: Act,
    after_agent: Act,
    wrap_model: WrapAct<ModelResponse>,
    wrap_tool: WrapAct<&'static str>,
    stamp: Option<&'static str>,
}

impl Recorder {
    /// A pass-through recorder logging to `log` under `label`.
    pub(crate) fn new(label: &'static str, log: &Log) -> Self {
        Self {
            label,
            log: log.clone(),
            before_agent: Act::Continue,
            before_model: Act::Continue,
            after_model: Act::Continue,
            after_agent: Act::Continue,
            wrap_model: WrapAct::Pass,
            wrap_tool: WrapAct::Pass,
            stamp: None,
        }
    }

    fn act_mut(&mut self, hook: Hook) -> &mut Act {
        match hook {
            Hook::BeforeAgent => &mut self.before_agent,
            Hook::BeforeModel => &mut self.before_model,
            Hook::AfterModel => &mut self.after_model,
            Hook::AfterAgent => &mut self.after_agent,
            other => panic!("`{other}` is a wrap hook: use the wrap builder methods"),
        }
    }

    /// Makes the sequential `hook` (`before_agent`, `before_model` or `after_model`) return
    /// `flow` every time it runs.
    pub(crate) fn returns(mut self, hook: Hook, flow: Flow) -> Self {
        assert_ne!(hook, Hook::AfterAgent, "after_agent returns no Flow");
        *self.act_mut(hook) = Act::Return(flow);
        self
    }

    /// Makes `hook` (any of the six) fail with `message`.
    pub(crate) fn fails(mut self, hook: Hook, message: &'static str) -> Self {
        match hook {
            Hook::WrapModelCall => self.wrap_model = WrapAct::Fail(message),
            Hook::WrapToolCall => self.wrap_tool = WrapAct::Fail(message),
            hook => *self.act_mut(hook) = Act::Fail(message),
        }
        self
    }

    /// Makes `wrap_model_call` call `next` twice (a retry).
    pub(crate) fn retry_model(mut self) -> Self {
        self.wrap_model = WrapAct::Retry;
        self
    }

    /// Makes `wrap_model_call` answer with `response` without calling `next`.
    pub(crate) fn short_circuit_model(mut self, response: ModelResponse) -> Self {
        self.wrap_model = WrapAct::ShortCircuit(response);
        self
    }

    /// Makes `wrap_model_call` append `line` to the request's system prompt before `next`.
    pub(crate) fn stamp_system(mut self, line: &'static str) -> Self {
        self.stamp = Some(line);
        self
    }

    /// Makes `wrap_tool_call` call `next` twice (a retry).
    pub(crate) fn retry_tool(mut self) -> Self {
        self.wrap_tool = WrapAct::Retry;
        self
    }

    /// Makes `wrap_tool_call` answer with an ok result of `content` without calling `next`.
    pub(crate) fn short_circuit_tool(mut self, content: &'static str) -> Self {
        self.wrap_tool = WrapAct::ShortCircuit(content);
        self
    }

    fn log(&self, event: &str) {
        push(&self.log, format!("{}:{event}", self.label));
    }

    /// Logs `event`, then does what `act` says.
    fn act(&self, event: &str, act: &Act) -> Result<Flow, Error> {
        self.log(event);
        match act {
            Act::Continue => Ok(Flow::Continue),
            Act::Return(flow) => Ok(flow.clone()),
            Act::Fail(message) => Err(Error::hook(*message)),
        }
    }
}

impl Middleware for Recorder {
    type State = ();
    type ThreadState = ();
    type StreamState = ();
    type Phase = phase::Wrap;
    type WrapsModel = True;
    type WrapsTool = True;
    const NAME: &'static str = "Recorder";
    // Every hook the macros' twin has: all but the per-event one.
    const HOOKS: HookSet = HookSet::ALL.difference(HookSet::of(Hook::OnModelEvent));

    async fn before_agent(
        &self,
        _cx: &mut Context,
        _state: &mut (),
        _thread: &mut (),
    ) -> Result<Flow, Error> {
        self.act("before_agent", &self.before_agent)
    }

    async fn before_model(
        &self,
        _cx: &mut Context,
        _state: &mut (),
        _thread: &mut (),
        _request: &mut ModelRequest,
    ) -> Result<Flow, Error> {
        self.act("before_model", &self.before_model)
    }

    async fn wrap_model_call<N: ModelNext>(
        &self,
        cx: &mut Context,
        _state: &mut (),
        _thread: &mut (),
        mut request: ModelRequest,
        mut next: N,
    ) -> Result<ModelResponse, Error> {
        self.log("wrap_model:enter");
        if let Some(line) = self.stamp {
            let prompt = request.system_prompt.get_or_insert_with(String::new);
            prompt.push('\n');
            prompt.push_str(line);
        }
        let response = match &self.wrap_model {
            WrapAct::Pass => next.call(cx, request).await,
            WrapAct::Retry => {
                let _first = next.call(cx, request.clone()).await;
                next.call(cx, request).await
            }
            WrapAct::ShortCircuit(response) => Ok(response.clone()),
            WrapAct::Fail(message) => {
                return Err(Error::middleware(Self::NAME, Hook::WrapModelCall, *message));
            }
        };
        self.log("wrap_model:exit");
        response
    }

    async fn after_model(
        &self,
        _cx: &mut Context,
        _state: &mut (),
        _thread: &mut (),
        _response: &mut ModelResponse,
    ) -> Result<Flow, Error> {
        self.act("after_model", &self.after_model)
    }

    async fn wrap_tool_call<N: ToolNext>(
        &self,
        cx: ToolContext<'_>,
        _state: &(),
        _thread: &(),
        call: ToolCall,
        mut next: N,
    ) -> Result<ToolResult, Error> {
        let name = call.name.clone();
        self.log(&format!("wrap_tool:enter:{name}"));
        let result = match &self.wrap_tool {
            WrapAct::Pass => Ok(next.call(cx, call).await),
            WrapAct::Retry => {
                let _first = next.call(cx, call.clone()).await;
                Ok(next.call(cx, call).await)
            }
            WrapAct::ShortCircuit(content) => Ok(ToolResult::ok(&call.id, *content)),
            WrapAct::Fail(message) => {
                return Err(Error::middleware(Self::NAME, Hook::WrapToolCall, *message));
            }
        };
        self.log(&format!("wrap_tool:exit:{name}"));
        result
    }

    async fn after_agent(
        &self,
        _cx: &mut Context,
        _state: &mut (),
        _thread: &mut (),
    ) -> Result<(), Error> {
        self.act("after_agent", &self.after_agent).map(|_| ())
    }
}

/// A model that answers with `script`, one response per call, and logs `"model"` per call.
///
/// A call past the end of the script fails with a provider error. `calls()` and `requests()`
/// work as on any [`ScriptedModel`].
pub(crate) fn logged_model(
    log: &Log,
    script: impl IntoIterator<Item = ModelResponse>,
) -> ScriptedModel {
    let log = log.clone();
    let script = Mutex::new(script.into_iter().collect::<VecDeque<_>>());
    ScriptedModel::from_rule(move |_request| {
        push(&log, "model");
        script
            .lock()
            .unwrap()
            .pop_front()
            .ok_or_else(|| ModelError::provider("the test's script is exhausted"))
    })
}

/// A script: one model response per entry of `steps` calling those tools, then a final `text`.
pub(crate) fn calls_then_text(
    steps: impl IntoIterator<Item = Vec<ToolCall>>,
    text: &str,
) -> Vec<ModelResponse> {
    steps
        .into_iter()
        .map(ModelResponse::tool_calls)
        .chain([ModelResponse::text(text)])
        .collect()
}

/// A call of the `echo` tool with id `id`, echoing `text`.
pub(crate) fn echo_call(id: &str, text: &str) -> ToolCall {
    ToolCall::new(id, "echo", json!({ "text": text }))
}

/// Arguments of the test tools: one text.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct TextArgs {
    /// The text to work on.
    pub(crate) text: String,
}

/// The `echo` tool: logs `"tool:echo"` and returns its text.
pub(crate) fn echo_tool(log: &Log) -> impl Tool {
    let log = log.clone();
    FnTool::new("echo", "Returns its text.", move |args: TextArgs| {
        push(&log, "tool:echo");
        async move { Ok::<_, Infallible>(args.text) }
    })
}

/// A tool named `name` that counts its runs in `runs` and returns `"ran"`.
pub(crate) fn counting_tool(name: &'static str, runs: &Arc<AtomicUsize>) -> impl Tool {
    let runs = runs.clone();
    FnTool::new(name, "Counts its runs.", move |_: TextArgs| {
        runs.fetch_add(1, Ordering::SeqCst);
        async { Ok::<_, Infallible>("ran") }
    })
}

/// The system prompt of each request the scripted model of `agent` was sent, in order.
pub(crate) fn system_prompts(agent: &Agent<ScriptedModel, impl Middleware>) -> Vec<Option<String>> {
    agent
        .model()
        .requests()
        .into_iter()
        .map(|request| request.system_prompt)
        .collect()
}

/// Asserts that every tool call in `messages` has exactly one tool result carrying its id,
/// after the call and before the next assistant message, and that every tool result answers a
/// call.
#[track_caller]
pub(crate) fn assert_no_dangling(messages: &[Message]) {
    for (at, message) in messages.iter().enumerate() {
        for call in &message.tool_calls {
            let answers = |m: &&Message| {
                m.role == Role::Tool && m.tool_call_id.as_deref() == Some(call.id.as_str())
            };
            let total = messages.iter().filter(answers).count();
            assert_eq!(
                total, 1,
                "tool call `{}` has {total} results in {messages:#?}",
                call.id
            );
            let turn_end = messages[at + 1..]
                .iter()
                .position(|m| m.role == Role::Assistant)
                .map_or(messages.len(), |offset| at + 1 + offset);
            assert!(
                messages[at + 1..turn_end].iter().any(|m| answers(&m)),
                "the result of tool call `{}` is not between the call and the next model \
                 answer in {messages:#?}",
                call.id
            );
        }
    }
    for result in messages.iter().filter(|m| m.role == Role::Tool) {
        let id = result.tool_call_id.as_deref();
        let calls = messages
            .iter()
            .flat_map(|m| &m.tool_calls)
            .filter(|call| Some(call.id.as_str()) == id)
            .count();
        assert_eq!(calls, 1, "tool result {result:?} answers {calls} calls");
    }
}

/// The tool results of `messages`, as `(tool_call_id, content, is_error)`, in history order.
pub(crate) fn tool_results(messages: &[Message]) -> Vec<(String, String, bool)> {
    messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| {
            (
                m.tool_call_id.clone().unwrap_or_default(),
                m.text().into_owned(),
                m.is_error,
            )
        })
        .collect()
}
