//! An agent's tools served over MCP (stdio and streamable HTTP), called by a client nobody
//! here wrote: the Python `mcp` package's (`pip install mcp`, a dependency of
//! `mcp-server-time`).
//!
//! Without the libtest harness (`harness = false`): the Python client starts this very binary
//! as its stdio server, with `HOOKCHAIN_MCP_SERVE_STDIO` set, and libtest would print to
//! stdout, which carries the protocol.
//!
//! Over HTTP the server asks the tests' authorizer, and the client signs in as `alice`
//! (`Authorization: Bearer alice`); over stdio no one is asked, and the calls are the
//! process's own principal's (`parent`).

mod served;

use std::process::Command;
use std::time::Duration;

use hookchain::Principal;
use serde_json::{Value, json};

/// Set in the environment of this binary when it runs as the stdio server.
const SERVE_STDIO: &str = "HOOKCHAIN_MCP_SERVE_STDIO";

/// Lists the tools and calls each case, printing one JSON object.
const CLIENT: &str = r#"
import asyncio, json, sys
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

CALLS = [
    ["add", {"a": 2, "b": 3}],
    ["greet", {"name": "Ada"}],
    ["broken", {}],
    ["delete", {"path": "/etc/passwd"}],
    ["nope", {}],
    ["add", {"a": "x" * 70000, "b": 1}],
    ["whoami", {}],
]

def field(value, snake, camel):
    # `mcp` 2 names fields in snake case, `mcp` 1 as the wire does.
    return getattr(value, snake) if hasattr(value, snake) else getattr(value, camel)

async def session_calls(read, write):
    async with ClientSession(read, write) as session:
        init = await session.initialize()
        listed = await session.list_tools()
        out = {
            "server": {"name": field(init, "server_info", "serverInfo").name,
                       "version": field(init, "server_info", "serverInfo").version},
            "tools": sorted(
                [{"name": t.name, "description": t.description, "schema": field(t, "input_schema", "inputSchema")}
                 for t in listed.tools],
                key=lambda t: t["name"]),
            "calls": [],
        }
        for name, arguments in CALLS:
            try:
                result = await session.call_tool(name, arguments)
                out["calls"].append({
                    "tool": name,
                    "text": "\n".join(c.text for c in result.content if c.type == "text"),
                    "isError": bool(field(result, "is_error", "isError")),
                })
            except Exception as error:
                out["calls"].append({"tool": name, "refused": str(error),
                                     "code": getattr(getattr(error, "error", None), "code", None)})
        return out

async def main(mode, target):
    if mode == "stdio":
        params = StdioServerParameters(command=target, args=[], env={"HOOKCHAIN_MCP_SERVE_STDIO": "1"})
        async with stdio_client(params) as (read, write):
            out = await session_calls(read, write)
    else:
        # The client's own HTTP client, with the credentials of every request.
        async with create_mcp_http_client(headers={"Authorization": "Bearer alice"}) as http:
            async with streamable_http_client(target, http_client=http) as (read, write):
                out = await session_calls(read, write)
    print(json.dumps(out))

asyncio.run(main(sys.argv[1], sys.argv[2]))
"#;

fn main() {
    if std::env::var_os(SERVE_STDIO).is_some() {
        serve_stdio();
        return;
    }
    let script =
        std::env::temp_dir().join(format!("hookchain-mcp-client-{}.py", std::process::id()));
    std::fs::write(&script, CLIENT).expect("the client script is written");
    let stdio = stdio_session(&script);
    check("stdio", &stdio, "parent");
    println!("test the_python_client_over_stdio ... ok");
    let http = http_session(&script);
    check("streamable HTTP", &http, "alice");
    println!("test the_python_client_over_streamable_http ... ok");
    let _ = std::fs::remove_file(&script);
}

fn serve_stdio() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    runtime
        .block_on(
            served::server()
                .stdio_principal(Principal::new("parent"))
                .serve_stdio(),
        )
        .expect("the stdio session ends cleanly");
}

/// The client's output, run with `args`, within two minutes.
fn client(script: &std::path::Path, mode: &str, target: &str) -> Value {
    let output = Command::new("python3")
        .arg(script)
        .args([mode, target])
        .output()
        .expect("python3 runs (with `pip install mcp`)");
    assert!(
        output.status.success(),
        "the Python client failed over {mode}:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap_or_else(|error| {
        panic!(
            "the client printed no JSON ({error}):\n{}",
            String::from_utf8_lossy(&output.stdout)
        )
    })
}

fn stdio_session(script: &std::path::Path) -> Value {
    let me = std::env::current_exe().expect("this test's binary");
    client(script, "stdio", me.to_str().expect("a UTF-8 path"))
}

fn http_session(script: &std::path::Path) -> Value {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = served::server().authorize(served::bearer());
        let serving = tokio::spawn(server.serve_http(listener, async {
            let _ = stopped.await;
        }));
        let script = script.to_owned();
        let url = format!("http://{address}/mcp");
        let out = tokio::task::spawn_blocking(move || client(&script, "http", &url))
            .await
            .unwrap();
        stop.send(()).unwrap();
        tokio::time::timeout(Duration::from_secs(15), serving)
            .await
            .expect("the server shuts down gracefully")
            .unwrap()
            .unwrap();
        out
    })
}

/// Checks the client's output over `transport`, whose calls are `caller`'s.
fn check(transport: &str, out: &Value, caller: &str) {
    let context = format!("over {transport}: {out:#}");
    assert_eq!(
        out["server"],
        json!({"name": "served", "version": "9.9.9"}),
        "{context}"
    );
    let tools = out["tools"].as_array().expect("tools");
    let names: Vec<&str> = tools
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["add", "broken", "delete", "greet", "whoami"],
        "{context}"
    );
    assert_eq!(tools[0]["description"], "Adds two numbers.", "{context}");
    assert_eq!(tools[0]["schema"]["type"], "object", "{context}");
    assert!(
        tools[0]["schema"]["properties"]["a"].is_object(),
        "{context}"
    );

    let calls = out["calls"].as_array().expect("calls");
    // A call: the tool's result.
    assert_eq!(
        calls[0],
        json!({"tool": "add", "text": "5", "isError": false}),
        "{context}"
    );
    // The chain ran: its `wrap_tool_call` hook rewrote the result.
    assert_eq!(
        calls[1],
        json!({"tool": "greet", "text": "HELLO, ADA!", "isError": false}),
        "{context}"
    );
    // A tool's error: a result with isError, the tool's message.
    assert_eq!(
        calls[2],
        json!({"tool": "broken", "text": "the disk is full", "isError": true}),
        "{context}"
    );
    // A call HumanInTheLoop gates: not run, an error result saying why.
    assert_eq!(calls[3]["isError"], true, "{context}");
    let gated = calls[3]["text"].as_str().unwrap();
    assert!(
        gated.contains("HumanInTheLoop") && gated.contains("cannot ask for"),
        "{context}"
    );
    assert!(!gated.contains("deleted"), "{context}");
    // (Over stdio the server is another process: whether the tool ran is seen from its
    // result only; over HTTP, from what the tools recorded here too.)
    assert!(!served::ran("delete /etc/passwd"), "{context}");
    // An unknown tool: a JSON-RPC error (invalid params).
    assert_eq!(calls[4]["code"], -32602, "{context}");
    assert!(
        calls[4]["refused"]
            .as_str()
            .unwrap()
            .contains("unknown tool: `nope`"),
        "{context}"
    );
    // Arguments over the bound: refused, the bound named.
    assert_eq!(calls[5]["code"], -32602, "{context}");
    assert!(
        calls[5]["refused"].as_str().unwrap().contains("at most"),
        "{context}"
    );
    // The caller's principal reached the tool.
    assert_eq!(
        calls[6],
        json!({"tool": "whoami", "text": caller, "isError": false}),
        "{context}"
    );
}
