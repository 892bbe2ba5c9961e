//! `ToolExecution::Spawned`: each tool call in a tokio task of its own. A tool that blocks its
//! thread no longer stalls the other calls of its step; interrupts, panics and cancellation
//! behave as for calls in the run's task. Each test is named after its rule.

#![cfg(feature = "tokio")]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hookchain::prelude::*;
use hookchain::tool::{ToolExecution, ToolFailureKind};
use hookchain::{Content, EndReason, FnTool, RunContext, Tool, ToolError, ToolSpec};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

/// Arguments of the tools that take none.
#[derive(Debug, Deserialize, JsonSchema)]
struct NoArgs {}

/// A step calling each of `tools` once (ids `c1`, `c2`, …), then a final answer.
fn model(tools: &[&str]) -> ScriptedModel {
    let calls = tools
        .iter()
        .enumerate()
        .map(|(i, tool)| ToolCall::new(format!("c{}", i + 1), *tool, json!({})));
    ScriptedModel::new([
        ModelResponse::tool_calls(calls),
        ModelResponse::text("done"),
    ])
}

/// Spins on its thread (never yielding to the runtime) until `flag` is set; gives up after 10
/// seconds, so that a regression fails the test instead of hanging it.
fn spin_until(flag: &Arc<AtomicBool>, saw_it: &Arc<AtomicBool>) -> impl Tool {
    let (flag, saw_it) = (flag.clone(), saw_it.clone());
    FnTool::new("spin", "Waits for the flag.", move |_: NoArgs| {
        let (flag, saw_it) = (flag.clone(), saw_it.clone());
        async move {
            let deadline = Instant::now() + Duration::from_secs(10);
            while !flag.load(Ordering::SeqCst) && Instant::now() < deadline {
                std::hint::spin_loop();
            }
            saw_it.store(flag.load(Ordering::SeqCst), Ordering::SeqCst);
            Ok::<_, ToolError>("spun")
        }
    })
}

/// Sets `flag`.
fn set(flag: &Arc<AtomicBool>) -> impl Tool {
    let flag = flag.clone();
    FnTool::new("set", "Sets the flag.", move |_: NoArgs| {
        flag.store(true, Ordering::SeqCst);
        async { Ok::<_, ToolError>("set") }
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_that_blocks_its_thread_does_not_stall_the_others() {
    let flag = Arc::new(AtomicBool::new(false));
    let saw_it = Arc::new(AtomicBool::new(false));
    // `spin` is called first and never yields: in the run's task, `set` could not run before
    // it gives up.
    let agent = Agent::builder(model(&["spin", "set"]))
        .tool(spin_until(&flag, &saw_it))
        .tool(set(&flag))
        .tool_execution(ToolExecution::Spawned)
        .build()
        .unwrap();

    let output = tokio::time::timeout(Duration::from_secs(30), agent.run("go"))
        .await
        .expect("the run finishes")
        .unwrap();

    assert_eq!(output.text().as_deref(), Some("done"));
    assert!(output.tool_failures.is_empty(), "{output:#?}");
    assert!(
        saw_it.load(Ordering::SeqCst),
        "`spin` gave up: `set` did not run while it blocked its thread"
    );
}

/// What a tool saw of its context.
type Seen = Arc<Mutex<Vec<String>>>;

/// Who the run is for: a typed value of the run context.
struct Tenant(&'static str);

/// A hand-written tool that pauses the run to ask, then records what it read of its context
/// and answers with the answer it got.
struct Ask {
    seen: Seen,
}

impl Tool for Ask {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new("ask", "Asks a person.", json!({ "type": "object" }))
    }

    async fn call(&self, cx: ToolContext<'_>, _arguments: Value) -> Result<Content, ToolError> {
        let Some(answer) = cx.resume_value() else {
            return Err(ToolError::Interrupt {
                payload: json!("may I?"),
            });
        };
        let tenant = cx.get::<Tenant>().map_or("-", |tenant| tenant.0);
        // The test's own future is not a task: a task id says the tool runs in one of its own.
        let in_task = tokio::task::try_id().is_some();
        self.seen.lock().unwrap().push(format!(
            "{} {} {} {} step {} messages {} answer {answer} in task {in_task}",
            cx.call_id(),
            cx.tool(),
            cx.run_id(),
            tenant,
            cx.step(),
            cx.messages().len(),
        ));
        Ok(format!("answered {answer}").into())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupt_raised_by_a_spawned_tool_pauses_the_run_and_resumes_it() {
    let seen = Seen::default();
    let agent = Agent::builder(model(&["ask"]))
        .tool(Ask { seen: seen.clone() })
        .tool_execution(ToolExecution::Spawned)
        .build()
        .unwrap();
    let context = RunContext::new().with(Tenant("acme"));

    let paused = agent.with_context(context.clone()).run("hi").await.unwrap();

    assert_eq!(paused.end, EndReason::Interrupted, "{paused:#?}");
    let interrupt = &paused.interrupts()[0];
    assert_eq!(interrupt.tool_call_id.as_deref(), Some("c1"));
    assert_eq!(interrupt.payload, json!("may I?"));
    assert!(seen.lock().unwrap().is_empty());

    let checkpoint = paused.checkpoint.clone().unwrap();
    let answers = [(interrupt.id.clone(), json!("yes"))];
    let resumed = agent
        .with_context(context)
        .resume(checkpoint, answers)
        .await
        .unwrap();

    assert_eq!(resumed.end, EndReason::Finished);
    assert_eq!(resumed.text().as_deref(), Some("done"));
    let run_id = resumed_run_id(&paused);
    // The spawned tool read its own answer, the call, the run's ids, counters and history, and
    // the run context.
    assert_eq!(
        *seen.lock().unwrap(),
        [format!(
            "c1 ask {run_id} acme step 1 messages 2 answer \"yes\" in task true"
        )]
    );
}

/// The run id of a paused run: its checkpoint's id is `<run id>:<pause>`.
fn resumed_run_id(paused: &hookchain::RunOutput) -> String {
    let id = paused.checkpoint.as_ref().unwrap().id();
    id.rsplit_once(':').unwrap().0.to_owned()
}

/// A tool that panics.
fn panicking() -> impl Tool {
    FnTool::new("boom", "Panics.", |_: NoArgs| async {
        panic!("the tool broke");
        #[allow(unreachable_code)]
        Ok::<_, ToolError>("never")
    })
}

/// The one tool failure of a run of `boom` with `execution`.
async fn panic_failure(execution: ToolExecution) -> hookchain::tool::ToolFailure {
    let agent = Agent::builder(model(&["boom"]))
        .tool(panicking())
        .tool_execution(execution)
        .build()
        .unwrap();
    let output = agent.run("go").await.unwrap();
    assert_eq!(output.text().as_deref(), Some("done"));
    assert_eq!(output.tool_failures.len(), 1, "{output:#?}");
    output.tool_failures[0].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panic_in_a_spawned_tool_fails_the_call_as_an_inline_panic_does() {
    let spawned = panic_failure(ToolExecution::Spawned).await;
    let inline = panic_failure(ToolExecution::Concurrent).await;

    assert_eq!(spawned.kind(), ToolFailureKind::Panicked);
    assert_eq!(spawned.kind(), inline.kind());
    assert_eq!(spawned.message(), inline.message());
    assert_eq!(spawned.error().to_string(), inline.error().to_string());
    assert!(spawned.error().to_string().contains("the tool broke"));
}

#[tokio::test(start_paused = true)]
async fn dropping_the_run_aborts_its_spawned_tools() {
    let started = Arc::new(AtomicBool::new(false));
    let finished = Arc::new(AtomicBool::new(false));
    let slow = {
        let (started, finished) = (started.clone(), finished.clone());
        FnTool::new("slow", "Takes an hour.", move |_: NoArgs| {
            let (started, finished) = (started.clone(), finished.clone());
            async move {
                started.store(true, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_secs(3600)).await;
                finished.store(true, Ordering::SeqCst);
                Ok::<_, ToolError>("done")
            }
        })
    };
    let agent = Agent::builder(model(&["slow"]))
        .tool(slow)
        .tool_execution(ToolExecution::Spawned)
        .build()
        .unwrap();

    let run = tokio::time::timeout(Duration::from_secs(1), agent.run("go")).await;
    assert!(run.is_err(), "the run should still wait on its tool");
    assert!(started.load(Ordering::SeqCst), "the tool never started");

    // Long past the hour the tool sleeps: had its task survived the run, it would have
    // finished by now.
    tokio::time::sleep(Duration::from_secs(2 * 3600)).await;
    assert!(
        !finished.load(Ordering::SeqCst),
        "the tool's task outlived the run"
    );
    let metrics = tokio::runtime::Handle::current().metrics();
    assert_eq!(metrics.num_alive_tasks(), 0);
}

#[test]
fn outside_a_tokio_runtime_spawned_tools_run_in_the_runs_task() {
    let seen = Seen::default();
    let agent = Agent::builder(model(&["ask"]))
        .tool(Ask { seen: seen.clone() })
        .tool_execution(ToolExecution::Spawned)
        .build()
        .unwrap();

    let paused = futures::executor::block_on(agent.run("hi")).unwrap();
    let answers = [(paused.interrupts()[0].id.clone(), json!("yes"))];
    let checkpoint = paused.checkpoint.unwrap();
    let resumed = futures::executor::block_on(agent.resume(checkpoint, answers)).unwrap();

    assert_eq!(resumed.text().as_deref(), Some("done"));
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1);
    assert!(seen[0].ends_with("in task false"), "{seen:?}");
}
