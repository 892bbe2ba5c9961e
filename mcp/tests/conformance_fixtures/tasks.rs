//! The conformance suite's fixture tools of the Tasks extension (SEP-2663), as the suite names
//! them (`greet`, `slow_compute`, `failing_job`, …), and the server's tasks: which of them run
//! as tasks, and how.

use std::time::Duration;

use hookchain::interrupt::InMemoryCheckpointer;
use hookchain::prelude::*;
use hookchain::{Content, Tool, ToolError, ToolSpec, hook};
use hookchain_mcp::{ServedTasks, TaskSupport};
use serde_json::{Value, json};

/// The names of the fixtures.
pub(crate) const NAMES: [&str; 7] = [
    "greet",
    "slow_compute",
    "failing_job",
    "protocol_error_job",
    "confirm_delete",
    "multi_input",
    "test_tool_with_task",
];

/// The tasks of the suite's server: every fixture but `greet` (sync only) runs as one;
/// `failing_job` and `test_tool_with_task` only as one.
pub(crate) fn served() -> ServedTasks {
    let optional = [
        "slow_compute",
        "protocol_error_job",
        "confirm_delete",
        "multi_input",
    ];
    let required = ["failing_job", "test_tool_with_task"];
    let tasks = optional.into_iter().fold(
        ServedTasks::new(InMemoryCheckpointer::new()).poll_interval(Duration::from_millis(100)),
        |tasks, name| tasks.tool(name, TaskSupport::Optional),
    );
    required
        .into_iter()
        .fold(tasks, |tasks, name| tasks.tool(name, TaskSupport::Required))
}

/// One of the fixtures, by its name.
pub(crate) struct TaskFixture(pub(crate) &'static str);

/// A form asking for `properties`, all required.
fn form(message: &str, properties: Value) -> Value {
    let required: Vec<&String> = properties
        .as_object()
        .map(|p| p.keys().collect())
        .unwrap_or_default();
    json!({
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": message,
            "requestedSchema": { "type": "object", "properties": properties, "required": required },
        },
    })
}

/// Asks for `requests` (by key).
fn ask(requests: Value) -> ToolError {
    ToolError::Interrupt {
        payload: json!({ "inputRequests": requests }),
    }
}

/// The text at `path` in `value`, or `?`.
fn text(value: &Value, path: &[&str]) -> String {
    path.iter()
        .fold(value, |value, key| &value[key])
        .as_str()
        .map_or_else(|| value_at(value, path), str::to_owned)
}

fn value_at(value: &Value, path: &[&str]) -> String {
    let at = path.iter().fold(value, |value, key| &value[key]);
    if at.is_null() {
        "?".to_owned()
    } else {
        at.to_string()
    }
}

impl Tool for TaskFixture {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            self.0,
            format!("The conformance suite's `{}`.", self.0),
            json!({ "type": "object", "properties": {} }),
        )
    }

    async fn call(&self, cx: ToolContext<'_>, arguments: Value) -> Result<Content, ToolError> {
        let answers = cx.resume_value().cloned().unwrap_or(Value::Null);
        Ok(match self.0 {
            "greet" => format!("Hello, {}!", text(&arguments, &["name"])).into(),
            "slow_compute" => {
                let seconds = arguments["seconds"]
                    .as_f64()
                    .unwrap_or(1.0)
                    .clamp(0.0, 120.0);
                tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
                format!("Computed {} after {seconds}s", text(&arguments, &["label"])).into()
            }
            "failing_job" => {
                tokio::time::sleep(Duration::from_secs(1)).await;
                return Err(ToolError::for_model(
                    self.0,
                    "the job failed, as it always does",
                ));
            }
            // A server's failure, not the tool's report: a task `failed`.
            "protocol_error_job" => {
                tokio::time::sleep(Duration::from_millis(100)).await;
                panic!("protocol_error_job fails in the server, as the suite asks")
            }
            "confirm_delete" => {
                let file = text(&arguments, &["filename"]);
                if answers.get("confirm").is_none() {
                    return Err(ask(json!({ "confirm": form(
                        &format!("Delete {file}?"),
                        json!({ "confirm": { "type": "boolean" } }),
                    ) })));
                }
                match answers["confirm"]["content"]["confirm"].as_bool() {
                    Some(true) => format!("Deleted {file}").into(),
                    _ => format!("Kept {file}").into(),
                }
            }
            "multi_input" => {
                if answers.get("first").is_none() {
                    let asked =
                        json!({ "name": { "type": "string" }, "confirm": { "type": "boolean" } });
                    return Err(ask(json!({
                        "first": form("The first name?", asked.clone()),
                        "second": form("The second name?", asked),
                    })));
                }
                format!(
                    "Got {} and {}",
                    text(&answers, &["first", "content", "name"]),
                    text(&answers, &["second", "content", "name"])
                )
                .into()
            }
            // Its user's name was asked at its gate (`ask_name_first`), before it became a task.
            "test_tool_with_task" => {
                tokio::time::sleep(Duration::from_millis(200)).await;
                format!("Hello, {}, from a task!", text(&arguments, &["user_name"])).into()
            }
            _ => "ok".into(),
        })
    }
}

/// `test_tool_with_task` asks its user's name at the gate, as an approval would: answered
/// with an input-required round trip before the call runs (and becomes a task). The answer
/// is put into the call's arguments.
#[hook(after_model)]
pub(crate) fn ask_name_first(cx: &mut Context, response: &mut ModelResponse) -> Flow {
    let asks = |call: &ToolCall| call.name == "test_tool_with_task";
    if !response.message.tool_calls.iter().any(asks) {
        return Flow::Continue;
    }
    let Some(answer) = cx.resume_as::<Value>() else {
        return Flow::interrupt(json!({ "inputRequests": {
            "user_name": form("What is your name?", json!({ "name": { "type": "string" } })),
        } }));
    };
    let name = answer.map_or(Value::Null, |answer| {
        answer["user_name"]["content"]["name"].clone()
    });
    for call in response
        .message
        .tool_calls
        .iter_mut()
        .filter(|call| asks(call))
    {
        call.arguments["user_name"] = name.clone();
    }
    Flow::Continue
}
