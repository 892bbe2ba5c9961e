//! Evals for [hookchain](https://docs.rs/hookchain) agents: a run's trajectory, matchers
//! that compare it with the trajectory you expect, and cassettes that record a model's calls
//! and replay them without the model.
//!
//! Depend on `hookchain` with the feature `eval`; this crate's items are then
//! `hookchain::eval::…`.
//!
//! # Trajectories
//!
//! A [`Trajectory`] is the ordered [`Step`]s of a run: the user's message, each answer of the
//! model (its text, the tools it called with their arguments), each tool's result, the
//! interrupts that paused it, and the runs of sub-agents its tools started. Take one from a
//! run ([`Trajectory::from_output`], [`from_messages`](Trajectory::from_messages),
//! [`from_events`](Trajectory::from_events)), write the expected one with
//! [`Trajectory::builder`], or read it from data (serde: a list of steps in JSON or YAML;
//! [`Trajectory::from_openai_messages`] for OpenAI's chat format, agentevals' datasets).
//!
//! # Matchers
//!
//! A [`TrajectoryMatcher`] checks an actual trajectory against an expected one and says why
//! they differ ([`Mismatch`]: the reason, both sides aligned, the step at fault marked). Two
//! families, with the semantics of their references, checked against those references' own
//! test vectors (`eval/tests/golden_*.rs`):
//!
//! - [`TrajectoryMatch`], LangChain agentevals' trajectory match: [`MatchMode`] `strict`,
//!   `unordered`, `subset`, `superset`; tool arguments compared by [`ArgsMatch`] `exact`,
//!   `ignore`, `subset`, `superset`, or per tool by an [`ArgsOverride`] (another mode, some
//!   keys, your own comparison).
//! - [`ToolTrajectory`], Google ADK's tool trajectory criterion: [`ToolTrajectoryMatch`]
//!   `EXACT`, `IN_ORDER`, `ANY_ORDER`, arguments compared or ignored, and the score of
//!   several invocations against a threshold ([`ToolTrajectory::evaluate`]).
//!
//! # Cassettes
//!
//! A [`Cassette`](cassette::Cassette) wraps a [`Model`](hookchain_core::Model) at the model
//! boundary (not HTTP, so any provider): it records each call to a readable JSON file (the
//! request's structural fingerprint, the answer, a stream's events with their timing),
//! redacted, and replays the file in place of the model; a request that drifted from the
//! recording fails with the fields that differ. Modes `none`, `once`, `new_episodes`, `all`,
//! as VCR's. See the [`cassette`] module.
//!
//! # Evaluators
//!
//! An [`Evaluator`](evaluator::Evaluator) checks one case's [`Outcome`](evaluator::Outcome)
//! (its output, trajectory, duration, token usage, expected output) and returns an
//! [`EvaluationResult`](evaluator::EvaluationResult): pass, fail or a score, and why.
//! Built-ins with Pydantic Evals' semantics (`EqualsExpected`, `Equals`, `Contains`,
//! `IsInstance`, `MaxDuration`), and `Regex`, `ToolCalled`, `ToolNotCalled`, `MaxTokens`;
//! any closure `Fn(&Outcome) -> bool` is one too. See the [`evaluator`] module.
//!
//! # Matching a run
//!
//! A run of a [`ScriptedModel`](hookchain_core::ScriptedModel) that calls a tool, matched
//! against the trajectory expected of it:
//!
//! ```
//! use hookchain::prelude::*;
//! use hookchain::{ToolCall, tool};
//! use hookchain_eval::{Trajectory, TrajectoryMatch, TrajectoryMatcher};
//! use serde_json::json;
//!
//! /// The weather in a city.
//! #[tool]
//! async fn weather(city: String) -> String {
//!     format!("18°C in {city}")
//! }
//!
//! async fn asks_for_the_weather_once() -> Result<(), Box<dyn std::error::Error>> {
//!     let model = ScriptedModel::new([
//!         ModelResponse::tool_calls([ToolCall::new("c1", "weather", json!({"city": "Paris"}))]),
//!         ModelResponse::text("It is 18°C in Paris."),
//!     ]);
//!     let agent = Agent::builder(model).tool(weather).build()?;
//!     let output = agent.run("Weather in Paris?").await?;
//!
//!     let expected = Trajectory::builder()
//!         .user("Weather in Paris?")
//!         .tool_call("weather", json!({"city": "Paris"}))
//!         .tool_result("weather", "18°C in Paris")
//!         .model("It is 18°C in Paris.")
//!         .build();
//!     TrajectoryMatch::strict().check(&Trajectory::from_output(&output), &expected)?;
//!     Ok(())
//! }
//!
//! #[tokio::test]
//! async fn weather_trajectory() -> Result<(), Box<dyn std::error::Error>> {
//!     asks_for_the_weather_once().await
//! }
//! # // A doctest is not built with cfg(test), so the test above is left out: run its body.
//! # fn main() {
//! #     let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
//! #     runtime.block_on(asks_for_the_weather_once()).unwrap();
//! # }
//! ```
//!
//! A failure prints, for instance:
//!
//! ```text
//! trajectory mismatch (agentevals strict, tool arguments exact): message 1: call weather({"city":"Rome"}) matches no expected call of this message
//!       expected                          | actual
//!    0  user "Weather in Paris?"          | user "Weather in Paris?"
//! >  1  model → weather({"city":"Paris"}) | model → weather({"city":"Rome"})
//! ```
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod cassette;
mod error;
pub mod evaluator;
mod matcher;
mod trajectory;

pub use error::TrajectoryError;
pub use matcher::{
    ArgsComparator, ArgsMatch, ArgsOverride, EvalStatus, InvocationResult, MatchMode, Mismatch,
    ToolTrajectory, ToolTrajectoryError, ToolTrajectoryMatch, ToolTrajectoryResult,
    TrajectoryMatch, TrajectoryMatcher, UnknownMatchType, UnknownMode,
};
pub use trajectory::{
    InterruptStep, ModelStep, Step, SubAgentStep, ToolCallStep, ToolResultStep, Trajectory,
    TrajectoryBuilder,
};
