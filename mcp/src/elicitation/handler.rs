//! A server's question answered in the process, when the answer is at hand.

use serde_json::{Map, Value};

use super::ElicitationAnswer;

/// What a server asks for a call, as an [`ElicitationHandler`] sees it.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct ElicitationRequest<'a> {
    /// The server that asks.
    pub server: &'a str,
    /// The server's own name of the tool whose call asks.
    pub tool: &'a str,
    /// What the server says to the user.
    pub message: &'a str,
    /// The form the answer fills: a JSON schema of an object with primitive properties.
    pub requested_schema: &'a Value,
}

/// Answers a server's elicitations in the process
/// ([`McpServer::on_elicitation`](crate::McpServer::on_elicitation)): an answer it gives goes
/// to the server at once, and the run does not pause; `None` leaves the question to a person
/// (the run pauses on it, as without a handler).
///
/// Under MCP 2025-11-25 a call that paused is made again after the person's answer, and its
/// earlier questions are asked again: a handler is asked them again, and should answer a
/// question the same way each time.
pub trait ElicitationHandler: Send + Sync {
    /// The answer to `request`, if it is at hand.
    fn answer(&self, request: &ElicitationRequest<'_>) -> Option<ElicitationAnswer>;
}

impl<F> ElicitationHandler for F
where
    F: Fn(&ElicitationRequest<'_>) -> Option<ElicitationAnswer> + Send + Sync,
{
    fn answer(&self, request: &ElicitationRequest<'_>) -> Option<ElicitationAnswer> {
        self(request)
    }
}

/// A handler that accepts every form with its schema's defaults (the values a form would show
/// filled in): for a client with nobody to ask.
#[must_use]
pub fn accept_defaults(request: &ElicitationRequest<'_>) -> Option<ElicitationAnswer> {
    Some(ElicitationAnswer::Accept {
        content: defaults(request.requested_schema),
    })
}

/// The `default` of each property of `schema` that has one.
pub(crate) fn defaults(schema: &Value) -> Map<String, Value> {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|properties| {
            properties
                .iter()
                .filter_map(|(name, property)| {
                    Some((name.clone(), property.get("default")?.clone()))
                })
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_defaults_are_the_properties_that_have_one() {
        let schema = json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "default": "John Doe"},
                "age": {"type": "integer", "default": 30},
                "verified": {"type": "boolean", "default": true},
                "email": {"type": "string"}
            }
        });
        assert_eq!(
            Value::Object(defaults(&schema)),
            json!({"name": "John Doe", "age": 30, "verified": true})
        );
        assert!(defaults(&json!({"type": "object"})).is_empty());
        assert!(defaults(&json!("not a schema")).is_empty());
    }
}
