//! A trajectory taken from what a run gives: its messages, its output, or its events.

use hookchain_core::{AgentEvent, Interrupt, Message, Role, RunOutput};

use super::{
    InterruptStep, ModelStep, Step, SubAgentStep, ToolCallStep, ToolResultStep, Trajectory,
};

impl Trajectory {
    /// The steps of a history: each message is a step (an assistant message with its tool
    /// calls, a tool message as the result it carries).
    #[must_use]
    pub fn from_messages(messages: &[Message]) -> Self {
        Self::new(messages.iter().filter_map(step_of).collect())
    }

    /// The steps of a run's output: its history ([`RunOutput::messages`], with the input and,
    /// in a thread, the earlier runs'), then the interrupts it paused on, if it did.
    #[must_use]
    pub fn from_output(output: &RunOutput) -> Self {
        let mut trajectory = Self::from_messages(&output.messages);
        trajectory
            .steps
            .extend(output.interrupts().iter().map(interrupt_step));
        trajectory
    }

    /// The steps a run's events show ([`Agent::stream`](hookchain_core::Agent::stream)): each
    /// message added (the model's answers and the tools' results, not the input, which is no
    /// event), each interrupt, and the runs of sub-agents, each gathered into one
    /// [`Step::SubAgent`] at the place of its first event. Model events are provisional and
    /// leave no step: their message, when added, is the step.
    pub fn from_events<'a>(events: impl IntoIterator<Item = &'a AgentEvent>) -> Self {
        let mut steps = Vec::new();
        for event in events {
            push_event(&mut steps, event);
        }
        Self::new(steps)
    }
}

fn push_event(steps: &mut Vec<Step>, event: &AgentEvent) {
    match event {
        AgentEvent::MessageAdded(message) => steps.extend(step_of(message)),
        AgentEvent::Interrupted(interrupt) => steps.push(interrupt_step(interrupt)),
        AgentEvent::SubAgent(sub) => {
            // The events of one child run arrive interleaved with nothing of ours but come as
            // many events: they are gathered under the call that started the child, so that
            // the parent's steps stay the parent's.
            let existing = steps.iter().rposition(|step| {
                matches!(step, Step::SubAgent(s) if s.call_id == sub.call_id && s.agent == sub.agent)
            });
            let index = existing.unwrap_or_else(|| {
                steps.push(Step::SubAgent(SubAgentStep::new(
                    sub.agent.clone(),
                    sub.call_id.clone(),
                    Trajectory::default(),
                )));
                steps.len() - 1
            });
            if let Some(Step::SubAgent(child)) = steps.get_mut(index) {
                push_event(&mut child.trajectory.steps, &sub.event);
            }
        }
        // Model events are provisional (the message added is what counts), and the tool call
        // events repeat what the messages say.
        _ => {}
    }
}

fn step_of(message: &Message) -> Option<Step> {
    let text = message.text().into_owned();
    match message.role {
        Role::System => Some(Step::System { text }),
        Role::User => Some(Step::User { text }),
        Role::Assistant => Some(Step::Model(ModelStep {
            agent: message.name.clone(),
            text,
            tool_calls: message
                .tool_calls
                .iter()
                .map(|call| {
                    ToolCallStep::new(call.name.clone(), call.arguments.clone())
                        .with_id(call.id.clone())
                })
                .collect(),
        })),
        Role::Tool => Some(Step::ToolResult(ToolResultStep {
            call_id: message.tool_call_id.clone(),
            name: message.name.clone(),
            text,
            is_error: message.is_error,
        })),
        // A role added to hookchain later: not one this crate knows how to compare.
        _ => None,
    }
}

fn interrupt_step(interrupt: &Interrupt) -> Step {
    Step::Interrupt(InterruptStep {
        source: interrupt.source.clone(),
        tool_call_id: interrupt.tool_call_id.clone(),
        payload: interrupt.payload.clone(),
    })
}
