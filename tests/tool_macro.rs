//! `#[tool]`: the spec it generates (name, description, schema), a run whose model calls
//! `#[tool]` tools, a tool reading its context, bad arguments, and a method tool holding state.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use hookchain::{
    Agent, Message, ModelResponse, Role, ScriptedModel, Tool, ToolCall, ToolContext, ToolError,
    ToolRegistry, tool,
};
use serde::Serialize;
use serde_json::json;

/// Adds two integers.
#[tool]
async fn add(a: i64, b: i64) -> Result<i64, std::convert::Infallible> {
    Ok(a + b)
}

/// Gets the weather
/// in a city.
#[tool(name = "get_weather")]
async fn weather(
    /// The city.
    city: String,
    /// `celsius` or `fahrenheit`.
    unit: Option<String>,
    /// How many days ahead.
    days: Option<u8>,
) -> String {
    let unit = unit.unwrap_or_else(|| "celsius".to_owned());
    format!(
        "{city}: sunny, 21 degrees {unit}, {} days",
        days.unwrap_or(0)
    )
}

#[derive(Serialize)]
struct Stats {
    words: usize,
    upper: String,
}

/// Counts words.
#[tool(description = "Counts the words of a text and shouts it.")]
fn stats(text: String) -> Stats {
    Stats {
        words: text.split_whitespace().count(),
        upper: text.to_uppercase(),
    }
}

/// Tells the model which call it is.
#[tool]
async fn whoami(cx: ToolContext<'_>, greeting: String) -> String {
    format!(
        "{greeting} from {} in run {} after {} messages",
        cx.call_id(),
        cx.run_id(),
        cx.messages().len()
    )
}

/// Refuses, with a message for the model.
#[tool]
async fn refuse(reason: String) -> Result<String, ToolError> {
    Err(ToolError::for_model("refuse", format!("no: {reason}")))
}

fn registry() -> ToolRegistry {
    ToolRegistry::new()
        .with(add)
        .with(weather)
        .with(stats)
        .with(whoami)
        .with(refuse)
}

#[test]
fn the_spec_has_the_name_the_doc_comment_and_a_clean_schema() {
    let spec = add.spec();
    assert_eq!(spec.name, "add");
    assert_eq!(spec.description, "Adds two integers.");
    assert_eq!(
        spec.parameters,
        json!({
            "type": "object",
            "properties": {
                "a": { "type": "integer" },
                "b": { "type": "integer" },
            },
            "required": ["a", "b"],
            "additionalProperties": false,
        })
    );
}

#[test]
fn parameter_docs_describe_fields_and_options_are_optional() {
    let spec = weather.spec();
    assert_eq!(spec.name, "get_weather");
    assert_eq!(spec.description, "Gets the weather\nin a city.");
    assert_eq!(
        spec.parameters,
        json!({
            "type": "object",
            "properties": {
                "city": { "type": "string", "description": "The city." },
                "unit": { "type": ["string", "null"], "description": "`celsius` or `fahrenheit`." },
                "days": {
                    "type": ["integer", "null"],
                    "description": "How many days ahead.",
                    "minimum": 0,
                    "maximum": 255,
                },
            },
            "required": ["city"],
            "additionalProperties": false,
        })
    );
}

#[test]
fn description_overrides_the_doc_comment_and_the_context_is_no_argument() {
    assert_eq!(
        stats.spec().description,
        "Counts the words of a text and shouts it."
    );
    let schema = whoami.spec().parameters;
    assert_eq!(schema["required"], json!(["greeting"]));
    assert_eq!(schema["properties"].as_object().unwrap().len(), 1);
}

#[tokio::test]
async fn the_function_stays_callable() {
    assert_eq!(add::call(2, 3).await.unwrap(), 5);
    assert_eq!(stats::call("a b".into()).words, 2);
    assert_eq!(
        weather::call("Lisbon".into(), None, Some(2)).await,
        "Lisbon: sunny, 21 degrees celsius, 2 days"
    );
}

#[tokio::test]
async fn results_become_text_strings_as_is_and_the_rest_as_json() {
    let registry = registry();
    assert_eq!(
        run(&registry, "add", json!({ "a": 40, "b": 2 }))
            .await
            .content,
        "42"
    );
    assert_eq!(
        run(
            &registry,
            "get_weather",
            json!({ "city": "Porto", "unit": "kelvin" })
        )
        .await
        .content,
        "Porto: sunny, 21 degrees kelvin, 0 days"
    );
    assert_eq!(
        run(&registry, "stats", json!({ "text": "one two" }))
            .await
            .content,
        r#"{"upper":"ONE TWO","words":2}"#
    );
    // A `ToolError` the function returns is kept as it is: this one is meant for the model.
    let refused = run(&registry, "refuse", json!({ "reason": "late" })).await;
    assert!(refused.is_error);
    assert!(refused.text().contains("no: late"), "{}", refused.content);
}

/// Checks a stock level: a result the function builds, failed when the item is out.
#[tool]
fn stock(item: String) -> hookchain::ToolResult {
    match item.as_str() {
        "tea" => hookchain::ToolResult::ok("", "12 in stock"),
        _ => hookchain::ToolResult::error("", format!("{item} is not sold here")),
    }
}

/// The same, fallibly.
#[tool]
async fn stock_or_fail(item: String) -> Result<hookchain::ToolResult, ToolError> {
    match item.as_str() {
        "down" => Err(ToolError::for_model(
            "stock_or_fail",
            "the warehouse is down",
        )),
        _ => Ok(stock::call(item)),
    }
}

#[tokio::test]
async fn a_returned_tool_result_keeps_its_error_flag_and_its_text() {
    let registry = ToolRegistry::new().with(stock).with(stock_or_fail);
    for tool in ["stock", "stock_or_fail"] {
        let sold = run(&registry, tool, json!({ "item": "tea" })).await;
        assert!(!sold.is_error, "{tool}");
        assert_eq!(sold.content, "12 in stock", "{tool}");
        // Before, the result was serialized: the model read an error as a success, in JSON.
        let unsold = run(&registry, tool, json!({ "item": "gin" })).await;
        assert!(unsold.is_error, "{tool}");
        assert_eq!(unsold.content, "gin is not sold here", "{tool}");
        assert_eq!(
            unsold.call_id, "c1",
            "the result answers the call, whatever id it was built with"
        );
    }
    let down = run(&registry, "stock_or_fail", json!({ "item": "down" })).await;
    assert!(down.is_error);
    assert_eq!(down.content, "the warehouse is down");
}

/// Runs the tool `name` outside an agent.
async fn run(
    registry: &ToolRegistry,
    name: &str,
    arguments: serde_json::Value,
) -> hookchain::ToolResult {
    registry
        .execute(&ToolCall::new("c1", name, arguments))
        .await
}

#[tokio::test]
async fn bad_arguments_are_an_invalid_arguments_error_the_model_reads() {
    let registry = registry();
    let call = ToolCall::new("c1", "add", json!({ "a": "forty", "b": 2 }));
    let error = registry.try_execute(&call).await.unwrap_err();
    assert!(
        matches!(&error, ToolError::InvalidArguments { tool, .. } if tool == "add"),
        "{error:?}"
    );
    assert!(add.check_arguments(&json!({ "a": 1 })).is_err());
    assert!(add.check_arguments(&json!({ "a": 1, "b": 2 })).is_ok());

    let result = registry.execute(&call).await;
    assert!(result.is_error);
    assert!(result.text().contains("add"), "{}", result.content);
}

#[tokio::test]
async fn an_agent_runs_tool_macro_tools_and_the_model_reads_their_results() {
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([
            ToolCall::new("call_1", "add", json!({ "a": 2, "b": 3 })),
            ToolCall::new("call_2", "whoami", json!({ "greeting": "hello" })),
            ToolCall::new("call_3", "add", json!({ "a": "two" })),
        ]),
        ModelResponse::text("done"),
    ]);
    let agent = Agent::builder(&model)
        .tool(add)
        .tool(whoami)
        .build()
        .unwrap();
    let output = agent.run("add 2 and 3").await.unwrap();
    assert_eq!(output.text().as_deref(), Some("done"));

    let tool_messages: Vec<&Message> = output
        .messages
        .iter()
        .filter(|message| message.role == Role::Tool)
        .collect();
    assert_eq!(tool_messages.len(), 3);
    assert_eq!(tool_messages[0].content, "5");
    assert!(!tool_messages[0].is_error);
    // The context: this call's id, the run's id, and the history so far (the user's message
    // and the model's tool calls).
    let run_id = output_run_id(&tool_messages[1].text());
    assert_eq!(
        tool_messages[1].content,
        format!("hello from call_2 in run {run_id} after 2 messages")
    );
    assert!(!run_id.is_empty());
    assert!(tool_messages[2].is_error, "{}", tool_messages[2].content);

    // What the model read on its second call.
    let second = &model.requests()[1];
    let results: Vec<String> = second
        .messages
        .iter()
        .filter(|message| message.role == Role::Tool)
        .map(|message| message.text().into_owned())
        .collect();
    assert_eq!(results[0], "5");
}

/// The run id in `whoami`'s answer.
fn output_run_id(answer: &str) -> String {
    let (_, rest) = answer.split_once(" in run ").unwrap();
    let (run_id, _) = rest.split_once(" after ").unwrap();
    run_id.to_owned()
}

/// A note store: a tool with state, shared by every call.
#[derive(Default)]
struct Notes {
    notes: Mutex<Vec<String>>,
    calls: AtomicUsize,
}

#[tool(name = "take_note")]
impl Notes {
    /// Stores a note, and returns how many there are.
    async fn take(
        &self,
        /// The note.
        note: String,
        cx: ToolContext<'_>,
    ) -> Result<usize, ToolError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let mut notes = self.notes.lock().unwrap();
        notes.push(format!("{note} ({})", cx.call_id()));
        Ok(notes.len())
    }
}

#[tokio::test]
async fn a_method_tool_holds_state() {
    let notes = Notes::default();
    let spec = notes.spec();
    assert_eq!(spec.name, "take_note");
    assert_eq!(
        spec.description,
        "Stores a note, and returns how many there are."
    );
    assert_eq!(
        spec.parameters["properties"]["note"]["description"],
        "The note."
    );

    let registry = ToolRegistry::new().with(notes);
    for id in ["n1", "n2"] {
        let result = registry
            .execute(&ToolCall::new(id, "take_note", json!({ "note": "milk" })))
            .await;
        assert!(!result.is_error, "{}", result.content);
    }
    let result = registry
        .execute(&ToolCall::new("n3", "take_note", json!({ "note": "eggs" })))
        .await;
    assert_eq!(result.content, "3");

    // Still a plain method, callable on its own.
    let notes = Notes::default();
    let run = hookchain::Context::new(Vec::new());
    let frame = hookchain::CallFrame::new("direct", "take_note");
    let count = notes
        .take("bread".into(), ToolContext::new(&run, &frame))
        .await
        .unwrap();
    assert_eq!(count, 1);
    assert_eq!(notes.notes.lock().unwrap()[0], "bread (direct)");
    assert_eq!(notes.calls.load(Ordering::SeqCst), 1);
}

/// Books a table once the user confirms; the resumed call reads the answer from its context.
#[tool]
async fn book(cx: ToolContext<'_>, table: u32) -> Result<String, ToolError> {
    match cx.resume_as::<String>() {
        None => Err(ToolError::Interrupt {
            payload: json!({ "confirm": table }),
        }),
        Some(Ok(answer)) => Ok(format!("table {table}: {answer}")),
        Some(Err(error)) => Err(ToolError::for_model("book", error.to_string())),
    }
}

/// Asks for a number, without a context: the answer is the result (as for an `FnTool`).
#[tool]
async fn ask_number(question: String) -> Result<String, ToolError> {
    Err(ToolError::Interrupt {
        payload: json!({ "ask": question }),
    })
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct AskArguments {
    #[allow(dead_code)]
    question: String,
}

#[tokio::test]
async fn a_resumed_tool_reads_the_answer_or_gets_it_as_its_result() {
    for (call, answer, expected) in [
        (
            ToolCall::new("c1", "book", json!({ "table": 4 })),
            json!("confirmed"),
            "table 4: confirmed",
        ),
        (
            ToolCall::new("c1", "ask_number", json!({ "question": "how many?" })),
            json!(7),
            "7",
        ),
        // An `FnTool`'s closure sees no context either: the same rule.
        (
            ToolCall::new("c1", "ask_fn", json!({ "question": "which?" })),
            json!("the blue one"),
            "the blue one",
        ),
    ] {
        let ask_fn = hookchain::FnTool::new("ask_fn", "Asks.", |_: AskArguments| async {
            Err::<String, _>(ToolError::Interrupt {
                payload: json!("which?"),
            })
        });
        let model =
            ScriptedModel::new([ModelResponse::tool_calls([call]), ModelResponse::text("ok")]);
        let agent = Agent::builder(&model)
            .tool(book)
            .tool(ask_number)
            .tool(ask_fn)
            .build()
            .unwrap();
        let output = agent.run("go").await.unwrap();
        let checkpoint = output.checkpoint.clone().expect("paused");
        let id = output.interrupts()[0].id.clone();
        let done = agent.resume(checkpoint, [(id, answer)]).await.unwrap();
        let result = done
            .messages
            .iter()
            .find(|message| message.role == Role::Tool)
            .expect("the tool's result");
        assert_eq!(result.content, expected);
        assert!(!result.is_error);
    }
}

#[tokio::test]
async fn missing_and_mistyped_arguments_name_the_argument() {
    let registry = registry();
    let missing = registry
        .try_execute(&ToolCall::new("c1", "add", json!({ "a": 1 })))
        .await
        .unwrap_err();
    assert!(missing.to_string().contains("add"), "{missing}");
    let ToolError::InvalidArguments { source, .. } = missing else {
        panic!("{missing:?}")
    };
    assert_eq!(source.to_string(), "missing field `b`");

    let ToolError::InvalidArguments { source, .. } = registry
        .try_execute(&ToolCall::new("c1", "add", json!({ "a": 1, "b": "two" })))
        .await
        .unwrap_err()
    else {
        panic!("expected invalid arguments")
    };
    assert_eq!(
        source.to_string(),
        "`b`: invalid type: string \"two\", expected i64"
    );

    // Not an object: refused; `null`: no arguments, which a tool without required ones takes.
    let list = registry
        .try_execute(&ToolCall::new("c1", "add", json!([1, 2])))
        .await
        .unwrap_err();
    assert!(
        matches!(list, ToolError::InvalidArguments { .. }),
        "{list:?}"
    );
    let forecast = registry
        .execute(&ToolCall::new(
            "c1",
            "get_weather",
            json!({ "city": "Faro" }),
        ))
        .await;
    assert_eq!(forecast.content, "Faro: sunny, 21 degrees celsius, 0 days");
}
