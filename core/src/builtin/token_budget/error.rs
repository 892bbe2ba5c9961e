//! The error of a [`TokenBudget`](super::TokenBudget) whose exit is an error.

use super::budget::{Amount, Measure};
use crate::builtin::limit::LimitScope;

/// The error of [`LimitExit::Error`](crate::builtin::LimitExit::Error): a budget was used up.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("token budget reached: {scope} {measure} budget of {budget}, {used} used")]
#[non_exhaustive]
pub struct TokenBudgetExceeded {
    /// The budget's scope.
    pub scope: LimitScope,
    /// What it bounds.
    pub measure: Measure,
    /// Its value.
    pub budget: Amount,
    /// How much of it was used.
    pub used: Amount,
}
