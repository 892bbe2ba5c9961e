//! The providers against a real server: llama.cpp's `llama-server`, serving a tiny model of
//! random weights on Chat Completions, the Responses API and Anthropic Messages. The loopback
//! suites replay recorded answers; this one checks that what a real implementation of each wire
//! sends today is read: plain and streamed text, a forced tool call (reasoning, text, then the
//! call), the agent loop (the call and its result sent back), structured output (Chat
//! Completions), a prompt too long for the context.
//!
//! The model's words are noise (its weights are random, but for a few planted rules that make
//! it call tools: see `llama_server/make_model.py`): the tests check the protocol — an answer
//! arrives, its stop reason is the one the call must have, usage is reported, a streamed
//! answer assembles to what its events say, a forced call's arguments are JSON of the tool's
//! schema (llama.cpp constrains them with a grammar built from it) — never the text.
//!
//! Skipped, with a notice, unless `HOOKCHAIN_LLAMA_SERVER` (the `llama-server` binary) and
//! `HOOKCHAIN_LLAMA_MODEL` (the GGUF model), absolute paths, are set; not run in CI (the build
//! takes ~10 minutes). To run it, build both (llama.cpp from PyPI's `llama-cpp-python` sdist,
//! the model written by a script; nothing downloaded but from PyPI) into `target/llama-server`
//! (or `$HOOKCHAIN_LLAMA_DIR`), then run the tests against them, from the repository's root:
//!
//! ```sh
//! providers/tests/llama_server/build.sh --clean
//! HOOKCHAIN_LLAMA_SERVER=$PWD/target/llama-server/bin/llama-server \
//!   HOOKCHAIN_LLAMA_MODEL=$PWD/target/llama-server/tiny.gguf \
//!   cargo test -p hookchain-providers --all-features --test llama_server -- --nocapture
//! ```
//!
//! Each test starts a server of its own on a free loopback port and kills it when it ends;
//! `HOOKCHAIN_LLAMA_LOG=1` shows the servers' logs.

#[path = "llama_server/agent.rs"]
mod agent;
#[path = "llama_server/server.rs"]
mod server;

use futures::StreamExt;
use hookchain::model::{ModelEvent, ModelSettings, ResponseAssembler, ResponseFormat, ToolChoice};
use hookchain::{Model, ModelErrorKind, ModelRequest, ModelResponse, StopReason, ToolSpec};
use hookchain_providers::anthropic::AnthropicModel;
use hookchain_providers::openai::OpenAiModel;
use hookchain_providers::responses::ResponsesModel;
use serde_json::json;
use server::LlamaServer;

/// The model name sent; llama-server serves its one model whatever the name.
const NAME: &str = "tiny";

/// A short answer: the model never ends a text on its own, so it ends at `max_tokens`.
fn chat() -> ModelRequest {
    ModelRequest::new(vec![hookchain::Message::user("Hello!")])
        .with_system_prompt("You are a test.")
        .with_settings(ModelSettings::new().max_tokens(8).temperature(0.0))
}

/// A tool the model must call. Its one argument is an enum, so that the grammar llama.cpp
/// derives from the schema leaves the random model only a few tokens to write: an open string
/// would let it write until `max_tokens` (it closes the quote with the odds of one token in
/// the vocabulary).
fn forced_call(choice: ToolChoice) -> ModelRequest {
    let schema = json!({
        "type": "object",
        "properties": {"city": {"type": "string", "enum": ["Paris", "Lisbon"]}},
        "required": ["city"],
        "additionalProperties": false,
    });
    ModelRequest::new(vec![hookchain::Message::user(
        "What is the weather in Paris?",
    )])
    .with_tools(vec![ToolSpec::new(
        "get_weather",
        "The weather in a city.",
        schema,
    )])
    .with_tool_choice(choice)
    .with_settings(ModelSettings::new().max_tokens(128).temperature(0.0))
}

/// What a plain-text answer must show: the stop reason of an answer `max_tokens` cut (the
/// model never ends a text: see make_model.py), known usage that counts the prompt and at most
/// `max_tokens` of output, no tool call.
fn check_text(what: &str, response: &ModelResponse, cut: StopReason, max_tokens: u64) {
    assert_eq!(response.stop_reason, cut, "{what}: {response:?}");
    let usage = response.usage;
    assert!(usage.is_known(), "{what}: no usage: {response:?}");
    assert!(usage.input_tokens > 0, "{what}: {usage:?}");
    assert!(
        (1..=max_tokens).contains(&usage.output_tokens),
        "{what}: {usage:?}"
    );
    assert!(
        response.message.tool_calls.is_empty(),
        "{what}: {response:?}"
    );
}

/// What a forced call must show: reasoning, text, then one call of the tool (the model ends
/// its turn after the call, see make_model.py) with an id and arguments of its schema: three
/// items of one answer.
fn check_call(what: &str, response: &ModelResponse) {
    assert_eq!(
        response.stop_reason,
        StopReason::ToolUse,
        "{what}: {response:?}"
    );
    assert!(response.usage.is_known(), "{what}: {response:?}");
    let reasoning = response.message.content.reasoning();
    assert!(
        reasoning.is_some_and(|text| !text.is_empty()),
        "{what}: no reasoning: {response:?}"
    );
    assert!(!response.message.text().is_empty(), "{what}: {response:?}");
    let calls = &response.message.tool_calls;
    assert_eq!(calls.len(), 1, "{what}: {response:?}");
    for call in calls {
        assert_eq!(call.name, "get_weather", "{what}: {call:?}");
        assert!(!call.id.is_empty(), "{what}: {call:?}");
        let city = call.arguments["city"].as_str();
        assert!(matches!(city, Some("Paris" | "Lisbon")), "{what}: {call:?}");
    }
}

/// The model's event stream, and the answer it assembles to; the stream must end with a
/// finish, the events of each block in order (the assembler checks that).
async fn streamed(model: &impl Model, request: ModelRequest) -> (Vec<ModelEvent>, ModelResponse) {
    let events: Vec<ModelEvent> = model
        .stream(request)
        .map(|event| event.expect("no error in the stream"))
        .collect()
        .await;
    assert!(
        events
            .iter()
            .any(|event| matches!(event, ModelEvent::Finish { .. })),
        "{events:?}"
    );
    let mut assembler = ResponseAssembler::new();
    for event in &events {
        assembler.push(event).expect("events in order");
    }
    let response = assembler.finish().expect("a complete answer");
    (events, response)
}

/// Runs a wire's checks on `plain` and `streaming` models of it: a short text answer (whose
/// stop reason, cut by `max_tokens`, is `cut`), then the forced call of `choice`, each plain,
/// streamed by `invoke`, and as events.
async fn the_wire_works<M: Model>(
    wire: &str,
    [plain, streaming]: [M; 2],
    cut: StopReason,
    choice: ToolChoice,
) {
    let text = plain.invoke(chat()).await.expect("a plain answer");
    check_text(&format!("{wire} plain"), &text, cut, 8);
    let text_streamed = streaming.invoke(chat()).await.expect("a streamed answer");
    check_text(&format!("{wire} streamed"), &text_streamed, cut, 8);
    // Greedy decoding of the same prompt: the streamed answer is the plain one, assembled.
    assert_eq!(text_streamed.message.text(), text.message.text(), "{wire}");
    assert_eq!(text_streamed.stop_reason, text.stop_reason, "{wire}");
    let (_, events) = streamed(&plain, chat()).await;
    check_text(&format!("{wire} events"), &events, cut, 8);

    let call = plain
        .invoke(forced_call(choice.clone()))
        .await
        .expect("a plain tool call");
    check_call(&format!("{wire} plain call"), &call);
    let call_streamed = streaming
        .invoke(forced_call(choice.clone()))
        .await
        .expect("a streamed tool call");
    check_call(&format!("{wire} streamed call"), &call_streamed);
    // The same answer but for the call's id (the server draws one per answer).
    let same = |response: &ModelResponse| {
        let message = &response.message;
        let calls: Vec<_> = message
            .tool_calls
            .iter()
            .map(|call| (call.name.clone(), call.arguments.clone()))
            .collect();
        (
            message.content.reasoning().map(|text| text.into_owned()),
            message.text().into_owned(),
            calls,
        )
    };
    assert_eq!(same(&call_streamed), same(&call), "{wire}");
    let (events, assembled) = streamed(&plain, forced_call(choice)).await;
    check_call(&format!("{wire} call events"), &assembled);
    assert!(
        events
            .iter()
            .any(|event| matches!(event, ModelEvent::ToolCallDelta { .. })),
        "{wire}: the arguments come in deltas: {events:?}"
    );
}

/// The three wires' models on `server`, plain and streaming.
fn models(server: &LlamaServer) -> ([OpenAiModel; 2], [ResponsesModel; 2], [AnthropicModel; 2]) {
    let url = server.url("/v1");
    let chat = |streaming| {
        OpenAiModel::builder(NAME)
            .base_url(&url)
            .streaming(streaming)
            .build()
            .expect("client builds")
    };
    let responses = |streaming| {
        ResponsesModel::builder(NAME)
            .base_url(&url)
            .streaming(streaming)
            .build()
            .expect("client builds")
    };
    let anthropic = |streaming| {
        AnthropicModel::builder(NAME)
            .base_url(&url)
            .streaming(streaming)
            .build()
            .expect("client builds")
    };
    (
        [chat(false), chat(true)],
        [responses(false), responses(true)],
        [anthropic(false), anthropic(true)],
    )
}

// `ToolChoice::Required` only: this llama.cpp takes no named tool choice. Chat Completions and
// the Responses API read `tool_choice` as a string, and an object (`{"type": "function", ..}`)
// falls back to `auto` with a warning in the server's log; `/v1/messages` turns Anthropic's
// `{"type": "tool", "name": ..}` into `required` (any tool).

#[tokio::test]
async fn chat_completions_answer_and_call_a_tool_plain_and_streamed() {
    let Some(server) = LlamaServer::start("chat_completions").await else {
        return;
    };
    let (chat, _, _) = models(&server);
    the_wire_works(
        "chat completions",
        chat,
        StopReason::MaxTokens,
        ToolChoice::Required,
    )
    .await;
}

#[tokio::test]
async fn responses_answer_and_call_a_tool_plain_and_streamed() {
    let Some(server) = LlamaServer::start("responses").await else {
        return;
    };
    let (_, responses, _) = models(&server);
    // llama.cpp says `completed` of an answer `max_output_tokens` cut (never `incomplete`).
    the_wire_works(
        "responses",
        responses,
        StopReason::EndTurn,
        ToolChoice::Required,
    )
    .await;
}

#[tokio::test]
async fn anthropic_messages_answer_and_call_a_tool_plain_and_streamed() {
    let Some(server) = LlamaServer::start("anthropic").await else {
        return;
    };
    let (_, _, anthropic) = models(&server);
    the_wire_works(
        "anthropic",
        anthropic,
        StopReason::MaxTokens,
        ToolChoice::Required,
    )
    .await;
}

/// Structured output on Chat Completions: llama.cpp constrains the answer to the schema with a
/// grammar, so it is JSON of the schema and the model ends it. (The Responses API's
/// `text.format` is not read by this llama.cpp: it answers free text; not tested.)
#[tokio::test]
async fn chat_completions_structured_output_follows_the_schema() {
    let Some(server) = LlamaServer::start("structured output").await else {
        return;
    };
    let schema = json!({
        "type": "object",
        "properties": {"sky": {"type": "string", "enum": ["sunny", "rainy"]}},
        "required": ["sky"],
        "additionalProperties": false,
    });
    let request = ModelRequest::new(vec![hookchain::Message::user("The weather?")])
        .with_response_format(ResponseFormat::new("forecast", schema))
        .with_settings(ModelSettings::new().max_tokens(128).temperature(0.0));
    let (chat, _, _) = models(&server);
    for model in chat {
        let response = model.invoke(request.clone()).await.expect("an answer");
        assert_eq!(response.stop_reason, StopReason::EndTurn, "{response:?}");
        let answer: serde_json::Value =
            serde_json::from_str(&response.message.text()).expect("JSON");
        assert!(
            matches!(answer["sky"].as_str(), Some("sunny" | "rainy")),
            "{answer}"
        );
    }
}

/// A server that asks for a key: each wire sends it its own way (a bearer token; Anthropic's
/// `x-api-key`), llama-server takes both, and a wrong key is an authentication error.
#[tokio::test]
async fn the_key_goes_as_each_wire_sends_it_and_a_wrong_one_is_refused() {
    const KEY: &str = "sk-llama-test-0123456789";
    let Some(server) = LlamaServer::start_with("api key", &["--api-key", KEY]).await else {
        return;
    };
    let url = server.url("/v1");
    for key in [KEY, "sk-wrong"] {
        let answers = [
            OpenAiModel::builder(NAME)
                .base_url(&url)
                .api_key(key)
                .build()
                .expect("client builds")
                .invoke(chat())
                .await,
            ResponsesModel::builder(NAME)
                .base_url(&url)
                .api_key(key)
                .build()
                .expect("client builds")
                .invoke(chat())
                .await,
            AnthropicModel::builder(NAME)
                .base_url(&url)
                .api_key(key)
                .build()
                .expect("client builds")
                .invoke(chat())
                .await,
        ];
        for (which, answer) in answers.into_iter().enumerate() {
            match answer {
                Ok(_) => assert_eq!(key, KEY, "#{which}: a wrong key was taken"),
                Err(error) => {
                    assert_eq!(key, "sk-wrong", "#{which}: the key was refused: {error}");
                    assert_eq!(error.kind(), ModelErrorKind::Authentication, "#{which}");
                    assert_eq!(error.status(), Some(401), "#{which}");
                }
            }
        }
    }
}

/// A prompt longer than the server's context is an error of its own kind, on every wire (the
/// three share llama.cpp's error body: `exceed_context_size_error`).
#[tokio::test]
async fn a_prompt_too_long_is_context_length_exceeded_on_every_wire() {
    let Some(server) = LlamaServer::start("context length").await else {
        return;
    };
    // Some 5000 tokens (one a byte, but for a few merges) for a context of 4096.
    let long = || ModelRequest::new(vec![hookchain::Message::user("word ".repeat(1000))]);
    let (chat, responses, anthropic) = models(&server);
    let errors = [
        chat[0].invoke(long()).await,
        chat[1].invoke(long()).await,
        responses[0].invoke(long()).await,
        responses[1].invoke(long()).await,
        anthropic[0].invoke(long()).await,
        anthropic[1].invoke(long()).await,
    ];
    for (which, error) in errors.into_iter().enumerate() {
        let error = error.expect_err("too long for the context");
        assert_eq!(
            error.kind(),
            ModelErrorKind::ContextLengthExceeded,
            "#{which}: {error}"
        );
        assert_eq!(error.status(), Some(400), "#{which}: {error}");
    }
}
