//! What middleware add to the agent they are part of: tools and pieces of the system prompt.

use std::borrow::Cow;
use std::fmt;

use super::Middleware;
use crate::tool::{Tool, ToolRegistry};

/// The tools and system-prompt pieces the middleware of a chain contribute, collected once
/// when the agent is built ([`AgentBuilder::build`](crate::AgentBuilder::build)).
///
/// A middleware adds to it in [`Middleware::contribute`] (or a `#[contribute]` method of a
/// `#[middleware]` block); each contribution is recorded under the member that made it, so
/// that a clash of tool names can name both sides and
/// [`describe`](Middleware::describe) can list them.
///
/// ```
/// use hookchain::middleware::{Contributions, Middleware};
/// use hookchain::prelude::*;
/// use hookchain::{middleware, tool};
///
/// /// Tells the time.
/// #[tool]
/// async fn clock() -> String {
///     "12:00".to_owned()
/// }
///
/// /// Gives the agent a clock, and tells it so.
/// struct Clock;
///
/// #[middleware]
/// impl Clock {
///     #[contribute]
///     fn contribute(&self, to: &mut Contributions) {
///         to.tool(clock).system_prompt("Call `clock` to know the time.");
///     }
/// }
///
/// let agent = Agent::builder(ScriptedModel::new([]))
///     .system_prompt("Be brief.")
///     .chain(Clock)
///     .build()?;
/// assert!(agent.tools().spec("clock").is_some());
/// assert_eq!(agent.chain().describe().tools(), ["clock"]);
/// # Ok::<(), hookchain::agent::AgentBuildError>(())
/// ```
#[derive(Default)]
pub struct Contributions {
    /// The member whose `contribute` runs now.
    member: &'static str,
    tools: Vec<ContributedTool>,
    prompts: Vec<(&'static str, Cow<'static, str>)>,
}

/// A tool, by name, and how to register it (a registry takes tools of any type).
struct ContributedTool {
    member: &'static str,
    name: String,
    register: Box<dyn FnOnce(&mut ToolRegistry) + Send>,
}

impl Contributions {
    /// No contributions yet.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Collects what `middleware` contributes (for a chain: each member, in listing order).
    pub fn collect<M: Middleware>(&mut self, middleware: &M) {
        self.member = M::NAME;
        middleware.contribute(self);
    }

    /// Adds `tool` to the agent's tools. Its name must differ from every other tool's: a clash
    /// is a [`AgentBuildError`](crate::config::AgentBuildError) when the agent is built.
    pub fn tool(&mut self, tool: impl Tool) -> &mut Self {
        let name = tool.spec().name;
        self.tools.push(ContributedTool {
            member: self.member,
            name,
            register: Box::new(move |registry| {
                registry.register(tool);
            }),
        });
        self
    }

    /// Adds `piece` to the agent's system prompt, after the prompt the agent was given (and
    /// after the pieces of the members listed before), separated by a blank line.
    pub fn system_prompt(&mut self, piece: impl Into<Cow<'static, str>>) -> &mut Self {
        self.prompts.push((self.member, piece.into()));
        self
    }

    /// The names of the contributed tools, in order.
    pub fn tool_names(&self) -> impl Iterator<Item = &str> {
        self.tools.iter().map(|tool| tool.name.as_str())
    }

    /// The contributed tools' names with the member that contributed each, in order.
    pub fn tools_by_member(&self) -> impl Iterator<Item = (&'static str, &str)> {
        self.tools
            .iter()
            .map(|tool| (tool.member, tool.name.as_str()))
    }

    /// The contributed system-prompt pieces with the member that contributed each, in order.
    pub fn prompts_by_member(&self) -> impl Iterator<Item = (&'static str, &str)> {
        self.prompts
            .iter()
            .map(|(member, piece)| (*member, &**piece))
    }

    /// Registers the tools in `registry` and appends the pieces to `prompt`; a tool whose name
    /// is taken (by the agent's own tools or an earlier contribution) is refused, and nothing
    /// is added then.
    pub(crate) fn apply(
        self,
        registry: &mut ToolRegistry,
        prompt: &mut Option<String>,
    ) -> Result<(), crate::config::AgentBuildError> {
        use crate::config::AgentBuildError;
        for (i, tool) in self.tools.iter().enumerate() {
            if registry.has_fixed(&tool.name) {
                return Err(AgentBuildError::ToolTaken {
                    tool: tool.name.clone(),
                    middleware: tool.member,
                });
            }
            if let Some(first) = self.tools[..i].iter().find(|t| t.name == tool.name) {
                return Err(AgentBuildError::ToolContributedTwice {
                    tool: tool.name.clone(),
                    first: first.member,
                    second: tool.member,
                });
            }
        }
        for tool in self.tools {
            (tool.register)(registry);
        }
        for (_, piece) in self.prompts {
            match prompt {
                Some(prompt) if !prompt.is_empty() => {
                    prompt.push_str("\n\n");
                    prompt.push_str(&piece);
                }
                _ => *prompt = Some(piece.into_owned()),
            }
        }
        Ok(())
    }
}

impl fmt::Debug for Contributions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Contributions")
            .field("tools", &self.tools_by_member().collect::<Vec<_>>())
            .field(
                "system_prompt",
                &self.prompts_by_member().collect::<Vec<_>>(),
            )
            .finish()
    }
}
