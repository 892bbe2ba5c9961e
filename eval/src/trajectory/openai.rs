//! A trajectory read from OpenAI's chat messages, the format agentevals' datasets are in.

use serde_json::Value;

use super::{ModelStep, Step, ToolCallStep, ToolResultStep, Trajectory};
use crate::TrajectoryError;

impl Trajectory {
    /// Reads a list of OpenAI chat messages (`role`, `content`, an assistant's `tool_calls`
    /// with `function.name` and `function.arguments`, a tool's `tool_call_id`), or an object
    /// holding one under `"messages"`, as agentevals accepts them. Arguments may be a JSON
    /// string (OpenAI's form) or an object; content may be a string or a list of text parts.
    ///
    /// # Errors
    ///
    /// A [`TrajectoryError`] saying where, for input that is not such a list: a message
    /// without a known role, a tool call without a name, arguments that are not JSON.
    pub fn from_openai_messages(messages: &Value) -> Result<Self, TrajectoryError> {
        let list = match messages {
            Value::Array(list) => list,
            Value::Object(object) => match object.get("messages") {
                Some(Value::Array(list)) => list,
                _ => {
                    return Err(TrajectoryError::new(
                        "",
                        "expected a list of messages, or an object with one under \"messages\"",
                    ));
                }
            },
            _ => return Err(TrajectoryError::new("", "expected a list of messages")),
        };
        list.iter()
            .enumerate()
            .map(|(index, message)| read_message(index, message))
            .collect::<Result<Vec<_>, _>>()
            .map(Self::new)
    }
}

fn read_message(index: usize, message: &Value) -> Result<Step, TrajectoryError> {
    let at = |field: &str| format!("[{index}]{field}");
    let role = message
        .get("role")
        .and_then(Value::as_str)
        .ok_or_else(|| TrajectoryError::new(at(".role"), "missing, or not a string"))?;
    let text = content_text(message.get("content"));
    let name = message
        .get("name")
        .and_then(Value::as_str)
        .map(str::to_owned);
    match role {
        "system" | "developer" => Ok(Step::System { text }),
        "user" | "human" => Ok(Step::User { text }),
        "assistant" | "ai" => {
            let calls = match message.get("tool_calls") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(calls)) => calls
                    .iter()
                    .enumerate()
                    .map(|(i, call)| read_call(&at(&format!(".tool_calls[{i}]")), call))
                    .collect::<Result<_, _>>()?,
                Some(_) => return Err(TrajectoryError::new(at(".tool_calls"), "not a list")),
            };
            Ok(Step::Model(ModelStep {
                agent: name,
                text,
                tool_calls: calls,
            }))
        }
        "tool" => Ok(Step::ToolResult(ToolResultStep {
            call_id: message
                .get("tool_call_id")
                .and_then(Value::as_str)
                .map(str::to_owned),
            name,
            text,
            is_error: false,
        })),
        other => Err(TrajectoryError::new(
            at(".role"),
            format!("unknown role {other:?}"),
        )),
    }
}

/// A tool call in OpenAI's form (`function.name`, `function.arguments`), or LangChain's
/// (`name`, `args`), which agentevals also accepts.
fn read_call(at: &str, call: &Value) -> Result<ToolCallStep, TrajectoryError> {
    let function = call.get("function").unwrap_or(call);
    let name = function
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            TrajectoryError::new(format!("{at}.function.name"), "missing, or not a string")
        })?;
    let arguments = match function.get("arguments").or_else(|| function.get("args")) {
        None | Some(Value::Null) => Value::Object(serde_json::Map::new()),
        // OpenAI's arguments are a JSON document in a string; agentevals parses it.
        Some(Value::String(json)) => serde_json::from_str(json).map_err(|error| {
            TrajectoryError::new(
                format!("{at}.function.arguments"),
                format!("not JSON: {error}"),
            )
        })?,
        Some(value) => value.clone(),
    };
    let mut step = ToolCallStep::new(name, arguments);
    step.id = call.get("id").and_then(Value::as_str).map(str::to_owned);
    Ok(step)
}

/// A message's content as text: a string, or the text parts of a list, joined.
fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|part| part.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}
