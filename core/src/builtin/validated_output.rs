//! An answer that must be a `T`: one that does not parse or validate goes back to the model,
//! with what was wrong, a set number of times.
//!
//! ```
//! use hookchain::builtin::ValidatedOutput;
//! use hookchain::prelude::*;
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//!
//! #[derive(Debug, Deserialize, JsonSchema)]
//! struct Forecast {
//!     city: String,
//!     celsius: f64,
//! }
//!
//! # futures::executor::block_on(async {
//! let model = ScriptedModel::new([
//!     ModelResponse::text("It is warm in Lyon."),                   // not JSON
//!     ModelResponse::text(r#"{"city": "Lyon", "celsius": 412}"#),    // not plausible
//!     ModelResponse::text(r#"{"city": "Lyon", "celsius": 21.5}"#),
//! ]);
//! let agent = Agent::builder(model)
//!     .chain(
//!         ValidatedOutput::<Forecast>::builder()
//!             .validate(|forecast| match forecast.celsius {
//!                 -90.0..=60.0 => Ok(()),
//!                 other => Err(format!("{other} °C is not a temperature on Earth")),
//!             })
//!             .max_retries(2)
//!             .build(),
//!     )
//!     .build()?;
//! let output = agent.run("Weather in Lyon, as JSON").await?;
//! let forecast: Forecast = output.parse()?;
//! assert_eq!(forecast.celsius, 21.5);
//! assert_eq!(output.model_calls, 3);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
//!
//! # Rules
//!
//! - Every model request asks for `T`'s JSON schema as its response format
//!   ([`ResponseFormat::of`]), unless the agent or an earlier hook set one.
//! - A final answer (no tool calls, finished:
//!   [`StopReason::is_answer`](crate::StopReason::is_answer)) is parsed as a `T` (the text may
//!   sit in a code fence), then given to the validator, if any. An answer that
//!   was refused, filtered or cut off is left alone: the run ends as such
//!   ([`EndReason::Refused`](crate::EndReason) …).
//! - An answer that does not parse or validate stays in the history, the model is called again,
//!   and the next request ends with a user message saying what was wrong and asking for a
//!   corrected answer; at most [`max_retries`](ValidatedOutputBuilder::max_retries) times per
//!   run (2 by default). The next failure fails the run with [`OutputRejected`], naming the
//!   last error.
//! - The count is run-scoped state (checkpointed). A streamed run shows the rejected answer's
//!   events, then the next answer's; the correction request enters the history, not the
//!   stream.

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use hookchain_macros::middleware;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::context::Context;
use crate::message::Message;
use crate::middleware::{Flow, Jump};
use crate::model::{ModelRequest, ModelResponse, ResponseFormat, parse_answer};

/// A check of a parsed answer: `Err` says what is wrong, for the model to read.
type Validator<T> = Arc<dyn Fn(&T) -> Result<(), String> + Send + Sync>;

/// Makes the run's answer a `T`: see [the module's docs](self).
pub struct ValidatedOutput<T> {
    format: ResponseFormat,
    validate: Option<Validator<T>>,
    max_retries: u32,
    _answer: PhantomData<fn() -> T>,
}

/// Builds a [`ValidatedOutput`].
#[must_use]
pub struct ValidatedOutputBuilder<T> {
    validate: Option<Validator<T>>,
    max_retries: u32,
}

/// The answers of this run that did not parse or validate, and the correction to ask for
/// (run-scoped state of [`ValidatedOutput`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RejectedAnswers {
    /// How many were sent back.
    pub retries: u32,
    /// What to tell the model before its next call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub correction: Option<String>,
}

/// The error of a run whose answer still did not parse or validate after the retries.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the answer was rejected {attempts} times; the last time: {error}")]
#[non_exhaustive]
pub struct OutputRejected {
    /// How many answers were rejected.
    pub attempts: u32,
    /// What was wrong with the last one.
    pub error: String,
}

impl<T: JsonSchema> ValidatedOutput<T> {
    /// Answers must parse as a `T`, with 2 retries and no validator.
    #[must_use]
    pub fn new() -> Self {
        Self::builder().build()
    }

    /// A builder: a validator, how many retries.
    pub fn builder() -> ValidatedOutputBuilder<T> {
        ValidatedOutputBuilder {
            validate: None,
            max_retries: 2,
        }
    }
}

impl<T: JsonSchema> Default for ValidatedOutput<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> fmt::Debug for ValidatedOutput<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ValidatedOutput")
            .field("format", &self.format.name)
            .field("validate", &self.validate.is_some())
            .field("max_retries", &self.max_retries)
            .finish()
    }
}

impl<T> fmt::Debug for ValidatedOutputBuilder<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ValidatedOutputBuilder")
            .field("validate", &self.validate.is_some())
            .field("max_retries", &self.max_retries)
            .finish()
    }
}

impl<T: JsonSchema> ValidatedOutputBuilder<T> {
    /// Checks each parsed answer; `Err` says what is wrong (the model reads it).
    pub fn validate(
        mut self,
        validate: impl Fn(&T) -> Result<(), String> + Send + Sync + 'static,
    ) -> Self {
        self.validate = Some(Arc::new(validate));
        self
    }

    /// How many rejected answers go back to the model in a run before the run fails (0: the
    /// first rejected answer fails it).
    pub fn max_retries(mut self, retries: u32) -> Self {
        self.max_retries = retries;
        self
    }

    /// The middleware.
    pub fn build(self) -> ValidatedOutput<T> {
        ValidatedOutput {
            format: ResponseFormat::of::<T>(),
            validate: self.validate,
            max_retries: self.max_retries,
            _answer: PhantomData,
        }
    }
}

impl<T: DeserializeOwned> ValidatedOutput<T> {
    /// What is wrong with `response`'s answer, if anything.
    fn rejects(&self, response: &ModelResponse) -> Option<String> {
        match parse_answer::<T>(&response.message.text()) {
            Err(error) => Some(match std::error::Error::source(&error) {
                Some(cause) => format!("{error}: {cause}"),
                None => error.to_string(),
            }),
            Ok(answer) => self.validate.as_ref()?(&answer).err(),
        }
    }
}

#[middleware(crate = crate, state = RejectedAnswers)]
impl<T: DeserializeOwned + JsonSchema + Send + Sync + 'static> ValidatedOutput<T> {
    /// Asks for `T`'s schema, and for a correction after a rejected answer.
    #[hook(before_model)]
    fn ask(&self, cx: &mut Context, rejected: &mut RejectedAnswers, request: &mut ModelRequest) {
        if request.response_format.is_none() {
            request.response_format = Some(self.format.clone());
        }
        let Some(correction) = rejected.correction.take() else {
            return;
        };
        let message = Message::user(format!(
            "Your last answer was rejected: {correction}. Answer again with only the JSON the \
             schema describes, corrected."
        ));
        // In the history (the model sees it on later calls too) and in this request (built
        // before this hook ran). The history ends with the rejected answer, which has no
        // calls: the edit keeps it valid.
        match cx.edit_history(|messages| messages.push(message.clone())) {
            Ok(()) => request.messages.push(message),
            Err(error) => tracing::warn!(%error, "validated output: the correction was refused"),
        }
    }

    /// Parses and validates a final answer; sends a rejected one back, or fails the run.
    #[hook(after_model, jumps = [model])]
    fn check(
        &self,
        rejected: &mut RejectedAnswers,
        response: &mut ModelResponse,
    ) -> Result<Flow, OutputRejected> {
        if !response.message.tool_calls.is_empty() || !response.stop_reason.is_answer() {
            return Ok(Flow::Continue);
        }
        let Some(error) = self.rejects(response) else {
            return Ok(Flow::Continue);
        };
        if rejected.retries >= self.max_retries {
            tracing::warn!(
                %error,
                retries = rejected.retries,
                "validated output: the answer is rejected; the run fails"
            );
            return Err(OutputRejected {
                attempts: rejected.retries + 1,
                error,
            });
        }
        tracing::info!(
            %error,
            retry = rejected.retries + 1,
            "validated output: the answer goes back to the model"
        );
        rejected.retries += 1;
        rejected.correction = Some(error);
        Ok(Flow::Jump(Jump::Model))
    }
}
