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
//! let agent = Agent::builder(model).chain(budget).build()?;
//! let output = agent.run("Hi").await.unwrap();
//! // The first answer spent 150 output tokens: no second model call.
//! assert_eq!(output.end, EndReason::Jumped);
//! assert_eq!(output.model_calls, 1);
//! assert!(output.text().unwrap().contains("run output-token budget of 100"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
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
//!   usage is [`Context::thread_usage`]: every model call of every run of the thread, charged
//!   as it answers — a run given up while paused, or cancelled (its future dropped), still
//!   counts. A call whose provider reported no usage adds no tokens (it is counted in
//!   [`Usage::unreported_calls`](crate::Usage::unreported_calls)): against such a provider, pair
//!   the budget with a [`ModelCallLimit`](super::ModelCallLimit).
//! - The exits are [`ModelCallLimit`](super::ModelCallLimit)'s: [`LimitExit::End`] (the
//!   default) ends the run with an assistant message naming the budget and the amount used,
//!   [`LimitExit::Error`] fails it with [`TokenBudgetExceeded`].
//! - A budget is a bound on what is *started*: the call that crosses it runs, the next one does
//!   not (a model call's size is known only once it has answered).

mod budget;
mod error;

use serde::{Deserialize, Serialize};

use hookchain_macros::middleware;

pub use budget::{Amount, Budget, Measure, Pricing};
pub use error::TokenBudgetExceeded;

use super::ConfigError;
use super::limit::{LimitExit, LimitScope};
use crate::context::Context;
use crate::message::Message;
use crate::middleware::Flow;
use crate::model::Usage;

/// The thread's spending a thread budget is checked against: its ledger
/// ([`Context::thread_usage`]: every model call of every run, charged as it answered, runs
/// given up paused or cancelled included), or, for a thread stored before the ledger existed,
/// what this middleware tallied of its finished runs plus this run — whichever is more.
fn thread_usage(cx: &Context, tallied: &ThreadUsage, run: Usage) -> Usage {
    let tallied = Usage::new(
        tallied.input_tokens.saturating_add(run.input_tokens),
        tallied.output_tokens.saturating_add(run.output_tokens),
    );
    match cx.thread_usage() {
        Some(ledger) => Usage::new(
            ledger.input_tokens.max(tallied.input_tokens),
            ledger.output_tokens.max(tallied.output_tokens),
        ),
        None => tallied,
    }
}

/// The usage of a thread's finished runs (thread-scoped state of [`TokenBudget`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ThreadUsage {
    /// Input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
}

impl ThreadUsage {
    /// The usage of `input_tokens` and `output_tokens`.
    #[must_use]
    pub const fn new(input_tokens: u64, output_tokens: u64) -> Self {
        Self {
            input_tokens,
            output_tokens,
        }
    }
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

#[middleware(crate = crate, live_stream, thread_state = ThreadUsage)]
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
                let thread = thread_usage(cx, thread, run);
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

    /// Adds the run's usage to the thread's, once the run ends (what threads stored before the
    /// thread's own ledger, [`Thread::spent`](crate::Thread::spent), existed still count on).
    #[hook(after_agent)]
    fn tally(&self, cx: &mut Context, thread: &mut ThreadUsage) {
        let run = cx.usage();
        thread.input_tokens = thread.input_tokens.saturating_add(run.input_tokens);
        thread.output_tokens = thread.output_tokens.saturating_add(run.output_tokens);
    }
}
