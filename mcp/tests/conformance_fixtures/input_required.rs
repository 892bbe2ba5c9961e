//! The conformance suite's fixture tools that ask the client (`test_input_required_result_*`
//! of SEP-2322, and `test_elicitation*`, `test_sampling`), written as a tool served by
//! hookchain is: the tool raises an interrupt whose payload is the MCP input requests it
//! needs, reads the client's answers on its resume (`cx.resume_value()`, by key), and may ask
//! again. The server asks a client of 2026-07-28 with input-required results, and a client of
//! 2025-11-25 in its session.

use hookchain::prelude::*;
use hookchain::{Content, Tool, ToolError, ToolSpec};
use serde_json::{Value, json};

/// The names of the fixtures.
pub(crate) const NAMES: [&str; 14] = [
    "test_missing_capability",
    "test_streaming_elicitation",
    "test_elicitation",
    "test_elicitation_sep1034_defaults",
    "test_elicitation_sep1330_enums",
    "test_sampling",
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

/// A form asking for one `field` of type `kind`.
fn elicit(message: &str, field: &str, kind: &str) -> Value {
    form(message, json!({ field: { "type": kind } }), &[field])
}

/// A form asking for `properties`, of which `required`.
fn form(message: &str, properties: Value, required: &[&str]) -> Value {
    json!({
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": message,
            "requestedSchema": { "type": "object", "properties": properties, "required": required },
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

    async fn call(&self, cx: ToolContext<'_>, arguments: Value) -> Result<Content, ToolError> {
        let answers = cx.resume_value().cloned().unwrap_or(Value::Null);
        let answered = |key: &str| answers.get(key).is_some();
        let text = |answer: &Value, path: &[&str]| {
            path.iter()
                .fold(answer, |value, key| &value[key])
                .as_str()
                .unwrap_or("?")
                .to_owned()
        };
        let completed = |answer: &Value| {
            format!(
                "Elicitation completed: action={}, content={}",
                text(answer, &["action"]),
                answer["content"]
            )
        };
        Ok(match self.0 {
            "test_elicitation" => {
                if !answered("user") {
                    let message = arguments["message"].as_str().unwrap_or("Your details?");
                    return Err(ask(json!({ "user": form(message, json!({
                        "username": { "type": "string", "description": "User's response" },
                        "email": { "type": "string", "description": "User's email address" },
                    }), &["username", "email"]) })));
                }
                let answer = &answers["user"];
                let action = text(answer, &["action"]);
                format!(
                    "User response: action: {action}, content: {}",
                    answer["content"]
                )
                .into()
            }
            "test_elicitation_sep1034_defaults" => {
                if !answered("defaults") {
                    return Err(ask(json!({ "defaults": form("Your profile?", json!({
                        "name": { "type": "string", "default": "John Doe" },
                        "age": { "type": "integer", "default": 30 },
                        "score": { "type": "number", "default": 95.5 },
                        "status": {
                            "type": "string",
                            "enum": ["active", "inactive", "pending"],
                            "default": "active",
                        },
                        "verified": { "type": "boolean", "default": true },
                    }), &[]) })));
                }
                completed(&answers["defaults"]).into()
            }
            "test_elicitation_sep1330_enums" => {
                if !answered("enums") {
                    return Err(ask(json!({ "enums": form("Pick some options", json!({
                        "untitledSingle": { "type": "string", "enum": ["option1", "option2", "option3"] },
                        "titledSingle": { "type": "string", "oneOf": [
                            { "const": "value1", "title": "First Option" },
                            { "const": "value2", "title": "Second Option" },
                            { "const": "value3", "title": "Third Option" },
                        ]},
                        "legacyEnum": {
                            "type": "string",
                            "enum": ["opt1", "opt2", "opt3"],
                            "enumNames": ["Option One", "Option Two", "Option Three"],
                        },
                        "untitledMulti": {
                            "type": "array",
                            "items": { "type": "string", "enum": ["option1", "option2", "option3"] },
                        },
                        "titledMulti": {
                            "type": "array",
                            "items": { "anyOf": [
                                { "const": "value1", "title": "First Choice" },
                                { "const": "value2", "title": "Second Choice" },
                                { "const": "value3", "title": "Third Choice" },
                            ]},
                        },
                    }), &[]) })));
                }
                completed(&answers["enums"]).into()
            }
            // Diagnostics of the stateless scenario: a call that needs sampling (refused with
            // -32021 to a client without it), and one that asks (an input-required result,
            // never a request of the server's own).
            "test_missing_capability" => {
                if !answered("sampling") {
                    return Err(ask(json!({ "sampling": sample("Say something", 10) })));
                }
                "sampled".into()
            }
            "test_streaming_elicitation" => {
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
            "test_sampling" => {
                if !answered("sampling") {
                    let prompt = arguments["prompt"].as_str().unwrap_or("Hello");
                    return Err(ask(json!({ "sampling": sample(prompt, 100) })));
                }
                format!(
                    "LLM response: {}",
                    text(&answers["sampling"], &["content", "text"])
                )
                .into()
            }
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
