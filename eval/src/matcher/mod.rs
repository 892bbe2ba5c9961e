//! Matchers: an actual trajectory compared with an expected one.

mod adk;
mod agentevals;
mod args;
pub(crate) mod json_eq;
mod mismatch;

pub use adk::{
    EvalStatus, InvocationResult, ToolTrajectory, ToolTrajectoryError, ToolTrajectoryMatch,
    ToolTrajectoryResult, UnknownMatchType,
};
pub use agentevals::{MatchMode, TrajectoryMatch, UnknownMode};
pub use args::{ArgsComparator, ArgsMatch, ArgsOverride};
pub use mismatch::Mismatch;

use crate::Trajectory;

/// Compares an actual trajectory with an expected one.
pub trait TrajectoryMatcher {
    /// `Ok` when `actual` matches `expected`; else what differs, and where.
    ///
    /// # Errors
    ///
    /// A [`Mismatch`], whose `Display` (and `Debug`, so that `unwrap` and `?` in a test show
    /// it) gives the reason and both trajectories side by side, the step at fault marked.
    fn check(&self, actual: &Trajectory, expected: &Trajectory) -> Result<(), Mismatch>;

    /// Whether `actual` matches `expected`.
    fn matches(&self, actual: &Trajectory, expected: &Trajectory) -> bool {
        self.check(actual, expected).is_ok()
    }
}
