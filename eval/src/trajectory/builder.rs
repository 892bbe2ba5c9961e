//! Writing an expected trajectory by hand.

use serde_json::Value;

use super::{
    InterruptStep, ModelStep, Step, SubAgentStep, ToolCallStep, ToolResultStep, Trajectory,
};

/// Builds a [`Trajectory`] step by step ([`Trajectory::builder`]).
///
/// ```
/// use hookchain_eval::{ToolCallStep, Trajectory};
/// use serde_json::json;
///
/// let expected = Trajectory::builder()
///     .user("Weather in Paris and Rome?")
///     .tool_calls([
///         ToolCallStep::new("weather", json!({"city": "Paris"})),
///         ToolCallStep::new("weather", json!({"city": "Rome"})),
///     ])
///     .tool_result("weather", "18°C")
///     .tool_result("weather", "24°C")
///     .model("18°C in Paris, 24°C in Rome.")
///     .build();
/// assert_eq!(expected.len(), 5);
/// ```
#[derive(Debug, Clone, Default)]
#[must_use]
pub struct TrajectoryBuilder {
    steps: Vec<Step>,
}

impl TrajectoryBuilder {
    /// Instructions for the model.
    pub fn system(self, text: impl Into<String>) -> Self {
        self.step(Step::System { text: text.into() })
    }

    /// The user's message.
    pub fn user(self, text: impl Into<String>) -> Self {
        self.step(Step::User { text: text.into() })
    }

    /// An answer of the model with this text and no tool call.
    pub fn model(self, text: impl Into<String>) -> Self {
        self.step(Step::Model(ModelStep::new(text, Vec::new())))
    }

    /// An answer of the model calling one tool.
    pub fn tool_call(self, name: impl Into<String>, arguments: Value) -> Self {
        self.tool_calls([ToolCallStep::new(name, arguments)])
    }

    /// An answer of the model calling these tools (in one answer, as parallel calls).
    pub fn tool_calls(self, calls: impl IntoIterator<Item = ToolCallStep>) -> Self {
        self.step(Step::Model(ModelStep::new(
            String::new(),
            calls.into_iter().collect(),
        )))
    }

    /// A tool's result.
    pub fn tool_result(self, name: impl Into<String>, text: impl Into<String>) -> Self {
        self.step(Step::ToolResult(ToolResultStep::new(
            Some(name.into()),
            text,
        )))
    }

    /// An interrupt raised by `source`, asking `payload`.
    pub fn interrupt(self, source: impl Into<String>, payload: Value) -> Self {
        self.step(Step::Interrupt(InterruptStep::new(source, payload)))
    }

    /// The run of the sub-agent `agent`, started by the call `call_id`.
    pub fn sub_agent(
        self,
        agent: impl Into<String>,
        call_id: impl Into<String>,
        trajectory: Trajectory,
    ) -> Self {
        self.step(Step::SubAgent(SubAgentStep::new(
            agent, call_id, trajectory,
        )))
    }

    /// Any step.
    pub fn step(mut self, step: Step) -> Self {
        self.steps.push(step);
        self
    }

    /// The trajectory.
    #[must_use]
    pub fn build(self) -> Trajectory {
        Trajectory::new(self.steps)
    }
}
