//! The W3C trace context in the `_meta` of the client's requests (SEP-414), as the
//! application's function says it, at each revision; asked inside the tool call's span.

mod support;

use std::sync::{Arc, Mutex, Once};

use hookchain_mcp::{IDEMPOTENCY_KEY_META, McpProtocol, McpServer, McpToolset, TraceContext};
use serde_json::{Value, json};
use support::fake::{FakeServer, Reply, text_result, tool};
use support::{call_once, guard};

const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

/// A server with one tool, `traced`, that answers `server/discover` (2026-07-28) when
/// `discovers`, and hangs up on it otherwise (then reached by the 2025-11-25 handshake).
async fn server(discovers: bool) -> FakeServer {
    FakeServer::start(move |method, _| match method {
        "server/discover" if discovers => Reply::Result(json!({
            "resultType": "complete",
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}},
            "ttlMs": 0,
            "cacheScope": "private",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "traced", "version": "1.0.0"}}
        })),
        "tools/list" => Reply::Result(json!({"tools": [tool("traced", json!({}))]})),
        "tools/call" => Reply::Result(text_result("done")),
        _ => Reply::Close,
    })
    .await
}

fn meta(message: &Value) -> &Value {
    &message["params"]["_meta"]
}

#[tokio::test]
async fn a_call_carries_the_trace_context_in_its_meta_at_each_revision() {
    guard(async {
        for (protocol, discovers) in [
            (McpProtocol::V2025_11_25, false),
            (McpProtocol::V2026_07_28, true),
        ] {
            let server = server(discovers).await;
            let traced = McpServer::http("traced", &server.url)
                .protocol(protocol)
                .trace_context(|| {
                    TraceContext::new(TRACEPARENT, Some("rojo=00f067aa0ba902b7".to_owned()))
                });
            let toolset = McpToolset::connect([traced]).await.unwrap();
            assert_eq!(
                call_once(&toolset, "traced", json!({})).await,
                [("done".to_owned(), false)]
            );
            let calls = server.received_of("tools/call");
            let call = meta(&calls[0]);
            assert_eq!(call["traceparent"], TRACEPARENT, "{protocol:?}: {call}");
            assert_eq!(call["tracestate"], "rojo=00f067aa0ba902b7", "{call}");
            // Beside what the client puts there anyway.
            assert!(call[IDEMPOTENCY_KEY_META].is_string(), "{call}");
            if discovers {
                assert_eq!(
                    call["io.modelcontextprotocol/protocolVersion"], "2026-07-28",
                    "{call}"
                );
            }
            let listings = server.received_of("tools/list");
            assert_eq!(meta(&listings[0])["traceparent"], TRACEPARENT);
            toolset.close().await;
        }
    })
    .await;
}

/// No trace to join (the function says `None`), or no function: no key, and nothing else
/// changed.
#[tokio::test]
async fn without_a_trace_nothing_is_added() {
    guard(async {
        for traced in [true, false] {
            let server = server(false).await;
            let mut config = McpServer::http("traced", &server.url);
            if traced {
                config = config.trace_context(|| None);
            }
            let toolset = McpToolset::connect([config]).await.unwrap();
            call_once(&toolset, "traced", json!({})).await;
            let calls = server.received_of("tools/call");
            let call = meta(&calls[0]);
            assert!(call.get("traceparent").is_none(), "{call}");
            assert!(call.get("tracestate").is_none(), "{call}");
            assert!(call[IDEMPOTENCY_KEY_META].is_string(), "{call}");
            toolset.close().await;
        }
    })
    .await;
}

/// The function is asked in the task of the call, inside hookchain's `execute_tool` span: the
/// span an OpenTelemetry layer would give the context of.
#[tokio::test]
async fn the_context_is_asked_inside_the_tool_calls_span() {
    // For the whole binary: a subscriber set for this test's thread only would miss the
    // callsites the other tests, running meanwhile without one, had marked as never enabled.
    static SUBSCRIBER: Once = Once::new();
    SUBSCRIBER.call_once(|| {
        tracing::subscriber::set_global_default(tracing_subscriber::registry())
            .expect("no other subscriber in this test binary");
    });
    guard(async {
        let server = server(false).await;
        let spans = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&spans);
        let traced = McpServer::http("traced", &server.url).trace_context(move || {
            let name = tracing::Span::current()
                .metadata()
                .map_or("none", |metadata| metadata.name());
            seen.lock().unwrap().push(name);
            TraceContext::new(TRACEPARENT, None)
        });
        let toolset = McpToolset::connect([traced]).await.unwrap();
        spans.lock().unwrap().clear();
        call_once(&toolset, "traced", json!({})).await;
        assert_eq!(*spans.lock().unwrap(), ["execute_tool"]);
        toolset.close().await;
    })
    .await;
}
