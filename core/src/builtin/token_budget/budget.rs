//! What a [`TokenBudget`](super::TokenBudget) bounds: budgets, prices, measures and amounts.

use std::fmt;

use super::super::ConfigError;
use crate::model::Usage;

/// Bounds on one scope's usage; unset bounds do not apply.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
#[must_use]
pub struct Budget {
    pub(super) input_tokens: Option<u64>,
    pub(super) output_tokens: Option<u64>,
    pub(super) total_tokens: Option<u64>,
    pub(super) cost: Option<f64>,
}

impl Budget {
    /// No bound yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// At most this many input tokens (cached ones included).
    pub fn input_tokens(mut self, tokens: u64) -> Self {
        self.input_tokens = Some(tokens);
        self
    }

    /// At most this many output tokens.
    pub fn output_tokens(mut self, tokens: u64) -> Self {
        self.output_tokens = Some(tokens);
        self
    }

    /// At most this many input and output tokens together.
    pub fn total_tokens(mut self, tokens: u64) -> Self {
        self.total_tokens = Some(tokens);
        self
    }

    /// At most this much money, in the currency of the [`Pricing`] (which is then needed).
    pub fn cost(mut self, cost: f64) -> Self {
        self.cost = Some(cost);
        self
    }

    pub(super) fn is_empty(&self) -> bool {
        *self == Budget::default()
    }

    /// Checks the bounds; `fields` names them in the error (run or thread).
    pub(super) fn check(&self, fields: [&'static str; 4]) -> Result<(), ConfigError> {
        let tokens = [self.input_tokens, self.output_tokens, self.total_tokens];
        for (field, bound) in fields.into_iter().zip(tokens) {
            if bound == Some(0) {
                return Err(ConfigError::new(
                    field,
                    "must be at least 1 (a budget of 0 would forbid every call)",
                ));
            }
        }
        match self.cost {
            Some(cost) if !(cost.is_finite() && cost > 0.0) => Err(ConfigError::new(
                fields[3],
                format!("must be a positive finite amount, not {cost}"),
            )),
            _ => Ok(()),
        }
    }

    /// The first bound `usage` has reached, with the amount used.
    pub(super) fn reached(
        &self,
        usage: Usage,
        pricing: Option<Pricing>,
    ) -> Option<(Measure, Amount, Amount)> {
        let tokens = [
            (Measure::InputTokens, self.input_tokens, usage.input_tokens),
            (
                Measure::OutputTokens,
                self.output_tokens,
                usage.output_tokens,
            ),
            (
                Measure::TotalTokens,
                self.total_tokens,
                usage.input_tokens.saturating_add(usage.output_tokens),
            ),
        ];
        for (measure, bound, used) in tokens {
            if let Some(bound) = bound.filter(|&bound| used >= bound) {
                return Some((measure, Amount::Tokens(used), Amount::Tokens(bound)));
            }
        }
        let (bound, pricing) = (self.cost?, pricing?);
        let spent = pricing.cost(usage);
        (spent >= bound).then_some((Measure::Cost, Amount::Cost(spent), Amount::Cost(bound)))
    }
}

/// What tokens cost, per million, to turn usage into money for [`Budget::cost`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pricing {
    pub(super) input_per_million: f64,
    pub(super) output_per_million: f64,
}

impl Pricing {
    /// Input tokens at `input` and output tokens at `output`, per million tokens.
    #[must_use]
    pub const fn per_million_tokens(input: f64, output: f64) -> Self {
        Self {
            input_per_million: input,
            output_per_million: output,
        }
    }

    /// What `usage` costs.
    #[must_use]
    pub fn cost(&self, usage: Usage) -> f64 {
        // Token counts stay far below 2^53: the conversion is exact in practice.
        #[allow(clippy::cast_precision_loss)]
        let (input, output) = (usage.input_tokens as f64, usage.output_tokens as f64);
        (input * self.input_per_million + output * self.output_per_million) / 1_000_000.0
    }
}

/// What a budget bounds (shown as "input-token", "output-token", "token", "cost").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Measure {
    /// Input tokens.
    InputTokens,
    /// Output tokens.
    OutputTokens,
    /// Input and output tokens together.
    TotalTokens,
    /// Money, by the [`Pricing`].
    Cost,
}

impl fmt::Display for Measure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Measure::InputTokens => "input-token",
            Measure::OutputTokens => "output-token",
            Measure::TotalTokens => "token",
            Measure::Cost => "cost",
        })
    }
}

/// An amount of tokens or money.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Amount {
    /// Tokens.
    Tokens(u64),
    /// Money, in the currency of the [`Pricing`].
    Cost(f64),
}

impl fmt::Display for Amount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Amount::Tokens(tokens) => write!(f, "{tokens}"),
            Amount::Cost(cost) => write!(f, "{cost:.4}"),
        }
    }
}
