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
    Agent::builder(model())
        .tool(ping())
        .chain(chain)
        .build()
        .unwrap()
}

/// One turn; checks that it made 2 model calls and 1 tool call.
pub async fn turn<C: Middleware>(agent: &Agent<ScriptedModel, C>) -> RunOutput {
    let output = agent.run("hi").await.expect("the run succeeds");
    debug_assert_eq!((output.model_calls, output.tool_calls), (2, 1));
    output
}

/// The model and tools of the hand-written turn (the turn's scripted model, unless another is
/// given: the scale probe's waits at its gate).
#[derive(Debug)]
pub struct HandTurn<M = ScriptedModel> {
    model: M,
    tools: ToolRegistry,
}

impl Default for HandTurn {
    fn default() -> Self {
        Self::new(model())
    }
}

impl<M: Model> HandTurn<M> {
    /// The hand-written turn on `model`, with the `ping` tool.
    pub fn new(model: M) -> Self {
        Self {
            model,
            tools: ToolRegistry::new().with(ping()),
        }
    }

    /// The same turn with no framework: build the request from the history, call the model,
    /// append its message, run its tool calls one by one and append their results, until it
    /// answers without tool calls.
    pub async fn run(&self, input: &str) -> Result<Shared<Vec<Message>>, Error> {
        // Shared with each request, as the agent does: no copy of the history per call.
        let mut messages = Shared::new(vec![Message::user(input)]);
        loop {
            let response = self
                .model
                .invoke(self.request(&messages))
                .await
                .map_err(Error::from)?;
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

    /// The request of the next model call: the history shared, the tools offered.
    fn request(&self, messages: &Shared<Vec<Message>>) -> ModelRequest {
        let mut request = ModelRequest::new(messages.clone());
        request.tools = self.tools.shared_specs();
        request.tool_choice = ToolChoice::Auto;
        request.settings = ModelSettings::new();
        request
    }

    /// [`run`](Self::run) with the work of ten members written by hand, as `turn10`'s ten
    /// `Full` middleware do it: ten counter bumps before each model call, the call through ten
    /// nested pass-through `async fn`s, ten reads of its answer, and each tool call through ten
    /// nested pass-through `async fn`s. What a framework adds to the same work is `turn10`
    /// against this.
    pub async fn run_10(
        &self,
        input: &str,
        counts: &mut [u64; 10],
    ) -> Result<Shared<Vec<Message>>, Error> {
        let mut messages = Shared::new(vec![Message::user(input)]);
        loop {
            let request = self.request(&messages);
            for count in counts.iter_mut() {
                *count += 1;
            }
            let response = model_10(&self.model, request).await?;
            for _ in 0..counts.len() {
                std::hint::black_box(response.message.text().len());
            }
            let calls = response.message.tool_calls.clone();
            messages.push(response.message);
            if calls.is_empty() {
                return Ok(messages);
            }
            for call in &calls {
                let result = tool_10(&self.tools, call.clone()).await;
                messages.push(Message::tool(result));
            }
        }
    }
}

/// The innermost model call of [`HandTurn::run_10`].
async fn model_0<M: Model>(model: &M, request: ModelRequest) -> Result<ModelResponse, Error> {
    model.invoke(request).await.map_err(Error::from)
}

/// The innermost tool call of [`HandTurn::run_10`].
async fn tool_0(tools: &ToolRegistry, call: ToolCall) -> hookchain::ToolResult {
    tools.execute(&call).await
}

/// `$outer` is a pass-through wrap that awaits `$inner`, for the model and for the tool.
macro_rules! hand_wraps {
    ($model_inner:ident, $tool_inner:ident) => {};
    ($model_inner:ident, $tool_inner:ident, $model_outer:ident, $tool_outer:ident $(, $rest:ident)*) => {
        async fn $model_outer<M: Model>(
            model: &M,
            request: ModelRequest,
        ) -> Result<ModelResponse, Error> {
            $model_inner(model, request).await
        }

        async fn $tool_outer(tools: &ToolRegistry, call: ToolCall) -> hookchain::ToolResult {
            $tool_inner(tools, call).await
        }

        hand_wraps!($model_outer, $tool_outer $(, $rest)*);
    };
}

hand_wraps!(
    model_0, tool_0, model_1, tool_1, model_2, tool_2, model_3, tool_3, model_4, tool_4, model_5,
    tool_5, model_6, tool_6, model_7, tool_7, model_8, tool_8, model_9, tool_9, model_10, tool_10
);

/// The model of the history-length variants: calls `ping` until `steps` tool results follow
/// the last user message, then answers. Unlike [`ScriptedModel`] it checks and records nothing,
/// whose costs grow with the history: what grows here is the framework's.
#[derive(Debug, Clone, Copy)]
pub struct Stepper {
    /// Model calls that ask for a tool before the answer.
    pub steps: usize,
}

impl Model for Stepper {
    fn invoke(
        &self,
        request: ModelRequest,
    ) -> impl std::future::Future<Output = Result<ModelResponse, hookchain::ModelError>> + Send
    {
        let answered = request
            .messages
            .iter()
            .rev()
            .take_while(|message| message.role != Role::User)
            .filter(|message| message.role == Role::Tool)
            .count();
        std::future::ready(Ok(if answered < self.steps {
            ModelResponse::tool_calls([ToolCall::new(format!("c{answered}"), "ping", json!({}))])
        } else {
            ModelResponse::text("done")
        }))
    }
}

/// A conversation of `length` earlier messages (user and assistant turns), then the user's
/// `go`.
pub fn history(length: usize) -> Vec<Message> {
    let mut messages: Vec<Message> = (0..length)
        .map(|i| {
            if i % 2 == 0 {
                Message::user(format!("question {i} about something the user needs"))
            } else {
                Message::assistant(format!("answer {i}, a sentence or two of text"))
            }
        })
        .collect();
    messages.push(Message::user("go"));
    messages
}

/// One run on `history`, making `steps` model calls with a tool call each, then the answer.
pub async fn run_on_history<C: Middleware>(agent: &Agent<Stepper, C>, history: &[Message]) {
    let output = agent.run(history.to_vec()).await.expect("the run succeeds");
    debug_assert_eq!(output.text().as_deref(), Some("done"));
}

/// An agent with `chain` around a [`Stepper`] of `steps` and the `ping` tool.
pub fn stepping_agent<C: Middleware>(steps: usize, chain: C) -> Agent<Stepper, C> {
    Agent::builder(Stepper { steps })
        .tool(ping())
        .chain(chain)
        .build()
        .unwrap()
}
