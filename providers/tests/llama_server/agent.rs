//! The agent loop against llama-server on each wire: the model calls the tool, the tool runs,
//! its call and result go back in the wire's own terms, the model answers.

use hookchain::agent::EndReason;
use hookchain::model::{ModelSettings, ToolChoice};
use hookchain::{Agent, Model, ModelRequest, Role, chain, hook, tool};
use schemars::JsonSchema;
use serde::Deserialize;

use super::server::LlamaServer;

/// A city the tool knows. An enum, not a string: the grammar llama.cpp builds from the
/// schema then leaves the random model a word to pick, not a string to end by chance.
#[derive(Debug, Deserialize, JsonSchema)]
enum City {
    Paris,
    Lisbon,
}

/// The weather in a city.
#[tool]
async fn get_weather(
    /// The city.
    city: City,
) -> String {
    format!("18 degrees and sunny in {city:?}")
}

/// Steers the model through one round: the first call must call a tool, the one after the
/// tool's result must not (the model calls tools whenever it may: see make_model.py). It is
/// given no tools then, rather than `ToolChoice::None`: llama-server's `/v1/messages` drops
/// Anthropic's `{"type": "none"}` (its server-chat.cpp maps only `auto`, `any` and `tool`).
#[hook(before_model)]
fn one_round(request: &mut ModelRequest) {
    let answered = request
        .messages
        .iter()
        .any(|message| message.role == Role::Tool);
    if answered {
        request.tools = Vec::new().into();
    } else {
        request.tool_choice = ToolChoice::Required;
    }
    request.settings = ModelSettings::new().max_tokens(128).temperature(0.0);
}

async fn one_round_on(wire: &str, model: impl Model + 'static) {
    let agent = Agent::builder(model)
        .system_prompt("You are a weather bot.")
        .tool(get_weather)
        .chain(chain![one_round])
        .max_steps(4)
        .build()
        .expect("the agent builds");
    let output = agent
        .run("What is the weather in Paris?")
        .await
        .unwrap_or_else(|error| panic!("{wire}: the run fails: {error}"));
    assert_eq!(output.tool_calls, 1, "{wire}: {output:?}");
    assert_eq!(output.model_calls, 2, "{wire}: {output:?}");
    // The last answer is text, ended by the model or by max_tokens.
    assert!(
        matches!(output.end, EndReason::Finished | EndReason::Truncated),
        "{wire}: {output:?}"
    );
    let result = output
        .messages
        .iter()
        .find(|message| message.role == Role::Tool)
        .expect("the tool's result is in the history");
    assert!(
        result.text().starts_with("18 degrees and sunny in "),
        "{wire}: {result:?}"
    );
    assert!(
        output.usage.is_known() && output.usage.output_tokens > 0,
        "{wire}: {output:?}"
    );
}

#[tokio::test]
async fn the_agent_loop_runs_on_every_wire_plain_and_streamed() {
    let Some(server) = LlamaServer::start("agent loop").await else {
        return;
    };
    let (chat, responses, anthropic) = super::models(&server);
    for model in chat {
        one_round_on("chat completions", model).await;
    }
    for model in responses {
        one_round_on("responses", model).await;
    }
    for model in anthropic {
        one_round_on("anthropic", model).await;
    }
}
