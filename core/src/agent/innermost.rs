//! The centre of each onion: the model call and the tool call themselves.
//!
//! Both return futures that are not `async` blocks: the deepest path of an onion runs through
//! them, and each `async` state machine on that path counts against the compiler's query-depth
//! limit (see the crate docs on onion depth).

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context as TaskContext, Poll};

use tracing::Span;

use crate::context::{Context, Raiser, ToolContext};
use crate::error::{Error, ModelError};
use crate::interrupt::Interruption;
use crate::message::{ToolCall, ToolResult};
use crate::middleware::{ModelNext, ToolNext};
use crate::model::{Model, ModelRequest, ModelResponse, Usage};
use crate::telemetry;
use crate::tool::{ToolError, ToolExecution, ToolRegistry, result_of};

/// Invokes the model; the innermost `next` of the model-call onion.
pub(super) struct CallModel<'a, M> {
    pub(super) model: &'a M,
}

impl<M: Model> ModelNext for CallModel<'_, M> {
    fn call(
        &mut self,
        cx: &mut Context,
        request: ModelRequest,
    ) -> impl Future<Output = Result<ModelResponse, Error>> + Send {
        cx.counters.model_calls += 1;
        // Every call the model really answers has its span: a retry's too, a short-circuited
        // call's not.
        let span = telemetry::chat_span(self.model, &request);
        // A model that panics fails the call (as a model error) rather than the run's task:
        // caught here, making its future, and in the future's own poll (no extra layer).
        let model = self.model;
        let invoke = span.in_scope(|| catch_unwind(AssertUnwindSafe(|| model.invoke(request))));
        match invoke {
            Ok(invoke) => ModelCall::Running {
                invoke,
                usage: &mut cx.counters.usage,
                span,
            },
            Err(payload) => ModelCall::Panicked {
                error: Some(model_panicked(payload.as_ref())),
                span,
            },
        }
    }
}

pin_project_lite::pin_project! {
    /// The model's own future, with its error lifted into [`Error::Model`] and its usage
    /// counted: here, where the model is really called, every call counts — also one whose
    /// response a wrap discards (a retry, a validation) — and nothing else does. Polled in its
    /// `chat` span, which records the answer (or the error).
    #[project = ModelCallProjection]
    enum ModelCall<'c, F> {
        Running {
            #[pin]
            invoke: F,
            usage: &'c mut Usage,
            span: Span,
        },
        Panicked {
            error: Option<ModelError>,
            span: Span,
        },
    }
}

impl<F: Future<Output = Result<ModelResponse, ModelError>>> Future for ModelCall<'_, F> {
    type Output = Result<ModelResponse, Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        let (invoke, usage, span) = match self.project() {
            ModelCallProjection::Running {
                invoke,
                usage,
                span,
            } => (invoke, usage, span),
            ModelCallProjection::Panicked { error, span } => {
                let error = error
                    .take()
                    .unwrap_or_else(|| model_panicked(&"polled again"));
                telemetry::record_model_error(span, error.kind());
                return Poll::Ready(Err(Error::Model(error)));
            }
        };
        let polled = span
            .in_scope(|| catch_unwind(AssertUnwindSafe(|| invoke.poll(cx))))
            .unwrap_or_else(|payload| Poll::Ready(Err(model_panicked(payload.as_ref()))));
        match std::task::ready!(polled) {
            Ok(response) => {
                **usage += response.usage;
                telemetry::record_response(span, &response);
                Poll::Ready(Ok(response))
            }
            Err(error) => {
                telemetry::record_model_error(span, error.kind());
                Poll::Ready(Err(Error::Model(error)))
            }
        }
    }
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
        let (tools, execution) = (self.tools, self.execution);
        let cx = cx.view(Raiser::Tool);
        self.executed.store(true, Ordering::Relaxed);
        async move {
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
