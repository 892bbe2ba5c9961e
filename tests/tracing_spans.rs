//! The spans and events of a run, as a subscriber sees them: `invoke_agent` around `chat` and
//! `execute_tool`, with OpenTelemetry's GenAI attribute names, and `TRACE` events naming the
//! middleware and the hook (see the table in `hookchain::agent`).
//!
//! One global subscriber for the whole binary records into the current thread's buffer (each
//! test runs on its own thread, on a current-thread runtime): scoped subscribers race with the
//! callsite cache when tests run in parallel.

mod capture;

use std::convert::Infallible;
use std::io;

use capture::{Captured, EventRecord, traced_async as traced};

use hookchain::prelude::*;
use hookchain::{FnTool, ModelError, Usage, chain, hook, middleware};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tracing::Level;

// -------------------------------------------------------------------------------------------
// The capturing subscriber (`tests/capture`), read as these tests need
// -------------------------------------------------------------------------------------------

impl Captured {
    /// The indices of the spans named `name`, in creation order.
    fn named(&self, name: &str) -> Vec<usize> {
        (0..self.spans.len())
            .filter(|&i| self.spans[i].name == name)
            .collect()
    }

    /// The one span named `name`.
    #[track_caller]
    fn one(&self, name: &str) -> usize {
        let found = self.named(name);
        assert_eq!(found.len(), 1, "spans named {name}: {:#?}", self.spans);
        found[0]
    }

    /// The field `field` of span `span`.
    fn field(&self, span: usize, field: &str) -> Option<&str> {
        self.spans[span].fields.get(field).map(String::as_str)
    }

    /// The hook events (`"hook"`) as (span, middleware, hook), in order.
    fn hooks(&self) -> Vec<(Option<&'static str>, String, String)> {
        self.events
            .iter()
            .filter(|event| event.message == "hook")
            .map(|event| {
                assert_eq!(event.level, Level::TRACE);
                (
                    event.span.map(|span| self.spans[span].name),
                    event.fields["hookchain.middleware"].clone(),
                    event.fields["hookchain.hook"].clone(),
                )
            })
            .collect()
    }

    /// The events whose message is `message`.
    fn events_saying(&self, message: &str) -> Vec<&EventRecord> {
        self.events
            .iter()
            .filter(|event| event.message == message)
            .collect()
    }
}

// -------------------------------------------------------------------------------------------
// The agent under observation
// -------------------------------------------------------------------------------------------

#[derive(Debug, Deserialize, JsonSchema)]
struct TextArgs {
    /// The text to work on.
    text: String,
}

/// `ping`: yields once (so that the step's calls interleave), logs, answers `pong`.
fn ping() -> impl hookchain::Tool {
    FnTool::new("ping", "Answers pong.", |args: TextArgs| async move {
        tokio::task::yield_now().await;
        tracing::info!(text = %args.text, "in the tool");
        Ok::<_, Infallible>("pong")
    })
}

/// `fail`: yields once, logs, fails.
fn fail() -> impl hookchain::Tool {
    FnTool::new("fail", "Always fails.", |args: TextArgs| async move {
        tokio::task::yield_now().await;
        tracing::info!(text = %args.text, "in the tool");
        Err::<String, _>(io::Error::other("the disk is full"))
    })
}

/// Watches every model and tool call, passing them through.
struct Watch;

#[middleware]
impl Watch {
    #[hook(before_model)]
    fn before(&self) {}

    #[hook(after_model)]
    fn after(&self) {}

    #[hook(wrap_model_call)]
    async fn around_model(
        &self,
        cx: &mut Context,
        request: ModelRequest,
        mut next: impl ModelNext,
    ) -> Result<ModelResponse, Error> {
        next.call(cx, request).await
    }

    #[hook(wrap_tool_call)]
    async fn around_tool(
        &self,
        cx: ToolContext<'_>,
        call: ToolCall,
        mut next: impl ToolNext,
    ) -> Result<ToolResult, Error> {
        Ok(next.call(cx, call).await)
    }
}

/// Answers model and tool calls from its "cache", never calling `next`.
struct Cache;

#[middleware]
impl Cache {
    #[hook(wrap_model_call)]
    async fn cached_answer(
        &self,
        cx: &mut Context,
        request: ModelRequest,
        next: impl ModelNext,
    ) -> Result<ModelResponse, Error> {
        let _ = (cx, request, next);
        Ok(ModelResponse::text("from the cache"))
    }

    #[hook(wrap_tool_call)]
    async fn cached_result(
        &self,
        cx: ToolContext<'_>,
        call: ToolCall,
        next: impl ToolNext,
    ) -> Result<ToolResult, Error> {
        let _ = (cx, next);
        Ok(ToolResult::ok(&call.id, "cached pong"))
    }
}

#[hook(before_model)]
fn stamp(request: &mut ModelRequest) {
    request.system_prompt = Some("stamped".into());
}

#[hook(after_model)]
fn note(response: &mut ModelResponse) {
    tracing::info!(stop = ?response.stop_reason, "noted");
}

/// A model that calls `ping` and `fail` in one step, then answers.
fn two_step_model() -> ScriptedModel {
    ScriptedModel::new([
        ModelResponse::tool_calls([
            ToolCall::new("call_1", "ping", json!({ "text": "a" })),
            ToolCall::new("call_2", "fail", json!({ "text": "b" })),
        ])
        .with_usage(Usage::new(10, 5)),
        ModelResponse::text("done").with_usage(Usage::new(20, 7)),
    ])
}

// -------------------------------------------------------------------------------------------
// The tests
// -------------------------------------------------------------------------------------------

/// `invoke_agent` holds one `chat` per model call and one `execute_tool` per tool call, with
/// the conventions' attributes; the run's span has its totals at the end.
#[tokio::test]
async fn a_run_is_an_invoke_agent_span_around_chat_and_execute_tool_spans() {
    let agent = Agent::builder(two_step_model())
        .name("support")
        .tool(ping())
        .tool(fail())
        .chain(chain![Watch, stamp])
        .build()
        .unwrap();
    let mut thread = agent.thread();
    let (output, seen) = traced(agent.run_in(&mut thread, "hi")).await;
    let output = output.unwrap();
    assert_eq!(output.text().as_deref(), Some("done"));

    assert!(seen.named("hookchain.run").is_empty());
    let run = seen.one("invoke_agent");
    assert_eq!(seen.spans[run].parent, None);
    assert_eq!(seen.field(run, "otel.name"), Some("invoke_agent support"));
    assert_eq!(
        seen.field(run, "gen_ai.operation.name"),
        Some("invoke_agent")
    );
    assert_eq!(seen.field(run, "gen_ai.agent.name"), Some("support"));
    let thread_id = thread.id().to_string();
    assert_eq!(
        seen.field(run, "gen_ai.conversation.id"),
        Some(thread_id.as_str())
    );
    assert!(!seen.field(run, "hookchain.run.id").unwrap().is_empty());
    assert_eq!(seen.field(run, "gen_ai.usage.input_tokens"), Some("30"));
    assert_eq!(seen.field(run, "gen_ai.usage.output_tokens"), Some("12"));
    assert_eq!(seen.field(run, "error.type"), None);

    let chats = seen.named("chat");
    assert_eq!(chats.len(), 2);
    for (&chat, (input, output, finish)) in chats
        .iter()
        .zip([("10", "5", "tool_calls"), ("20", "7", "stop")])
    {
        assert_eq!(seen.spans[chat].parent, Some(run));
        assert_eq!(seen.field(chat, "otel.name"), Some("chat scripted"));
        assert_eq!(seen.field(chat, "gen_ai.operation.name"), Some("chat"));
        assert_eq!(seen.field(chat, "gen_ai.provider.name"), Some("scripted"));
        assert_eq!(seen.field(chat, "gen_ai.request.model"), Some("scripted"));
        assert_eq!(seen.field(chat, "gen_ai.usage.input_tokens"), Some(input));
        assert_eq!(seen.field(chat, "gen_ai.usage.output_tokens"), Some(output));
        assert_eq!(
            seen.field(chat, "gen_ai.response.finish_reasons"),
            Some(finish)
        );
        assert_eq!(seen.field(chat, "error.type"), None);
    }

    let tools = seen.named("execute_tool");
    assert_eq!(tools.len(), 2);
    let [ping, fail] = [tools[0], tools[1]];
    for (tool, name, id) in [(ping, "ping", "call_1"), (fail, "fail", "call_2")] {
        assert_eq!(seen.spans[tool].parent, Some(run));
        let otel_name = format!("execute_tool {name}");
        assert_eq!(seen.field(tool, "otel.name"), Some(otel_name.as_str()));
        assert_eq!(
            seen.field(tool, "gen_ai.operation.name"),
            Some("execute_tool")
        );
        assert_eq!(seen.field(tool, "gen_ai.tool.name"), Some(name));
        assert_eq!(seen.field(tool, "gen_ai.tool.call.id"), Some(id));
    }
    assert_eq!(seen.field(ping, "error.type"), None);
    assert_eq!(seen.field(fail, "error.type"), Some("failed"));

    // The calls ran concurrently (each yields once), yet each one's events are in its span.
    let in_tools: Vec<_> = seen.events_saying("in the tool");
    assert_eq!(in_tools.len(), 2);
    for event in in_tools {
        let expected = if event.fields["text"] == "a" {
            ping
        } else {
            fail
        };
        assert_eq!(event.span, Some(expected));
    }
    let failed = seen.events_saying("tool call failed");
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0].span, Some(fail));
}

/// Every hook a member runs is a `TRACE` event naming the member and the hook, in the span it
/// runs in: a tool call's wraps in its `execute_tool` span.
#[tokio::test]
async fn hook_events_name_the_middleware_and_the_hook() {
    let agent = Agent::builder(two_step_model())
        .tool(ping())
        .tool(fail())
        .chain(chain![Watch, stamp, note])
        .build()
        .unwrap();
    let (output, seen) = traced(agent.run("hi")).await;
    output.unwrap();
    let hook = |span: &'static str, member: &str, hook: &str| {
        (Some(span), member.to_owned(), hook.to_owned())
    };
    // `after_model` hooks run in reverse order.
    let step = [
        hook("invoke_agent", "Watch", "before_model"),
        hook("invoke_agent", "stamp", "before_model"),
        hook("invoke_agent", "Watch", "wrap_model_call"),
        hook("invoke_agent", "note", "after_model"),
        hook("invoke_agent", "Watch", "after_model"),
    ];
    let tools = [
        hook("execute_tool", "Watch", "wrap_tool_call"),
        hook("execute_tool", "Watch", "wrap_tool_call"),
    ];
    let expected: Vec<_> = step.iter().chain(&tools).chain(&step).cloned().collect();
    assert_eq!(seen.hooks(), expected);
    assert_eq!(seen.one("invoke_agent"), 0);
    assert!(seen.events_saying("model call short-circuited").is_empty());
    assert!(seen.events_saying("tool call short-circuited").is_empty());
}

/// A chain of one middleware (not a tuple) names it too.
#[tokio::test]
async fn a_chain_of_one_middleware_names_it() {
    let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("hi")]))
        .chain(stamp)
        .build()
        .unwrap();
    let (output, seen) = traced(agent.run("hi")).await;
    output.unwrap();
    assert_eq!(
        seen.hooks(),
        [(
            Some("invoke_agent"),
            "stamp".to_owned(),
            "before_model".to_owned()
        )]
    );
}

/// A wrap that answers without calling `next`: no `chat` span, a `DEBUG` event saying the model
/// call was short-circuited, naming the wraps that may have answered (which one did is not
/// recorded: see the module docs of `hookchain::agent`), and the hook event of the outermost.
#[tokio::test]
async fn a_short_circuited_model_call_has_no_chat_span_but_its_hook_shows() {
    let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("from the model")]))
        .chain(Cache)
        .build()
        .unwrap();
    let (output, seen) = traced(agent.run("hi")).await;
    assert_eq!(output.unwrap().text().as_deref(), Some("from the cache"));
    assert!(seen.named("chat").is_empty());
    let run = seen.one("invoke_agent");
    assert_eq!(
        seen.hooks(),
        [(
            Some("invoke_agent"),
            "Cache".to_owned(),
            "wrap_model_call".to_owned()
        )]
    );
    let short = seen.events_saying("model call short-circuited");
    assert_eq!(short.len(), 1);
    assert_eq!(short[0].level, Level::DEBUG);
    assert_eq!(short[0].span, Some(run));
    assert_eq!(short[0].fields["hookchain.hook"], "wrap_model_call");
    assert_eq!(short[0].fields["hookchain.wraps"], "Cache");
    assert_eq!(seen.field(run, "gen_ai.usage.input_tokens"), Some("0"));

    // Behind another wrap: the outermost's hook event, both named as candidates.
    let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("from the model")]))
        .chain(chain![Watch, Cache])
        .build()
        .unwrap();
    let (output, seen) = traced(agent.run("hi")).await;
    assert_eq!(output.unwrap().text().as_deref(), Some("from the cache"));
    assert!(seen.named("chat").is_empty());
    let hook =
        |member: &str, hook: &str| (Some("invoke_agent"), member.to_owned(), hook.to_owned());
    assert_eq!(
        seen.hooks(),
        [
            hook("Watch", "before_model"),
            hook("Watch", "wrap_model_call"),
            hook("Watch", "after_model"),
        ]
    );
    let short = seen.events_saying("model call short-circuited");
    assert_eq!(short.len(), 1);
    assert_eq!(short[0].fields["hookchain.wraps"], "Watch, Cache");
}

/// A tool call a wrap answers: its `execute_tool` span holds the wrap's hook event and an event
/// saying it was short-circuited; the tool never ran.
#[tokio::test]
async fn a_short_circuited_tool_call_shows_in_its_execute_tool_span() {
    /// Answers the model calls itself, but the tool calls from the cache.
    struct ToolCache;

    #[middleware]
    impl ToolCache {
        #[hook(wrap_tool_call)]
        async fn cached_result(
            &self,
            cx: ToolContext<'_>,
            call: ToolCall,
            next: impl ToolNext,
        ) -> Result<ToolResult, Error> {
            let _ = (cx, next);
            Ok(ToolResult::ok(&call.id, "cached pong"))
        }
    }

    let model = ScriptedModel::new([
        ModelResponse::tool_calls([ToolCall::new("call_1", "ping", json!({ "text": "a" }))]),
        ModelResponse::text("done"),
    ]);
    let agent = Agent::builder(model)
        .tool(ping())
        .chain(ToolCache)
        .build()
        .unwrap();
    let (output, seen) = traced(agent.run("hi")).await;
    output.unwrap();
    let tool = seen.one("execute_tool");
    assert_eq!(seen.named("chat").len(), 2);
    assert!(seen.events_saying("in the tool").is_empty());
    assert_eq!(
        seen.hooks(),
        [(
            Some("execute_tool"),
            "ToolCache".to_owned(),
            "wrap_tool_call".to_owned()
        )]
    );
    let short = seen.events_saying("tool call short-circuited");
    assert_eq!(short.len(), 1);
    assert_eq!(short[0].span, Some(tool));
    assert_eq!(short[0].fields["hookchain.wraps"], "ToolCache");
    assert_eq!(seen.field(tool, "error.type"), None);
}

/// A failing model call: `error.type` on its `chat` span and on the run's span.
#[tokio::test]
async fn a_failed_model_call_records_its_error_type() {
    let model = ScriptedModel::from_rule(|_| Err(ModelError::rate_limited("slow down")));
    let agent = Agent::builder(model).build().unwrap();
    let (output, seen) = traced(agent.run("hi")).await;
    assert!(matches!(output, Err(Error::Model(_))));
    let chat = seen.one("chat");
    let run = seen.one("invoke_agent");
    assert_eq!(seen.spans[chat].parent, Some(run));
    assert_eq!(seen.field(chat, "error.type"), Some("rate_limited"));
    assert_eq!(seen.field(chat, "gen_ai.usage.input_tokens"), None);
    assert_eq!(seen.field(run, "error.type"), Some("rate_limited"));
    assert_eq!(seen.field(run, "gen_ai.conversation.id"), None);
    assert_eq!(seen.field(run, "otel.name"), Some("invoke_agent agent"));
}

/// A request that names its model (a router's route) names it in `gen_ai.request.model` and in
/// the span's name.
#[tokio::test]
async fn a_routed_request_names_its_own_model() {
    use hookchain::model::ModelRouter;

    #[hook(before_model)]
    fn to_backup(request: &mut ModelRequest) {
        request.model = Some("backup".into());
    }

    let router = ModelRouter::new(ScriptedModel::new([]))
        .route("backup", ScriptedModel::new([ModelResponse::text("ok")]));
    let agent = Agent::builder(router).chain(to_backup).build().unwrap();
    let (output, seen) = traced(agent.run("hi")).await;
    output.unwrap();
    let chat = seen.one("chat");
    assert_eq!(seen.field(chat, "otel.name"), Some("chat backup"));
    assert_eq!(seen.field(chat, "gen_ai.request.model"), Some("backup"));
    assert_eq!(seen.field(chat, "gen_ai.provider.name"), Some("scripted"));
}

/// Asks before the model is called; goes on once answered.
#[hook(before_model)]
fn ask(cx: &mut Context) -> Flow {
    match cx.resume_value() {
        None => Flow::interrupt(json!({ "question": "may I?" })),
        Some(_) => Flow::Continue,
    }
}

/// A paused run and its resume are two `invoke_agent` spans of the same run id; the resume's
/// hook events leave out the members that ran before the pause.
#[tokio::test]
async fn a_resume_is_an_invoke_agent_span_of_the_same_run() {
    let model = ScriptedModel::new([ModelResponse::text("done").with_usage(Usage::new(3, 4))]);
    let agent = Agent::builder(model)
        .chain(chain![stamp, ask])
        .build()
        .unwrap();
    let (output, paused) = traced(agent.run("hi")).await;
    let output = output.unwrap();
    let checkpoint = output.checkpoint.clone().expect("paused");
    let id = output.interrupts()[0].id.clone();
    let (output, resumed) = traced(agent.resume(checkpoint, [(id, json!("yes"))])).await;
    assert_eq!(output.unwrap().text().as_deref(), Some("done"));

    let (first, second) = (paused.one("invoke_agent"), resumed.one("invoke_agent"));
    let run_id = paused.field(first, "hookchain.run.id").unwrap();
    assert_eq!(resumed.field(second, "hookchain.run.id"), Some(run_id));
    assert!(paused.named("chat").is_empty());
    assert_eq!(paused.field(first, "error.type"), None);
    assert_eq!(resumed.spans[resumed.one("chat")].parent, Some(second));
    assert_eq!(
        resumed.field(second, "gen_ai.usage.output_tokens"),
        Some("4")
    );

    let hook = |member: &str| {
        (
            Some("invoke_agent"),
            member.to_owned(),
            "before_model".to_owned(),
        )
    };
    assert_eq!(paused.hooks(), [hook("stamp"), hook("ask")]);
    assert_eq!(resumed.hooks(), [hook("ask")]);
}

/// What a payment tool takes; a field it does not know is refused.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Payment {
    amount: u32,
    card: u64,
}

/// The `WARN` of a failed tool call names the tool, the kind of failure and the fields, never a
/// value of its arguments (serde's own message quotes the value it refused).
#[tokio::test]
async fn a_failed_tool_calls_warning_never_quotes_its_arguments() {
    const CARD: &str = "4111 1111 1111 1111";
    let pay = FnTool::new("pay", "Pays.", |payment: Payment| async move {
        Ok::<_, Infallible>(payment.amount)
    });
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([
            ToolCall::new("c1", "pay", json!({ "amount": 5, "card": CARD })),
            ToolCall::new("c2", "pay", json!({ "card": 4_111_111_111_111_111_u64 })),
            ToolCall::new("c3", "pay", json!({ "amount": 5, "card": 1, CARD: 1 })),
            ToolCall::new("c4", "pay", json!({ "amount": 5, "card": 1, "note": CARD })),
        ]),
        ModelResponse::text("done"),
    ]);
    let agent = Agent::builder(model).tool(pay).build().unwrap();
    let (output, seen) = traced(agent.run("pay")).await;
    output.unwrap();
    let mut warnings: Vec<_> = seen
        .events
        .iter()
        .filter(|event| event.level <= Level::WARN)
        .collect();
    for warning in &warnings {
        let text = format!("{} {:?}", warning.message, warning.fields);
        assert!(
            !text.contains("4111"),
            "an argument's value in a log: {text}"
        );
        assert_eq!(warning.message, "tool call failed");
        assert_eq!(warning.fields["kind"], "InvalidArguments");
    }
    warnings.sort_by_key(|warning| warning.fields["call_id"].clone());
    let errors: Vec<_> = warnings
        .iter()
        .map(|w| w.fields["error"].as_str())
        .collect();
    assert_eq!(
        errors,
        [
            "invalid arguments for tool `pay`: invalid type: string, expected u64",
            "invalid arguments for tool `pay`: missing field `amount`",
            "invalid arguments for tool `pay`: unknown field",
            "invalid arguments for tool `pay`: unknown field `note`",
        ]
    );
}

/// A sub-agent's run is an `invoke_agent` span under the parent's `execute_tool` span of the
/// call it runs in, with its own `chat` spans under it: one trace, nested.
#[tokio::test(flavor = "current_thread")]
async fn a_sub_agents_invoke_agent_span_is_under_the_parents_execute_tool() {
    let child = Agent::builder(ScriptedModel::new([ModelResponse::text("found it")]))
        .name("researcher")
        .build()
        .unwrap();
    let parent = Agent::builder(ScriptedModel::new([
        ModelResponse::tool_calls([ToolCall::new("c1", "research", json!({"task": "Find it."}))]),
        ModelResponse::text("done"),
    ]))
    .name("lead")
    .tool(child.into_tool("research", "Researches.").unwrap())
    .build()
    .unwrap();
    let (output, seen) = traced(parent.run("go")).await;
    assert_eq!(output.unwrap().text().as_deref(), Some("done"));

    let runs = seen.named("invoke_agent");
    assert_eq!(runs.len(), 2, "{:#?}", seen.spans);
    let (lead, researcher) = (runs[0], runs[1]);
    assert_eq!(seen.field(lead, "gen_ai.agent.name"), Some("lead"));
    assert_eq!(
        seen.field(researcher, "gen_ai.agent.name"),
        Some("researcher")
    );
    let call = seen.one("execute_tool");
    assert_eq!(seen.spans[call].parent, Some(lead));
    assert_eq!(seen.spans[researcher].parent, Some(call));
    let chats: Vec<Option<usize>> = seen
        .named("chat")
        .into_iter()
        .map(|chat| seen.spans[chat].parent)
        .collect();
    assert_eq!(chats, [Some(lead), Some(researcher), Some(lead)]);
}
