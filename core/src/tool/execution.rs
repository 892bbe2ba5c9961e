//! [`ToolExecution`]: whether the tool calls of a step share the run's task or each get one.

/// How an agent runs the tool calls of one step; set with
/// [`AgentBuilder::tool_execution`](crate::AgentBuilder::tool_execution).
///
/// Either way the calls of a step run at the same time (up to
/// [`tool_concurrency`](crate::AgentBuilder::tool_concurrency)), every `wrap_tool_call` hook
/// runs in the run's task, and results, failures, panics and interrupts are handled the same.
/// Only where each tool's own future (its [`Tool::call`](crate::Tool::call)) is polled differs.
///
/// # Which to pick
///
/// - [`Concurrent`](Self::Concurrent) (the default) for tools that wait on I/O (HTTP calls,
///   database queries through an async driver): the calls are polled together in the run's
///   task, with no task to spawn and no `'static` bound, on any executor.
/// - `Spawned` (cargo feature `tokio`) for tools that **block their thread or burn CPU**
///   (parsing a large file, a synchronous client, a computation): each call is spawned as a
///   tokio task, so on a multi-threaded runtime one such tool no longer stalls the other calls
///   of its step, the run, or other runs sharing the thread. Code that blocks for long should
///   still go through [`tokio::task::spawn_blocking`] inside the tool (or be a
///   `#[tool(blocking)]`, which does that), so the runtime's worker threads stay free.
///
/// With `Spawned`, dropping the run's future aborts the tool tasks it spawned, and the tool
/// sees the same [`ToolContext`](crate::ToolContext) (call id, run id, thread id, history,
/// counters, run context, the answer to its own interrupt). On a
/// current-thread runtime the tasks still run one at a time; called outside any tokio runtime
/// (say, under `futures::executor::block_on`), `Spawned` runs the calls as `Concurrent` does.
///
/// [`tokio::task::spawn_blocking`]: https://docs.rs/tokio/1/tokio/task/fn.spawn_blocking.html
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ToolExecution {
    /// The calls of a step are polled together in the run's task (the default).
    #[default]
    Concurrent,
    /// Each tool call runs in a tokio task of its own, on the runtime the run is polled in.
    #[cfg(feature = "tokio")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
    Spawned,
}
