//! An MCP server's tool as a hookchain [`Tool`].

use std::sync::Arc;

use hookchain_core::message::Content;
use hookchain_core::{Tool, ToolContext, ToolError, ToolSpec};

use crate::connection::{Answered, CallError, Calling, Connection};
use crate::elicitation::{
    Elicitation, ElicitationAnswer, ElicitationReply, InputRound, RoundError,
};
use crate::error::Error;
use crate::oauth::McpAuthorization;
use crate::output::tool_output;

/// A tool of an MCP server, as the agent sees it: a [`Tool`] like any other, so every
/// `wrap_tool_call` middleware (approval, retry, timeouts, limits, caches) applies to it as to
/// a `#[tool]`.
///
/// Its [`spec`](Tool::spec) has the provider-safe name (see
/// [`provider_safe_names`](crate::provider_safe_names)) and the server's description and input
/// schema (with `"properties"` where it had none); a call sends `tools/call` with the
/// server's own name for the tool. What the model reads:
///
/// - the result's content: text, images, resource links, structured JSON (part by part: see
///   the crate's docs), within the server's
///   [`max_result_bytes`](crate::McpServer::max_result_bytes) (1 MiB by default: text beyond
///   it is cut, images beyond it dropped, with a note saying what);
/// - for a result with `isError: true`, the server's text, as a [`ToolError::ForModel`];
/// - for a tool the server no longer offers (it announced a changed list), or a call it
///   refused with a JSON-RPC error (an unknown tool, invalid arguments), a short message
///   saying so ([`ToolError::ForModel`]);
/// - for a call that timed out, a server that stopped during the call or cannot be started
///   again, that the tool failed ([`ToolError::Failed`], which a `ToolRetry` retries; the
///   application gets why in [`RunOutput::tool_failures`](hookchain_core::RunOutput::tool_failures)).
///   The next call starts a new session (a stdio server is started again) when the server
///   died, or does not answer a ping after a timeout;
/// - for a call an OAuth server refuses until a person authorizes, with no
///   [`AuthorizationHandler`](crate::oauth::AuthorizationHandler), nothing yet: the run pauses
///   on an [`McpAuthorization`] interrupt, and the call is made once it is resumed with the
///   person's answer (see [`crate::oauth`]).
#[derive(Clone)]
pub struct McpTool {
    spec: ToolSpec,
    original: Arc<str>,
    connection: Arc<Connection>,
}

impl McpTool {
    pub(crate) fn new(spec: ToolSpec, original: String, connection: Arc<Connection>) -> Self {
        Self {
            spec,
            original: original.into(),
            connection,
        }
    }

    /// The name the model calls the tool by.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.spec.name
    }

    /// The server's own name for the tool (sent in `tools/call`).
    #[must_use]
    pub fn original_name(&self) -> &str {
        &self.original
    }

    /// The name of the server the tool is from.
    #[must_use]
    pub fn server(&self) -> &str {
        self.connection.server().name()
    }
}

impl std::fmt::Debug for McpTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTool")
            .field("name", &self.spec.name)
            .field("original", &self.original)
            .field("server", &self.server())
            .finish()
    }
}

impl Tool for McpTool {
    fn spec(&self) -> ToolSpec {
        self.spec.clone()
    }

    async fn call(
        &self,
        cx: ToolContext<'_>,
        arguments: serde_json::Value,
    ) -> Result<Content, ToolError> {
        let name = &self.spec.name;
        let arguments = match arguments {
            serde_json::Value::Object(arguments) => Some(arguments),
            // Models send `null` (or nothing) for a tool without arguments.
            serde_json::Value::Null => None,
            _ => {
                return Err(ToolError::for_model(
                    name.as_str(),
                    "the arguments must be a JSON object",
                ));
            }
        };
        // Resumed after a person authorized at the server's authorization server: the code
        // exchanged for a token (nothing called when that fails), then the call.
        let authorization = cx
            .interrupt_payload()
            .and_then(McpAuthorization::from_payload);
        // Resumed after the server asked: the answers, in order, and under 2026-07-28 the
        // round they answer (kept in the interrupt's payload, so in the run's checkpoint).
        let (calling, given) = match cx.resume_value() {
            Some(value) if let Some(asked) = authorization => {
                let callback = asked
                    .read_answer(value)
                    .map_err(|error| ToolError::failed(name.as_str(), error))?;
                self.connection
                    .complete_authorization(&asked, &callback)
                    .await
                    .map_err(|error| ToolError::failed(name.as_str(), error))?;
                (Calling::First(Vec::new()), Vec::new())
            }
            Some(value) => {
                let answers = ElicitationReply::from_resume_value(value)
                    .map_err(|error| ToolError::for_model(name.as_str(), error))?
                    .answers;
                let round = cx
                    .interrupt_payload()
                    .and_then(Elicitation::from_payload)
                    .and_then(|asked| asked.round);
                match round {
                    Some(round) => match round.responses(&answers) {
                        Some((request_state, responses)) => (
                            Calling::Again {
                                request_state,
                                responses,
                            },
                            Vec::new(),
                        ),
                        // The round's next question: the run pauses on it, nothing is sent.
                        None => return Err(self.pause_on(round, answers)),
                    },
                    None => (Calling::First(answers.clone()), answers),
                }
            }
            None => (Calling::First(Vec::new()), Vec::new()),
        };
        // The server's progress notifications, to a streamed run's consumer.
        let on_progress = |report: &rmcp::model::ProgressNotificationParam| {
            cx.progress(report.progress, report.total, report.message.as_deref());
        };
        let answered = self
            .connection
            .call(
                &self.original,
                arguments,
                cx.idempotency_key(),
                calling,
                on_progress,
            )
            .await
            .map_err(|error| self.call_error(error))?;
        match answered {
            Answered::Result(result) => {
                tool_output(name, result, self.connection.server().max_result_bytes)
            }
            Answered::Asked(asked) => {
                Err(self.interrupt(Elicitation::new(self.server(), name, asked, given)))
            }
            Answered::Round(round) => Err(self.pause_on(round, Vec::new())),
        }
    }

    fn check_arguments(&self, arguments: &serde_json::Value) -> Result<(), ToolError> {
        if arguments.is_object() || arguments.is_null() {
            Ok(())
        } else {
            Err(ToolError::for_model(
                self.spec.name.as_str(),
                "the arguments must be a JSON object",
            ))
        }
    }

    /// An answer to the elicitation interrupt a call raised must be
    /// [`Elicitation::answer`]'s value: refused before the run resumes otherwise.
    fn check_answer(
        &self,
        _arguments: &serde_json::Value,
        answer: &hookchain_core::interrupt::Answer<'_>,
    ) -> Result<(), ToolError> {
        let name = self.spec.name.as_str();
        // An authorization's answer: for its server, with its `state`.
        if let Some(asked) = McpAuthorization::from_payload(&answer.interrupt().payload) {
            return asked
                .read_answer(answer.value())
                .map(drop)
                .map_err(|error| ToolError::failed(name, error));
        }
        let reply = ElicitationReply::from_resume_value(answer.value())
            .map_err(|error| ToolError::failed(name, error))?;
        // A round's answers are its earlier questions' and this one's: `Elicitation::answer`.
        if let Some(asked) = Elicitation::from_payload(&answer.interrupt().payload)
            && asked.round.is_some()
            && reply.answers.len() != asked.answered.len() + 1
        {
            return Err(ToolError::failed(
                name,
                format!(
                    "the answer to this elicitation must carry the {} earlier answers of its \
                     round and this one: `Elicitation::answer`'s value",
                    asked.answered.len()
                ),
            ));
        }
        Ok(())
    }
}

impl McpTool {
    /// The error of a call that got no result: an authorization left to a person (no
    /// handler) pauses the run on it; the others as [`tool_error`] says.
    fn call_error(&self, error: CallError) -> ToolError {
        match error {
            CallError::Unauthorized {
                source: Error::AuthorizationRequired { url, .. },
                ..
            }
            | CallError::Unavailable {
                source: Error::AuthorizationRequired { url, .. },
                ..
            } => {
                let challenge = self.connection.authorization_challenge(&url);
                let asked = McpAuthorization::new(self.server(), &self.spec.name, url, challenge);
                tracing::info!(server = %self.server(), tool = %self.spec.name, "the MCP server needs a person to authorize: pausing the run");
                ToolError::Interrupt {
                    payload: asked.to_payload(),
                }
            }
            error => tool_error(&self.spec.name, error),
        }
    }

    /// The interrupt that pauses the run on `elicitation`.
    fn interrupt(&self, elicitation: Elicitation) -> ToolError {
        match serde_json::to_value(elicitation) {
            Ok(payload) => ToolError::Interrupt { payload },
            Err(source) => ToolError::Output {
                tool: self.spec.name.clone(),
                source,
            },
        }
    }

    /// The interrupt that pauses the run on the question of `round` after the `answered` ones.
    fn pause_on(&self, round: InputRound, answered: Vec<ElicitationAnswer>) -> ToolError {
        match Elicitation::of_round(self.server(), &self.spec.name, round, answered) {
            Some(elicitation) => self.interrupt(elicitation),
            // Every question answered: `responses` would have called again. Not reached.
            None => ToolError::failed(
                self.spec.name.as_str(),
                "the server's round of questions has no question left",
            ),
        }
    }
}

/// The error of a call that got no result. A tool the server no longer offers, and a call
/// the server refused (unknown tool, invalid arguments: a JSON-RPC error), are said to the
/// model, which can act on them. A call that timed out, a server that stopped during the call
/// or could not be started again, are failures ([`ToolError::Failed`]): the model reads that
/// the tool failed, the application and `tracing` get why
/// ([`RunOutput::tool_failures`](hookchain_core::RunOutput::tool_failures)), and a
/// [`ToolRetry`](hookchain_core::builtin::ToolRetry) retries them (on a new session when the
/// server died).
fn tool_error(tool: &str, error: CallError) -> ToolError {
    match error {
        CallError::NotOffered { .. } => ToolError::for_model(
            tool,
            format!("tool `{tool}` is no longer offered by its server; do not call it again"),
        ),
        CallError::Refused { message, .. } => {
            ToolError::for_model(tool, format!("tool `{tool}` refused the call: {message}"))
        }
        error @ (CallError::Timeout { .. }
        | CallError::Disconnected { .. }
        | CallError::Unexpected { .. }
        | CallError::Unavailable { .. }
        | CallError::Unauthorized { .. }) => ToolError::failed(tool, error),
        CallError::Input {
            source: source @ RoundError::Unsupported(_),
            ..
        } => ToolError::for_model(tool, format!("tool `{tool}` could not be called: {source}")),
        error @ CallError::Input { .. } => ToolError::failed(tool, error),
    }
}
