//! The agent turn: one `Agent::run` on the scripted model with 2 model calls and 1 tool call —
//! the model asks for `ping`, the tool answers, the model answers `done` — and the same turn
//! written by hand without the framework.

use std::convert::Infallible;

use hookchain::model::{ModelSettings, ToolChoice};
use hookchain::prelude::*;
use hookchain::{FnTool, Model, Role, RunOutput, Shared, ToolRegistry};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

/// Arguments of the `ping` tool (none).
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Ping {}

/// The scripted model of the turn: calls `ping` when the last message is the user's, answers
/// `done` otherwise. Records nothing.
pub fn model() -> ScriptedModel {
    ScriptedModel::from_rule(|request| {
        let last = request.messages.last().expect("a message");
        Ok(if last.role == Role::User {
            ModelResponse::tool_calls([ToolCall::new("call_1", "ping", json!({}))])
        } else {
            ModelResponse::text("done")
        })
    })
    .without_recording()
}

/// The `ping` tool: answers `pong`.
pub fn ping() -> impl hookchain::Tool {
    FnTool::new("ping", "Answers pong.", |_: Ping| async {
        Ok::<_, Infallible>("pong")
    })
}

/// An agent with `chain` around the scripted model and the `ping` tool.
pub fn agent<C: Middleware>(chain: C) -> Agent<ScriptedModel, C> {
    Agent::builder(model()).tool(ping()).chain(chain).build()
}

/// One turn; checks that it made 2 model calls and 1 tool call.
pub async fn turn<C: Middleware>(agent: &Agent<ScriptedModel, C>) -> RunOutput {
    let output = agent.run("hi").await.expect("the run succeeds");
    debug_assert_eq!((output.model_calls, output.tool_calls), (2, 1));
    output
}

/// The model and tools of the hand-written turn.
#[derive(Debug)]
pub struct HandTurn {
    model: ScriptedModel,
    tools: ToolRegistry,
}

impl Default for HandTurn {
    fn default() -> Self {
        Self {
            model: model(),
            tools: ToolRegistry::new().with(ping()),
        }
    }
}

impl HandTurn {
    /// The same turn with no framework: build the request from the history, call the model,
    /// append its message, run its tool calls one by one and append their results, until it
    /// answers without tool calls.
    pub async fn run(&self, input: &str) -> Result<Shared<Vec<Message>>, Error> {
        // Shared with each request, as the agent does: no copy of the history per call.
        let mut messages = Shared::new(vec![Message::user(input)]);
        loop {
            let mut request = ModelRequest::new(messages.clone());
            request.tools = self.tools.shared_specs();
            request.tool_choice = ToolChoice::Auto;
            request.settings = ModelSettings::new();
            let response = self.model.invoke(request).await.map_err(Error::Model)?;
            let calls = response.message.tool_calls.clone();
            messages.push(response.message);
            if calls.is_empty() {
                return Ok(messages);
            }
            for call in &calls {
                let result = self.tools.execute(call).await;
                messages.push(Message::tool(result));
            }
        }
    }
}
