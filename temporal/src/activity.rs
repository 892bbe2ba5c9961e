//! The step activity: what a worker runs for each step of a run, and the handler that does it.

use std::{error::Error as StdError, fmt, future::Future, pin::Pin, sync::Arc, time::Duration};

use serde::{Serialize, de::DeserializeOwned};
use temporalio_common::error::ApplicationFailure;
use temporalio_macros::activities;
use temporalio_sdk::activities::{ActivityContext, ActivityError};

use crate::{Error, StepReply, StepRequest};

/// A boxed future that can move between threads, as activities run on Tokio's pool.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// What runs one step of a run, on whichever worker picks it up.
///
/// A step may run more than once: a retry after a failed attempt, or after a worker was lost
/// (no heartbeat within the policy's timeout). What it does outside must tolerate that.
///
/// Steps run on the worker's Tokio runtime, each in a task of its own. A step that blocks its
/// thread (a synchronous SDK) sends no heartbeat from its own task meanwhile: send them from
/// another task, as [`AgentSteps`](crate::AgentSteps) does, on a runtime of several threads.
pub trait StepHandler: Send + Sync + 'static {
    /// Runs one step.
    fn step(
        &self,
        ctx: StepContext,
        request: StepRequest,
    ) -> BoxFuture<Result<StepReply, StepFailure>>;

    /// Cleans up after a cancelled run (releases what its steps held). Runs once the workflow is
    /// cancelled, retried under the same policy as steps; the run ends cancelled whatever it
    /// returns. Does nothing by default.
    fn cleanup(&self, key: String) -> BoxFuture<Result<(), StepFailure>> {
        let _ = key;
        Box::pin(async { Ok(()) })
    }

    /// The longest the worker may hold a step's heartbeats back before it sends the last one
    /// to the server (the SDK's throttle: 80 % of the heartbeat timeout, at most a minute, by
    /// default; `None` keeps it). The server hears from a step that often, so it deems a dead
    /// worker's step lost between the heartbeat timeout less this and the timeout after the
    /// worker died. [`AgentSteps`](crate::AgentSteps) answers a third of the agent's lease.
    fn heartbeat_throttle(&self) -> Option<Duration> {
        None
    }
}

/// A [`StepHandler`] made of a closure; see [`step_fn`].
pub struct StepFn<F>(F);

impl<F> fmt::Debug for StepFn<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("StepFn")
    }
}

/// Makes a [`StepHandler`] of a closure that runs a step (and cleans up nothing).
///
/// Example: *Steps* in the docs of `hookchain::temporal`.
pub fn step_fn<F, Fut, E>(f: F) -> StepFn<F>
where
    F: Fn(StepContext, StepRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<StepReply, E>> + Send + 'static,
    E: Into<StepFailure>,
{
    StepFn(f)
}

impl<F, Fut, E> StepHandler for StepFn<F>
where
    F: Fn(StepContext, StepRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<StepReply, E>> + Send + 'static,
    E: Into<StepFailure>,
{
    fn step(
        &self,
        ctx: StepContext,
        request: StepRequest,
    ) -> BoxFuture<Result<StepReply, StepFailure>> {
        let step = (self.0)(ctx, request);
        Box::pin(async move { step.await.map_err(Into::into) })
    }
}

/// Why an attempt of a step failed, and whether another attempt may succeed.
///
/// Any error converts into a retryable one (`?` works on errors of any type); a non-retryable
/// one fails the run at once, whatever attempts the policy has left.
pub struct StepFailure {
    error: Option<Box<dyn StdError + Send + Sync>>,
    kind: FailureKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FailureKind {
    Retryable,
    NonRetryable,
    Cancelled,
}

impl StepFailure {
    /// A failure that the policy's next attempt may overcome (a timeout, a 503).
    pub fn retryable(error: impl Into<Box<dyn StdError + Send + Sync>>) -> Self {
        Self {
            error: Some(error.into()),
            kind: FailureKind::Retryable,
        }
    }

    /// A failure that no attempt will overcome (a bad request): the run fails.
    pub fn non_retryable(error: impl Into<Box<dyn StdError + Send + Sync>>) -> Self {
        Self {
            error: Some(error.into()),
            kind: FailureKind::NonRetryable,
        }
    }

    /// The step stopped because it was asked to ([`StepContext::is_cancelled`]).
    pub fn cancelled() -> Self {
        Self {
            error: None,
            kind: FailureKind::Cancelled,
        }
    }

    /// Whether another attempt may succeed.
    pub fn is_retryable(&self) -> bool {
        self.kind == FailureKind::Retryable
    }

    fn into_activity_error(self) -> ActivityError {
        match (self.kind, self.error) {
            (FailureKind::Cancelled, _) => ActivityError::cancelled(),
            (FailureKind::Retryable, Some(error)) => {
                ActivityError::application(ApplicationFailure::new(error))
            }
            (_, error) => ActivityError::application(ApplicationFailure::non_retryable(
                error.unwrap_or_else(|| "step failed".into()),
            )),
        }
    }
}

impl<E: Into<Box<dyn StdError + Send + Sync>>> From<E> for StepFailure {
    fn from(error: E) -> Self {
        Self::retryable(error)
    }
}

impl fmt::Debug for StepFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StepFailure")
            .field("error", &self.error)
            .field("kind", &self.kind)
            .finish()
    }
}

impl fmt::Display for StepFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.kind, &self.error) {
            (FailureKind::Cancelled, _) => f.write_str("step cancelled"),
            (FailureKind::Retryable, Some(error)) => write!(f, "retryable step failure: {error}"),
            (_, Some(error)) => write!(f, "non-retryable step failure: {error}"),
            (_, None) => f.write_str("step failed"),
        }
    }
}

/// What a step can see of its activity: its attempt, heartbeats, cancellation.
///
/// It is `Send + Sync + Clone`: a clone may heartbeat from another task while the step runs.
#[derive(Clone)]
pub struct StepContext {
    inner: ActivityContext,
}

// A step's heartbeats go from a task of their own, with a clone of its context.
const _: fn() = || {
    fn shareable<T: Send + Sync + Clone + 'static>() {}
    shareable::<StepContext>();
};

impl fmt::Debug for StepContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let info = self.inner.info();
        f.debug_struct("StepContext")
            .field("workflow_id", &info.workflow_id)
            .field("activity_id", &info.activity_id)
            .field("attempt", &info.attempt)
            .finish_non_exhaustive()
    }
}

impl StepContext {
    /// The attempt of this step, from 1.
    pub fn attempt(&self) -> u32 {
        self.inner.info().attempt
    }

    /// How long this attempt may go without a heartbeat before the server deems its worker lost
    /// (the policy's [`heartbeat_timeout`](crate::StepPolicy::heartbeat_timeout)), if it must
    /// heartbeat.
    pub fn heartbeat_timeout(&self) -> Option<Duration> {
        self.inner
            .info()
            .heartbeat_timeout
            .filter(|timeout| !timeout.is_zero())
    }

    /// Tells the server this attempt is alive, with what it did so far (the tool calls done,
    /// say). Heartbeats are throttled by the SDK (to 80% of the heartbeat timeout, or the
    /// handler's [`heartbeat_throttle`](StepHandler::heartbeat_throttle)) and sent in the
    /// background; the details of the last one reach the next attempt
    /// ([`last_heartbeat`](Self::last_heartbeat)). A heartbeat is also how a cancellation
    /// reaches a running step.
    ///
    /// # Errors
    ///
    /// [`Error::Heartbeat`] if the details cannot be serialized.
    pub async fn heartbeat<T: Serialize + 'static>(&self, details: T) -> Result<(), Error> {
        self.inner
            .record_heartbeat(details)
            .await
            .map_err(Error::Heartbeat)
    }

    /// The details of the last heartbeat of the previous attempt of this step, if any.
    ///
    /// # Errors
    ///
    /// [`Error::Heartbeat`] if they are not a `T`.
    pub fn last_heartbeat<T: DeserializeOwned + 'static>(&self) -> Result<Option<T>, Error> {
        self.inner
            .heartbeat_details()
            .deserialize()
            .map_err(Error::Heartbeat)
    }

    /// Whether the server asked this attempt to stop (the run was cancelled, or the attempt timed
    /// out). Learnt through heartbeats: a step that never heartbeats is never told.
    pub fn is_cancelled(&self) -> bool {
        self.inner.is_cancelled()
    }

    /// Completes when the server asks this attempt to stop (see
    /// [`is_cancelled`](Self::is_cancelled)).
    pub async fn cancelled(&self) {
        self.inner.cancelled().await;
    }
}

/// The activities of a run, registered on a worker together with the workflow.
pub(crate) struct StepActivities {
    handler: Arc<dyn StepHandler>,
}

impl StepActivities {
    pub(crate) fn new(handler: Arc<dyn StepHandler>) -> Self {
        Self { handler }
    }
}

#[activities]
impl StepActivities {
    /// One step of a run.
    #[activity(name = "hookchain.step")]
    pub(crate) async fn step(
        self: Arc<Self>,
        ctx: ActivityContext,
        request: StepRequest,
    ) -> Result<StepReply, ActivityError> {
        let ctx = StepContext { inner: ctx };
        self.handler
            .step(ctx, request)
            .await
            .map_err(StepFailure::into_activity_error)
    }

    /// The cleanup after a cancelled run.
    #[activity(name = "hookchain.cleanup")]
    pub(crate) async fn cleanup(
        self: Arc<Self>,
        _ctx: ActivityContext,
        key: String,
    ) -> Result<(), ActivityError> {
        self.handler
            .cleanup(key)
            .await
            .map_err(StepFailure::into_activity_error)
    }
}
