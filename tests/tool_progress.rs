//! A tool's progress reports reach a streamed run's consumer while the call goes on, between
//! the call's start and its end, and stay out of the history.

use futures::StreamExt;
use hookchain::prelude::*;
use std::sync::{Arc, Mutex};

use hookchain::{ProgressSink, RunContext, Tool, ToolError, ToolProgress, ToolSpec};
use serde_json::json;

/// Counts to three, saying so each time, and waits between (so that the consumer can take each
/// report while the call goes on).
struct Count;

impl Tool for Count {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new("count", "Counts to three.", json!({ "type": "object" }))
    }

    async fn call(
        &self,
        cx: ToolContext<'_>,
        _arguments: serde_json::Value,
    ) -> Result<hookchain::Content, ToolError> {
        for step in 1..=3 {
            cx.progress(f64::from(step), Some(3.0), Some(&format!("counted {step}")));
            tokio::task::yield_now().await;
        }
        cx.progress(3.0, None, None);
        Ok("three".into())
    }
}

fn agent() -> Agent<ScriptedModel> {
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([ToolCall::new("c1", "count", json!({}))]),
        ModelResponse::text("Counted."),
    ]);
    Agent::builder(model).tool(Count).build().unwrap()
}

#[tokio::test]
async fn progress_reports_arrive_between_the_calls_start_and_end() {
    let agent = agent();
    let events: Vec<AgentEvent> = agent
        .stream("Count.")
        .map(|event| event.unwrap())
        .collect()
        .await;
    let around: Vec<String> = events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::ToolCallStarted(call) => Some(format!("started {}", call.id)),
            AgentEvent::ToolProgress(report) => Some(format!(
                "{} {} {}/{:?} {:?}",
                report.call_id, report.tool, report.progress, report.total, report.message
            )),
            AgentEvent::ToolCallFinished(result) => Some(format!("finished {}", result.call_id)),
            _ => None,
        })
        .collect();
    assert_eq!(
        around,
        [
            "started c1",
            "c1 count 1/Some(3.0) Some(\"counted 1\")",
            "c1 count 2/Some(3.0) Some(\"counted 2\")",
            "c1 count 3/Some(3.0) Some(\"counted 3\")",
            "c1 count 3/None None",
            "finished c1",
        ]
    );
    // Reports are for the consumer: the history holds the call and its result only.
    let AgentEvent::Output(output) = events.last().unwrap() else {
        panic!("the last event is the output");
    };
    assert_eq!(output.messages.len(), 4);
    assert!(!output.messages.iter().any(|m| m.text().contains("counted")));
}

#[tokio::test]
async fn a_run_that_is_not_streamed_ignores_them() {
    let output = agent().run("Count.").await.unwrap();
    assert_eq!(output.text().as_deref(), Some("Counted."));
}

/// Outside a streamed run — a call made with `call_tool`, as an MCP server serves it — the
/// reports go to the run context's `ProgressSink`, in order; a streamed run's consumer gets
/// them as events and the sink none.
#[tokio::test]
async fn outside_a_streamed_run_they_go_to_the_run_contexts_sink() {
    let seen: Arc<Mutex<Vec<ToolProgress>>> = Arc::default();
    let kept = Arc::clone(&seen);
    let sink = ProgressSink::new(move |report| kept.lock().unwrap().push(report));
    let agent = agent();
    let result = agent
        .with_context(RunContext::new().with(sink.clone()))
        .call_tool(ToolCall::new("c9", "count", json!({})))
        .await
        .unwrap();
    assert_eq!(result.content, "three");
    let reports = std::mem::take(&mut *seen.lock().unwrap());
    let progress: Vec<f64> = reports.iter().map(|report| report.progress).collect();
    assert_eq!(progress, [1.0, 2.0, 3.0, 3.0]);
    assert_eq!(reports[0].call_id, "c9");
    assert_eq!(reports[0].message.as_deref(), Some("counted 1"));

    let mut stream = agent
        .with_context(RunContext::new().with(sink))
        .stream("Count.");
    let mut events = 0;
    while let Some(event) = stream.next().await {
        if matches!(event.unwrap(), AgentEvent::ToolProgress(_)) {
            events += 1;
        }
    }
    assert_eq!(events, 4);
    assert!(
        seen.lock().unwrap().is_empty(),
        "a streamed run's go to its consumer"
    );
}

#[test]
fn the_fraction_done_is_known_with_a_total() {
    assert_eq!(
        ToolProgress::new("c", "t", 1.0, Some(4.0)).fraction(),
        Some(0.25)
    );
    assert_eq!(
        ToolProgress::new("c", "t", 9.0, Some(4.0)).fraction(),
        Some(1.0)
    );
    assert_eq!(ToolProgress::new("c", "t", 1.0, Some(0.0)).fraction(), None);
    assert_eq!(ToolProgress::new("c", "t", 1.0, None).fraction(), None);
}
