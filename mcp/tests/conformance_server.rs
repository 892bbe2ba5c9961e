//! MCP's official conformance suite (`@modelcontextprotocol/conformance`, pinned by `.ci/run`)
//! against `McpToolServer`, at each revision (2025-11-25 and 2026-07-28): an agent whose tools
//! are the suite's fixtures (`test_simple_text`, `test_image_content`, …, as the suite names
//! them), served over streamable HTTP on loopback. The suite's command is `$MCP_CONFORMANCE`,
//! or where `.ci/run` installs it; the baselines of accepted failures,
//! `conformance/server-<revision>.yml`, give each its reason, and an entry that starts passing
//! fails the run, as an unexpected failure does. Each scenario's checks are written to the
//! temporary directory (`hookchain-mcp-conformance-server-<pid>-<revision>`).

#[path = "conformance_fixtures/input_required.rs"]
mod input_required;
mod support;
#[path = "conformance_fixtures/tasks.rs"]
mod tasks;

use std::process::Command;
use std::time::Duration;

use hookchain::interrupt::InMemoryCheckpointer;
use hookchain::message::ContentPart;
use hookchain::prelude::*;
use hookchain::{Content, LogLevel, Tool, ToolError, ToolSpec};
use hookchain_mcp::{McpToolServer, RequestStateCodec, ServedPauses};
use serde_json::{Value, json};

/// A 1×1 PNG, base64.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

/// A WAV header, base64: the suite's reference server's clip.
const WAV: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

/// One of the suite's fixture tools, by its name.
struct Fixture {
    name: &'static str,
    parameters: Value,
}

impl Fixture {
    fn new(name: &'static str) -> Self {
        Fixture {
            name,
            parameters: json!({ "type": "object", "properties": {} }),
        }
    }
}

impl Tool for Fixture {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            self.name,
            format!("The conformance suite's `{}`.", self.name),
            self.parameters.clone(),
        )
    }

    async fn call(&self, cx: ToolContext<'_>, arguments: Value) -> Result<Content, ToolError> {
        let image = || ContentPart::image_base64("image/png", PNG);
        Ok(match self.name {
            "test_simple_text" => "This is a simple text response for testing.".into(),
            "test_image_content" => Content::from(vec![image()]),
            "test_audio_content" => Content::from(ContentPart::audio_base64("audio/wav", WAV)),
            "test_embedded_resource" => Content::from(ContentPart::resource_text(
                "test://embedded-resource",
                "text/plain",
                "This is an embedded resource content.",
            )),
            "test_multiple_content_types" => Content::from(vec![
                ContentPart::text("Multiple content types test:"),
                image(),
                ContentPart::resource_text(
                    "test://mixed-content-resource",
                    "application/json",
                    json!({"test": "data", "value": 123}).to_string(),
                ),
            ]),
            "test_error_handling" => {
                return Err(ToolError::for_model(
                    self.name,
                    "This tool intentionally returns an error for testing",
                ));
            }
            "test_tool_with_progress" => {
                for progress in [0.0, 50.0, 100.0] {
                    cx.progress(progress, Some(100.0), None);
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                "Progress completed".into()
            }
            "test_tool_with_logging" | "test_logging_tool" => {
                for line in [
                    "Tool execution started",
                    "Tool processing data",
                    "Tool execution completed",
                ] {
                    cx.log(LogLevel::Info, line);
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                "Logging completed".into()
            }
            "json_schema_echo" => Content::from(vec![ContentPart::json(arguments)]),
            _ => "ok".into(),
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_conformance_suite_passes_against_the_server_but_its_baseline() {
    let Some(conformance) = support::conformance::suite() else {
        return;
    };
    let mut builder = Agent::builder(ScriptedModel::new([]));
    for name in [
        "test_simple_text",
        "test_image_content",
        "test_audio_content",
        "test_embedded_resource",
        "test_multiple_content_types",
        "test_error_handling",
        "test_tool_with_progress",
        "test_tool_with_logging",
        "test_logging_tool",
    ] {
        builder = builder.tool(Fixture::new(name));
    }
    for name in input_required::NAMES {
        builder = builder.tool(input_required::InputRequired(name));
    }
    for name in tasks::NAMES {
        builder = builder.tool(tasks::TaskFixture(name));
    }
    let agent = builder
        .tool(Fixture {
            name: "json_schema_2020_12_tool",
            // The suite's own fixture (its reference server's), every 2020-12 keyword kept.
            parameters: json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "$defs": {"address": {
                    "$anchor": "addressDef",
                    "type": "object",
                    "properties": {"street": {"type": "string"}, "city": {"type": "string"}}
                }},
                "properties": {
                    "name": {"type": "string"},
                    "address": {"$ref": "#/$defs/address"},
                    "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                    "phone": {"type": "string"},
                    "email": {"type": "string"}
                },
                "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
                "if": {
                    "properties": {"contactMethod": {"const": "phone"}},
                    "required": ["contactMethod"]
                },
                "then": {"required": ["phone"]},
                "else": {"required": ["email"]},
                "additionalProperties": false
            }),
        })
        .tool(Fixture {
            name: "test_header_params",
            // A parameter the client mirrors into a header (`Mcp-Param-Region`).
            parameters: json!({
                "type": "object",
                "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}
            }),
        })
        .chain(hookchain::chain![tasks::ask_name_first])
        .build()
        .unwrap();
    // The calls that wait for their client's answers kept here (input-required results).
    let codec =
        RequestStateCodec::new_with_keyring("conformance", [("conformance", [9u8; 32])]).unwrap();
    let pauses = ServedPauses::new(InMemoryCheckpointer::new(), codec);
    let server = McpToolServer::new(std::sync::Arc::new(agent))
        .allow_anonymous()
        .pauses(pauses)
        .tasks(tasks::served());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!(
        "http://localhost:{}/mcp",
        listener.local_addr().unwrap().port()
    );
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(server.serve_http(listener, async {
        let _ = stopped.await;
    }));
    let mut failed = Vec::new();
    for revision in support::conformance::REVISIONS {
        let (conformance, url) = (conformance.clone(), url.clone());
        let baseline = format!(
            "{}/conformance/server-{revision}.yml",
            env!("CARGO_MANIFEST_DIR")
        );
        let output = tokio::task::spawn_blocking(move || {
            let mut suite = Command::new(&conformance);
            suite.args(["server", "--url", &url]);
            // One scenario's checks in full, to see why it fails.
            match std::env::var("MCP_CONFORMANCE_SCENARIO_SHOWN") {
                Ok(scenario) => suite
                    .args(["--spec-version", revision, "--scenario", &scenario])
                    .arg("--verbose"),
                Err(_) => {
                    suite.args(["--requirements", revision, "--expected-failures", &baseline])
                }
            };
            suite.output().expect("the conformance suite runs")
        })
        .await
        .unwrap();
        if !support::conformance::passed("server", revision, &output) {
            failed.push(revision);
        }
    }
    let _ = stop.send(());
    let _ = serving.await;
    assert!(
        failed.is_empty(),
        "the conformance suite failed at {failed:?}"
    );
}
