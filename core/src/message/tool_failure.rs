//! A failed tool call as the application sees it: classified, with the full error.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use super::tool_error::ToolError;
use crate::report::{Report, find_in_chain};

/// Why a tool call failed, as wraps, `tracing` and the application see it: the tool, the kind of
/// failure and the full error. The model reads only [`message`](Self::message) (or what the
/// agent's [`tool_error_message`](crate::AgentBuilder::tool_error_message) policy makes of the
/// failure).
#[derive(Clone)]
pub struct ToolFailure {
    tool: String,
    kind: ToolFailureKind,
    error: Arc<dyn std::error::Error + Send + Sync>,
    /// The text the model reads by default.
    message: String,
    /// What [`for_log`](Self::for_log) says instead of the error's text, when that text may
    /// quote the call's arguments (bad arguments: serde quotes the values it refused).
    log: Option<String>,
}

/// The kind of a [`ToolFailure`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ToolFailureKind {
    /// The model called a tool that is not registered.
    UnknownTool,
    /// The arguments do not fit the tool.
    InvalidArguments,
    /// The tool failed.
    Failed,
    /// The tool failed with a message meant for the model ([`ToolError::ForModel`]).
    ForModel,
    /// The tool panicked.
    Panicked,
    /// The tool's output could not be turned into text.
    Output,
    /// A `wrap_tool_call` hook failed (with an error, or a panic).
    Middleware,
    /// The call did not finish in the time it was given (see
    /// [`Timeout`](crate::builtin::Timeout)).
    TimedOut,
}

impl ToolFailure {
    /// The failure of the tool `tool` with `error`.
    #[must_use]
    pub fn from_tool_error(tool: &str, error: ToolError) -> Self {
        use ToolFailureKind as Kind;
        let mut log = None;
        let (kind, message) = match &error {
            ToolError::UnknownTool { .. } => (Kind::UnknownTool, error.to_string()),
            ToolError::InvalidArguments { source, .. } => {
                log = Some(format!("{error}: {}", Mismatch(source)));
                (Kind::InvalidArguments, format!("{error}: {source}"))
            }
            ToolError::ForModel { message, .. } => (Kind::ForModel, message.clone()),
            ToolError::Panicked { .. } => (
                Kind::Panicked,
                format!("tool `{tool}` failed unexpectedly (it crashed)"),
            ),
            ToolError::Output { .. } => (Kind::Output, format!("tool `{tool}` failed")),
            ToolError::Failed { .. } | ToolError::Interrupt { .. } => {
                (Kind::Failed, format!("tool `{tool}` failed"))
            }
        };
        ToolFailure {
            tool: tool.to_owned(),
            kind,
            error: Arc::new(error),
            message,
            log,
        }
    }

    /// The call of `tool` did not finish within `limit`: a failure of kind
    /// [`TimedOut`](ToolFailureKind::TimedOut), which the model reads as
    /// "tool `name` timed out after 5s".
    #[must_use]
    pub fn timed_out(tool: &str, limit: Duration) -> Self {
        ToolFailure {
            tool: tool.to_owned(),
            kind: ToolFailureKind::TimedOut,
            error: Arc::new(TimedOut(limit)),
            message: format!("tool `{tool}` timed out after {limit:?}"),
            log: None,
        }
    }

    /// The failure of a `wrap_tool_call` hook around a call of `tool`.
    pub(crate) fn from_middleware(
        tool: &str,
        error: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Self::middleware(tool, Arc::new(error))
    }

    /// A `wrap_tool_call` hook around a call of `tool` panicked with `message`.
    pub(crate) fn from_middleware_panic(tool: &str, message: String) -> Self {
        Self::middleware(tool, Arc::new(MiddlewarePanicked(message)))
    }

    fn middleware(tool: &str, error: Arc<dyn std::error::Error + Send + Sync>) -> Self {
        ToolFailure {
            tool: tool.to_owned(),
            kind: ToolFailureKind::Middleware,
            error,
            message: format!("tool call `{tool}` failed"),
            log: None,
        }
    }

    /// The tool called.
    #[must_use]
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The kind of failure.
    #[must_use]
    pub fn kind(&self) -> ToolFailureKind {
        self.kind
    }

    /// The full error (its `source()` chain holds every cause): for logs and the application,
    /// not for the model.
    #[must_use]
    pub fn error(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
        &*self.error
    }

    /// The first error of type `E` among the full error and its causes: the error a tool
    /// returned (`Result<T, E>` from a `#[tool]` fn, [`ToolError::failed`]), a wrap hook's.
    ///
    /// ```
    /// use hookchain::prelude::*;
    /// use hookchain::tool;
    /// use serde_json::json;
    ///
    /// /// The application's error.
    /// #[derive(Debug)]
    /// struct NoSuchOrder(u64);
    ///
    /// impl std::fmt::Display for NoSuchOrder {
    ///     fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
    ///         write!(f, "there is no order {}", self.0)
    ///     }
    /// }
    ///
    /// impl std::error::Error for NoSuchOrder {}
    ///
    /// /// Where an order is.
    /// #[tool]
    /// async fn track(id: u64) -> Result<String, NoSuchOrder> {
    ///     Err(NoSuchOrder(id))
    /// }
    ///
    /// # futures::executor::block_on(async {
    /// let model = ScriptedModel::new([
    ///     ModelResponse::tool_calls([ToolCall::new("c1", "track", json!({ "id": 7 }))]),
    ///     ModelResponse::text("I could not find that order."),
    /// ]);
    /// let agent = Agent::builder(model).tool(track).build()?;
    /// // A tool's failure does not end the run: the model reads that the tool failed…
    /// let output = agent.run("Where is order 7?").await?;
    /// // …and the application finds the tool's own error in the run's output.
    /// let failure = &output.tool_failures[0];
    /// assert_eq!(failure.downcast_ref::<NoSuchOrder>().map(|e| e.0), Some(7));
    /// # Ok::<(), Error>(())
    /// # }).unwrap();
    /// ```
    #[must_use]
    pub fn downcast_ref<E: std::error::Error + 'static>(&self) -> Option<&E> {
        let error: &(dyn std::error::Error + 'static) = &*self.error;
        find_in_chain(error)
    }

    /// The failure as the agent's `WARN` log (and [`ToolRetry`](crate::builtin::ToolRetry)'s)
    /// writes it: never a value of the call's arguments.
    ///
    /// For bad arguments ([`InvalidArguments`](ToolFailureKind::InvalidArguments)) that is
    /// what did not fit, without the values serde quotes: the kind of mismatch, the type
    /// expected, and the fields serde names (`missing field `city``). Any other failure is its
    /// full error, every cause (the tool's or the middleware's own text, which the operator
    /// needs, so a tool should not put its arguments in its errors). The full error is always
    /// in [`error`](Self::error).
    ///
    /// ```
    /// use hookchain::tool::{ToolError, ToolFailure};
    ///
    /// let refused = serde_json::from_value::<u32>(serde_json::json!("4111 1111 1111 1111"));
    /// let error = ToolError::InvalidArguments {
    ///     tool: "pay".to_owned(),
    ///     source: refused.unwrap_err(),
    /// };
    /// let failure = ToolFailure::from_tool_error("pay", error);
    /// assert_eq!(
    ///     failure.for_log().to_string(),
    ///     "invalid arguments for tool `pay`: invalid type: string, expected u32"
    /// );
    /// ```
    #[must_use]
    pub fn for_log(&self) -> impl fmt::Display + '_ {
        ForLog(self)
    }

    /// What the model reads by default: a short message naming the tool and the kind of
    /// failure, with no internal detail — the error's own text only where it is meant for the
    /// model (bad arguments, an unknown tool, [`ToolError::ForModel`]).
    #[must_use]
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// What the model reads of a failed tool call, when the agent sets a policy
/// ([`AgentBuilder::tool_error_message`](crate::AgentBuilder::tool_error_message)).
#[derive(Clone)]
pub(crate) struct MessagePolicy(Arc<dyn Fn(&ToolFailure) -> String + Send + Sync>);

impl MessagePolicy {
    pub(crate) fn new(policy: impl Fn(&ToolFailure) -> String + Send + Sync + 'static) -> Self {
        MessagePolicy(Arc::new(policy))
    }

    pub(crate) fn message(&self, failure: &ToolFailure) -> String {
        (self.0)(failure)
    }
}

impl fmt::Debug for MessagePolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("MessagePolicy(..)")
    }
}

/// See [`ToolFailure::for_log`].
struct ForLog<'a>(&'a ToolFailure);

impl fmt::Display for ForLog<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0.log {
            Some(log) => f.write_str(log),
            None => fmt::Display::fmt(&Report(self.0.error()), f),
        }
    }
}

/// What a serde error says about arguments that did not fit, without the values it quotes
/// (serde's messages, from `serde::de::Error`'s provided methods): the kind of mismatch, what
/// was expected, the field named. A message of another form (a type's own check, a syntax
/// error) is only its category: it may hold anything.
struct Mismatch<'a>(&'a serde_json::Error);

impl fmt::Display for Mismatch<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = self.0.to_string();
        // `from_value` errors have no position; a parsed one ends with it.
        let text = match text.rfind(" at line ") {
            Some(at) if self.0.line() > 0 => &text[..at],
            _ => &text,
        };
        // "invalid type: string \"4111…\", expected u32": the value's kind, not the value.
        for prefix in ["invalid type: ", "invalid value: "] {
            if let Some(rest) = text.strip_prefix(prefix)
                && let Some((unexpected, expected)) = rest.rsplit_once(", expected ")
            {
                let kind = unexpected
                    .split(['`', '"'])
                    .next()
                    .unwrap_or_default()
                    .trim_end();
                return write!(f, "{prefix}{kind}, expected {expected}");
            }
        }
        // "unknown variant `4111…`, expected one of …": the variant is the model's value.
        if text.starts_with("unknown variant ") {
            return match text.rfind("`, expected ") {
                Some(at) => write!(f, "unknown variant, {}", &text[at + 3..]),
                None => f.write_str("unknown variant"),
            };
        }
        if text.starts_with("invalid length ") {
            return f.write_str(text);
        }
        // Field names: of the tool's schema (missing, duplicate), or the model's (unknown),
        // shown only when they look like one.
        for prefix in ["missing field ", "duplicate field ", "unknown field "] {
            if let Some(rest) = text.strip_prefix(prefix) {
                let name = rest
                    .strip_prefix('`')
                    .and_then(|rest| rest.split_once('`'))
                    .map(|(name, _)| name)
                    .filter(|name| {
                        name.len() <= 64
                            && name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                            && name
                                .chars()
                                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
                    });
                return match name {
                    Some(name) => write!(f, "{prefix}`{name}`"),
                    None => f.write_str(prefix.trim_end()),
                };
            }
        }
        f.write_str(match self.0.classify() {
            serde_json::error::Category::Data => "the arguments do not fit the tool's schema",
            serde_json::error::Category::Syntax | serde_json::error::Category::Eof => {
                "the arguments are not valid JSON"
            }
            serde_json::error::Category::Io => "the arguments could not be read",
        })
    }
}

/// See [`ToolFailure::timed_out`].
#[derive(Debug, thiserror::Error)]
#[error("the tool call did not finish within {0:?}")]
struct TimedOut(Duration);

/// A `wrap_tool_call` hook panicked.
#[derive(Debug, thiserror::Error)]
#[error("a middleware panicked: {0}")]
struct MiddlewarePanicked(String);

impl fmt::Debug for ToolFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolFailure")
            .field("tool", &self.tool)
            .field("kind", &self.kind)
            .field("error", &self.error)
            .finish()
    }
}

// Two failures are the same if they tell the same: tool, kind and error text (errors have no
// equality of their own).
impl PartialEq for ToolFailure {
    fn eq(&self, other: &Self) -> bool {
        self.tool == other.tool
            && self.kind == other.kind
            && self.error.to_string() == other.error.to_string()
    }
}

impl Eq for ToolFailure {}

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::json;

    use super::*;

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    enum Mode {
        Fast,
        Slow,
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Args {
        mode: Mode,
        tags: [u8; 2],
        #[serde(deserialize_with = "checked")]
        pin: u32,
    }

    fn checked<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<u32, D::Error> {
        let pin = u32::deserialize(deserializer)?;
        if pin == 4111 {
            return Err(serde::de::Error::custom(format!("pin {pin} is wrong")));
        }
        Ok(pin)
    }

    /// What `for_log` says of arguments `value` refused by `Args`.
    fn logged(value: serde_json::Value) -> String {
        let source = serde_json::from_value::<Args>(value).unwrap_err();
        let error = ToolError::InvalidArguments {
            tool: "t".to_owned(),
            source,
        };
        let failure = ToolFailure::from_tool_error("t", error);
        let logged = failure.for_log().to_string();
        logged
            .strip_prefix("invalid arguments for tool `t`: ")
            .unwrap_or(&logged)
            .to_owned()
    }

    #[test]
    fn a_log_of_bad_arguments_keeps_the_mismatch_and_drops_the_values() {
        let secret = "4111 1111 1111 1111";
        assert_eq!(
            logged(json!({ "mode": secret, "tags": [1, 2], "pin": 1 })),
            "unknown variant, expected `Fast` or `Slow`"
        );
        assert_eq!(
            logged(json!({ "mode": "Fast", "tags": [1, 2, 3], "pin": 1 })),
            "invalid length 3, expected fewer elements in array"
        );
        assert_eq!(
            logged(json!({ "mode": "Fast", "tags": [1, 4111], "pin": 1 })),
            "invalid value: integer, expected u8"
        );
        assert_eq!(
            logged(json!({ "mode": "Fast", "tags": [1, 2], "pin": 4111 })),
            "the arguments do not fit the tool's schema"
        );
        assert_eq!(
            logged(json!({ "mode": "Fast", "tags": [1, 2] })),
            "missing field `pin`"
        );
        let parsed = serde_json::from_str::<Args>(r#"{"mode": "4111 1111"#).unwrap_err();
        let failure = ToolFailure::from_tool_error(
            "t",
            ToolError::InvalidArguments {
                tool: "t".to_owned(),
                source: parsed,
            },
        );
        assert!(!failure.for_log().to_string().contains("4111"));
    }

    #[test]
    fn a_log_of_another_failure_is_its_full_error() {
        let failure =
            ToolFailure::from_tool_error("t", ToolError::failed("t", "connection refused"));
        assert_eq!(
            failure.for_log().to_string(),
            "tool `t` failed: connection refused"
        );
    }
}
