//! Variant (f): Rig (`rig-agent`/`rig-core` 0.44.0), the other Rust peer — its agent hooks
//! (`AgentHook`) around a fake model.
//!
//! Rig 0.44 moved the agent out of `rig-core` into `rig-agent`; the hook trait is
//! [`AgentHook`] (the `PromptHook` of earlier releases). Hooks are composed by
//! `AgentBuilder::add_hook`, called once per hook: the agent's `HookStack` is a
//! `Vec<Arc<dyn DynAgentHook>>`, and every event is dispatched to each hook in registration
//! order through a boxed future (`Box::pin(self.on_*(..))`). That is what a Rig user writes, so
//! it is how N hooks are composed here.
//!
//! A hook cannot be driven outside a run: `HookContext`, which every hook method takes, has
//! no public constructor. So each call here is a whole `Agent::prompt(..).await` that makes one
//! model call (the model answers text at once): the hooks fire where Rig's run loop fires them
//! (`rig-agent` `src/agent/engine.rs`): per model call `on_completion_call`,
//! `on_model_select` (synchronous), `on_dispatch` and `on_outcome` for the completion effect
//! and `on_model_turn_finished`; per run `on_run_start` and `on_run_settled`. A no-op hook is
//! still called for each of them. The run's own cost (its bus, request preparation, the
//! response's fold) is in every N; what the hooks add is `f_rig(N) − f_rig(0)`.
//!
//! The model is Rig's own scripted completion wire (`rig_core::test_utils::MockScript`,
//! feature `test-utils`) over a transport of ours, [`Rule`], which answers from a rule and
//! records nothing (Rig's `MockRuntime` pops a scripted queue and records every request): a
//! tool call while the history holds no assistant turn, then the text `done`.

use std::convert::Infallible;
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};

use rig_agent::agent::{
    AgentHook, CompletionCallAction, CompletionCallEvent, HookContext, OutcomeAction, OutcomeEvent,
    PromptResponse,
};
use rig_agent::{Agent, AgentBuilder};
use rig_core::completion::{AssistantContent, CompletionRequest, CompletionResponse, Usage};
use rig_core::driver::{Exchange, Model, Opened, Opening, Transport};
use rig_core::message::{Message, Origin, ToolName};
use rig_core::test_utils::{MOCK_API, MOCK_PROVIDER, MockFrame, MockScript};
use rig_core::tool::PortableTool;
use serde::Deserialize;

/// A hook that overrides nothing: every event is Rig's default (which the stack still calls,
/// boxed).
#[derive(Debug, Default)]
pub struct RigNoop;

impl AgentHook for RigNoop {}

/// The work of (b) and of Synaptic's `SynActive` in Rig's shape: a counter bump before the
/// model call (`on_completion_call`), a read of the response after it (`on_outcome` of the
/// completion, as Rig's own hook example reads it). The counter lives in the hook (Rig's
/// per-run state is a type map behind a mutex, `HookContext::scratchpad`, which would cost
/// more).
#[derive(Debug, Default)]
pub struct RigActive {
    count: AtomicU64,
}

impl AgentHook for RigActive {
    async fn on_completion_call(
        &self,
        _ctx: &HookContext,
        _event: CompletionCallEvent<'_>,
    ) -> CompletionCallAction {
        self.count.fetch_add(1, Ordering::Relaxed);
        CompletionCallAction::Continue
    }

    async fn on_outcome(&self, _ctx: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
        if let Some(response) = event.completion() {
            black_box(response.choice.len());
        }
        OutcomeAction::Proceed
    }
}

pub use crate::Wait;

/// The transport of the fake model: answers from a rule, records nothing.
#[derive(Clone)]
pub struct Rule {
    /// Ask for `ping` first (the agent turn), or answer text at once (variant (f)).
    tool_first: bool,
    /// Awaited before a call that asks for the tool.
    wait: Option<Wait>,
    ping: ToolName,
}

impl Rule {
    /// The answer to `request`, and whether it asks for the tool.
    fn response(&self, request: &CompletionRequest) -> (CompletionResponse, bool) {
        let answered = request
            .chat_history
            .iter()
            .any(|message| matches!(message, Message::Assistant(_)));
        let asks = self.tool_first && !answered;
        let content = if asks {
            AssistantContent::tool_call("call_1", self.ping.clone(), serde_json::json!({}))
        } else {
            AssistantContent::text("done")
        };
        let response = CompletionResponse::new(
            vec![content],
            Usage::default(),
            Origin::new(MOCK_API, MOCK_PROVIDER, ""),
            serde_json::Value::Null,
        );
        (response, asks)
    }
}

/// The reply of one response, as Rig's `MockRuntime` opens it.
fn opened(response: CompletionResponse) -> Opened<MockFrame> {
    Opened::new(futures::stream::iter([Ok(MockFrame::Response(Box::new(
        response,
    )))]))
    .with_document(serde_json::Value::Null)
}

impl Transport<MockScript> for Rule {
    fn send(&self, request: CompletionRequest, _exchange: Exchange) -> Opening<MockFrame> {
        let (response, asks) = self.response(&request);
        match &self.wait {
            Some(wait) if asks => {
                let wait = wait();
                Opening::new(async move {
                    wait.await;
                    Ok(opened(response))
                })
            }
            _ => Opening::ready(opened(response)),
        }
    }
}

/// The fake model: Rig's scripted wire over [`Rule`].
pub fn model(tool_first: bool, wait: Option<Wait>) -> Model<MockScript, Rule> {
    Model::new(
        MockScript::default(),
        Rule {
            tool_first,
            wait,
            ping: ToolName::new("ping").expect("a valid tool name"),
        },
    )
}

/// An agent of `n` hooks made by `hook` around a model that answers text at once.
pub fn agent<H: AgentHook + 'static>(n: usize, hook: impl Fn() -> H) -> Agent {
    let mut builder = AgentBuilder::new(model(false, None));
    for _ in 0..n {
        builder = builder.add_hook(hook());
    }
    builder.build()
}

/// An agent of `n` [`RigNoop`].
pub fn noop_agent(n: usize) -> Agent {
    agent(n, || RigNoop)
}

/// An agent of `n` [`RigActive`].
pub fn active_agent(n: usize) -> Agent {
    agent(n, RigActive::default)
}

/// One run of one model call through `agent`'s hooks.
pub async fn model_call(agent: &Agent) -> PromptResponse {
    agent.prompt("hi").await.expect("the run succeeds")
}

/// Arguments of the `ping` tool (none).
#[derive(Debug, Deserialize)]
pub struct PingArgs {}

/// The `ping` tool: answers `pong`.
#[derive(Debug, Default)]
pub struct Ping;

impl PortableTool for Ping {
    const NAME: &'static str = "ping";
    type Args = PingArgs;
    type Output = &'static str;
    type Error = Infallible;

    fn description(&self) -> String {
        "Answers pong.".to_owned()
    }

    fn parameters(&self) -> serde_json::Value {
        serde_json::json!({ "type": "object", "properties": {} })
    }

    async fn call(&self, _arguments: PingArgs) -> Result<&'static str, Infallible> {
        Ok("pong")
    }
}

/// The agent of the scale probe: no hook, the `ping` tool, a model that asks for it (after
/// `wait`), then answers; up to 4 model calls per run (Rig's default is 1).
pub fn turn_agent(wait: Wait) -> Agent {
    AgentBuilder::new(model(true, Some(wait)))
        .tool(Ping)
        .default_max_turns(4)
        .build()
}
