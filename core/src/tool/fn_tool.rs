//! Tools made from async closures, with the argument schema derived by `schemars`.

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{Tool, ToolError, ToolSpec};
use crate::context::ToolContext;
use crate::message::Content;
use crate::report::BoxError;

/// A tool made from an async closure taking typed arguments.
///
/// The argument type `A` gives the schema (through `schemars::JsonSchema`) and is deserialized
/// from the model's JSON; arguments that do not match become an error result for the model. The
/// closure's `Ok` value is what the model reads: a [`Content`] as it is (images, JSON parts,
/// links: see [`Tool`'s results](Tool#results)), a string as its text, anything else as JSON
/// text. Its error
/// is the tool's failure, whose text the model does not read — unless it is a [`ToolError`]
/// (such as [`ToolError::for_model`]), which is kept as it is.
///
/// ```
/// use hookchain::{FnTool, Tool};
/// use schemars::JsonSchema;
/// use serde::Deserialize;
///
/// #[derive(Deserialize, JsonSchema)]
/// struct Add {
///     a: i64,
///     b: i64,
/// }
///
/// let add = FnTool::new("add", "Adds two integers.", |args: Add| async move {
///     Ok::<_, std::convert::Infallible>(args.a + args.b)
/// });
/// assert_eq!(add.spec().name, "add");
///
/// // Content, for more than text.
/// use hookchain::message::{Content, ContentPart};
///
/// let chart = FnTool::new("chart", "Draws the sales.", |_: Add| async move {
///     let parts = vec![ContentPart::image_base64("image/png", "iVBORw0KGgo=")];
///     Ok::<_, std::convert::Infallible>(Content::from(parts))
/// });
/// # let _ = chart;
/// ```
pub struct FnTool<A, F> {
    spec: ToolSpec,
    run: F,
    arguments: PhantomData<fn(A)>,
}

impl<A, F, Fut, T, E> FnTool<A, F>
where
    A: DeserializeOwned + JsonSchema + Send + 'static,
    F: Fn(A) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<T, E>> + Send,
    T: Serialize + 'static,
    E: Into<BoxError>,
{
    /// A tool named `name`, described to the model by `description`, running `run`.
    pub fn new(name: impl Into<String>, description: impl Into<String>, run: F) -> Self {
        Self {
            spec: ToolSpec::new(
                name.into(),
                description.into(),
                super::parameters_schema::<A>(),
            ),
            run,
            arguments: PhantomData,
        }
    }
}

impl<A, F> fmt::Debug for FnTool<A, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FnTool").field("spec", &self.spec).finish()
    }
}

// Not listed in a "not a tool" error, which names the usual fixes instead: its bounds are
// `new`'s, checked where it is built.
#[diagnostic::do_not_recommend]
impl<A, F, Fut, T, E> Tool for FnTool<A, F>
where
    A: DeserializeOwned + JsonSchema + Send + 'static,
    F: Fn(A) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<T, E>> + Send,
    T: Serialize + 'static,
    E: Into<BoxError>,
{
    fn spec(&self) -> ToolSpec {
        self.spec.clone()
    }

    fn check_arguments(&self, arguments: &serde_json::Value) -> Result<(), ToolError> {
        A::deserialize(arguments)
            .map(drop)
            .map_err(|source| ToolError::InvalidArguments {
                tool: self.spec.name.clone(),
                source,
            })
    }

    async fn call(
        &self,
        cx: ToolContext<'_>,
        arguments: serde_json::Value,
    ) -> Result<Content, ToolError> {
        // The closure cannot see the context, so it cannot read the answer to an interrupt it
        // raised: the answer is the result.
        if let Some(answer) = cx.resume_value() {
            return Ok(answer_as_content(answer));
        }
        let name = &self.spec.name;
        let arguments = arguments_as::<A>(name, arguments)?;
        let output = (self.run)(arguments)
            .await
            .map_err(|error| tool_error(name, error))?;
        returned_content(name, output)
    }
}

/// The model's `arguments`, deserialized; arguments that do not match are
/// [`ToolError::InvalidArguments`].
pub(crate) fn arguments_as<A: DeserializeOwned>(
    tool: &str,
    arguments: serde_json::Value,
) -> Result<A, ToolError> {
    serde_json::from_value::<A>(arguments).map_err(|source| ToolError::InvalidArguments {
        tool: tool.to_owned(),
        source,
    })
}

/// A tool's error as the tool's failure: a `ToolError` it returned is kept as it is (one meant
/// for the model, an interrupt), anything else is [`ToolError::Failed`].
pub(crate) fn tool_error(tool: &str, error: impl Into<BoxError>) -> ToolError {
    match error.into().downcast::<ToolError>() {
        Ok(error) => *error,
        Err(error) => ToolError::failed(tool, error),
    }
}

/// What a closure returned, as the content the model reads: a [`Content`] as it is (found by
/// its type: the closure's `Ok` type is any `Serialize` type, and `Content` is one, whose
/// serialized form would be read as JSON text), anything else as [`output_as_content`] makes it.
fn returned_content<T: Serialize + 'static>(
    tool: &str,
    mut output: T,
) -> Result<Content, ToolError> {
    if let Some(content) = (&mut output as &mut dyn Any).downcast_mut::<Content>() {
        return Ok(std::mem::take(content));
    }
    output_as_content(tool, Ok::<T, ToolError>(output))
}

/// What a tool function returned, as the content the model reads: a string as its text,
/// anything else as JSON text. Its error is the tool's failure, unless it is a [`ToolError`]
/// (one meant for the model, say), which stays as it is.
pub(crate) fn output_as_content<T: Serialize, E: Into<BoxError>>(
    tool: &str,
    output: Result<T, E>,
) -> Result<Content, ToolError> {
    let output = output.map_err(|error| tool_error(tool, error))?;
    match serde_json::to_value(output) {
        Ok(serde_json::Value::String(text)) => Ok(text.into()),
        Ok(value) => Ok(value.to_string().into()),
        Err(source) => Err(ToolError::Output {
            tool: tool.to_owned(),
            source,
        }),
    }
}

/// An answer to a tool's interrupt as the tool's result, for tools that do not read it
/// themselves: a JSON string as its text, anything else as JSON text.
pub(crate) fn answer_as_content(answer: &serde_json::Value) -> Content {
    match answer {
        serde_json::Value::String(text) => text.as_str().into(),
        other => other.to_string().into(),
    }
}
