//! The errors of a run, and [`Report`], which prints an error with its causes.

use std::fmt;
use std::time::Duration;

use crate::agent::ThreadError;
use crate::interrupt::{CheckpointError, Interruption, ResumeError};
use crate::message::HistoryError;
use crate::middleware::{Hook, Jump};

/// A type-erased error, as carried inside [`Error`] and [`ModelError`].
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Why a run stopped with an error.
///
/// Tool failures are not errors: they become error tool results that the model reads (see
/// [`ToolResult`](crate::ToolResult)). Only failures outside the tool path abort a run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The model call failed (after whatever retries the middleware made).
    #[error("the model call failed")]
    Model(#[from] ModelError),
    /// A middleware hook failed; the error names the middleware and the hook.
    #[error(transparent)]
    Middleware(Box<MiddlewareError>),
    /// The model was still calling tools after `max_steps` steps.
    #[error(
        "the agent did not finish within max_steps = {max_steps}: the model was still calling tools"
    )]
    MaxStepsExceeded {
        /// The configured limit.
        max_steps: usize,
    },
    /// A hook returned [`Flow::Jump`](crate::Flow::Jump) to a target its middleware does not
    /// declare for that hook in [`Middleware::JUMPS`](crate::Middleware::JUMPS).
    #[error(
        "middleware `{middleware}` jumped to `{target}` from `{hook}`, but does not declare that \
         jump: declare it with `#[hook({hook}, jumps = [{target}])]` (or, in a hand-written impl, \
         in `const JUMPS`: `JumpSet::of(Hook::{hook:?}, Jump::{target:?})`)"
    )]
    UndeclaredJump {
        /// The middleware that jumped.
        middleware: &'static str,
        /// The hook it jumped from.
        hook: Hook,
        /// Where it tried to jump.
        target: Jump,
    },
    /// An interrupt raised where the run cannot pause: interrupts come from `before_model`,
    /// `after_model`, `wrap_tool_call` and tools. (On the tool path this variant is how a wrap
    /// hook raises one; the agent turns it into a pause.)
    #[error(
        "middleware `{}` raised an interrupt where the run cannot pause: interrupts come from \
         `before_model`, `after_model`, `wrap_tool_call` and tools",
        .0.source.as_deref().unwrap_or("?")
    )]
    Interrupted(Box<Interruption>),
    /// A checkpoint could not be resumed.
    #[error(transparent)]
    Resume(Box<ResumeError>),
    /// A checkpoint could not be made, read or written.
    #[error(transparent)]
    Checkpoint(Box<CheckpointError>),
    /// A run could not start in its thread.
    #[error(transparent)]
    Thread(Box<ThreadError>),
    /// The input history breaks the tool-call rule a provider enforces (see
    /// [`validate_history`](crate::message::validate_history)).
    #[error("the input history is not valid")]
    History(#[source] HistoryError),
}

// The rare, large errors are boxed so that `Result<Flow, Error>`, which every hook returns,
// stays small to move.
impl From<MiddlewareError> for Error {
    fn from(error: MiddlewareError) -> Self {
        Error::Middleware(Box::new(error))
    }
}

impl From<ResumeError> for Error {
    fn from(error: ResumeError) -> Self {
        Error::Resume(Box::new(error))
    }
}

impl From<ThreadError> for Error {
    fn from(error: ThreadError) -> Self {
        Error::Thread(Box::new(error))
    }
}

impl From<HistoryError> for Error {
    fn from(error: HistoryError) -> Self {
        Error::History(error)
    }
}

impl From<CheckpointError> for Error {
    fn from(error: CheckpointError) -> Self {
        Error::Checkpoint(Box::new(error))
    }
}

impl Error {
    /// Wraps an error raised inside a hook.
    ///
    /// The chain fills in the middleware's name and the hook when the error leaves that
    /// middleware, so a hook need not name itself. A [`hookchain::Error`](Error) passed here (for
    /// example one returned by `next` in a wrap hook) is kept as it is, not wrapped again.
    pub fn hook(error: impl Into<BoxError>) -> Self {
        match error.into().downcast::<Error>() {
            Ok(error) => *error,
            Err(source) => Error::from(MiddlewareError {
                middleware: None,
                hook: None,
                source,
            }),
        }
    }

    /// An interrupt raised by a `wrap_tool_call` hook (as `Err(Error::interrupt(payload))`): the
    /// run pauses until it is answered; see [`interrupt`](crate::interrupt).
    #[must_use]
    pub fn interrupt(payload: serde_json::Value) -> Self {
        Error::Interrupted(Box::new(Interruption::new(payload)))
    }

    /// An error raised by the middleware named `middleware` in `hook`.
    ///
    /// Use this in wrap hooks: the chain names errors from sequential hooks itself, but adds no
    /// layer around wrap hooks that could.
    pub fn middleware(middleware: &'static str, hook: Hook, error: impl Into<BoxError>) -> Self {
        Error::hook(error).attribute(middleware, hook)
    }

    /// A hook panicked: `middleware` (if known) failed in `hook`, with the panic's message.
    pub(crate) fn panicked(
        middleware: Option<&'static str>,
        hook: Hook,
        payload: &(dyn std::any::Any + Send),
    ) -> Self {
        Error::from(MiddlewareError {
            middleware,
            hook: Some(hook),
            source: Box::new(Panicked(crate::tool::panic_message(payload))),
        })
    }

    /// A chain called the synchronous form of a hook that `middleware` lists in `SYNC_HOOKS`
    /// without implementing it (a hand-written impl that set the hidden constant).
    pub(crate) fn no_sync_form(middleware: &'static str, hook: Hook) -> Self {
        Error::middleware(middleware, hook, NoSyncForm)
    }

    /// Records the hook of an error that left a chain unnamed (a wrap hook that raised
    /// [`Error::hook`]): the middleware stays unknown, the hook is known.
    pub(crate) fn attribute_hook(self, hook: Hook) -> Self {
        match self {
            Error::Middleware(mut error) if error.hook.is_none() => {
                error.hook = Some(hook);
                Error::Middleware(error)
            }
            other => other,
        }
    }

    /// Names the middleware and hook of an error raised by a hook that did not name them yet.
    ///
    /// Errors that already carry a name (raised deeper in the chain) are returned unchanged, so an
    /// error is attributed once, to the middleware that raised it.
    #[doc(hidden)]
    #[must_use]
    pub fn attribute(self, middleware: &'static str, hook: Hook) -> Self {
        match self {
            Error::Middleware(mut error) if error.middleware.is_none() => {
                error.middleware = Some(middleware);
                error.hook = Some(hook);
                Error::Middleware(error)
            }
            Error::Interrupted(mut interruption) => {
                interruption.raised_by(middleware);
                Error::Interrupted(interruption)
            }
            other => other,
        }
    }
}

/// Displays an error and its causes, each once: `what failed: why: why that`.
///
/// ```
/// use hookchain::error::Report;
///
/// let io = std::io::Error::other("connection reset");
/// let error = hookchain::Error::middleware("Audit", hookchain::Hook::AfterAgent, io);
/// assert_eq!(
///     Report(&error).to_string(),
///     "middleware `Audit` failed in `after_agent`: connection reset"
/// );
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Report<'a>(pub &'a (dyn std::error::Error + 'static));

impl fmt::Display for Report<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)?;
        let mut cause = self.0.source();
        while let Some(error) = cause {
            write!(f, ": {error}")?;
            cause = error.source();
        }
        Ok(())
    }
}

/// See [`Error::panicked`].
#[derive(Debug, thiserror::Error)]
#[error("it panicked: {0}")]
struct Panicked(String);

/// See [`Error::no_sync_form`].
#[derive(Debug, thiserror::Error)]
#[error("the middleware lists this hook in `SYNC_HOOKS` but has no synchronous form of it")]
struct NoSyncForm;

/// A failure raised by a middleware hook.
#[derive(Debug)]
pub struct MiddlewareError {
    middleware: Option<&'static str>,
    hook: Option<Hook>,
    source: BoxError,
}

impl MiddlewareError {
    /// The name of the middleware that failed ([`Middleware::NAME`](crate::Middleware::NAME)),
    /// if the error left a chain.
    #[must_use]
    pub fn middleware(&self) -> Option<&'static str> {
        self.middleware
    }

    /// The hook that failed, if the error left a chain.
    #[must_use]
    pub fn hook(&self) -> Option<Hook> {
        self.hook
    }

    /// The error the hook raised.
    #[must_use]
    pub fn inner(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
        &*self.source
    }
}

// What failed, not why: the cause is the error's `source()`, so that a report walking the
// chain prints each cause once.
impl fmt::Display for MiddlewareError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.middleware, self.hook) {
            (Some(middleware), Some(hook)) => {
                write!(f, "middleware `{middleware}` failed in `{hook}`")
            }
            (None, Some(hook)) => write!(f, "a middleware failed in `{hook}`"),
            _ => f.write_str("a middleware hook failed"),
        }
    }
}

impl std::error::Error for MiddlewareError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.source)
    }
}

/// Why a [`Model`](crate::Model) call failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// A [`ScriptedModel`](crate::ScriptedModel) received more requests than its script holds.
    #[error("the scripted model has no response left for request #{request}")]
    ScriptExhausted {
        /// The 1-based number of the request that found the script empty.
        request: usize,
    },
    /// The provider rate-limited the request.
    #[error("the model provider rate-limited the request")]
    RateLimited {
        /// How long the provider asked to wait, if it said.
        retry_after: Option<Duration>,
    },
    /// The call took too long.
    #[error("the model call timed out after {0:?}")]
    Timeout(Duration),
    /// The provider (or a scripted rule) failed.
    #[error("the model provider failed: {0}")]
    Provider(#[source] BoxError),
}

impl ModelError {
    /// Wraps a provider's error.
    pub fn provider(error: impl Into<BoxError>) -> Self {
        ModelError::Provider(error.into())
    }
}
