//! The token of hookchain's machinery.

/// Passed by hookchain's machinery to the chain-internal methods of `Middleware` (the
/// synchronous forms of hooks, the routing of answers to members): those take one, so that
/// user code can neither call nor override them by mistake.
#[derive(Debug, Clone, Copy, Default)]
pub struct Internal(());

impl Internal {
    /// For the machinery (and the benchmarks, which drive a chain as the agent loop does).
    #[must_use]
    pub const fn new() -> Self {
        Internal(())
    }
}
