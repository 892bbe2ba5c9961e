//! Mapped MCP tool names and schemas, sent by hookchain's OpenAI and Anthropic clients (to a
//! loopback server that keeps the request bodies): every name in the request matches the
//! provider's rule, `^[a-zA-Z0-9_-]{1,64}$`, and every schema is an object with properties.
//! Needs no MCP server: the names are those servers may use.

mod support;

use hookchain::providers::anthropic::AnthropicModel;
use hookchain::providers::openai::OpenAiModel;
use hookchain::{Message, Model, ModelRequest, ToolSpec};
use hookchain_mcp::{is_provider_safe, provider_safe_names};
use serde_json::json;
use support::capture::{ANTHROPIC_ANSWER, Capture, OPENAI_ANSWER};
use support::provider_accepts;

/// Names MCP servers may give their tools, with a prefix as a toolset adds one.
fn mcp_names() -> Vec<String> {
    let long = "read_".repeat(20);
    [
        "echo",
        "get-sum",
        "files.read",
        "files/read",
        "files_read",
        "search docs",
        "wetter-für-morgen",
        "日本語のツール",
        "",
        long.as_str(),
        &format!("{long}x"),
        "a.b.c.d",
        "srv__tool",
    ]
    .iter()
    .map(|name| format!("srv_{name}"))
    .collect()
}

fn specs() -> Vec<ToolSpec> {
    let names = mcp_names();
    let mapped = provider_safe_names(&names);
    mapped
        .into_iter()
        .map(|name| {
            ToolSpec::new(
                name,
                "A tool of an MCP server.",
                json!({"type": "object", "properties": {}}),
            )
        })
        .collect()
}

fn request() -> ModelRequest {
    ModelRequest::new(vec![Message::user("hi")]).with_tools(specs())
}

#[test]
fn the_mapping_is_one_to_one() {
    let specs = specs();
    let mut names: Vec<&str> = specs.iter().map(|spec| spec.name.as_str()).collect();
    assert!(names.iter().all(|name| is_provider_safe(name)));
    names.sort_unstable();
    names.dedup();
    assert_eq!(
        names.len(),
        mcp_names().len(),
        "two names were mapped to one"
    );
}

#[tokio::test]
async fn openai_receives_only_names_it_accepts() {
    let server = Capture::start(OPENAI_ANSWER).await;
    let model = OpenAiModel::builder("gpt-4o-mini")
        .base_url(format!("{}/v1", server.url))
        .api_key("sk-test")
        .build()
        .unwrap();
    model.invoke(request()).await.unwrap();
    let bodies = server.bodies();
    let tools = bodies[0]["tools"].as_array().expect("tools");
    assert_eq!(tools.len(), mcp_names().len());
    for tool in tools {
        let name = tool["function"]["name"].as_str().expect("a name");
        assert!(provider_accepts(name), "OpenAI refuses `{name}`");
        assert_eq!(tool["function"]["parameters"]["type"], "object");
        assert!(tool["function"]["parameters"]["properties"].is_object());
    }
}

#[tokio::test]
async fn anthropic_receives_only_names_it_accepts() {
    let server = Capture::start(ANTHROPIC_ANSWER).await;
    let model = AnthropicModel::builder("claude-sonnet-4-5")
        .base_url(format!("{}/v1", server.url))
        .api_key("sk-ant-test")
        .build()
        .unwrap();
    model.invoke(request()).await.unwrap();
    let bodies = server.bodies();
    let tools = bodies[0]["tools"].as_array().expect("tools");
    assert_eq!(tools.len(), mcp_names().len());
    for tool in tools {
        let name = tool["name"].as_str().expect("a name");
        assert!(provider_accepts(name), "Anthropic refuses `{name}`");
        assert_eq!(tool["input_schema"]["type"], "object");
    }
}
