//! Richer messages and requests: the tool's name on tool messages, metadata, structured output,
//! provider extras, and serde forms that still read what older versions wrote.

mod support;

use hookchain::model::{ModelSettings, ResponseFormat};
use hookchain::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use support::{echo_call, echo_tool, new_log};

/// The weather, as the model must answer it.
#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
struct Weather {
    city: String,
    celsius: i32,
}

/// "Structured output parses into the user's type": the agent asks for the format in every
/// request, and the answer parses (or says why it does not).
#[tokio::test]
async fn an_agent_asks_for_a_format_and_its_answer_parses() {
    let model = ScriptedModel::new([ModelResponse::text(
        r#"```json
{"city": "Lisbon", "celsius": 18}
```"#,
    )]);
    let agent = Agent::builder(model)
        .response_format(ResponseFormat::of::<Weather>())
        .settings(ModelSettings::new().extra("seed", json!(7)))
        .build()
        .unwrap();
    let output = agent.run("Weather in Lisbon?").await.unwrap();
    let weather: Weather = output.parse().unwrap();
    assert_eq!(
        weather,
        Weather {
            city: "Lisbon".into(),
            celsius: 18
        }
    );
    let request = &agent.model().requests()[0];
    let format = request.response_format.as_ref().unwrap();
    assert_eq!(format.name, "Weather");
    assert_eq!(format.schema["required"], json!(["city", "celsius"]));
    assert_eq!(request.settings.extra["seed"], 7);

    let wrong = Agent::builder(ScriptedModel::new([ModelResponse::text(r#"{"city": 1}"#)]))
        .build()
        .unwrap()
        .run("?")
        .await
        .unwrap();
    let error = wrong.parse::<Weather>().unwrap_err();
    let report = hookchain::error::Report(&error).to_string();
    assert!(report.contains("invalid type"), "{report}");
}

/// "The tool name is on tool messages": results the agent adds name their tool.
#[tokio::test]
async fn tool_messages_name_their_tool() {
    let log = new_log();
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([echo_call("c1", "x")]),
        ModelResponse::text("ok"),
    ]);
    let agent = Agent::builder(model).tool(echo_tool(&log)).build().unwrap();
    let output = agent.run("go").await.unwrap();
    assert_eq!(output.messages[2].name.as_deref(), Some("echo"));
}

/// "Serde forms stay stable": a message written before `name` and `metadata` existed still
/// reads, and a message without them writes as it did.
#[test]
fn messages_of_the_previous_form_still_load() {
    let old = r#"{"role":"tool","content":"x","tool_call_id":"c1"}"#;
    let message: Message = serde_json::from_str(old).unwrap();
    assert_eq!(message.tool_call_id.as_deref(), Some("c1"));
    assert!(message.name.is_none() && message.metadata.is_empty());
    assert_eq!(serde_json::to_string(&message).unwrap(), old);

    let tagged = Message::user("summary of earlier turns").with_metadata("summary", json!(true));
    let json = serde_json::to_string(&tagged).unwrap();
    assert!(json.contains(r#""metadata":{"summary":true}"#), "{json}");
}

/// Content parts are in threads and checkpoints: text keeps the string form of before, parts
/// have a documented tagged form, and a thread with images and signed reasoning round-trips.
#[tokio::test]
async fn content_parts_round_trip_through_a_thread() {
    use hookchain::message::ContentPart;
    use hookchain::{StopReason, Thread};

    let answer = Message::assistant(vec![
        ContentPart::signed_reasoning("A cat, clearly.", "sig"),
        ContentPart::text("A cat."),
    ]);
    let agent = Agent::builder(ScriptedModel::new([ModelResponse::new(
        answer,
        StopReason::EndTurn,
    )]))
    .build()
    .unwrap();
    let mut thread: Thread<()> = agent.thread();
    let question = Message::user(vec![
        ContentPart::text("What is this?"),
        ContentPart::image_url("https://example.com/cat.png"),
    ]);
    let output = agent.run_in(&mut thread, question).await.unwrap();
    assert_eq!(output.text().as_deref(), Some("A cat."));
    let json = serde_json::to_value(&thread).unwrap();
    assert_eq!(
        json["messages"][0]["content"],
        json!([
            {"type": "text", "text": "What is this?"},
            {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.png"}},
        ])
    );
    let back: Thread<()> = serde_json::from_value(json).unwrap();
    assert_eq!(back.messages()[1].text(), "A cat.");
    assert_eq!(
        back.messages()[1].content.reasoning().as_deref(),
        Some("A cat, clearly.")
    );
    assert_eq!(back.messages(), thread.messages());

    // A part this version does not know is an error that says so, not a panic or a loss.
    let future = json!({"messages": [{"role": "user", "content": [{"type": "hologram"}]}]});
    let error = serde_json::from_value::<Thread<()>>(future).unwrap_err();
    assert!(error.to_string().contains("hologram"), "{error}");
}
