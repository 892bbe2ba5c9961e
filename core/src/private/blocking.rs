//! What `#[tool(blocking)]` generates calls to: the synchronous body of a tool run on one of
//! tokio's blocking threads (feature `tokio`), and the check that stops the build without it.

use std::future::Future;
use std::pin::Pin;

use super::check::Has;
use crate::tool::ToolError;

/// A blocking body's call, boxed (the blocking thread's handle is allocated anyway).
pub type BlockingCall<R> = Pin<Box<dyn Future<Output = Result<R, ToolError>> + Send>>;

/// How the tool `&'static str` runs a body `fn(A) -> R` on its arguments `A` (the tool's, after
/// a clone of the tool for a method).
pub type RunBlocking<A, R> = fn(&'static str, A, fn(A) -> R) -> BlockingCall<R>;

impl<A: Send + 'static, R: Send + 'static> Has<(A, R)> {
    /// [`run_blocking`] for arguments and a result that can cross threads. A type that cannot
    /// is reported by the macro's `const` check at the parameter or return type that names it
    /// (`Has<T>::SEND`), and the call resolves to [`NoRunBlocking`]'s, which never runs: one
    /// error, in words, and no bound of ours.
    pub const RUN_BLOCKING: RunBlocking<A, R> =
        |tool, arguments, body| Box::pin(run_blocking(tool, move || body(arguments)));
}

/// For arguments or a result that are not `Send`, reported by the `const` checks beside the
/// call: never called.
pub trait NoRunBlocking<A, R> {
    /// Never called: compilation stops at the checks.
    const RUN_BLOCKING: RunBlocking<A, R> = |_, _, _| unreachable!("rejected at compile time");
}

impl<A, R> NoRunBlocking<A, R> for Has<(A, R)> {}

/// Whether hookchain was built with its feature `tokio`: a `#[tool(blocking)]` checks it in a
/// `const` spanned at its `blocking`, so that without the feature the build fails with one
/// error there, in words, rather than run the body on the run's thread.
pub const TOKIO: bool = cfg!(feature = "tokio");

/// Runs `body` on one of tokio's blocking threads (`tokio::task::spawn_blocking`) and waits
/// for it; outside any tokio runtime (under `futures::executor::block_on`, say), in the
/// caller's thread, as `ToolExecution::Spawned` runs its calls there.
///
/// A panic in `body` is resumed here, in the tool's future, so that it becomes the tool's
/// failure as any tool's panic does (the registry catches it). Dropping the future does not
/// stop `body`: a thread cannot be interrupted, so it runs to its end and its result is
/// dropped. A body that never started because its runtime shut down is the tool's failure.
#[cfg(feature = "tokio")]
pub async fn run_blocking<F, T>(tool: &str, body: F) -> Result<T, ToolError>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let task = match tokio::runtime::Handle::try_current() {
        Ok(runtime) => runtime.spawn_blocking(body),
        Err(_) => return Ok(body()),
    };
    match task.await {
        Ok(output) => Ok(output),
        Err(error) => match error.try_into_panic() {
            Ok(payload) => std::panic::resume_unwind(payload),
            Err(_) => Err(ToolError::failed(
                tool,
                "the tool's blocking body was cancelled before it ran (its runtime shut down)",
            )),
        },
    }
}

/// Without the feature `tokio`, never called: the build fails at the check of [`TOKIO`]. It
/// exists, with the bounds of the real one, so that the check is the only error.
#[cfg(not(feature = "tokio"))]
pub async fn run_blocking<F, T>(tool: &str, body: F) -> Result<T, ToolError>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let _ = (tool, body);
    unreachable!("`#[tool(blocking)]` without the feature `tokio` fails to build")
}
