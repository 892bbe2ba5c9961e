//! `Timeout`, rule by rule (DESIGN §11), on tokio's paused clock.
#![cfg(feature = "tokio")]

use std::time::Duration;

use hookchain::builtin::retry::Jitter;
use hookchain::builtin::{ModelRetry, Timeout};
use hookchain::prelude::*;
use hookchain::tool::ToolFailureKind;
use hookchain::{FnTool, Model, ModelError, ModelErrorKind, Role, Tool, chain};
use serde::Deserialize;
use serde_json::json;
use tokio::time::Instant;

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

/// A model that takes `times[n]` to answer its `n`-th call ("done" after the list).
struct Slow {
    times: Vec<Duration>,
    calls: std::sync::atomic::AtomicUsize,
}

impl Slow {
    fn new(times: impl IntoIterator<Item = Duration>) -> Self {
        Slow {
            times: times.into_iter().collect(),
            calls: Default::default(),
        }
    }

    fn calls(&self) -> usize {
        self.calls.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl Model for Slow {
    async fn invoke(&self, _request: ModelRequest) -> Result<ModelResponse, ModelError> {
        let n = self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        tokio::time::sleep(self.times.get(n).copied().unwrap_or_default()).await;
        Ok(ModelResponse::text(format!("answer {n}")))
    }
}

#[tokio::test(start_paused = true)]
async fn a_model_call_over_its_time_fails_with_a_timeout_error() {
    let agent = Agent::builder(Slow::new([secs(100)]))
        .chain(chain![
            Timeout::builder().model_call(secs(10)).build().unwrap()
        ])
        .build()
        .unwrap();
    let start = Instant::now();
    let error = agent.run("hi").await.unwrap_err();
    assert_eq!(start.elapsed(), secs(10));
    match error {
        Error::Model(error) => {
            assert_eq!(error.kind(), ModelErrorKind::Timeout);
            assert!(error.is_retryable());
            assert_eq!(error.to_string(), "the model call took longer than 10s");
        }
        other => panic!("expected a model error, got {other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn a_model_call_within_its_time_is_untouched() {
    let agent = Agent::builder(Slow::new([secs(9)]))
        .chain(chain![
            Timeout::builder().model_call(secs(10)).build().unwrap()
        ])
        .build()
        .unwrap();
    let output = agent.run("hi").await.unwrap();
    assert_eq!(output.text().as_deref(), Some("answer 0"));
}

#[tokio::test(start_paused = true)]
async fn a_retry_outside_the_timeout_retries_a_timed_out_call() {
    let retry = ModelRetry::builder()
        .jitter(Jitter::None)
        .initial_delay(secs(1))
        .build()
        .unwrap();
    let agent = Agent::builder(Slow::new([secs(100), secs(100), secs(3)]))
        .chain(chain![
            retry,
            Timeout::builder().model_call(secs(10)).build().unwrap()
        ])
        .build()
        .unwrap();
    let start = Instant::now();
    let output = agent.run("hi").await.unwrap();
    assert_eq!(output.text().as_deref(), Some("answer 2"));
    assert_eq!(agent.model().calls(), 3);
    // 10 s, wait 1 s, 10 s, wait 2 s, 3 s: each attempt had its full time.
    assert_eq!(start.elapsed(), secs(26));
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct NoArgs {}

fn sleeping(name: &'static str, time: Duration) -> impl Tool {
    FnTool::new(name, "Sleeps.", move |_: NoArgs| async move {
        tokio::time::sleep(time).await;
        Ok::<_, std::io::Error>("awake")
    })
}

/// The tool results of the run, by call id, with their texts.
fn results(messages: &[Message]) -> Vec<(String, String)> {
    messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| (m.tool_call_id.clone().unwrap(), m.text().into_owned()))
        .collect()
}

#[tokio::test(start_paused = true)]
async fn a_timed_out_tool_gets_an_error_result_and_the_run_goes_on() {
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([
            ToolCall::new("a", "nap", json!({})),
            ToolCall::new("b", "hibernate", json!({})),
        ]),
        ModelResponse::text("done"),
    ]);
    let agent = Agent::builder(model)
        .tool(sleeping("nap", secs(1)))
        .tool(sleeping("hibernate", secs(1000)))
        .chain(chain![
            Timeout::builder().tool_call(secs(5)).build().unwrap()
        ])
        .build()
        .unwrap();
    let start = Instant::now();
    let output = agent.run("hi").await.unwrap();
    assert_eq!(start.elapsed(), secs(5));
    assert_eq!(output.text().as_deref(), Some("done"));
    assert_eq!(
        results(&output.messages),
        [
            ("a".to_owned(), "awake".to_owned()),
            (
                "b".to_owned(),
                "tool `hibernate` timed out after 5s".to_owned()
            ),
        ]
    );
    let failed = output
        .messages
        .iter()
        .find(|m| m.tool_call_id.as_deref() == Some("b"))
        .unwrap();
    assert!(failed.is_error);
}

/// What the wraps see of a timed-out call: a classified failure.
#[tokio::test(start_paused = true)]
async fn a_timed_out_tool_call_is_a_classified_failure() {
    #[hookchain::hook(wrap_tool_call)]
    async fn check(cx: ToolContext<'_>, call: ToolCall, mut next: impl ToolNext) -> ToolResult {
        let result = next.call(cx, call).await;
        let failure = result.failure().expect("a classified failure");
        assert_eq!(failure.kind(), ToolFailureKind::TimedOut);
        assert_eq!(failure.tool(), "hibernate");
        assert_eq!(
            failure.error().to_string(),
            "the tool call did not finish within 5s"
        );
        result
    }
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([ToolCall::new("b", "hibernate", json!({}))]),
        ModelResponse::text("done"),
    ]);
    let agent = Agent::builder(model)
        .tool(sleeping("hibernate", secs(1000)))
        .chain(chain![
            check,
            Timeout::builder().tool_call(secs(5)).build().unwrap()
        ])
        .build()
        .unwrap();
    agent.run("hi").await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_tool_s_own_time_overrides_the_default() {
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([
            ToolCall::new("a", "nap", json!({})),
            ToolCall::new("b", "hibernate", json!({})),
        ]),
        ModelResponse::text("done"),
    ]);
    let timeout = Timeout::builder()
        .tool_call(secs(5))
        .tool("nap", Duration::from_millis(500))
        .tool("hibernate", secs(2000))
        .build()
        .unwrap();
    let agent = Agent::builder(model)
        .tool(sleeping("nap", secs(1)))
        .tool(sleeping("hibernate", secs(1000)))
        .chain(chain![timeout])
        .build()
        .unwrap();
    let output = agent.run("hi").await.unwrap();
    assert_eq!(
        results(&output.messages),
        [
            (
                "a".to_owned(),
                "tool `nap` timed out after 500ms".to_owned()
            ),
            ("b".to_owned(), "awake".to_owned()),
        ]
    );
}

#[test]
fn bad_settings_are_errors_naming_the_field() {
    assert_eq!(
        Timeout::builder().build().unwrap_err().field(),
        "model_call"
    );
    assert_eq!(
        Timeout::builder()
            .model_call(Duration::ZERO)
            .build()
            .unwrap_err()
            .field(),
        "model_call"
    );
    assert_eq!(
        Timeout::builder()
            .tool_call(Duration::ZERO)
            .build()
            .unwrap_err()
            .field(),
        "tool_call"
    );
    assert_eq!(
        Timeout::builder()
            .tool("x", Duration::ZERO)
            .build()
            .unwrap_err()
            .field(),
        "tool"
    );
}
