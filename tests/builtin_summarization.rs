//! `Summarization`: the rules of DESIGN §11, one test each, and a property test over random
//! histories (any trigger, any keep: the cut never separates a call from its results).

mod support;

use std::sync::{Arc, Mutex};

use hookchain::builtin::ConfigError;
use hookchain::builtin::Summarization;
use hookchain::builtin::summarization::{
    DEFAULT_PREFIX, Keep, OnFailure, SUMMARY_TAG, SummarizationFailed, Summarized, Trigger,
    is_summary,
};
use hookchain::builtin::tokens::{ApproximateCounter, ModelProfile, TokenCounter};
use hookchain::message::validate_history;
use hookchain::prelude::*;
use hookchain::{ModelError, Role, RunOutput, Usage};
use proptest::prelude::*;
use serde_json::json;
use support::{assert_no_dangling, echo_call, echo_tool, middleware_error, new_log};

mod capture;

const SUMMARY: &str = "SUMMARY";

/// A summarizer that always answers [`SUMMARY`], using 50 input and 7 output tokens.
fn summarizer() -> ScriptedModel {
    ScriptedModel::from_rule(|_| Ok(ModelResponse::text(SUMMARY).with_usage(Usage::new(50, 7))))
}

/// The main model: answers "answer" to every call.
fn main_model() -> ScriptedModel {
    ScriptedModel::from_rule(|_| Ok(ModelResponse::text("answer")))
}

type Agent1 = Agent<ScriptedModel, Summarization<ScriptedModel>>;

fn agent(summarization: Summarization<ScriptedModel>) -> Agent1 {
    Agent::builder(main_model())
        .tool(echo_tool(&new_log()))
        .chain(summarization)
        .build()
        .unwrap()
}

/// `n` messages alternating user / assistant, numbered, starting with a user message.
fn chat(n: usize) -> Vec<Message> {
    (0..n)
        .map(|i| {
            if i % 2 == 0 {
                Message::user(format!("question {i}"))
            } else {
                Message::assistant(format!("answer {i}"))
            }
        })
        .collect()
}

fn calls(ids: &[&str]) -> Message {
    Message::assistant_with_tool_calls("", ids.iter().map(|id| echo_call(id, id)))
}

fn result(id: &str) -> Message {
    Message::tool(ToolResult::ok(id, format!("result {id}"))).with_name("echo")
}

fn tokens(messages: &[Message]) -> u64 {
    ApproximateCounter::new().count_messages(messages)
}

/// Whether the run summarized (its summarizer was called and the history starts with a
/// summary).
fn summarized(agent: &Agent1, output: &RunOutput) -> bool {
    let called = agent.chain().model().calls() > 0;
    assert_eq!(called, output.messages.iter().any(is_summary));
    called
}

#[tokio::test]
async fn a_token_trigger_fires_when_the_history_reaches_it_not_below() {
    let history = chat(6);
    let at = tokens(&history);
    for (bound, fires) in [(at, true), (at + 1, false)] {
        let summarization = Summarization::builder(summarizer())
            .trigger(Trigger::tokens(bound))
            .keep(Keep::Messages(2))
            .build()
            .unwrap();
        let agent = agent(summarization);
        let output = agent.run(history.clone()).await.unwrap();
        assert_eq!(summarized(&agent, &output), fires, "bound {bound} of {at}");
    }
}

#[tokio::test]
async fn a_message_trigger_fires_when_the_history_reaches_it_not_below() {
    for (len, fires) in [(5, true), (4, false)] {
        let summarization = Summarization::builder(summarizer())
            .trigger(Trigger::messages(5))
            .keep(Keep::Messages(1))
            .build()
            .unwrap();
        let agent = agent(summarization);
        let output = agent.run(chat(len)).await.unwrap();
        assert_eq!(summarized(&agent, &output), fires, "{len} messages");
    }
}

#[tokio::test]
async fn a_fraction_trigger_is_a_share_of_the_profiles_context_window() {
    let history = chat(6);
    let at = tokens(&history);
    // Half of a window of 2 × `at` tokens is `at`: reached. Of 2 × `at` + 2, it is not.
    for (window, fires) in [(2 * at, true), (2 * at + 2, false)] {
        let summarization = Summarization::builder(summarizer())
            .trigger(Trigger::fraction(0.5))
            .profile(ModelProfile::new(window))
            .keep(Keep::Messages(2))
            .build()
            .unwrap();
        let agent = agent(summarization);
        let output = agent.run(history.clone()).await.unwrap();
        assert_eq!(summarized(&agent, &output), fires, "window {window}");
    }
}

#[tokio::test]
async fn triggers_in_a_list_are_alternatives_and_the_bounds_of_one_must_all_hold() {
    let history = chat(6);
    let at = tokens(&history);
    let case = |triggers: Vec<Trigger>| {
        let mut builder = Summarization::builder(summarizer()).keep(Keep::Messages(2));
        for trigger in triggers {
            builder = builder.trigger(trigger);
        }
        agent(builder.build().unwrap())
    };
    // One clause: 6 messages and `at` tokens both reached; then one bound missed.
    let both = case(vec![Trigger::messages(6).and_tokens(at)]);
    let output = both.run(history.clone()).await.unwrap();
    assert!(summarized(&both, &output));
    let one_missed = case(vec![Trigger::messages(6).and_tokens(at + 1)]);
    let output = one_missed.run(history.clone()).await.unwrap();
    assert!(!summarized(&one_missed, &output));
    // A list: the first is missed, the second is reached.
    let either = case(vec![Trigger::messages(7), Trigger::tokens(at)]);
    let output = either.run(history.clone()).await.unwrap();
    assert!(summarized(&either, &output));
}

#[tokio::test]
async fn keep_messages_keeps_the_last_messages_and_the_summary_takes_the_others_place() {
    let history = chat(7);
    let summarization = Summarization::builder(summarizer())
        .trigger(Trigger::messages(7))
        .keep(Keep::Messages(3))
        .build()
        .unwrap();
    let agent = agent(summarization);
    let output = agent.run(history.clone()).await.unwrap();
    // summary, the last 3 messages, the answer.
    assert_eq!(output.messages.len(), 5);
    assert_eq!(output.messages[1..4], history[4..]);
}

#[tokio::test]
async fn keep_tokens_keeps_the_recent_messages_that_fit() {
    let history = chat(7);
    // Exactly the last three fit.
    let budget = tokens(&history[4..]);
    let summarization = Summarization::builder(summarizer())
        .trigger(Trigger::messages(1))
        .keep(Keep::Tokens(budget))
        .build()
        .unwrap();
    let agent = agent(summarization);
    let output = agent.run(history.clone()).await.unwrap();
    assert_eq!(output.messages[1..4], history[4..]);
    assert_eq!(output.messages.len(), 5);
}

#[tokio::test]
async fn keep_fraction_keeps_what_fits_in_a_share_of_the_context_window() {
    let history = chat(7);
    let budget = tokens(&history[4..]);
    let summarization = Summarization::builder(summarizer())
        .trigger(Trigger::messages(1))
        .keep(Keep::Fraction(0.25))
        .profile(ModelProfile::new(4 * budget + 3))
        .build()
        .unwrap();
    let agent = agent(summarization);
    let output = agent.run(history.clone()).await.unwrap();
    assert_eq!(output.messages[1..4], history[4..]);
}

#[tokio::test]
async fn the_cut_never_separates_an_assistants_tool_calls_from_their_results() {
    // The last 3 messages would begin at the second result of a parallel call: the kept
    // part moves back to the assistant message, so the whole group is kept.
    let history = vec![
        Message::user("go"),
        Message::assistant("first"),
        Message::user("again"),
        calls(&["a", "b", "c"]),
        result("a"),
        result("b"),
        result("c"),
    ];
    let summarization = Summarization::builder(summarizer())
        .trigger(Trigger::messages(1))
        .keep(Keep::Messages(2))
        .build()
        .unwrap();
    let agent = agent(summarization);
    let output = agent.run(history.clone()).await.unwrap();
    assert!(is_summary(&output.messages[0]));
    assert_eq!(output.messages[1..5], history[3..]);
    validate_history(&output.messages).unwrap();
    validate_history(&agent.model().requests()[0].messages).unwrap();
    // With a token bound that only the last result would fit in, the whole group is kept.
    let summarization = Summarization::builder(summarizer())
        .trigger(Trigger::messages(1))
        .keep(Keep::Tokens(1))
        .build()
        .unwrap();
    let agent = self::agent(summarization);
    let output = agent.run(history.clone()).await.unwrap();
    assert_eq!(output.messages[1..5], history[3..]);
}

#[tokio::test]
async fn the_summary_is_a_user_message_with_the_prefix_and_the_summary_tag() {
    let summarization = Summarization::builder(summarizer())
        .trigger(Trigger::messages(4))
        .keep(Keep::Messages(1))
        .build()
        .unwrap();
    let agent = agent(summarization);
    let output = agent.run(chat(5)).await.unwrap();
    let summary = &output.messages[0];
    assert_eq!(summary.role, Role::User);
    assert_eq!(summary.text(), format!("{DEFAULT_PREFIX}{SUMMARY}"));
    assert_eq!(summary.metadata.get(SUMMARY_TAG), Some(&json!(true)));
    // A prefix of one's own.
    let summarization = Summarization::builder(summarizer())
        .trigger(Trigger::messages(4))
        .keep(Keep::Messages(1))
        .summary_prefix("Earlier: ")
        .build()
        .unwrap();
    let output = self::agent(summarization).run(chat(5)).await.unwrap();
    assert_eq!(output.messages[0].text(), "Earlier: SUMMARY");
}

#[tokio::test]
async fn the_model_call_that_triggered_it_already_reads_the_summary() {
    let summarization = Summarization::builder(summarizer())
        .trigger(Trigger::messages(4))
        .keep(Keep::Messages(1))
        .build()
        .unwrap();
    let agent = agent(summarization);
    let output = agent.run(chat(5)).await.unwrap();
    let sent = &agent.model().requests()[0].messages;
    assert_eq!(sent.len(), 2);
    assert!(is_summary(&sent[0]));
    assert_eq!(sent[1].text(), "question 4");
    assert_eq!(output.text().as_deref(), Some("answer"));
}

#[tokio::test]
async fn an_earlier_hooks_request_edit_is_kept_when_the_request_is_summarized() {
    use hookchain::builtin::ContextEditing;
    use hookchain::builtin::context_editing::CLEARED_TAG;
    // ContextEditing first: it clears the first result in the request; the summary then
    // replaces the same messages in that edited request, and the clearing of the kept
    // results stays.
    let history = vec![
        Message::user("go"),
        calls(&["a"]),
        result("a"),
        calls(&["b"]),
        result("b"),
        calls(&["c"]),
        result("c"),
    ];
    let editing = ContextEditing::builder()
        .trigger_tokens(1)
        .keep(1)
        .build()
        .unwrap();
    let summarization = Summarization::builder(summarizer())
        .trigger(Trigger::messages(7))
        .keep(Keep::Messages(4))
        .build()
        .unwrap();
    let agent = Agent::builder(main_model())
        .chain(hookchain::chain![editing, summarization])
        .build()
        .unwrap();
    let output = agent.run(history.clone()).await.unwrap();
    let sent = &agent.model().requests()[0].messages;
    assert!(is_summary(&sent[0]));
    assert_eq!(sent.len(), 5);
    assert_eq!(
        sent[2].metadata.get(CLEARED_TAG),
        Some(&json!(true)),
        "{sent:#?}"
    );
    assert_eq!(sent[4].text(), "result c");
    // The history has the summary and the originals.
    assert_eq!(output.messages[1..5], history[3..]);
}

/// Adds a message to every request: a request that no longer lines up with the history.
#[hookchain::hook(before_model)]
fn add_note(request: &mut ModelRequest) {
    request.messages.push(Message::user("note"));
}

#[tokio::test]
async fn a_request_an_earlier_hook_reshaped_is_sent_as_it_is_and_the_history_is_summarized() {
    let summarization = Summarization::builder(summarizer())
        .trigger(Trigger::messages(4))
        .keep(Keep::Messages(1))
        .build()
        .unwrap();
    let agent = Agent::builder(main_model())
        .chain(hookchain::chain![add_note, summarization])
        .build()
        .unwrap();
    let history = chat(5);
    let output = agent.run(history.clone()).await.unwrap();
    let sent = &agent.model().requests()[0].messages;
    assert_eq!(sent[..5], history[..]);
    assert_eq!(sent[5].text(), "note");
    assert!(is_summary(&output.messages[0]));
    assert_eq!(output.messages.len(), 3);
}

#[tokio::test]
async fn the_removed_messages_are_handed_to_the_application_in_order() {
    let seen: Arc<Mutex<Vec<Summarized>>> = Arc::default();
    let sink = seen.clone();
    let history = chat(5);
    let summarization = Summarization::builder(summarizer())
        .trigger(Trigger::messages(4))
        .keep(Keep::Messages(1))
        .on_summarize(move |summarized| sink.lock().unwrap().push(summarized))
        .build()
        .unwrap();
    let agent = agent(summarization);
    let output = agent.run(history.clone()).await.unwrap();
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].removed, history[..4]);
    assert_eq!(seen[0].summary, output.messages[0]);
    assert_eq!(seen[0].tokens_before, tokens(&history));
    assert_eq!(seen[0].tokens_after, tokens(&output.messages[..2]));
    // The summarizer's tokens are reported apart from the run's.
    assert_eq!(seen[0].usage, Usage::new(50, 7));
    assert_eq!(output.usage, Usage::default());
}

#[tokio::test]
async fn the_summarizer_reads_the_removed_messages_and_an_earlier_summary_as_a_transcript() {
    let earlier = Message::user(format!("{DEFAULT_PREFIX}the user is Ada"))
        .with_metadata(SUMMARY_TAG, json!(true));
    let history = vec![
        earlier,
        Message::user("weather?"),
        calls(&["w1"]),
        result("w1"),
        Message::assistant("sunny"),
        Message::user("thanks"),
    ];
    let summarization = Summarization::builder(summarizer())
        .trigger(Trigger::messages(6))
        .keep(Keep::Messages(1))
        .prompt("Summarize.")
        .max_summary_tokens(200)
        .build()
        .unwrap();
    let agent = agent(summarization);
    agent.run(history).await.unwrap();
    let request = &agent.chain().model().requests()[0];
    assert_eq!(request.system_prompt.as_deref(), Some("Summarize."));
    assert_eq!(request.settings.max_tokens, Some(200));
    let transcript = request.messages[0].text();
    for part in [
        "Summary of what came before: Here is a summary",
        "the user is Ada",
        "User: weather?",
        "[called `echo` with {\"text\":\"w1\"}]",
        "Tool result of `echo`: result w1",
        "Assistant: sunny",
    ] {
        assert!(transcript.contains(part), "{part:?} not in {transcript}");
    }
    assert!(!transcript.contains("thanks"));
}

#[test]
fn a_failing_summarizer_leaves_the_history_as_it_was_and_warns() {
    let failing = ScriptedModel::from_rule(|_| Err(ModelError::overloaded("busy")));
    let summarization = Summarization::builder(failing)
        .trigger(Trigger::messages(4))
        .keep(Keep::Messages(1))
        .build()
        .unwrap();
    let agent = agent(summarization);
    let history = chat(5);
    let (output, captured) =
        capture::traced(|| futures::executor::block_on(agent.run(history.clone())).unwrap());
    assert_eq!(output.messages[..5], history[..]);
    assert_eq!(agent.model().requests()[0].messages[..], history[..]);
    let warning = captured
        .events
        .iter()
        .find(|event| event.level == tracing::Level::WARN)
        .expect("a warning");
    assert!(warning.message.contains("summarizer failed"), "{warning:?}");
    // The full error, the model's cause included, goes to the application's logs.
    assert!(warning.fields["error"].contains("busy"), "{warning:?}");
}

#[tokio::test]
async fn an_empty_summary_is_a_failure_too() {
    let empty = ScriptedModel::from_rule(|_| Ok(ModelResponse::text("  ")));
    let summarization = Summarization::builder(empty)
        .trigger(Trigger::messages(4))
        .keep(Keep::Messages(1))
        .on_failure(OnFailure::Error)
        .build()
        .unwrap();
    let error = middleware_error(agent_of(summarization).run(chat(5)).await);
    let failed = error.inner().downcast_ref::<SummarizationFailed>().unwrap();
    assert!(matches!(failed, SummarizationFailed::Empty));
}

fn agent_of(summarization: Summarization<ScriptedModel>) -> Agent1 {
    agent(summarization)
}

#[tokio::test]
async fn configured_to_fail_a_failing_summarizer_fails_the_run_naming_summarization() {
    let failing = ScriptedModel::from_rule(|_| Err(ModelError::overloaded("busy")));
    let summarization = Summarization::builder(failing)
        .trigger(Trigger::messages(4))
        .keep(Keep::Messages(1))
        .on_failure(OnFailure::Error)
        .build()
        .unwrap();
    let agent = agent(summarization);
    let error = middleware_error(agent.run(chat(5)).await);
    assert_eq!(error.middleware(), Some("Summarization"));
    assert_eq!(error.hook(), Some(Hook::BeforeModel));
    let failed = error.inner().downcast_ref::<SummarizationFailed>().unwrap();
    assert!(matches!(failed, SummarizationFailed::Model(_)));
    assert_eq!(agent.model().calls(), 0);
}

#[test]
fn the_summarizer_call_runs_in_a_summarize_span_holding_a_chat_span() {
    let summarization = Summarization::builder(summarizer())
        .trigger(Trigger::messages(4))
        .keep(Keep::Messages(1))
        .build()
        .unwrap();
    let agent = agent(summarization);
    let (_, captured) =
        capture::traced(|| futures::executor::block_on(agent.run(chat(5))).unwrap());
    let summarize = captured
        .spans
        .iter()
        .position(|span| span.name == "summarize")
        .expect("a summarize span");
    let chat = &captured.spans[summarize + 1];
    assert_eq!(chat.name, "chat");
    assert_eq!(chat.parent, Some(summarize));
    assert_eq!(
        captured.spans[summarize]
            .fields
            .get("hookchain.summarize.messages"),
        Some(&"4".to_owned())
    );
    // The summarize span sits in the run's span.
    let parent = captured.spans[summarize].parent.expect("a parent");
    assert_eq!(captured.spans[parent].name, "invoke_agent");
    assert!(
        captured
            .events
            .iter()
            .any(|event| event.message == "history summarized")
    );
}

#[tokio::test]
async fn in_a_thread_the_summary_replaces_earlier_runs_and_the_next_run_starts_from_it() {
    let summarization = Summarization::builder(summarizer())
        .trigger(Trigger::messages(6))
        .keep(Keep::Messages(2))
        .build()
        .unwrap();
    let agent = agent(summarization);
    let mut thread = agent.thread();
    for turn in 0..3 {
        let output = agent
            .run_in(&mut thread, format!("turn {turn}"))
            .await
            .unwrap();
        // The run's answer is found even when the summary took in earlier runs.
        assert_eq!(output.text().as_deref(), Some("answer"));
    }
    // Runs 1-2 made 4 messages; run 3 reached 5 before its model call: below 6. A 4th run
    // reaches 7 messages: summarized, keeping its last 2 (answer 3, turn 3).
    let output = agent.run_in(&mut thread, "turn 3").await.unwrap();
    assert_eq!(output.text().as_deref(), Some("answer"));
    let messages = thread.messages();
    assert!(is_summary(&messages[0]), "{messages:#?}");
    assert_eq!(messages.len(), 4);
    assert_eq!(messages[1].text(), "answer");
    assert_eq!(messages[2].text(), "turn 3");
    let output = agent.run_in(&mut thread, "turn 4").await.unwrap();
    assert_eq!(output.text().as_deref(), Some("answer"));
    assert!(is_summary(&thread.messages()[0]));
}

#[tokio::test]
async fn a_summary_in_the_middle_of_a_run_keeps_the_run_going_with_valid_histories() {
    // The model makes two parallel `echo` calls 6 times, then answers; the history is
    // summarized whenever it reaches 5 messages.
    let steps = std::sync::atomic::AtomicUsize::new(0);
    let model = ScriptedModel::from_rule(move |_| {
        let step = steps.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Ok(if step < 6 {
            let (a, b) = (format!("a{step}"), format!("b{step}"));
            ModelResponse::tool_calls([echo_call(&a, "x"), echo_call(&b, "y")])
        } else {
            ModelResponse::text("done")
        })
    });
    let summarization = Summarization::builder(summarizer())
        .trigger(Trigger::messages(5))
        .keep(Keep::Messages(2))
        .build()
        .unwrap();
    let agent = Agent::builder(model)
        .tool(echo_tool(&new_log()))
        .chain(summarization)
        .max_steps(20)
        .build()
        .unwrap();
    let output = agent.run("go").await.unwrap();
    assert_eq!(output.text().as_deref(), Some("done"));
    assert!(
        agent.chain().model().calls() >= 3,
        "summarized every few steps"
    );
    validate_history(&output.messages).unwrap();
    assert_no_dangling(&output.messages);
    for request in agent.model().requests() {
        validate_history(&request.messages).unwrap();
    }
}

#[test]
fn settings_that_cannot_work_are_errors_naming_the_field() {
    let field = |result: Result<Summarization<ScriptedModel>, ConfigError>| {
        result.map(|_| ()).unwrap_err().field()
    };
    let builder = || Summarization::builder(summarizer());
    assert_eq!(field(builder().build()), "trigger");
    assert_eq!(
        field(builder().trigger(Trigger::default()).build()),
        "trigger"
    );
    assert_eq!(
        field(builder().trigger(Trigger::tokens(0)).build()),
        "trigger"
    );
    assert_eq!(
        field(builder().trigger(Trigger::messages(0)).build()),
        "trigger"
    );
    assert_eq!(
        field(builder().trigger(Trigger::fraction(0.5)).build()),
        "profile"
    );
    let profiled = || builder().profile(ModelProfile::new(1000));
    assert_eq!(
        field(profiled().trigger(Trigger::fraction(1.5)).build()),
        "trigger"
    );
    assert_eq!(
        field(profiled().trigger(Trigger::fraction(0.0)).build()),
        "trigger"
    );
    assert_eq!(
        field(profiled().trigger(Trigger::fraction(f64::NAN)).build()),
        "trigger"
    );
    let triggered = || builder().trigger(Trigger::messages(10));
    assert_eq!(field(triggered().keep(Keep::Messages(0)).build()), "keep");
    assert_eq!(field(triggered().keep(Keep::Tokens(0)).build()), "keep");
    assert_eq!(
        field(triggered().keep(Keep::Fraction(0.3)).build()),
        "profile"
    );
    assert_eq!(
        field(
            triggered()
                .profile(ModelProfile::new(0))
                .keep(Keep::Fraction(0.3))
                .build()
        ),
        "profile"
    );
    assert_eq!(field(triggered().prompt(" ").build()), "prompt");
    assert_eq!(
        field(triggered().max_summary_tokens(0).build()),
        "max_summary_tokens"
    );
    assert!(triggered().build().is_ok());
}

// ---- The property: any history, any trigger, any keep ----

/// One unit of a random history: a user message, an assistant answer, or an assistant
/// message calling 1-3 tools (parallel calls) followed by their results in any order.
#[derive(Debug, Clone)]
enum Unit {
    User(usize),
    Answer(usize),
    Calls { calls: usize, order: Vec<usize> },
}

fn unit() -> impl Strategy<Value = Unit> {
    prop_oneof![
        (1..200_usize).prop_map(Unit::User),
        (1..200_usize).prop_map(Unit::Answer),
        (1..=3_usize)
            .prop_flat_map(|calls| (
                Just(calls),
                Just((0..calls).collect::<Vec<_>>()).prop_shuffle()
            ))
            .prop_map(|(calls, order)| Unit::Calls { calls, order }),
    ]
}

fn history(units: &[Unit]) -> Vec<Message> {
    let mut messages = vec![Message::user("start")];
    for (n, unit) in units.iter().enumerate() {
        match unit {
            Unit::User(len) => messages.push(Message::user("u".repeat(*len))),
            Unit::Answer(len) => messages.push(Message::assistant("a".repeat(*len))),
            Unit::Calls { calls, order } => {
                let ids: Vec<String> = (0..*calls).map(|k| format!("c{n}_{k}")).collect();
                messages.push(Message::assistant_with_tool_calls(
                    "",
                    ids.iter().map(|id| echo_call(id, id)),
                ));
                for &k in order {
                    messages.push(
                        Message::tool(ToolResult::ok(&ids[k], "r".repeat(10 * (k + 1))))
                            .with_name("echo"),
                    );
                }
            }
        }
    }
    messages
}

fn any_trigger() -> impl Strategy<Value = Bounds> {
    prop_oneof![
        (1..3000_u64).prop_map(|t| (Some(t), None, None)),
        (1..40_usize).prop_map(|m| (None, Some(m), None)),
        (0.01..=1.0_f64).prop_map(|f| (None, None, Some(f))),
        (1..40_usize, 1..3000_u64, 0.01..=1.0_f64).prop_map(|(m, t, f)| (
            Some(t),
            Some(m),
            Some(f)
        )),
    ]
}

fn any_keep() -> impl Strategy<Value = Keep> {
    prop_oneof![
        (1..30_usize).prop_map(Keep::Messages),
        (1..3000_u64).prop_map(Keep::Tokens),
        (0.01..=1.0_f64).prop_map(Keep::Fraction),
    ]
}

/// Whether `input` is to be summarized, told from the rules in the simplest terms: a trigger
/// is reached (all its bounds, `>=`), and the kept part can begin at a message after the
/// first that is not a tool result, keeping what `keep` says.
fn expects_summary(
    input: &[Message],
    triggers: &[Bounds],
    keep: Keep,
    profile: ModelProfile,
) -> bool {
    let total = tokens(input);
    let reached = triggers
        .iter()
        .any(|&(tokens_at_least, messages_at_least, fraction)| {
            tokens_at_least.is_none_or(|bound| total >= bound)
                && messages_at_least.is_none_or(|bound| input.len() >= bound)
                && fraction.is_none_or(|f| total >= profile.tokens_at(f).max(1))
        });
    let starts: Vec<usize> = (1..input.len())
        .filter(|&i| input[i].role != Role::Tool)
        .collect();
    let room = match keep {
        Keep::Messages(n) => starts.iter().any(|&b| input.len() - b >= n),
        Keep::Tokens(t) => !starts.is_empty() && total > t,
        Keep::Fraction(f) => !starts.is_empty() && total > profile.tokens_at(f).max(1),
        _ => unreachable!("the strategies make no other keep"),
    };
    reached && room
}

/// A trigger's bounds: tokens `>=`, messages `>=`, fraction of the window `>=`.
type Bounds = (Option<u64>, Option<usize>, Option<f64>);

fn trigger_of((tokens, messages, fraction): Bounds) -> Trigger {
    let mut trigger = Trigger::default();
    if let Some(tokens) = tokens {
        trigger = trigger.and_tokens(tokens);
    }
    if let Some(messages) = messages {
        trigger = trigger.and_messages(messages);
    }
    if let Some(fraction) = fraction {
        trigger = trigger.and_fraction(fraction);
    }
    trigger
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_history_stays_valid_and_nothing_is_lost(
        units in proptest::collection::vec(unit(), 0..30),
        triggers in proptest::collection::vec(any_trigger(), 1..3),
        keep in any_keep(),
        window in 100..5000_u64,
    ) {
        let input = history(&units);
        validate_history(&input).unwrap();
        let seen: Arc<Mutex<Vec<Summarized>>> = Arc::default();
        let sink = seen.clone();
        let mut builder = Summarization::builder(summarizer())
            .keep(keep)
            .profile(ModelProfile::new(window))
            .on_summarize(move |summarized| sink.lock().unwrap().push(summarized));
        for &bounds in &triggers {
            builder = builder.trigger(trigger_of(bounds));
        }
        let agent = agent(builder.build().unwrap());
        let expected = expects_summary(&input, &triggers, keep, ModelProfile::new(window));
        let output = futures::executor::block_on(agent.run(input.clone())).unwrap();
        // What the model read and what the history holds are valid histories.
        let sent = &agent.model().requests()[0].messages;
        prop_assert!(validate_history(sent).is_ok(), "{:#?}", sent);
        prop_assert!(validate_history(&output.messages).is_ok());
        let seen = seen.lock().unwrap();
        prop_assert_eq!(seen.len(), usize::from(expected));
        match seen.first() {
            None => prop_assert_eq!(&sent[..], &input[..]),
            Some(summarized) => {
                // The kept part begins at a message that is not a tool result: no call is
                // separated from its results; summary + kept = what was sent.
                prop_assert!(is_summary(&sent[0]));
                let kept = &sent[1..];
                prop_assert!(kept.first().is_some_and(|m| m.role != Role::Tool));
                // Nothing is lost: removed + kept is the input.
                let mut rebuilt = summarized.removed.clone();
                rebuilt.extend_from_slice(kept);
                prop_assert_eq!(&rebuilt[..], &input[..]);
            }
        }
    }
}
