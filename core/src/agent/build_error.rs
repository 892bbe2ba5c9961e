//! Why an agent cannot be built as configured.

/// An agent's configuration that cannot work, found when it is built
/// ([`AgentBuilder::try_build`](super::AgentBuilder::try_build)).
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
}
