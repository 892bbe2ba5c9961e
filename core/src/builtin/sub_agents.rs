//! A team of named sub-agents behind one `task` tool (the deep-agents shape): the model
//! delegates a task to the agent it names.
//!
//! ```
//! use hookchain::builtin::SubAgents;
//! use hookchain::prelude::*;
//! use serde_json::json;
//!
//! # futures::executor::block_on(async {
//! let researcher = Agent::builder(ScriptedModel::new([ModelResponse::text("Three sources.")]))
//!     .name("researcher")
//!     .build()?;
//! let lead = Agent::builder(ScriptedModel::new([
//!     ModelResponse::tool_calls([ToolCall::new(
//!         "t1",
//!         "task",
//!         json!({"agent": "researcher", "task": "Find sources on tides."}),
//!     )]),
//!     ModelResponse::text("The researcher found three sources."),
//! ]))
//! .chain(
//!     SubAgents::builder()
//!         .agent(researcher.into_tool("researcher", "Finds and reads sources.")?)
//!         .build()?,
//! )
//! .build()?;
//! assert!(lead.system_prompt().unwrap().contains("researcher: Finds and reads sources."));
//! let output = lead.run("Research tides").await?;
//! assert_eq!(output.text().as_deref(), Some("The researcher found three sources."));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
//!
//! # Rules
//!
//! - The middleware contributes one tool, `task` (arguments: `agent`, one of the team's names,
//!   and `task`, what to do), and a piece of the system prompt naming each agent with its
//!   description. A tool of the agent already named `task` is an error when it is built.
//! - Each sub-agent is an [`AgentTool`] taking a [`Task`] (made with
//!   [`Agent::into_tool`](crate::Agent::into_tool)); its name and description are the tool's.
//!   A delegation runs it as that tool would run (see [`crate::subagent`]): its pause pauses
//!   the run, its usage and events are the run's; the parent's `wrap_tool_call` middleware
//!   see the call as `task`.
//! - A call naming an agent the team does not have gets an error result listing the team.
//! - No agent, two agents of one name, or a blank description are refused by the builder.

use std::fmt;
use std::sync::Arc;

use hookchain_macros::middleware;
use serde::Deserialize;
use serde_json::json;

use super::ConfigError;
use crate::context::ToolContext;
use crate::interrupt::Answer;
use crate::message::Content;
use crate::middleware::{Contributions, Middleware};
use crate::model::Model;
use crate::subagent::{AgentTool, Task};
use crate::tool::{ErasedTool, Tool, ToolError, ToolSpec};

/// The name of the tool [`SubAgents`] contributes.
pub const TASK: &str = "task";

/// The team's sub-agents behind one `task` tool: see [the module's docs](self).
#[derive(Clone)]
pub struct SubAgents {
    delegate: Delegate,
}

/// Builds a [`SubAgents`].
#[derive(Default)]
#[must_use]
pub struct SubAgentsBuilder {
    members: Vec<Member>,
}

/// One agent of the team.
#[derive(Clone)]
struct Member {
    name: String,
    description: String,
    tool: Arc<dyn ErasedTool>,
}

/// The `task` tool.
#[derive(Clone)]
struct Delegate {
    members: Arc<[Member]>,
}

/// The `task` tool's arguments.
#[derive(Deserialize)]
struct Delegation {
    agent: String,
    task: String,
}

impl SubAgents {
    /// A team to build, agent by agent.
    pub fn builder() -> SubAgentsBuilder {
        SubAgentsBuilder::default()
    }

    /// The team's names, in the order they were added.
    #[must_use]
    pub fn names(&self) -> Vec<&str> {
        self.delegate
            .members
            .iter()
            .map(|member| member.name.as_str())
            .collect()
    }
}

impl fmt::Debug for SubAgents {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SubAgents")
            .field("agents", &self.names())
            .finish()
    }
}

impl fmt::Debug for SubAgentsBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.members.iter().map(|m| m.name.as_str()).collect();
        f.debug_struct("SubAgentsBuilder")
            .field("agents", &names)
            .finish()
    }
}

impl SubAgentsBuilder {
    /// Adds `agent`, under its tool's name and with its description.
    pub fn agent<M, C>(mut self, agent: AgentTool<M, C, Task>) -> Self
    where
        M: Model + 'static,
        C: Middleware + 'static,
    {
        let spec = agent.spec();
        self.members.push(Member {
            name: spec.name,
            description: spec.description,
            tool: Arc::new(agent),
        });
        self
    }

    /// The middleware; an error names a team with no agent, two of one name, or one without
    /// a description.
    pub fn build(self) -> Result<SubAgents, ConfigError> {
        if self.members.is_empty() {
            return Err(ConfigError::new("agent", "the team has no agent"));
        }
        for (i, member) in self.members.iter().enumerate() {
            ConfigError::require_text("agent", &member.description)?;
            if self.members[..i]
                .iter()
                .any(|other| other.name == member.name)
            {
                return Err(ConfigError::new(
                    "agent",
                    format!("two agents are named `{}`", member.name),
                ));
            }
        }
        Ok(SubAgents {
            delegate: Delegate {
                members: self.members.into(),
            },
        })
    }
}

#[middleware(crate = crate)]
impl SubAgents {
    /// The `task` tool, and the team in the system prompt.
    #[contribute]
    fn contribute(&self, to: &mut Contributions) {
        let team: Vec<String> = self
            .delegate
            .members
            .iter()
            .map(|member| format!("- {}: {}", member.name, member.description))
            .collect();
        to.tool(self.delegate.clone()).system_prompt(format!(
            "## `{TASK}`\n\nYou can delegate a task to one of these agents with the `{TASK}` tool; \
             each sees only the task you give it, so say everything it needs. Delegate tasks \
             that are independent in one answer: they run at once.\n{}",
            team.join("\n")
        ));
    }
}

impl Delegate {
    fn member(&self, arguments: &serde_json::Value) -> Result<(&Member, String), ToolError> {
        let delegation =
            Delegation::deserialize(arguments).map_err(|source| ToolError::InvalidArguments {
                tool: TASK.to_owned(),
                source,
            })?;
        let member = self
            .members
            .iter()
            .find(|member| member.name == delegation.agent)
            .ok_or_else(|| {
                let names: Vec<&str> = self.members.iter().map(|m| m.name.as_str()).collect();
                ToolError::for_model(
                    TASK,
                    format!(
                        "there is no agent `{}`; the agents are: {}",
                        delegation.agent,
                        names.join(", ")
                    ),
                )
            })?;
        Ok((member, delegation.task))
    }
}

// Not listed in a "not a tool" error, which names the usual fixes instead.
#[diagnostic::do_not_recommend]
impl Tool for Delegate {
    fn spec(&self) -> ToolSpec {
        let names: Vec<&str> = self.members.iter().map(|m| m.name.as_str()).collect();
        ToolSpec::new(
            TASK,
            "Delegate a task to one of your agents (see the system prompt); its answer is the \
             result.",
            json!({
                "type": "object",
                "properties": {
                    "agent": {
                        "type": "string",
                        "enum": names,
                        "description": "The agent to do the task."
                    },
                    "task": {
                        "type": "string",
                        "description": "The task, with everything needed to do it: the agent \
                                        sees nothing else of this conversation."
                    }
                },
                "required": ["agent", "task"],
                "additionalProperties": false
            }),
        )
    }

    fn check_arguments(&self, arguments: &serde_json::Value) -> Result<(), ToolError> {
        self.member(arguments).map(drop)
    }

    fn check_answer(
        &self,
        arguments: &serde_json::Value,
        answer: &Answer<'_>,
    ) -> Result<(), ToolError> {
        let (member, task) = self.member(arguments)?;
        member.tool.check_answer(&json!({ "task": task }), answer)
    }

    async fn call(
        &self,
        cx: ToolContext<'_>,
        arguments: serde_json::Value,
    ) -> Result<Content, ToolError> {
        let (member, task) = self.member(&arguments)?;
        member.tool.call_boxed(cx, json!({ "task": task })).await
    }
}
