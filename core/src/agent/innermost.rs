//! The centre of each onion: the model call and the tool call themselves.
//!
//! Both return futures that are not `async` blocks: the deepest path of an onion runs through
//! them, and each `async` state machine on that path counts against the compiler's query-depth
//! limit (see the crate docs on onion depth).

use std::collections::VecDeque;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context as TaskContext, Poll};

use tracing::Span;

use futures::Stream;

use super::{AgentEvent, RunEvents};
use crate::chain::ChainChecks;
use crate::context::{Context, Raiser, ToolContext};
use crate::error::{Error, ModelError};
use crate::interrupt::Interruption;
use crate::message::{ToolCall, ToolResult};
use crate::middleware::{Emit, Hook, Middleware, ModelNext, ToolNext};
use crate::model::{Model, ModelEvent, ModelRequest, ModelResponse, ResponseAssembler, Usage};
use crate::telemetry;
use crate::tool::{ToolError, ToolExecution, ToolRegistry, result_of};

/// Calls the model; the innermost `next` of the model-call onion.
///
/// The model is invoked, or streamed when its events have somewhere to go: to the chain's
/// per-event hooks (then in every run, so that they act on streamed and unstreamed runs
/// alike), and to the consumer of a streamed run whose chain lets it see them live.
pub(super) struct CallModel<'a, M, C> {
    pub(super) model: &'a M,
    pub(super) chain: &'a C,
}

impl<M: Model, C: Middleware> ModelNext for CallModel<'_, M, C> {
    fn call(
        &mut self,
        cx: &mut Context,
        request: ModelRequest,
    ) -> impl Future<Output = Result<ModelResponse, Error>> + Send {
        cx.counters.model_calls = cx.counters.model_calls.saturating_add(1);
        // Every call the model really answers has its span: a retry's too, a short-circuited
        // call's not.
        let span = telemetry::chat_span(self.model, &request);
        let live = C::LIVE_STREAM && cx.events.is_some();
        if let Some(events) = &mut cx.events {
            events.model_call_starts();
        }
        // A model that panics fails the call (as a model error) rather than the run's task:
        // caught here, making its future, and in the future's own poll (no extra layer).
        let model = self.model;
        if !live && !C::HOOKS.contains(Hook::OnModelEvent) {
            // Entered only when someone listens: `in_scope` moves the request through its
            // closure (twice) and the model's future back out (twice).
            let invoke = if span.is_disabled() {
                catch_unwind(AssertUnwindSafe(|| model.invoke(request)))
            } else {
                span.in_scope(|| catch_unwind(AssertUnwindSafe(|| model.invoke(request))))
            };
            return match invoke {
                Ok(invoke) => ModelCall::Invoking {
                    invoke,
                    usage: &mut cx.counters.usage,
                    span,
                },
                Err(payload) => ModelCall::Panicked {
                    error: Some(model_panicked(payload.as_ref())),
                    span,
                },
            };
        }
        let stream = span.in_scope(|| catch_unwind(AssertUnwindSafe(|| model.stream(request))));
        match stream {
            // Boxed: the stream and the assembler would make every model call's future (and
            // so every onion) bigger, streamed or not.
            Ok(stream) => ModelCall::Streaming {
                call: Box::pin(Streamed {
                    stream,
                    chain: self.chain,
                    state: C::StreamState::default(),
                    assembler: ResponseAssembler::new(),
                    usage: &mut cx.counters.usage,
                    events: cx.events.as_deref_mut().filter(|_| live),
                    batch: VecDeque::new(),
                    ended: None,
                    span,
                }),
            },
            Err(payload) => ModelCall::Panicked {
                error: Some(model_panicked(payload.as_ref())),
                span,
            },
        }
    }
}

pin_project_lite::pin_project! {
    /// The model's own future (or stream), with its error lifted into [`Error::Model`] and its
    /// usage counted: here, where the model is really called, every call counts — also one
    /// whose response a wrap discards (a retry, a validation) — and nothing else does. Polled
    /// in its `chat` span, which records the answer (or the error).
    #[project = ModelCallProjection]
    enum ModelCall<'c, 'm, F, S, C, St> {
        Invoking {
            #[pin]
            invoke: F,
            usage: &'c mut Usage,
            span: Span,
        },
        Streaming {
            call: Pin<Box<Streamed<'c, 'm, S, C, St>>>,
        },
        Panicked {
            error: Option<ModelError>,
            span: Span,
        },
    }
}

pin_project_lite::pin_project! {
    /// A streamed model call: the model's events, each through the chain's per-event hooks,
    /// into the answer and, when the run streams live, to the consumer.
    #[project = StreamedProjection]
    struct Streamed<'c, 'm, S, C, St> {
        #[pin]
        stream: S,
        chain: &'m C,
        state: St,
        assembler: ResponseAssembler,
        usage: &'c mut Usage,
        events: Option<&'c mut RunEvents>,
        // The events for the consumer, handed to the run's queue together (one lock).
        batch: VecDeque<AgentEvent>,
        // The model's answer (or error), held until the consumer has taken the events before
        // it: what comes after the call (its hooks, the tools) waits for the consumer.
        ended: Option<Result<ModelResponse, Error>>,
        span: Span,
    }
}

impl<F, S, C> Future for ModelCall<'_, '_, F, S, C, C::StreamState>
where
    F: Future<Output = Result<ModelResponse, ModelError>>,
    S: Stream<Item = Result<ModelEvent, ModelError>>,
    C: Middleware,
{
    type Output = Result<ModelResponse, Error>;

    // Inlined into the onion's innermost layer: called out of line, its answer came back
    // through memory and every layer on the way out copied it.
    #[inline]
    fn poll(self: Pin<&mut Self>, task: &mut TaskContext<'_>) -> Poll<Self::Output> {
        match self.project() {
            ModelCallProjection::Invoking {
                invoke,
                usage,
                span,
            } => {
                let poll = || catch_unwind(AssertUnwindSafe(|| invoke.poll(task)));
                let polled = if span.is_disabled() {
                    poll()
                } else {
                    span.in_scope(poll)
                }
                .unwrap_or_else(|payload| Poll::Ready(Err(model_panicked(payload.as_ref()))));
                let answer = std::task::ready!(polled).map_err(Error::from);
                Poll::Ready(counted(answer, usage, span))
            }
            ModelCallProjection::Streaming { call } => call.as_mut().poll_events(task),
            ModelCallProjection::Panicked { error, span } => {
                Poll::Ready(Err(panicked(error, span)))
            }
        }
    }
}

impl<S, C> Streamed<'_, '_, S, C, C::StreamState>
where
    S: Stream<Item = Result<ModelEvent, ModelError>>,
    C: Middleware,
{
    fn poll_events(
        self: Pin<&mut Self>,
        task: &mut TaskContext<'_>,
    ) -> Poll<Result<ModelResponse, Error>> {
        let StreamedProjection {
            mut stream,
            chain,
            state,
            assembler,
            usage,
            events,
            batch,
            ended,
            span,
        } = self.project();
        let answer = match ended.take() {
            Some(answer) => answer,
            None => {
                let polled = span.in_scope(|| {
                    read_batch(
                        stream.as_mut(),
                        *chain,
                        state,
                        assembler,
                        events,
                        batch,
                        task,
                    )
                });
                if let Some(events) = events.as_deref() {
                    events.queue.put(batch);
                }
                std::task::ready!(polled)
            }
        };
        // What comes after the call (its hooks, the tools) waits until the consumer has taken
        // every event before the answer's end.
        if events
            .as_deref()
            .is_some_and(|events| !events.queue.is_empty())
        {
            *ended = Some(answer);
            task.waker().wake_by_ref();
            return Poll::Pending;
        }
        Poll::Ready(counted(answer, usage, span))
    }
}

/// Reads the model's events, each through the chain's per-event hooks into the answer and, for a
/// run streamed live, into `batch` for the consumer: until the model's answer ends (its answer,
/// or the error that ended it), the model has nothing yet, or `EVENTS_AHEAD` events are ready
/// for the consumer.
// One caller: outlined, it cost ~7 instructions an event.
#[inline(always)]
fn read_batch<S, C>(
    mut stream: Pin<&mut S>,
    chain: &C,
    state: &mut C::StreamState,
    assembler: &mut ResponseAssembler,
    events: &mut Option<&mut RunEvents>,
    batch: &mut VecDeque<AgentEvent>,
    task: &mut TaskContext<'_>,
) -> Poll<Result<ModelResponse, Error>>
where
    S: Stream<Item = Result<ModelEvent, ModelError>>,
    C: Middleware,
{
    loop {
        let polled = catch_unwind(AssertUnwindSafe(|| stream.as_mut().poll_next(task)))
            .unwrap_or_else(|payload| Poll::Ready(Some(Err(model_panicked(payload.as_ref())))));
        let event = match polled {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(Some(Ok(event))) => event,
            Poll::Ready(Some(Err(error))) => {
                return Poll::Ready(Err(Error::from(error)));
            }
            Poll::Ready(None) => {
                let answer = std::mem::take(assembler).finish().map_err(Error::from);
                if let (Ok(response), Some(events)) = (&answer, events.as_deref_mut()) {
                    events.streamed = Some(response.message.clone());
                }
                return Poll::Ready(answer);
            }
        };
        let mut answer = Answer {
            assembler,
            events: events.as_deref_mut(),
            batch,
        };
        let hooks = catch_unwind(AssertUnwindSafe(|| {
            chain.on_model_event(state, event, &mut answer)
        }))
        .unwrap_or_else(|payload| Err(Error::panicked(None, Hook::OnModelEvent, payload.as_ref())))
        .map_err(name_event_error::<C>);
        if let Err(error) = hooks {
            return Poll::Ready(Err(error));
        }
        // A few events at a time (the batch starts each poll empty): each return goes up
        // through every future of the run to the consumer and back down (about 200
        // instructions an event when it was one), while the queue stays short. The wake has the
        // stream come back for more once the consumer has taken them.
        if batch.len() >= EVENTS_AHEAD {
            task.waker().wake_by_ref();
            return Poll::Pending;
        }
    }
}

/// How many of the model's events a streamed run hands over before it yields to its consumer
/// (when the model has more at once): the most the run gets ahead of the consumer while the
/// model answers.
const EVENTS_AHEAD: usize = 8;

/// Names an error of the chain's per-event hooks after its middleware when the chain is one
/// (the members of a longer chain name their own errors; a panic there stays unnamed).
fn name_event_error<C: Middleware>(error: Error) -> Error {
    if ChainChecks::<C>::LEN != 1 {
        return error;
    }
    let name = ChainChecks::<C>::MEMBERS.names().next().unwrap_or(C::NAME);
    error.attribute(name, Hook::OnModelEvent)
}

/// The answer of a model call, counted and recorded in its span.
// Inlined: the answer (176 bytes) was copied into the call and out of it.
#[inline]
fn counted(
    answer: Result<ModelResponse, Error>,
    usage: &mut Usage,
    span: &Span,
) -> Result<ModelResponse, Error> {
    match &answer {
        Ok(response) => {
            *usage += response.usage;
            telemetry::record_response(span, response);
        }
        Err(Error::Model(error)) => telemetry::record_model_error(span, error.kind()),
        Err(_) => {}
    }
    answer
}

/// Where the events the per-event hooks let through go: into the answer, and to the consumer
/// of a run streamed live.
struct Answer<'s> {
    assembler: &'s mut ResponseAssembler,
    events: Option<&'s mut RunEvents>,
    /// The events for the consumer, not yet in the run's queue.
    batch: &'s mut VecDeque<AgentEvent>,
}

impl Emit for Answer<'_> {
    fn emit(&mut self, event: ModelEvent) -> Result<(), Error> {
        self.assembler.push(&event).map_err(Error::from)?;
        if let Some(events) = &mut self.events {
            self.batch.push_back(AgentEvent::Model(event));
            events.forwarded = true;
        }
        Ok(())
    }
}

/// The error of a model call whose model panicked making its future. Out of line: the
/// call's `poll` stays small enough to inline.
#[cold]
#[inline(never)]
fn panicked(error: &mut Option<ModelError>, span: &Span) -> Error {
    let error = error
        .take()
        .unwrap_or_else(|| model_panicked(&"polled again"));
    telemetry::record_model_error(span, error.kind());
    Error::from(error)
}

/// The model's error when its future panicked.
fn model_panicked(payload: &(dyn std::any::Any + Send)) -> ModelError {
    ModelError::provider(format!(
        "the model panicked: {}",
        crate::tool::panic_message(payload)
    ))
}

/// Runs the tool (on a resumed call the tool interrupted, its context carries the answer); the
/// innermost `next` of the tool-call onion.
pub(super) struct CallTool<'a> {
    pub(super) tools: &'a ToolRegistry,
    /// The agent's checkpointer, if it keeps its runs: a call on a lease about to run out
    /// renews it first.
    pub(super) durable: Option<&'a super::durable::Durable>,
    pub(super) execution: ToolExecution,
    /// Set once the tool runs: a call whose wraps never reach the tool was short-circuited.
    pub(super) executed: &'a AtomicBool,
}

impl ToolNext for CallTool<'_> {
    fn call<'c>(
        &mut self,
        cx: ToolContext<'c>,
        call: ToolCall,
    ) -> impl Future<Output = ToolResult> + Send {
        // The registry boxes the tool's own future (tools of different types share it).
        let (tools, execution, durable, executed) =
            (self.tools, self.execution, self.durable, self.executed);
        let cx = cx.view(Raiser::Tool);
        async move {
            // A durable run's lease about to run out (its renewals late or failing): renewed
            // first; if the store cannot, the call does not start, and the run stops after its
            // step (another worker takes the key once it expires, and must not find this call
            // going on).
            if let (Some(durable), Some(held)) = (durable, cx.run().held.as_deref())
                && !held.watch.has_margin()
                && !durable.renew_now(held).await
            {
                held.watch.ran_short_now();
                return super::run_loop::not_executed(
                    &call.id,
                    &call.name,
                    "the run's lease was running out",
                );
            }
            executed.store(true, Ordering::Relaxed);
            let outcome = match execution {
                ToolExecution::Concurrent => tools.try_execute_in(cx, &call).await,
                #[cfg(feature = "tokio")]
                ToolExecution::Spawned => tools.try_execute_spawned(cx, &call).await,
            };
            match outcome {
                Err(ToolError::Interrupt { payload }) => {
                    cx.pause(Interruption::new(payload).raised_by_tool(&call.name));
                    ToolResult::paused(&call.id)
                }
                outcome => result_of(&call, outcome),
            }
        }
    }
}
