//! Tool results with more than text (images, JSON, resource links): from a `#[tool]` function,
//! an `FnTool` and a `Tool` impl to the model's request, intact; into a thread's JSON and back;
//! and through the built-in middleware that read or rewrite a result's text.

use std::convert::Infallible;

use hookchain::message::{Content, ContentPart, ResourceLink};
use hookchain::prelude::*;
use hookchain::{Checkpoint, FnTool, Role, ToolError, tool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

const PNG: &str = "iVBORw0KGgo=";

/// Draws the chart of a series.
#[tool]
fn chart(series: String) -> Content {
    Content::from(vec![
        ContentPart::text(format!("The chart of {series}:")),
        ContentPart::image_base64("image/png", PNG),
    ])
}

/// Looks an order up.
#[tool]
async fn order(id: u32) -> Result<Content, ToolError> {
    if id == 0 {
        return Err(ToolError::for_model("order", "there is no order 0"));
    }
    Ok(Content::from(vec![
        ContentPart::json(json!({ "id": id, "total": 42.5 })),
        ContentPart::from(
            ResourceLink::new(format!("db://orders/{id}"), format!("order-{id}"))
                .with_mime_type("application/json"),
        ),
    ]))
}

/// The tool messages of the model's `n`th request.
fn tool_messages_sent(model: &ScriptedModel, n: usize) -> Vec<Message> {
    model.requests()[n]
        .messages
        .iter()
        .filter(|message| message.role == Role::Tool)
        .cloned()
        .collect()
}

#[tokio::test]
async fn a_tool_functions_image_and_text_reach_the_model_intact() {
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([ToolCall::new("c1", "chart", json!({ "series": "sales" }))]),
        ModelResponse::text("A fine chart."),
    ]);
    let agent = Agent::builder(&model).tool(chart).build().unwrap();
    let output = agent.run("Draw the sales.").await.unwrap();
    assert_eq!(output.text().as_deref(), Some("A fine chart."));

    let sent = tool_messages_sent(&model, 1);
    assert_eq!(sent.len(), 1);
    assert_eq!(
        sent[0].content.parts(),
        [
            ContentPart::text("The chart of sales:"),
            ContentPart::image_base64("image/png", PNG),
        ],
        "the parts, not their JSON as text"
    );
    assert!(!sent[0].is_error);
    assert_eq!(sent[0].name.as_deref(), Some("chart"));
}

#[tokio::test]
async fn a_fallible_tool_function_returns_json_and_links_or_its_error() {
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([
            ToolCall::new("c1", "order", json!({ "id": 7 })),
            ToolCall::new("c2", "order", json!({ "id": 0 })),
        ]),
        ModelResponse::text("done"),
    ]);
    let agent = Agent::builder(&model).tool(order).build().unwrap();
    agent.run("Orders 7 and 0?").await.unwrap();

    let sent = tool_messages_sent(&model, 1);
    assert_eq!(
        sent[0].content.parts(),
        [
            ContentPart::json(json!({ "id": 7, "total": 42.5 })),
            ContentPart::from(
                ResourceLink::new("db://orders/7", "order-7").with_mime_type("application/json")
            ),
        ]
    );
    assert!(sent[1].is_error);
    assert_eq!(sent[1].content, "there is no order 0");
}

#[derive(Deserialize, JsonSchema)]
struct Page {
    /// The page's number.
    number: u32,
}

#[tokio::test]
async fn an_fn_tool_may_return_content_and_anything_else_stays_json_text() {
    let scan = FnTool::new("scan", "Scans a page.", |page: Page| async move {
        Ok::<_, Infallible>(Content::from(vec![
            ContentPart::text(format!("page {}", page.number)),
            ContentPart::image_url("https://example.com/page.png"),
        ]))
    });
    let count = FnTool::new("count", "Counts.", |page: Page| async move {
        Ok::<_, Infallible>(json!({ "words": page.number * 100 }))
    });
    let registry = hookchain::ToolRegistry::new().with(scan).with(count);
    let scanned = registry
        .execute(&ToolCall::new("c1", "scan", json!({ "number": 2 })))
        .await;
    assert_eq!(scanned.content.parts().len(), 2);
    assert_eq!(scanned.text(), "page 2");
    let counted = registry
        .execute(&ToolCall::new("c2", "count", json!({ "number": 2 })))
        .await;
    assert_eq!(counted.content, r#"{"words":200}"#, "as before: JSON text");
}

#[tokio::test]
async fn a_thread_keeps_a_rich_result_and_loads_an_old_string_one() {
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([ToolCall::new("c1", "chart", json!({ "series": "q3" }))]),
        ModelResponse::text("ok"),
    ]);
    let agent = Agent::builder(&model).tool(chart).build().unwrap();
    let output = agent.run("chart q3").await.unwrap();
    let saved = serde_json::to_value(&output.messages).unwrap();
    let result = saved
        .as_array()
        .unwrap()
        .iter()
        .find(|message| message["role"] == "tool")
        .unwrap();
    assert_eq!(
        result["content"],
        json!([
            {"type": "text", "text": "The chart of q3:"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
        ])
    );
    let back: Vec<Message> = serde_json::from_value(saved).unwrap();
    assert_eq!(back, output.messages[..]);

    // A tool message as older versions wrote it: its content a string.
    let old: Message = serde_json::from_value(json!({
        "role": "tool", "content": "18°C", "tool_call_id": "c1", "name": "weather"
    }))
    .unwrap();
    assert_eq!(old.content, "18°C");
}

#[cfg(feature = "pii")]
#[tokio::test]
async fn personal_data_is_redacted_in_every_text_bearing_part_of_a_result() {
    use hookchain::builtin::{Pii, PiiStrategy, PiiType};

    let leaky = FnTool::new("lookup", "Looks a customer up.", |_: Page| async move {
        Ok::<_, Infallible>(Content::from(vec![
            ContentPart::text("Found one."),
            ContentPart::image_base64("image/png", PNG),
            ContentPart::json(json!({ "customer": { "email": "ann@example.com" }, "n": 1 })),
            ContentPart::text("Mail bob@example.com too."),
        ]))
    });
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([ToolCall::new("c1", "lookup", json!({ "number": 1 }))]),
        ModelResponse::text("ok"),
    ]);
    let pii = Pii::builder()
        .detect(PiiType::Email, PiiStrategy::Redact)
        .tool_results(true)
        .build()
        .unwrap();
    let agent = Agent::builder(&model)
        .tool(leaky)
        .chain(pii)
        .build()
        .unwrap();
    agent.run("Who is customer 1?").await.unwrap();
    let sent = tool_messages_sent(&model, 1);
    assert_eq!(
        sent[0].content.parts(),
        [
            ContentPart::text("Found one."),
            ContentPart::image_base64("image/png", PNG),
            ContentPart::json(json!({ "customer": { "email": "[REDACTED_EMAIL]" }, "n": 1 })),
            ContentPart::text("Mail [REDACTED_EMAIL] too."),
        ]
    );
}

/// Confirms an order: asks a person first.
#[tool]
async fn confirm(cx: ToolContext<'_>, id: u32) -> Result<String, ToolError> {
    match cx.resume_value() {
        Some(answer) => Ok(format!("order {id}: {answer}")),
        None => Err(ToolError::Interrupt {
            payload: json!({ "confirm": id }),
        }),
    }
}

#[tokio::test]
async fn a_checkpoint_holding_a_rich_result_round_trips_in_json_and_cbor() {
    use hookchain::interrupt::Position;

    let model = ScriptedModel::new([
        ModelResponse::tool_calls([
            ToolCall::new("c1", "order", json!({ "id": 7 })),
            ToolCall::new("c2", "confirm", json!({ "id": 7 })),
        ]),
        ModelResponse::text("done"),
    ]);
    let agent = Agent::builder(&model)
        .tool(order)
        .tool(confirm)
        .build()
        .unwrap();
    let paused = agent.run("Confirm order 7.").await.unwrap();
    let checkpoint = paused.checkpoint.expect("paused on `confirm`");
    let Position::Tools { results, .. } = checkpoint.position() else {
        panic!("{:?}", checkpoint.position());
    };
    let kept = results[0].as_ref().expect("`order` ran before the pause");
    assert_eq!(kept.content.parts().len(), 2);

    let json = checkpoint.to_json().unwrap();
    assert_eq!(Checkpoint::from_json(&json).unwrap(), *checkpoint);
    let mut cbor = Vec::new();
    ciborium::into_writer(&checkpoint, &mut cbor).unwrap();
    let back: Checkpoint = ciborium::from_reader(cbor.as_slice()).unwrap();
    assert_eq!(back, *checkpoint);
}

#[tokio::test(start_paused = true)]
async fn a_cached_rich_result_is_served_with_all_its_parts() {
    use std::time::Duration;

    use hookchain::builtin::ToolResultCache;

    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    let runs = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&runs);
    let drawn = FnTool::new("chart", "Draws a chart.", move |page: Page| {
        counted.fetch_add(1, Ordering::SeqCst);
        async move { Ok::<_, Infallible>(chart::call(format!("page {}", page.number))) }
    });
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([ToolCall::new("c1", "chart", json!({ "number": 4 }))]),
        ModelResponse::tool_calls([ToolCall::new("c2", "chart", json!({ "number": 4 }))]),
        ModelResponse::text("done"),
    ]);
    let cache = ToolResultCache::builder()
        .tool("chart", Duration::from_secs(60))
        .build()
        .unwrap();
    let agent = Agent::builder(&model)
        .tool(drawn)
        .chain(cache)
        .build()
        .unwrap();
    agent.run("Chart q4 twice.").await.unwrap();
    let sent = tool_messages_sent(&model, 2);
    assert_eq!(sent.len(), 2);
    assert_eq!(
        sent[1].content, sent[0].content,
        "the cached result, parts and all"
    );
    assert_eq!(sent[1].content.parts().len(), 2);
    assert_eq!(
        runs.load(Ordering::SeqCst),
        1,
        "the second call was served from the cache"
    );
}
