//! The centre of each onion: the model call and the tool call themselves.
//!
//! Both return futures that are not `async` blocks: the deepest path of an onion runs through
//! them, and each `async` state machine on that path counts against the compiler's query-depth
//! limit (see the crate docs on onion depth).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};

use crate::context::{Context, Raiser, ToolContext};
use crate::error::{Error, ModelError};
use crate::interrupt::Interruption;
use crate::message::{ToolCall, ToolResult};
use crate::middleware::{ModelNext, ToolNext};
use crate::model::{Model, ModelRequest, ModelResponse};
use crate::tool::{ToolError, ToolRegistry, result_of};

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
        ModelCall {
            invoke: self.model.invoke(request),
        }
    }
}

pin_project_lite::pin_project! {
    /// The model's own future, with its error lifted into [`Error::Model`].
    struct ModelCall<F> {
        #[pin]
        invoke: F,
    }
}

impl<F: Future<Output = Result<ModelResponse, ModelError>>> Future for ModelCall<F> {
    type Output = Result<ModelResponse, Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        self.project().invoke.poll(cx).map_err(Error::Model)
    }
}

/// Runs the tool (or, on a resumed call the tool interrupted, finishes it with the answer); the
/// innermost `next` of the tool-call onion.
pub(super) struct CallTool<'a> {
    pub(super) tools: &'a ToolRegistry,
}

impl ToolNext for CallTool<'_> {
    fn call<'c>(
        &mut self,
        cx: ToolContext<'c>,
        call: ToolCall,
    ) -> impl Future<Output = ToolResult> + Send {
        // The registry boxes the tool's own future (tools of different types share it).
        let tools = self.tools;
        let cx = cx.view(Raiser::Tool);
        async move {
            let outcome = match cx.resume_value() {
                Some(answer) => tools.try_resume(&call, answer.clone()).await,
                None => tools.try_execute(&call).await,
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
