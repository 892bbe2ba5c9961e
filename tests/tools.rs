//! Tools: `FnTool`'s spec and schema, how its output becomes text, and how the registry turns
//! every failure (bad arguments, unknown tool, tool error, panic) into an error result.

use std::convert::Infallible;

use hookchain::{
    Content, FnTool, Tool, ToolCall, ToolContext, ToolError, ToolRegistry, ToolResult, ToolSpec,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Arguments of the `add` tool.
#[derive(Debug, Deserialize, JsonSchema)]
struct AddArgs {
    /// The first addend.
    a: i64,
    /// The second addend.
    b: i64,
    /// Optional note, echoed back.
    #[serde(default)]
    note: Option<String>,
}

fn add_tool() -> impl Tool {
    FnTool::new("add", "Adds two integers.", |args: AddArgs| async move {
        let _ = args.note;
        Ok::<_, Infallible>(args.a + args.b)
    })
}

/// Arguments of tools that take one text.
#[derive(Debug, Deserialize, JsonSchema)]
struct TextArgs {
    /// The text to work on.
    text: String,
}

fn shout_tool() -> impl Tool {
    FnTool::new(
        "shout",
        "Upper-cases a text.",
        |args: TextArgs| async move { Ok::<_, Infallible>(args.text.to_uppercase()) },
    )
}

fn call(name: &str, arguments: Value) -> ToolCall {
    ToolCall::new("call_1", name, arguments)
}

fn registry() -> ToolRegistry {
    ToolRegistry::new().with(add_tool()).with(shout_tool())
}

#[test]
fn fn_tool_spec_has_name_description_and_derived_schema() {
    let spec = add_tool().spec();
    assert_eq!(spec.name, "add");
    assert_eq!(spec.description, "Adds two integers.");

    let schema = &spec.parameters;
    assert_eq!(schema["type"], "object", "schema: {schema:#}");
    // Cleaned for providers: no meta-schema, title or integer formats; a closed object.
    assert_eq!(schema.get("$schema"), None, "schema: {schema:#}");
    assert_eq!(schema.get("title"), None, "schema: {schema:#}");
    assert_eq!(schema["additionalProperties"], false, "schema: {schema:#}");
    assert_eq!(
        schema["properties"]["a"],
        json!({ "type": "integer", "description": "The first addend." })
    );
    assert_eq!(schema["required"], json!(["a", "b"]));
    let properties = schema["properties"]
        .as_object()
        .unwrap_or_else(|| panic!("no properties in {schema:#}"));
    let mut names: Vec<&str> = properties.keys().map(String::as_str).collect();
    names.sort_unstable();
    assert_eq!(names, ["a", "b", "note"]);
    assert_eq!(properties["a"]["type"], "integer");
    assert_eq!(properties["b"]["type"], "integer");

    // Required: the two addends, not the defaulted note.
    let mut required: Vec<&str> = schema["required"]
        .as_array()
        .unwrap_or_else(|| panic!("no required list in {schema:#}"))
        .iter()
        .map(|name| name.as_str().unwrap())
        .collect();
    required.sort_unstable();
    assert_eq!(required, ["a", "b"]);

    // Doc comments on fields become descriptions the model reads.
    assert_eq!(properties["a"]["description"], "The first addend.");
    assert_eq!(properties["b"]["description"], "The second addend.");
    assert_eq!(
        properties["note"]["description"],
        "Optional note, echoed back."
    );
}

#[test]
fn registry_spec_lookup_matches_the_tool_spec() {
    let registry = registry();
    assert_eq!(registry.len(), 2);
    assert!(!registry.is_empty());
    assert_eq!(registry.spec("add"), Some(add_tool().spec()));
    assert_eq!(registry.spec("shout"), Some(shout_tool().spec()));
    assert_eq!(registry.spec("missing"), None);
    assert!(ToolRegistry::new().is_empty());
}

/// Asserts that `result` is an error result whose text mentions each of `mentions`.
#[track_caller]
fn assert_error_result(result: &ToolResult, mentions: &[&str]) {
    assert!(result.is_error, "expected an error result, got {result:?}");
    for mention in mentions {
        assert!(
            result.text().contains(mention),
            "expected {mention:?} in {:?}",
            result.content
        );
    }
}

/// Asserts that `result` failed with an error whose full text (every cause) mentions each of
/// `mentions`, and that the model reads none of them: the error's own text is for the
/// application and the logs.
#[track_caller]
fn assert_failure_hidden_from_the_model(result: &ToolResult, mentions: &[&str]) {
    let failure = result.failure().expect("a failed call carries its failure");
    let full = hookchain::error::Report(failure.error()).to_string();
    for mention in mentions {
        assert!(full.contains(mention), "expected {mention:?} in {full:?}");
        assert!(
            !result.text().contains(mention),
            "the model reads {mention:?}: {:?}",
            result.content
        );
    }
}

#[tokio::test]
async fn good_arguments_return_text_non_string_output_as_json() {
    let registry = registry();

    let sum = call("add", json!({ "a": 2, "b": 3 }));
    assert_eq!(registry.try_execute(&sum).await.unwrap(), "5");
    let result = registry.execute(&sum).await;
    assert_eq!(result.call_id, "call_1");
    assert_eq!(result.content, "5");
    assert!(!result.is_error);

    // A string output is the text itself, not a JSON string literal.
    let shout = call("shout", json!({ "text": "hi there" }));
    assert_eq!(registry.try_execute(&shout).await.unwrap(), "HI THERE");
    let result = registry.execute(&shout).await;
    assert_eq!(result.content, "HI THERE");
    assert!(!result.is_error);
}

#[tokio::test]
async fn structured_output_is_json_text() {
    #[derive(Serialize)]
    struct Weather {
        city: String,
        celsius: i32,
        rain: bool,
    }
    let weather = FnTool::new("weather", "Weather.", |args: TextArgs| async move {
        Ok::<_, Infallible>(Weather {
            city: args.text,
            celsius: 18,
            rain: true,
        })
    });
    let list = FnTool::new("list", "A list.", |_: TextArgs| async move {
        Ok::<_, Infallible>(vec![1, 2, 3])
    });
    let registry = ToolRegistry::new().with(weather).with(list);

    let text = registry
        .try_execute(&call("weather", json!({ "text": "Lisbon" })))
        .await
        .unwrap();
    let value: Value = serde_json::from_str(&text.text()).expect("the output is JSON text");
    assert_eq!(
        value,
        json!({ "city": "Lisbon", "celsius": 18, "rain": true })
    );

    let text = registry
        .try_execute(&call("list", json!({ "text": "" })))
        .await
        .unwrap();
    assert_eq!(text, "[1,2,3]");
}

#[tokio::test]
async fn bad_arguments_are_invalid_arguments_and_an_error_result() {
    let registry = registry();

    // A missing required field.
    let missing = call("add", json!({ "a": 1 }));
    let error = registry.try_execute(&missing).await.unwrap_err();
    assert!(
        matches!(&error, ToolError::InvalidArguments { tool, .. } if tool == "add"),
        "{error:?}"
    );
    let result = registry.execute(&missing).await;
    assert_error_result(&result, &["add", "invalid arguments", "missing field `b`"]);
    assert_eq!(result.call_id, "call_1");

    // A field of the wrong type.
    let wrong_type = call("add", json!({ "a": "one", "b": 2 }));
    let error = registry.try_execute(&wrong_type).await.unwrap_err();
    assert!(
        matches!(&error, ToolError::InvalidArguments { tool, .. } if tool == "add"),
        "{error:?}"
    );
    let result = registry.execute(&wrong_type).await;
    assert_error_result(&result, &["add", "invalid type"]);

    // Not an object at all.
    let not_object = call("shout", json!("just a string"));
    let error = registry.try_execute(&not_object).await.unwrap_err();
    assert!(
        matches!(&error, ToolError::InvalidArguments { tool, .. } if tool == "shout"),
        "{error:?}"
    );
    assert!(registry.execute(&not_object).await.is_error);
}

#[tokio::test]
async fn unknown_tool_is_an_error_result_listing_the_available_tools() {
    let registry = registry();
    let unknown = call("divide", json!({ "a": 1, "b": 2 }));

    let error = registry.try_execute(&unknown).await.unwrap_err();
    match &error {
        ToolError::UnknownTool { name, available } => {
            assert_eq!(name, "divide");
            assert!(available.contains("add"), "{available}");
            assert!(available.contains("shout"), "{available}");
        }
        other => panic!("expected UnknownTool, got {other:?}"),
    }

    let result = registry.execute(&unknown).await;
    assert_error_result(&result, &["divide", "add", "shout"]);
    assert_eq!(result.call_id, "call_1");

    // An empty registry still answers.
    let result = ToolRegistry::new().execute(&unknown).await;
    assert_error_result(&result, &["divide"]);
}

#[tokio::test]
async fn a_tool_error_becomes_an_error_result_with_its_message() {
    let io = FnTool::new("read_disk", "Reads the disk.", |_: TextArgs| async move {
        Err::<String, _>(std::io::Error::other("disk on fire"))
    });
    let text = FnTool::new("validate", "Validates.", |args: TextArgs| async move {
        if args.text.is_empty() {
            Err(format!("text must not be empty (got {:?})", args.text))
        } else {
            Ok(args.text)
        }
    });
    let registry = ToolRegistry::new().with(io).with(text);

    let read = call("read_disk", json!({ "text": "/" }));
    let error = registry.try_execute(&read).await.unwrap_err();
    assert!(
        matches!(&error, ToolError::Failed { tool, .. } if tool == "read_disk"),
        "{error:?}"
    );
    let result = registry.execute(&read).await;
    assert_error_result(&result, &["read_disk"]);
    assert_failure_hidden_from_the_model(&result, &["disk on fire"]);

    let result = registry
        .execute(&call("validate", json!({ "text": "" })))
        .await;
    assert_error_result(&result, &["validate"]);
    assert_failure_hidden_from_the_model(&result, &["text must not be empty"]);

    let result = registry
        .execute(&call("validate", json!({ "text": "fine" })))
        .await;
    assert!(!result.is_error);
    assert_eq!(result.content, "fine");
}

#[tokio::test]
async fn a_panicking_tool_becomes_an_error_result_with_the_panic_message() {
    let literal = FnTool::new("literal", "Panics.", |args: TextArgs| async move {
        if args.text == "boom" {
            panic!("literal panic message");
        }
        Ok::<_, Infallible>(args.text)
    });
    let formatted = FnTool::new("formatted", "Panics.", |args: TextArgs| async move {
        if !args.text.is_empty() {
            panic!("formatted panic: {} is {}", args.text, 42);
        }
        Ok::<_, Infallible>(args.text)
    });
    // Panics while creating the future, before the first poll.
    let eager = FnTool::new("eager", "Panics.", |args: TextArgs| {
        assert!(args.text.is_empty(), "eager panic on {:?}", args.text);
        async move { Ok::<_, Infallible>(args.text) }
    });
    let registry = ToolRegistry::new()
        .with(literal)
        .with(formatted)
        .with(eager);

    let boom = call("literal", json!({ "text": "boom" }));
    let error = registry.try_execute(&boom).await.unwrap_err();
    match &error {
        ToolError::Panicked { tool, message } => {
            assert_eq!(tool, "literal");
            assert_eq!(message, "literal panic message");
        }
        other => panic!("expected Panicked, got {other:?}"),
    }
    let result = registry.execute(&boom).await;
    assert_error_result(&result, &["literal"]);
    assert_failure_hidden_from_the_model(&result, &["literal panic message"]);
    assert_eq!(result.call_id, "call_1");

    let result = registry
        .execute(&call("formatted", json!({ "text": "the answer" })))
        .await;
    assert_error_result(&result, &["formatted"]);
    assert_failure_hidden_from_the_model(&result, &["formatted panic: the answer is 42"]);

    let result = registry
        .execute(&call("eager", json!({ "text": "x" })))
        .await;
    assert_failure_hidden_from_the_model(&result, &["eager panic on"]);

    // The registry still works after its tools panicked.
    let result = registry
        .execute(&call("literal", json!({ "text": "calm" })))
        .await;
    assert!(!result.is_error);
    assert_eq!(result.content, "calm");
}

/// A second tool under a taken name replaces nothing: the first stays, and the name is
/// reported (an agent given this registry is not built: `tests/contributions.rs`).
#[tokio::test]
async fn registering_an_existing_name_keeps_the_first_and_reports_the_name() {
    let first = FnTool::new("greet", "First version.", |_: TextArgs| async move {
        Ok::<_, Infallible>("first")
    });
    let second = FnTool::new("greet", "Second version.", |_: TextArgs| async move {
        Ok::<_, Infallible>("second")
    });
    let mut registry = ToolRegistry::new();
    registry.register(first).register(add_tool());
    assert_eq!(registry.registered_twice(), None);
    registry.register(second);

    assert_eq!(registry.registered_twice(), Some("greet"));
    assert_eq!(registry.len(), 2);
    assert_eq!(registry.specs().len(), registry.len());
    let specs = registry.specs();
    let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["greet", "add"]);
    assert_eq!(
        registry.spec("greet").unwrap().description,
        "First version."
    );
    let result = registry
        .execute(&call("greet", json!({ "text": "" })))
        .await;
    assert_eq!(result.content, "first");
}

/// A tool written by hand: its own schema, its own dispatch.
#[derive(Debug)]
struct Echo {
    prefix: &'static str,
}

impl Tool for Echo {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            "echo",
            "Echoes its arguments.",
            json!({
                "type": "object",
                "properties": { "say": { "type": "string" } },
                "required": ["say"],
            }),
        )
    }

    async fn call(&self, _cx: ToolContext<'_>, arguments: Value) -> Result<Content, ToolError> {
        match arguments.get("say").and_then(Value::as_str) {
            Some(say) => Ok(format!("{}{say}", self.prefix).into()),
            None => Err(ToolError::failed("echo", "`say` must be a string")),
        }
    }
}

#[tokio::test]
async fn a_hand_written_tool_works_in_the_registry() {
    let registry = ToolRegistry::new()
        .with(Echo { prefix: "echo: " })
        .with(add_tool());
    let spec = registry.spec("echo").unwrap();
    assert_eq!(spec.description, "Echoes its arguments.");
    assert_eq!(spec.parameters["required"], json!(["say"]));

    let result = registry
        .execute(&call("echo", json!({ "say": "hello" })))
        .await;
    assert!(!result.is_error);
    assert_eq!(result.content, "echo: hello");

    let result = registry.execute(&call("echo", json!({ "say": 7 }))).await;
    assert_error_result(&result, &["echo"]);
    assert_failure_hidden_from_the_model(&result, &["`say` must be a string"]);

    // Other tools in the same registry are unaffected.
    let result = registry
        .execute(&call("add", json!({ "a": 40, "b": 2 })))
        .await;
    assert_eq!(result.content, "42");
}

#[test]
fn registry_specs_keep_registration_order() {
    let named = |name: &'static str| {
        FnTool::new(
            name,
            format!("The {name} tool."),
            |_: TextArgs| async move { Ok::<_, Infallible>(String::new()) },
        )
    };
    let mut registry = ToolRegistry::new();
    for name in ["zeta", "alpha", "mid", "beta"] {
        registry.register(named(name));
    }
    let specs = registry.specs();
    let names: Vec<&str> = specs.iter().map(|spec| spec.name.as_str()).collect();
    assert_eq!(names, ["zeta", "alpha", "mid", "beta"]);
    assert_eq!(registry.specs()[1].description, "The alpha tool.");
}

#[tokio::test]
async fn an_agent_run_survives_a_panicking_tool() {
    use hookchain::{Agent, ModelResponse, Role, ScriptedModel};

    let fragile = FnTool::new("fragile", "Panics.", |args: TextArgs| async move {
        if !args.text.is_empty() {
            panic!("fragile broke on {}", args.text);
        }
        Ok::<_, Infallible>(args.text)
    });
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([ToolCall::new(
            "call_9",
            "fragile",
            json!({ "text": "glass" }),
        )]),
        ModelResponse::text("recovered"),
    ]);
    let agent = Agent::builder(model).tool(fragile).build().unwrap();
    let output = agent.run("go").await.unwrap();
    assert_eq!(output.text().as_deref(), Some("recovered"));

    let tool_message = output
        .messages
        .iter()
        .find(|m| m.role == Role::Tool)
        .expect("one tool result");
    assert_eq!(tool_message.tool_call_id.as_deref(), Some("call_9"));
    assert!(tool_message.is_error);
    assert_eq!(
        tool_message.content,
        "tool `fragile` failed unexpectedly (it crashed)"
    );
    let failure = hookchain::error::Report(output.tool_failures[0].error()).to_string();
    assert!(failure.contains("fragile broke on glass"), "{failure}");
    // The model saw the error result on its second call.
    let second = &agent.model().requests()[1];
    assert_eq!(second.messages.last(), Some(tool_message));
}
