//! [`ModelRetry`]: a failed model call, sent again after a wait.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use hookchain_macros::middleware;

use super::backoff::Backoff;
use super::{OnFailure, RetrySettings, retry_setters};
use crate::builtin::ConfigError;
use crate::context::Context;
use crate::error::{Error, ModelError, Report};
use crate::middleware::ModelNext;
use crate::model::{ModelRequest, ModelResponse};

/// Which model errors a [`ModelRetry`] retries.
type RetryOn = Arc<dyn Fn(&ModelError) -> bool + Send + Sync>;

/// Sends a failed model call again, after a growing, jittered wait (the rules are in the
/// [module docs](super)).
///
/// ```
/// use std::time::Duration;
/// use hookchain::builtin::{ModelRetry, retry::OnFailure};
///
/// let retry = ModelRetry::builder()
///     .max_retries(3)
///     .initial_delay(Duration::from_millis(200))
///     .max_delay(Duration::from_secs(10))
///     .on_failure(OnFailure::Continue)
///     .build()?;
/// # let _ = hookchain::chain![retry];
/// # Ok::<(), hookchain::builtin::ConfigError>(())
/// ```
///
/// Each attempt runs the inner middleware and the model on a copy of the request it was
/// given: cheap (the history and the tool specs are shared), but a system prompt or settings
/// with stop sequences or extras are copied, once per call (the last attempt takes the request
/// itself, so `max_retries(0)` copies nothing).
pub struct ModelRetry {
    max_retries: u32,
    backoff: Backoff,
    max_retry_after: Duration,
    retry_on: Option<RetryOn>,
    on_failure: OnFailure<ModelError>,
}

impl ModelRetry {
    /// The longest `Retry-After` honoured by default: 60 s.
    pub const DEFAULT_MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

    /// The defaults: 2 retries of the retryable kinds, waits of 500 ms × 2^n up to 30 s with
    /// random jitter, a `Retry-After` honoured up to 60 s, the error passed on when it gives
    /// up.
    #[must_use]
    pub fn new() -> Self {
        // The default settings are valid.
        Self::builder().build().unwrap_or_else(|_| unreachable!())
    }

    /// A builder, from the defaults.
    #[must_use]
    pub fn builder() -> ModelRetryBuilder {
        ModelRetryBuilder {
            settings: RetrySettings::default(),
            max_retry_after: Self::DEFAULT_MAX_RETRY_AFTER,
            retry_on: None,
            on_failure: OnFailure::Error,
        }
    }

    fn retries(&self, error: &ModelError) -> bool {
        match &self.retry_on {
            Some(retry_on) => retry_on(error),
            None => error.is_retryable(),
        }
    }

    /// The outcome once this retry gives up on `error` after `attempts` attempts.
    fn give_up(&self, error: ModelError, attempts: u32) -> Result<ModelResponse, Error> {
        if attempts > 1 {
            tracing::warn!(
                attempts,
                kind = ?error.kind(),
                error = %Report(&error),
                "ModelRetry: giving up on the model call"
            );
        } else {
            tracing::debug!(kind = ?error.kind(), "ModelRetry: an error not retried");
        }
        let text = self.on_failure.text(&error, attempts, || {
            format!(
                "The model call failed ({}) after {attempts} attempt{}.",
                error.kind(),
                if attempts == 1 { "" } else { "s" }
            )
        });
        match text {
            Some(text) => Ok(ModelResponse::text(text)),
            None => Err(error.into()),
        }
    }
}

impl Default for ModelRetry {
    fn default() -> Self {
        Self::new()
    }
}

#[middleware(crate = crate, live_stream)]
impl ModelRetry {
    /// Calls `next` until it succeeds, fails with an error not retried, or the retries are
    /// used up.
    #[hook(wrap_model_call)]
    async fn retry(
        &self,
        cx: &mut Context,
        mut request: ModelRequest,
        mut next: impl ModelNext,
    ) -> Result<ModelResponse, Error> {
        let mut retry = 0;
        loop {
            let last = retry == self.max_retries;
            // The last attempt takes the request itself: no copy when retrying is off.
            let attempt = if last {
                std::mem::take(&mut request)
            } else {
                request.clone()
            };
            let error = match next.call(cx, attempt).await {
                Err(Error::Model(error)) => *error,
                // A success, or not a model error (a hook's error, an interrupt): not ours.
                other => return other,
            };
            if last || !self.retries(&error) {
                return self.give_up(error, retry + 1);
            }
            if let Some(asked) = error.retry_after()
                && asked > self.max_retry_after
            {
                tracing::warn!(
                    retry_after_ms = u64::try_from(asked.as_millis()).unwrap_or(u64::MAX),
                    max_retry_after_ms =
                        u64::try_from(self.max_retry_after.as_millis()).unwrap_or(u64::MAX),
                    kind = ?error.kind(),
                    "ModelRetry: the provider asks for a longer wait than max_retry_after; \
                     giving up"
                );
                return self.give_up(error, retry + 1);
            }
            let delay = self.backoff.delay(retry, error.retry_after());
            tracing::warn!(
                attempt = retry + 1,
                retries_left = self.max_retries - retry,
                delay_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                kind = ?error.kind(),
                error = %Report(&error),
                "ModelRetry: the model call failed; retrying"
            );
            tokio::time::sleep(delay).await;
            retry += 1;
        }
    }
}

impl fmt::Debug for ModelRetry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ModelRetry")
            .field("max_retries", &self.max_retries)
            .field("backoff", &self.backoff)
            .field("max_retry_after", &self.max_retry_after)
            .field("retry_on", &self.retry_on.as_ref().map(|_| ".."))
            .field("on_failure", &self.on_failure)
            .finish()
    }
}

/// Builds a [`ModelRetry`]; [`build`](Self::build) checks the settings.
pub struct ModelRetryBuilder {
    settings: RetrySettings,
    max_retry_after: Duration,
    retry_on: Option<RetryOn>,
    on_failure: OnFailure<ModelError>,
}

impl ModelRetryBuilder {
    retry_setters!();

    /// Retries the model errors for which `retry_on` is true, instead of the
    /// [retryable kinds](crate::ModelErrorKind::is_retryable).
    #[must_use]
    pub fn retry_on(
        mut self,
        retry_on: impl Fn(&ModelError) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.retry_on = Some(Arc::new(retry_on));
        self
    }

    /// The longest wait a provider's `Retry-After` may ask for (default 60 s,
    /// [`ModelRetry::DEFAULT_MAX_RETRY_AFTER`]). A failure that asks for longer is not
    /// retried: the retry gives up at once, as when its retries are used up ([`OnFailure`]
    /// decides; by default the caller gets the original error, whose
    /// [`retry_after`](ModelError::retry_after) says when to try again). A shorter one is
    /// honoured, even past `max_delay`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use hookchain::builtin::ModelRetry;
    ///
    /// // Waits up to 5 minutes when the provider asks; past that, fails at once.
    /// let retry = ModelRetry::builder()
    ///     .max_retry_after(Duration::from_secs(300))
    ///     .build()?;
    /// # let _ = hookchain::chain![retry];
    /// # Ok::<(), hookchain::builtin::ConfigError>(())
    /// ```
    #[must_use]
    pub fn max_retry_after(mut self, max: Duration) -> Self {
        self.max_retry_after = max;
        self
    }

    /// What to do when giving up (default [`OnFailure::Error`]).
    #[must_use]
    pub fn on_failure(mut self, on_failure: OnFailure<ModelError>) -> Self {
        self.on_failure = on_failure;
        self
    }

    /// The retry, or the first setting that cannot work: `factor` below 1 or not finite,
    /// `max_delay` below `initial_delay`.
    pub fn build(self) -> Result<ModelRetry, ConfigError> {
        Ok(ModelRetry {
            max_retries: self.settings.max_retries,
            backoff: self.settings.backoff()?,
            max_retry_after: self.max_retry_after,
            retry_on: self.retry_on,
            on_failure: self.on_failure,
        })
    }
}

impl fmt::Debug for ModelRetryBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ModelRetryBuilder")
            .field("settings", &self.settings)
            .field("max_retry_after", &self.max_retry_after)
            .field("on_failure", &self.on_failure)
            .finish_non_exhaustive()
    }
}
