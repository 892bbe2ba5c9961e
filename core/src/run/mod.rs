//! What a run emits and returns: its events (and the queue a stream reads them from), a tool's
//! progress among them, and its output.
//!
//! Their public paths are the agent's (and `tool::ToolProgress`). They sit below the run's
//! context, which emits the events and records the store's cleanup error as the run goes.

mod events;
mod output;
mod progress;
mod tool_log;

pub use events::{AgentEvent, SubAgentEvent};
pub(crate) use events::{Delivered, EventQueue, RunEvents};
pub use output::{CleanupError, EndReason, RunOutput};
pub use progress::{ProgressSink, ToolProgress};
pub use tool_log::{LogLevel, LogSink, ToolLog};
