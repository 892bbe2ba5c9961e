//! A server's tool list reused for the `ttlMs` its `tools/list` result gives (SEP-2549), then
//! listed again at its next use; a list without it kept until the server says it changed. On
//! tokio's paused clock, against a 2026-07-28 server of the test's own that counts its
//! listings.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use hookchain::ToolRegistry;
use hookchain::prelude::*;
use hookchain_mcp::{McpProtocol, McpServer, McpToolset};
use serde_json::json;
use support::fake::{FakeServer, Reply, text_result, tool};
use support::{call_once, guard};

/// A 2026-07-28 server whose first listing has the tool `first`, and every later one
/// `second` too, each with `ttl_ms` (none when `None`); counts its listings.
async fn counting_server(ttl_ms: Option<u64>) -> (FakeServer, Arc<AtomicUsize>) {
    let listed = Arc::new(AtomicUsize::new(0));
    let lists = Arc::clone(&listed);
    let server = FakeServer::start(move |method, params| match method {
        "server/discover" => Reply::Result(json!({
            "resultType": "complete",
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}},
            "ttlMs": 0,
            "cacheScope": "private",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "counting", "version": "1.0.0"}}
        })),
        "tools/list" => {
            let mut tools = vec![tool("first", json!({}))];
            if lists.fetch_add(1, Ordering::SeqCst) > 0 {
                tools.push(tool("second", json!({})));
            }
            let mut result = json!({"resultType": "complete", "tools": tools});
            if let Some(ttl_ms) = ttl_ms {
                result["ttlMs"] = json!(ttl_ms);
                result["cacheScope"] = json!("private");
            }
            Reply::Result(result)
        }
        "tools/call" => Reply::Result(text_result(&format!(
            "{} answered",
            params["name"].as_str().unwrap_or("?")
        ))),
        _ => Reply::Close,
    })
    .await;
    (server, listed)
}

async fn connect(server: &FakeServer) -> McpToolset {
    McpToolset::connect([
        McpServer::http("counting", &server.url).protocol(McpProtocol::V2026_07_28)
    ])
    .await
    .expect("connected")
}

/// Waits (on the paused clock, which jumps while nothing else runs) until the server has been
/// listed `times` times.
async fn until_listed(listed: &AtomicUsize, times: usize) {
    while listed.load(Ordering::SeqCst) < times {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn a_list_is_reused_for_its_ttl_then_listed_again_at_the_next_model_call() {
    guard(async {
        let (server, listed) = counting_server(Some(60_000)).await;
        let toolset = connect(&server).await;
        assert_eq!(listed.load(Ordering::SeqCst), 1);
        assert_eq!(server.received_of("server/discover").len(), 1);
        // From here the time is ours.
        tokio::time::pause();

        // Within the ttl, model calls and tool calls reuse the list.
        tokio::time::advance(Duration::from_secs(59)).await;
        assert_eq!(
            call_once(&toolset, "first", json!({})).await,
            [("first answered".to_owned(), false)]
        );
        assert_eq!(
            listed.load(Ordering::SeqCst),
            1,
            "listed again within its ttl"
        );

        // Past it, the next model call lists it again (the call itself does not wait).
        tokio::time::advance(Duration::from_secs(2)).await;
        call_once(&toolset, "first", json!({})).await;
        until_listed(&listed, 2).await;
        while toolset.tool("second").is_none() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        // The new listing has its own ttl: reused again.
        assert_eq!(
            call_once(&toolset, "second", json!({})).await,
            [("second answered".to_owned(), false)]
        );
        tokio::time::advance(Duration::from_secs(30)).await;
        call_once(&toolset, "first", json!({})).await;
        assert_eq!(
            listed.load(Ordering::SeqCst),
            2,
            "listed again within its ttl"
        );
        toolset.close().await;
    })
    .await;
}

/// A tool called without a model call (held by a registry of its own): the call is a use of
/// its server's list too.
#[tokio::test]
async fn a_call_after_the_ttl_lists_the_tools_again() {
    guard(async {
        let (server, listed) = counting_server(Some(1_000)).await;
        let toolset = connect(&server).await;
        let first = toolset.tool("first").expect("listed");
        let registry = ToolRegistry::new().with(first);
        tokio::time::pause();
        tokio::time::advance(Duration::from_secs(2)).await;
        let result = registry
            .execute(&ToolCall::new("c1", "first", json!({})))
            .await;
        assert_eq!(result.content.text(), "first answered");
        until_listed(&listed, 2).await;
        assert_eq!(server.received_of("tools/list").len(), 2);
    })
    .await;
}

/// A `ttlMs` of 0: stale at once, so the list is listed again at each use — a model call,
/// a tool call — but never twice at once for one use.
#[tokio::test]
async fn a_ttl_of_zero_lists_again_at_every_use() {
    guard(async {
        let (server, listed) = counting_server(Some(0)).await;
        let toolset = connect(&server).await;
        tokio::time::pause();
        // Two model calls and a tool call: at most three listings more.
        call_once(&toolset, "first", json!({})).await;
        until_listed(&listed, 2).await;
        let after_one = listed.load(Ordering::SeqCst);
        call_once(&toolset, "first", json!({})).await;
        until_listed(&listed, after_one + 1).await;
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(listed.load(Ordering::SeqCst) <= 1 + 2 * 3, "{listed:?}");
        toolset.close().await;
    })
    .await;
}

/// Without `ttlMs` the list is kept until the server says it changed, however long (here,
/// longer than the first test's ttl).
#[tokio::test]
async fn a_list_without_a_ttl_is_kept() {
    guard(async {
        let (server, listed) = counting_server(None).await;
        let toolset = connect(&server).await;
        tokio::time::pause();
        // (Less than the test's guard, which runs on this clock too.)
        tokio::time::advance(Duration::from_secs(100)).await;
        assert_eq!(
            call_once(&toolset, "first", json!({})).await,
            [("first answered".to_owned(), false)]
        );
        // Time for a listing to happen, were one started.
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(listed.load(Ordering::SeqCst), 1);
        assert!(toolset.tool("second").is_none());
        toolset.close().await;
    })
    .await;
}
