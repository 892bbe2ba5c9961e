//! One agent, five wires: the application's agent is written once — its prompt, its tool, its
//! middleware — and runs on Chat Completions, the Responses API, Anthropic Messages, Gemini and
//! Bedrock Converse; each test below differs from the others by the one line that builds the
//! model. Each runs the whole tool loop (call, result, answer) plain and streamed against a
//! loopback server replaying the wire's recorded transcripts, and checks what each wire was
//! sent: the tool's result, and the prompt caching the middleware asked for, in the wire's
//! own terms.

mod support;

use hookchain::builtin::PromptCaching;
use hookchain::{Agent, Model, chain};
use hookchain_providers::anthropic::AnthropicModel;
use hookchain_providers::bedrock::BedrockModel;
use hookchain_providers::gemini::GeminiModel;
use hookchain_providers::openai::OpenAiModel;
use hookchain_providers::responses::ResponsesModel;
use support::{Reply, Server, get_weather, guard, transcript};

/// The application's agent, written once for any model: asks its question, returns the answer.
async fn ask(model: impl Model + 'static) -> String {
    let agent = Agent::builder(model)
        .system_prompt("You are a weather bot.")
        .tool(get_weather)
        .chain(chain![PromptCaching::new().key("tenant-7")])
        .build()
        .expect("the agent builds");
    let output = agent
        .run("What is the weather in Paris?")
        .await
        .expect("the run succeeds");
    output.text().unwrap_or_default().into_owned()
}

/// How a wire's recorded answers are replayed: the call, then the final answer, plain then
/// streamed; and what its requests must hold once the middleware asked for caching.
struct Wire {
    plain: [&'static str; 2],
    streamed: [&'static str; 2],
    /// The streamed replies are AWS's event stream (Bedrock), not server-sent events.
    event_stream: bool,
    /// The wire's own form of a cache request, if it has one.
    caching: Option<&'static str>,
}

/// Runs the agent on the model `model` makes (for the server's URL, streaming or not), plain
/// then streamed, and checks the answer and what was sent.
async fn the_agent_runs_on<M: Model + 'static>(wire: Wire, model: impl Fn(String, bool) -> M) {
    guard(async {
        let streamed = |path: &str| {
            if wire.event_stream {
                Reply::event_stream(&transcript(path))
            } else {
                Reply::sse(transcript(path))
            }
        };
        let server = Server::start([
            Reply::json(200, transcript(wire.plain[0])),
            Reply::json(200, transcript(wire.plain[1])),
            streamed(wire.streamed[0]),
            streamed(wire.streamed[1]),
        ])
        .await;
        for streaming in [false, true] {
            let answer = ask(model(server.url(""), streaming)).await;
            assert_eq!(
                answer, "It is 18°C and sunny in Paris.",
                "streaming: {streaming}"
            );
        }
        let received = server.received();
        assert_eq!(received.len(), 4);
        for second in [&received[1], &received[3]] {
            let sent = second.json.to_string();
            assert!(
                sent.contains("18 degrees celsius and sunny in Paris"),
                "the tool's result: {sent}"
            );
            if let Some(caching) = wire.caching {
                assert!(sent.contains(caching), "caching as `{caching}`: {sent}");
            }
            // No wire is sent another's form of caching.
            for form in ["prompt_cache_key", "cache_control", "cachePoint"] {
                let own = wire.caching.is_some_and(|caching| caching.contains(form));
                assert_eq!(sent.contains(form), own, "`{form}` in {sent}");
            }
        }
    })
    .await;
}

#[tokio::test]
async fn chat_completions() {
    let wire = Wire {
        plain: ["openai/tool_call.json", "openai/final.json"],
        streamed: ["openai/tool_call.sse", "openai/final.sse"],
        event_stream: false,
        caching: Some(r#""prompt_cache_key":"tenant-7""#),
    };
    the_agent_runs_on(wire, |url, streaming| {
        OpenAiModel::builder("gpt-4.1")
            .base_url(url + "/v1")
            .streaming(streaming)
            .build()
            .unwrap()
    })
    .await;
}

#[tokio::test]
async fn responses() {
    let wire = Wire {
        plain: ["responses/tool_call.json", "responses/final.json"],
        streamed: ["responses/tool_call.sse", "responses/final.sse"],
        event_stream: false,
        caching: Some(r#""prompt_cache_key":"tenant-7""#),
    };
    the_agent_runs_on(wire, |url, streaming| {
        ResponsesModel::builder("o4-mini")
            .base_url(url + "/v1")
            .streaming(streaming)
            .build()
            .unwrap()
    })
    .await;
}

#[tokio::test]
async fn anthropic_messages() {
    let wire = Wire {
        plain: ["anthropic/tool_use.json", "anthropic/final.json"],
        streamed: ["anthropic/tool_use.sse", "anthropic/final.sse"],
        event_stream: false,
        caching: Some(r#""cache_control":{"type":"ephemeral"}"#),
    };
    the_agent_runs_on(wire, |url, streaming| {
        AnthropicModel::builder("claude-sonnet-4-5")
            .base_url(url + "/v1")
            .streaming(streaming)
            .build()
            .unwrap()
    })
    .await;
}

#[tokio::test]
async fn gemini() {
    let wire = Wire {
        plain: ["gemini/tool_call.json", "gemini/final.json"],
        streamed: ["gemini/tool_call.sse", "gemini/final.sse"],
        event_stream: false,
        // Gemini caches implicitly: nothing to ask for.
        caching: None,
    };
    the_agent_runs_on(wire, |url, streaming| {
        GeminiModel::builder("gemini-2.5-flash")
            .base_url(url + "/v1beta")
            .streaming(streaming)
            .build()
            .unwrap()
    })
    .await;
}

#[tokio::test]
async fn bedrock_converse() {
    let wire = Wire {
        plain: ["bedrock/tool_use.json", "bedrock/final.json"],
        streamed: ["bedrock/tool_use.events", "bedrock/final.events"],
        event_stream: true,
        caching: Some(r#"{"cachePoint":{"type":"default"}}"#),
    };
    the_agent_runs_on(wire, |url, streaming| {
        BedrockModel::builder("us.anthropic.claude-sonnet-4-20250514-v1:0")
            .base_url(url)
            .streaming(streaming)
            .build()
            .unwrap()
    })
    .await;
}
