//! `TokenBudget`: the rules of DESIGN §11, one test each.

mod support;

use hookchain::builtin::LimitExit;
use hookchain::builtin::LimitScope;
use hookchain::builtin::token_budget::{
    Amount, Budget, Measure, Pricing, ThreadUsage, TokenBudget, TokenBudgetExceeded,
};
use hookchain::message::validate_history;
use hookchain::prelude::*;
use hookchain::{EndReason, Role, Usage};
use support::{echo_call, echo_tool, middleware_error, new_log};

/// A model that always calls `echo`, each answer using `usage`.
fn looping_model(usage: Usage) -> ScriptedModel {
    ScriptedModel::from_rule(move |request| {
        let id = format!("c{}", request.messages.len());
        Ok(ModelResponse::tool_calls([echo_call(&id, "again")]).with_usage(usage))
    })
}

fn agent(model: ScriptedModel, budget: TokenBudget) -> Agent<ScriptedModel, TokenBudget> {
    Agent::builder(model)
        .tool(echo_tool(&new_log()))
        .chain(budget)
        .build()
        .unwrap()
}

#[tokio::test]
async fn the_run_budget_is_checked_before_a_call_against_the_usage_so_far() {
    let budget = TokenBudget::builder()
        .run(Budget::new().output_tokens(100))
        .build()
        .unwrap();
    let agent = agent(looping_model(Usage::new(10, 60)), budget);
    let output = agent.run("go").await.unwrap();
    // Before call 1: 0 < 100; before call 2: 60 < 100; before call 3: 120 >= 100.
    assert_eq!(output.model_calls, 2);
    assert_eq!(output.usage, Usage::new(20, 120));
    validate_history(&output.messages).unwrap();
}

#[tokio::test]
async fn exit_end_adds_an_assistant_message_naming_the_budget_and_the_use_then_ends() {
    let budget = TokenBudget::builder()
        .run(Budget::new().input_tokens(15))
        .build()
        .unwrap();
    let output = agent(looping_model(Usage::new(10, 1)), budget)
        .run("go")
        .await
        .unwrap();
    assert_eq!(output.end, EndReason::Jumped);
    assert_eq!(output.model_calls, 2);
    let last = output.messages.last().unwrap();
    assert_eq!(last.role, Role::Assistant);
    let text = last.text();
    assert!(text.contains("run input-token budget of 15"), "{text}");
    assert!(text.contains("20 used"), "{text}");
    validate_history(&output.messages).unwrap();
}

#[tokio::test]
async fn a_total_budget_counts_input_and_output_tokens() {
    let budget = TokenBudget::builder()
        .run(Budget::new().total_tokens(30))
        .build()
        .unwrap();
    let output = agent(looping_model(Usage::new(10, 5)), budget)
        .run("go")
        .await
        .unwrap();
    // 0, 15 < 30; 30 >= 30.
    assert_eq!(output.model_calls, 2);
    assert!(output.text().unwrap().contains("run token budget of 30"));
}

#[tokio::test]
async fn a_cost_budget_prices_the_tokens() {
    // $1 per million input tokens, $10 per million output tokens: a call costs
    // (100_000 + 10 * 20_000) / 1e6 = $0.30; the budget of $0.50 allows 2.
    let budget = TokenBudget::builder()
        .run(Budget::new().cost(0.5))
        .pricing(Pricing::per_million_tokens(1.0, 10.0))
        .build()
        .unwrap();
    let output = agent(looping_model(Usage::new(100_000, 20_000)), budget)
        .run("go")
        .await
        .unwrap();
    assert_eq!(output.model_calls, 2);
    let text = output.text().unwrap();
    assert!(text.contains("run cost budget of 0.5000"), "{text}");
    assert!(text.contains("0.6000 used"), "{text}");
}

#[tokio::test]
async fn exit_error_fails_the_run_naming_the_budget() {
    let budget = TokenBudget::builder()
        .run(Budget::new().output_tokens(5))
        .exit(LimitExit::Error)
        .build()
        .unwrap();
    let error = middleware_error(
        agent(looping_model(Usage::new(1, 5)), budget)
            .run("go")
            .await,
    );
    assert_eq!(error.middleware(), Some("TokenBudget"));
    let exceeded = error.inner().downcast_ref::<TokenBudgetExceeded>().unwrap();
    assert_eq!(exceeded.scope, LimitScope::Run);
    assert_eq!(exceeded.measure, Measure::OutputTokens);
    assert_eq!(exceeded.budget, Amount::Tokens(5));
    assert_eq!(exceeded.used, Amount::Tokens(5));
}

#[tokio::test]
async fn the_thread_budget_counts_every_run_of_the_thread() {
    let budget = TokenBudget::builder()
        .run(Budget::new().input_tokens(1_000))
        .thread(Budget::new().input_tokens(25))
        .build()
        .unwrap();
    let model =
        ScriptedModel::from_rule(|_| Ok(ModelResponse::text("ok").with_usage(Usage::new(10, 1))));
    let agent = Agent::builder(model).chain(budget).build().unwrap();
    let mut thread = agent.thread();
    let mut calls = Vec::new();
    for input in ["one", "two", "three", "four"] {
        let output = agent.run_in(&mut thread, input).await.unwrap();
        validate_history(&output.messages).unwrap();
        calls.push(output.model_calls);
    }
    // Before each run's call, the thread had used 0, 10, 20 (< 25), then 30.
    assert_eq!(calls, [1, 1, 1, 0]);
    assert_eq!(thread.state(), &ThreadUsage::new(30, 3));
    let last = thread.messages().last().unwrap().text().into_owned();
    assert!(last.contains("thread input-token budget of 25"), "{last}");
}

#[tokio::test]
async fn the_run_budget_starts_afresh_every_run() {
    let budget = TokenBudget::builder()
        .run(Budget::new().output_tokens(10))
        .build()
        .unwrap();
    let agent = agent(looping_model(Usage::new(1, 10)), budget);
    let mut thread = agent.thread();
    for input in ["one", "two"] {
        let output = agent.run_in(&mut thread, input).await.unwrap();
        assert_eq!(output.model_calls, 1);
    }
}

#[test]
fn settings_that_cannot_work_are_errors_naming_the_field() {
    let field = |builder: hookchain::builtin::token_budget::TokenBudgetBuilder| {
        builder.build().unwrap_err().field()
    };
    assert_eq!(field(TokenBudget::builder()), "run");
    assert_eq!(
        field(TokenBudget::builder().run(Budget::new().output_tokens(0))),
        "run.output_tokens"
    );
    assert_eq!(
        field(TokenBudget::builder().thread(Budget::new().total_tokens(0))),
        "thread.total_tokens"
    );
    assert_eq!(
        field(TokenBudget::builder().thread(Budget::new().cost(1.0))),
        "pricing"
    );
    assert_eq!(
        field(
            TokenBudget::builder()
                .run(Budget::new().cost(f64::NAN))
                .pricing(Pricing::per_million_tokens(1.0, 1.0))
        ),
        "run.cost"
    );
    assert_eq!(
        field(
            TokenBudget::builder()
                .run(Budget::new().cost(1.0))
                .pricing(Pricing::per_million_tokens(-1.0, 1.0))
        ),
        "pricing"
    );
}
