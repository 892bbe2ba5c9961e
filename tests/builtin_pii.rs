//! `Pii`: the rules of DESIGN §11, one test each.
#![cfg(feature = "pii")]

mod support;

use hookchain::builtin::human_in_the_loop::{HumanInTheLoop, ToolPolicy};
use hookchain::builtin::{Pii, PiiBlocked, PiiPlace, PiiStrategy, PiiType};
use hookchain::message::validate_history;
use hookchain::prelude::*;
use hookchain::{EndReason, Role};
use support::{echo_call, echo_tool, middleware_error, new_log, tool_results};

const EMAIL: &str = "ann@example.com";
const CARD: &str = "4111 1111 1111 1111";

fn pii(kind: PiiType, strategy: PiiStrategy) -> hookchain::builtin::pii::PiiBuilder {
    Pii::builder().detect(kind, strategy)
}

#[tokio::test]
async fn input_is_rewritten_in_the_history_and_in_what_the_model_reads() {
    let model = ScriptedModel::new([ModelResponse::text("ok")]);
    let pii = pii(PiiType::Email, PiiStrategy::Redact).build().unwrap();
    let agent = Agent::builder(model).chain(pii).build().unwrap();
    let output = agent.run(format!("Mail me at {EMAIL}.")).await.unwrap();
    assert_eq!(output.messages[0].text(), "Mail me at [REDACTED_EMAIL].");
    let sent = &agent.model().requests()[0];
    assert_eq!(sent.messages[0].text(), "Mail me at [REDACTED_EMAIL].");
}

#[tokio::test]
async fn a_checkpoint_taken_after_redaction_holds_no_pii() {
    let model = ScriptedModel::new([
        // Tool-call arguments are kept as the model wrote them (the tool needs them).
        ModelResponse::tool_calls([echo_call("c1", "hello")]),
        ModelResponse::text(format!("Sent to {EMAIL}, card {CARD}")),
    ]);
    let chain = (
        Pii::builder()
            .detect(PiiType::Email, PiiStrategy::Hash)
            .detect(PiiType::CreditCard, PiiStrategy::Mask)
            .output(true)
            .tool_results(true)
            .build()
            .unwrap(),
        HumanInTheLoop::new().interrupt_on("echo", ToolPolicy::always()),
    );
    let log = new_log();
    let agent = Agent::builder(model)
        .tool(echo_tool(&log))
        .chain(chain)
        .build()
        .unwrap();
    let output = agent
        .run(format!("I am {EMAIL}, card {CARD}."))
        .await
        .unwrap();
    assert_eq!(output.end, EndReason::Interrupted);
    let saved = serde_json::to_string(output.checkpoint.as_ref().unwrap()).unwrap();
    assert!(!saved.contains(EMAIL), "{saved}");
    assert!(!saved.contains(CARD), "{saved}");
    assert!(saved.contains("**** **** **** 1111"), "{saved}");
}

#[tokio::test]
async fn the_models_answer_is_masked_before_it_enters_the_history() {
    let model = ScriptedModel::new([ModelResponse::text(format!(
        "Your card {CARD}, ip 10.1.2.23"
    ))]);
    let pii = Pii::builder()
        .detect(PiiType::CreditCard, PiiStrategy::Mask)
        .detect(PiiType::Ipv4, PiiStrategy::Mask)
        .input(false)
        .output(true)
        .build()
        .unwrap();
    let agent = Agent::builder(model).chain(pii).build().unwrap();
    let output = agent.run("What do you know?").await.unwrap();
    assert_eq!(
        output.text().as_deref(),
        Some("Your card **** **** **** 1111, ip *.*.*.23")
    );
}

#[tokio::test]
async fn tool_results_are_hashed_with_the_documented_stable_hash() {
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([echo_call("c1", EMAIL)]),
        ModelResponse::text("done"),
    ]);
    let pii = pii(PiiType::Email, PiiStrategy::Hash)
        .input(false)
        .tool_results(true)
        .build()
        .unwrap();
    let agent = Agent::builder(model)
        .tool(echo_tool(&new_log()))
        .chain(pii)
        .build()
        .unwrap();
    let output = agent.run("Echo it").await.unwrap();
    // The first 8 bytes of SHA-256("ann@example.com"), in hex.
    assert_eq!(
        tool_results(&output.messages),
        [("c1".into(), "[HASHED_EMAIL:71d4f55f72fa128d]".into(), false)]
    );
}

#[tokio::test]
async fn blocked_input_stops_the_run_with_an_error_naming_the_type_and_the_count() {
    let model = ScriptedModel::new([ModelResponse::text("never")]);
    let pii = pii(PiiType::Email, PiiStrategy::Block).build().unwrap();
    let agent = Agent::builder(model).chain(pii).build().unwrap();
    let error = middleware_error(agent.run(format!("{EMAIL} and bob@example.org")).await);
    assert_eq!(error.middleware(), Some("Pii"));
    let blocked = std::error::Error::source(&error)
        .and_then(|source| source.downcast_ref::<PiiBlocked>())
        .expect("the cause is PiiBlocked");
    assert_eq!(blocked.place, PiiPlace::Input);
    assert_eq!(blocked.found, [("email".to_owned(), 2)]);
    assert_eq!(agent.model().calls(), 0, "the model never saw the input");
}

#[tokio::test]
async fn a_blocked_tool_result_becomes_an_error_result_and_the_run_goes_on() {
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([echo_call("c1", CARD)]),
        ModelResponse::text("done"),
    ]);
    let pii = pii(PiiType::CreditCard, PiiStrategy::Block)
        .input(false)
        .tool_results(true)
        .build()
        .unwrap();
    let agent = Agent::builder(model)
        .tool(echo_tool(&new_log()))
        .chain(pii)
        .build()
        .unwrap();
    let output = agent.run("Echo it").await.unwrap();
    let results = tool_results(&output.messages);
    assert!(results[0].2, "an error result");
    assert!(results[0].1.contains("1 credit_card"), "{}", results[0].1);
    assert!(!results[0].1.contains(CARD));
    assert_eq!(output.text().as_deref(), Some("done"));
    validate_history(&output.messages).unwrap();
}

#[tokio::test]
async fn switched_off_places_are_left_as_they_are() {
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([echo_call("c1", EMAIL)]),
        ModelResponse::text(EMAIL),
    ]);
    // Input only (the default).
    let pii = pii(PiiType::Email, PiiStrategy::Redact).build().unwrap();
    let agent = Agent::builder(model)
        .tool(echo_tool(&new_log()))
        .chain(pii)
        .build()
        .unwrap();
    let output = agent.run(EMAIL).await.unwrap();
    assert_eq!(output.messages[0].text(), "[REDACTED_EMAIL]");
    assert_eq!(tool_results(&output.messages)[0].1, EMAIL);
    assert_eq!(output.text().as_deref(), Some(EMAIL));
}

#[tokio::test]
async fn a_number_that_fails_the_luhn_check_is_no_card() {
    let model = ScriptedModel::new([ModelResponse::text("ok")]);
    let pii = pii(PiiType::CreditCard, PiiStrategy::Redact)
        .build()
        .unwrap();
    let agent = Agent::builder(model).chain(pii).build().unwrap();
    let output = agent
        .run("order 4111 1111 1111 1112, card 4111-1111-1111-1111")
        .await
        .unwrap();
    assert_eq!(
        output.messages[0].text(),
        "order 4111 1111 1111 1112, card [REDACTED_CREDIT_CARD]"
    );
}

#[tokio::test]
async fn every_built_in_kind_is_found() {
    let pii = Pii::builder()
        .detect_all(PiiStrategy::Redact)
        .build()
        .unwrap();
    let text = format!(
        "{EMAIL} {CARD} 192.168.0.1 2001:db8::1 00:1a:2b:3c:4d:5e https://example.com/x?y=1."
    );
    assert_eq!(
        pii.redact(&text, PiiPlace::Input).unwrap(),
        "[REDACTED_EMAIL] [REDACTED_CREDIT_CARD] [REDACTED_IPV4] [REDACTED_IPV6] \
         [REDACTED_MAC_ADDRESS] [REDACTED_URL]."
    );
}

#[tokio::test]
async fn custom_regex_and_function_detectors() {
    let pii = Pii::builder()
        .custom_regex("employee_id", r"EMP-[0-9]{6}", PiiStrategy::Mask)
        .custom("secret", 6, PiiStrategy::Redact, |text: &str| {
            text.match_indices("s3cr3t")
                .map(|(at, s)| at..at + s.len())
                .collect()
        })
        .build()
        .unwrap();
    assert_eq!(
        pii.redact("EMP-123456 knows s3cr3t", PiiPlace::Input)
            .unwrap(),
        "******3456 knows [REDACTED_SECRET]"
    );
}

#[tokio::test]
async fn a_url_holding_an_email_address_is_one_finding() {
    let pii = Pii::builder()
        .detect(PiiType::Email, PiiStrategy::Redact)
        .detect(PiiType::Url, PiiStrategy::Mask)
        .build()
        .unwrap();
    assert_eq!(
        pii.redact("see https://ann@example.com/inbox", PiiPlace::Input)
            .unwrap(),
        "see https://example.com/***"
    );
}

#[test]
fn the_builder_names_a_setting_that_cannot_work() {
    let field = |builder: hookchain::builtin::pii::PiiBuilder| builder.build().unwrap_err().field();
    assert_eq!(field(Pii::builder()), "detect");
    assert_eq!(
        field(pii(PiiType::Email, PiiStrategy::Redact).input(false)),
        "input"
    );
    assert_eq!(
        field(Pii::builder().custom_regex("id", "(unclosed", PiiStrategy::Redact)),
        "custom_regex"
    );
    assert_eq!(
        field(Pii::builder().custom_regex("", "x", PiiStrategy::Redact)),
        "custom"
    );
    assert_eq!(
        field(
            Pii::builder()
                .custom_regex("email", "x", PiiStrategy::Redact)
                .detect(PiiType::Email, PiiStrategy::Redact)
        ),
        "custom"
    );
    assert_eq!(
        field(Pii::builder().custom("id", 0, PiiStrategy::Redact, |_: &str| Vec::new())),
        "max_len"
    );
}

#[tokio::test]
async fn user_messages_of_a_thread_stay_redacted_in_the_thread() {
    let model = ScriptedModel::new([ModelResponse::text("one"), ModelResponse::text("two")]);
    let pii = pii(PiiType::Email, PiiStrategy::Redact).build().unwrap();
    let agent = Agent::builder(model).chain(pii).build().unwrap();
    let mut thread = agent.thread();
    agent.run_in(&mut thread, EMAIL).await.unwrap();
    agent.run_in(&mut thread, "again").await.unwrap();
    let saved = serde_json::to_string(&thread.messages()).unwrap();
    assert!(!saved.contains(EMAIL));
    assert!(
        thread
            .messages()
            .iter()
            .any(|m| m.role == Role::User && m.text() == "[REDACTED_EMAIL]")
    );
}

/// A model that streams `text` a few bytes at a time, so that matches straddle deltas.
fn streaming(text: &str) -> ScriptedModel {
    use hookchain::model::{ModelEvent, StreamStep};
    let mut steps: Vec<StreamStep> = text
        .as_bytes()
        .chunks(3)
        .map(|piece| {
            ModelEvent::TextDelta {
                index: 0,
                text: String::from_utf8(piece.to_vec()).unwrap(),
            }
            .into()
        })
        .collect();
    steps.push(
        ModelEvent::Finish {
            stop_reason: hookchain::StopReason::EndTurn,
        }
        .into(),
    );
    ScriptedModel::new([]).then_stream(steps)
}

#[tokio::test]
async fn a_streamed_answer_shows_no_personal_data_at_any_event() {
    use futures::StreamExt;
    // Longer than the look-back (the longest e-mail address a detector matches), so that some
    // text is let through before the answer ends.
    let filler = "All is well. ".repeat(40);
    let answer = format!("{filler}Write to {EMAIL} or pay with {CARD}, thanks.");
    let pii = Pii::builder()
        .detect(PiiType::Email, PiiStrategy::Redact)
        .detect(PiiType::CreditCard, PiiStrategy::Mask)
        .output(true)
        .build()
        .unwrap();
    let agent = Agent::builder(streaming(&answer))
        .chain(pii)
        .build()
        .unwrap();
    let items: Vec<_> = agent.stream("Where?").collect().await;
    let mut shown = String::new();
    let mut deltas = 0;
    for item in &items {
        if let Some(delta) = item.as_ref().unwrap().text_delta() {
            deltas += 1;
            shown.push_str(delta);
            assert!(!shown.contains("ann@"), "shown: {shown:?}");
            assert!(!shown.contains("4111 1111"), "shown: {shown:?}");
        }
    }
    let expected =
        format!("{filler}Write to [REDACTED_EMAIL] or pay with **** **** **** 1111, thanks.");
    assert_eq!(shown, expected);
    // Let through as it came, beyond the look-back, not all at the end.
    assert!(deltas > 100, "{deltas} deltas");
    let Some(Ok(hookchain::AgentEvent::Output(output))) = items.last() else {
        panic!("the run ends with its output: {items:?}");
    };
    assert_eq!(output.text().as_deref(), Some(expected.as_str()));
}

#[tokio::test]
async fn the_same_answer_unstreamed_is_rewritten_alike() {
    let answer = format!("Write to {EMAIL} or pay with {CARD}, thanks.");
    let pii = Pii::builder()
        .detect(PiiType::Email, PiiStrategy::Redact)
        .detect(PiiType::CreditCard, PiiStrategy::Mask)
        .output(true)
        .build()
        .unwrap();
    let agent = Agent::builder(streaming(&answer))
        .chain(pii)
        .build()
        .unwrap();
    let output = agent.run("Where?").await.unwrap();
    assert_eq!(
        output.text().as_deref(),
        Some("Write to [REDACTED_EMAIL] or pay with **** **** **** 1111, thanks.")
    );
}

#[tokio::test]
async fn a_blocked_type_in_a_stream_ends_it_with_an_error_before_the_data_is_shown() {
    use futures::StreamExt;
    let pii = pii(PiiType::Email, PiiStrategy::Block)
        .output(true)
        .build()
        .unwrap();
    let answer = format!("Mail {EMAIL} now.");
    let agent = Agent::builder(streaming(&answer))
        .chain(pii)
        .build()
        .unwrap();
    let items: Vec<_> = agent.stream("Where?").collect().await;
    let (last, events) = items.split_last().unwrap();
    let error = last.as_ref().unwrap_err();
    assert!(error.to_string().contains("Pii"), "{error}");
    let shown: String = events
        .iter()
        .filter_map(|item| item.as_ref().unwrap().text_delta())
        .collect();
    assert!(!shown.contains("ann@"), "shown: {shown:?}");
}

#[test]
fn an_ipv6_address_with_an_ipv4_tail_is_masked_down_to_its_last_octet() {
    let pii = pii(PiiType::Ipv6, PiiStrategy::Mask).build().unwrap();
    let masked = pii
        .redact(
            "from ::ffff:192.168.1.23 and 64:ff9b::10.0.0.7",
            PiiPlace::Input,
        )
        .unwrap();
    assert_eq!(masked, "from *:*:*:*:*:*:*.*.*.23 and *:*:*:*:*:*:*.*.*.7");
}

#[test]
fn a_card_number_after_another_group_of_digits_is_found() {
    let pii = pii(PiiType::CreditCard, PiiStrategy::Redact)
        .build()
        .unwrap();
    let redacted = |text: &str| pii.redact(text, PiiPlace::Input).unwrap().into_owned();
    assert_eq!(
        redacted("order 123456 4111 1111 1111 1111"),
        "order 123456 [REDACTED_CREDIT_CARD]"
    );
    assert_eq!(
        redacted("ref 2024-0043-4111-1111-1111-1111, thanks"),
        "ref 2024-0043-[REDACTED_CREDIT_CARD], thanks"
    );
    assert_eq!(
        redacted("ids 98765 5500005555555559"),
        "ids 98765 [REDACTED_CREDIT_CARD]"
    );
}

#[tokio::test]
async fn a_redaction_of_your_own_words_is_used_in_the_history_and_the_stream() {
    use futures::StreamExt;
    let answer = format!("Write to {EMAIL}, thanks.");
    let pii = Pii::builder()
        .detect(PiiType::Email, PiiStrategy::Redact)
        .redact_as("email", "(address withheld)")
        .output(true)
        .build()
        .unwrap();
    let agent = Agent::builder(streaming(&answer))
        .chain(pii)
        .build()
        .unwrap();
    let items: Vec<_> = agent.stream("Where?").collect().await;
    let shown: String = items
        .iter()
        .filter_map(|item| item.as_ref().unwrap().text_delta())
        .collect();
    assert_eq!(shown, "Write to (address withheld), thanks.");
    // A name no detector has, or a detector that does not redact: refused at build.
    let unknown = Pii::builder()
        .detect(PiiType::Email, PiiStrategy::Redact)
        .redact_as("emial", "x")
        .build()
        .unwrap_err();
    assert!(
        unknown.to_string().contains("no detector is named `emial`"),
        "{unknown}"
    );
    let masked = Pii::builder()
        .detect(PiiType::Email, PiiStrategy::Mask)
        .redact_as("email", "x")
        .build()
        .unwrap_err();
    assert!(masked.to_string().contains("Mask"), "{masked}");
}
