//! An agent's tools served over streamable HTTP, called by this crate's own client
//! (`McpToolset`): no Python, no Node.

mod served;

use hookchain::ToolContext;
use hookchain::prelude::*;
use hookchain::{CallFrame, Tool};
use hookchain_mcp::{McpServer, McpToolset};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_toolset_lists_and_calls_the_served_tools_through_the_chain() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(served::server().serve_http(listener, async {
        let _ = stopped.await;
    }));

    let toolset = McpToolset::connect([McpServer::http("served", format!("http://{address}/mcp"))])
        .await
        .expect("the toolset connects");
    let mut names: Vec<String> = toolset
        .tools()
        .iter()
        .map(|tool| tool.name().to_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["add", "broken", "delete", "greet"]);

    let cx = Context::new(Vec::new());
    let call = |name: &str, arguments: serde_json::Value| {
        let tool = toolset
            .tools()
            .iter()
            .find(|tool| tool.name() == name)
            .expect("the tool is listed")
            .clone();
        let cx = &cx;
        async move {
            let frame = CallFrame::new("c1", tool.name());
            tool.call(ToolContext::new(cx, &frame), arguments).await
        }
    };
    assert_eq!(call("add", json!({"a": 2, "b": 3})).await.unwrap(), "5");
    assert_eq!(
        call("greet", json!({"name": "Ada"})).await.unwrap(),
        "HELLO, ADA!"
    );
    let failed = call("broken", json!({})).await.unwrap_err();
    assert!(failed.to_string().contains("the disk is full"), "{failed}");
    let gated = call("delete", json!({"path": "/etc/passwd"}))
        .await
        .unwrap_err();
    assert!(gated.to_string().contains("HumanInTheLoop"), "{gated}");

    toolset.close().await;
    stop.send(()).unwrap();
    tokio::time::timeout(std::time::Duration::from_secs(15), serving)
        .await
        .expect("the server shuts down")
        .unwrap()
        .unwrap();
}
