//! Interrupts on the tool path: an answer reaches only the layer that asked for it, and no wrap
//! can turn an interrupt into a result the model reads. Each test is named after its rule.

mod support;

use std::sync::{Arc, Mutex};

use hookchain::prelude::*;
use hookchain::tool::AskUser;
use hookchain::{EndReason, RunOutput, chain, hook, middleware};
use serde_json::{Value, json};

use support::{assert_no_dangling, echo_call, echo_tool, new_log};

/// A gate on every tool call: pauses asking `label`'s approval, then lets the call through if
/// its own answer is `"yes"`. Records each answer it read.
#[derive(Clone)]
struct Gate {
    label: &'static str,
    seen: Arc<Mutex<Vec<String>>>,
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
            Some(answer) => {
                self.seen
                    .lock()
                    .unwrap()
                    .push(format!("{}:{answer}", self.label));
                if answer == "yes" {
                    Ok(next.call(cx, call).await)
                } else {
                    Ok(ToolResult::error(
                        &call.id,
                        format!("{} said no", self.label),
                    ))
                }
            }
        }
    }
}

/// The one interrupt of a paused run, and the answer `value` to it.
#[track_caller]
fn one_answer(output: &RunOutput, value: Value) -> Vec<(hookchain::InterruptId, Value)> {
    assert_eq!(output.end, EndReason::Interrupted, "{output:#?}");
    assert_eq!(output.interrupts().len(), 1, "{:#?}", output.interrupts());
    vec![(output.interrupts()[0].id.clone(), value)]
}

/// "An interrupt's answer reaches only the hook that asked": two instances of one gating
/// middleware wrap the same call. The outer one asks first; its approval does not satisfy the
/// inner one, which then asks for itself (before the fix, it read the outer gate's answer and
/// never paused). The ids tell the two instances apart, and the outer gate keeps its own
/// answer across the second pause.
#[tokio::test]
async fn an_answer_reaches_only_the_gate_that_asked() {
    let log = new_log();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let gate = |label| Gate {
        label,
        seen: seen.clone(),
    };
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([echo_call("c1", "hello")]),
        ModelResponse::text("done"),
    ]);
    let agent = Agent::builder(model)
        .tool(echo_tool(&log))
        .chain(chain![gate("outer"), gate("inner")])
        .build()
        .unwrap();

    let first = agent.run("go").await.unwrap();
    let id = first.interrupts()[0].id.as_str().to_owned();
    assert_eq!(id, "0/1:wrap_tool_call:0:Gate:c1");
    assert_eq!(first.interrupts()[0].member, Some(0));
    assert_eq!(first.interrupts()[0].payload, json!({ "gate": "outer" }));

    let checkpoint = first.checkpoint.clone().unwrap();
    let second = agent
        .resume(checkpoint, one_answer(&first, json!("yes")))
        .await
        .unwrap();
    assert_eq!(
        second.end,
        EndReason::Interrupted,
        "the inner gate asks too"
    );
    assert_eq!(
        second.interrupts()[0].id.as_str(),
        "1/1:wrap_tool_call:1:Gate:c1"
    );
    assert_eq!(second.interrupts()[0].payload, json!({ "gate": "inner" }));
    assert!(support::events(&log).is_empty(), "the tool did not run yet");

    let checkpoint = second.checkpoint.clone().unwrap();
    let done = agent
        .resume(checkpoint, one_answer(&second, json!("yes")))
        .await
        .unwrap();
    assert_eq!(done.text().as_deref(), Some("done"));
    assert_eq!(support::events(&log), ["tool:echo"]);
    assert_eq!(
        *seen.lock().unwrap(),
        [r#"outer:"yes""#, r#"outer:"yes""#, r#"inner:"yes""#]
    );
    assert_no_dangling(&done.messages);
}

/// A wrap that turns every failed call into a generic error result the model reads, the way
/// users write one.
#[hook(wrap_tool_call)]
async fn friendly_failures(
    cx: ToolContext<'_>,
    call: ToolCall,
    mut next: impl ToolNext,
) -> Result<ToolResult, Error> {
    let id = call.id.clone();
    let result = next.call(cx, call).await;
    if result.is_error {
        return Ok(ToolResult::error(id, "the tool failed; try something else"));
    }
    Ok(result)
}

/// "An interrupt is never swallowed as an error": around `AskUser`, a wrap that rewrites every
/// failed result cannot turn the question into an error the model reads; the run pauses, and
/// the answer reaches the tool.
#[tokio::test]
async fn a_wrap_that_rewrites_failures_does_not_swallow_an_ask_user_question() {
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([ToolCall::new(
            "q1",
            "ask_user",
            json!({ "question": "Which colour?" }),
        )]),
        ModelResponse::text("thanks"),
    ]);
    let agent = Agent::builder(model)
        .tool(AskUser)
        .chain(chain![friendly_failures])
        .build()
        .unwrap();
    let paused = agent.run("help").await.unwrap();
    assert_eq!(paused.interrupts()[0].source, "ask_user");

    let done = agent
        .resume(
            paused.checkpoint.clone().unwrap(),
            one_answer(&paused, json!("blue")),
        )
        .await
        .unwrap();
    assert_eq!(done.text().as_deref(), Some("thanks"));
    let read = &agent.model().requests()[1].messages[2];
    assert_eq!(
        (read.content.as_text().unwrap(), read.is_error),
        ("blue", false)
    );
}

/// The same around a gated call: the gate inside the rewriting wrap still pauses the run, and
/// its refusal on resume is what the rewriting wrap then sees as a failure.
#[tokio::test]
async fn a_wrap_that_rewrites_failures_does_not_swallow_a_gate() {
    let log = new_log();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([echo_call("c1", "x")]),
        ModelResponse::text("ok"),
    ]);
    let agent = Agent::builder(model)
        .tool(echo_tool(&log))
        .chain(chain![
            friendly_failures,
            Gate {
                label: "gate",
                seen: seen.clone()
            }
        ])
        .build()
        .unwrap();
    let paused = agent.run("go").await.unwrap();
    assert_eq!(paused.end, EndReason::Interrupted);
    assert_eq!(paused.interrupts()[0].member, Some(1));

    let done = agent
        .resume(
            paused.checkpoint.clone().unwrap(),
            one_answer(&paused, json!("no")),
        )
        .await
        .unwrap();
    let read = &agent.model().requests()[1].messages[2];
    assert!(read.is_error);
    assert_eq!(read.content, "the tool failed; try something else");
    assert!(
        support::events(&log).is_empty(),
        "the refused call never ran"
    );
    assert_no_dangling(&done.messages);
}

/// Asks two questions, one per resume, and answers with both: the second resume must read the
/// second answer (the first is spent once the tool asks again).
struct TwoQuestions;

impl hookchain::Tool for TwoQuestions {
    fn spec(&self) -> hookchain::ToolSpec {
        hookchain::ToolSpec::new(
            "two_questions",
            "Asks twice.",
            serde_json::json!({"type": "object"}),
        )
    }

    async fn call(
        &self,
        cx: hookchain::ToolContext<'_>,
        _arguments: serde_json::Value,
    ) -> Result<hookchain::Content, hookchain::ToolError> {
        let asked = cx
            .interrupt_payload()
            .and_then(|payload| payload["first"].as_str());
        match (cx.resume_value(), asked) {
            (None, _) => Err(hookchain::ToolError::Interrupt {
                payload: serde_json::json!({"question": "first?"}),
            }),
            (Some(first), None) => Err(hookchain::ToolError::Interrupt {
                payload: serde_json::json!({"question": "second?", "first": first}),
            }),
            (Some(second), Some(first)) => {
                Ok(format!("{first} then {}", second.as_str().unwrap_or("?")).into())
            }
        }
    }
}

#[tokio::test]
async fn a_tool_that_asks_twice_reads_its_latest_answer_and_the_payload_it_raised() {
    use hookchain::prelude::*;
    let agent = Agent::builder(ScriptedModel::new([
        ModelResponse::tool_calls([ToolCall::new("q1", "two_questions", serde_json::json!({}))]),
        ModelResponse::text("done"),
    ]))
    .tool(TwoQuestions)
    .build()
    .unwrap();
    let first = agent.run("go").await.unwrap();
    let id = first.interrupts()[0].id.clone();
    let second = agent
        .resume(first.checkpoint.unwrap(), [(id, serde_json::json!("red"))])
        .await
        .unwrap();
    assert_eq!(second.interrupts()[0].payload["question"], "second?");
    let id = second.interrupts()[0].id.clone();
    let done = agent
        .resume(
            second.checkpoint.unwrap(),
            [(id, serde_json::json!("blue"))],
        )
        .await
        .unwrap();
    let result = done
        .messages
        .iter()
        .find(|message| message.tool_call_id.as_deref() == Some("q1"))
        .unwrap();
    assert_eq!(result.text(), "red then blue");
}
