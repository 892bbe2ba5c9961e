//! A tool call outside a run that waits for its answer (`Agent::call_tool_or_pause`) and goes
//! on from where it asked (`Agent::resume_tool_call`): an approval at the gate, a tool that
//! asks twice, an answer its asker refuses, a call kept as JSON between the two.

use std::sync::Mutex;

use hookchain::builtin::human_in_the_loop::{
    ApprovalResponse, Decision, HumanInTheLoop, ToolPolicy,
};
use hookchain::interrupt::ResumeError;
use hookchain::prelude::*;
use hookchain::{CallOutcome, PausedCall, ToolError, chain, hook, tool};
use serde_json::{Value, json};

/// What the tools did, in order: what a test checks "ran once" against.
static RAN: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn ran() -> Vec<String> {
    RAN.lock().unwrap().clone()
}

/// Charges a card: the side effect an approval gates.
#[tool]
async fn charge(cx: ToolContext<'_>, cents: u64) -> String {
    RAN.lock()
        .unwrap()
        .push(format!("charge {cents} {}", cx.idempotency_key()));
    format!("charged {cents}")
}

/// Asks for a name, then for a confirmation, then greets (a tool that asks twice).
#[tool]
async fn greet(cx: ToolContext<'_>) -> Result<String, ToolError> {
    let Some(answer) = cx.resume_value() else {
        return Err(ToolError::Interrupt {
            payload: json!({ "ask": "name" }),
        });
    };
    if let Some(name) = answer.get("name").and_then(Value::as_str) {
        return Err(ToolError::Interrupt {
            payload: json!({ "ask": "confirm", "name": name }),
        });
    }
    // The second answer: the name is in what was asked, as the call kept it.
    let asked = cx.interrupt_payload().cloned().unwrap_or_default();
    RAN.lock()
        .unwrap()
        .push(format!("greet {} {}", asked["name"], cx.idempotency_key()));
    Ok(format!("hello {}", asked["name"].as_str().unwrap_or("?")))
}

/// Rounds every amount up to a whole euro before the gate sees it (an edit the resume keeps).
#[hook(after_model)]
fn round_up(response: &mut ModelResponse) -> Flow {
    for call in &mut response.message.tool_calls {
        if let Some(cents) = call.arguments["cents"].as_u64() {
            call.arguments["cents"] = json!(cents.div_ceil(100) * 100);
        }
    }
    Flow::Continue
}

fn approve() -> Value {
    serde_json::to_value(ApprovalResponse::new([Decision::Approve])).unwrap()
}

fn paused(outcome: CallOutcome) -> PausedCall {
    match outcome {
        CallOutcome::Paused(paused) => *paused,
        other => panic!("the call did not pause: {other:?}"),
    }
}

fn done(outcome: CallOutcome) -> ToolResult {
    match outcome {
        CallOutcome::Done(result) => result,
        other => panic!("the call did not end: {other:?}"),
    }
}

// One test: the tools share one record.
#[tokio::test]
async fn a_paused_call_goes_on_from_where_it_asked() {
    let approval = HumanInTheLoop::new().interrupt_on("charge", ToolPolicy::always());
    let agent = Agent::builder(ScriptedModel::new([]))
        .tool(charge)
        .tool(greet)
        // `after_model` hooks run last to first: `round_up` before the approval.
        .chain(chain![approval, round_up])
        .build()
        .unwrap();

    // An approval at the gate: nothing runs until it comes, and the hooks' edit is kept.
    let call = ToolCall::new("c1", "charge", json!({ "cents": 250 }));
    let waiting = paused(agent.call_tool_or_pause(call).await.unwrap());
    assert!(waiting.at_gate());
    assert_eq!(waiting.call.arguments, json!({ "cents": 300 }));
    assert_eq!(waiting.interrupt.source, "HumanInTheLoop");
    assert!(ran().is_empty(), "{:?}", ran());
    // Kept as JSON, in a store or a client's hands, between the two.
    let kept = serde_json::to_string(&waiting).unwrap();
    let waiting: PausedCall = serde_json::from_str(&kept).unwrap();

    // An answer the approval refuses (two decisions for one call): nothing runs.
    let two = serde_json::to_value(ApprovalResponse::new([
        Decision::Approve,
        Decision::Approve,
    ]))
    .unwrap();
    let refused = agent.resume_tool_call(waiting.clone(), two).await;
    assert!(
        matches!(
            refused,
            Err(Error::Resume(ref error)) if matches!(**error, ResumeError::InvalidAnswer { .. })
        ),
        "{refused:?}"
    );
    assert!(ran().is_empty(), "{:?}", ran());

    // Approved: it runs once, with the edited amount; the gate does not ask again.
    let result = done(agent.resume_tool_call(waiting, approve()).await.unwrap());
    assert_eq!(result.content, "charged 300");
    assert_eq!(ran().len(), 1);
    assert!(ran()[0].starts_with("charge 300 "), "{:?}", ran());

    // A rejection: an error result saying so, and nothing runs.
    let call = ToolCall::new("c2", "charge", json!({ "cents": 100 }));
    let waiting = paused(agent.call_tool_or_pause(call).await.unwrap());
    let reject = serde_json::to_value(ApprovalResponse::new([Decision::Reject {
        message: Some("too much".into()),
    }]))
    .unwrap();
    let result = done(agent.resume_tool_call(waiting, reject).await.unwrap());
    assert!(result.is_error, "{result:?}");
    assert!(result.text().contains("too much"), "{result:?}");
    assert_eq!(ran().len(), 1);

    // A tool that asks twice: each answer goes to the round that asked, the second pause has
    // an id of its own, and the call keeps one idempotency key throughout.
    let call = ToolCall::new("c3", "greet", json!({}));
    let first = paused(agent.call_tool_or_pause(call).await.unwrap());
    assert!(!first.at_gate());
    assert_eq!(first.interrupt.payload, json!({ "ask": "name" }));
    let second = paused(
        agent
            .resume_tool_call(first.clone(), json!({ "name": "Ada" }))
            .await
            .unwrap(),
    );
    assert_eq!(
        second.interrupt.payload,
        json!({ "ask": "confirm", "name": "Ada" })
    );
    assert_ne!(second.interrupt.id, first.interrupt.id);
    let result = done(agent.resume_tool_call(second, json!("yes")).await.unwrap());
    assert_eq!(result.content, "hello Ada");
    let greeted = ran()[1].clone();
    assert!(greeted.starts_with("greet \"Ada\" "), "{greeted}");
    let key = greeted.rsplit(' ').next().unwrap().to_owned();
    assert!(key.ends_with(":c3"), "{key}");

    // `call_tool` keeps its contract: an interrupted call is an error, and does not run.
    let call = ToolCall::new("c4", "charge", json!({ "cents": 1 }));
    let refused = agent.call_tool(call).await;
    assert!(
        matches!(refused, Err(Error::ToolCallInterrupted(_))),
        "{refused:?}"
    );
    assert_eq!(ran().len(), 2);
}

/// Refunds a card: a tool of the `GatePassed` test alone (the other test counts `charge`'s
/// runs, and the two run at once).
#[tool]
async fn refund(cents: u64) -> String {
    format!("refunded {cents}")
}

/// `GatePassed` is told once a call has passed its gate — not while it waits there for an
/// approval, once approved, and not for a call the gate rejected.
#[tokio::test]
async fn gate_passed_is_told_when_a_call_leaves_its_gate() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    let approval = HumanInTheLoop::new().interrupt_on("refund", ToolPolicy::always());
    let agent = Agent::builder(ScriptedModel::new([]))
        .tool(refund)
        .chain(chain![approval])
        .build()
        .unwrap();
    let told = Arc::new(AtomicUsize::new(0));
    let counting = Arc::clone(&told);
    let passed = hookchain::GatePassed::new(move || {
        counting.fetch_add(1, Ordering::SeqCst);
    });
    let agent = agent.with_context(hookchain::RunContext::new().with(passed));

    let call = ToolCall::new("g1", "refund", json!({ "cents": 1 }));
    let waiting = paused(agent.call_tool_or_pause(call).await.unwrap());
    assert_eq!(told.load(Ordering::SeqCst), 0, "told at the gate");
    let reject =
        serde_json::to_value(ApprovalResponse::new([Decision::Reject { message: None }])).unwrap();
    done(
        agent
            .resume_tool_call(waiting.clone(), reject)
            .await
            .unwrap(),
    );
    assert_eq!(told.load(Ordering::SeqCst), 0, "told for a rejected call");
    done(agent.resume_tool_call(waiting, approve()).await.unwrap());
    assert_eq!(told.load(Ordering::SeqCst), 1);
}
