//! Token budgets: at most so many input or output tokens (or so much money) per run and per
//! thread.
//!
//! ```
//! use hookchain::builtin::token_budget::{Budget, Pricing, TokenBudget};
//! use hookchain::builtin::LimitExit;
//! use hookchain::{Agent, EndReason, ModelResponse, ScriptedModel, ToolCall, Usage};
//! # use hookchain::builtin::ConfigError;
//! # futures::executor::block_on(async {
//! let budget = TokenBudget::builder()
//!     .run(Budget::new().output_tokens(100))
//!     .thread(Budget::new().cost(5.0))
//!     .pricing(Pricing::per_million_tokens(3.0, 15.0))
//!     .exit(LimitExit::End)
//!     .build()?;
//! let call = ToolCall::new("c1", "missing_tool", serde_json::json!({}));
//! let model = ScriptedModel::new([ModelResponse::tool_calls([call]).with_usage(Usage::new(10, 150))]);
//! let agent = Agent::builder(model).chain(budget).build();
//! let output = agent.run("Hi").await.unwrap();
//! // The first answer spent 150 output tokens: no second model call.
//! assert_eq!(output.end, EndReason::Jumped);
//! assert_eq!(output.model_calls, 1);
//! assert!(output.text().unwrap().contains("run output-token budget of 100"));
//! # Ok::<(), ConfigError>(())
//! # }).unwrap();
//! ```
//!
//! # Rules
//!
//! - Checked in `before_model`, before each model call, against the usage so far: the call is
//!   refused when `used >= budget` for any budget set — input tokens, output tokens, their
//!   total, or cost (tokens priced by [`Pricing`]). Run budgets are checked before thread
//!   budgets, then in that order.
//! - Run usage is [`Context::usage`]: every model call of the run (retries included). Thread
//!   usage is the thread's earlier runs (thread-scoped state, [`ThreadUsage`], added to when a
//!   run ends) plus this run's.
//! - The exits are [`ModelCallLimit`](super::ModelCallLimit)'s: [`LimitExit::End`] (the
//!   default) ends the run with an assistant message naming the budget and the amount used,
//!   [`LimitExit::Error`] fails it with [`TokenBudgetExceeded`].
//! - A budget is a bound on what is *started*: the call that crosses it runs, the next one does
//!   not (a model call's size is known only once it has answered).

use std::fmt;

use serde::{Deserialize, Serialize};

use hookchain_macros::middleware;

use super::ConfigError;
use super::limit::{LimitExit, LimitScope};
use crate::context::Context;
use crate::message::Message;
use crate::middleware::Flow;
use crate::model::Usage;

/// Bounds on one scope's usage; unset bounds do not apply.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
#[must_use]
pub struct Budget {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    total_tokens: Option<u64>,
    cost: Option<f64>,
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

    fn is_empty(&self) -> bool {
        *self == Budget::default()
    }

    /// Checks the bounds; `fields` names them in the error (run or thread).
    fn check(&self, fields: [&'static str; 4]) -> Result<(), ConfigError> {
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
    fn reached(&self, usage: Usage, pricing: Option<Pricing>) -> Option<(Measure, Amount, Amount)> {
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
    input_per_million: f64,
    output_per_million: f64,
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

/// The error of [`LimitExit::Error`]: a budget was used up.
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

/// The usage of a thread's finished runs (thread-scoped state of [`TokenBudget`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadUsage {
    /// Input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
}

/// Bounds the tokens (or the money) runs and threads spend (see the [module docs](self)).
#[derive(Debug, Clone, PartialEq)]
pub struct TokenBudget {
    run: Budget,
    thread: Budget,
    pricing: Option<Pricing>,
    exit: LimitExit,
}

/// Builds a [`TokenBudget`]; [`build`](Self::build) checks the settings.
#[derive(Debug, Clone, Default)]
#[must_use]
pub struct TokenBudgetBuilder {
    run: Budget,
    thread: Budget,
    pricing: Option<Pricing>,
    exit: LimitExit,
}

impl TokenBudget {
    /// A builder with no budget yet (at least one bound is needed) and the exit
    /// [`LimitExit::End`].
    pub fn builder() -> TokenBudgetBuilder {
        TokenBudgetBuilder::default()
    }
}

impl TokenBudgetBuilder {
    /// The budget of each run.
    pub fn run(mut self, budget: Budget) -> Self {
        self.run = budget;
        self
    }

    /// The budget of each thread, over all its runs.
    pub fn thread(mut self, budget: Budget) -> Self {
        self.thread = budget;
        self
    }

    /// What tokens cost: needed by a [`Budget::cost`].
    pub fn pricing(mut self, pricing: Pricing) -> Self {
        self.pricing = Some(pricing);
        self
    }

    /// What happens when a budget is used up.
    pub fn exit(mut self, exit: LimitExit) -> Self {
        self.exit = exit;
        self
    }

    /// The middleware; an error names a setting that cannot work: no bound at all, a bound of
    /// 0, a cost that is not a positive amount, a cost bound without pricing, or prices that
    /// are negative or not finite.
    pub fn build(self) -> Result<TokenBudget, ConfigError> {
        if self.run.is_empty() && self.thread.is_empty() {
            return Err(ConfigError::new(
                "run",
                "no budget set: set a run budget, a thread budget or both",
            ));
        }
        self.run.check([
            "run.input_tokens",
            "run.output_tokens",
            "run.total_tokens",
            "run.cost",
        ])?;
        self.thread.check([
            "thread.input_tokens",
            "thread.output_tokens",
            "thread.total_tokens",
            "thread.cost",
        ])?;
        match self.pricing {
            None if self.run.cost.is_some() || self.thread.cost.is_some() => {
                return Err(ConfigError::new(
                    "pricing",
                    "a cost budget needs the prices of tokens: set `pricing`",
                ));
            }
            Some(pricing)
                if ![pricing.input_per_million, pricing.output_per_million]
                    .iter()
                    .all(|price| price.is_finite() && *price >= 0.0) =>
            {
                return Err(ConfigError::new(
                    "pricing",
                    "prices must be finite and not negative",
                ));
            }
            _ => {}
        }
        Ok(TokenBudget {
            run: self.run,
            thread: self.thread,
            pricing: self.pricing,
            exit: self.exit,
        })
    }
}

#[middleware(crate = crate, thread_state = ThreadUsage)]
impl TokenBudget {
    /// Refuses the call when a budget is used up.
    #[hook(before_model, jumps = [end])]
    fn check(
        &self,
        cx: &mut Context,
        thread: &mut ThreadUsage,
    ) -> Result<Flow, TokenBudgetExceeded> {
        let run = cx.usage();
        let reached = self
            .run
            .reached(run, self.pricing)
            .map(|reached| (LimitScope::Run, reached))
            .or_else(|| {
                let thread = Usage::new(
                    thread.input_tokens.saturating_add(run.input_tokens),
                    thread.output_tokens.saturating_add(run.output_tokens),
                );
                let reached = self.thread.reached(thread, self.pricing)?;
                Some((LimitScope::Thread, reached))
            });
        let Some((scope, (measure, used, budget))) = reached else {
            return Ok(Flow::Continue);
        };
        tracing::warn!(%scope, %measure, %used, %budget, exit = ?self.exit, "token budget reached");
        let exceeded = TokenBudgetExceeded {
            scope,
            measure,
            budget,
            used,
        };
        match self.exit {
            LimitExit::Error => Err(exceeded),
            LimitExit::End => {
                let text = format!(
                    "Token budget reached: the {scope} {measure} budget of {budget} is used up \
                     ({used} used), so the run ends here."
                );
                // No call waits for a result before a model call: the edit keeps the history
                // valid; were it refused, the run still ends (without the note).
                if let Err(error) =
                    cx.edit_history(|messages| messages.push(Message::assistant(text)))
                {
                    tracing::warn!(%error, "token budget: the closing message was refused");
                }
                Ok(Flow::end())
            }
        }
    }

    /// Adds the run's usage to the thread's, once the run ends.
    #[hook(after_agent)]
    fn tally(&self, cx: &mut Context, thread: &mut ThreadUsage) {
        let run = cx.usage();
        thread.input_tokens = thread.input_tokens.saturating_add(run.input_tokens);
        thread.output_tokens = thread.output_tokens.saturating_add(run.output_tokens);
    }
}
