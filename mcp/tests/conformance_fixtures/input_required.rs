//! The conformance suite's fixture tools of input-required results (SEP-2322,
//! `test_input_required_result_*`), written as a tool served by hookchain is: the tool raises
//! an interrupt whose payload is the MCP input requests it needs, reads the client's answers
//! on its resume (`cx.resume_value()`, by key), and may ask again.

use hookchain::prelude::*;
use hookchain::{Content, Tool, ToolError, ToolSpec};
use serde_json::{Value, json};

/// The names of the fixtures.
pub(crate) const NAMES: [&str; 8] = [
    "test_input_required_result_elicitation",
    "test_input_required_result_sampling",
    "test_input_required_result_list_roots",
    "test_input_required_result_request_state",
    "test_input_required_result_multiple_inputs",
    "test_input_required_result_multi_round",
    "test_input_required_result_tampered_state",
    "test_input_required_result_capabilities",
];

/// One of the fixtures, by its name.
pub(crate) struct InputRequired(pub(crate) &'static str);

fn elicit(message: &str, field: &str, kind: &str) -> Value {
    json!({
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": message,
            "requestedSchema": {
                "type": "object",
                "properties": { field: { "type": kind } },
                "required": [field],
            },
        },
    })
}

fn sample(text: &str, max_tokens: u32) -> Value {
    json!({
        "method": "sampling/createMessage",
        "params": {
            "messages": [{ "role": "user", "content": { "type": "text", "text": text } }],
            "maxTokens": max_tokens,
        },
    })
}

fn roots() -> Value {
    json!({ "method": "roots/list", "params": {} })
}

/// Asks for `requests` (by key): the interrupt a served call turns into an input-required
/// result.
fn ask(requests: Value) -> ToolError {
    ToolError::Interrupt {
        payload: json!({ "inputRequests": requests }),
    }
}

impl Tool for InputRequired {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            self.0,
            format!("The conformance suite's `{}`.", self.0),
            json!({ "type": "object", "properties": {} }),
        )
    }

    async fn call(&self, cx: ToolContext<'_>, _arguments: Value) -> Result<Content, ToolError> {
        let answers = cx.resume_value().cloned().unwrap_or(Value::Null);
        let answered = |key: &str| answers.get(key).is_some();
        let text = |answer: &Value, path: &[&str]| {
            path.iter()
                .fold(answer, |value, key| &value[key])
                .as_str()
                .unwrap_or("?")
                .to_owned()
        };
        Ok(match self.0 {
            "test_input_required_result_elicitation"
            | "test_input_required_result_tampered_state" => {
                if !answered("user_name") {
                    return Err(ask(
                        json!({ "user_name": elicit("What is your name?", "name", "string") }),
                    ));
                }
                format!(
                    "Hello, {}!",
                    text(&answers["user_name"], &["content", "name"])
                )
                .into()
            }
            "test_input_required_result_sampling" => {
                if !answered("capital_question") {
                    return Err(ask(
                        json!({ "capital_question": sample("What is the capital of France?", 100) }),
                    ));
                }
                let said = text(&answers["capital_question"], &["content", "text"]);
                format!("The model said: {said}").into()
            }
            "test_input_required_result_list_roots" => {
                if !answered("client_roots") {
                    return Err(ask(json!({ "client_roots": roots() })));
                }
                let uris: Vec<String> = answers["client_roots"]["roots"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|root| text(root, &["uri"]))
                    .collect();
                format!("The client's roots: {}", uris.join(", ")).into()
            }
            "test_input_required_result_request_state" => {
                if !answered("confirm") {
                    return Err(ask(
                        json!({ "confirm": elicit("Please confirm", "ok", "boolean") }),
                    ));
                }
                // The state came back sealed and whole: the server opened it to get here.
                "state-ok: confirmed".into()
            }
            "test_input_required_result_multiple_inputs" => {
                if !answered("user_name") {
                    return Err(ask(json!({
                        "user_name": elicit("What is your name?", "name", "string"),
                        "greeting": sample("Generate a greeting", 50),
                        "client_roots": roots(),
                    })));
                }
                format!(
                    "{} {}",
                    text(&answers["greeting"], &["content", "text"]),
                    text(&answers["user_name"], &["content", "name"])
                )
                .into()
            }
            "test_input_required_result_multi_round" => {
                if answered("step1") {
                    return Err(ask(json!({
                        "step2": elicit("Step 2: What is your favorite color?", "color", "string"),
                    })));
                }
                if !answered("step2") {
                    return Err(ask(json!({
                        "step1": elicit("Step 1: What is your name?", "name", "string"),
                    })));
                }
                format!(
                    "Favorite color: {}",
                    text(&answers["step2"], &["content", "color"])
                )
                .into()
            }
            "test_input_required_result_capabilities" => {
                if answers.is_null() {
                    // Both kinds asked for: the server asks only what the client can answer.
                    return Err(ask(json!({
                        "user_name": elicit("What is your name?", "name", "string"),
                        "greeting": sample("Generate a greeting", 50),
                    })));
                }
                "answered".into()
            }
            _ => "ok".into(),
        })
    }
}
