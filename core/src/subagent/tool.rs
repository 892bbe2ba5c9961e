//! An agent as a tool of another.

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::child::{Child, check_child_answer, unfinished};
use super::depth::DEFAULT_MAX_DEPTH;
use super::task::Task;
use crate::agent::{Agent, EndReason, RunInput, RunOutput};
use crate::context::ToolContext;
use crate::interrupt::Answer;
use crate::message::Content;
use crate::middleware::Middleware;
use crate::model::Model;
use crate::tool::{Tool, ToolError, ToolSpec, parameters_schema};

/// Why an agent cannot be a tool.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum IntoToolError {
    /// The agent keeps its runs in a checkpointer of its own; a sub-agent's runs are kept in its
    /// parent's (nested in the parent's checkpoint), and one run kept in two stores could be
    /// resumed twice.
    #[error(
        "the agent `{agent}` has a checkpointer: a sub-agent's runs are kept in its parent's \
         checkpoints; build it without one"
    )]
    HasCheckpointer {
        /// The agent's name.
        agent: String,
    },
}

/// How the child's answer becomes the call's result.
type OutputOf = fn(&RunOutput) -> Result<Content, String>;

/// An [`Agent`] as a [`Tool`] of another agent: see [the module's docs](super). Made by
/// [`Agent::into_tool`].
///
/// `I` is what the parent's model gives it ([`Task`] unless set with [`input`](Self::input)
/// or [`input_with`](Self::input_with)); its answer is the call's result (its text unless set
/// with [`output`](Self::output)).
pub struct AgentTool<M, C, I = Task> {
    agent: Arc<Agent<M, C>>,
    spec: ToolSpec,
    to_input: Arc<dyn Fn(I) -> RunInput + Send + Sync>,
    output: OutputOf,
    max_depth: usize,
    inherit_context: bool,
    _input: PhantomData<fn(I)>,
}

impl<M, C> Agent<M, C> {
    /// This agent as a tool called `name`, which the parent's model is told about as
    /// `description`: the model gives it a [`Task`], the agent runs on it, and its answer's
    /// text is the call's result. See [`crate::subagent`].
    ///
    /// # Errors
    ///
    /// [`IntoToolError::HasCheckpointer`]: the agent keeps its runs in a checkpointer (a
    /// sub-agent's runs are kept in its parent's).
    pub fn into_tool(
        self,
        name: impl Into<String>,
        description: impl Into<String>,
    ) -> Result<AgentTool<M, C>, IntoToolError> {
        if self.keeps_runs() {
            return Err(IntoToolError::HasCheckpointer {
                agent: self.name().to_owned(),
            });
        }
        Ok(AgentTool {
            agent: Arc::new(self),
            spec: ToolSpec::new(name, description, parameters_schema::<Task>()),
            to_input: Arc::new(RunInput::from),
            output: text_of,
            max_depth: DEFAULT_MAX_DEPTH,
            inherit_context: true,
            _input: PhantomData,
        })
    }
}

impl<M, C, I> AgentTool<M, C, I> {
    /// Takes an input of type `J` (its JSON schema is what the parent's model is told), given
    /// to the child as its JSON, pretty-printed, in one user message.
    #[must_use]
    pub fn input<J>(self) -> AgentTool<M, C, J>
    where
        J: JsonSchema + Serialize,
    {
        self.input_with(|input: J| {
            RunInput::from(serde_json::to_string_pretty(&input).unwrap_or_default())
        })
    }

    /// Takes an input of type `J`, turned into the child's input by `to_input`.
    #[must_use]
    pub fn input_with<J>(
        self,
        to_input: impl Fn(J) -> RunInput + Send + Sync + 'static,
    ) -> AgentTool<M, C, J>
    where
        J: JsonSchema,
    {
        let mut spec = self.spec;
        spec.parameters = parameters_schema::<J>();
        AgentTool {
            agent: self.agent,
            spec,
            to_input: Arc::new(to_input),
            output: self.output,
            max_depth: self.max_depth,
            inherit_context: self.inherit_context,
            _input: PhantomData,
        }
    }

    /// Gives the parent's model the child's answer read as an `O` (the child's structured
    /// output: [`RunOutput::parse`]) and written as JSON, instead of its text; an answer that
    /// is not an `O` is an error the parent's model reads.
    #[must_use]
    pub fn output<O>(mut self) -> Self
    where
        O: DeserializeOwned + Serialize,
    {
        self.output = json_of::<O>;
        self
    }

    /// How many levels of sub-agents may be below the parent's run at this tool's call
    /// ([`DEFAULT_MAX_DEPTH`] unless set): past it the call is refused, and the model reads
    /// why.
    #[must_use]
    pub fn max_depth(mut self, depth: usize) -> Self {
        self.max_depth = depth;
        self
    }

    /// The child's run gets none of the parent's run context values (by default it gets all
    /// of them).
    #[must_use]
    pub fn isolated_context(mut self) -> Self {
        self.inherit_context = false;
        self
    }

    /// The child agent.
    #[must_use]
    pub fn agent(&self) -> &Agent<M, C> {
        &self.agent
    }
}

impl<M, C, I> Clone for AgentTool<M, C, I> {
    fn clone(&self) -> Self {
        Self {
            agent: Arc::clone(&self.agent),
            spec: self.spec.clone(),
            to_input: Arc::clone(&self.to_input),
            output: self.output,
            max_depth: self.max_depth,
            inherit_context: self.inherit_context,
            _input: PhantomData,
        }
    }
}

impl<M, C, I> fmt::Debug for AgentTool<M, C, I> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentTool")
            .field("name", &self.spec.name)
            .field("agent", &self.agent.name())
            .field("max_depth", &self.max_depth)
            .field("inherit_context", &self.inherit_context)
            .finish_non_exhaustive()
    }
}

// Not listed in a "not a tool" error, which names the usual fixes instead.
#[diagnostic::do_not_recommend]
impl<M, C, I> Tool for AgentTool<M, C, I>
where
    M: Model + 'static,
    C: Middleware + 'static,
    I: DeserializeOwned + Send + 'static,
{
    fn spec(&self) -> ToolSpec {
        self.spec.clone()
    }

    fn check_arguments(&self, arguments: &serde_json::Value) -> Result<(), ToolError> {
        I::deserialize(arguments)
            .map(drop)
            .map_err(|source| ToolError::InvalidArguments {
                tool: self.spec.name.clone(),
                source,
            })
    }

    /// The answer to a child's pause must be
    /// [`SubAgentPause::answer`](super::SubAgentPause::answer)'s value, answering interrupts
    /// the child has.
    fn check_answer(
        &self,
        _arguments: &serde_json::Value,
        answer: &Answer<'_>,
    ) -> Result<(), ToolError> {
        check_child_answer(&self.spec.name, answer)
    }

    async fn call(
        &self,
        cx: ToolContext<'_>,
        arguments: serde_json::Value,
    ) -> Result<Content, ToolError> {
        let name = self.spec.name.as_str();
        let child = Child {
            agent: &self.agent,
            tool: name,
            max_depth: self.max_depth,
            inherit_context: self.inherit_context,
        };
        let output = child
            .run(cx, || {
                let input =
                    I::deserialize(arguments).map_err(|source| ToolError::InvalidArguments {
                        tool: name.to_owned(),
                        source,
                    })?;
                Ok((self.to_input)(input))
            })
            .await?;
        match output.end {
            EndReason::Finished => {
                (self.output)(&output).map_err(|error| ToolError::for_model(name, error))
            }
            other => Err(unfinished(self.agent.name(), name, other, &output)),
        }
    }
}

/// The child's answer as text.
fn text_of(output: &RunOutput) -> Result<Content, String> {
    Ok(Content::from(output.text().unwrap_or_default()))
}

/// The child's answer read as an `O`, as JSON.
fn json_of<O: DeserializeOwned + Serialize>(output: &RunOutput) -> Result<Content, String> {
    let answer: O = output
        .parse()
        .map_err(|error| format!("the agent's answer is not what was asked: {error}"))?;
    serde_json::to_value(answer)
        .map(|value| Content::from(crate::message::ContentPart::json(value)))
        .map_err(|error| error.to_string())
}
