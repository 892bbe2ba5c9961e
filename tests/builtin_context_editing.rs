//! `ContextEditing`: the rules of DESIGN §11, one test each, and a property test over random
//! histories (the request stays valid, the history keeps the originals).

mod support;

use hookchain::builtin::ConfigError;
use hookchain::builtin::ContextEditing;
use hookchain::builtin::context_editing::{CLEARED_ARGUMENTS_TAG, CLEARED_TAG};
use hookchain::builtin::tokens::{ApproximateCounter, TokenCounter};
use hookchain::message::validate_history;
use hookchain::prelude::*;
use hookchain::{Role, RunOutput};
use proptest::prelude::*;
use serde_json::json;
use support::{echo_tool, new_log};

mod capture;

fn agent(editing: ContextEditing) -> Agent<ScriptedModel, ContextEditing> {
    Agent::builder(ScriptedModel::from_rule(|_| {
        Ok(ModelResponse::text("answer"))
    }))
    .tool(echo_tool(&new_log()))
    .chain(editing)
    .build()
    .unwrap()
}

/// A question, then one call of `tool` per entry (id `c<n>`), each answered with a result.
fn history(tools: &[&str]) -> Vec<Message> {
    let mut messages = vec![Message::user("research this")];
    for (n, tool) in tools.iter().enumerate() {
        let id = format!("c{n}");
        messages.push(Message::assistant_with_tool_calls(
            "",
            [ToolCall::new(&id, *tool, json!({ "q": n }))],
        ));
        messages.push(
            Message::tool(ToolResult::ok(&id, format!("result {n} ").repeat(20))).with_name(*tool),
        );
    }
    messages
}

fn tokens(messages: &[Message]) -> u64 {
    ApproximateCounter::new().count_messages(messages)
}

/// The ids of the results the model read as cleared, in order.
fn cleared(sent: &[Message]) -> Vec<String> {
    sent.iter()
        .filter(|m| m.metadata.get(CLEARED_TAG) == Some(&json!(true)))
        .map(|m| m.tool_call_id.clone().unwrap())
        .collect()
}

async fn sent(editing: ContextEditing, input: Vec<Message>) -> (Vec<Message>, RunOutput) {
    let agent = agent(editing);
    let output = agent.run(input).await.unwrap();
    let sent = agent.model().requests()[0].messages.to_vec();
    (sent, output)
}

#[tokio::test]
async fn it_clears_when_the_request_reaches_the_trigger_not_below() {
    let input = history(&["search", "search", "search"]);
    let at = tokens(&input);
    for (trigger, clears) in [(at, true), (at + 1, false)] {
        let editing = ContextEditing::builder()
            .trigger_tokens(trigger)
            .keep(1)
            .build()
            .unwrap();
        let (sent, _) = sent(editing, input.clone()).await;
        assert_eq!(
            !cleared(&sent).is_empty(),
            clears,
            "trigger {trigger} of {at}"
        );
    }
}

#[tokio::test]
async fn the_last_results_are_kept_and_the_older_ones_cleared() {
    let input = history(&["search", "search", "search", "search"]);
    let editing = ContextEditing::builder()
        .trigger_tokens(1)
        .keep(2)
        .build()
        .unwrap();
    let (sent, _) = sent(editing, input.clone()).await;
    assert_eq!(cleared(&sent), ["c0", "c1"]);
    assert_eq!(sent[6], input[6]);
    assert_eq!(sent[8], input[8]);
    // Keeping as many as there are: nothing is cleared.
    let editing = ContextEditing::builder()
        .trigger_tokens(1)
        .keep(4)
        .build()
        .unwrap();
    let (sent, _) = self::sent(editing, input.clone()).await;
    assert!(cleared(&sent).is_empty());
}

#[tokio::test]
async fn the_results_of_excluded_tools_are_never_cleared() {
    let input = history(&["memory", "search", "memory", "search"]);
    let editing = ContextEditing::builder()
        .trigger_tokens(1)
        .keep(1)
        .exclude_tool("memory")
        .build()
        .unwrap();
    let (sent, _) = sent(editing, input.clone()).await;
    // c3 is the last (kept); of c0..c2, the `memory` ones stay.
    assert_eq!(cleared(&sent), ["c1"]);
    assert_eq!(sent[2], input[2]);
    assert_eq!(sent[6], input[6]);
}

#[tokio::test]
async fn a_cleared_result_reads_the_placeholder_carries_the_tag_and_still_answers_its_call() {
    let mut input = history(&["search", "search"]);
    input[2].is_error = true;
    let editing = ContextEditing::builder()
        .trigger_tokens(1)
        .keep(1)
        .placeholder("[old result removed]")
        .build()
        .unwrap();
    let (sent, _) = sent(editing, input.clone()).await;
    let result = &sent[2];
    assert_eq!(result.text(), "[old result removed]");
    assert_eq!(result.metadata.get(CLEARED_TAG), Some(&json!(true)));
    assert_eq!(result.tool_call_id.as_deref(), Some("c0"));
    assert!(result.is_error);
    assert_eq!(result.role, Role::Tool);
    // The call keeps its arguments unless told otherwise.
    assert_eq!(sent[1], input[1]);
    validate_history(&sent).unwrap();
}

#[tokio::test]
async fn with_clear_arguments_the_calls_arguments_go_too() {
    let input = history(&["search", "search"]);
    let editing = ContextEditing::builder()
        .trigger_tokens(1)
        .keep(1)
        .clear_arguments(true)
        .build()
        .unwrap();
    let (sent, _) = sent(editing, input.clone()).await;
    assert_eq!(sent[1].tool_calls[0].arguments, json!({}));
    assert_eq!(sent[1].tool_calls[0].id, "c0");
    assert_eq!(
        sent[1].metadata.get(CLEARED_ARGUMENTS_TAG),
        Some(&json!(["c0"]))
    );
    // The kept result's call keeps its arguments.
    assert_eq!(sent[3], input[3]);
}

#[tokio::test]
async fn the_model_sees_the_edited_view_and_the_history_keeps_the_originals() {
    let input = history(&["search", "search", "search"]);
    let editing = ContextEditing::builder()
        .trigger_tokens(1)
        .keep(1)
        .clear_arguments(true)
        .build()
        .unwrap();
    let agent = agent(editing);
    let mut thread = agent.thread();
    agent.run_in(&mut thread, input.clone()).await.unwrap();
    assert_eq!(cleared(&agent.model().requests()[0].messages), ["c0", "c1"]);
    assert_eq!(thread.messages()[..input.len()], input[..]);
    // The next run clears again from the originals.
    agent.run_in(&mut thread, "more").await.unwrap();
    assert_eq!(cleared(&agent.model().requests()[1].messages), ["c0", "c1"]);
    assert_eq!(thread.messages()[..input.len()], input[..]);
}

#[test]
fn a_clearing_is_traced_with_the_tokens_before_and_after() {
    let input = history(&["search", "search"]);
    let editing = ContextEditing::builder()
        .trigger_tokens(1)
        .keep(1)
        .build()
        .unwrap();
    let agent = agent(editing);
    let (_, captured) = capture::traced(|| futures::executor::block_on(agent.run(input)).unwrap());
    let event = captured
        .events
        .iter()
        .find(|event| event.message == "older tool results cleared from the request")
        .expect("an event");
    assert_eq!(event.fields.get("cleared").map(String::as_str), Some("1"));
    let before: u64 = event.fields["tokens_before"].parse().unwrap();
    let after: u64 = event.fields["tokens_after"].parse().unwrap();
    assert!(after < before, "{event:?}");
}

#[test]
fn settings_that_cannot_work_are_errors_naming_the_field() {
    let field = |result: Result<ContextEditing, ConfigError>| result.unwrap_err().field();
    assert_eq!(
        field(ContextEditing::builder().trigger_tokens(0).build()),
        "trigger_tokens"
    );
    assert_eq!(
        field(ContextEditing::builder().placeholder(" ").build()),
        "placeholder"
    );
    assert_eq!(
        field(ContextEditing::builder().exclude_tool("").build()),
        "exclude_tool"
    );
    assert!(ContextEditing::builder().build().is_ok());
}

// ---- The property: any history with parallel calls, any keep, any exclusion ----

/// One step of a random history: a user message, or an assistant calling 1-3 tools (each
/// `search` or `memory`) followed by their results in any order.
fn step() -> impl Strategy<Value = Option<Vec<(bool, usize)>>> {
    prop_oneof![
        Just(None),
        proptest::collection::vec((any::<bool>(), 1..50_usize), 1..=3)
            .prop_shuffle()
            .prop_map(Some),
    ]
}

fn random_history(steps: &[Option<Vec<(bool, usize)>>]) -> Vec<Message> {
    let mut messages = vec![Message::user("start")];
    for (n, step) in steps.iter().enumerate() {
        match step {
            None => messages.push(Message::user(format!("user {n}"))),
            Some(calls) => {
                let ids: Vec<String> = (0..calls.len()).map(|k| format!("c{n}_{k}")).collect();
                messages.push(Message::assistant_with_tool_calls(
                    "",
                    calls.iter().zip(&ids).map(|(&(memory, _), id)| {
                        ToolCall::new(
                            id,
                            if memory { "memory" } else { "search" },
                            json!({ "id": id }),
                        )
                    }),
                ));
                for (&(_, len), id) in calls.iter().zip(&ids).rev() {
                    messages.push(Message::tool(ToolResult::ok(id, "r".repeat(len))));
                }
            }
        }
    }
    messages
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_request_stays_valid_and_only_older_results_of_clearable_tools_change(
        steps in proptest::collection::vec(step(), 0..20),
        keep in 0..8_usize,
        exclude_memory in any::<bool>(),
        clear_arguments in any::<bool>(),
        trigger in 1..2000_u64,
    ) {
        let input = random_history(&steps);
        let mut builder = ContextEditing::builder()
            .trigger_tokens(trigger)
            .keep(keep)
            .clear_arguments(clear_arguments);
        if exclude_memory {
            builder = builder.exclude_tool("memory");
        }
        let agent = agent(builder.build().unwrap());
        let output = futures::executor::block_on(agent.run(input.clone())).unwrap();
        let sent = agent.model().requests()[0].messages.to_vec();
        prop_assert!(validate_history(&sent).is_ok());
        prop_assert_eq!(&output.messages[..input.len()], &input[..]);
        prop_assert_eq!(sent.len(), input.len());
        // Which results are to be cleared, told from the rules.
        let results: Vec<usize> = (0..input.len()).filter(|&i| input[i].role == Role::Tool).collect();
        let older = if tokens(&input) >= trigger { results.len().saturating_sub(keep) } else { 0 };
        let tool_of = |at: usize| {
            let id = input[at].tool_call_id.as_deref().unwrap();
            input.iter().flat_map(|m| &m.tool_calls).find(|c| c.id == id).unwrap().name.clone()
        };
        let expected: Vec<String> = results[..older]
            .iter()
            .filter(|&&at| !(exclude_memory && tool_of(at) == "memory"))
            .map(|&at| input[at].tool_call_id.clone().unwrap())
            .collect();
        prop_assert_eq!(cleared(&sent), expected.clone());
        for (at, (sent, original)) in sent.iter().zip(&input).enumerate() {
            let is_cleared = original.role == Role::Tool
                && expected.contains(original.tool_call_id.as_ref().unwrap());
            if is_cleared {
                prop_assert_eq!(sent.text(), "[cleared]");
            } else if original.role == Role::Tool || !clear_arguments {
                prop_assert_eq!(sent, original, "message {} changed", at);
            }
            for (call, original_call) in sent.tool_calls.iter().zip(&original.tool_calls) {
                let args_cleared = clear_arguments && expected.contains(&original_call.id);
                prop_assert_eq!(args_cleared, call.arguments != original_call.arguments);
            }
        }
    }
}
