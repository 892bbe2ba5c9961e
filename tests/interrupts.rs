//! Interrupts, checkpoints and resume (the `interrupt` module docs), one test per rule:
//! pausing from `before_model`, `after_model`, `wrap_tool_call` and tools; resuming without
//! re-running what already ran; checkpoints as JSON and in stores; the refusals; the
//! `HumanInTheLoop` middleware, the `AskUser` tool, and threads.
//!
//! The chains mix [`Tally`] members (which log their hooks, stamp the request and response, and
//! count their hooks in their state) with small interrupting hooks, so an exact event log shows
//! which hooks ran before the pause and which after the resume.

mod support;

use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use hookchain::builtin::human_in_the_loop::{
    ApprovalRequest, ApprovalResponse, Decision, DecisionKind, HumanInTheLoop, HumanInTheLoopError,
    ToolPolicy,
};
use hookchain::error::Report;
use hookchain::interrupt::{CheckpointError, Position, ResumeError};
use hookchain::middleware::{False, HookSet, True, phase};
use hookchain::prelude::*;
use hookchain::tool::{AnswerKind, AskUser, Question};
use hookchain::{
    Checkpoint, Content, EndReason, FnTool, InterruptId, Role, RunOutput, Thread, Tool, ToolError,
    ToolSpec, chain, hook, middleware,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use support::{
    Log, assert_no_dangling, calls_then_text, counting_tool, echo_call, echo_tool, events,
    logged_model, middleware_error, new_log, push, take_events, tool_results,
};

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// Appends `line` to a system prompt, on a line of its own.
fn stamp(prompt: &mut Option<String>, line: &str) {
    let prompt = prompt.get_or_insert_with(String::new);
    if !prompt.is_empty() {
        prompt.push('\n');
    }
    prompt.push_str(line);
}

/// What a [`Tally`] counts: how often each of its hooks ran.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
struct Counts {
    before_agent: u32,
    before_model: u32,
    after_model: u32,
}

/// Logs `<label>:<hook>` for its four sequential hooks, stamps its label on the request's
/// system prompt (`before_model`) and on the response's text (`+<label>`, `after_model`), and
/// counts its hooks in its state.
struct Tally {
    label: &'static str,
    log: Log,
}

impl Tally {
    fn new(label: &'static str, log: &Log) -> Self {
        Tally {
            label,
            log: log.clone(),
        }
    }

    fn log(&self, hook: &str) {
        push(&self.log, format!("{}:{hook}", self.label));
    }
}

#[middleware(thread_state = Counts)]
impl Tally {
    #[hook(before_agent)]
    fn start(&self, counts: &mut Counts) {
        counts.before_agent += 1;
        self.log("before_agent");
    }

    #[hook(before_model)]
    fn before(&self, counts: &mut Counts, request: &mut ModelRequest) {
        counts.before_model += 1;
        self.log("before_model");
        stamp(&mut request.system_prompt, self.label);
    }

    #[hook(after_model)]
    fn after(&self, counts: &mut Counts, response: &mut ModelResponse) {
        counts.after_model += 1;
        self.log("after_model");
        response.message.content.push_text("+");
        response.message.content.push_text(self.label);
    }

    #[hook(after_agent)]
    fn end(&self) {
        self.log("after_agent");
    }
}

/// The counts of a [`Tally`] whose hooks ran `before_agent`, `before_model` and `after_model`
/// times.
fn counts(before_agent: u32, before_model: u32, after_model: u32) -> Counts {
    Counts {
        before_agent,
        before_model,
        after_model,
    }
}

/// Pauses every step in `before_model` until answered; resumed, it writes the answer on the
/// request's system prompt (`answer=<text>`). Counts its runs in its state.
#[hook(before_model, thread_state = u32)]
fn ask_before(runs: &mut u32, cx: &mut Context, request: &mut ModelRequest) -> Flow {
    *runs += 1;
    match cx.resume_value() {
        None => Flow::interrupt(json!({ "question": "may I call the model?" })),
        Some(answer) => {
            let answer = answer.as_str().expect("answered with text").to_owned();
            stamp(&mut request.system_prompt, &format!("answer={answer}"));
            Flow::Continue
        }
    }
}

/// Pauses every step in `after_model`, showing the response as the hooks before it left it;
/// resumed, it appends `+<answer>` to the response's text. Counts its runs in its state.
#[hook(after_model, thread_state = u32)]
fn ask_after(runs: &mut u32, cx: &mut Context, response: &mut ModelResponse) -> Flow {
    *runs += 1;
    match cx.resume_as::<String>() {
        None => Flow::interrupt(json!({ "review": response.message.content })),
        Some(answer) => {
            response.message.content.push_text("+");
            response
                .message
                .content
                .push_text(answer.expect("answered with text"));
            Flow::Continue
        }
    }
}

/// The checkpoint of a run that paused.
#[track_caller]
fn paused(output: &RunOutput) -> Checkpoint {
    assert_eq!(output.end, EndReason::Interrupted, "{output:#?}");
    *output
        .checkpoint
        .clone()
        .expect("a paused run has a checkpoint")
}

/// The ids of the interrupts of a paused run.
fn ids(output: &RunOutput) -> Vec<&str> {
    output
        .interrupts()
        .iter()
        .map(|interrupt| interrupt.id.as_str())
        .collect()
}

/// The one answer to the one interrupt of `output`.
#[track_caller]
fn answer(output: &RunOutput, value: Value) -> Vec<(InterruptId, Value)> {
    assert_eq!(output.interrupts().len(), 1, "{:#?}", output.interrupts());
    vec![(output.interrupts()[0].id.clone(), value)]
}

/// The [`ResumeError`] of a refused resume.
#[track_caller]
fn resume_error(result: Result<RunOutput, Error>) -> ResumeError {
    match result {
        Err(Error::Resume(error)) => *error,
        other => panic!("expected Error::Resume, got {other:?}"),
    }
}

/// The system prompts of every request the model received.
fn prompts(model: &ScriptedModel) -> Vec<Option<String>> {
    model
        .requests()
        .into_iter()
        .map(|request| request.system_prompt)
        .collect()
}

// ---------------------------------------------------------------------------------------------
// 1. Interrupts from the sequential hooks
// ---------------------------------------------------------------------------------------------

/// "From `before_model`, return `Flow::interrupt`": the run ends `Interrupted` with one
/// interrupt naming the hook, its middleware, the step and a deterministic id; no model call is
/// made and `after_agent` does not run (the run is not over). On resume the hooks listed before
/// the interrupting one do not run again (their request edits and state are in the checkpoint),
/// `before_agent` does not run again, the interrupting hook reads its answer, the rest of the
/// step runs, and `after_agent` runs once the run ends.
#[tokio::test]
async fn before_model_interrupt_resumes_at_the_interrupting_hook() {
    let log = new_log();
    let chain = chain![
        Tally::new("a", &log),
        Tally::new("b", &log),
        ask_before,
        Tally::new("c", &log)
    ];
    let model = logged_model(&log, [ModelResponse::text("hello")]);
    let agent = Agent::builder(model)
        .system_prompt("base")
        .chain(chain)
        .build()
        .unwrap();
    let mut thread = Thread::new();
    let output = agent.run_in(&mut thread, "hi").await.unwrap();

    let checkpoint = paused(&output);
    let [interrupt] = output.interrupts() else {
        panic!("one interrupt: {:?}", output.interrupts())
    };
    assert_eq!(
        interrupt.id,
        InterruptId::new("0/1:before_model:2:ask_before")
    );
    assert_eq!(interrupt.source, "ask_before");
    assert_eq!(interrupt.hook, Some(Hook::BeforeModel));
    assert_eq!(interrupt.member, Some(2));
    assert_eq!(interrupt.step, 1);
    assert_eq!(interrupt.tool_call_id, None);
    assert_eq!(
        interrupt.payload,
        json!({ "question": "may I call the model?" })
    );
    assert_eq!(output.model_calls, 0);
    assert_eq!(agent.model().calls(), 0);
    assert!(matches!(
        checkpoint.position(),
        Position::BeforeModel { member: 2, .. }
    ));
    assert_eq!(
        take_events(&log),
        [
            "a:before_agent",
            "b:before_agent",
            "c:before_agent",
            "a:before_model",
            "b:before_model",
        ]
    );
    // The thread holds the state as the pause left it.
    assert_eq!(
        thread.state(),
        &(counts(1, 1, 0), counts(1, 1, 0), 1, counts(1, 0, 0))
    );

    let answers = answer(&output, json!("yes"));
    let output = agent
        .resume_in(&mut thread, checkpoint, answers)
        .await
        .unwrap();

    assert_eq!(output.end, EndReason::Finished);
    assert_eq!(output.text().as_deref(), Some("hello+c+b+a"));
    assert_eq!(output.model_calls, 1);
    assert_eq!(output.steps, 1);
    assert_eq!(
        take_events(&log),
        [
            "c:before_model",
            "model",
            "c:after_model",
            "b:after_model",
            "a:after_model",
            "c:after_agent",
            "b:after_agent",
            "a:after_agent",
        ]
    );
    // The edits of `a` and `b` made before the pause reached the model, with the answer.
    assert_eq!(
        prompts(agent.model()),
        [Some("base\na\nb\nanswer=yes\nc".to_owned())]
    );
    // `a` and `b` kept the counts of their hooks from before the pause; `ask_before` ran twice.
    assert_eq!(
        thread.state(),
        &(counts(1, 1, 1), counts(1, 1, 1), 2, counts(1, 1, 1))
    );
}

/// "Interrupt ids are deterministic": two runs of the same agent on the same input pause with
/// the same ids.
#[tokio::test]
async fn interrupt_ids_are_deterministic() {
    let log = new_log();
    let agent = Agent::builder(logged_model(&log, []))
        .chain(chain![Tally::new("a", &log), ask_before])
        .build()
        .unwrap();
    let first = agent.run("hi").await.unwrap();
    let second = agent.run("hi").await.unwrap();
    assert_eq!(ids(&first), ["0/1:before_model:1:ask_before"]);
    assert_eq!(ids(&first), ids(&second));
    assert_eq!(first.interrupts(), second.interrupts());
    // Each pause has a checkpoint of its own: a checkpoint is single-use.
    assert_ne!(paused(&first).id(), paused(&second).id());
}

/// "From `after_model`, return `Flow::interrupt`": the payload sees the response as the hooks
/// that ran before it left it; on resume those hooks do not run again and their edits to the
/// response are kept, the model is not called again, and the hooks after the interrupting one
/// run.
#[tokio::test]
async fn after_model_interrupt_keeps_the_response_and_does_not_call_the_model_again() {
    let log = new_log();
    let chain = chain![Tally::new("a", &log), ask_after, Tally::new("c", &log)];
    let model = logged_model(&log, [ModelResponse::text("hello")]);
    let agent = Agent::builder(model).chain(chain).build().unwrap();
    let mut thread = Thread::new();
    let output = agent.run_in(&mut thread, "hi").await.unwrap();

    let checkpoint = paused(&output);
    let interrupt = &output.interrupts()[0];
    assert_eq!(interrupt.id.as_str(), "0/1:after_model:1:ask_after");
    assert_eq!(interrupt.source, "ask_after");
    assert_eq!(interrupt.hook, Some(Hook::AfterModel));
    assert_eq!(interrupt.step, 1);
    assert_eq!(interrupt.payload, json!({ "review": "hello+c" }));
    assert!(matches!(
        checkpoint.position(),
        Position::AfterModel { member: 1, .. }
    ));
    assert_eq!(
        take_events(&log),
        [
            "a:before_agent",
            "c:before_agent",
            "a:before_model",
            "c:before_model",
            "model",
            "c:after_model",
        ]
    );

    let answers = answer(&output, json!("ok"));
    let output = agent
        .resume_in(&mut thread, checkpoint, answers)
        .await
        .unwrap();

    assert_eq!(output.end, EndReason::Finished);
    assert_eq!(output.text().as_deref(), Some("hello+c+ok+a"));
    assert_eq!(agent.model().calls(), 1);
    assert_eq!(output.model_calls, 1);
    assert_eq!(
        take_events(&log),
        ["a:after_model", "c:after_agent", "a:after_agent"]
    );
    assert_eq!(thread.state(), &(counts(1, 1, 1), 2, counts(1, 1, 1)));
}

/// "An interrupt inside a nested chain resumes at the right member": in
/// `chain![a, chain![b, interrupter], c]` the interrupt's member is its position in the
/// flattened chain, and on resume neither `a` nor `b` runs again, the interrupter reads its
/// answer, and `c` runs.
#[tokio::test]
async fn interrupt_in_a_nested_chain_resumes_at_the_right_member() {
    let log = new_log();
    let chain = chain![
        Tally::new("a", &log),
        chain![Tally::new("b", &log), ask_before],
        Tally::new("c", &log)
    ];
    let model = logged_model(&log, [ModelResponse::text("hello")]);
    let agent = Agent::builder(model).chain(chain).build().unwrap();
    let output = agent.run("hi").await.unwrap();

    let checkpoint = paused(&output);
    assert_eq!(ids(&output), ["0/1:before_model:2:ask_before"]);
    assert_eq!(output.interrupts()[0].source, "ask_before");
    take_events(&log);

    let answers = answer(&output, json!("yes"));
    let output = agent.resume(checkpoint, answers).await.unwrap();

    assert_eq!(output.text().as_deref(), Some("hello+c+b+a"));
    assert_eq!(
        take_events(&log)[..2],
        ["c:before_model".to_owned(), "model".to_owned()]
    );
    assert_eq!(
        prompts(agent.model()),
        [Some("a\nb\nanswer=yes\nc".to_owned())]
    );
}

/// The same for `after_model`, which runs in reverse order: in
/// `chain![a, chain![b, interrupter, c], d]` the hooks `d` and `c` ran before the pause; on
/// resume the interrupter reads its answer and only `b` and `a` run.
#[tokio::test]
async fn after_model_interrupt_in_a_nested_chain_resumes_at_the_right_member() {
    let log = new_log();
    let chain = chain![
        Tally::new("a", &log),
        chain![Tally::new("b", &log), ask_after, Tally::new("c", &log)],
        Tally::new("d", &log)
    ];
    let model = logged_model(&log, [ModelResponse::text("hello")]);
    let agent = Agent::builder(model).chain(chain).build().unwrap();
    let output = agent.run("hi").await.unwrap();

    let checkpoint = paused(&output);
    assert_eq!(ids(&output), ["0/1:after_model:2:ask_after"]);
    assert_eq!(
        output.interrupts()[0].payload,
        json!({ "review": "hello+d+c" })
    );
    take_events(&log);

    let answers = answer(&output, json!("ok"));
    let output = agent.resume(checkpoint, answers).await.unwrap();

    assert_eq!(output.text().as_deref(), Some("hello+d+c+ok+b+a"));
    assert_eq!(
        take_events(&log)[..2],
        ["b:after_model".to_owned(), "a:after_model".to_owned()]
    );
    assert_eq!(agent.model().calls(), 1);
}

/// Results supplied in `after_model` with `Context::answer_tool_call` by a hook that ran before
/// an `after_model` interrupt are kept like its edits to the response: on resume that hook does
/// not run again, so the call it answered must still not run.
#[tokio::test]
async fn results_supplied_before_an_after_model_pause_are_kept() {
    /// Answers every call of `count` itself, so that the tool never runs.
    #[hook(after_model)]
    fn answer_counts(cx: &mut Context, response: &mut ModelResponse) {
        for call in &response.message.tool_calls {
            if call.name == "count" {
                cx.answer_tool_call(ToolResult::ok(&call.id, "answered by a hook"));
            }
        }
    }

    let runs = Arc::new(AtomicUsize::new(0));
    let log = new_log();
    let script = calls_then_text(
        [vec![ToolCall::new("c1", "count", json!({ "text": "x" }))]],
        "done",
    );
    let agent = Agent::builder(logged_model(&log, script))
        .tool(counting_tool("count", &runs))
        // `after_model` runs in reverse: `answer_counts` first, then `ask_after` pauses.
        .chain(chain![ask_after, answer_counts])
        .build()
        .unwrap();
    let output = agent.run("hi").await.unwrap();
    let checkpoint = paused(&output);
    let answers = answer(&output, json!("ok"));
    let output = agent.resume(checkpoint, answers).await.unwrap();

    assert_eq!(runs.load(Ordering::SeqCst), 0, "the answered call ran");
    assert_eq!(
        tool_results(&output.messages),
        [("c1".to_owned(), "answered by a hook".to_owned(), false)]
    );
}

// ---------------------------------------------------------------------------------------------
// 2. Interrupts on the tool path
// ---------------------------------------------------------------------------------------------

/// A tool that needs a confirmation: called, it interrupts with its arguments as the payload;
/// called again with the answer (the resume), it finishes with `<text> -> <answer>`. Counts
/// both.
#[derive(Clone, Default)]
struct Confirm {
    calls: Arc<AtomicUsize>,
    resumes: Arc<AtomicUsize>,
}

impl Tool for Confirm {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            "confirm",
            "Does something once the user confirms.",
            json!({ "type": "object", "properties": { "text": { "type": "string" } } }),
        )
    }

    async fn call(&self, cx: ToolContext<'_>, arguments: Value) -> Result<Content, ToolError> {
        let Some(answer) = cx.resume_value() else {
            self.calls.fetch_add(1, Ordering::SeqCst);
            return Err(ToolError::Interrupt {
                payload: json!({ "confirm": arguments }),
            });
        };
        self.resumes.fetch_add(1, Ordering::SeqCst);
        Ok(format!(
            "{} -> {}",
            arguments["text"].as_str().unwrap_or("?"),
            answer.as_str().unwrap_or("?")
        )
        .into())
    }
}

/// A call of the `confirm` tool.
fn confirm_call(id: &str, text: &str) -> ToolCall {
    ToolCall::new(id, "confirm", json!({ "text": text }))
}

/// A call of the `count` tool.
fn count_call(id: &str) -> ToolCall {
    ToolCall::new(id, "count", json!({ "text": "x" }))
}

/// Asks before every call of `count`: resumed with `"allow"` it runs the call, with anything
/// else it refuses it. Other calls pass through.
#[hook(wrap_tool_call)]
async fn gate(
    cx: ToolContext<'_>,
    call: ToolCall,
    mut next: impl ToolNext,
) -> Result<ToolResult, Error> {
    if call.name != "count" {
        return Ok(next.call(cx, call).await);
    }
    match cx.resume_value() {
        None => Err(Error::interrupt(json!({ "allow": call.name }))),
        Some(answer) if answer.as_str() == Some("allow") => Ok(next.call(cx, call).await),
        Some(answer) => Ok(ToolResult::error(&call.id, format!("refused: {answer}"))),
    }
}

/// "From a tool, return `Err(ToolError::Interrupt { payload })`; … several at once": two tools
/// interrupting in one step give two interrupts (ids by tool call), the step's completed call is
/// kept and never runs again, each interrupted call is finished by the tool, called again with its
/// own answer in its context, and every tool call ends with exactly one result, in call order.
#[tokio::test]
async fn tools_interrupt_together_and_completed_calls_never_run_again() {
    let log = new_log();
    let runs = Arc::new(AtomicUsize::new(0));
    let confirm = Confirm::default();
    let script = calls_then_text(
        [vec![
            count_call("c1"),
            confirm_call("c2", "first"),
            confirm_call("c3", "second"),
        ]],
        "done",
    );
    let agent = Agent::builder(logged_model(&log, script))
        .tool(counting_tool("count", &runs))
        .tool(confirm.clone())
        .build()
        .unwrap();
    let output = agent.run("hi").await.unwrap();

    let checkpoint = paused(&output);
    assert_eq!(ids(&output), ["0/1:tool:c2", "0/1:tool:c3"]);
    for (interrupt, (call_id, text)) in output
        .interrupts()
        .iter()
        .zip([("c2", "first"), ("c3", "second")])
    {
        assert_eq!(interrupt.source, "confirm");
        assert_eq!(interrupt.hook, None);
        assert_eq!(interrupt.step, 1);
        assert_eq!(interrupt.tool_call_id.as_deref(), Some(call_id));
        assert_eq!(interrupt.payload, json!({ "confirm": { "text": text } }));
    }
    match checkpoint.position() {
        Position::Tools { calls, results, .. } => {
            assert_eq!(calls.len(), 3);
            assert_eq!(results[0], Some(ToolResult::ok("c1", "ran")));
            assert_eq!(results[1..], [None, None]);
        }
        other => panic!("expected a pause in the tools, got {other:?}"),
    }
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    assert_eq!(confirm.calls.load(Ordering::SeqCst), 2);

    let answers = [
        (InterruptId::new("0/1:tool:c3"), json!("no")),
        (InterruptId::new("0/1:tool:c2"), json!("yes")),
    ];
    let output = agent.resume(checkpoint, answers).await.unwrap();

    assert_eq!(output.end, EndReason::Finished);
    assert_eq!(output.text().as_deref(), Some("done"));
    assert_eq!(runs.load(Ordering::SeqCst), 1, "a completed call ran again");
    assert_eq!(confirm.calls.load(Ordering::SeqCst), 2);
    assert_eq!(confirm.resumes.load(Ordering::SeqCst), 2);
    assert_no_dangling(&output.messages);
    assert_eq!(
        tool_results(&output.messages),
        [
            ("c1".to_owned(), "ran".to_owned(), false),
            ("c2".to_owned(), "first -> yes".to_owned(), false),
            ("c3".to_owned(), "second -> no".to_owned(), false),
        ]
    );
    assert_eq!(output.tool_calls, 3);
    assert_eq!(agent.model().calls(), 2);
}

/// "From `wrap_tool_call`, return `Err(Error::interrupt(payload))`": the interrupt names the
/// middleware and the hook; in the same step a tool's own interrupt passes through that wrap
/// unchanged. On resume the wrap reads its answer with `Context::tool_resume_value` (and lets
/// the call run), the tool is finished, called again with its answer, and the step's
/// completed call does not run again.
#[tokio::test]
async fn wrap_tool_call_and_tool_interrupt_in_one_step() {
    let log = new_log();
    let runs = Arc::new(AtomicUsize::new(0));
    let confirm = Confirm::default();
    let script = calls_then_text(
        [vec![
            count_call("c1"),
            echo_call("c2", "x"),
            confirm_call("c3", "third"),
        ]],
        "done",
    );
    let agent = Agent::builder(logged_model(&log, script))
        .tool(counting_tool("count", &runs))
        .tool(echo_tool(&log))
        .tool(confirm.clone())
        .chain(chain![gate])
        .build()
        .unwrap();
    let output = agent.run("hi").await.unwrap();

    let checkpoint = paused(&output);
    let interrupts = output.interrupts();
    assert_eq!(
        ids(&output),
        ["0/1:wrap_tool_call:0:gate:c1", "0/1:tool:c3"]
    );
    assert_eq!(interrupts[0].source, "gate");
    assert_eq!(interrupts[0].hook, Some(Hook::WrapToolCall));
    assert_eq!(interrupts[0].payload, json!({ "allow": "count" }));
    assert_eq!(interrupts[1].source, "confirm");
    assert_eq!(interrupts[1].hook, None);
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    assert_eq!(events(&log), ["model", "tool:echo"]);

    let answers = [
        (
            InterruptId::new("0/1:wrap_tool_call:0:gate:c1"),
            json!("allow"),
        ),
        (InterruptId::new("0/1:tool:c3"), json!("sure")),
    ];
    let output = agent.resume(checkpoint, answers).await.unwrap();

    assert_eq!(output.text().as_deref(), Some("done"));
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    assert_eq!(confirm.resumes.load(Ordering::SeqCst), 1);
    assert_eq!(events(&log), ["model", "tool:echo", "model"]);
    assert_no_dangling(&output.messages);
    assert_eq!(
        tool_results(&output.messages),
        [
            ("c1".to_owned(), "ran".to_owned(), false),
            ("c2".to_owned(), "x".to_owned(), false),
            ("c3".to_owned(), "third -> sure".to_owned(), false),
        ]
    );
}

/// A `wrap_tool_call` that answers its interrupt by refusing the call: the tool never runs and
/// the model reads the wrap's result.
#[tokio::test]
async fn wrap_tool_call_can_refuse_a_call_on_resume() {
    let runs = Arc::new(AtomicUsize::new(0));
    let script = calls_then_text([vec![count_call("c1")]], "done");
    let agent = Agent::builder(ScriptedModel::new(script))
        .tool(counting_tool("count", &runs))
        .chain(chain![gate])
        .build()
        .unwrap();
    let output = agent.run("hi").await.unwrap();
    let checkpoint = paused(&output);
    let answers = answer(&output, json!("deny"));
    let output = agent.resume(checkpoint, answers).await.unwrap();

    assert_eq!(runs.load(Ordering::SeqCst), 0);
    assert_no_dangling(&output.messages);
    assert_eq!(
        tool_results(&output.messages),
        [("c1".to_owned(), "refused: \"deny\"".to_owned(), true)]
    );
}

/// The gate of [`gate`], written by hand: `Err(Error::interrupt(..))` from a hand-written
/// `wrap_tool_call`, or (`named`) the same interrupt named with `Error::middleware`, as the
/// trait docs advise for errors raised in wrap hooks.
struct HandGate {
    named: bool,
}

impl Middleware for HandGate {
    type State = ();
    type ThreadState = ();
    type StreamState = ();
    type Phase = phase::Wrap;
    type WrapsModel = False;
    type WrapsTool = True;
    const NAME: &'static str = "HandGate";
    const HOOKS: HookSet = HookSet::of(Hook::WrapToolCall);

    async fn wrap_tool_call<N: ToolNext>(
        &self,
        cx: ToolContext<'_>,
        _state: &(),
        _thread: &(),
        call: ToolCall,
        mut next: N,
    ) -> Result<ToolResult, Error> {
        match cx.resume_value() {
            None if self.named => Err(Error::middleware(
                Self::NAME,
                Hook::WrapToolCall,
                Error::interrupt(json!({ "allow": call.name })),
            )),
            None => Err(Error::interrupt(json!({ "allow": call.name }))),
            Some(_) => Ok(next.call(cx, call).await),
        }
    }
}

/// Runs a `count` call through a [`HandGate`], answers its pause with `"allow"`, and returns
/// the interrupt, the resumed run, and how often `count` ran.
async fn through_hand_gate(named: bool) -> (hookchain::Interrupt, RunOutput, usize) {
    let runs = Arc::new(AtomicUsize::new(0));
    let script = calls_then_text([vec![count_call("c1")]], "done");
    let agent = Agent::builder(ScriptedModel::new(script))
        .tool(counting_tool("count", &runs))
        .chain(HandGate { named })
        .build()
        .unwrap();
    let output = agent.run("hi").await.unwrap();
    let checkpoint = paused(&output);
    let interrupt = output.interrupts()[0].clone();
    let answers = answer(&output, json!("allow"));
    let output = agent.resume(checkpoint, answers).await.unwrap();
    (interrupt, output, runs.load(Ordering::SeqCst))
}

/// A hand-written `wrap_tool_call` that names its interrupt with `Error::middleware` (as the
/// trait docs advise for wrap hooks) pauses as a macro-written one does: the interrupt names
/// the middleware and the hook, and on resume the wrap reads its answer.
#[tokio::test]
async fn hand_written_wrap_tool_call_interrupt_named_with_error_middleware() {
    let (interrupt, output, runs) = through_hand_gate(true).await;
    assert_eq!(interrupt.source, "HandGate");
    assert_eq!(interrupt.hook, Some(Hook::WrapToolCall));
    assert_eq!(
        output.end,
        EndReason::Finished,
        "{:#?}",
        output.interrupts()
    );
    assert_eq!(runs, 1);
    assert_no_dangling(&output.messages);
}

/// A hand-written `wrap_tool_call` that raises an unnamed `Error::interrupt` still gets the
/// answer on resume (not the tool): the interrupt is recorded as that hook's, named after its
/// middleware by the layer that called it.
#[tokio::test]
async fn hand_written_wrap_tool_call_interrupt_reaches_the_wrap_on_resume() {
    let (interrupt, output, runs) = through_hand_gate(false).await;
    assert_eq!(interrupt.source, "HandGate");
    assert_eq!(interrupt.member, Some(0));
    assert_eq!(interrupt.hook, Some(Hook::WrapToolCall));
    assert_eq!(
        output.end,
        EndReason::Finished,
        "{:#?}",
        output.interrupts()
    );
    assert_eq!(runs, 1);
}

// ---------------------------------------------------------------------------------------------
// 3. Checkpoints as JSON
// ---------------------------------------------------------------------------------------------

/// An agent whose step 1 completes a `count` call and pauses on two `confirm` calls.
fn confirming_agent(runs: &Arc<AtomicUsize>) -> Agent<ScriptedModel, (Tally, (Tally,))> {
    let log = new_log();
    let script = calls_then_text(
        [vec![
            count_call("c1"),
            confirm_call("c2", "a"),
            confirm_call("c3", "b"),
        ]],
        "done",
    );
    Agent::builder(ScriptedModel::new(script))
        .tool(counting_tool("count", runs))
        .tool(Confirm::default())
        .chain((Tally::new("a", &log), (Tally::new("b", &log),)))
        .build()
        .unwrap()
}

/// "Checkpoint (serde, JSON)": `to_json` then `from_json` gives the same checkpoint, and a run
/// resumes from the parsed one (the completed call still does not run again).
#[tokio::test]
async fn checkpoint_round_trips_through_json_and_resumes() {
    let runs = Arc::new(AtomicUsize::new(0));
    let agent = confirming_agent(&runs);
    let output = agent.run("hi").await.unwrap();
    let checkpoint = paused(&output);

    let json = checkpoint.to_json().unwrap();
    let parsed = Checkpoint::from_json(&json).unwrap();
    assert_eq!(parsed, checkpoint);
    assert_eq!(parsed.to_json().unwrap(), json);
    let fields: Value = serde_json::from_str(&json).unwrap();
    for field in [
        "format",
        "id",
        "run_id",
        "chain",
        "messages",
        "state",
        "thread_state",
        "position",
        "interrupts",
    ] {
        assert!(fields.get(field).is_some(), "no `{field}` in {json}");
    }
    // The chain's state is in the checkpoint: each `Tally` ran `before_model` once.
    assert_eq!(fields["thread_state"][0]["before_model"], json!(1));
    assert_eq!(fields["thread_state"][1][0]["after_model"], json!(1));

    let answers: Vec<_> = parsed
        .pending()
        .map(|id| (id.clone(), json!("ok")))
        .collect();
    let output = agent.resume(parsed, answers).await.unwrap();
    assert_eq!(output.end, EndReason::Finished);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    assert_no_dangling(&output.messages);
}

// ---------------------------------------------------------------------------------------------
// 4. Refusals
// ---------------------------------------------------------------------------------------------

/// A checkpoint resumes on a chain that changed since (see `checkpoint_format.rs` for every
/// rule): without a member, or with its members in another order, the interrupted hook still
/// gets its answer.
#[tokio::test]
async fn checkpoint_resumes_on_a_changed_chain() {
    let log = new_log();
    let agent = Agent::builder(logged_model(&log, []))
        .chain(chain![Tally::new("a", &log), ask_before])
        .build()
        .unwrap();
    let output = agent.run("hi").await.unwrap();
    let checkpoint = paused(&output);
    assert_eq!(checkpoint.chain().len(), 2);

    let without = Agent::builder(logged_model(&log, [ModelResponse::text("done")]))
        .chain(chain![ask_before])
        .build()
        .unwrap();
    let done = without
        .resume(checkpoint.clone(), answer(&output, json!("yes")))
        .await
        .unwrap();
    assert_eq!(done.end, EndReason::Finished);

    let reordered = Agent::builder(logged_model(&log, [ModelResponse::text("done")]))
        .chain(chain![ask_before, Tally::new("a", &log)])
        .build()
        .unwrap();
    let done = reordered
        .resume(checkpoint, answer(&output, json!("yes")))
        .await
        .unwrap();
    assert_eq!(done.end, EndReason::Finished);
}

/// "A response to an unknown … interrupt id is refused": `UnknownInterrupt` names the id and
/// the pending ones.
#[tokio::test]
async fn answer_to_an_unknown_interrupt_is_refused() {
    let agent = Agent::builder(ScriptedModel::new([]))
        .chain(chain![ask_before])
        .build()
        .unwrap();
    let output = agent.run("hi").await.unwrap();
    let checkpoint = paused(&output);
    let mut answers = answer(&output, json!("yes"));
    answers.push((InterruptId::new("0/1:before_model:7:nobody"), json!("hm")));

    let error = resume_error(agent.resume(checkpoint, answers).await);
    match &error {
        ResumeError::UnknownInterrupt { id, pending } => {
            assert_eq!(id.as_str(), "0/1:before_model:7:nobody");
            assert_eq!(
                pending,
                &[InterruptId::new("0/1:before_model:0:ask_before")]
            );
        }
        other => panic!("expected UnknownInterrupt, got {other:?}"),
    }
    let message = error.to_string();
    assert!(message.contains("0/1:before_model:7:nobody"), "{message}");
    assert!(
        message.contains("0/1:before_model:0:ask_before"),
        "{message}"
    );
}

/// "A response to a … stale interrupt id is refused": after a resume that pauses again (in a
/// later step), the id of the earlier pause is `UnknownInterrupt` for the new checkpoint.
#[tokio::test]
async fn answer_to_a_stale_interrupt_is_refused() {
    let script = calls_then_text([vec![echo_call("e1", "x")]], "done");
    let log = new_log();
    let agent = Agent::builder(ScriptedModel::new(script))
        .tool(echo_tool(&log))
        .chain(chain![ask_before])
        .build()
        .unwrap();
    let first = agent.run("hi").await.unwrap();
    let stale = answer(&first, json!("yes"));
    let second = agent.resume(paused(&first), stale.clone()).await.unwrap();
    assert_eq!(ids(&second), ["1/2:before_model:0:ask_before"]);

    let error = resume_error(agent.resume(paused(&second), stale).await);
    assert!(
        matches!(&error, ResumeError::UnknownInterrupt { id, .. } if id.as_str() == "0/1:before_model:0:ask_before"),
        "{error:?}"
    );
    // The fresh id works.
    let output = agent
        .resume(paused(&second), answer(&second, json!("yes")))
        .await
        .unwrap();
    assert_eq!(output.text().as_deref(), Some("done"));
}

/// Asks until it gets `"yes"`: a hook that pauses again, in the same step, when its answer
/// does not suit it.
#[hook(before_model)]
fn ask_until_yes(cx: &mut Context) -> Flow {
    match cx.resume_value().and_then(Value::as_str) {
        Some("yes") => Flow::Continue,
        Some(_) => Flow::interrupt(json!({ "question": "really?" })),
        None => Flow::interrupt(json!({ "question": "ok?" })),
    }
}

/// A stale answer is refused also when the same hook pauses again in the same step (it asks
/// again after an answer it cannot use): the answer meant for the first pause must not be
/// taken for the second.
#[tokio::test]
async fn answer_to_a_stale_interrupt_of_the_same_step_is_refused() {
    let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("done")]))
        .chain(chain![ask_until_yes])
        .build()
        .unwrap();
    let first = agent.run("hi").await.unwrap();
    let stale = answer(&first, json!("maybe"));
    let second = agent.resume(paused(&first), stale.clone()).await.unwrap();
    assert_eq!(
        second.interrupts()[0].payload,
        json!({ "question": "really?" })
    );

    let error = resume_error(agent.resume(paused(&second), stale).await);
    assert!(
        matches!(error, ResumeError::UnknownInterrupt { .. }),
        "{error:?}"
    );
}

/// Pauses in `before_agent`, where a run cannot pause.
#[hook(before_agent)]
fn ask_at_start() -> Flow {
    Flow::interrupt(json!({ "question": "start?" }))
}

/// "Interrupts come from `before_model`, `after_model`, `wrap_tool_call` and tools": an
/// interrupt from `before_agent` fails the run with `Error::Interrupted`, whose message names
/// the middleware and says where interrupts may come from.
#[tokio::test]
async fn interrupt_where_the_run_cannot_pause_is_an_error() {
    let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("done")]))
        .chain(chain![ask_at_start])
        .build()
        .unwrap();
    let error = agent.run("hi").await.unwrap_err();
    assert!(matches!(error, Error::Interrupted(_)), "{error:?}");
    let message = error.to_string();
    assert!(message.contains("ask_at_start"), "{message}");
    assert!(message.contains("in `before_agent`"), "{message}");
    assert!(message.contains("before_model"), "{message}");
    assert_eq!(agent.model().calls(), 0);
}

/// `Err(Error::interrupt(..))` from a sequential hook, where `Ok(Flow::interrupt(..))` was meant.
#[hook(before_model)]
fn ask_as_error() -> Result<Flow, Error> {
    Err(Error::interrupt(json!({ "question": "go on?" })))
}

/// The same mistake in `after_model`.
#[hook(after_model)]
fn ask_as_error_after() -> Result<Flow, Error> {
    Err(Error::interrupt(json!({ "question": "keep it?" })))
}

/// The same mistake in `before_agent`, where the run cannot pause at all.
#[hook(before_agent)]
fn ask_as_error_at_start() -> Result<Flow, Error> {
    Err(Error::interrupt(json!({ "question": "start?" })))
}

/// The same mistake in `wrap_model_call`, where the run cannot pause at all.
#[hook(wrap_model_call)]
async fn ask_around_the_model(_request: ModelRequest) -> Result<ModelResponse, Error> {
    Err(Error::interrupt(json!({ "question": "call it?" })))
}

/// "From `before_model` and `after_model`, return `Ok(Flow::interrupt(payload))`; from
/// `wrap_tool_call`, `Err(Error::interrupt(payload))`": a sequential hook that returns
/// `Err(Error::interrupt(..))` fails the run (it does not pause), with a message that names
/// the hook and the fix; from `before_agent` or `wrap_model_call`, where the run cannot pause,
/// the message says which hooks can, and how each raises one.
#[tokio::test]
async fn an_interrupt_returned_as_an_error_names_the_fix() {
    let before = Agent::builder(ScriptedModel::new([ModelResponse::text("done")]))
        .chain(chain![ask_as_error])
        .build()
        .unwrap();
    let after = Agent::builder(ScriptedModel::new([ModelResponse::text("done")]))
        .chain(chain![ask_as_error_after])
        .build()
        .unwrap();
    for (hook, error) in [
        ("before_model", before.run("hi").await.unwrap_err()),
        ("after_model", after.run("hi").await.unwrap_err()),
    ] {
        assert!(matches!(error, Error::Interrupted(_)), "{error:?}");
        let report = Report(&error).to_string();
        assert!(report.contains(&format!("from `{hook}`")), "{report}");
        assert!(
            report.contains(&format!(
                "a `{hook}` hook pauses the run by returning `Ok(Flow::interrupt(payload))`"
            )),
            "{report}"
        );
        assert!(
            report.contains("`Err(Error::interrupt(..))` is for `wrap_tool_call` hooks"),
            "{report}"
        );
    }
    assert_eq!(before.model().calls(), 0);

    let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("done")]))
        .chain(chain![ask_as_error_at_start])
        .build()
        .unwrap();
    let error = agent.run("hi").await.unwrap_err();
    let report = Report(&error).to_string();
    assert_eq!(
        report,
        "middleware `ask_as_error_at_start` returned `Err(Error::interrupt(..))` from \
         `before_agent`, where the run cannot pause: interrupts come from `before_model` and \
         `after_model` (which return `Ok(Flow::interrupt(payload))`), `wrap_tool_call` (which \
         returns `Err(Error::interrupt(payload))`) and tools"
    );
    assert_eq!(agent.model().calls(), 0);

    let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("done")]))
        .chain(chain![ask_around_the_model])
        .build()
        .unwrap();
    let report = Report(&agent.run("hi").await.unwrap_err()).to_string();
    assert!(
        report.starts_with(
            "middleware `ask_around_the_model` returned `Err(Error::interrupt(..))` from \
             `wrap_model_call`, where the run cannot pause: interrupts come from"
        ),
        "{report}"
    );
}

/// A pending interrupt without an answer is refused with `MissingAnswer`, also when only some
/// of several interrupts are answered.
#[tokio::test]
async fn missing_answer_is_refused() {
    let runs = Arc::new(AtomicUsize::new(0));
    let agent = confirming_agent(&runs);
    let output = agent.run("hi").await.unwrap();
    let checkpoint = paused(&output);

    let error = resume_error(agent.resume(checkpoint.clone(), []).await);
    assert!(
        matches!(&error, ResumeError::MissingAnswer { id } if id.as_str() == "0/1:tool:c2"),
        "{error:?}"
    );
    let error = resume_error(
        agent
            .resume(checkpoint, [(InterruptId::new("0/1:tool:c2"), json!("ok"))])
            .await,
    );
    assert!(
        matches!(&error, ResumeError::MissingAnswer { id } if id.as_str() == "0/1:tool:c3"),
        "{error:?}"
    );
    assert!(error.to_string().contains("0/1:tool:c3"), "{error}");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

/// A checkpoint with no pending interrupt is a step checkpoint (a run in progress): it resumes
/// with no answers; the completed call does not run again, the others run (and ask again).
#[tokio::test]
async fn checkpoint_without_pending_interrupts_resumes_as_a_step() {
    let runs = Arc::new(AtomicUsize::new(0));
    let agent = confirming_agent(&runs);
    let output = agent.run("hi").await.unwrap();
    let mut json: Value = serde_json::from_str(&paused(&output).to_json().unwrap()).unwrap();
    json["interrupts"] = json!([]);
    let checkpoint = Checkpoint::from_json(&json.to_string()).unwrap();
    assert!(!checkpoint.is_pause());
    let again = agent.resume(checkpoint, []).await.unwrap();
    assert_eq!(again.end, EndReason::Interrupted);
    assert_eq!(again.interrupts().len(), 2);
    assert_eq!(
        runs.load(Ordering::SeqCst),
        1,
        "the completed call ran again"
    );
}

/// "Corrupt or truncated checkpoint JSON gives a clear error": `CheckpointError::Decode`, whose
/// message says the text is not a valid checkpoint and where parsing failed.
#[tokio::test]
async fn corrupt_or_truncated_checkpoint_json_is_a_decode_error() {
    let runs = Arc::new(AtomicUsize::new(0));
    let output = confirming_agent(&runs).run("hi").await.unwrap();
    let json = paused(&output).to_json().unwrap();

    let truncated = &json[..json.len() / 2];
    let corrupt = json.replacen("\"messages\"", "\"messages\" oops", 1);
    let not_a_checkpoint = r#"{ "hello": "world" }"#;
    for (what, text) in [
        ("truncated", truncated),
        ("corrupt", corrupt.as_str()),
        ("not a checkpoint", not_a_checkpoint),
        ("empty", ""),
    ] {
        match Checkpoint::from_json(text) {
            Err(error @ CheckpointError::Decode(_)) => {
                let message = Report(&error).to_string();
                assert!(
                    message.contains("not a valid checkpoint"),
                    "{what}: {message}"
                );
                // Where the text breaks, for text that is not JSON; a JSON value that is no
                // checkpoint says so.
                if what == "not a checkpoint" {
                    assert!(message.contains("no format number"), "{what}: {message}");
                } else {
                    assert!(message.contains("line"), "{what}: no position in {message}");
                }
            }
            other => panic!("{what}: expected CheckpointError::Decode, got {other:?}"),
        }
    }
}

/// A checkpoint written in another format version is refused with `CheckpointError::Format`,
/// naming both versions.
#[tokio::test]
async fn checkpoint_of_another_format_is_refused() {
    let runs = Arc::new(AtomicUsize::new(0));
    let output = confirming_agent(&runs).run("hi").await.unwrap();
    let mut json: Value = serde_json::from_str(&paused(&output).to_json().unwrap()).unwrap();
    let supported = json["format"].as_u64().unwrap() as u32;
    json["format"] = json!(99);

    let error = Checkpoint::from_json(&json.to_string()).unwrap_err();
    match &error {
        CheckpointError::Format {
            found,
            supported: reads,
        } => {
            assert_eq!(*found, 99);
            assert_eq!(*reads, supported);
        }
        other => panic!("expected CheckpointError::Format, got {other:?}"),
    }
    let message = error.to_string();
    assert!(
        message.contains("99") && message.contains(&supported.to_string()),
        "{message}"
    );
}

/// Every way in checks the format, not only `from_json`: serde itself refuses it (a checkpoint
/// read from a database row or a message queue), so it can never reach `resume`.
#[tokio::test]
async fn checkpoint_of_another_format_does_not_deserialize_at_all() {
    let runs = Arc::new(AtomicUsize::new(0));
    let output = confirming_agent(&runs).run("hi").await.unwrap();
    let mut json: Value = serde_json::from_str(&paused(&output).to_json().unwrap()).unwrap();
    json["format"] = json!(999);
    let error = serde_json::from_value::<Checkpoint>(json.clone()).unwrap_err();
    assert!(
        error.to_string().contains("format 999 is not supported"),
        "{error}"
    );
    let error = serde_json::from_str::<Checkpoint>(&json.to_string()).unwrap_err();
    assert!(error.to_string().contains("format 999"), "{error}");
    // The checkpoint as written still reads back.
    json["format"] = serde_json::to_value(paused(&output)).unwrap()["format"].clone();
    assert!(serde_json::from_value::<Checkpoint>(json).is_ok());
}

// ---------------------------------------------------------------------------------------------
// 6. HumanInTheLoop
// ---------------------------------------------------------------------------------------------

/// What the file tools did, as `<tool>:<path>`.
type Ran = Arc<Mutex<Vec<String>>>;

/// Arguments of the file tools.
#[derive(Debug, Deserialize, JsonSchema)]
struct PathArgs {
    /// The file.
    path: String,
}

/// A fake file tool named `name`: records `<name>:<path>` in `ran` and returns `<name> <path>`.
fn file_tool(name: &'static str, ran: &Ran) -> impl Tool {
    let ran = ran.clone();
    FnTool::new(name, "Works on a file.", move |args: PathArgs| {
        ran.lock().unwrap().push(format!("{name}:{}", args.path));
        async move { Ok::<_, Infallible>(format!("{name} {}", args.path)) }
    })
}

fn delete_call(id: &str, path: &str) -> ToolCall {
    ToolCall::new(id, "delete_file", json!({ "path": path }))
}

fn read_call(id: &str, path: &str) -> ToolCall {
    ToolCall::new(id, "read_file", json!({ "path": path }))
}

/// The usual gate: `delete_file` always needs a decision, `read_file` never does.
fn approval() -> HumanInTheLoop {
    HumanInTheLoop::new()
        .interrupt_on(
            "delete_file",
            ToolPolicy::always().description("Deletes a file for good"),
        )
        .never("read_file")
}

/// An agent with the two file tools and `hitl`, answering with `script`.
fn hitl_agent(
    script: Vec<ModelResponse>,
    hitl: HumanInTheLoop,
    ran: &Ran,
) -> Agent<ScriptedModel, (HumanInTheLoop,)> {
    Agent::builder(ScriptedModel::new(script))
        .tool(file_tool("delete_file", ran))
        .tool(file_tool("read_file", ran))
        .chain(chain![hitl])
        .build()
        .unwrap()
}

/// Resumes the one interrupt of `output` with `decisions`.
async fn decide(
    agent: &Agent<ScriptedModel, (HumanInTheLoop,)>,
    output: &RunOutput,
    decisions: Vec<Decision>,
) -> Result<RunOutput, Error> {
    let response = serde_json::to_value(ApprovalResponse::new(decisions)).unwrap();
    agent.resume(paused(output), answer(output, response)).await
}

/// The approval request of a human-in-the-loop pause.
#[track_caller]
fn approval_request(output: &RunOutput) -> ApprovalRequest {
    assert_eq!(output.interrupts().len(), 1, "{:#?}", output.interrupts());
    serde_json::from_value(output.interrupts()[0].payload.clone()).unwrap()
}

/// The messages of the last request the model received.
fn last_request(model: &ScriptedModel) -> Vec<Message> {
    model
        .requests()
        .pop()
        .expect("the model was called")
        .messages
        .into_inner()
}

/// "Approve": the gated call pauses the run in `after_model` before any tool runs, with an
/// `ApprovalRequest` describing the call and its allowed decisions; approved, it runs as the
/// model made it.
#[tokio::test]
async fn human_in_the_loop_approve_runs_the_call() {
    let ran = Ran::default();
    let script = calls_then_text([vec![delete_call("c1", "a.txt")]], "deleted");
    let agent = hitl_agent(script, approval(), &ran);
    let output = agent.run("clean up").await.unwrap();

    paused(&output);
    let interrupt = &output.interrupts()[0];
    assert_eq!(interrupt.source, "HumanInTheLoop");
    assert_eq!(interrupt.hook, Some(Hook::AfterModel));
    let request = approval_request(&output);
    let [action] = request.actions.as_slice() else {
        panic!("one action: {request:?}")
    };
    assert_eq!(action.call_id, "c1");
    assert_eq!(action.name, "delete_file");
    assert_eq!(action.arguments, json!({ "path": "a.txt" }));
    assert_eq!(
        action.description.as_deref(),
        Some("Deletes a file for good")
    );
    assert_eq!(action.allowed_decisions, DecisionKind::ALL);
    assert!(ran.lock().unwrap().is_empty());

    let output = decide(&agent, &output, vec![Decision::Approve])
        .await
        .unwrap();
    assert_eq!(output.text().as_deref(), Some("deleted"));
    assert_eq!(*ran.lock().unwrap(), ["delete_file:a.txt"]);
    assert_no_dangling(&output.messages);
    assert_eq!(
        tool_results(&output.messages),
        [("c1".to_owned(), "delete_file a.txt".to_owned(), false)]
    );
}

/// "Edit": the call runs with the new arguments, and the history (what the model reads next)
/// shows the edited call.
#[tokio::test]
async fn human_in_the_loop_edit_runs_the_call_with_new_arguments() {
    let ran = Ran::default();
    let script = calls_then_text([vec![delete_call("c1", "a.txt")]], "deleted");
    let agent = hitl_agent(script, approval(), &ran);
    let output = agent.run("clean up").await.unwrap();
    let decision = Decision::Edit {
        arguments: json!({ "path": "b.txt" }),
    };
    let output = decide(&agent, &output, vec![decision]).await.unwrap();

    assert_eq!(*ran.lock().unwrap(), ["delete_file:b.txt"]);
    assert_no_dangling(&output.messages);
    let call = &output.messages[1].tool_calls[0];
    assert_eq!(call.arguments, json!({ "path": "b.txt" }));
    assert_eq!(
        last_request(agent.model())[1].tool_calls[0].arguments,
        json!({ "path": "b.txt" })
    );
}

/// "Reject": the tool does not run; the model reads an error result saying the call was
/// rejected, and why.
#[tokio::test]
async fn human_in_the_loop_reject_gives_the_model_an_error_result() {
    let ran = Ran::default();
    let script = calls_then_text([vec![delete_call("c1", "a.txt")]], "ok, kept it");
    let agent = hitl_agent(script, approval(), &ran);
    let output = agent.run("clean up").await.unwrap();
    let decision = Decision::Reject {
        message: Some("keep that file".to_owned()),
    };
    let output = decide(&agent, &output, vec![decision]).await.unwrap();

    assert!(ran.lock().unwrap().is_empty());
    assert_no_dangling(&output.messages);
    let read = last_request(agent.model()).pop().unwrap();
    assert_eq!(read.role, Role::Tool);
    assert_eq!(read.tool_call_id.as_deref(), Some("c1"));
    assert!(read.is_error);
    assert!(read.text().contains("rejected"), "{}", read.content);
    assert!(read.text().contains("delete_file"), "{}", read.content);
    assert!(read.text().contains("keep that file"), "{}", read.content);
    assert_eq!(output.text().as_deref(), Some("ok, kept it"));
}

/// "Respond": the tool does not run; the model reads the given content as its result.
#[tokio::test]
async fn human_in_the_loop_respond_gives_the_model_the_content() {
    let ran = Ran::default();
    let script = calls_then_text([vec![delete_call("c1", "a.txt")]], "fine");
    let agent = hitl_agent(script, approval(), &ran);
    let output = agent.run("clean up").await.unwrap();
    let decision = Decision::Respond {
        content: "a.txt was already gone".to_owned(),
    };
    let output = decide(&agent, &output, vec![decision]).await.unwrap();

    assert!(ran.lock().unwrap().is_empty());
    assert_no_dangling(&output.messages);
    let read = last_request(agent.model()).pop().unwrap();
    assert_eq!(read.tool_call_id.as_deref(), Some("c1"));
    assert!(!read.is_error);
    assert_eq!(read.content, "a.txt was already gone");
}

/// "All gated calls of one step in one interrupt": two gated calls and an ungated one give ONE
/// interrupt with two actions, in call order; the ungated call runs without a decision, each
/// gated call follows its own decision, and every call gets exactly one result, in call order.
#[tokio::test]
async fn human_in_the_loop_gates_all_calls_of_a_step_in_one_interrupt() {
    let ran = Ran::default();
    let script = calls_then_text(
        [vec![
            delete_call("c1", "a.txt"),
            read_call("c2", "notes.txt"),
            delete_call("c3", "b.txt"),
        ]],
        "done",
    );
    let agent = hitl_agent(script, approval(), &ran);
    let output = agent.run("clean up").await.unwrap();

    let request = approval_request(&output);
    let gated: Vec<&str> = request.actions.iter().map(|a| a.call_id.as_str()).collect();
    assert_eq!(gated, ["c1", "c3"]);

    let decisions = vec![Decision::Approve, Decision::Reject { message: None }];
    let output = decide(&agent, &output, decisions).await.unwrap();
    let mut ran = ran.lock().unwrap().clone();
    ran.sort();
    assert_eq!(ran, ["delete_file:a.txt", "read_file:notes.txt"]);
    assert_no_dangling(&output.messages);
    let results = tool_results(&output.messages);
    let order: Vec<&str> = results.iter().map(|(id, _, _)| id.as_str()).collect();
    assert_eq!(order, ["c1", "c2", "c3"]);
    assert!(!results[0].2 && !results[1].2);
    assert!(results[2].2, "{results:?}");
    assert!(results[2].1.contains("no reason given"), "{results:?}");
}

/// The human-in-the-loop error of an answer `resume` refused before anything ran.
#[track_caller]
fn refused_by_hitl(result: Result<RunOutput, Error>) -> HumanInTheLoopError {
    match resume_error(result) {
        ResumeError::InvalidAnswer { source, .. } => *source
            .downcast::<HumanInTheLoopError>()
            .expect("refused by HumanInTheLoop"),
        other => panic!("expected InvalidAnswer, got {other:?}"),
    }
}

/// "Answers are checked before the run resumes": a decision the tool's policy does not allow is
/// refused by `resume`, naming the tool and the decision, before anything runs (no call, no
/// model call); the checkpoint can still be resumed with an allowed decision.
#[tokio::test]
async fn human_in_the_loop_refuses_a_decision_the_policy_does_not_allow() {
    let ran = Ran::default();
    let script = calls_then_text([vec![delete_call("c1", "a.txt")]], "deleted");
    let policy = ToolPolicy::allowing([DecisionKind::Approve, DecisionKind::Reject]);
    let hitl = HumanInTheLoop::new().interrupt_on("delete_file", policy);
    let agent = hitl_agent(script, hitl, &ran);
    let output = agent.run("clean up").await.unwrap();
    assert_eq!(
        approval_request(&output).actions[0].allowed_decisions,
        [DecisionKind::Approve, DecisionKind::Reject]
    );

    let edit = Decision::Edit {
        arguments: json!({ "path": "b.txt" }),
    };
    let error = refused_by_hitl(decide(&agent, &output, vec![edit]).await);
    assert!(
        matches!(
            &error,
            HumanInTheLoopError::NotAllowed { tool, decision: DecisionKind::Edit }
                if tool == "delete_file"
        ),
        "{error:?}"
    );
    assert!(error.to_string().contains("delete_file"), "{error}");
    assert!(ran.lock().unwrap().is_empty());
    assert_eq!(agent.model().calls(), 1);

    let output = decide(&agent, &output, vec![Decision::Approve])
        .await
        .unwrap();
    assert_eq!(*ran.lock().unwrap(), ["delete_file:a.txt"]);
    assert_no_dangling(&output.messages);
}

/// An answer with more or fewer decisions than the request had actions is refused by `resume`
/// with `DecisionCount`; no call runs.
#[tokio::test]
async fn human_in_the_loop_refuses_the_wrong_number_of_decisions() {
    let ran = Ran::default();
    let script = calls_then_text([vec![delete_call("c1", "a.txt")]], "deleted");
    let agent = hitl_agent(script, approval(), &ran);
    let output = agent.run("clean up").await.unwrap();

    for decisions in [vec![], vec![Decision::Approve, Decision::Approve]] {
        let found = decisions.len();
        let error = refused_by_hitl(decide(&agent, &output, decisions).await);
        assert!(
            matches!(
                error,
                HumanInTheLoopError::DecisionCount { expected: 1, found: f } if f == found
            ),
            "{error:?}"
        );
    }
    assert!(ran.lock().unwrap().is_empty());
}

/// An answer that is not an `ApprovalResponse` is refused by `resume` with an error saying so.
#[tokio::test]
async fn human_in_the_loop_refuses_an_answer_that_is_not_an_approval_response() {
    let ran = Ran::default();
    let script = calls_then_text([vec![delete_call("c1", "a.txt")]], "deleted");
    let agent = hitl_agent(script, approval(), &ran);
    let output = agent.run("clean up").await.unwrap();
    let result = agent
        .resume(paused(&output), answer(&output, json!("yes please")))
        .await;
    let error = refused_by_hitl(result);
    assert!(
        error.to_string().contains("not an approval response"),
        "{error}"
    );
    assert!(ran.lock().unwrap().is_empty());
}

/// Edited arguments that are not an object the tool accepts are refused by `resume`, before
/// anything runs; the typed helpers read the request from the interrupt and build the answer.
#[tokio::test]
async fn human_in_the_loop_refuses_edited_arguments_the_tool_does_not_accept() {
    let ran = Ran::default();
    let script = calls_then_text([vec![delete_call("c1", "a.txt")]], "deleted");
    let agent = hitl_agent(script, approval(), &ran);
    let output = agent.run("clean up").await.unwrap();
    for arguments in [json!("b.txt"), json!({ "file": "b.txt" })] {
        let error =
            refused_by_hitl(decide(&agent, &output, vec![Decision::Edit { arguments }]).await);
        assert!(
            matches!(&error, HumanInTheLoopError::EditedArguments { tool, .. } if tool == "delete_file"),
            "{error:?}"
        );
    }
    assert!(ran.lock().unwrap().is_empty());

    let interrupt = &output.interrupts()[0];
    let request = ApprovalRequest::from_interrupt(interrupt).expect("an approval request");
    assert_eq!(request.actions[0].name, "delete_file");
    let answer = ApprovalResponse::approve_all(&request).answer(interrupt);
    let done = agent.resume(paused(&output), [answer]).await.unwrap();
    assert_eq!(done.text().as_deref(), Some("deleted"));
    assert_eq!(*ran.lock().unwrap(), ["delete_file:a.txt"]);
}

/// `never(tool)` — and any tool not listed — is not gated: its calls run without a pause.
#[tokio::test]
async fn human_in_the_loop_does_not_gate_never_or_unlisted_tools() {
    let ran = Ran::default();
    let script = calls_then_text([vec![read_call("c1", "notes.txt")]], "read it");
    let agent = hitl_agent(script, approval(), &ran);
    let output = agent.run("read").await.unwrap();
    assert_eq!(output.end, EndReason::Finished);
    assert_eq!(*ran.lock().unwrap(), ["read_file:notes.txt"]);

    // `never` after `interrupt_on` for the same tool: not gated.
    let ran = Ran::default();
    let script = calls_then_text([vec![delete_call("c1", "a.txt")]], "deleted");
    let hitl = approval().never("delete_file");
    let output = hitl_agent(script, hitl, &ran).run("go").await.unwrap();
    assert_eq!(output.end, EndReason::Finished);
    assert_eq!(*ran.lock().unwrap(), ["delete_file:a.txt"]);

    // No policy at all: nothing is gated.
    let ran = Ran::default();
    let script = calls_then_text([vec![delete_call("c1", "a.txt")]], "deleted");
    let output = hitl_agent(script, HumanInTheLoop::new(), &ran)
        .run("go")
        .await
        .unwrap();
    assert_eq!(output.end, EndReason::Finished);
    assert_no_dangling(&output.messages);
}

// ---------------------------------------------------------------------------------------------
// 7. AskUser
// ---------------------------------------------------------------------------------------------

/// Runs a model that asks `question` with `ask_user`, answers the pause with `answer`, and
/// returns the result the model read as `(content, is_error)`, or why the resume was refused.
async fn ask(question: Value, answer_with: Value) -> Result<(String, bool), ResumeError> {
    let script = calls_then_text(
        [vec![ToolCall::new("q1", "ask_user", question.clone())]],
        "thanks",
    );
    let agent = Agent::builder(ScriptedModel::new(script))
        .tool(AskUser)
        .build()
        .unwrap();
    let output = agent.run("help me").await.unwrap();

    paused(&output);
    let interrupt = &output.interrupts()[0];
    assert_eq!(interrupt.id.as_str(), "0/1:tool:q1");
    assert_eq!(interrupt.source, "ask_user");
    assert_eq!(interrupt.hook, None);
    let expected: Question = serde_json::from_value(question).unwrap();
    let asked: Question = serde_json::from_value(interrupt.payload.clone()).unwrap();
    assert_eq!(asked, expected);

    let resumed = agent
        .resume(paused(&output), answer(&output, answer_with))
        .await;
    let output = match resumed {
        Ok(output) => output,
        Err(error) => {
            // Refused before anything ran: the model was called once, for the question.
            assert_eq!(agent.model().calls(), 1);
            return Err(resume_error(Err(error)));
        }
    };
    assert_eq!(output.text().as_deref(), Some("thanks"));
    assert_no_dangling(&output.messages);
    let read = last_request(agent.model()).pop().unwrap();
    assert_eq!(read.tool_call_id.as_deref(), Some("q1"));
    Ok((read.text().into_owned(), read.is_error))
}

/// The message of a refused answer, with its cause.
fn refusal(error: ResumeError) -> String {
    assert!(
        matches!(error, ResumeError::InvalidAnswer { .. }),
        "{error:?}"
    );
    Report(&error).to_string()
}

/// `AskUser` with a free-text question: the answer is the tool's result.
#[tokio::test]
async fn ask_user_free_text() {
    let question = json!({ "question": "What is your name?" });
    let (content, is_error) = ask(question.clone(), json!("Ada")).await.unwrap();
    assert_eq!((content.as_str(), is_error), ("Ada", false));
    let parsed: Question = serde_json::from_value(question).unwrap();
    assert_eq!(parsed.answer, AnswerKind::FreeText);
}

/// `AskUser` with `one_of`: an option is the result; an answer that is not an option is
/// refused by `resume` before anything runs ("answers are checked before the run resumes").
#[tokio::test]
async fn ask_user_one_of() {
    let question = json!({
        "question": "Which colour?",
        "answer": { "kind": "one_of", "options": ["red", "blue"] }
    });
    let (content, is_error) = ask(question.clone(), json!("blue")).await.unwrap();
    assert_eq!((content.as_str(), is_error), ("blue", false));

    let refused = refusal(ask(question, json!("green")).await.unwrap_err());
    assert!(
        refused.contains("`green` is not one of the options"),
        "{refused}"
    );
}

/// `AskUser` with `several_of`: a list of options is the result, joined; an empty list is
/// refused by `resume`.
#[tokio::test]
async fn ask_user_several_of() {
    let question = json!({
        "question": "Which days?",
        "answer": { "kind": "several_of", "options": ["mon", "tue", "wed"] }
    });
    let (content, is_error) = ask(question.clone(), json!(["mon", "wed"])).await.unwrap();
    assert_eq!((content.as_str(), is_error), ("mon, wed", false));

    let refused = refusal(ask(question, json!([])).await.unwrap_err());
    assert!(refused.contains("at least one"), "{refused}");
}

// ---------------------------------------------------------------------------------------------
// 8. Threads
// ---------------------------------------------------------------------------------------------

/// "A `Thread` (messages + chain state) carries a conversation across runs": the second run's
/// first request holds the first run's messages, then the new input.
#[tokio::test]
async fn thread_keeps_the_history_across_runs() {
    let agent = Agent::builder(ScriptedModel::new([
        ModelResponse::text("one"),
        ModelResponse::text("two"),
    ]))
    .build()
    .unwrap();
    let mut thread = Thread::new();
    agent.run_in(&mut thread, "first").await.unwrap();
    let output = agent.run_in(&mut thread, "second").await.unwrap();

    let expected = [
        Message::user("first"),
        Message::assistant("one"),
        Message::user("second"),
    ];
    assert_eq!(*agent.model().requests()[1].messages, expected);
    assert_eq!(output.messages.len(), 4);
    assert_eq!(thread.messages(), &output.messages[..]);
    assert_eq!(thread.runs(), 2);
}

/// The thread-scoped count of [`CallLimits`].
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
struct ThreadCalls(u32);

/// Ends a run after `per_run` model calls in the run, or `per_thread` in the thread: the
/// per-run count in the run-scoped state, written the obvious way (no reset by hand).
struct CallLimits {
    per_run: u32,
    per_thread: u32,
}

#[middleware(state = u32, thread_state = ThreadCalls)]
impl CallLimits {
    #[hook(before_model, jumps = [end])]
    fn check(&self, run: &mut u32, thread: &mut ThreadCalls) -> Flow {
        if *run >= self.per_run || thread.0 >= self.per_thread {
            return Flow::end();
        }
        *run += 1;
        thread.0 += 1;
        Flow::Continue
    }
}

/// "Run-scoped state is reset at every run, also inside a thread; thread-scoped state lives as
/// long as the thread": a limit of 2 calls per run and 3 per thread allows 2, then 1, then 0
/// model calls in three runs of one thread (before the fix, a per-run state lived for the
/// whole thread, and the second run was blocked at once).
#[tokio::test]
async fn run_state_resets_every_run_and_thread_state_lives_with_the_thread() {
    let log = new_log();
    let ids = AtomicUsize::new(0);
    let model = ScriptedModel::from_rule(move |_| {
        let id = ids.fetch_add(1, Ordering::SeqCst);
        Ok(ModelResponse::tool_calls([echo_call(
            &format!("e{id}"),
            "x",
        )]))
    });
    let agent = Agent::builder(model)
        .tool(echo_tool(&log))
        .chain(CallLimits {
            per_run: 2,
            per_thread: 3,
        })
        .build()
        .unwrap();
    let mut thread = agent.thread();
    let mut calls = Vec::new();
    for input in ["one", "two", "three"] {
        let output = agent.run_in(&mut thread, input).await.unwrap();
        assert_eq!(output.end, EndReason::Jumped);
        assert_no_dangling(&output.messages);
        calls.push(output.model_calls);
    }
    assert_eq!(calls, [2, 1, 0]);
    assert_eq!(thread.state(), &ThreadCalls(3));
    assert_eq!(thread.runs(), 3);

    // A fresh thread starts from the default state; so does a run outside a thread.
    let output = agent.run_in(&mut agent.thread(), "four").await.unwrap();
    assert_eq!(output.model_calls, 2);
    assert_eq!(agent.run("five").await.unwrap().model_calls, 2);
}

/// Writes `run <run_index>` on the request's system prompt.
#[hook(before_model)]
fn note_run(cx: &mut Context, request: &mut ModelRequest) {
    stamp(
        &mut request.system_prompt,
        &format!("run {}", cx.run_index()),
    );
}

/// "`Context::run_index` counts the thread's earlier runs": 0, 1, 2 in a thread; 0 outside one.
#[tokio::test]
async fn run_index_counts_the_runs_of_a_thread() {
    let model = ScriptedModel::from_rule(|_| Ok(ModelResponse::text("ok")));
    let agent = Agent::builder(model)
        .chain(chain![note_run])
        .build()
        .unwrap();
    let mut thread = Thread::new();
    for input in ["a", "b", "c"] {
        agent.run_in(&mut thread, input).await.unwrap();
    }
    agent.run("outside").await.unwrap();
    let expected = ["run 0", "run 1", "run 2", "run 0"].map(|p| Some(p.to_owned()));
    assert_eq!(prompts(agent.model()), expected);
}

/// A run of a thread that pauses and is resumed with `resume_in` counts as one run: the thread
/// holds the resumed run's history, and the next run's index is 1.
#[tokio::test]
async fn a_paused_and_resumed_run_counts_once_in_its_thread() {
    let model = ScriptedModel::from_rule(|_| Ok(ModelResponse::text("ok")));
    let agent = Agent::builder(model)
        .chain(chain![note_run, ask_before])
        .build()
        .unwrap();
    let mut thread = Thread::new();
    for (earlier, input) in ["a", "b"].into_iter().enumerate() {
        let output = agent.run_in(&mut thread, input).await.unwrap();
        let checkpoint = paused(&output);
        // A paused run is not over: it is not counted yet.
        assert_eq!(thread.runs(), earlier);
        let answers = answer(&output, json!("yes"));
        let output = agent
            .resume_in(&mut thread, checkpoint, answers)
            .await
            .unwrap();
        assert_eq!(output.end, EndReason::Finished);
        assert_eq!(thread.messages(), &output.messages[..]);
    }
    assert_eq!(thread.runs(), 2);
    assert_eq!(
        prompts(agent.model()),
        [
            Some("run 0\nanswer=yes".to_owned()),
            Some("run 1\nanswer=yes".to_owned())
        ]
    );
    assert_eq!(thread.messages().len(), 4);
}

/// Asks in `before_model`; resumed, fails. Its `after_agent` records whether it still saw an
/// answer.
#[derive(Clone, Default)]
struct AskThenFail {
    saw_answer_at_the_end: Arc<Mutex<Option<bool>>>,
}

#[middleware]
impl AskThenFail {
    #[hook(before_model)]
    fn ask(&self, cx: &mut Context) -> Result<Flow, std::io::Error> {
        match cx.resume_value() {
            None => Ok(Flow::interrupt(json!("may I?"))),
            Some(_) => Err(std::io::Error::other("changed my mind")),
        }
    }

    #[hook(after_agent)]
    fn done(&self, cx: &mut Context) {
        *self.saw_answer_at_the_end.lock().unwrap() = Some(cx.resume_value().is_some());
    }
}

/// A hook that fails on the resumed step spends its answer all the same: no hook after it (here
/// `after_agent`) reads it.
#[tokio::test]
async fn an_answer_is_spent_even_when_the_resumed_hook_fails() {
    let hook = AskThenFail::default();
    let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("unused")]))
        .chain(chain![hook.clone()])
        .build()
        .unwrap();
    let output = agent.run("hi").await.unwrap();
    let error = middleware_error(
        agent
            .resume(paused(&output), answer(&output, json!("yes")))
            .await,
    );
    assert_eq!(error.middleware(), Some("AskThenFail"));
    assert_eq!(*hook.saw_answer_at_the_end.lock().unwrap(), Some(false));
}

/// A named instance ([`Middleware::named`]) is its interrupts' source, and in their ids: from
/// `before_model` (the first of two `ask_before`s here) and from `wrap_tool_call`; the run
/// resumes by those ids. An error of its hook names the instance too.
#[tokio::test]
async fn a_named_instance_is_the_source_of_its_interrupts_and_errors() {
    let log = new_log();
    let model = logged_model(&log, [ModelResponse::text("hello")]);
    let agent = Agent::builder(model)
        .chain(chain![
            Tally::new("a", &log),
            ask_before.named("first"),
            ask_before.named("second"),
        ])
        .build()
        .unwrap();
    let output = agent.run("hi").await.unwrap();
    let [interrupt] = output.interrupts() else {
        panic!("{:?}", output.interrupts())
    };
    assert_eq!(interrupt.source, "first");
    assert_eq!(interrupt.id, InterruptId::new("0/1:before_model:1:first"));
    let output = agent
        .resume(paused(&output), answer(&output, json!("yes")))
        .await
        .unwrap();
    assert_eq!(ids(&output), ["1/1:before_model:2:second"]);
    assert_eq!(paused(&output).chain(), ["Tally", "first", "second"]);

    let runs = Arc::new(AtomicUsize::new(0));
    let script = calls_then_text([vec![count_call("c1")]], "done");
    let agent = Agent::builder(logged_model(&log, script))
        .tool(counting_tool("count", &runs))
        .chain(chain![gate.named("count-gate")])
        .build()
        .unwrap();
    let output = agent.run("hi").await.unwrap();
    assert_eq!(output.interrupts()[0].source, "count-gate");
    assert_eq!(ids(&output), ["0/1:wrap_tool_call:0:count-gate:c1"]);
    let output = agent
        .resume(paused(&output), answer(&output, json!("allow")))
        .await
        .unwrap();
    assert_eq!(output.text().as_deref(), Some("done"));
    assert_eq!(runs.load(Ordering::SeqCst), 1);

    let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("unused")]))
        .chain(chain![AskThenFail::default().named("asker")])
        .build()
        .unwrap();
    let output = agent.run("hi").await.unwrap();
    assert_eq!(output.interrupts()[0].source, "asker");
    let error = middleware_error(
        agent
            .resume(paused(&output), answer(&output, json!("yes")))
            .await,
    );
    assert_eq!(error.middleware(), Some("asker"));
}
