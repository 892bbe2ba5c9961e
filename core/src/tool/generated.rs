//! What `#[tool]` generates calls to: the schema, the arguments and the result of a tool
//! function.
//!
//! Each argument type is checked once, by [`ToolArgument::argument`], whose trait carries the
//! diagnostic for a type that cannot be an argument; the macro calls it from one hidden function spanned at
//! the parameter's type, so a wrong type is one error, there. The result conversions are traits
//! on the user's return type, spanned at the user's `-> T`.

use schemars::generate::SchemaGenerator;
use schemars::{JsonSchema, Schema};
use serde::Serialize;
use serde::de::{DeserializeOwned, Error as _, Unexpected};
use serde_json::{Map, Value};

use crate::message::Content;
use crate::report::BoxError;
use crate::tool::{ToolError, clean_schema};

/// A type a tool function can take as an argument.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's argument: the model's JSON is deserialized into it, \
               and its schema is shown to the model",
    label = "needs `serde::Deserialize` and `schemars::JsonSchema`",
    note = "arguments are owned values: `String`, numbers, `bool`, `Vec<T>`, `Option<T>`, and \
            your own types with `#[derive(serde::Deserialize, schemars::JsonSchema)]`"
)]
pub trait ToolArgument: Sized {
    /// How the type is described and read.
    fn argument() -> Argument<Self>;
}

#[diagnostic::do_not_recommend]
impl<T: DeserializeOwned + JsonSchema> ToolArgument for T {
    fn argument() -> Argument<Self> {
        Argument::of()
    }
}

/// How one argument type is described and read, checked once (see the module docs).
pub struct Argument<T> {
    schema: fn(&mut SchemaGenerator) -> Schema,
    parse: fn(Value) -> Result<T, serde_json::Error>,
}

impl<T> Clone for Argument<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Argument<T> {}

impl<T> std::fmt::Debug for Argument<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Argument")
    }
}

impl<T: DeserializeOwned + JsonSchema> Argument<T> {
    /// How `T` is described and read.
    pub(crate) const fn of() -> Self {
        Argument {
            schema: |generator| generator.subschema_for::<T>(),
            parse: T::deserialize,
        }
    }
}

impl<T> Argument<T> {
    /// Stands for an argument type the macro's `const` check rejects: never used, since
    /// compilation stops at the check.
    pub(crate) const fn never() -> Self {
        Argument {
            schema: |_| unreachable!("rejected at compile time"),
            parse: |_| unreachable!("rejected at compile time"),
        }
    }

    /// Takes the argument `name` out of the model's arguments. A missing argument is read as
    /// `null`, which an `Option` accepts (as `None`), and is otherwise a missing field.
    pub fn take(
        self,
        tool: &str,
        arguments: &mut Map<String, Value>,
        name: &'static str,
    ) -> Result<T, ToolError> {
        let invalid = |source| ToolError::InvalidArguments {
            tool: tool.to_owned(),
            source,
        };
        match arguments.remove(name) {
            Some(value) => (self.parse)(value).map_err(|error| {
                invalid(serde_json::Error::custom(format_args!("`{name}`: {error}")))
            }),
            None => (self.parse)(Value::Null)
                .map_err(|_| invalid(serde_json::Error::missing_field(name))),
        }
    }
}

/// The model's arguments as an object: `null` is no arguments; anything else that is not an
/// object is [`ToolError::InvalidArguments`].
pub fn argument_object(tool: &str, arguments: Value) -> Result<Map<String, Value>, ToolError> {
    match arguments {
        Value::Object(object) => Ok(object),
        Value::Null => Ok(Map::new()),
        other => Err(ToolError::InvalidArguments {
            tool: tool.to_owned(),
            source: serde_json::Error::invalid_type(unexpected(&other), &"a JSON object"),
        }),
    }
}

fn unexpected(value: &Value) -> Unexpected<'_> {
    match value {
        Value::Bool(flag) => Unexpected::Bool(*flag),
        Value::Number(_) => Unexpected::Other("a number"),
        Value::String(text) => Unexpected::Str(text),
        Value::Array(_) => Unexpected::Seq,
        Value::Null | Value::Object(_) => Unexpected::Map,
    }
}

/// Builds a tool's argument schema, one argument at a time.
#[derive(Debug)]
pub struct ArgumentsSchema {
    generator: SchemaGenerator,
    properties: Map<String, Value>,
    required: Vec<Value>,
}

impl ArgumentsSchema {
    /// No arguments yet.
    #[must_use]
    pub fn new() -> Self {
        ArgumentsSchema {
            generator: crate::tool::schema::generator(),
            properties: Map::new(),
            required: Vec::new(),
        }
    }

    /// Adds the argument `name`, described by `description` (none if empty).
    #[must_use]
    pub fn argument<T>(
        mut self,
        argument: Argument<T>,
        name: &str,
        description: &str,
        required: bool,
    ) -> Self {
        let mut schema = (argument.schema)(&mut self.generator).to_value();
        if !description.is_empty()
            && let Value::Object(object) = &mut schema
        {
            object.insert("description".to_owned(), Value::from(description));
        }
        self.properties.insert(name.to_owned(), schema);
        if required {
            self.required.push(Value::from(name));
        }
        self
    }

    /// The schema, cleaned for providers.
    #[must_use]
    pub fn finish(mut self) -> Value {
        let mut schema = Map::new();
        schema.insert("type".to_owned(), Value::from("object"));
        schema.insert("properties".to_owned(), Value::Object(self.properties));
        if !self.required.is_empty() {
            schema.insert("required".to_owned(), Value::Array(self.required));
        }
        // Recursive types keep a `$ref` even with subschemas inlined.
        let definitions = self.generator.take_definitions(true);
        if !definitions.is_empty() {
            schema.insert("$defs".to_owned(), Value::Object(definitions));
        }
        clean_schema(Value::Object(schema))
    }
}

impl Default for ArgumentsSchema {
    fn default() -> Self {
        Self::new()
    }
}

/// What a tool function returns when it returns hookchain's [`ToolResult`](crate::ToolResult)
/// (or a `Result` of one): the result's flag is kept — an error result is a failure whose
/// content the model reads as it is ([`ToolError::ForModel`]), not a success whose JSON it reads.
/// Chosen by the macro from the return type's name.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not hookchain's `ToolResult`",
    label = "a tool function returning a type named `ToolResult` must return `hookchain::ToolResult`",
    note = "rename your own type, or return it through `Result<T, E>`"
)]
pub trait ToolResultOutput {
    /// The content the model reads, or the failure whose message it reads.
    fn into_tool_output(self, tool: &str) -> Result<Content, ToolError>;
}

impl ToolResultOutput for crate::ToolResult {
    fn into_tool_output(self, tool: &str) -> Result<Content, ToolError> {
        if self.is_error {
            // A failure's message is text: an error result's other parts are written as text.
            Err(ToolError::ForModel {
                tool: tool.to_owned(),
                message: self.content.to_text_lossy().into_owned(),
            })
        } else {
            Ok(self.content)
        }
    }
}

impl<E: Into<BoxError>> ToolResultOutput for Result<crate::ToolResult, E> {
    fn into_tool_output(self, tool: &str) -> Result<Content, ToolError> {
        match self {
            Ok(result) => ToolResultOutput::into_tool_output(result, tool),
            Err(error) => Err(crate::tool::fn_tool::tool_error(tool, error)),
        }
    }
}

/// What a tool function returns when it returns hookchain's [`Content`] (or a `Result` of
/// one): the content as it is — serialized, the model would read its parts as JSON text.
/// Chosen by the macro from the return type's name.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not hookchain's `Content`",
    label = "a tool function returning a type named `Content` must return `hookchain::message::Content`",
    note = "rename your own type, or name it through an alias (`type Page = Content;`): the macro \
            finds hookchain's `Content` by its name"
)]
pub trait ContentOutput {
    /// The content the model reads, or the tool's failure.
    fn into_tool_output(self, tool: &str) -> Result<Content, ToolError>;
}

impl ContentOutput for Content {
    #[inline]
    fn into_tool_output(self, _tool: &str) -> Result<Content, ToolError> {
        Ok(self)
    }
}

impl<E: Into<BoxError>> ContentOutput for Result<Content, E> {
    #[inline]
    fn into_tool_output(self, tool: &str) -> Result<Content, ToolError> {
        self.map_err(|error| crate::tool::fn_tool::tool_error(tool, error))
    }
}

/// An answer to the tool's interrupt as its result, for a tool function that takes no context
/// (and so cannot read the answer itself).
pub fn answer_as_content(answer: &Value) -> Content {
    crate::tool::fn_tool::answer_as_content(answer)
}

/// What a tool function returns, when it does not return a `Result`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's result: the model reads it as JSON",
    label = "return a type that implements `serde::Serialize` here, or `Result<T, E>` with such a `T`",
    note = "a `String` is the text the model reads; anything else is serialized to JSON"
)]
pub trait ToolOutput {
    /// The content the model reads.
    fn into_tool_output(self, tool: &str) -> Result<Content, ToolError>;
}

#[diagnostic::do_not_recommend]
impl<T: Serialize> ToolOutput for T {
    #[inline]
    fn into_tool_output(self, tool: &str) -> Result<Content, ToolError> {
        crate::tool::fn_tool::output_as_content(tool, Ok::<T, ToolError>(self))
    }
}

/// What a tool function returns, when it returns a `Result`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's result: its `Ok` value must implement \
               `serde::Serialize`, and its error must be an error type",
    label = "return `Result<T, E>` here, with `T: serde::Serialize`",
    note = "the model reads `T` as JSON (a `String` as it is); `E` is any error type that \
            converts into `Box<dyn std::error::Error + Send + Sync>`, such as \
            `hookchain::ToolError`"
)]
pub trait FallibleToolOutput {
    /// The content the model reads, or the tool's failure.
    fn into_tool_output(self, tool: &str) -> Result<Content, ToolError>;
}

#[diagnostic::do_not_recommend]
impl<T: Serialize, E: Into<BoxError>> FallibleToolOutput for Result<T, E> {
    #[inline]
    fn into_tool_output(self, tool: &str) -> Result<Content, ToolError> {
        crate::tool::fn_tool::output_as_content(tool, self)
    }
}
