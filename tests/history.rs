//! Every history sent to a model is one a real provider accepts: each assistant message with
//! tool calls is answered, right after it, by one result per call. `ScriptedModel` refuses any
//! other request (as OpenAI and Anthropic do), so every test on it checks the rule on every
//! request; these tests check the rule's edges.

mod support;

use hookchain::message::{HistoryError, validate_history};
use hookchain::prelude::*;
use hookchain::{Model, ModelErrorKind, chain, hook};
use serde_json::json;

use support::{assert_no_dangling, echo_call, echo_tool, new_log};

/// "The scripted model refuses a request a provider would refuse": a tool call answered after
/// another message is an error, and the script is not used up by it.
#[tokio::test]
async fn the_scripted_model_refuses_a_history_a_provider_would_refuse() {
    let model = ScriptedModel::new([ModelResponse::text("fine")]);
    let call = ToolCall::new("c1", "echo", json!({ "text": "x" }));
    let bad = ModelRequest::new(vec![
        Message::user("hi"),
        Message::assistant_with_tool_calls("", [call]),
        Message::user("are you there?"),
        Message::tool(ToolResult::ok("c1", "x")),
    ]);
    let error = model.invoke(bad).await.unwrap_err();
    assert_eq!(error.kind(), ModelErrorKind::InvalidRequest, "{error}");
    let cause = std::error::Error::source(&error).map(ToString::to_string);
    assert!(cause.unwrap_or_default().contains("`c1`"));
    let good = ModelRequest::new(vec![Message::user("hi")]);
    assert_eq!(model.invoke(good).await.unwrap().message.content, "fine");
}

/// "A call the input left without a result gets one right after it": an input history where the
/// conversation went on past a tool call (a pause given up by hand, say) reaches the model with
/// an error result between the call and the next message, never after it.
#[tokio::test]
async fn an_unanswered_call_in_the_input_is_answered_right_after_it() {
    let model = ScriptedModel::new([ModelResponse::text("ok")]);
    let agent = Agent::builder(model).build();
    let input = vec![
        Message::user("look it up"),
        Message::assistant_with_tool_calls("", [echo_call("c1", "x")]),
        Message::user("never mind, just say ok"),
    ];
    let output = agent.run(input).await.unwrap();
    let sent = &agent.model().requests()[0].messages;
    assert_eq!(sent[2].tool_call_id.as_deref(), Some("c1"));
    assert!(sent[2].is_error);
    assert_eq!(sent[3], Message::user("never mind, just say ok"));
    assert_eq!(validate_history(sent), Ok(()));
    assert_no_dangling(&output.messages);
}

/// An input with a tool result that answers no call is refused before anything runs.
#[tokio::test]
async fn an_input_with_an_orphan_result_is_refused() {
    let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("ok")])).build();
    let input = vec![
        Message::user("hi"),
        Message::tool(ToolResult::ok("ghost", "boo")),
    ];
    let result = agent.run(input).await;
    assert!(
        matches!(
            result,
            Err(Error::History(HistoryError::OrphanResult { .. }))
        ),
        "{result:?}"
    );
    assert_eq!(agent.model().calls(), 0);
}

/// Removes the last tool result of the history, or reports why it may not.
#[hook(before_model)]
fn drop_last_result(cx: &mut Context, request: &mut ModelRequest) {
    if !cx
        .messages()
        .iter()
        .any(|m| m.role == hookchain::Role::Tool)
    {
        return;
    }
    let edit = cx.edit_history(|messages| {
        let at = messages
            .iter()
            .rposition(|m| m.role == hookchain::Role::Tool)
            .unwrap();
        messages.remove(at);
    });
    let verdict = match edit {
        Ok(()) => "removed".to_owned(),
        Err(error) => format!("refused: {error}"),
    };
    request.system_prompt = Some(verdict);
}

/// "The history-editing API keeps the rule": a hook that removes a tool result (which would
/// leave its call dangling, and the call to run again) is refused, and the history is left as
/// it was.
#[tokio::test]
async fn a_history_edit_that_leaves_a_call_dangling_is_refused() {
    let log = new_log();
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([echo_call("c1", "x")]),
        ModelResponse::text("done"),
    ]);
    let agent = Agent::builder(model)
        .tool(echo_tool(&log))
        .chain(chain![drop_last_result])
        .build();
    let output = agent.run("go").await.unwrap();
    assert_eq!(output.text().as_deref(), Some("done"));
    let prompt = agent.model().requests()[1].system_prompt.clone().unwrap();
    assert!(prompt.starts_with("refused: tool call `c1`"), "{prompt}");
    assert_eq!(output.messages.len(), 4);
    assert_no_dangling(&output.messages);
}

/// "A model answer whose calls cannot all be answered is refused before any tool runs": two
/// calls with one id (a broken server) would run both, then send a history every provider
/// refuses; the error is a malformed response naming the fix.
#[tokio::test]
async fn an_answer_with_two_calls_of_one_id_runs_no_tool() {
    let runs = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([
            ToolCall::new("same", "lookup", json!({ "text": "1" })),
            ToolCall::new("same", "lookup", json!({ "text": "2" })),
        ]),
        ModelResponse::text("never asked"),
    ]);
    let agent = Agent::builder(model)
        .tool(support::counting_tool("lookup", &runs))
        .build();
    let Err(Error::Model(error)) = agent.run("go").await else {
        panic!("the answer was kept");
    };
    assert_eq!(error.kind(), ModelErrorKind::MalformedResponse);
    assert!(error.to_string().contains("`same`"), "{error}");
    assert!(error.to_string().contains("ToolCallRepair"), "{error}");
    assert_eq!(
        runs.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "a tool ran"
    );
    assert_eq!(agent.model().requests().len(), 1);
}
