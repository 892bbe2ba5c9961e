//! The agent loop on Chat Completions against llama-server: the model calls the tool, the
//! tool runs, its result goes back, the model answers.

use hookchain::agent::EndReason;
use hookchain::model::{ModelSettings, ToolChoice};
use hookchain::{Agent, ModelRequest, Role, chain, hook, tool};
use hookchain_providers::openai::OpenAiModel;
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

/// Steers the random model through one round: the first call must call a tool, the one after
/// the tool's result must not (else it would call tools until the step limit).
#[hook(before_model)]
fn one_round(request: &mut ModelRequest) {
    let answered = request
        .messages
        .iter()
        .any(|message| message.role == Role::Tool);
    request.tool_choice = if answered {
        ToolChoice::None
    } else {
        ToolChoice::Required
    };
    request.settings = ModelSettings::new().max_tokens(128).temperature(0.0);
}

async fn one_round_on(model: OpenAiModel) {
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
        .expect("the run succeeds");
    assert!(output.tool_calls >= 1, "{output:?}");
    assert_eq!(output.model_calls, 2, "{output:?}");
    // The last answer is text, ended by the model or by max_tokens.
    assert!(
        matches!(output.end, EndReason::Finished | EndReason::Truncated),
        "{output:?}"
    );
    let result = output
        .messages
        .iter()
        .find(|message| message.role == Role::Tool)
        .expect("the tool's result is in the history");
    assert!(
        result.text().starts_with("18 degrees and sunny in "),
        "{result:?}"
    );
    assert!(output.usage.is_known() && output.usage.output_tokens > 0, "{output:?}");
}

#[tokio::test]
async fn the_agent_loop_runs_on_chat_completions_plain_and_streamed() {
    let Some(server) = LlamaServer::start("agent loop").await else {
        return;
    };
    for streaming in [false, true] {
        let model = OpenAiModel::builder(super::NAME)
            .base_url(server.url("/v1"))
            .streaming(streaming)
            .build()
            .expect("client builds");
        one_round_on(model).await;
    }
}
