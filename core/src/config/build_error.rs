//! Why an agent cannot be built as configured.

/// An agent's configuration that cannot work, found when it is built
/// ([`AgentBuilder::build`](crate::AgentBuilder::build)): a misconfigured agent fails at
/// startup, not on its first request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AgentBuildError {
    /// A middleware contributes a tool whose name one of the agent's own tools has.
    #[error(
        "middleware `{middleware}` contributes a tool named `{tool}`, but the agent already has \
         a tool of that name: rename one of them"
    )]
    ToolTaken {
        /// The tool's name.
        tool: String,
        /// The middleware that contributes it.
        middleware: &'static str,
    },
    /// Two middleware (or the same one listed twice) contribute tools of the same name.
    #[error(
        "middleware `{first}` and `{second}` both contribute a tool named `{tool}`: list the \
         middleware once, or rename one of the tools"
    )]
    ToolContributedTwice {
        /// The tool's name.
        tool: String,
        /// The member listed first.
        first: &'static str,
        /// The member listed later.
        second: &'static str,
    },
    /// Two tools were given the agent under one name (the model could call only one of them).
    #[error(
        "two tools are named `{tool}`: the model could call only one of them; rename one (the \
         name is the function's, or `#[tool(name = \"...\")]`)"
    )]
    ToolRegisteredTwice {
        /// The tool's name.
        tool: String,
    },
    /// `max_steps(0)`: no run could call the model.
    #[error("`max_steps(0)` leaves no step to call the model in: give at least 1")]
    NoSteps,
    /// `lease(Duration::ZERO)` with a checkpointer: every lease would have expired when taken,
    /// so two workers could run one run at once.
    #[error(
        "a lease of zero expires as it is taken, and would let two workers run one run: give \
         `lease(..)` more than the longest step (the default is 30 s)"
    )]
    ZeroLease,
}
