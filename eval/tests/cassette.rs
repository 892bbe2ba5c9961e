//! Cassettes at the model boundary: an agent's run recorded and replayed without the model,
//! streams with their timing, drift, the modes, corrupt files and redaction.

use std::path::PathBuf;
use std::time::Duration;

use futures::StreamExt;
use hookchain::model::{ModelSettings, StreamStep};
use hookchain::prelude::*;
use hookchain::{Model, ModelError, StopReason, ToolCall, Usage, tool};
use hookchain_eval::cassette::{Cassette, CassetteErrorKind, CassetteMode, Timing};
use serde_json::json;

/// A fresh path for a test's cassette (its folder created, no file).
fn cassette_path(test: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cassettes");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{test}.json"));
    let _ = std::fs::remove_file(&path);
    path
}

/// An error and its sources, one per line, as a reporter shows them.
fn chain(error: &dyn std::error::Error) -> String {
    let mut lines = vec![error.to_string()];
    let mut next = error.source();
    while let Some(cause) = next {
        lines.push(cause.to_string());
        next = cause.source();
    }
    lines.join("\n")
}

/// A model that must not be called: replays never reach it.
struct Unreachable;

impl Model for Unreachable {
    async fn invoke(&self, request: ModelRequest) -> Result<ModelResponse, ModelError> {
        panic!("the replay called the model with {request:?}")
    }
}

/// The weather in a city.
#[tool]
async fn weather(city: String) -> String {
    format!("18°C in {city}")
}

fn weather_model() -> ScriptedModel {
    ScriptedModel::new([
        ModelResponse::tool_calls([ToolCall::new("c1", "weather", json!({"city": "Paris"}))])
            .with_usage(Usage::new(20, 5)),
        ModelResponse::text("It is 18°C in Paris.").with_usage(Usage::new(30, 8)),
    ])
}

fn open<M: Model>(model: M, path: &PathBuf, mode: CassetteMode) -> Cassette<M> {
    Cassette::builder(model, path)
        .mode(mode)
        .without_env()
        .open()
        .unwrap()
}

#[tokio::test]
async fn a_recorded_agent_run_replays_without_the_model() {
    let path = cassette_path("agent_run");
    let recorder = open(weather_model(), &path, CassetteMode::Once);
    let agent = Agent::builder(recorder).tool(weather).build().unwrap();
    let recorded = agent.run("Weather in Paris?").await.unwrap();
    assert_eq!(recorded.model_calls, 2);

    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("\"interactions\""), "{text}");
    assert!(
        text.contains("\"Weather in Paris?\""),
        "pretty JSON, readable: {text}"
    );

    let replayer = open(Unreachable, &path, CassetteMode::None);
    let agent = Agent::builder(replayer).tool(weather).build().unwrap();
    let replayed = agent.run("Weather in Paris?").await.unwrap();
    assert_eq!(replayed.text(), recorded.text());
    assert_eq!(replayed.text().as_deref(), Some("It is 18°C in Paris."));
    assert_eq!(*replayed.messages, *recorded.messages);
    assert_eq!(replayed.usage, recorded.usage);
    assert_eq!(replayed.tool_calls, 1);
}

#[tokio::test]
async fn the_fingerprint_ignores_tool_call_ids_and_metadata() {
    let path = cassette_path("call_ids");
    let model = weather_model();
    let recorder = open(&model, &path, CassetteMode::Once);
    let agent = Agent::builder(recorder).tool(weather).build().unwrap();
    agent.run("Weather in Paris?").await.unwrap();
    let requests = model.requests();

    // The second request again, with another call id (as a provider makes them up) and
    // metadata on its messages.
    let mut second = serde_json::to_value(&requests[1]).unwrap();
    let text = second
        .to_string()
        .replace("\"c1\"", "\"call-from-another-run\"");
    second = serde_json::from_str(&text).unwrap();
    for message in second["messages"].as_array_mut().unwrap() {
        message["metadata"] = json!({"note": "not sent to the model"});
    }
    let second: ModelRequest = serde_json::from_value(second).unwrap();
    assert_ne!(second, requests[1]);

    let replayer = open(Unreachable, &path, CassetteMode::None);
    replayer.invoke(requests[0].clone()).await.unwrap();
    let answer = replayer.invoke(second).await.unwrap();
    assert_eq!(answer.message.text(), "It is 18°C in Paris.");
}

#[tokio::test]
async fn a_drifted_request_fails_with_the_differing_fields() {
    let path = cassette_path("drift");
    let recorder = open(weather_model(), &path, CassetteMode::Once);
    let agent = Agent::builder(recorder).tool(weather).build().unwrap();
    agent.run("Weather in Paris?").await.unwrap();

    let replayer = open(Unreachable, &path, CassetteMode::None);
    let agent = Agent::builder(replayer).tool(weather).build().unwrap();
    let error = agent.run("Weather in Rome?").await.unwrap_err();
    let message = chain(&error);
    assert!(
        message.contains("call #1 drifted from the recording"),
        "{message}"
    );
    assert!(
        message.contains(
            r#"messages[0].content: expected "Weather in Paris?", actual "Weather in Rome?""#
        ),
        "{message}"
    );
    assert!(
        !message.contains("tools"),
        "only the differing fields: {message}"
    );
}

#[tokio::test]
async fn a_call_past_the_recording_is_exhausted() {
    let path = cassette_path("exhausted");
    let recorder = open(
        ScriptedModel::new([ModelResponse::text("hi")]),
        &path,
        CassetteMode::Once,
    );
    recorder
        .invoke(ModelRequest::new(vec![Message::user("a")]))
        .await
        .unwrap();

    let replayer = open(Unreachable, &path, CassetteMode::None);
    replayer
        .invoke(ModelRequest::new(vec![Message::user("a")]))
        .await
        .unwrap();
    let error = replayer
        .invoke(ModelRequest::new(vec![Message::user("a")]))
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("call #2 has no recording"),
        "{error}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_streamed_call_replays_the_same_events_with_original_or_compressed_timing() {
    let path = cassette_path("stream");
    let model = ScriptedModel::new([])
        .then_stream([
            StreamStep::Delay(Duration::from_millis(100)),
            StreamStep::from(ModelEvent::TextDelta {
                index: 0,
                text: "Hel".into(),
            }),
            StreamStep::Delay(Duration::from_millis(250)),
            StreamStep::from(ModelEvent::TextDelta {
                index: 0,
                text: "lo".into(),
            }),
            StreamStep::from(ModelEvent::Usage(Usage::new(3, 2))),
            StreamStep::from(ModelEvent::Finish {
                stop_reason: StopReason::EndTurn,
            }),
        ])
        .with_sleep(tokio::time::sleep);
    let request = || ModelRequest::new(vec![Message::user("Say hello")]);

    let recorder = open(model, &path, CassetteMode::Once);
    let (recorded, recorded_times) = collect_timed(&recorder, request()).await;
    assert_eq!(recorded_times, [100, 350, 350, 350]);

    let replayer = Cassette::builder(Unreachable, &path)
        .mode(CassetteMode::None)
        .without_env()
        .timing(Timing::Original)
        .open()
        .unwrap();
    let (replayed, times) = collect_timed(&replayer, request()).await;
    assert_eq!(replayed, recorded);
    assert_eq!(times, recorded_times, "original timing");

    let replayer = open(Unreachable, &path, CassetteMode::None);
    let (replayed, times) = collect_timed(&replayer, request()).await;
    assert_eq!(replayed, recorded);
    assert_eq!(times, [0, 0, 0, 0], "compressed timing");

    // Unstreamed, the replay is the answer the events assemble to.
    let replayer = open(Unreachable, &path, CassetteMode::None);
    let answer = replayer.invoke(request()).await.unwrap();
    assert_eq!(answer.message.text(), "Hello");
    assert_eq!(answer.usage, Usage::new(3, 2));
}

/// A stream's events, and when each came (milliseconds after the call).
async fn collect_timed<M: Model>(model: &M, request: ModelRequest) -> (Vec<ModelEvent>, Vec<u128>) {
    let start = tokio::time::Instant::now();
    let mut stream = std::pin::pin!(model.stream(request));
    let (mut events, mut times) = (Vec::new(), Vec::new());
    while let Some(event) = stream.next().await {
        events.push(event.unwrap());
        times.push(start.elapsed().as_millis());
    }
    (events, times)
}

#[tokio::test(start_paused = true)]
async fn a_streamed_agent_run_replays_the_same_agent_events() {
    let path = cassette_path("stream_agent");
    let recorder = open(weather_model(), &path, CassetteMode::Once);
    let agent = Agent::builder(recorder).tool(weather).build().unwrap();
    let recorded: Vec<String> = agent
        .stream("Weather in Paris?")
        .map(|event| format!("{:?}", event.unwrap()))
        .collect()
        .await;

    let replayer = open(Unreachable, &path, CassetteMode::None);
    let agent = Agent::builder(replayer).tool(weather).build().unwrap();
    let replayed: Vec<String> = agent
        .stream("Weather in Paris?")
        .map(|event| format!("{:?}", event.unwrap()))
        .collect()
        .await;
    assert_eq!(replayed, recorded);
}

#[tokio::test]
async fn mode_none_needs_a_cassette() {
    let path = cassette_path("none_missing");
    let error = Cassette::builder(Unreachable, &path)
        .mode(CassetteMode::None)
        .without_env()
        .open()
        .unwrap_err();
    assert_eq!(error.kind, CassetteErrorKind::Missing);
    assert!(
        error.to_string().contains("no cassette to replay"),
        "{error}"
    );
}

#[tokio::test]
async fn mode_once_records_then_replays() {
    let path = cassette_path("once");
    let first = open(
        ScriptedModel::new([ModelResponse::text("one")]),
        &path,
        CassetteMode::Once,
    );
    let request = || ModelRequest::new(vec![Message::user("q")]);
    assert_eq!(first.invoke(request()).await.unwrap().message.text(), "one");
    assert_eq!(first.inner().calls(), 1);

    let second = open(
        ScriptedModel::new([ModelResponse::text("two")]),
        &path,
        CassetteMode::Once,
    );
    assert_eq!(
        second.invoke(request()).await.unwrap().message.text(),
        "one"
    );
    assert_eq!(second.inner().calls(), 0, "replayed, not called");
    // Replay only: a new call is not recorded.
    assert!(second.invoke(request()).await.is_err());
}

#[tokio::test]
async fn mode_new_episodes_replays_what_matches_and_records_the_rest() {
    let path = cassette_path("new_episodes");
    let a = || ModelRequest::new(vec![Message::user("a")]);
    let b = || ModelRequest::new(vec![Message::user("b")]);
    let first = open(
        ScriptedModel::new([ModelResponse::text("A")]),
        &path,
        CassetteMode::Once,
    );
    first.invoke(a()).await.unwrap();

    let second = open(
        ScriptedModel::new([ModelResponse::text("B")]),
        &path,
        CassetteMode::NewEpisodes,
    );
    assert_eq!(second.invoke(a()).await.unwrap().message.text(), "A");
    assert_eq!(second.invoke(b()).await.unwrap().message.text(), "B");
    assert_eq!(second.inner().calls(), 1, "only `b` reached the model");

    let third = open(Unreachable, &path, CassetteMode::None);
    assert_eq!(third.invoke(a()).await.unwrap().message.text(), "A");
    assert_eq!(third.invoke(b()).await.unwrap().message.text(), "B");
}

#[tokio::test]
async fn mode_all_always_records_anew() {
    let path = cassette_path("all");
    let request = || ModelRequest::new(vec![Message::user("q")]);
    let first = open(
        ScriptedModel::new([ModelResponse::text("old")]),
        &path,
        CassetteMode::All,
    );
    first.invoke(request()).await.unwrap();
    let second = open(
        ScriptedModel::new([ModelResponse::text("new")]),
        &path,
        CassetteMode::All,
    );
    assert_eq!(
        second.invoke(request()).await.unwrap().message.text(),
        "new"
    );
    assert_eq!(second.inner().calls(), 1);

    let replayer = open(Unreachable, &path, CassetteMode::None);
    assert_eq!(
        replayer.invoke(request()).await.unwrap().message.text(),
        "new"
    );
    assert!(
        replayer.invoke(request()).await.is_err(),
        "the old call is gone"
    );
}

#[test]
fn modes_are_spelled_as_vcr_spells_them() {
    assert_eq!("none".parse(), Ok(CassetteMode::None));
    assert_eq!("once".parse(), Ok(CassetteMode::Once));
    assert_eq!("new_episodes".parse(), Ok(CassetteMode::NewEpisodes));
    assert_eq!("NEW-EPISODES".parse(), Ok(CassetteMode::NewEpisodes));
    assert_eq!("all".parse(), Ok(CassetteMode::All));
    let error = "sometimes".parse::<CassetteMode>().unwrap_err();
    assert!(
        error.contains("expected one of `none`, `once`, `new_episodes`, `all`"),
        "{error}"
    );
}

#[test]
fn a_corrupt_cassette_is_a_clear_error() {
    let path = cassette_path("corrupt");
    std::fs::write(&path, "{\"version\": 1, \"interactions\": [ {\"request\": ").unwrap();
    let error = Cassette::builder(Unreachable, &path)
        .without_env()
        .open()
        .unwrap_err();
    assert_eq!(error.kind, CassetteErrorKind::Corrupt);
    let message = error.to_string();
    assert!(
        message.contains("corrupt.json: not a cassette"),
        "{message}"
    );
    assert!(message.contains("line 1"), "{message}");

    std::fs::write(&path, r#"{"version": 99, "interactions": []}"#).unwrap();
    let error = Cassette::builder(Unreachable, &path)
        .without_env()
        .open()
        .unwrap_err();
    assert_eq!(error.kind, CassetteErrorKind::Corrupt);
    assert!(error.to_string().contains("format version 99"), "{error}");
}

#[tokio::test]
async fn secrets_stay_out_of_the_cassette() {
    let path = cassette_path("redaction");
    let api_key = "sk-proj-0123456789abcdefghij";
    let password = "correct horse battery staple";
    let request = || {
        ModelRequest::new(vec![Message::user(format!("my password is {password}"))]).with_settings(
            ModelSettings::new()
                .extra("api_key", json!("plain-secret-value"))
                .extra("seed", json!(7)),
        )
    };
    let model = ScriptedModel::new([ModelResponse::text(format!("Your key is {api_key}."))]);
    let recorder = Cassette::builder(model, &path)
        .without_env()
        .redact(move |text: &str| text.replace(password, "[PASSWORD]"))
        .open()
        .unwrap();
    let answer = recorder.invoke(request()).await.unwrap();
    assert!(
        answer.message.text().contains(api_key),
        "the live answer is untouched"
    );

    let text = std::fs::read_to_string(&path).unwrap();
    for secret in [api_key, password, "plain-secret-value"] {
        assert!(!text.contains(secret), "{secret} in {text}");
    }
    assert!(
        text.contains("[PASSWORD]") && text.contains("[REDACTED]"),
        "{text}"
    );
    assert!(
        text.contains("\"seed\": 7"),
        "settings that are no secret stay: {text}"
    );

    // The replay matches the redacted fingerprint, and answers the redacted text.
    let replayer = Cassette::builder(Unreachable, &path)
        .mode(CassetteMode::None)
        .without_env()
        .redact(move |text: &str| text.replace(password, "[PASSWORD]"))
        .open()
        .unwrap();
    let replayed = replayer.invoke(request()).await.unwrap();
    assert_eq!(replayed.message.text(), "Your key is [REDACTED].");
}
