//! Every history sent to a model is one a real provider accepts: each assistant message with
//! tool calls is answered, right after it, by one result per call. `ScriptedModel` refuses any
//! other request (as OpenAI and Anthropic do), so every test on it checks the rule on every
//! request; these tests check the rule's edges.

mod support;

use hookchain::message::{HistoryError, validate_history};
use hookchain::prelude::*;
use hookchain::{Model, ModelErrorKind, chain, hook};
use serde_json::json;

use support::{assert_no_dangling, echo_call, echo_tool, new_log};

/// "The scripted model refuses a request a provider would refuse": a tool call answered after
/// another message is an error, and the script is not used up by it.
#[tokio::test]
async fn the_scripted_model_refuses_a_history_a_provider_would_refuse() {
    let model = ScriptedModel::new([ModelResponse::text("fine")]);
    let call = ToolCall::new("c1", "echo", json!({ "text": "x" }));
    let bad = ModelRequest::new(vec![
        Message::user("hi"),
        Message::assistant_with_tool_calls("", [call]),
        Message::user("are you there?"),
        Message::tool(ToolResult::ok("c1", "x")),
    ]);
    let error = model.invoke(bad).await.unwrap_err();
    assert_eq!(error.kind(), ModelErrorKind::InvalidRequest, "{error}");
    let cause = std::error::Error::source(&error).map(ToString::to_string);
    assert!(cause.unwrap_or_default().contains("`c1`"));
    let good = ModelRequest::new(vec![Message::user("hi")]);
    assert_eq!(model.invoke(good).await.unwrap().message.content, "fine");
}

/// "A call the input left without a result gets one right after it": an input history where the
/// conversation went on past a tool call (a pause given up by hand, say) reaches the model with
/// an error result between the call and the next message, never after it.
#[tokio::test]
async fn an_unanswered_call_in_the_input_is_answered_right_after_it() {
    let model = ScriptedModel::new([ModelResponse::text("ok")]);
    let agent = Agent::builder(model).build().unwrap();
    let input = vec![
        Message::user("look it up"),
        Message::assistant_with_tool_calls("", [echo_call("c1", "x")]),
        Message::user("never mind, just say ok"),
    ];
    let output = agent.run(input).await.unwrap();
    let sent = &agent.model().requests()[0].messages;
    assert_eq!(sent[2].tool_call_id.as_deref(), Some("c1"));
    assert!(sent[2].is_error);
    assert_eq!(sent[3], Message::user("never mind, just say ok"));
    assert_eq!(validate_history(sent), Ok(()));
    assert_no_dangling(&output.messages);
}

/// An input with a tool result that answers no call is refused before anything runs.
#[tokio::test]
async fn an_input_with_an_orphan_result_is_refused() {
    let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("ok")]))
        .build()
        .unwrap();
    let input = vec![
        Message::user("hi"),
        Message::tool(ToolResult::ok("ghost", "boo")),
    ];
    let result = agent.run(input).await;
    assert!(
        matches!(
            result,
            Err(Error::History(HistoryError::OrphanResult { .. }))
        ),
        "{result:?}"
    );
    assert_eq!(agent.model().calls(), 0);
}

/// Removes the last tool result of the history, or reports why it may not.
#[hook(before_model)]
fn drop_last_result(cx: &mut Context, request: &mut ModelRequest) {
    if !cx
        .messages()
        .iter()
        .any(|m| m.role == hookchain::Role::Tool)
    {
        return;
    }
    let edit = cx.edit_history(|messages| {
        let at = messages
            .iter()
            .rposition(|m| m.role == hookchain::Role::Tool)
            .unwrap();
        messages.remove(at);
    });
    let verdict = match edit {
        Ok(()) => "removed".to_owned(),
        Err(error) => format!("refused: {error}"),
    };
    request.system_prompt = Some(verdict);
}

/// "The history-editing API keeps the rule": a hook that removes a tool result (which would
/// leave its call dangling, and the call to run again) is refused, and the history is left as
/// it was.
#[tokio::test]
async fn a_history_edit_that_leaves_a_call_dangling_is_refused() {
    let log = new_log();
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([echo_call("c1", "x")]),
        ModelResponse::text("done"),
    ]);
    let agent = Agent::builder(model)
        .tool(echo_tool(&log))
        .chain(chain![drop_last_result])
        .build()
        .unwrap();
    let output = agent.run("go").await.unwrap();
    assert_eq!(output.text().as_deref(), Some("done"));
    let prompt = agent.model().requests()[1].system_prompt.clone().unwrap();
    assert!(prompt.starts_with("refused: tool call `c1`"), "{prompt}");
    assert_eq!(output.messages.len(), 4);
    assert_no_dangling(&output.messages);
}

/// "A model answer whose calls cannot all be answered is refused before any tool runs": two
/// calls with one id (a broken server) would run both, then send a history every provider
/// refuses; the error is a malformed response naming the fix.
#[tokio::test]
async fn an_answer_with_two_calls_of_one_id_runs_no_tool() {
    let runs = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([
            ToolCall::new("same", "lookup", json!({ "text": "1" })),
            ToolCall::new("same", "lookup", json!({ "text": "2" })),
        ]),
        ModelResponse::text("never asked"),
    ]);
    let agent = Agent::builder(model)
        .tool(support::counting_tool("lookup", &runs))
        .build()
        .unwrap();
    let Err(Error::Model(error)) = agent.run("go").await else {
        panic!("the answer was kept");
    };
    assert_eq!(error.kind(), ModelErrorKind::MalformedResponse);
    assert!(error.to_string().contains("`same`"), "{error}");
    assert!(error.to_string().contains("ToolCallRepair"), "{error}");
    assert_eq!(
        runs.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "a tool ran"
    );
    assert_eq!(agent.model().requests().len(), 1);
}

// ---------------------------------------------------------------------------------------------
// Any run
// ---------------------------------------------------------------------------------------------

mod any_run {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use hookchain::builtin::human_in_the_loop::{
        ApprovalRequest, ApprovalResponse, HumanInTheLoop, ToolPolicy,
    };
    use hookchain::builtin::summarization::{Keep, Trigger};
    use hookchain::builtin::tool_call_limit::{ToolCallLimit, ToolLimitExit};
    use hookchain::builtin::{
        ContextEditing, LimitExit, LoopDetection, ModelCallLimit, Summarization, ToolCallRepair,
    };
    use hookchain::message::validate_history;
    use hookchain::prelude::*;
    use hookchain::tool::{AskUser, FnTool};
    use hookchain::{AgentEvent, EndReason, ModelErrorKind, RunOutput, chain};
    use proptest::prelude::*;
    use serde_json::{Value, json};

    use crate::support::{TextArgs, echo_tool, new_log};

    /// What the model may ask for: a tool that answers, one that fails, one that asks the
    /// user (an interrupt), one the agent does not have, and a call without a name.
    const TOOLS: [&str; 5] = ["echo", "fail", "ask_user", "nope", ""];
    /// Ids a sloppy server may send: repeated or empty ones among them.
    const IDS: [&str; 4] = ["a", "b", "c", ""];

    fn any_call() -> impl Strategy<Value = ToolCall> {
        (0..TOOLS.len(), 0..IDS.len(), 0..3_u8).prop_map(|(tool, id, arguments)| {
            let arguments = match (TOOLS[tool], arguments) {
                (_, 2) => json!("{\"text\": \"as a string\"}"),
                ("ask_user", _) => json!({ "question": "Which?" }),
                (_, 1) => json!({ "unexpected": 1 }),
                _ => json!({ "text": "x" }),
            };
            ToolCall::new(IDS[id], TOOLS[tool], arguments)
        })
    }

    fn any_answer() -> impl Strategy<Value = ModelResponse> {
        prop_oneof![
            1 => Just(ModelResponse::text("an answer")),
            3 => proptest::collection::vec(any_call(), 1..4).prop_map(ModelResponse::tool_calls),
        ]
    }

    /// The middleware a run may have, each present or not, with its setting.
    #[derive(Debug, Clone)]
    struct Setup {
        repair: bool,
        approval: bool,
        loops: bool,
        tool_limit: Option<(u32, u8)>,
        model_limit: Option<(u32, bool)>,
        /// Summarize at this many messages, keeping the last few.
        summarize: Option<(usize, usize)>,
        /// Clear old tool results, keeping the last few.
        clear: Option<usize>,
        streamed: bool,
    }

    fn any_setup() -> impl Strategy<Value = Setup> {
        (
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
            proptest::option::of((1..4_u32, 0..3_u8)),
            proptest::option::of((1..5_u32, any::<bool>())),
            proptest::option::of((2..8_usize, 1..4_usize)),
            proptest::option::of(0..3_usize),
            any::<bool>(),
        )
            .prop_map(
                |(repair, approval, loops, tool_limit, model_limit, summarize, clear, streamed)| {
                    Setup {
                        repair,
                        approval,
                        loops,
                        tool_limit,
                        model_limit,
                        summarize,
                        clear,
                        streamed,
                    }
                },
            )
    }

    /// The answers to every interrupt of a paused run: approvals alternately given and
    /// refused, questions answered.
    fn answers(output: &RunOutput, turn: usize) -> Vec<(hookchain::InterruptId, Value)> {
        output
            .interrupts()
            .iter()
            .map(
                |interrupt| match ApprovalRequest::from_interrupt(interrupt) {
                    Some(request) if turn.is_multiple_of(2) => {
                        ApprovalResponse::approve_all(&request).answer(interrupt)
                    }
                    Some(request) => {
                        ApprovalResponse::reject_all(&request, "not now").answer(interrupt)
                    }
                    None => (interrupt.id.clone(), json!("the blue one")),
                },
            )
            .collect()
    }

    /// An agent on `script` (then "done"), with the tools and the middleware of `setup`.
    fn agent(
        script: Vec<ModelResponse>,
        setup: &Setup,
    ) -> Agent<ScriptedModel, impl Middleware + use<>> {
        let step = Arc::new(AtomicUsize::new(0));
        let model = ScriptedModel::from_rule({
            let step = step.clone();
            move |_| {
                let i = step.fetch_add(1, Ordering::SeqCst);
                Ok(script
                    .get(i)
                    .cloned()
                    .unwrap_or_else(|| ModelResponse::text("done")))
            }
        });
        let tool_limit = setup.tool_limit.map(|(limit, exit)| {
            let exit = [
                ToolLimitExit::Continue,
                ToolLimitExit::End,
                ToolLimitExit::Error,
            ][usize::from(exit)];
            ToolCallLimit::builder()
                .run_limit(limit)
                .exit(exit)
                .build()
                .unwrap()
        });
        let model_limit = setup.model_limit.map(|(limit, end)| {
            let exit = if end {
                LimitExit::End
            } else {
                LimitExit::Error
            };
            ModelCallLimit::builder()
                .run_limit(limit)
                .exit(exit)
                .build()
                .unwrap()
        });
        let summarization = setup.summarize.map(|(at, keep)| {
            let summarizer = ScriptedModel::from_rule(|_| Ok(ModelResponse::text("so far")));
            Summarization::builder(summarizer)
                .trigger(Trigger::messages(at))
                .keep(Keep::Messages(keep))
                .build()
                .unwrap()
        });
        let editing = setup.clear.map(|keep| {
            ContextEditing::builder()
                .trigger_tokens(1)
                .keep(keep)
                .build()
                .unwrap()
        });
        let approval = setup
            .approval
            .then(|| HumanInTheLoop::new().interrupt_on("echo", ToolPolicy::always()));
        Agent::builder(model)
            .tool(echo_tool(&new_log()))
            .tool(FnTool::new("fail", "Always fails.", |_: TextArgs| async {
                Err::<String, _>(std::io::Error::other("the disk is full"))
            }))
            .tool(AskUser)
            .max_steps(12)
            .chain(chain![
                summarization,
                editing,
                model_limit,
                tool_limit,
                approval,
                setup.loops.then(LoopDetection::default),
                setup.repair.then_some(ToolCallRepair::new()),
            ])
            .build()
            .unwrap()
    }

    /// Two runs in one thread ("go", then "again"), streamed or not, each paused run resumed
    /// with [`answers`] until it ends (or has paused eight times).
    fn two_runs<C: Middleware>(
        agent: &Agent<ScriptedModel, C>,
        streamed: bool,
    ) -> Vec<Result<RunOutput, Error>> {
        let mut thread = agent.thread();
        let mut outcomes = Vec::new();
        for input in ["go", "again"] {
            outcomes.push(futures::executor::block_on(async {
                let mut output = if streamed {
                    output_of(agent.stream_in(&mut thread, input)).await
                } else {
                    agent.run_in(&mut thread, input).await
                };
                for turn in 0..8 {
                    let Ok(paused) = &output else { break };
                    let Some(checkpoint) = paused.checkpoint.clone() else {
                        break;
                    };
                    let answers = answers(paused, turn);
                    output = agent.resume_in(&mut thread, checkpoint, answers).await;
                }
                output
            }));
        }
        outcomes
    }

    /// The output a stream ends with, or its error.
    async fn output_of(
        mut stream: impl futures::Stream<Item = Result<AgentEvent, Error>> + Unpin,
    ) -> Result<RunOutput, Error> {
        use futures::StreamExt;
        while let Some(event) = stream.next().await {
            if let AgentEvent::Output(output) = event? {
                return Ok(*output);
            }
        }
        panic!("a stream ended without its output")
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        /// "Every history sent to a model is one a provider accepts", whatever the model
        /// answers (unknown tools, nameless calls, repeated or empty ids, arguments as text),
        /// whatever the tools do (fail, interrupt), with any of the built-ins that edit the
        /// tool path or the history, streamed or not, paused and resumed, two runs in a
        /// thread: the scripted model refuses any other request, and no run fails for that
        /// reason or panics; a finished run's history is valid and its answer is found.
        #[test]
        fn every_request_of_any_run_is_a_valid_history(
            script in proptest::collection::vec(any_answer(), 1..6),
            setup in any_setup(),
        ) {
            let agent = agent(script, &setup);
            // Two runs in one thread: the second starts from the first's history (summarized,
            // perhaps), and its answer must still be found.
            for outcome in two_runs(&agent, setup.streamed) {
                match outcome {
                    Ok(output) => {
                        if output.end != EndReason::Interrupted {
                            prop_assert!(
                                validate_history(&output.messages).is_ok(),
                                "{:#?}",
                                output.messages
                            );
                        }
                        if output.end == EndReason::Finished {
                            prop_assert_eq!(output.final_message(), output.messages.last());
                        }
                    }
                    Err(Error::Model(error)) => prop_assert_ne!(
                        error.kind(),
                        ModelErrorKind::InvalidRequest,
                        "a request broke the rule: {}",
                        error
                    ),
                    Err(_) => {}
                }
            }
        }

        /// "One path for streamed and unstreamed runs": the same answers through the same
        /// middleware end the same way either way — the same history, end and counts, or the
        /// same error.
        #[test]
        fn a_streamed_run_ends_as_the_same_run_unstreamed(
            script in proptest::collection::vec(any_answer(), 1..6),
            setup in any_setup(),
        ) {
            let plain = two_runs(&agent(script.clone(), &setup), false);
            let streamed = two_runs(&agent(script, &setup), true);
            for (plain, streamed) in plain.iter().zip(&streamed) {
                match (plain, streamed) {
                    (Ok(plain), Ok(streamed)) => {
                        prop_assert_eq!(&plain.messages, &streamed.messages);
                        prop_assert_eq!(plain.end, streamed.end);
                        prop_assert_eq!(
                            (plain.model_calls, plain.tool_calls),
                            (streamed.model_calls, streamed.tool_calls)
                        );
                    }
                    (Err(plain), Err(streamed)) => {
                        prop_assert_eq!(plain.to_string(), streamed.to_string());
                    }
                    (plain, streamed) => {
                        prop_assert!(false, "unstreamed {:?}\nstreamed {:?}", plain, streamed);
                    }
                }
            }
        }
    }
}
