//! Structured output: a JSON schema the answer must follow, and the answer parsed into a type.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::{ModelResponse, StopReason};

/// Asks the model to answer with JSON that follows a schema (OpenAI's `response_format`; on
/// providers without it, the schema goes into the instructions). Read the answer with
/// [`ModelResponse::parse`].
///
/// ```
/// use hookchain::model::ResponseFormat;
/// use hookchain::prelude::*;
/// use schemars::JsonSchema;
/// use serde::Deserialize;
///
/// #[derive(Debug, PartialEq, Deserialize, JsonSchema)]
/// struct Weather {
///     city: String,
///     celsius: i32,
/// }
///
/// let mut request = ModelRequest::new(vec![Message::user("Weather in Lisbon, as JSON")]);
/// request.response_format = Some(ResponseFormat::of::<Weather>());
///
/// let answer = ModelResponse::text(r#"{"city": "Lisbon", "celsius": 18}"#);
/// let weather: Weather = answer.parse()?;
/// assert_eq!(weather, Weather { city: "Lisbon".into(), celsius: 18 });
///
/// // An answer that does not fit says why.
/// let wrong = ModelResponse::text(r#"{"city": "Lisbon"}"#);
/// let error = wrong.parse::<Weather>().unwrap_err();
/// assert!(hookchain::error::Report(&error).to_string().contains("missing field `celsius`"));
/// # Ok::<(), hookchain::model::OutputError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ResponseFormat {
    /// A name for the schema (providers ask for one).
    pub name: String,
    /// The JSON schema of the answer.
    pub schema: serde_json::Value,
    /// Whether the provider must follow the schema exactly (OpenAI's strict mode).
    #[serde(default)]
    pub strict: bool,
}

impl ResponseFormat {
    /// The format of answers that deserialize into `T`, from its `schemars` schema (strict).
    #[must_use]
    pub fn of<T: JsonSchema>() -> Self {
        let mut schema = schemars::schema_for!(T).to_value();
        let name = schema
            .get("title")
            .and_then(serde_json::Value::as_str)
            .unwrap_or("answer")
            .to_owned();
        // Providers want the schema itself: no `$schema` or `title` noise at its top.
        if let Some(object) = schema.as_object_mut() {
            object.remove("$schema");
            object.remove("title");
        }
        ResponseFormat {
            name,
            schema,
            strict: true,
        }
    }

    /// A format with a hand-written `schema`, named `name`.
    pub fn new(name: impl Into<String>, schema: serde_json::Value) -> Self {
        ResponseFormat {
            name: name.into(),
            schema,
            strict: false,
        }
    }
}

/// Why an answer did not parse into the type asked for.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OutputError {
    /// The answer is not JSON, or does not fit the type.
    #[error("the answer does not fit the expected type")]
    Invalid(#[source] serde_json::Error),
    /// The model answered with tool calls and no text.
    #[error("the model answered with no text to parse")]
    Empty,
    /// The model did not finish its answer (refused, filtered, cut off by the token limit):
    /// its text is no answer to parse.
    #[error("the model did not finish its answer ({0:?})")]
    Unfinished(StopReason),
}

impl ModelResponse {
    /// The answer's text parsed as JSON into `T` (the text may sit in a Markdown code fence, as
    /// models without a JSON mode write it). The error says what did not fit.
    pub fn parse<T: DeserializeOwned>(&self) -> Result<T, OutputError> {
        if !self.stop_reason.is_answer() {
            return Err(OutputError::Unfinished(self.stop_reason));
        }
        parse_answer(&self.message.text())
    }
}

/// An answer's text parsed as JSON into `T` (see [`ModelResponse::parse`]).
pub(crate) fn parse_answer<T: DeserializeOwned>(text: &str) -> Result<T, OutputError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(OutputError::Empty);
    }
    serde_json::from_str(unfenced(text)).map_err(OutputError::Invalid)
}

/// `text` without a surrounding Markdown code fence (```json … ```), if it has one.
fn unfenced(text: &str) -> &str {
    let Some(inner) = text.strip_prefix("```") else {
        return text;
    };
    let Some(inner) = inner.strip_suffix("```") else {
        return text;
    };
    // Drop the info string (`json`) on the opening line.
    inner
        .split_once('\n')
        .map_or(inner, |(_, body)| body)
        .trim()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, Deserialize, JsonSchema)]
    struct Point {
        x: i32,
        y: i32,
    }

    #[test]
    fn a_fenced_answer_parses() {
        let answer = ModelResponse::text("```json\n{\"x\": 1, \"y\": 2}\n```");
        assert_eq!(answer.parse::<Point>().unwrap(), Point { x: 1, y: 2 });
    }

    #[test]
    fn the_schema_has_no_noise_and_is_named() {
        let format = ResponseFormat::of::<Point>();
        assert_eq!(format.name, "Point");
        assert!(format.schema.get("$schema").is_none());
        assert_eq!(format.schema["type"], "object");
        assert!(format.strict);
    }

    #[test]
    fn an_empty_answer_is_an_error_not_a_default() {
        let answer = ModelResponse::tool_calls([]);
        assert!(matches!(answer.parse::<Point>(), Err(OutputError::Empty)));
    }
}
