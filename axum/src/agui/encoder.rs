//! A run's events ([`AgentEvent`]) as AG-UI events: the lifecycle the protocol's clients check
//! (`RUN_STARTED` first; text messages, reasoning and tool calls opened before their content
//! and closed before `RUN_FINISHED`; nothing after the end).

use std::collections::{BTreeMap, HashMap, HashSet};

use hookchain_core::agent::{AgentEvent, EndReason, RunOutput};
use hookchain_core::interrupt::CheckpointError;
use hookchain_core::message::{Message, Role};
use hookchain_core::model::ModelEvent;
use hookchain_core::{Error, ModelErrorKind};
use serde_json::json;

use super::client_pause::ClientPause;
use super::events::{AguiEvent, Outcome, TokenUsage};

/// The name of the custom event that voids the model output shown since the last message:
/// the model call was sent again (a retry, a fallback) or its answer replaced.
pub const OUTPUT_VOIDED: &str = "hookchain.output_voided";
/// The name of the custom event of a tool call's progress.
pub const TOOL_PROGRESS: &str = "hookchain.tool_progress";
/// The name of the custom event carrying a sub-agent's text.
pub const SUB_AGENT_TEXT: &str = "hookchain.sub_agent_text";

/// Turns one run's events into AG-UI events, in order. Message ids are the run's id and a
/// count (`run-7:0`, `run-7:1`, …): the same run encodes to the same events, which lets a client
/// that reconnects pick up where it was.
#[derive(Debug)]
pub struct AguiEncoder {
    thread_id: String,
    run_id: String,
    /// The number of the assistant message being streamed.
    message: u64,
    /// The number of the next tool result's message.
    result: u64,
    text_open: bool,
    reasoning_open: bool,
    /// The model's calls started and not ended, by their index in the answer.
    open_calls: BTreeMap<usize, String>,
    /// The ids of the calls streamed for the current answer, in order.
    streamed_calls: Vec<String>,
    /// A call the agent renamed (its id repeated one of the history's), by its new id: results
    /// come under the new id, the client knows the old.
    renamed: HashMap<String, String>,
    /// The calls whose result was sent: a result a hook supplied (a rejection, a cached
    /// result) enters the history without `ToolCallFinished`, and is sent when it does.
    results_sent: HashSet<String>,
    /// What the client sees of a pause.
    pause: ClientPause,
    ended: bool,
}

impl AguiEncoder {
    /// An encoder for run `run_id` of thread `thread_id`.
    pub fn new(thread_id: impl Into<String>, run_id: impl Into<String>) -> Self {
        Self {
            thread_id: thread_id.into(),
            run_id: run_id.into(),
            message: 0,
            result: 0,
            text_open: false,
            reasoning_open: false,
            open_calls: BTreeMap::new(),
            streamed_calls: Vec::new(),
            renamed: HashMap::new(),
            results_sent: HashSet::new(),
            pause: ClientPause::default(),
            ended: false,
        }
    }

    /// Shows pauses as `pause` says from now on (an [`AgentServer`](crate::AgentServer) gives
    /// each turn a view with a salt of its own).
    pub fn set_pause_view(&mut self, pause: ClientPause) {
        self.pause = pause;
    }

    /// The first event.
    pub fn start(&self) -> AguiEvent {
        AguiEvent::RunStarted {
            thread_id: self.thread_id.clone(),
            run_id: self.run_id.clone(),
        }
    }

    /// Whether the run's last event was encoded (`RUN_FINISHED` or `RUN_ERROR`).
    pub fn is_ended(&self) -> bool {
        self.ended
    }

    fn message_id(&self) -> String {
        format!("{}:{}", self.run_id, self.message)
    }

    fn reasoning_id(&self) -> String {
        format!("{}:{}:reasoning", self.run_id, self.message)
    }

    /// Appends the AG-UI events of `event` to `out`.
    pub fn event(&mut self, event: &AgentEvent, out: &mut Vec<AguiEvent>) {
        if self.ended {
            return;
        }
        match event {
            AgentEvent::Model(event) => self.model_event(event, out),
            AgentEvent::ModelOutputVoided => {
                self.close_all(out);
                out.push(AguiEvent::Custom {
                    name: OUTPUT_VOIDED,
                    value: json!({ "messageId": self.message_id() }),
                });
                self.message += 1;
                self.streamed_calls.clear();
            }
            AgentEvent::MessageAdded(message) if message.role == Role::Assistant => {
                self.close_all(out);
                // The calls kept, in order, against the ones streamed: any the agent renamed.
                for (kept, streamed) in message.tool_calls.iter().zip(&self.streamed_calls) {
                    if kept.id != *streamed {
                        self.renamed.insert(kept.id.clone(), streamed.clone());
                    }
                }
                self.streamed_calls.clear();
                self.message += 1;
            }
            AgentEvent::ToolProgress(progress) => out.push(AguiEvent::Custom {
                name: TOOL_PROGRESS,
                value: json!({
                    "toolCallId": self.client_call_id(&progress.call_id),
                    "tool": progress.tool,
                    "progress": progress.progress,
                    "total": progress.total,
                    "message": progress.message,
                }),
            }),
            AgentEvent::ToolCallFinished(result) => {
                self.result_of(&result.call_id, result.content.text().into_owned(), out);
            }
            AgentEvent::MessageAdded(message) if message.role == Role::Tool => {
                self.tool_message(message, out);
            }
            AgentEvent::Output(output) => self.finish(output, out),
            AgentEvent::SubAgent(sub) => {
                if let Some(text) = sub.event.text_delta().filter(|text| !text.is_empty()) {
                    out.push(AguiEvent::Custom {
                        name: SUB_AGENT_TEXT,
                        value: json!({
                            "toolCallId": self.client_call_id(&sub.call_id),
                            "agent": sub.agent,
                            "delta": text,
                        }),
                    });
                }
            }
            // The start of a call (announced by the model's events), an interrupt (the run's
            // output has them all), events of later versions.
            _ => {}
        }
    }

    /// Sends the result `content` of the call `call_id`, once.
    fn result_of(&mut self, call_id: &str, content: String, out: &mut Vec<AguiEvent>) {
        if !self.results_sent.insert(call_id.to_owned()) {
            return;
        }
        let message_id = format!("{}:result:{}", self.run_id, self.result);
        self.result += 1;
        out.push(AguiEvent::ToolCallResult {
            message_id,
            tool_call_id: self.client_call_id(call_id),
            content,
            role: "tool",
        });
    }

    /// A tool message entering the history: sent as its call's result unless the call's
    /// result was (a result a hook supplied — a rejection, a cached result, an emulated tool,
    /// a guardrail's replacement — or a call closed unrun comes only so).
    fn tool_message(&mut self, message: &Message, out: &mut Vec<AguiEvent>) {
        if let Some(call_id) = &message.tool_call_id {
            self.result_of(call_id, message.text().into_owned(), out);
        }
    }

    /// The id the client knows a call by.
    fn client_call_id(&self, id: &str) -> String {
        self.renamed
            .get(id)
            .cloned()
            .unwrap_or_else(|| id.to_owned())
    }

    fn model_event(&mut self, event: &ModelEvent, out: &mut Vec<AguiEvent>) {
        match event {
            ModelEvent::TextDelta { text, .. } if !text.is_empty() => {
                self.close_reasoning(out);
                if !std::mem::replace(&mut self.text_open, true) {
                    out.push(AguiEvent::TextMessageStart {
                        message_id: self.message_id(),
                        role: "assistant",
                    });
                }
                out.push(AguiEvent::TextMessageContent {
                    message_id: self.message_id(),
                    delta: text.clone(),
                });
            }
            ModelEvent::ReasoningDelta { text, .. } if !text.is_empty() => {
                if !std::mem::replace(&mut self.reasoning_open, true) {
                    out.push(AguiEvent::ReasoningStart {
                        message_id: self.reasoning_id(),
                    });
                    out.push(AguiEvent::ReasoningMessageStart {
                        message_id: self.reasoning_id(),
                        role: "reasoning",
                    });
                }
                out.push(AguiEvent::ReasoningMessageContent {
                    message_id: self.reasoning_id(),
                    delta: text.clone(),
                });
            }
            ModelEvent::ToolCallStart { index, id, name } => {
                self.close_reasoning(out);
                self.close_text(out);
                if let Some(open) = self.open_calls.remove(index) {
                    out.push(AguiEvent::ToolCallEnd { tool_call_id: open });
                }
                out.push(AguiEvent::ToolCallStart {
                    tool_call_id: id.clone(),
                    tool_call_name: name.clone(),
                    parent_message_id: self.message_id(),
                });
                self.open_calls.insert(*index, id.clone());
                self.streamed_calls.push(id.clone());
            }
            ModelEvent::ToolCallDelta { index, arguments } if !arguments.is_empty() => {
                if let Some(id) = self.open_calls.get(index) {
                    out.push(AguiEvent::ToolCallArgs {
                        tool_call_id: id.clone(),
                        delta: arguments.clone(),
                    });
                }
            }
            ModelEvent::ToolCallEnd { index, .. } => {
                if let Some(id) = self.open_calls.remove(index) {
                    out.push(AguiEvent::ToolCallEnd { tool_call_id: id });
                }
            }
            // Usage, the finish, signatures, metadata: nothing the client shows.
            _ => {}
        }
    }

    fn close_text(&mut self, out: &mut Vec<AguiEvent>) {
        if std::mem::take(&mut self.text_open) {
            out.push(AguiEvent::TextMessageEnd {
                message_id: self.message_id(),
            });
        }
    }

    fn close_reasoning(&mut self, out: &mut Vec<AguiEvent>) {
        if std::mem::take(&mut self.reasoning_open) {
            out.push(AguiEvent::ReasoningMessageEnd {
                message_id: self.reasoning_id(),
            });
            out.push(AguiEvent::ReasoningEnd {
                message_id: self.reasoning_id(),
            });
        }
    }

    /// Closes whatever is open: the client refuses to end a run with anything open.
    fn close_all(&mut self, out: &mut Vec<AguiEvent>) {
        self.close_reasoning(out);
        self.close_text(out);
        for (_, id) in std::mem::take(&mut self.open_calls) {
            out.push(AguiEvent::ToolCallEnd { tool_call_id: id });
        }
    }

    fn finish(&mut self, output: &RunOutput, out: &mut Vec<AguiEvent>) {
        self.close_all(out);
        let mut interrupts = self.pause.interrupts(output.interrupts());
        for interrupt in &mut interrupts {
            if let Some(id) = &mut interrupt.tool_call_id {
                *id = self.client_call_id(id);
            }
        }
        let outcome = if interrupts.is_empty() {
            Outcome::Success
        } else {
            Outcome::Interrupt { interrupts }
        };
        let usage = &output.usage;
        out.push(AguiEvent::RunFinished {
            thread_id: self.thread_id.clone(),
            run_id: self.run_id.clone(),
            result: json!({
                "text": output.text(),
                "end": end_name(output.end),
            }),
            outcome,
            usage: vec![TokenUsage {
                provider: None,
                input_tokens: usage.input_tokens,
                output_tokens: usage.output_tokens,
                total_tokens: usage.input_tokens.saturating_add(usage.output_tokens),
                cached_input_tokens: usage.cache_read_tokens,
            }],
        });
        self.ended = true;
    }

    /// The end of a run that gave up its thread's pause: nothing ran, and the pause's calls are
    /// answered — `closed`, the tool messages that giving up the pause added to the history
    /// ([`Thread::abandon_pause`](hookchain_core::Thread::abandon_pause)), are sent as their
    /// calls' results, so that a client shows none of them pending.
    pub fn abandoned(&mut self, closed: &[Message], out: &mut Vec<AguiEvent>) {
        if self.ended {
            return;
        }
        self.close_all(out);
        for message in closed.iter().filter(|message| message.role == Role::Tool) {
            self.tool_message(message, out);
        }
        out.push(AguiEvent::RunFinished {
            thread_id: self.thread_id.clone(),
            run_id: self.run_id.clone(),
            result: json!({ "text": null, "end": "abandoned" }),
            outcome: Outcome::Success,
            usage: Vec::new(),
        });
        self.ended = true;
    }

    /// The event of a run that failed with `error` (after whatever it streamed): what is open
    /// is closed, and `RUN_ERROR` says what went wrong in words fit for a client — a kind and
    /// a code, never the error's internals (a provider's message, a path, a query).
    pub fn error(&mut self, error: &Error, out: &mut Vec<AguiEvent>) {
        if self.ended {
            return;
        }
        self.close_all(out);
        let (code, message) = public_error(error);
        out.push(AguiEvent::RunError {
            message: message.to_owned(),
            code,
        });
        self.ended = true;
    }
}

/// How `end` is named in a run's result.
fn end_name(end: EndReason) -> &'static str {
    match end {
        EndReason::Finished => "finished",
        EndReason::Refused => "refused",
        EndReason::Filtered => "filtered",
        EndReason::Truncated => "truncated",
        EndReason::Jumped => "jumped",
        EndReason::Interrupted => "interrupted",
        EndReason::Stepped => "stepped",
        EndReason::Cancelled => "cancelled",
        _ => "other",
    }
}

/// A failure's code and words for a client.
pub(crate) fn public_error(error: &Error) -> (&'static str, &'static str) {
    match error {
        Error::Model(model) => match model.kind() {
            ModelErrorKind::RateLimited => (
                "model_rate_limited",
                "the model is rate limited; try again later",
            ),
            ModelErrorKind::Overloaded | ModelErrorKind::Timeout | ModelErrorKind::Connection => (
                "model_unavailable",
                "the model is unavailable; try again later",
            ),
            ModelErrorKind::ContextLengthExceeded => (
                "context_too_long",
                "the conversation is too long for the model",
            ),
            ModelErrorKind::ContentFiltered => (
                "content_filtered",
                "the model's provider filtered the request",
            ),
            _ => ("model_failed", "the model call failed"),
        },
        Error::MaxStepsExceeded { .. } => (
            "max_steps",
            "the agent did not finish within its step limit",
        ),
        Error::History(_) => ("invalid_input", "the conversation sent is not valid"),
        Error::Thread(_) => ("thread_busy", "the conversation cannot take a new turn now"),
        // A stopped run's key, still leased by the worker that ran it (until its lease expires).
        Error::Checkpoint(checkpoint)
            if matches!(**checkpoint, CheckpointError::Claimed { .. }) =>
        {
            (
                "thread_busy",
                "the conversation's last run is still held by the server that ran it; try again shortly",
            )
        }
        Error::Resume(_) => (
            "invalid_resume",
            "the pause cannot be resumed with these answers",
        ),
        _ => ("internal", "the agent failed"),
    }
}

/// The JSON of `events`.
#[cfg(test)]
pub(crate) fn to_json(events: &[AguiEvent]) -> Vec<serde_json::Value> {
    events
        .iter()
        .map(|event| serde_json::to_value(event).unwrap_or(serde_json::Value::Null))
        .collect()
}
