//! The scripted model: replay order, appended steps and failures, the exhausted script, rule
//! models, request recording and call counting, and an agent run on a rule model.

use hookchain::{
    Agent, Error, FnTool, Message, Model, ModelError, ModelErrorKind, ModelRequest, ModelResponse,
    Role, ScriptedModel, StopReason, ToolCall,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

/// A request whose only message is the user text `text`.
fn ask(text: &str) -> ModelRequest {
    ModelRequest::new(vec![Message::user(text)])
}

/// The text of a successful answer.
async fn answer(model: &ScriptedModel, request: &ModelRequest) -> String {
    model
        .invoke(request.clone())
        .await
        .unwrap()
        .message
        .text()
        .into_owned()
}

#[tokio::test]
async fn replays_the_script_in_order() {
    let model = ScriptedModel::new([
        ModelResponse::text("one"),
        ModelResponse::text("two"),
        ModelResponse::tool_calls([ToolCall::new("c1", "lookup", json!({ "q": "x" }))]),
        ModelResponse::text("four"),
    ]);
    let request = ModelRequest::default();
    assert_eq!(answer(&model, &request).await, "one");
    assert_eq!(answer(&model, &request).await, "two");

    let third = model.invoke(request.clone()).await.unwrap();
    assert_eq!(third.stop_reason, StopReason::ToolUse);
    assert_eq!(third.message.tool_calls.len(), 1);
    assert_eq!(third.message.tool_calls[0].name, "lookup");

    let fourth = model.invoke(request.clone()).await.unwrap();
    assert_eq!(fourth.message.content, "four");
    assert_eq!(fourth.message.role, Role::Assistant);
    assert_eq!(fourth.stop_reason, StopReason::EndTurn);
}

#[tokio::test]
async fn then_and_then_fail_append_to_the_script() {
    let model = ScriptedModel::new([ModelResponse::text("first")])
        .then(ModelResponse::text("second"))
        .then_fail(ModelError::provider("provider is down"))
        .then(ModelResponse::text("after the failure"))
        .then_fail(ModelError::rate_limited("slow down"));
    let request = ModelRequest::default();

    assert_eq!(answer(&model, &request).await, "first");
    assert_eq!(answer(&model, &request).await, "second");
    let error = model.invoke(request.clone()).await.unwrap_err();
    assert_eq!(error.kind(), ModelErrorKind::Other, "{error:?}");
    let cause = std::error::Error::source(&error).map(ToString::to_string);
    assert_eq!(cause.as_deref(), Some("provider is down"), "{error:?}");
    assert_eq!(answer(&model, &request).await, "after the failure");
    let error = model.invoke(request.clone()).await.unwrap_err();
    assert_eq!(error.kind(), ModelErrorKind::RateLimited, "{error:?}");
    assert_eq!(error.retry_after(), None);
    // Then the script is used up: request #6 finds it empty.
    let error = model.invoke(request.clone()).await.unwrap_err();
    assert_exhausted(&error, 6);
    assert_eq!(model.calls(), 6);
}

#[tokio::test]
async fn an_empty_script_starts_from_then() {
    let model = ScriptedModel::new([]).then(ModelResponse::text("only"));
    assert_eq!(answer(&model, &ModelRequest::default()).await, "only");
}

#[tokio::test]
async fn an_exhausted_script_names_the_request_number() {
    let model = ScriptedModel::new([ModelResponse::text("a"), ModelResponse::text("b")]);
    let request = ModelRequest::default();
    answer(&model, &request).await;
    answer(&model, &request).await;
    for n in 3..=5 {
        let error = model.invoke(request.clone()).await.unwrap_err();
        assert_exhausted(&error, n);
    }
    let error = model.invoke(request.clone()).await.unwrap_err();
    assert!(error.to_string().contains("#6"), "{error}");

    let empty = ScriptedModel::new([]);
    let error = empty.invoke(request.clone()).await.unwrap_err();
    assert_exhausted(&error, 1);
}

#[tokio::test]
async fn an_agent_on_an_exhausted_script_fails_with_the_model_error() {
    // The model asks for a tool, then has nothing left to say.
    let model = ScriptedModel::new([ModelResponse::tool_calls([ToolCall::new(
        "c1",
        "missing_tool",
        json!({}),
    )])]);
    let agent = Agent::builder(model).build().unwrap();
    let error = agent.run("hi").await.unwrap_err();
    match &error {
        Error::Model(error) => assert_exhausted(error, 2),
        other => panic!("expected a model error, got {other:?}"),
    }
    assert_eq!(agent.model().calls(), 2);
}

#[tokio::test]
async fn a_rule_model_sees_the_request() {
    let model = ScriptedModel::from_rule(|request| {
        let last = request
            .messages
            .last()
            .map_or(String::new(), |m| m.text().into_owned());
        Ok(ModelResponse::text(format!(
            "{} message(s), system {:?}, last {last:?}",
            request.messages.len(),
            request.system_prompt.as_deref().unwrap_or("-"),
        )))
    });

    assert_eq!(
        answer(&model, &ask("hello")).await,
        "1 message(s), system \"-\", last \"hello\""
    );
    let request = ModelRequest::new(vec![
        Message::user("a"),
        Message::assistant("b"),
        Message::user("c"),
    ])
    .with_system_prompt("be terse");
    assert_eq!(
        answer(&model, &request).await,
        "3 message(s), system \"be terse\", last \"c\""
    );
    assert_eq!(model.calls(), 2);
}

#[tokio::test]
async fn a_rule_may_fail_and_then_is_ignored() {
    let model = ScriptedModel::from_rule(|request| {
        if request.messages.is_empty() {
            Err(ModelError::provider("no messages"))
        } else {
            Ok(ModelResponse::text("rule"))
        }
    })
    // Appending to a rule model has no effect: the rule keeps answering.
    .then(ModelResponse::text("scripted"));

    let error = model.invoke(ModelRequest::default()).await.unwrap_err();
    let cause = std::error::Error::source(&error).map(ToString::to_string);
    assert_eq!(cause.as_deref(), Some("no messages"), "{error:?}");
    assert_eq!(answer(&model, &ask("x")).await, "rule");
    assert_eq!(answer(&model, &ask("y")).await, "rule");
    assert_eq!(model.calls(), 3);
}

#[tokio::test]
async fn requests_records_every_request_in_order() {
    let model = ScriptedModel::new([ModelResponse::text("1"), ModelResponse::text("2")]);
    assert!(model.requests().is_empty());

    let first = ask("first");
    let second = ask("second").with_system_prompt("system");
    let third = ask("third");
    model.invoke(first.clone()).await.unwrap();
    model.invoke(second.clone()).await.unwrap();
    // A failed call (script exhausted) is recorded too.
    model.invoke(third.clone()).await.unwrap_err();

    assert_eq!(model.requests(), [first, second, third]);

    // Recording is a copy: later calls do not change what was returned before.
    let snapshot = model.requests();
    model.invoke(ask("fourth")).await.unwrap_err();
    assert_eq!(snapshot.len(), 3);
    assert_eq!(model.requests().len(), 4);
}

#[tokio::test]
async fn without_recording_records_nothing_but_still_counts() {
    let model = ScriptedModel::new([ModelResponse::text("a"), ModelResponse::text("b")])
        .without_recording();
    answer(&model, &ask("one")).await;
    answer(&model, &ask("two")).await;
    assert!(model.requests().is_empty());
    assert_eq!(model.calls(), 2);

    let rule = ScriptedModel::from_rule(|_| Ok(ModelResponse::text("r"))).without_recording();
    answer(&rule, &ask("one")).await;
    assert!(rule.requests().is_empty());
    assert_eq!(rule.calls(), 1);
}

#[tokio::test]
async fn calls_counts_every_call() {
    let model = ScriptedModel::new([ModelResponse::text("a")]).then_fail(ModelError::provider("x"));
    assert_eq!(model.calls(), 0);
    answer(&model, &ModelRequest::default()).await;
    assert_eq!(model.calls(), 1);
    model.invoke(ModelRequest::default()).await.unwrap_err();
    assert_eq!(model.calls(), 2);
    model.invoke(ModelRequest::default()).await.unwrap_err();
    assert_eq!(model.calls(), 3);

    // Through an `Arc` and a shared reference, as the blanket impls allow.
    let shared = std::sync::Arc::new(ScriptedModel::new([ModelResponse::text("arc")]));
    let by_arc = <std::sync::Arc<ScriptedModel> as Model>::invoke(&shared, ModelRequest::default())
        .await
        .unwrap();
    assert_eq!(by_arc.message.content, "arc");
    let by_ref: &ScriptedModel = &shared;
    let exhausted = <&ScriptedModel as Model>::invoke(&by_ref, ModelRequest::default()).await;
    assert_exhausted(&exhausted.unwrap_err(), 2);
    assert_eq!(shared.calls(), 2);
}

#[test]
fn debug_shows_what_is_left() {
    let model = ScriptedModel::new([ModelResponse::text("a"), ModelResponse::text("b")]);
    let text = format!("{model:?}");
    assert!(text.contains("2 left"), "{text}");
    let rule = ScriptedModel::from_rule(|_| Ok(ModelResponse::text("r")));
    assert!(format!("{rule:?}").contains("rule"));
}

/// Arguments of the calculator tool.
#[derive(Debug, Deserialize, JsonSchema)]
struct MulArgs {
    /// Left factor.
    x: i64,
    /// Right factor.
    y: i64,
}

#[tokio::test]
async fn an_agent_runs_on_a_rule_model_that_answers_from_the_last_message() {
    // The rule: on a user question, call the tool; on a tool result, answer with it.
    let model = ScriptedModel::from_rule(|request| {
        let last = request.messages.last().expect("the request has messages");
        Ok(match last.role {
            Role::User => ModelResponse::tool_calls([ToolCall::new(
                "call_mul",
                "multiply",
                json!({ "x": 6, "y": 7 }),
            )]),
            Role::Tool => ModelResponse::text(format!("The product is {}.", last.content)),
            role => ModelResponse::text(format!("unexpected last role {role:?}")),
        })
    });
    let multiply = FnTool::new(
        "multiply",
        "Multiplies two integers.",
        |args: MulArgs| async move { Ok::<_, std::convert::Infallible>(args.x * args.y) },
    );
    let agent = Agent::builder(model)
        .system_prompt("You compute.")
        .tool(multiply)
        .build()
        .unwrap();

    let output = agent.run("What is 6 times 7?").await.unwrap();
    assert_eq!(output.text().as_deref(), Some("The product is 42."));
    assert_eq!(output.steps, 2);
    assert_eq!(output.model_calls, 2);
    assert_eq!(output.tool_calls, 1);

    let roles: Vec<Role> = output.messages.iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        [Role::User, Role::Assistant, Role::Tool, Role::Assistant]
    );
    assert_eq!(output.messages[2].tool_call_id.as_deref(), Some("call_mul"));
    assert_eq!(output.messages[2].content, "42");

    // The model saw each request as the agent built it from the history.
    let model = agent.model();
    assert_eq!(model.calls(), 2);
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].messages[..], output.messages[..1]);
    assert_eq!(requests[1].messages[..], output.messages[..3]);
    for request in &requests {
        assert_eq!(request.system_prompt.as_deref(), Some("You compute."));
        assert_eq!(request.tools.len(), 1);
        assert_eq!(request.tools[0].name, "multiply");
    }

    // The same agent runs again from scratch; the model keeps counting across runs.
    let again = agent.run("And again?").await.unwrap();
    assert_eq!(again.text().as_deref(), Some("The product is 42."));
    assert_eq!(agent.model().calls(), 4);
}

/// The script ran out at request number `request`: an ordinary, non-retryable model error that
/// names the request.
fn assert_exhausted(error: &ModelError, request: usize) {
    assert_eq!(error.kind(), ModelErrorKind::Other, "{error:?}");
    assert!(!error.is_retryable());
    assert_eq!(
        error.to_string(),
        format!("the scripted model has no response left for request #{request}")
    );
}
