//! The [`Model`] trait and the types of a model call.

mod assemble;
mod cache;
mod copy_blocks;
mod error;
mod event;
mod output;
mod replay;
mod request;
mod response;
mod router;
mod scripted;
// A tool as a request offers it: public as `tool::ToolSpec`.
pub(crate) mod tool_spec;

use std::future::Future;

use futures::Stream;

pub use assemble::ResponseAssembler;
pub use cache::{CacheTtl, PromptCache};
pub(crate) use copy_blocks::Padding;
pub use event::ModelEvent;
pub(crate) use output::parse_answer;
pub use output::{OutputError, ResponseFormat};
pub use request::{ModelRequest, ModelSettings, ToolChoice};
pub use response::{ModelResponse, StopReason, Usage};
pub use router::{DynModel, ModelRouter};
pub use scripted::{ScriptedModel, StreamStep};
pub(crate) use tool_spec::ToolSpec;

pub use error::{ModelError, ModelErrorKind};

/// A language model the agent can call.
///
/// Implementations translate a [`ModelRequest`] to a provider's API and its answer back to a
/// [`ModelResponse`]. The returned future must be `Send` so that agents can run on a
/// multi-threaded runtime. [`ScriptedModel`] is the built-in implementation (deterministic,
/// offline, for tests and examples); the `openai` and `anthropic` features of `hookchain` add
/// real providers.
///
/// # Writing a model
///
/// A model reads the request and answers once; the agent does everything else (the loop, the
/// tools, the middleware). What the request holds, in the order a provider usually wants it:
///
/// - [`system_prompt`](ModelRequest::system_prompt): instructions, sent apart or as a first
///   system message, as the provider wants;
/// - [`messages`](ModelRequest::messages): the history. Every assistant message with tool
///   calls is followed by one tool message per call, each naming its call's id
///   ([`validate_history`](crate::message::validate_history) holds for every request the agent
///   sends);
/// - [`tools`](ModelRequest::tools) (name, description, JSON schema of the arguments) and
///   [`tool_choice`](ModelRequest::tool_choice);
/// - [`settings`](ModelRequest::settings): temperature, token limit, stop sequences; `None`
///   leaves the provider's default.
///
/// The response is the assistant's [`Message`](crate::Message) (its text, and its
/// [`ToolCall`](crate::ToolCall)s with the provider's ids and the arguments as JSON), the
/// [`Usage`] the provider reported, and why it stopped ([`StopReason`]). A failure is a
/// classified [`ModelError`] — rate limited (with the `Retry-After` it gave), overloaded,
/// timeout, connection, context length, authentication, invalid request, content filtered,
/// malformed response — so that retry middleware can tell what is worth retrying
/// ([`ModelError::is_retryable`]). Never panic on what the provider sends, and never turn a
/// malformed or truncated answer into an empty one: it is a `MalformedResponse` error.
///
/// A message's [`content`](crate::Message::content) may hold more than text: images (user
/// messages) and the model's reasoning (assistant messages), as
/// [`ContentPart`](crate::message::ContentPart)s. Send the parts your provider takes and leave
/// out the others; keep reasoning the provider returns as reasoning parts of the answer (with
/// its signature, if the provider signs it), so that it can go back in later requests.
///
/// A model that streams overrides [`stream`](Model::stream) as well: it yields the answer as
/// [`ModelEvent`]s (a [`ResponseAssembler`] turns them back into the response, so `invoke` can be
/// written on top of `stream`). The default streams the whole answer of `invoke` at once.
///
/// ```
/// use hookchain::prelude::*;
/// use hookchain::{Model, ModelError, StopReason, Usage};
///
/// /// A "model" that answers with the text of the last user message, reversed: the shape of a
/// /// real one, whose `invoke` would call an API where this one computes.
/// struct Reverser;
///
/// impl Model for Reverser {
///     async fn invoke(&self, request: ModelRequest) -> Result<ModelResponse, ModelError> {
///         let Some(last) = request.messages.last() else {
///             return Err(ModelError::invalid_request("the request has no messages"));
///         };
///         if request.settings.max_tokens == Some(0) {
///             return Err(ModelError::context_length_exceeded("no room for an answer"));
///         }
///         let question = last.text(); // the text parts (a message may also hold images)
///         let text: String = question.chars().rev().collect();
///         let usage = Usage::new(question.len() as u64, text.len() as u64);
///         Ok(ModelResponse::text(text).with_usage(usage))
///     }
/// }
///
/// # futures::executor::block_on(async {
/// let agent = Agent::builder(Reverser).build()?;
/// let output = agent.run("stressed").await?;
/// assert_eq!(output.text().as_deref(), Some("desserts"));
/// assert_eq!(output.usage, Usage::new(8, 8));
/// # Ok::<(), hookchain::Error>(())
/// # }).unwrap();
/// ```
///
/// A model can also name itself in requests: a [`ModelRouter`] holds several and sends each
/// request to the one its [`model`](ModelRequest::model) field names; a [`DynModel`] is a model
/// chosen at run time.
///
/// # Naming the model in traces
///
/// Each model call runs in a `chat` span (see [`agent`](crate::agent)) that names the provider
/// and the model as OpenTelemetry's GenAI conventions do. [`provider_name`](Self::provider_name)
/// and [`model_name`](Self::model_name) say what to write there; both have defaults, so a model
/// that says nothing still works (as `"unknown"` and without a model name).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a model",
    label = "not a model",
    note = "a model is a provider's client (in `hookchain::providers`, with the provider's \
            feature), a `ScriptedModel`, a `ModelRouter`, or a type with a hand-written \
            `impl Model`; a constructor that returns a `Result` needs `?`"
)]
// `where Self: Sync` on each method returning a future (implied by the supertrait): the future
// holds `&self`, and with the bound the check of a hand-written impl assumes it, so a type that
// is not `Sync` is one error, at the impl, rather than one more per method.
pub trait Model: Send + Sync {
    /// Calls the model once.
    fn invoke(
        &self,
        request: ModelRequest,
    ) -> impl Future<Output = Result<ModelResponse, ModelError>> + Send
    where
        Self: Sync;

    /// Calls the model once, yielding its answer as it comes: block-indexed [`ModelEvent`]s
    /// (see there for the rules a stream follows), ending with a
    /// [`Finish`](ModelEvent::Finish), or an error. A [`ResponseAssembler`] fed the events
    /// gives the response [`invoke`](Self::invoke) would have returned.
    ///
    /// The default calls `invoke` and replays its answer as events
    /// ([`ModelResponse::into_events`]): a model that cannot stream streams its whole answer at
    /// once. Providers that stream override it.
    fn stream(
        &self,
        request: ModelRequest,
    ) -> impl Stream<Item = Result<ModelEvent, ModelError>> + Send
    where
        Self: Sync,
    {
        replay::replay(self.invoke(request))
    }

    /// Who serves the model, as `gen_ai.provider.name` spells it: `"openai"`, `"anthropic"`,
    /// `"aws.bedrock"`, … (the conventions' well-known values), or a name of your own. By
    /// default `"unknown"`.
    ///
    /// ```
    /// use hookchain::{Model, ScriptedModel};
    ///
    /// assert_eq!(ScriptedModel::new([]).provider_name(), "scripted");
    /// ```
    fn provider_name(&self) -> &str {
        "unknown"
    }

    /// The model a request goes to unless it names one ([`ModelRequest::model`]), e.g.
    /// `"gpt-4o-mini"`: `gen_ai.request.model` and the `chat {model}` span name. By default
    /// `None`.
    fn model_name(&self) -> Option<&str> {
        None
    }
}

/// `Model` for pointers to a model: every method forwarded, so that a provider's own
/// `stream` and names are kept.
macro_rules! forward_model {
    ($($pointer:ty),*) => {$(
        // A "not a model" error names the type given, not the pointer's target.
        #[diagnostic::do_not_recommend]
        impl<M: Model + ?Sized> Model for $pointer {
            fn invoke(
                &self,
                request: ModelRequest,
            ) -> impl Future<Output = Result<ModelResponse, ModelError>> + Send {
                (**self).invoke(request)
            }

            fn stream(
                &self,
                request: ModelRequest,
            ) -> impl Stream<Item = Result<ModelEvent, ModelError>> + Send {
                (**self).stream(request)
            }

            fn provider_name(&self) -> &str {
                (**self).provider_name()
            }

            fn model_name(&self) -> Option<&str> {
                (**self).model_name()
            }
        }
    )*};
}

forward_model!(&M, std::sync::Arc<M>);
