//! `Model::stream`: the default replay of a whole answer, scripted streams (deltas, delays on
//! tokio's paused clock, a failure mid-stream), and streams through a router and a `DynModel`.

use std::time::Duration;

use futures::StreamExt;
use hookchain::model::{DynModel, ModelEvent, ModelRouter, ResponseAssembler, StreamStep};
use hookchain::{
    Message, Model, ModelError, ModelErrorKind, ModelRequest, ModelResponse, ScriptedModel,
    StopReason, ToolCall, Usage,
};
use serde_json::json;
use tokio::time::Instant;

fn ask(text: &str) -> ModelRequest {
    ModelRequest::new(vec![Message::user(text)])
}

fn text(index: usize, text: &str) -> StreamStep {
    ModelEvent::TextDelta {
        index,
        text: text.into(),
    }
    .into()
}

fn finish(stop_reason: StopReason) -> StreamStep {
    ModelEvent::Finish { stop_reason }.into()
}

/// Every item of one streamed call.
async fn items(model: &impl Model, request: ModelRequest) -> Vec<Result<ModelEvent, ModelError>> {
    model.stream(request).collect().await
}

fn assemble(items: Vec<Result<ModelEvent, ModelError>>) -> Result<ModelResponse, ModelError> {
    let mut assembler = ResponseAssembler::new();
    for item in items {
        assembler.push(&item?)?;
    }
    assembler.finish()
}

#[tokio::test]
async fn a_whole_answer_streams_as_the_events_that_assemble_it() {
    let answer = ModelResponse::tool_calls([ToolCall::new("c1", "search", json!({"q": "rust"}))])
        .with_usage(Usage::new(12, 4));
    let model = ScriptedModel::new([answer.clone()]);
    let streamed = items(&model, ask("find rust")).await;
    assert!(matches!(
        streamed.first(),
        Some(Ok(ModelEvent::ToolCallStart { .. }))
    ));
    assert_eq!(assemble(streamed).unwrap(), answer);
    assert_eq!(model.requests().len(), 1, "a streamed call is recorded too");
}

#[tokio::test(start_paused = true)]
async fn a_scripted_stream_yields_its_deltas_after_its_delays() {
    let model = ScriptedModel::new([])
        .then_stream([
            text(0, "Hel"),
            StreamStep::Delay(Duration::from_secs(2)),
            text(0, "lo"),
            finish(StopReason::EndTurn),
        ])
        .with_sleep(tokio::time::sleep);
    let start = Instant::now();
    let mut stream = std::pin::pin!(model.stream(ask("hi")));
    let first = stream.next().await.unwrap().unwrap();
    assert_eq!(
        first,
        ModelEvent::TextDelta {
            index: 0,
            text: "Hel".into()
        }
    );
    assert_eq!(start.elapsed(), Duration::ZERO);
    stream.next().await.unwrap().unwrap();
    assert_eq!(
        start.elapsed(),
        Duration::from_secs(2),
        "waited on the clock"
    );
    assert!(matches!(
        stream.next().await,
        Some(Ok(ModelEvent::Finish { .. }))
    ));
    assert!(stream.next().await.is_none());
}

#[tokio::test]
async fn a_failure_mid_stream_is_the_last_item() {
    let model = ScriptedModel::new([]).then_stream([
        text(0, "partial"),
        StreamStep::Fail(ModelError::overloaded("connection reset")),
        text(0, "never sent"),
    ]);
    let streamed = items(&model, ask("hi")).await;
    assert_eq!(streamed.len(), 2);
    let error = streamed[1].as_ref().unwrap_err();
    assert_eq!(error.kind(), ModelErrorKind::Overloaded);
}

#[tokio::test]
async fn invoke_answers_a_scripted_stream_with_its_assembled_events_or_its_failure() {
    let model = ScriptedModel::new([])
        .then_stream([
            text(0, "Hel"),
            StreamStep::Delay(Duration::from_secs(60)),
            text(0, "lo"),
            finish(StopReason::EndTurn),
        ])
        .then_stream([text(0, "x"), StreamStep::Fail(ModelError::timeout("slow"))])
        .then_stream([text(0, "no finish")]);
    let whole = model.invoke(ask("a")).await.unwrap();
    assert_eq!(whole.message.content, "Hello");
    assert_eq!(
        model.invoke(ask("b")).await.unwrap_err().kind(),
        ModelErrorKind::Timeout
    );
    assert_eq!(
        model.invoke(ask("c")).await.unwrap_err().kind(),
        ModelErrorKind::MalformedResponse,
        "a truncated scripted stream is malformed, as a real one"
    );
}

#[tokio::test]
async fn a_delay_without_a_timer_says_what_is_missing() {
    let model = ScriptedModel::new([])
        .then_stream([text(0, "a"), StreamStep::Delay(Duration::from_millis(1))]);
    let streamed = items(&model, ask("hi")).await;
    let error = streamed.last().unwrap().as_ref().unwrap_err();
    assert!(error.to_string().contains("with_sleep"), "{error}");
}

#[tokio::test]
async fn routers_and_dyn_models_stream_the_model_they_call() {
    let backup = ScriptedModel::new([])
        .then_stream([text(0, "from the backup"), finish(StopReason::EndTurn)]);
    let router =
        ModelRouter::new(ScriptedModel::new([ModelResponse::text("main")])).route("backup", backup);
    let answer = assemble(items(&router, ask("hi")).await).unwrap();
    assert_eq!(answer.message.content, "main");
    let answer = assemble(items(&router, ask("hi").with_model("backup")).await).unwrap();
    assert_eq!(answer.message.content, "from the backup");
    let unknown = items(&router, ask("hi").with_model("nope")).await;
    assert_eq!(
        unknown[0].as_ref().unwrap_err().kind(),
        ModelErrorKind::InvalidRequest
    );

    let chosen: Box<dyn DynModel> = Box::new(ScriptedModel::new([ModelResponse::text("dyn")]));
    let answer = assemble(items(&chosen, ask("hi")).await).unwrap();
    assert_eq!(answer.message.content, "dyn");
}
