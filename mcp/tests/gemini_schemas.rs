//! Every tool schema of real MCP servers — the reference `@modelcontextprotocol/server-everything`
//! (npm, zod schemas), and the Python `mcp-server-time` and `mcp-server-git` (PyPI, pydantic
//! schemas) — mapped with `gemini_schema` is within the subset Gemini's function declarations
//! accept, and keeps its properties and their `required`.

mod support;

use hookchain::Tool;
use hookchain::tool::{gemini_schema, gemini_schema_problems};
use hookchain_mcp::{McpServer, McpToolset};
use serde_json::Value;
use support::guard;
use support::servers::{GitRepo, everything_stdio, git_server, time_server};

/// Maps each tool schema of `server`'s tools and checks it; returns how many of the servers'
/// own schemas Gemini would refuse.
async fn check_every_schema(server: McpServer) -> usize {
    let toolset = McpToolset::connect([server]).await.unwrap();
    assert!(!toolset.tools().is_empty(), "the server offers no tools");
    let mut refused = 0;
    for tool in &toolset {
        let spec = tool.spec();
        let gemini = gemini_schema(&spec.parameters);
        let problems = gemini_schema_problems(&gemini);
        assert!(
            problems.is_empty(),
            "{}: {problems:#?}\nfrom {:#}\nto {gemini:#}",
            spec.name,
            spec.parameters
        );
        assert_eq!(
            names(&spec.parameters["properties"]),
            names(&gemini["properties"]),
            "{}: the properties changed",
            spec.name
        );
        assert_eq!(
            spec.parameters.get("required").unwrap_or(&Value::Null),
            gemini.get("required").unwrap_or(&Value::Null),
            "{}: `required` changed",
            spec.name
        );
        if !gemini_schema_problems(&spec.parameters).is_empty() {
            refused += 1;
        }
    }
    toolset.close().await;
    refused
}

/// The property names of a `properties` object (none when it is absent or empty).
fn names(properties: &Value) -> Vec<&str> {
    properties
        .as_object()
        .map(|properties| properties.keys().map(String::as_str).collect())
        .unwrap_or_default()
}

#[tokio::test]
async fn server_everything() {
    let refused = guard(check_every_schema(everything_stdio("everything"))).await;
    // Its zod schemas carry `$schema` and `additionalProperties`: the mapping had work.
    assert!(refused > 0, "Gemini would take every schema as it is");
}

#[tokio::test]
async fn mcp_server_time() {
    guard(check_every_schema(time_server())).await;
}

#[tokio::test]
async fn mcp_server_git() {
    let repo = GitRepo::new();
    guard(check_every_schema(git_server(&repo.path))).await;
}
