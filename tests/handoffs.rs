//! Handoffs (`Agent::into_handoff`): the conversation handed to another agent, whose answer
//! ends the run, named after it in the thread; what the receiver sees; a receiver that pauses;
//! and a tool answer that ends the run (`ToolContext::end_run_with`) kept across a pause.

use std::sync::{Arc, Mutex};

use hookchain::builtin::human_in_the_loop::{
    ApprovalRequest, ApprovalResponse, HumanInTheLoop, ToolPolicy,
};
use hookchain::prelude::*;
use hookchain::subagent::{SubAgentPause, last_user_message};
use hookchain::tool::AskUser;
use hookchain::tool::FinalAnswer;
use hookchain::{EndReason, Message, Role, Tool, chain, tool};
use serde_json::json;

/// A receiver that records what it was given and answers `answer`.
fn receiver(
    name: &'static str,
    answer: &'static str,
    seen: &Arc<Mutex<Vec<Message>>>,
) -> Agent<ScriptedModel> {
    let seen = Arc::clone(seen);
    Agent::builder(ScriptedModel::from_rule(move |request| {
        *seen.lock().unwrap() = request.messages.to_vec();
        Ok(ModelResponse::text(answer))
    }))
    .name(name)
    .build()
    .unwrap()
}

/// Triage answers its first turn itself, then hands the second to billing.
fn triage(handoff: impl Tool) -> Agent<ScriptedModel> {
    Agent::builder(ScriptedModel::new([
        ModelResponse::text("Hello! How can I help?"),
        ModelResponse::tool_calls([ToolCall::new("h1", "transfer_to_billing", json!({}))]),
    ]))
    .name("triage")
    .tool(handoff)
    .build()
    .unwrap()
}

#[tokio::test]
async fn the_receiver_answers_and_the_thread_records_who_did() {
    let seen = Arc::default();
    let billing = receiver("billing", "Your refund is on its way.", &seen);
    let triage = triage(billing.into_handoff("Refunds.").unwrap());
    let mut thread = triage.thread();
    triage.run_in(&mut thread, "Hi").await.unwrap();
    let output = triage
        .run_in(&mut thread, "Where is my refund?")
        .await
        .unwrap();
    assert_eq!(output.end, EndReason::Finished);
    assert_eq!(output.model_calls, 1, "triage's model was not called again");
    assert_eq!(output.text().as_deref(), Some("Your refund is on its way."));

    let who: Vec<(Role, Option<&str>)> = thread
        .messages()
        .iter()
        .filter(|message| message.role == Role::Assistant && message.tool_calls.is_empty())
        .map(|message| (message.role, message.name.as_deref()))
        .collect();
    assert_eq!(
        who,
        [(Role::Assistant, None), (Role::Assistant, Some("billing"))],
        "the thread says billing gave the last answer"
    );
    // The receiver saw the conversation, without the call that handed it over.
    let seen = seen.lock().unwrap();
    let texts: Vec<String> = seen.iter().map(|m| m.text().into_owned()).collect();
    assert_eq!(
        texts,
        ["Hi", "Hello! How can I help?", "Where is my refund?"]
    );
    assert!(seen.iter().all(|message| message.tool_calls.is_empty()));
}

#[tokio::test]
async fn a_history_filter_decides_what_the_receiver_sees() {
    let seen = Arc::default();
    let billing = receiver("billing", "Refunded.", &seen);
    let triage = triage(
        billing
            .into_handoff("Refunds.")
            .unwrap()
            .history(last_user_message),
    );
    let mut thread = triage.thread();
    triage.run_in(&mut thread, "Hi").await.unwrap();
    triage.run_in(&mut thread, "Refund me").await.unwrap();
    let texts: Vec<String> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|m| m.text().into_owned())
        .collect();
    assert_eq!(texts, ["Refund me"]);
}

/// Refunds money.
#[tool]
async fn refund(cents: u64) -> String {
    format!("refunded {cents} cents")
}

/// A receiver that needs an approval pauses the run; resumed, its answer ends the run.
#[tokio::test]
async fn a_receiver_that_pauses_pauses_the_run_and_its_answer_ends_it_on_resume() {
    let billing = Agent::builder(ScriptedModel::new([
        ModelResponse::tool_calls([ToolCall::new("r1", "refund", json!({"cents": 1200}))]),
        ModelResponse::text("Refunded 12.00."),
    ]))
    .name("billing")
    .tool(refund)
    .chain(chain![
        HumanInTheLoop::new().interrupt_on("refund", ToolPolicy::always())
    ])
    .build()
    .unwrap();
    let triage = Agent::builder(ScriptedModel::new([ModelResponse::tool_calls([
        ToolCall::new("h1", "transfer_to_billing", json!({})),
    ])]))
    .tool(billing.into_handoff("Refunds.").unwrap())
    .build()
    .unwrap();
    let paused = triage.run("Refund me").await.unwrap();
    assert_eq!(paused.end, EndReason::Interrupted);
    let interrupt = paused.interrupts()[0].clone();
    let pause = SubAgentPause::from_interrupt(&interrupt).expect("the receiver's pause");
    assert_eq!(pause.agent, "billing");
    let asked = &pause.interrupts()[0];
    let request = ApprovalRequest::from_interrupt(asked).unwrap();
    let answer = pause.answer([ApprovalResponse::approve_all(&request).answer(asked)]);
    let done = triage
        .resume(paused.checkpoint.unwrap(), [(interrupt.id, answer)])
        .await
        .unwrap();
    assert_eq!(done.end, EndReason::Finished);
    assert_eq!(done.text().as_deref(), Some("Refunded 12.00."));
    assert_eq!(
        done.messages.last().unwrap().name.as_deref(),
        Some("billing")
    );
}

/// Answers for the whole run: its result is the answer.
#[tool]
async fn lookup(cx: ToolContext<'_>, city: String) -> String {
    let answer = format!("It is sunny in {city}.");
    cx.end_run_with(FinalAnswer::new(answer.clone()));
    answer
}

/// A call that ended the run, in a step another call paused (a question to the user): once
/// the question is answered, the run ends with that answer — the model is not called again.
#[tokio::test]
async fn an_answer_that_ends_the_run_is_kept_across_a_pause_of_its_step() {
    let agent = Agent::builder(ScriptedModel::new([ModelResponse::tool_calls([
        ToolCall::new("l1", "lookup", json!({"city": "Lyon"})),
        ToolCall::new("q1", "ask_user", json!({"question": "Anything else?"})),
    ])]))
    .tool(lookup)
    .tool(AskUser)
    .build()
    .unwrap();
    let paused = agent.run("Weather in Lyon?").await.unwrap();
    assert_eq!(paused.end, EndReason::Interrupted);
    let checkpoint = paused.checkpoint.unwrap();
    let question = checkpoint.interrupts()[0].id.clone();
    let done = agent
        .resume(checkpoint, [(question, json!("No, thanks."))])
        .await
        .unwrap();
    assert_eq!(done.end, EndReason::Finished);
    assert_eq!(done.model_calls, 1);
    assert_eq!(done.text().as_deref(), Some("It is sunny in Lyon."));
    let tool_results: Vec<String> = done
        .messages
        .iter()
        .filter(|message| message.role == Role::Tool)
        .map(|message| message.text().into_owned())
        .collect();
    assert_eq!(tool_results, ["It is sunny in Lyon.", "No, thanks."]);
}
