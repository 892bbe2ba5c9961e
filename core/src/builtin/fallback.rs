//! [`ModelFallback`]: when the model fails, the same request to the next model.
//!
//! # The rules
//!
//! - **In order.** The first attempt goes to the model the request names (normally none: the
//!   agent's model); when it fails with a [`ModelError`], the request goes to the first fallback
//!   model, then the next, in the order listed. Models are named as a
//!   [`ModelRouter`](crate::model::ModelRouter) knows them: the attempt sets
//!   [`request.model`](ModelRequest::model) and calls `next` again, so **every attempt passes
//!   through the inner middleware** as the first did. Build the agent on a router.
//! - **Which failures.** Every model error by default (a model with a larger context or another
//!   content filter may succeed where the first failed); `fall_back_on` narrows it. An error
//!   it does not fall back on is passed on as it is.
//! - **Not failures.** Errors of middleware and interrupts are passed on at once: an interrupt
//!   is never a failure.
//! - **When every model fails**, the call fails with a [`ModelError`] whose source is a
//!   [`FallbackError`]: every attempt's model and error, in order. The model error has the kind
//!   and the `retry_after` of the last attempt's, so a retry outside decides on it as usual.
//! - Each fallback is a `tracing` warning naming the failed model and the next.
//!
//! ```
//! use hookchain::builtin::ModelFallback;
//! use hookchain::model::ModelRouter;
//! use hookchain::prelude::*;
//! use hookchain::ModelError;
//!
//! let router = ModelRouter::new(ScriptedModel::new([]).then_fail(ModelError::overloaded("busy")))
//!     .route("backup", ScriptedModel::new([ModelResponse::text("from the backup")]));
//! let fallback = ModelFallback::builder().model("backup").build()?;
//! let agent = Agent::builder(router).chain(hookchain::chain![fallback]).build()?;
//! # futures::executor::block_on(async {
//! let output = agent.run("hi").await?;
//! assert_eq!(output.text().as_deref(), Some("from the backup"));
//! # Ok::<(), hookchain::Error>(())
//! # })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;
use std::sync::Arc;

use hookchain_macros::middleware;

use crate::builtin::ConfigError;
use crate::context::Context;
use crate::error::{Error, ModelError, Report};
use crate::middleware::ModelNext;
use crate::model::{ModelRequest, ModelResponse};

/// Which model errors a [`ModelFallback`] falls back on.
type FallBackOn = Arc<dyn Fn(&ModelError) -> bool + Send + Sync>;

/// Sends a failed model call to the next model (see the [module docs](self)).
pub struct ModelFallback {
    models: Vec<String>,
    fall_back_on: Option<FallBackOn>,
}

impl ModelFallback {
    /// A builder with no fallback model yet.
    #[must_use]
    pub fn builder() -> ModelFallbackBuilder {
        ModelFallbackBuilder {
            models: Vec::new(),
            fall_back_on: None,
        }
    }

    /// The fallback models, in the order they are tried.
    pub fn models(&self) -> impl Iterator<Item = &str> {
        self.models.iter().map(String::as_str)
    }

    fn falls_back_on(&self, error: &ModelError) -> bool {
        self.fall_back_on.as_ref().is_none_or(|on| on(error))
    }
}

#[middleware(crate = crate, live_stream)]
impl ModelFallback {
    /// Tries the request on each model in turn until one answers.
    #[hook(wrap_model_call)]
    async fn fall_back(
        &self,
        cx: &mut Context,
        mut request: ModelRequest,
        mut next: impl ModelNext,
    ) -> Result<ModelResponse, Error> {
        // Allocated only once an attempt fails.
        let mut failed: Vec<FallbackAttempt> = Vec::new();
        for index in 0..=self.models.len() {
            let last = index == self.models.len();
            let attempt = if last {
                std::mem::take(&mut request)
            } else {
                request.clone()
            };
            let error = match next.call(cx, attempt).await {
                Err(Error::Model(error)) => *error,
                // An answer, an interrupt, a middleware's error: not a model's failure.
                other => return other,
            };
            // The model this attempt went to: the request's own for the first, then ours.
            let model = match index {
                0 => request.model.clone(),
                _ => Some(self.models[index - 1].clone()),
            };
            if !self.falls_back_on(&error) {
                return Err(error.into());
            }
            if let Some(next_model) = self.models.get(index) {
                tracing::warn!(
                    failed = model.as_deref().unwrap_or("the agent's model"),
                    next = next_model.as_str(),
                    kind = ?error.kind(),
                    error = %Report(&error),
                    "ModelFallback: the model call failed; trying the next model"
                );
                request.model = Some(next_model.clone());
            }
            failed.push(FallbackAttempt { model, error });
        }
        Err(FallbackError::into_model_error(failed).into())
    }
}

impl fmt::Debug for ModelFallback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ModelFallback")
            .field("models", &self.models)
            .field("fall_back_on", &self.fall_back_on.as_ref().map(|_| ".."))
            .finish()
    }
}

/// Builds a [`ModelFallback`]; [`build`](Self::build) checks the settings.
pub struct ModelFallbackBuilder {
    models: Vec<String>,
    fall_back_on: Option<FallBackOn>,
}

impl ModelFallbackBuilder {
    /// Adds a fallback model, by the name a [`ModelRouter`](crate::model::ModelRouter) routes
    /// it as; tried after those added before.
    #[must_use]
    pub fn model(mut self, name: impl Into<String>) -> Self {
        self.models.push(name.into());
        self
    }

    /// Falls back only on the model errors for which `fall_back_on` is true (default: all).
    #[must_use]
    pub fn fall_back_on(
        mut self,
        fall_back_on: impl Fn(&ModelError) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.fall_back_on = Some(Arc::new(fall_back_on));
        self
    }

    /// The fallback, or the first setting that cannot work: no model, a model with an empty
    /// name, a model listed twice.
    pub fn build(self) -> Result<ModelFallback, ConfigError> {
        if self.models.is_empty() {
            return Err(ConfigError::new("model", "no fallback model is listed"));
        }
        for (i, name) in self.models.iter().enumerate() {
            if name.is_empty() {
                return Err(ConfigError::new("model", "a model has an empty name"));
            }
            if self.models[..i].contains(name) {
                return Err(ConfigError::new(
                    "model",
                    format!("`{name}` is listed twice"),
                ));
            }
        }
        Ok(ModelFallback {
            models: self.models,
            fall_back_on: self.fall_back_on,
        })
    }
}

impl fmt::Debug for ModelFallbackBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ModelFallbackBuilder")
            .field("models", &self.models)
            .finish_non_exhaustive()
    }
}

/// One failed attempt of a [`ModelFallback`]: the model it went to and its error.
#[derive(Debug)]
pub struct FallbackAttempt {
    model: Option<String>,
    error: ModelError,
}

impl FallbackAttempt {
    /// The model the attempt went to, by its routed name; `None` for the agent's model.
    #[must_use]
    pub fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }

    /// Why it failed.
    #[must_use]
    pub fn error(&self) -> &ModelError {
        &self.error
    }
}

/// Every model of a [`ModelFallback`] failed: the attempts, in order. It is the source of the
/// [`ModelError`] the model call fails with; find it in a run's error with
/// [`FallbackError::find`].
///
/// ```
/// # use hookchain::builtin::ModelFallback;
/// # use hookchain::builtin::fallback::FallbackError;
/// # use hookchain::model::ModelRouter;
/// # use hookchain::prelude::*;
/// # use hookchain::ModelError;
/// let router = ModelRouter::new(ScriptedModel::new([]).then_fail(ModelError::overloaded("busy")))
///     .route("backup", ScriptedModel::new([]).then_fail(ModelError::timeout("slow")));
/// let fallback = ModelFallback::builder().model("backup").build()?;
/// let agent = Agent::builder(router).chain(hookchain::chain![fallback]).build()?;
/// let error = futures::executor::block_on(agent.run("hi")).unwrap_err();
/// let fallback = FallbackError::find(&error).expect("every model failed");
/// assert_eq!(fallback.to_string(), "2 model attempts failed: the agent's model: busy; `backup`: slow");
/// assert_eq!(fallback.attempts()[1].model(), Some("backup"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct FallbackError {
    attempts: Vec<FallbackAttempt>,
}

impl FallbackError {
    /// The failed attempts, in order: the first model's first.
    #[must_use]
    pub fn attempts(&self) -> &[FallbackAttempt] {
        &self.attempts
    }

    /// The `FallbackError` among the causes of `error`, if every model of a fallback failed.
    #[must_use]
    pub fn find<'e>(error: &'e (dyn std::error::Error + 'static)) -> Option<&'e FallbackError> {
        let mut cause = Some(error);
        while let Some(error) = cause {
            if let Some(found) = error.downcast_ref::<FallbackError>() {
                return Some(found);
            }
            cause = error.source();
        }
        None
    }

    /// The model error of a call on which every model failed (`attempts` is not empty).
    fn into_model_error(attempts: Vec<FallbackAttempt>) -> ModelError {
        let (kind, retry_after) = attempts
            .last()
            .map(|last| (last.error.kind(), last.error.retry_after()))
            .unwrap_or((crate::error::ModelErrorKind::Other, None));
        let mut error = ModelError::new(kind, "every model failed");
        if let Some(retry_after) = retry_after {
            error = error.with_retry_after(retry_after);
        }
        error.with_source(FallbackError { attempts })
    }
}

impl fmt::Display for FallbackError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.attempts.len();
        write!(
            f,
            "{n} model attempt{} failed",
            if n == 1 { "" } else { "s" }
        )?;
        for (i, attempt) in self.attempts.iter().enumerate() {
            f.write_str(if i == 0 { ": " } else { "; " })?;
            match &attempt.model {
                Some(model) => write!(f, "`{model}`: ")?,
                None => f.write_str("the agent's model: ")?,
            }
            write!(f, "{}", Report(&attempt.error))?;
        }
        Ok(())
    }
}

impl std::error::Error for FallbackError {}
