//! A tool's log lines (`ToolContext::log`) reach the run context's `LogSink`, in order, with
//! the call they came from; without a sink they go to `tracing` only.

use std::sync::{Arc, Mutex};

use hookchain::prelude::*;
use hookchain::{LogLevel, LogSink, RunContext, ToolLog, tool};
use serde_json::json;

/// Says what it does.
#[tool]
async fn chatty(cx: ToolContext<'_>) -> String {
    cx.log(LogLevel::Debug, "looking");
    cx.log(LogLevel::Warning, format!("found {}", 2));
    "done".to_owned()
}

#[tokio::test]
async fn a_tools_log_lines_reach_the_run_contexts_sink_in_order() {
    let agent = Agent::builder(ScriptedModel::new([]))
        .tool(chatty)
        .build()
        .unwrap();
    let seen: Arc<Mutex<Vec<ToolLog>>> = Arc::default();
    let kept = Arc::clone(&seen);
    let run_context =
        RunContext::new().with(LogSink::new(move |line| kept.lock().unwrap().push(line)));
    let result = agent
        .with_context(run_context)
        .call_tool(ToolCall::new("c1", "chatty", json!({})))
        .await
        .unwrap();
    assert_eq!(result.content, "done");
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        [
            ToolLog::new("c1", "chatty", LogLevel::Debug, "looking"),
            ToolLog::new("c1", "chatty", LogLevel::Warning, "found 2"),
        ]
    );
    assert!(LogLevel::Debug < LogLevel::Warning);
    assert_eq!(LogLevel::Warning.to_string(), "warning");

    // No sink: the call runs the same, its lines to `tracing` alone.
    let result = agent
        .call_tool(ToolCall::new("c2", "chatty", json!({})))
        .await
        .unwrap();
    assert_eq!(result.content, "done");
}
