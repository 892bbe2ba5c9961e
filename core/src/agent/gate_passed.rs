//! [`GatePassed`]: word that a call outside a run has passed its gate.

use std::fmt;
use std::sync::Arc;

/// Told when a call outside a run ([`Agent::call_tool_or_pause`](crate::Agent::call_tool_or_pause),
/// [`Agent::resume_tool_call`](crate::Agent::resume_tool_call)) has passed the `after_model`
/// gate every call passes (approvals, limits, repairs) and is about to run through its
/// `wrap_tool_call` onion and the tool: put one in the call's
/// [`RunContext`](crate::RunContext).
///
/// Whoever serves calls uses it to tell the two halves of a call apart: a pause *before* it
/// (an approval still to give) is answered while the caller waits, the tool has not acted;
/// from here on the tool may act, and a long call can be handed to the background (an MCP
/// server makes it a task). Called at most once per call, on the task that runs it, before
/// the first layer of the onion; it should return at once.
///
/// ```
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicBool, Ordering};
///
/// use hookchain::prelude::*;
/// use hookchain::{GatePassed, RunContext, tool};
///
/// /// Adds two numbers.
/// #[tool]
/// async fn add(a: i64, b: i64) -> String {
///     (a + b).to_string()
/// }
///
/// # futures::executor::block_on(async {
/// let agent = Agent::builder(ScriptedModel::new([])).tool(add).build()?;
/// let passed = Arc::new(AtomicBool::new(false));
/// let told = Arc::clone(&passed);
/// let run_context =
///     RunContext::new().with(GatePassed::new(move || told.store(true, Ordering::SeqCst)));
/// let sum = agent
///     .with_context(run_context)
///     .call_tool(ToolCall::new("c1", "add", serde_json::json!({"a": 2, "b": 3})))
///     .await?;
/// assert_eq!(sum.content, "5");
/// assert!(passed.load(Ordering::SeqCst));
/// # Ok::<(), Error>(())
/// # }).unwrap();
/// ```
#[derive(Clone)]
pub struct GatePassed(Arc<dyn Fn() + Send + Sync>);

impl GatePassed {
    /// Calls `told` when the call has passed its gate.
    pub fn new(told: impl Fn() + Send + Sync + 'static) -> Self {
        Self(Arc::new(told))
    }

    pub(crate) fn tell(&self) {
        (self.0)();
    }
}

impl fmt::Debug for GatePassed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GatePassed").finish_non_exhaustive()
    }
}
