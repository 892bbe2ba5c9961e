//! Macro-generated middleware behave exactly like hand-written ones: the same chain records the
//! same events in the same order, whichever way its members were written.

mod support;

use hookchain::prelude::*;
use hookchain::{chain, hook, middleware};
use support::{
    Log, Recorder, assert_no_dangling, calls_then_text, echo_call, echo_tool, events, logged_model,
    new_log, push,
};

/// The `#[middleware]` twin of [`Recorder`] (in its pass-through configuration): the same six
/// hooks, logging the same events under the same name.
struct Twin {
    label: &'static str,
    log: Log,
}

impl Twin {
    fn new(label: &'static str, log: &Log) -> Self {
        Twin {
            label,
            log: log.clone(),
        }
    }
}

#[middleware(name = "Recorder")]
impl Twin {
    fn log(&self, event: &str) {
        push(&self.log, format!("{}:{event}", self.label));
    }

    // Named like the trait's hooks on purpose: inherent methods of the same name are fine.
    #[hook(before_agent)]
    fn before_agent(&self) {
        self.log("before_agent");
    }

    #[hook(before_model)]
    fn before_model(&self) {
        self.log("before_model");
    }

    #[hook(wrap_model_call)]
    async fn wrap_model_call(
        &self,
        cx: &mut Context,
        request: ModelRequest,
        mut next: impl ModelNext,
    ) -> Result<ModelResponse, Error> {
        self.log("wrap_model:enter");
        let response = next.call(cx, request).await;
        self.log("wrap_model:exit");
        response
    }

    #[hook(after_model)]
    async fn after_model(&self) {
        self.log("after_model");
    }

    #[hook(wrap_tool_call)]
    async fn wrap_tool_call<N: ToolNext>(
        &self,
        cx: ToolContext<'_>,
        call: ToolCall,
        mut next: N,
    ) -> Result<ToolResult, Error> {
        let name = call.name.clone();
        self.log(&format!("wrap_tool:enter:{name}"));
        let result = Ok(next.call(cx, call).await);
        self.log(&format!("wrap_tool:exit:{name}"));
        result
    }

    #[hook(after_agent)]
    fn after_agent(&self) {
        self.log("after_agent");
    }
}

/// Runs `chain` on a two-step script (two tool calls, then text) and returns the events and
/// the history.
async fn run<C: Middleware>(log: &Log, chain: C) -> (Vec<String>, Vec<Message>) {
    let script = calls_then_text(
        [vec![echo_call("call_1", "one"), echo_call("call_2", "two")]],
        "done",
    );
    let agent = Agent::builder(logged_model(log, script))
        .tool(echo_tool(log))
        .chain(chain)
        .build()
        .unwrap();
    let output = agent.run("hi").await.unwrap();
    assert_no_dangling(&output.messages);
    (events(log), output.messages.into_inner())
}

#[tokio::test]
async fn macro_and_hand_written_chains_record_the_same_events() {
    let hand = new_log();
    let (hand_events, hand_history) = run(
        &hand,
        (
            Recorder::new("a", &hand),
            Recorder::new("b", &hand),
            Recorder::new("c", &hand),
        ),
    )
    .await;
    let macros = new_log();
    let (macro_events, macro_history) = run(
        &macros,
        chain![
            Twin::new("a", &macros),
            Twin::new("b", &macros),
            Twin::new("c", &macros)
        ],
    )
    .await;
    assert_eq!(macro_events, hand_events);
    assert_eq!(macro_history, hand_history);
    assert!(hand_events.len() > 30, "{hand_events:?}");
}

#[tokio::test]
async fn mixed_chains_record_the_same_events() {
    let hand = new_log();
    let (hand_events, _) = run(
        &hand,
        (
            Recorder::new("a", &hand),
            Recorder::new("b", &hand),
            Recorder::new("c", &hand),
        ),
    )
    .await;
    let mixed = new_log();
    let (mixed_events, _) = run(
        &mixed,
        chain![
            Recorder::new("a", &mixed),
            chain![Twin::new("b", &mixed)],
            Recorder::new("c", &mixed)
        ],
    )
    .await;
    assert_eq!(mixed_events, hand_events);
}

#[tokio::test]
async fn describe_lists_macro_and_hand_written_members_alike() {
    let log = new_log();
    let hand = (Recorder::new("a", &log), Recorder::new("b", &log));
    let macros = chain![Twin::new("a", &log), Twin::new("b", &log)];
    assert_eq!(hand.describe(), macros.describe());
    assert_eq!(
        macros.describe().order(Hook::AfterModel),
        ["Recorder", "Recorder"]
    );
}

/// Fails in `before_model` with its own error type.
#[hook(before_model)]
fn refuse() -> Result<(), std::io::Error> {
    Err(std::io::Error::other("not today"))
}

/// Fails in `wrap_model_call` with its own error type.
#[hook(wrap_model_call, name = "Gate")]
async fn gate(_request: ModelRequest) -> Result<ModelResponse, std::fmt::Error> {
    Err(std::fmt::Error)
}

#[tokio::test]
async fn errors_from_macro_hooks_name_the_middleware_and_the_hook() {
    for (chain_error, name, hook) in [
        (
            Agent::builder(ScriptedModel::new([ModelResponse::text("x")]))
                .chain(chain![refuse])
                .build()
                .unwrap()
                .run("hi")
                .await
                .unwrap_err(),
            "refuse",
            Hook::BeforeModel,
        ),
        (
            Agent::builder(ScriptedModel::new([ModelResponse::text("x")]))
                .chain(chain![gate])
                .build()
                .unwrap()
                .run("hi")
                .await
                .unwrap_err(),
            "Gate",
            Hook::WrapModelCall,
        ),
    ] {
        let Error::Middleware(error) = chain_error else {
            panic!("expected a middleware error, got {chain_error:?}");
        };
        assert_eq!(error.middleware(), Some(name));
        assert_eq!(error.hook(), Some(hook));
    }
}

/// Ends the run; declares it.
#[hook(before_model, jumps = [end])]
fn stop() -> Flow {
    Flow::end()
}

/// The flow `stop_undeclared` returns, out of the macro's sight (a `Flow::end()` written in the
/// hook's body would not compile: `#[hook]` checks the jumps it can see).
fn end_of_run() -> Flow {
    Flow::end()
}

/// Ends the run without declaring it.
#[hook(before_model)]
fn stop_undeclared() -> Flow {
    end_of_run()
}

#[tokio::test]
async fn jumps_must_be_declared_on_the_hook() {
    let model = ScriptedModel::new([]);
    let agent = Agent::builder(model).chain(chain![stop]).build().unwrap();
    let output = agent.run("hi").await.unwrap();
    assert_eq!(output.end, hookchain::EndReason::Jumped);

    let agent = Agent::builder(ScriptedModel::new([]))
        .chain(chain![stop_undeclared])
        .build()
        .unwrap();
    let error = agent.run("hi").await.unwrap_err();
    assert!(
        matches!(
            error,
            Error::UndeclaredJump {
                middleware: "stop_undeclared",
                hook: Hook::BeforeModel,
                target: Jump::End
            }
        ),
        "{error:?}"
    );
}

/// Per-run state declared on a `#[hook]` function.
#[hook(before_model, state = u32)]
fn count(calls: &mut u32, request: &mut ModelRequest) {
    *calls += 1;
    request.system_prompt = Some(format!("call {calls}"));
}

#[tokio::test]
async fn hook_state_is_per_run() {
    let model = ScriptedModel::from_rule(|_| Ok(ModelResponse::text("ok")));
    let agent = Agent::builder(model).chain(chain![count]).build().unwrap();
    agent.run("one").await.unwrap();
    agent.run("two").await.unwrap();
    let prompts: Vec<Option<String>> = agent
        .model()
        .requests()
        .into_iter()
        .map(|request| request.system_prompt)
        .collect();
    assert_eq!(prompts, [Some("call 1".into()), Some("call 1".into())]);
}
