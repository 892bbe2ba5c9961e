//! What hookchain adds to an MCP tool call: the same `echo` call of the reference server
//! `@modelcontextprotocol/server-everything` over stdio (one node process each, on this
//! machine), made with `rmcp` directly and through hookchain's `McpTool` (the hookchain tool an
//! agent's chain calls: its session check, timeout, original name and the result's text).
//!
//! The server's own time (node reading, answering, writing) is in both; the difference is
//! hookchain's. Needs `npm install -g @modelcontextprotocol/server-everything` (or
//! `MCP_SERVER_EVERYTHING` set to its `dist/index.js`).
//!
//!     cargo bench --manifest-path benches/Cargo.toml --bench mcp_call

use std::path::PathBuf;
use std::process::Command;

use criterion::{Criterion, criterion_group, criterion_main};
use hookchain::mcp::rmcp::ServiceExt;
use hookchain::mcp::rmcp::model::CallToolRequestParams;
use hookchain::mcp::rmcp::transport::TokioChildProcess;
use hookchain::mcp::{McpServer, McpToolset};
use hookchain::{CallFrame, Context, Tool, ToolContext};
use serde_json::json;

/// server-everything's entry point: `$MCP_SERVER_EVERYTHING`, or the package in npm's global
/// root.
fn everything_js() -> PathBuf {
    if let Some(path) = std::env::var_os("MCP_SERVER_EVERYTHING") {
        return PathBuf::from(path);
    }
    let root = Command::new("npm")
        .args(["root", "-g"])
        .output()
        .expect("npm runs");
    let root = String::from_utf8_lossy(&root.stdout).trim().to_owned();
    let js = PathBuf::from(root).join("@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        js.is_file(),
        "{} is missing: npm install -g @modelcontextprotocol/server-everything",
        js.display()
    );
    js
}

fn mcp_call(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let js = everything_js();
    let arguments = json!({ "message": "hello" });

    let direct = runtime.block_on(async {
        let mut command = tokio::process::Command::new("node");
        command.arg(&js).arg("stdio");
        ().serve(TokioChildProcess::new(command).unwrap())
            .await
            .unwrap()
    });
    let toolset = runtime.block_on(async {
        McpToolset::connect([McpServer::stdio("everything", "node").arg(&js).arg("stdio")])
            .await
            .unwrap()
    });
    let echo = toolset.tool("echo").expect("server-everything's echo");
    let context = Context::new(Vec::new());
    let frame = CallFrame::new("c1", "echo");

    let mut group = c.benchmark_group("mcp_call");
    group.bench_function("rmcp_direct", |b| {
        b.iter(|| {
            runtime.block_on(async {
                let mut params = CallToolRequestParams::new("echo");
                params.arguments = arguments.as_object().cloned();
                let result = direct.peer().call_tool(params).await.unwrap();
                assert_ne!(result.is_error, Some(true));
            })
        });
    });
    group.bench_function("hookchain_mcp_tool", |b| {
        b.iter(|| {
            runtime.block_on(async {
                let cx = ToolContext::new(&context, &frame);
                let text = echo.call(cx, arguments.clone()).await.unwrap();
                assert!(text.to_string().contains("hello"));
            })
        });
    });
    group.finish();
    runtime.block_on(async {
        let _ = direct.cancel().await;
        toolset.close().await;
    });
}

criterion_group!(benches, mcp_call);
criterion_main!(benches);
