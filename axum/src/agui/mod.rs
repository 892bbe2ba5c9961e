//! The [AG-UI](https://docs.ag-ui.com) protocol (version 1.0, as `@ag-ui/core` defines it):
//! the events a run is streamed as, and the encoder that makes them from a run's
//! [`AgentEvent`](hookchain_core::agent::AgentEvent)s.
//!
//! | hookchain | AG-UI |
//! |---|---|
//! | the run starts | `RUN_STARTED` |
//! | the model's text | `TEXT_MESSAGE_START`, `TEXT_MESSAGE_CONTENT`…, `TEXT_MESSAGE_END` |
//! | the model's reasoning | `REASONING_START`, `REASONING_MESSAGE_*`, `REASONING_END` |
//! | the model's tool calls | `TOOL_CALL_START`, `TOOL_CALL_ARGS`…, `TOOL_CALL_END` |
//! | a tool's result (the tool's, or one a hook supplied: a rejection, a cached result) | `TOOL_CALL_RESULT` |
//! | the model output shown is void (a retry, a fallback) | `CUSTOM` `hookchain.output_voided` |
//! | a tool's progress | `CUSTOM` `hookchain.tool_progress` |
//! | a sub-agent's text | `CUSTOM` `hookchain.sub_agent_text` |
//! | the run answered | `RUN_FINISHED`, outcome `success` |
//! | the run paused (an approval, a question) | `RUN_FINISHED`, outcome `interrupt` (what a person answers: see [`ClientPause`]) |
//! | the pause given up | `TOOL_CALL_RESULT` for each call it closed, `RUN_FINISHED` |
//! | the run failed | `RUN_ERROR` (a code and words, never internals) |

mod client_pause;
mod encoder;
mod events;
mod input;
mod messages;

#[cfg(test)]
mod tests;

pub use client_pause::{ClientPause, InterruptMetadata, UnknownInterrupt};
pub use encoder::{AguiEncoder, OUTPUT_VOIDED, SUB_AGENT_TEXT, TOOL_PROGRESS};
pub use events::{AguiEvent, AguiInterrupt, Outcome, TokenUsage};
pub use input::{InputError, InputMessage, MAX_ID_LEN, ResumeEntry, ResumeStatus, RunAgentInput};
pub use messages::agui_messages;
