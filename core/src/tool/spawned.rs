//! Tool calls in tokio tasks of their own ([`ToolExecution::Spawned`](super::ToolExecution)).
//!
//! Only the tool's own future is spawned: the `wrap_tool_call` onion stays in the run's task,
//! so hooks keep borrowing the run. The task owns everything the tool reads — the tool (shared
//! with the registry), a copy of the run's context that shares its history and run context,
//! and a call frame of its own — so it is `'static`. What the tool returns, an interrupt
//! included, comes back to the run's task, which handles it as for a call that ran there.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};

use tokio::runtime::Handle;
use tokio::task::{JoinError, JoinHandle};
use tracing::Instrument;

use super::registry::guard;
use super::{ToolError, ToolRegistry, panic_message};
use crate::context::{CallFrame, LayerAnswer, Raiser, ToolContext};
use crate::message::{Content, ToolCall};

impl ToolRegistry {
    /// Runs `call` in a task of its own on the current tokio runtime, or — outside any runtime
    /// — in the caller's task, as [`try_execute_in`](Self::try_execute_in) does.
    ///
    /// `cx` is the tool's view of the call (its own answer, if any).
    pub(crate) async fn try_execute_spawned(
        &self,
        cx: ToolContext<'_>,
        call: &ToolCall,
    ) -> Result<Content, ToolError> {
        let Ok(runtime) = Handle::try_current() else {
            return self.try_execute_in(cx, call).await;
        };
        let tool = self.shared(call)?;
        let run = cx.run().for_spawned_tool();
        let answers = cx
            .resume_value()
            .map(|answer| {
                vec![LayerAnswer {
                    raiser: Raiser::Tool,
                    answer: answer.clone(),
                    asked: cx.interrupt_payload().cloned().unwrap_or_default(),
                }]
            })
            .unwrap_or_default();
        let call = call.clone();
        let name = call.name.clone();
        let task = async move {
            let frame = CallFrame::with_answers(call.id.clone(), call.name.clone(), answers);
            let cx = ToolContext::new(&run, &frame).view(Raiser::Tool);
            // The tool's future is made inside the guard, so a panic making it is caught too.
            let outcome = guard(&call, async {
                tool.call_boxed(cx, call.arguments.clone()).await
            })
            .await;
            (outcome, frame.into_parts().3, run.tool_usage.take())
        };
        // The task reports to the run's span, as a call in the run's task does.
        let task = AbortOnDrop(runtime.spawn(task.in_current_span()));
        match task.await {
            Ok((outcome, finish, spent)) => {
                // What the task's context collected goes to the run's: an answer for the whole
                // run, the usage of models the call ran.
                if let Some(answer) = finish {
                    cx.end_run_with(answer);
                }
                cx.add_usage(spent);
                outcome
            }
            Err(error) => Err(lost(&name, error)),
        }
    }
}

/// The error of a tool task that did not return: the guard catches the tool's panics, so it
/// was cancelled (its runtime shut down).
fn lost(tool: &str, error: JoinError) -> ToolError {
    match error.try_into_panic() {
        Ok(payload) => ToolError::Panicked {
            tool: tool.to_owned(),
            message: panic_message(payload.as_ref()),
        },
        Err(_) => ToolError::failed(
            tool,
            "the tool's task was cancelled before it finished (its runtime shut down)",
        ),
    }
}

/// A spawned task that is aborted when its handle is dropped: a run's future dropped while its
/// tools run leaves no tool running.
struct AbortOnDrop<T>(JoinHandle<T>);

impl<T> Future for AbortOnDrop<T> {
    type Output = Result<T, JoinError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        Pin::new(&mut self.0).poll(cx)
    }
}

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        // A finished task ignores it.
        self.0.abort();
    }
}
