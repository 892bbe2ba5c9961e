//! The errors of a run: [`Error`], which composes the errors each layer below owns (a
//! variant and a `From` for each: the model's, the history's, a checkpoint's, a resume's, a
//! thread's, a thread store's, the builder's), and the errors of a hook, which the chain makes
//! of what a hook raised ([`MiddlewareError`], [`ApplicationError`]). With them, for one
//! `use`: [`ModelError`], and [`Report`], which prints an error with its causes.

use std::fmt;

use crate::hook::{Hook, Jump};
use crate::interrupt::{CheckpointError, Interrupt, Interruption, ResumeError};
use crate::message::HistoryError;
use crate::thread::ThreadError;
use crate::thread_store::ThreadStoreError;

pub use crate::model::{ModelError, ModelErrorKind};
pub(crate) use crate::report::find_in_chain;
pub use crate::report::{BoxError, Report};

/// Why a run stopped with an error.
///
/// Tool failures are not errors: they become error tool results that the model reads (see
/// [`ToolResult`](crate::ToolResult)). Only failures outside the tool path abort a run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The model call failed (after whatever retries the middleware made). Boxed, as every
    /// variant that holds more than a word or two: an `Error` stays small, and so does every
    /// `Result` the loop passes on.
    #[error("the model call failed")]
    Model(#[source] Box<ModelError>),
    /// A middleware hook failed; the error names the middleware and the hook.
    #[error(transparent)]
    Middleware(Box<MiddlewareError>),
    /// The application's own error, raised with [`Error::application`]: by a hook (the chain
    /// names the middleware and the hook), or by the application's code around a run. Find it
    /// with [`Error::downcast_ref`].
    #[error(transparent)]
    Application(Box<ApplicationError>),
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
    ///
    /// Its message names the fix: a `before_model` or `after_model` hook that returned
    /// `Err(Error::interrupt(..))` is told to return `Ok(Flow::interrupt(..))`.
    #[error("{}", Misplaced(.0))]
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
    /// A thread could not be loaded from or saved to its store (by
    /// [`Agent::run_in_store`](crate::Agent::run_in_store)): among others, another writer
    /// saved it since it was loaded ([`ThreadStoreError::Conflict`]).
    #[error(transparent)]
    ThreadStore(Box<ThreadStoreError>),
    /// The agent could not be built as configured: [`AgentBuilder::build`](crate::AgentBuilder::build)'s
    /// error, for `?` in a function that returns this `Error`. Runs never return it (a
    /// misconfigured agent is never built).
    #[error("the agent cannot be built as configured")]
    Build(#[source] Box<crate::config::AgentBuildError>),
    /// The input history breaks the tool-call rule a provider enforces (see
    /// [`validate_history`](crate::message::validate_history)).
    #[error("the input history is not valid")]
    History(#[source] HistoryError),
    /// A tool call made outside a run ([`Agent::call_tool`](crate::Agent::call_tool)) raised
    /// an interrupt (an approval a [`HumanInTheLoop`](crate::builtin::HumanInTheLoop) asks
    /// for, say): there is no run to pause and resume, so the call did not complete. The
    /// interrupt says who asked, and what.
    #[error(
        "tool call `{}` needs an answer from outside (asked by `{}`), which a call outside a \
         run cannot wait for: it did not complete",
        .0.tool_call_id.as_deref().unwrap_or("?"),
        .0.source
    )]
    ToolCallInterrupted(Box<Interrupt>),
}

// The rare, large errors are boxed so that `Result<Flow, Error>`, which every hook returns,
// stays small to move.
impl From<ModelError> for Error {
    fn from(error: ModelError) -> Self {
        Error::Model(Box::new(error))
    }
}

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

impl From<ThreadStoreError> for Error {
    fn from(error: ThreadStoreError) -> Self {
        Error::ThreadStore(Box::new(error))
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

impl From<crate::config::AgentBuildError> for Error {
    fn from(error: crate::config::AgentBuildError) -> Self {
        Error::Build(Box::new(error))
    }
}

impl Error {
    /// Wraps an error raised inside a hook: a failure of the middleware itself (what a
    /// `#[hook]` fn's `Err` of another type than `Error` becomes too).
    ///
    /// The chain fills in the middleware's name and the hook when the error leaves that
    /// middleware, so a hook need not name itself. An [`Error`] passed here (for
    /// example one returned by `next` in a wrap hook) is kept as it is, not wrapped again.
    ///
    /// To end a run with an error of the application's, which its caller handles (a quota, a
    /// refusal, a record not found), use [`Error::application`]; either is found again with
    /// [`Error::downcast_ref`].
    pub fn hook(error: impl Into<BoxError>) -> Self {
        match error.into().downcast::<Error>() {
            Ok(error) => *error,
            Err(source) => Error::from(MiddlewareError(Raised::new(None, None, source))),
        }
    }

    /// An interrupt raised by a `wrap_tool_call` hook (as `Err(Error::interrupt(payload))`): the
    /// run pauses until it is answered; see [`interrupt`](crate::interrupt).
    ///
    /// Only there: a `before_model` or `after_model` hook pauses the run by returning
    /// `Ok(Flow::interrupt(payload))` ([`Flow::interrupt`](crate::Flow::interrupt)). This error
    /// returned from any other hook fails the run with [`Error::Interrupted`], whose message
    /// says which to use where.
    #[must_use]
    pub fn interrupt(payload: serde_json::Value) -> Self {
        let mut interruption = Interruption::new(payload);
        interruption.as_error = true;
        Error::Interrupted(Box::new(interruption))
    }

    /// The application's own error, as the error that ends the run: for a hook (or a
    /// hand-written middleware) that stops the run with an error its caller handles — a quota
    /// exceeded, a refusal, a record not found — rather than a failure of the middleware
    /// ([`Error::hook`]).
    ///
    /// The error is kept as it is: it is the [`source`](std::error::Error::source) of the
    /// run's error, so [`Report`] prints it and its causes, and [`Error::downcast_ref`] gives
    /// it back by its type. The chain names the middleware and the hook it came from
    /// ([`ApplicationError::middleware`], [`hook`](ApplicationError::hook)), as for a hook's
    /// failure; raised outside a chain, it names none.
    ///
    /// A tool fails with the application's error by returning it (`Result<T, E>` from a
    /// `#[tool]` fn, or [`ToolError::failed`](crate::tool::ToolError::failed)), which does
    /// not end the run: the model reads that the tool failed, and the run's output lists the
    /// failure ([`RunOutput::tool_failures`](crate::RunOutput::tool_failures)), where
    /// [`ToolFailure::downcast_ref`](crate::tool::ToolFailure::downcast_ref) finds the error.
    ///
    /// ```
    /// use std::fmt;
    ///
    /// use hookchain::error::Report;
    /// use hookchain::prelude::*;
    /// use hookchain::{chain, hook};
    ///
    /// /// The application's error: a user with no quota left.
    /// #[derive(Debug)]
    /// struct QuotaExceeded {
    ///     user: u64,
    /// }
    ///
    /// impl fmt::Display for QuotaExceeded {
    ///     fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    ///         write!(f, "user {} has no quota left", self.user)
    ///     }
    /// }
    ///
    /// impl std::error::Error for QuotaExceeded {}
    ///
    /// /// Ends the run before the model is called when the user has no quota left.
    /// #[hook(before_model)]
    /// fn quota() -> Result<Flow, Error> {
    ///     Err(Error::application(QuotaExceeded { user: 42 }))
    /// }
    ///
    /// # futures::executor::block_on(async {
    /// let agent = Agent::builder(ScriptedModel::new([]))
    ///     .chain(chain![quota])
    ///     .build()?;
    /// let error = agent.run("Hello").await.unwrap_err();
    ///
    /// // The caller gets its error back by its type…
    /// let exceeded = error.downcast_ref::<QuotaExceeded>().expect("the application's error");
    /// assert_eq!(exceeded.user, 42);
    /// // …and a report names where it came from, then the error and its causes.
    /// assert_eq!(
    ///     Report(&error).to_string(),
    ///     "middleware `quota` failed in `before_model`: user 42 has no quota left"
    /// );
    /// assert!(matches!(error, Error::Application(_)));
    /// assert_eq!(agent.model().calls(), 0);
    /// # Ok::<(), Error>(())
    /// # }).unwrap();
    /// ```
    pub fn application(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        Error::Application(Box::new(ApplicationError(Raised::new(
            None,
            None,
            Box::new(error),
        ))))
    }

    /// The first error of type `E` among this error and its causes (its
    /// [`source`](std::error::Error::source)s, and theirs): the application's error of an
    /// [`Error::application`], a hook's of an [`Error::hook`] (or a `#[hook]` fn's `Err`), the
    /// cause a model gave its [`ModelError`], …
    ///
    /// Unlike [`<dyn Error>::downcast_ref`](std::error::Error), which looks at one error,
    /// this looks through the causes, since the run's error wraps the one raised.
    #[must_use]
    pub fn downcast_ref<E: std::error::Error + 'static>(&self) -> Option<&E> {
        find_in_chain(self)
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
        Error::from(MiddlewareError(Raised::new(
            middleware,
            Some(hook),
            Box::new(Panicked(crate::tool::panic_message(payload))),
        )))
    }

    /// A chain called the synchronous form of a hook that `middleware` lists in `SYNC_HOOKS`
    /// without implementing it (a hand-written impl that set the hidden constant).
    pub(crate) fn no_sync_form(middleware: &'static str, hook: Hook) -> Self {
        Error::middleware(middleware, hook, NoSyncForm)
    }

    /// Records the hook of an error that left a chain unnamed (a wrap hook that raised
    /// [`Error::hook`]): the middleware stays unknown, the hook is known.
    pub(crate) fn attribute_hook(mut self, hook: Hook) -> Self {
        if let Some(raised) = self.raised_mut() {
            raised.hook.get_or_insert(hook);
        } else if let Error::Interrupted(interruption) = &mut self {
            interruption.left(hook);
        }
        self
    }

    /// The error, named after the instance `to` where it is named after its middleware `from`
    /// ([`Named`](crate::middleware::Named)).
    pub(crate) fn renamed(mut self, from: &str, to: &'static str) -> Self {
        if let Some(raised) = self.raised_mut() {
            if raised.middleware == Some(from) {
                raised.middleware = Some(to);
            }
        } else if let Error::Interrupted(interruption) = &mut self {
            interruption.renamed(from, to);
        }
        self
    }

    /// Names the middleware and hook of an error raised by a hook that did not name them yet.
    ///
    /// Errors that already carry a name (raised deeper in the chain) are returned unchanged, so an
    /// error is attributed once, to the middleware that raised it.
    #[doc(hidden)]
    #[must_use]
    pub fn attribute(mut self, middleware: &'static str, hook: Hook) -> Self {
        if let Some(raised) = self.raised_mut() {
            if raised.middleware.is_none() {
                raised.middleware = Some(middleware);
                raised.hook = Some(hook);
            }
        } else if let Error::Interrupted(interruption) = &mut self {
            interruption.raised_by(middleware);
            interruption.left(hook);
        }
        self
    }

    /// Where a hook's error came from, for a middleware's error or the application's: the one
    /// record the chain fills in as the error leaves it.
    fn raised_mut(&mut self) -> Option<&mut Raised> {
        match self {
            Error::Middleware(error) => Some(&mut error.0),
            Error::Application(error) => Some(&mut error.0),
            _ => None,
        }
    }
}

/// What [`Error::Interrupted`] says: who raised the interrupt, where, and how to pause the run
/// where it can pause.
struct Misplaced<'a>(&'a Interruption);

impl fmt::Display for Misplaced<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const WHERE: &str = "interrupts come from `before_model` and `after_model` (which \
            return `Ok(Flow::interrupt(payload))`), `wrap_tool_call` (which returns \
            `Err(Error::interrupt(payload))`) and tools";
        let who = self.0.source.as_deref().unwrap_or("?");
        match (self.0.raised_in, self.0.as_error) {
            (Some(hook @ (Hook::BeforeModel | Hook::AfterModel)), true) => write!(
                f,
                "middleware `{who}` returned `Err(Error::interrupt(..))` from `{hook}`, which \
                 fails the run: a `{hook}` hook pauses the run by returning \
                 `Ok(Flow::interrupt(payload))` (`Err(Error::interrupt(..))` is for \
                 `wrap_tool_call` hooks)"
            ),
            (Some(hook), true) => write!(
                f,
                "middleware `{who}` returned `Err(Error::interrupt(..))` from `{hook}`, where the \
                 run cannot pause: {WHERE}"
            ),
            (Some(hook), false) => write!(
                f,
                "middleware `{who}` raised an interrupt in `{hook}`, where the run cannot pause: \
                 {WHERE}"
            ),
            (None, _) => write!(
                f,
                "middleware `{who}` raised an interrupt where the run cannot pause: {WHERE}"
            ),
        }
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

/// An error a hook raised, with where it came from: the middleware and the hook, filled in by
/// the chain as the error leaves them. What [`MiddlewareError`] and [`ApplicationError`] share.
#[derive(Debug)]
struct Raised {
    middleware: Option<&'static str>,
    hook: Option<Hook>,
    source: BoxError,
}

impl Raised {
    fn new(middleware: Option<&'static str>, hook: Option<Hook>, source: BoxError) -> Self {
        Raised {
            middleware,
            hook,
            source,
        }
    }

    /// What failed, not why (the cause is the error's `source()`, so that a report walking the
    /// chain prints each cause once); `unknown` when the error left no chain.
    fn describe(&self, f: &mut fmt::Formatter<'_>, unknown: &str) -> fmt::Result {
        match (self.middleware, self.hook) {
            (Some(middleware), Some(hook)) => {
                write!(f, "middleware `{middleware}` failed in `{hook}`")
            }
            (None, Some(hook)) => write!(f, "a middleware failed in `{hook}`"),
            _ => f.write_str(unknown),
        }
    }
}

/// A failure raised by a middleware hook.
#[derive(Debug)]
pub struct MiddlewareError(Raised);

impl MiddlewareError {
    /// The name of the middleware that failed ([`Middleware::NAME`](crate::Middleware::NAME)),
    /// if the error left a chain.
    #[must_use]
    pub fn middleware(&self) -> Option<&'static str> {
        self.0.middleware
    }

    /// The hook that failed, if the error left a chain.
    #[must_use]
    pub fn hook(&self) -> Option<Hook> {
        self.0.hook
    }

    /// The error the hook raised.
    #[must_use]
    pub fn inner(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
        &*self.0.source
    }
}

impl fmt::Display for MiddlewareError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.describe(f, "a middleware hook failed")
    }
}

impl std::error::Error for MiddlewareError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.0.source)
    }
}

/// The application's own error, as a run's error ([`Error::application`]), with the
/// middleware and the hook it came from.
///
/// `Display` says where it came from; the application's error is its
/// [`source`](std::error::Error::source).
#[derive(Debug)]
pub struct ApplicationError(Raised);

impl ApplicationError {
    /// The name of the middleware that raised it, if it left a chain.
    #[must_use]
    pub fn middleware(&self) -> Option<&'static str> {
        self.0.middleware
    }

    /// The hook that raised it, if it left a chain.
    #[must_use]
    pub fn hook(&self) -> Option<Hook> {
        self.0.hook
    }

    /// The application's error.
    #[must_use]
    pub fn inner(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
        &*self.0.source
    }

    /// The application's error, owned (`downcast` it to its type).
    #[must_use]
    pub fn into_inner(self) -> BoxError {
        self.0.source
    }
}

impl fmt::Display for ApplicationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.describe(f, "the application failed")
    }
}

impl std::error::Error for ApplicationError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.0.source)
    }
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use super::*;

    #[test]
    fn a_model_error_inside_the_run_error_is_its_source() {
        let error = Error::from(ModelError::timeout("no answer within 1s"));
        let source = error.source().map(ToString::to_string);
        assert_eq!(source.as_deref(), Some("no answer within 1s"));
    }
}
