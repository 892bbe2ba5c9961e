//! Tools the model can call: the [`Tool`] trait, tools made from async closures ([`FnTool`]),
//! the [`ToolRegistry`] that dispatches calls by name, and [`ToolSource`]s for sets of tools
//! that change while the agent runs.

// The answer to an interrupt, as its raiser checks it: public as `interrupt::Answer`.
pub(crate) mod answer;
mod ask_user;
mod execution;
pub(crate) mod fn_tool;
// What `#[tool]` generates calls to, named by generated code through `__private`.
mod gemini_schema;
pub(crate) mod generated;
mod offered;
mod registry;
pub(crate) mod schema;
mod source;
#[cfg(feature = "tokio")]
mod spawned;

use std::future::Future;

pub use crate::message::final_answer::FinalAnswer;
pub use crate::message::tool_error::ToolError;
pub(crate) use crate::message::tool_failure::MessagePolicy;
pub use crate::message::tool_failure::{ToolFailure, ToolFailureKind};
pub use ask_user::{ASK_USER, AnswerError, AnswerKind, AskUser, Question};
pub use execution::ToolExecution;
pub use fn_tool::FnTool;
pub use gemini_schema::{gemini_schema, gemini_schema_problems};
pub use registry::ToolRegistry;
pub(crate) use registry::{ErasedTool, panic_message, result_of};
pub use schema::{clean_schema, parameters_schema};
pub use source::{SourcedTool, ToolSource};

pub use crate::model::tool_spec::ToolSpec;
pub use crate::run::{LogLevel, LogSink, ProgressSink, ToolLog, ToolProgress};

use crate::context::ToolContext;
use crate::message::Content;
use answer::Answer;

/// A tool the model can call.
///
/// Most tools are functions (or one-method impl blocks) under `#[tool]`, which writes this impl
/// from the signature and doc comments, or [`FnTool`]s made from an async closure and an
/// argument type deriving `serde::Deserialize` and `schemars::JsonSchema`.
/// Implement the trait directly for tools with their own schema or dispatch:
///
/// ```
/// use hookchain::message::Content;
/// use hookchain::tool::parameters_schema;
/// use hookchain::{Tool, ToolContext, ToolError, ToolSpec};
/// use schemars::JsonSchema;
///
/// #[derive(JsonSchema)]
/// struct Arguments {
///     /// The text to echo.
///     #[allow(dead_code)]
///     text: String,
/// }
///
/// struct Echo;
///
/// impl Tool for Echo {
///     fn spec(&self) -> ToolSpec {
///         ToolSpec::new(
///             "echo",
///             "Echoes the text, with the call's id.",
///             parameters_schema::<Arguments>(),
///         )
///     }
///
///     async fn call(
///         &self,
///         cx: ToolContext<'_>,
///         arguments: serde_json::Value,
///     ) -> Result<Content, ToolError> {
///         Ok(format!("{}: {}", cx.call_id(), arguments["text"]).into())
///     }
/// }
/// ```
///
/// # Results
///
/// A tool returns [`Content`]: most often one piece of text (`Ok(text.into())`), and
/// otherwise parts (see [`ContentPart`](crate::message::ContentPart)): images the model looks
/// at, structured JSON, links to resources. Each provider sends what its API takes in a tool
/// result and turns the rest into text (its docs say how); what any part becomes as text is
/// [`Content::to_text_lossy`].
///
/// ```
/// use hookchain::message::{Content, ContentPart};
/// use hookchain::{Tool, ToolContext, ToolError, ToolSpec};
///
/// struct Chart;
///
/// impl Tool for Chart {
///     fn spec(&self) -> ToolSpec {
///         ToolSpec::new("chart", "Draws this week's sales.", serde_json::json!({"type": "object"}))
///     }
///
///     async fn call(
///         &self,
///         _cx: ToolContext<'_>,
///         _arguments: serde_json::Value,
///     ) -> Result<Content, ToolError> {
///         Ok(Content::from(vec![
///             ContentPart::text("Sales rose on Thursday."),
///             ContentPart::image_base64("image/png", "iVBORw0KGgo="),
///             ContentPart::json(serde_json::json!({"thursday": 1204})),
///         ]))
///     }
/// }
/// ```
///
/// # Interrupts
///
/// A tool pauses the run by returning `Err(ToolError::Interrupt { payload })` (see
/// [`interrupt`](crate::interrupt)). When the run resumes with an answer, the tool is called
/// again with the same arguments, and [`cx.resume_value()`](ToolContext::resume_value) is the
/// answer: the tool decides what the model reads. [`check_answer`](Self::check_answer) can
/// refuse a wrong answer before the run resumes.
///
/// # Tools that block their thread
///
/// A tool's future is polled in its run's task (with the default
/// [`ToolExecution::Concurrent`]). A tool whose body blocks its thread — a synchronous client
/// (a payment SDK, say), a large file parsed in one go, a long computation — stops its run's
/// events while it runs and, on a current-thread runtime, every other task too. Such a tool
/// must be `#[tool(blocking)]`: a plain `fn`, which the generated tool runs on one of tokio's
/// blocking threads (feature `tokio`), with the arguments moved in. Otherwise, run the agent's
/// calls with `ToolExecution::Spawned`, or call `tokio::task::spawn_blocking` in the tool.
///
/// ```
/// use hookchain::tool;
///
/// /// Charges a card, through the payment provider's synchronous client.
/// #[tool(blocking)]
/// fn charge(
///     /// The amount, in cents.
///     cents: u64,
/// ) -> String {
///     std::thread::sleep(std::time::Duration::from_millis(10)); // the client's blocking call
///     format!("charged {cents} cents")
/// }
/// ```
///
/// A blocking body takes no [`ToolContext`] (it borrows the run), and it cannot be interrupted:
/// a cancelled call (the run's future dropped) leaves it to finish on its thread. A panic in it
/// is the tool's failure, as in any tool. With a checkpointer, the run's lease is renewed in a
/// task of its own, so on a multi-thread runtime a blocking tool does not lose its lease; a body
/// that blocks a current-thread runtime's only thread without `blocking` stops the renewals too.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tool",
    label = "not a tool",
    note = "a tool is a function marked `#[tool]`, a closure wrapped in \
            `FnTool::new(name, description, f)`, or a type with a hand-written `impl Tool`",
    note = "`.tool(..)` takes one tool per call: `.tool(a).tool(b)`"
)]
// `where Self: Sync` on each method returning a future (implied by the supertrait): the future
// holds `&self`, and with the bound the check of a hand-written impl assumes it, so a type that
// is not `Sync` is one error, at the impl, rather than one more per method.
pub trait Tool: Send + Sync + 'static {
    /// The tool's name, description and argument schema.
    fn spec(&self) -> ToolSpec;

    /// Runs the tool on the model's arguments; the `Ok` content is what the model reads (see
    /// [Results](#results)).
    ///
    /// `cx` is the call: its id, the run's [`Context`](crate::Context) (through `Deref`), and
    /// on a resumed call the answer to the interrupt this tool raised
    /// ([`resume_value`](ToolContext::resume_value)).
    fn call<'c>(
        &self,
        cx: ToolContext<'c>,
        arguments: serde_json::Value,
    ) -> impl Future<Output = Result<Content, ToolError>> + Send
    where
        Self: Sync;

    /// Checks `arguments` without running the tool (for an answer that edits a call's
    /// arguments, before the run resumes). By default, the arguments must be a JSON object;
    /// tools with typed arguments ([`FnTool`]) check that they deserialize.
    fn check_arguments(&self, arguments: &serde_json::Value) -> Result<(), ToolError> {
        if arguments.is_object() {
            Ok(())
        } else {
            Err(ToolError::failed(
                self.spec().name,
                "the arguments must be a JSON object",
            ))
        }
    }

    /// Checks the `answer` to an interrupt this tool raised for a call with `arguments`, before
    /// the run resumes: an answer refused here makes `resume` fail before anything runs.
    /// [`answer.value()`](Answer::value) is the answer given, and
    /// [`answer.interrupt()`](Answer::interrupt) the interrupt it answers (with the payload the
    /// tool raised it with). Accepts every answer by default.
    fn check_answer(
        &self,
        arguments: &serde_json::Value,
        answer: &Answer<'_>,
    ) -> Result<(), ToolError> {
        let _ = (arguments, answer);
        Ok(())
    }
}
