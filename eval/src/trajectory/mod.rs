//! A run's trajectory: the ordered steps an agent took.

mod builder;
mod from_run;
mod openai;
mod render;

pub use builder::TrajectoryBuilder;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The ordered steps of a run: what the user said, each answer of the model (its text and the
/// tools it called, with their arguments), each tool's result, the interrupts that paused the
/// run, and the runs of sub-agents its tools started.
///
/// Taken from a run ([`from_output`](Self::from_output), [`from_messages`](Self::from_messages),
/// [`from_events`](Self::from_events)), written by hand ([`builder`](Self::builder)), or read
/// from data: its serde form is a plain list of steps, each tagged by `"step"`, so a dataset in
/// JSON or YAML holds it as written:
///
/// ```
/// use hookchain_eval::Trajectory;
///
/// let expected: Trajectory = serde_json::from_str(r#"[
///     {"step": "user", "text": "Weather in Paris?"},
///     {"step": "model", "tool_calls": [{"name": "weather", "arguments": {"city": "Paris"}}]},
///     {"step": "tool_result", "name": "weather", "text": "18°C"},
///     {"step": "model", "text": "It is 18°C in Paris."}
/// ]"#)?;
/// assert_eq!(expected.tool_calls().count(), 1);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Trajectory {
    steps: Vec<Step>,
}

impl Trajectory {
    /// A trajectory of these steps.
    #[must_use]
    pub fn new(steps: Vec<Step>) -> Self {
        Self { steps }
    }

    /// A builder, to write an expected trajectory step by step.
    pub fn builder() -> TrajectoryBuilder {
        TrajectoryBuilder::default()
    }

    /// The steps, in order.
    #[must_use]
    pub fn steps(&self) -> &[Step] {
        &self.steps
    }

    /// The number of steps.
    #[must_use]
    pub fn len(&self) -> usize {
        self.steps.len()
    }

    /// Whether it has no step.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// Every tool call of the model's steps, in order (not those of sub-agents, which are
    /// their own trajectories: what the matchers compare is what this agent chose).
    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolCallStep> {
        self.steps.iter().flat_map(|step| match step {
            Step::Model(model) => model.tool_calls.as_slice(),
            _ => &[],
        })
    }

    /// The steps that are messages (every step but interrupts and sub-agents' runs): what
    /// agentevals, which compares message lists, sees of a trajectory.
    pub(crate) fn messages(&self) -> impl Iterator<Item = (usize, &Step)> {
        self.steps
            .iter()
            .enumerate()
            .filter(|(_, step)| step.role().is_some())
    }
}

impl From<Vec<Step>> for Trajectory {
    fn from(steps: Vec<Step>) -> Self {
        Self::new(steps)
    }
}

/// One step of a [`Trajectory`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "step", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Step {
    /// Instructions for the model.
    System {
        /// Their text.
        #[serde(default)]
        text: String,
    },
    /// What the user (or the program the agent works for) said.
    User {
        /// Its text.
        #[serde(default)]
        text: String,
    },
    /// An answer of the model: text, tool calls, or both.
    Model(ModelStep),
    /// A tool call's result.
    ToolResult(ToolResultStep),
    /// An interrupt that paused the run.
    Interrupt(InterruptStep),
    /// The run of a sub-agent, started by one of this run's tool calls.
    SubAgent(SubAgentStep),
}

impl Step {
    /// The role of the message this step is, as OpenAI's chat format names it; `None` for the
    /// steps that are not messages (interrupts, sub-agents' runs).
    #[must_use]
    pub fn role(&self) -> Option<&'static str> {
        match self {
            Step::System { .. } => Some("system"),
            Step::User { .. } => Some("user"),
            Step::Model(_) => Some("assistant"),
            Step::ToolResult(_) => Some("tool"),
            Step::Interrupt(_) | Step::SubAgent(_) => None,
        }
    }
}

/// An answer of the model ([`Step::Model`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ModelStep {
    /// The agent that answered, when the history names it (after a handoff, the receiver).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The answer's text (empty for an answer that only calls tools).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub text: String,
    /// The tools it called, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCallStep>,
}

impl ModelStep {
    /// An answer with this text and these tool calls.
    #[must_use]
    pub fn new(text: impl Into<String>, tool_calls: Vec<ToolCallStep>) -> Self {
        Self {
            agent: None,
            text: text.into(),
            tool_calls,
        }
    }
}

/// A tool call of the model: the tool's name and its arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolCallStep {
    /// The call's id, when known (never compared: ids differ from run to run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The tool's name.
    pub name: String,
    /// Its arguments (a JSON object, as the model wrote them).
    #[serde(default = "empty_object")]
    pub arguments: Value,
}

impl ToolCallStep {
    /// A call of `name` with `arguments`.
    #[must_use]
    pub fn new(name: impl Into<String>, arguments: Value) -> Self {
        Self {
            id: None,
            name: name.into(),
            arguments,
        }
    }

    /// With the call's id.
    #[must_use]
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

/// A tool call's result ([`Step::ToolResult`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolResultStep {
    /// The id of the call it answers, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// The tool that answered, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The result's text.
    #[serde(default)]
    pub text: String,
    /// Whether the call failed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
}

impl ToolResultStep {
    /// The result `text` of the tool `name`.
    #[must_use]
    pub fn new(name: Option<String>, text: impl Into<String>) -> Self {
        Self {
            call_id: None,
            name,
            text: text.into(),
            is_error: false,
        }
    }
}

/// An interrupt that paused the run ([`Step::Interrupt`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct InterruptStep {
    /// The middleware (or tool) that raised it.
    pub source: String,
    /// The tool call it concerns, on the tool path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// What it asks.
    #[serde(default)]
    pub payload: Value,
}

impl InterruptStep {
    /// An interrupt of `source` asking `payload`.
    #[must_use]
    pub fn new(source: impl Into<String>, payload: Value) -> Self {
        Self {
            source: source.into(),
            tool_call_id: None,
            payload,
        }
    }
}

/// The run of a sub-agent ([`Step::SubAgent`]), as far as its events showed it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SubAgentStep {
    /// The sub-agent's name.
    pub agent: String,
    /// The tool call of this run that started it.
    #[serde(default)]
    pub call_id: String,
    /// Its own steps.
    #[serde(default)]
    pub trajectory: Trajectory,
}

impl SubAgentStep {
    /// The run of `agent`, started by the call `call_id`, with these steps.
    #[must_use]
    pub fn new(
        agent: impl Into<String>,
        call_id: impl Into<String>,
        trajectory: Trajectory,
    ) -> Self {
        Self {
            agent: agent.into(),
            call_id: call_id.into(),
            trajectory,
        }
    }
}
