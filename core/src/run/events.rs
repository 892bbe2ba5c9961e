//! What a streamed run yields ([`AgentEvent`]), and the queue that carries it from the run to
//! the consumer.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context as TaskContext, Poll};

use super::RunOutput;
use super::ToolProgress;
use crate::message::{Message, ToolCall, ToolResult};
use crate::model::{ModelEvent, ModelResponse};
use crate::pause::Interrupt;

/// One event of a streamed run ([`Agent::stream`](crate::Agent::stream)), in the order things
/// happen; the last is [`Output`](AgentEvent::Output) (or an error).
///
/// A step yields the model's answer as [`Model`](AgentEvent::Model) events, then the answer as
/// it enters the history ([`MessageAdded`](AgentEvent::MessageAdded)), then, for each tool call,
/// [`ToolCallStarted`](AgentEvent::ToolCallStarted) and
/// [`ToolCallFinished`](AgentEvent::ToolCallFinished) (calls of one step run concurrently, so
/// their events interleave), then each result as it enters the history, in call order.
///
/// The model events are *provisional* until the message is added:
/// [`ModelOutputVoided`](AgentEvent::ModelOutputVoided) says that the ones received since the
/// last message are void (the call was sent again, or its answer replaced), and the events of
/// the answer kept follow. What the model events say is always what enters the history (the
/// per-event hooks and `after_model` have acted on it; see *Streaming* in
/// [`middleware`](crate::middleware)).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum AgentEvent {
    /// An event of the model's answer in this step.
    Model(ModelEvent),
    /// The model events received since the last [`MessageAdded`](AgentEvent::MessageAdded) are
    /// void: the model call was sent again (a retry, a fallback) or its answer replaced. Drop
    /// what they showed; the answer's events follow.
    ModelOutputVoided,
    /// A message entered the history: the model's answer (after every hook), or a tool call's
    /// result. (Boxed, as the interrupt below: the events a stream carries most, the model's,
    /// are moved at the size of the largest variant.)
    MessageAdded(Box<Message>),
    /// A tool call is about to run (through the `wrap_tool_call` hooks).
    ToolCallStarted(ToolCall),
    /// A running tool call said how far it got (an MCP server's progress notification, a long
    /// tool's report through [`ToolContext::progress`](crate::ToolContext::progress)).
    ToolProgress(ToolProgress),
    /// A tool call has its result (the tool's, or a hook's).
    ToolCallFinished(ToolResult),
    /// An interrupt paused the run; [`Output`](AgentEvent::Output) follows, with the checkpoint
    /// to resume from (and the key it is stored under, [`RunOutput::pause_key`]).
    Interrupted(Box<Interrupt>),
    /// The run's output, as [`Agent::run`](crate::Agent::run) returns it: the last event.
    Output(Box<RunOutput>),
    /// An event of a sub-agent's run, inside one of this run's tool calls
    /// ([`AgentTool`](crate::subagent::AgentTool)): every event of the child's run but its
    /// output (which becomes the call's result), tagged with the call and the child. A
    /// grandchild's events come nested one level deeper.
    SubAgent(SubAgentEvent),
}

/// An event of a sub-agent's run, in its parent's stream ([`AgentEvent::SubAgent`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SubAgentEvent {
    /// The parent's tool call the child runs in.
    pub call_id: String,
    /// The child agent's name.
    pub agent: String,
    /// The child's event.
    pub event: Box<AgentEvent>,
}

impl AgentEvent {
    /// The text of a [`TextDelta`](ModelEvent::TextDelta) event, the tokens to show as they
    /// arrive; `None` for any other event.
    ///
    /// ```
    /// use hookchain::agent::AgentEvent;
    /// use hookchain::model::ModelEvent;
    ///
    /// let event = AgentEvent::Model(ModelEvent::TextDelta { index: 0, text: "Hi".into() });
    /// assert_eq!(event.text_delta(), Some("Hi"));
    /// assert_eq!(AgentEvent::ModelOutputVoided.text_delta(), None);
    /// ```
    #[must_use]
    pub fn text_delta(&self) -> Option<&str> {
        match self {
            AgentEvent::Model(ModelEvent::TextDelta { text, .. }) => Some(text),
            _ => None,
        }
    }
}

/// The events a run has produced and its consumer has not taken yet. Shared by the run (which
/// pushes) and its [`AgentStream`](super::AgentStream) (which pops): the stream polls the run
/// only when the queue is empty, and the run yields after each event it pushes, or, while the
/// model answers, after a few of the model's events (`EVENTS_AHEAD`), and goes on past the
/// model's answer only once the queue is empty; so a consumer that stops at an event stops the
/// run there (the model's answer read at most a few events further).
#[derive(Debug, Default)]
pub(crate) struct EventQueue {
    events: Mutex<VecDeque<AgentEvent>>,
}

impl EventQueue {
    pub(crate) fn push(&self, event: AgentEvent) {
        self.lock().push_back(event);
    }

    /// Queues the events of `batch`, leaving it empty: one lock for all of them.
    pub(crate) fn put(&self, batch: &mut VecDeque<AgentEvent>) {
        if batch.is_empty() {
            return;
        }
        let mut queue = self.lock();
        if queue.is_empty() {
            // The usual case (the stream polls the run once it has taken everything): the
            // buffers change places, nothing is moved.
            std::mem::swap(&mut *queue, batch);
        } else {
            queue.append(batch);
        }
    }

    /// Moves every queued event into `taken` (empty): one lock for all of them.
    pub(crate) fn take_into(&self, taken: &mut VecDeque<AgentEvent>) {
        debug_assert!(taken.is_empty());
        // Swapped rather than drained: the two buffers change places, and neither allocates
        // again once both have grown to a batch.
        std::mem::swap(&mut *self.lock(), taken);
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<AgentEvent>> {
        // Nothing panics while holding the lock: a poisoned queue is still consistent.
        self.events.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The streaming side of a run, in its context: where its events go, and what its consumer has
/// seen of the current step's answer.
#[derive(Debug, Clone)]
pub(crate) struct RunEvents {
    pub(crate) queue: Arc<EventQueue>,
    /// Whether model events of the current step were sent live (then a retry must void them).
    pub(crate) forwarded: bool,
    /// The answer whose events were last sent live in this step: the step compares it with the
    /// answer it keeps.
    pub(crate) streamed: Option<Message>,
}

impl RunEvents {
    pub(crate) fn boxed(queue: Arc<EventQueue>) -> Box<Self> {
        Box::new(Self {
            queue,
            forwarded: false,
            streamed: None,
        })
    }

    /// A model call starts: if events of an earlier attempt of this step reached the consumer,
    /// they are void.
    pub(crate) fn model_call_starts(&mut self) {
        if std::mem::take(&mut self.forwarded) {
            self.queue.push(AgentEvent::ModelOutputVoided);
        }
        self.streamed = None;
    }

    /// The step keeps `response`: unless the consumer saw exactly its answer live, the
    /// consumer is told what it saw is void (if it saw anything) and receives the answer's
    /// events; then the answer enters the history.
    pub(crate) fn answer_kept(&mut self, response: &ModelResponse) {
        let shown = self.streamed.take();
        if shown.as_ref() != Some(&response.message) {
            if self.forwarded {
                self.queue.push(AgentEvent::ModelOutputVoided);
            }
            for event in response.clone().into_events() {
                self.queue.push(AgentEvent::Model(event));
            }
        }
        self.forwarded = false;
        self.queue
            .push(AgentEvent::MessageAdded(Box::new(response.message.clone())));
    }
}

/// Resolves once the consumer has taken every queued event: the run awaits it after pushing,
/// so that it goes on only as fast as its consumer reads (and stops where the consumer stops).
/// Ready at once when nothing is queued.
pub(crate) struct Delivered<'a> {
    pub(crate) queue: Option<&'a EventQueue>,
}

impl Future for Delivered<'_> {
    type Output = ();

    // Awaited after every step of every run, streamed or not: outlined, a run that streams
    // nothing paid a call for each.
    #[inline]
    fn poll(self: Pin<&mut Self>, task: &mut TaskContext<'_>) -> Poll<()> {
        match self.queue {
            // The stream polls the run only once the queue is empty; the wake makes sure it
            // does, whoever polls the stream.
            Some(queue) if !queue.is_empty() => {
                task.waker().wake_by_ref();
                Poll::Pending
            }
            _ => Poll::Ready(()),
        }
    }
}
