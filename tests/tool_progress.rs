//! A tool's progress reports reach a streamed run's consumer while the call goes on, between
//! the call's start and its end, and stay out of the history.

use futures::StreamExt;
use hookchain::prelude::*;
use hookchain::{Tool, ToolError, ToolProgress, ToolSpec};
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
