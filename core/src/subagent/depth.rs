//! How deep a run is among agents that call agents.

/// How many levels of sub-agents a run may have below it by default (see
/// [`AgentTool::max_depth`](super::AgentTool::max_depth)).
pub const DEFAULT_MAX_DEPTH: usize = 4;

/// The depth of a sub-agent's run, in its run context: 1 for a child of a top-level run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Depth(pub(super) usize);
