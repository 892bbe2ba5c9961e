//! The encoder on real runs of the scripted model: the lifecycle AG-UI clients check, text and
//! calls streamed, results, a pause as an interrupt outcome, a void, an error.

use std::collections::HashSet;

use futures::TryStreamExt;
use hookchain::builtin::human_in_the_loop::{
    ApprovalRequest, ApprovalResponse, HumanInTheLoop, ToolPolicy,
};
use hookchain::chain;
use hookchain::prelude::*;
use serde_json::{Value, json};

use super::encoder::to_json;
use super::{AguiEncoder, AguiEvent, ClientPause, UnknownInterrupt};

/// The AG-UI events of a run's stream.
async fn encode(stream: hookchain::agent::AgentStream<'_>) -> Vec<Value> {
    let mut encoder = AguiEncoder::new("thread-1", "run-1");
    let mut out = vec![encoder.start()];
    let mut stream = stream;
    loop {
        match stream.try_next().await {
            Ok(Some(event)) => encoder.event(&event, &mut out),
            Ok(None) => break,
            Err(error) => {
                encoder.error(&error, &mut out);
                break;
            }
        }
    }
    assert!(encoder.is_ended());
    to_json(&out)
}

/// What `@ag-ui/client` checks of a run's events (its `verifyEvents`), and that nothing is
/// left open.
fn assert_valid_lifecycle(events: &[Value]) {
    assert_eq!(events[0]["type"], "RUN_STARTED");
    let mut messages = HashSet::new();
    let mut calls = HashSet::new();
    for (at, event) in events.iter().enumerate() {
        let kind = event["type"].as_str().unwrap();
        let is_last = at + 1 == events.len();
        assert_eq!(
            matches!(kind, "RUN_FINISHED" | "RUN_ERROR"),
            is_last,
            "only the last event ends the run: {events:#?}"
        );
        match kind {
            "TEXT_MESSAGE_START" => assert!(messages.insert(event["messageId"].clone())),
            "TEXT_MESSAGE_CONTENT" => {
                assert!(messages.contains(&event["messageId"]), "{events:#?}");
                assert_ne!(event["delta"], "");
            }
            "TEXT_MESSAGE_END" => assert!(messages.remove(&event["messageId"])),
            "TOOL_CALL_START" => assert!(calls.insert(event["toolCallId"].clone())),
            "TOOL_CALL_ARGS" => assert!(calls.contains(&event["toolCallId"]), "{events:#?}"),
            "TOOL_CALL_END" => assert!(calls.remove(&event["toolCallId"])),
            "RUN_FINISHED" => assert!(messages.is_empty() && calls.is_empty(), "{events:#?}"),
            _ => {}
        }
    }
}

fn kinds(events: &[Value]) -> Vec<&str> {
    events
        .iter()
        .map(|event| event["type"].as_str().unwrap())
        .collect()
}

/// The weather.
#[hookchain::tool]
async fn get_weather(
    /// The city.
    city: Option<String>,
) -> String {
    let _ = city;
    "18°C".to_owned()
}

#[tokio::test]
async fn a_tool_loop_streams_calls_results_and_text_in_a_valid_lifecycle() {
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([ToolCall::new(
            "call_1",
            "get_weather",
            json!({"city": "Paris"}),
        )]),
        ModelResponse::text("It is 18°C."),
    ]);
    let agent = Agent::builder(model).tool(get_weather).build().unwrap();
    let events = encode(agent.stream("Weather in Paris?")).await;
    assert_valid_lifecycle(&events);
    assert_eq!(
        kinds(&events),
        [
            "RUN_STARTED",
            "TOOL_CALL_START",
            "TOOL_CALL_ARGS",
            "TOOL_CALL_END",
            "TOOL_CALL_RESULT",
            "TEXT_MESSAGE_START",
            "TEXT_MESSAGE_CONTENT",
            "TEXT_MESSAGE_END",
            "RUN_FINISHED",
        ]
    );
    assert_eq!(events[1]["toolCallName"], "get_weather");
    assert_eq!(events[1]["parentMessageId"], "run-1:0");
    assert_eq!(events[2]["delta"], r#"{"city":"Paris"}"#);
    assert_eq!(events[4]["content"], "18°C");
    assert_eq!(events[4]["toolCallId"], "call_1");
    assert_eq!(events[5]["messageId"], "run-1:1");
    let finished = events.last().unwrap();
    assert_eq!(finished["outcome"], json!({"type": "success"}));
    assert_eq!(finished["result"]["text"], "It is 18°C.");
    assert_eq!(finished["threadId"], "thread-1");
}

#[tokio::test]
async fn a_pause_finishes_with_an_interrupt_outcome() {
    let model = ScriptedModel::new([ModelResponse::tool_calls([ToolCall::new(
        "call_9",
        "get_weather",
        json!({}),
    )])]);
    let agent = Agent::builder(model)
        .tool(get_weather)
        .chain(chain![
            HumanInTheLoop::new().interrupt_on("get_weather", ToolPolicy::always())
        ])
        .build()
        .unwrap();
    let events = encode(agent.stream("Weather?")).await;
    assert_valid_lifecycle(&events);
    let outcome = &events.last().unwrap()["outcome"];
    assert_eq!(outcome["type"], "interrupt");
    let interrupt = &outcome["interrupts"][0];
    assert!(interrupt["id"].as_str().is_some_and(|id| !id.is_empty()));
    assert_eq!(interrupt["reason"], "HumanInTheLoop");
    assert_eq!(
        interrupt["metadata"]["payload"]["actions"][0]["call_id"],
        "call_9"
    );
}

#[tokio::test]
async fn a_failed_run_ends_with_a_run_error_that_shows_no_internals() {
    let failing = ScriptedModel::new([]);
    let agent = Agent::builder(failing).build().unwrap();
    let events = encode(agent.stream("Hi")).await;
    assert_valid_lifecycle(&events);
    let error = events.last().unwrap();
    assert_eq!(error["type"], "RUN_ERROR");
    assert_eq!(error["code"], "model_failed");
    assert_eq!(error["message"], "the model call failed");
}

#[test]
fn a_void_closes_what_was_open_and_the_answer_streams_under_a_new_message() {
    use hookchain::agent::AgentEvent;
    use hookchain::model::ModelEvent;
    let mut encoder = AguiEncoder::new("t", "r");
    let mut out = vec![encoder.start()];
    for event in [
        AgentEvent::Model(ModelEvent::TextDelta {
            index: 0,
            text: "Hel".into(),
        }),
        AgentEvent::Model(ModelEvent::ToolCallStart {
            index: 1,
            id: "c1".into(),
            name: "n".into(),
        }),
        AgentEvent::ModelOutputVoided,
        AgentEvent::Model(ModelEvent::TextDelta {
            index: 0,
            text: "Hello".into(),
        }),
        AgentEvent::MessageAdded(Box::new(hookchain::Message::assistant("Hello"))),
    ] {
        encoder.event(&event, &mut out);
    }
    let events = to_json(&out);
    assert_eq!(
        kinds(&events),
        [
            "RUN_STARTED",
            "TEXT_MESSAGE_START",
            "TEXT_MESSAGE_CONTENT",
            "TEXT_MESSAGE_END",
            "TOOL_CALL_START",
            "TOOL_CALL_END",
            "CUSTOM",
            "TEXT_MESSAGE_START",
            "TEXT_MESSAGE_CONTENT",
            "TEXT_MESSAGE_END",
        ]
    );
    assert_eq!(events[6]["name"], "hookchain.output_voided");
    assert_eq!(events[6]["value"]["messageId"], "r:0");
    assert_eq!(events[7]["messageId"], "r:1");
    assert!(matches!(out[0], AguiEvent::RunStarted { .. }));
}

#[tokio::test]
async fn a_rejected_call_is_sent_its_result_as_any_other() {
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([ToolCall::new("call_9", "get_weather", json!({}))]),
        ModelResponse::text("As you wish."),
    ]);
    let agent = Agent::builder(model)
        .tool(get_weather)
        .chain(chain![
            HumanInTheLoop::new().interrupt_on("get_weather", ToolPolicy::always())
        ])
        .build()
        .unwrap();
    let paused = agent.run("Weather?").await.unwrap();
    let interrupt = &paused.interrupts()[0];
    let request = ApprovalRequest::from_interrupt(interrupt).unwrap();
    let reject = ApprovalResponse::reject_all(&request, "Not now.").answer(interrupt);
    let events = encode(agent.stream_resume(paused.checkpoint.clone().unwrap(), [reject])).await;
    assert_valid_lifecycle(&events);
    let results: Vec<&Value> = events
        .iter()
        .filter(|event| event["type"] == "TOOL_CALL_RESULT")
        .collect();
    assert_eq!(results.len(), 1, "{events:#?}");
    assert_eq!(results[0]["toolCallId"], "call_9");
    assert!(
        results[0]["content"]
            .as_str()
            .is_some_and(|content| content.contains("Not now.")),
        "{events:#?}"
    );
}

#[test]
fn a_pause_given_up_sends_the_results_that_close_its_calls() {
    let closed = [hookchain::Message::tool(hookchain::ToolResult::error(
        "call_9",
        "not executed",
    ))];
    let mut encoder = AguiEncoder::new("t", "r");
    let mut out = vec![encoder.start()];
    encoder.abandoned(&closed, &mut out);
    let events = to_json(&out);
    assert_eq!(
        kinds(&events),
        ["RUN_STARTED", "TOOL_CALL_RESULT", "RUN_FINISHED"]
    );
    assert_eq!(events[1]["toolCallId"], "call_9");
    assert_eq!(events[1]["content"], "not executed");
    assert_eq!(events[2]["result"]["end"], "abandoned");
}

/// Pays an invoice.
#[hookchain::tool]
async fn pay(invoice: String) -> String {
    format!("paid {invoice}")
}

/// A lead whose sub-agent (`accountant`) asks before it pays.
fn team() -> Agent<ScriptedModel> {
    let accountant = Agent::builder(ScriptedModel::new([
        ModelResponse::tool_calls([ToolCall::new("p1", "pay", json!({"invoice": "INV-7"}))]),
        ModelResponse::text("INV-7 is paid."),
    ]))
    .name("accountant")
    .tool(pay)
    .chain(chain![
        HumanInTheLoop::new().interrupt_on("pay", ToolPolicy::always())
    ])
    .build()
    .unwrap();
    Agent::builder(ScriptedModel::new([
        ModelResponse::tool_calls([ToolCall::new(
            "c1",
            "accounts",
            json!({"task": "Pay INV-7."}),
        )]),
        ModelResponse::text("Done: INV-7 is paid."),
    ]))
    .tool(
        accountant
            .into_tool("accounts", "Handles invoices.")
            .unwrap(),
    )
    .build()
    .unwrap()
}

#[tokio::test]
async fn a_sub_agents_pause_shows_its_own_question_never_its_checkpoint_and_takes_its_answer() {
    let lead = team();
    let paused = lead.run("Pay INV-7").await.unwrap();
    let view = ClientPause::new("0123456789abcdef0123456789abcdef");
    let shown = view.interrupts(paused.interrupts());
    assert_eq!(shown.len(), 1);
    let shown_json = serde_json::to_string(&shown).unwrap();
    for hidden in ["checkpoint", "messages", "Pay INV-7.", "accounts"] {
        assert!(
            !shown_json.contains(hidden),
            "`{hidden}` shown: {shown_json}"
        );
    }
    let question = &shown[0];
    assert_eq!(question.reason, "HumanInTheLoop");
    assert_eq!(question.metadata["payload"]["actions"][0]["name"], "pay");
    assert_eq!(question.id.len(), 32);
    assert!(question.id.bytes().all(|byte| byte.is_ascii_hexdigit()));
    // Another salt, other ids: without the salt, no id can be made.
    assert_ne!(
        ClientPause::new("other").interrupts(paused.interrupts())[0].id,
        question.id
    );
    assert_eq!(
        view.answers(paused.interrupts(), [("not-an-id".to_owned(), json!({}))]),
        Err(UnknownInterrupt("not-an-id".to_owned()))
    );

    let approve = json!({"decisions": [{"type": "approve"}]});
    let answers = view
        .answers(paused.interrupts(), [(question.id.clone(), approve)])
        .unwrap();
    assert_eq!(answers.len(), 1);
    assert_eq!(
        answers[0].0,
        paused.interrupts()[0].id,
        "nested in the parent's"
    );
    let done = lead
        .resume(paused.checkpoint.clone().unwrap(), answers)
        .await
        .unwrap();
    assert_eq!(done.text().as_deref(), Some("Done: INV-7 is paid."));
}

#[test]
fn the_metadata_shown_is_the_servers_choice() {
    use hookchain::interrupt::Interrupt;
    let interrupt: Interrupt = serde_json::from_value(json!({
        "id": "0/1:after_model:0:HumanInTheLoop", "source": "HumanInTheLoop", "hook": null,
        "step": 1, "tool_call_id": null, "payload": {"secret": "s", "question": "Go on?"},
    }))
    .unwrap();
    let view = ClientPause::new("salt").with_metadata(std::sync::Arc::new(
        |interrupt: &Interrupt| json!({ "question": interrupt.payload["question"] }),
    ));
    let shown = view.interrupts(std::slice::from_ref(&interrupt));
    assert_eq!(shown[0].metadata, json!({"question": "Go on?"}));
    assert!(!shown[0].id.contains("HumanInTheLoop"));
}
