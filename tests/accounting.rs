//! Accounting at the moment of spending (DESIGN §13): a thread's spending is charged as each
//! model call answers, so a run given up while paused, or cancelled (its future dropped), still
//! counts against the thread's budgets — `Thread::spent`, `Context::thread_usage`, and
//! `TokenBudget`'s thread budget.

mod support;

use std::time::Duration;

use hookchain::builtin::LimitExit;
use hookchain::builtin::human_in_the_loop::{HumanInTheLoop, ToolPolicy};
use hookchain::builtin::token_budget::{Budget, TokenBudget};
use hookchain::prelude::*;
use hookchain::{EndReason, Thread, Usage, chain};
use serde_json::json;
use support::{EffectTool, Effects};

/// A thread budget of 100 output tokens, ending the run when used up.
fn budget() -> TokenBudget {
    TokenBudget::builder()
        .thread(Budget::new().output_tokens(100))
        .exit(LimitExit::End)
        .build()
        .unwrap()
}

/// The model answers with a call of `tool` that spent 100 output tokens, then "done".
fn model(tool: &str) -> ScriptedModel {
    ScriptedModel::new([
        ModelResponse::tool_calls([ToolCall::new("c1", tool, json!({}))])
            .with_usage(Usage::new(10, 100)),
        ModelResponse::text("done"),
    ])
}

/// A run of a fresh agent on `thread`, whose budget is spent: it ends before its model call.
async fn next_run_is_refused(thread: &mut Thread<<(TokenBudget,) as Middleware>::ThreadState>) {
    let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("more")]))
        .chain(chain![budget()])
        .build()
        .unwrap();
    let output = agent.run_in(thread, "again").await.unwrap();
    assert_eq!(output.end, EndReason::Jumped);
    assert!(
        agent.model().requests().is_empty(),
        "the spent budget let a model call through"
    );
}

/// "A thread's token budget forgot the tokens of a pause that was abandoned": charged at the
/// pause, kept when the pause is given up.
#[tokio::test]
async fn an_abandoned_pause_still_counts() {
    let ran = Effects::memory();
    let agent = Agent::builder(model("pay"))
        .tool(EffectTool {
            name: "pay",
            effects: ran.clone(),
            hang: false,
        })
        .chain(chain![
            budget(),
            HumanInTheLoop::new().interrupt_on("pay", ToolPolicy::always())
        ])
        .build()
        .unwrap();
    let mut thread = agent.thread();
    let paused = agent.run_in(&mut thread, "pay").await.unwrap();
    assert_eq!(paused.end, EndReason::Interrupted);
    assert_eq!(thread.spent(), Usage::new(10, 100));
    assert!(thread.abandon_pause());
    assert_eq!(thread.spent(), Usage::new(10, 100));

    // The thread's next run, on a chain of the budget alone (its state carried over).
    let stored = serde_json::to_value(&thread).unwrap();
    let next = Agent::builder(ScriptedModel::new([ModelResponse::text("more")]))
        .chain(chain![budget()])
        .build()
        .unwrap();
    let mut thread = next
        .adopt_thread(serde_json::from_value(stored).unwrap())
        .unwrap();
    next_run_is_refused(&mut thread).await;
    assert!(ran.lines().is_empty());
}

/// A run whose future is dropped leaves its thread as it was — but for what it spent.
#[tokio::test(start_paused = true)]
async fn a_cancelled_run_still_counts() {
    let ran = Effects::memory();
    let agent = Agent::builder(model("slow"))
        .tool(EffectTool {
            name: "slow",
            effects: ran.clone(),
            hang: true,
        })
        .chain(chain![budget()])
        .build()
        .unwrap();
    let mut thread = agent.thread();
    let cancelled =
        tokio::time::timeout(Duration::from_secs(5), agent.run_in(&mut thread, "go")).await;
    assert!(cancelled.is_err(), "the run was cancelled");
    assert!(thread.messages().is_empty(), "the history is as it was");
    assert_eq!(
        thread.spent(),
        Usage::new(10, 100),
        "what it spent is charged"
    );
    next_run_is_refused(&mut thread).await;
}

/// The ledger is the thread's every run's spending; a run outside a thread has none.
#[tokio::test]
async fn the_ledger_sums_the_threads_runs() {
    let agent = Agent::builder(ScriptedModel::new([
        ModelResponse::text("one").with_usage(Usage::new(1, 2)),
        ModelResponse::text("two").with_usage(Usage::new(3, 4)),
        ModelResponse::text("three").with_usage(Usage::new(5, 6)),
    ]))
    .build()
    .unwrap();
    let mut thread = agent.thread();
    agent.run_in(&mut thread, "a").await.unwrap();
    agent.run_in(&mut thread, "b").await.unwrap();
    assert_eq!(thread.spent(), Usage::new(4, 6));
    let stored: Thread<()> =
        serde_json::from_str(&serde_json::to_string(&thread).unwrap()).unwrap();
    assert_eq!(stored.spent(), Usage::new(4, 6));
    let outside = agent.run("c").await.unwrap();
    assert_eq!(outside.usage, Usage::new(5, 6));
}

/// A call whose provider reported no usage is counted as unknown, never as 0 tokens: the run's
/// and the thread's totals say they are a lower bound.
#[tokio::test]
async fn a_call_without_usage_makes_the_totals_unknown_not_lower() {
    let agent = Agent::builder(ScriptedModel::new([
        ModelResponse::tool_calls([ToolCall::new("c1", "missing", json!({}))])
            .with_usage(Usage::new(10, 5)),
        ModelResponse::text("done").with_usage(Usage::unreported()),
    ]))
    .build()
    .unwrap();
    let mut thread = agent.thread();
    let output = agent.run_in(&mut thread, "hi").await.unwrap();
    assert_eq!(output.usage.input_tokens, 10);
    assert_eq!(output.usage.unreported_calls, 1);
    assert!(!output.usage.is_known());
    assert_eq!(thread.spent(), output.usage);
    // Known usage stays known.
    assert!(Usage::new(10, 5).is_known());
    assert!((Usage::new(1, 1) + Usage::unreported()).unreported_calls == 1);
}
