//! Against an MCP server of the test's own (streamable HTTP on loopback; needs no installed
//! server): names and schemas mapped and the original name called, a dropped call cancelled,
//! limits of the tool list, tools the server removes or adds (`list_changed`), a server gone
//! mid-call, and a call timeout on tokio's paused clock.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use hookchain::builtin::ToolRetry;
use hookchain::chain;
use hookchain::prelude::*;
use hookchain::{FnTool, Tool, ToolRegistry};
use hookchain_mcp::{Error, McpProtocol, McpServer, McpToolset};
use serde_json::{Value, json};
use support::fake::{FakeServer, Reply, text_result, tool};
use support::{call_once, guard, provider_accepts, tool_messages};

fn listing(tools: Vec<Value>) -> Reply {
    Reply::Result(json!({ "tools": tools }))
}

#[tokio::test]
async fn odd_names_are_mapped_and_the_server_is_called_with_the_original() {
    guard(async {
        let server = FakeServer::start(|method, params| match method {
            "tools/list" => listing(vec![
                tool("files.read", json!({"type": "object"})),
                tool(
                    "files/read",
                    json!({"type": "object", "properties": {"path": {"type": "string"}}}),
                ),
                tool("ツール", json!({"type": "object"})),
            ]),
            "tools/call" => Reply::Result(text_result(&format!(
                "called {} with {}",
                params["name"].as_str().unwrap_or("?"),
                params["arguments"]
            ))),
            _ => Reply::Close,
        })
        .await;
        let toolset = McpToolset::connect([McpServer::http("fake", &server.url).prefix("fs")])
            .await
            .unwrap();
        let tools = toolset.tools();
        let names: Vec<&str> = tools.iter().map(|tool| tool.name()).collect();
        assert!(names.iter().all(|name| provider_accepts(name)), "{names:?}");
        for tool in &toolset {
            let spec = tool.spec();
            assert!(spec.parameters["properties"].is_object(), "{spec:?}");
        }
        let slash = tools
            .iter()
            .find(|tool| tool.original_name() == "files/read")
            .expect("files/read");
        assert!(
            slash.name().starts_with("fs_files_read_"),
            "{}",
            slash.name()
        );
        let results = call_once(&toolset, slash.name(), json!({"path": "/a"})).await;
        assert_eq!(
            results,
            [(r#"called files/read with {"path":"/a"}"#.to_owned(), false)]
        );
        assert_eq!(
            server.received_of("tools/call")[0]["params"]["name"],
            "files/read"
        );
    })
    .await;
}

#[tokio::test]
async fn a_dropped_call_sends_notifications_cancelled() {
    guard(async {
        let server = FakeServer::start(|method, _| match method {
            "tools/list" => listing(vec![tool("slow", json!({"type": "object"}))]),
            "tools/call" => Reply::Hang,
            _ => Reply::Close,
        })
        .await;
        let toolset = McpToolset::connect([McpServer::http("fake", &server.url)])
            .await
            .unwrap();
        let model = ScriptedModel::new([
            ModelResponse::tool_calls([ToolCall::new("c1", "slow", json!({}))]),
            ModelResponse::text("done"),
        ]);
        let agent = Agent::builder(model)
            .tools(toolset.registry())
            .build()
            .unwrap();
        // The run is cancelled (its future dropped) while the call waits for the server.
        let cancelled = tokio::time::timeout(Duration::from_millis(500), agent.run("go")).await;
        assert!(cancelled.is_err());
        let call_id = loop {
            if let Some(call) = server.received_of("tools/call").first() {
                break call["id"].clone();
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        };
        loop {
            let cancels = server.received_of("notifications/cancelled");
            if let Some(cancel) = cancels.first() {
                assert_eq!(cancel["params"]["requestId"], call_id);
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
}

#[tokio::test]
async fn a_tool_list_that_never_ends_or_is_too_long_is_refused() {
    guard(async {
        let endless = FakeServer::start(|method, _| match method {
            "tools/list" => Reply::Result(json!({
                "tools": [],
                "nextCursor": "again"
            })),
            _ => Reply::Close,
        })
        .await;
        let error = McpToolset::connect([McpServer::http("endless", &endless.url)])
            .await
            .unwrap_err();
        assert!(
            matches!(&error, Error::TooLarge { server, .. } if server == "endless"),
            "{error}"
        );

        let long = FakeServer::start(|method, _| match method {
            "tools/list" => listing((0..5).map(|n| tool(&format!("t{n}"), json!({}))).collect()),
            _ => Reply::Close,
        })
        .await;
        let error = McpToolset::connect([McpServer::http("long", &long.url).max_tools(4)])
            .await
            .unwrap_err();
        assert!(
            matches!(&error, Error::TooLarge { limit: 4, .. }),
            "{error}"
        );
        assert_eq!(
            error.to_string(),
            "MCP server `long`: more than 4 tools (limit 4)"
        );
    })
    .await;
}

/// The notification a server sends when its tool list changed.
fn list_changed() -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
}

/// Waits until `toolset` has (or, for `false`, no longer has) the tool `name`: a changed list
/// is listed again in the background.
async fn until_listed(toolset: &McpToolset, name: &str, present: bool) {
    while toolset.tool(name).is_some() != present {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn a_tool_the_server_removed_is_no_longer_offered() {
    guard(async {
        let listed = Arc::new(AtomicUsize::new(0));
        let lists = listed.clone();
        let server = FakeServer::start(move |method, _| match method {
            "tools/list" => {
                // After the first listing, `gone` is gone.
                if lists.fetch_add(1, Ordering::SeqCst) == 0 {
                    listing(vec![tool("stays", json!({})), tool("gone", json!({}))])
                } else {
                    listing(vec![tool("stays", json!({}))])
                }
            }
            "tools/call" => Reply::NotifyThenResult(vec![list_changed()], text_result("ok")),
            _ => Reply::Close,
        })
        .await;
        let toolset = McpToolset::connect([McpServer::http("fake", &server.url)])
            .await
            .unwrap();
        let gone = toolset.tool("gone").expect("listed at connect");
        assert_eq!(
            call_once(&toolset, "stays", json!({})).await,
            [("ok".to_owned(), false)]
        );
        until_listed(&toolset, "gone", false).await;

        // The toolset's registry no longer has it: the model reads the unknown-tool error.
        let results = call_once(&toolset, "gone", json!({})).await;
        assert!(results[0].1, "{results:?}");
        assert!(results[0].0.contains("unknown tool `gone`"), "{results:?}");
        // The tool, held from before, is not sent to the server either.
        let registry = ToolRegistry::new().with(gone);
        let result = registry
            .execute(&ToolCall::new("c1", "gone", json!({})))
            .await;
        assert!(result.is_error, "{result:?}");
        assert!(
            result.content.text().contains("no longer offered"),
            "{result:?}"
        );
        assert_eq!(listed.load(Ordering::SeqCst), 2);
        assert_eq!(
            server.received_of("tools/call").len(),
            1,
            "`gone` was not called"
        );
    })
    .await;
}

#[tokio::test]
async fn a_tool_the_server_adds_is_offered_and_called_in_a_later_step() {
    guard(async {
        let listed = Arc::new(AtomicUsize::new(0));
        let lists = listed.clone();
        let server = FakeServer::start(move |method, params| match method {
            "tools/list" => {
                // After the first listing, the server has a second tool.
                if lists.fetch_add(1, Ordering::SeqCst) == 0 {
                    listing(vec![tool("first", json!({}))])
                } else {
                    listing(vec![
                        tool("first", json!({})),
                        tool("added.tool", json!({})),
                    ])
                }
            }
            "tools/call" if params["name"] == "first" => {
                Reply::NotifyThenResult(vec![list_changed()], text_result("first done"))
            }
            "tools/call" => Reply::Result(text_result(&format!(
                "{} answered",
                params["name"].as_str().unwrap_or("?")
            ))),
            _ => Reply::Close,
        })
        .await;
        let toolset = Arc::new(
            McpToolset::connect([McpServer::http("fake", &server.url)])
                .await
                .unwrap(),
        );
        // A tool of the application's that waits for the new listing, which runs in the
        // background (as it would while a real model thinks).
        let watched = Arc::clone(&toolset);
        let wait = FnTool::new(
            "wait_for_tools",
            "Waits until the server's new tool is listed.",
            move |_: Value| {
                let toolset = Arc::clone(&watched);
                async move {
                    until_listed(&toolset, "added_tool", true).await;
                    Ok::<_, std::convert::Infallible>("listed")
                }
            },
        );
        let model = ScriptedModel::new([
            ModelResponse::tool_calls([ToolCall::new("c1", "first", json!({}))]),
            ModelResponse::tool_calls([ToolCall::new("c2", "wait_for_tools", json!({}))]),
            ModelResponse::tool_calls([ToolCall::new("c3", "added_tool", json!({}))]),
            ModelResponse::text("done"),
        ]);
        let mut registry = toolset.registry();
        registry.register(wait);
        let agent = Agent::builder(model).tools(registry).build().unwrap();

        let output = agent.run("go").await.unwrap();

        let texts: Vec<String> = tool_messages(&output.messages)
            .iter()
            .map(|message| message.text().into_owned())
            .collect();
        assert_eq!(texts, ["first done", "listed", "added.tool answered"]);
        let offered: Vec<Vec<String>> = agent
            .model()
            .requests()
            .iter()
            .map(|request| request.tools.iter().map(|spec| spec.name.clone()).collect())
            .collect();
        assert_eq!(offered[0], ["wait_for_tools", "first"]);
        assert_eq!(offered[2], ["wait_for_tools", "first", "added_tool"]);
        let called: Vec<Value> = server
            .received_of("tools/call")
            .iter()
            .map(|call| call["params"]["name"].clone())
            .collect();
        assert_eq!(called, ["first", "added.tool"]);
        assert_eq!(listed.load(Ordering::SeqCst), 2);
    })
    .await;
}

#[tokio::test]
async fn a_change_announced_while_the_toolset_connects_is_not_lost() {
    guard(async {
        let listed = Arc::new(AtomicUsize::new(0));
        let lists = listed.clone();
        let server = FakeServer::start(move |method, _| match method {
            // The first listing says, before its result, that the list changed already.
            "tools/list" if lists.fetch_add(1, Ordering::SeqCst) == 0 => Reply::NotifyThenResult(
                vec![list_changed()],
                json!({"tools": [tool("early", json!({}))]}),
            ),
            "tools/list" => listing(vec![tool("early", json!({})), tool("late", json!({}))]),
            _ => Reply::Close,
        })
        .await;
        // A second server, slow to list its tools, keeps the toolset waiting: the first one's
        // new listing comes before the toolset is made.
        let slow = FakeServer::start(move |method, _| match method {
            "tools/list" => Reply::ResultAfter(
                Duration::from_millis(500),
                json!({"tools": [tool("slow", json!({}))]}),
            ),
            _ => Reply::Close,
        })
        .await;
        let toolset = McpToolset::connect([
            McpServer::http("fake", &server.url),
            McpServer::http("slow", &slow.url),
        ])
        .await
        .unwrap();
        until_listed(&toolset, "late", true).await;
        assert_eq!(listed.load(Ordering::SeqCst), 2);
        let names: Vec<String> = toolset
            .tools()
            .iter()
            .map(|tool| tool.name().to_owned())
            .collect();
        assert_eq!(names, ["early", "late", "slow"]);
    })
    .await;
}

#[tokio::test]
async fn a_new_tool_under_a_name_another_server_has_gets_a_suffix() {
    guard(async {
        let first = FakeServer::start(|method, _| match method {
            "tools/list" => listing(vec![tool("echo", json!({}))]),
            "tools/call" => Reply::Result(text_result("the first echo")),
            _ => Reply::Close,
        })
        .await;
        let listed = Arc::new(AtomicUsize::new(0));
        let lists = listed.clone();
        let second = FakeServer::start(move |method, _| match method {
            "tools/list" if lists.fetch_add(1, Ordering::SeqCst) == 0 => {
                listing(vec![tool("change", json!({}))])
            }
            "tools/list" => listing(vec![
                tool("change", json!({})),
                tool("echo", json!({})),
                tool("extra", json!({})),
            ]),
            "tools/call" => Reply::NotifyThenResult(vec![list_changed()], text_result("changed")),
            _ => Reply::Close,
        })
        .await;
        let toolset = McpToolset::connect([
            McpServer::http("first", &first.url),
            McpServer::http("second", &second.url),
        ])
        .await
        .unwrap();
        call_once(&toolset, "change", json!({})).await;
        until_listed(&toolset, "extra", true).await;

        let tools: Vec<(String, String)> = toolset
            .tools()
            .iter()
            .map(|tool| (tool.name().to_owned(), tool.server().to_owned()))
            .collect();
        // `echo` stays the first server's; the second's, a newcomer, gets a suffix.
        let second_echo = toolset.offered_name("second", "echo").expect("named");
        assert!(second_echo.starts_with("echo_"), "{second_echo}");
        let owned = |name: &str, server: &str| (name.to_owned(), server.to_owned());
        assert_eq!(
            tools,
            [
                owned("echo", "first"),
                owned("change", "second"),
                owned(&second_echo, "second"),
                owned("extra", "second")
            ]
        );
        assert_eq!(
            call_once(&toolset, "echo", json!({})).await,
            [("the first echo".to_owned(), false)]
        );
    })
    .await;
}

/// A server with one tool, `flaky`, whose first call drops the connection (the server gone
/// mid-call) and whose next calls answer `fine`; and a toolset connected to it.
async fn flaky_server() -> (FakeServer, McpToolset) {
    let calls = Arc::new(AtomicUsize::new(0));
    let server = FakeServer::start(move |method, _| match method {
        "tools/list" => listing(vec![tool("flaky", json!({}))]),
        "tools/call" if calls.fetch_add(1, Ordering::SeqCst) == 0 => Reply::Close,
        "tools/call" => Reply::Result(text_result("fine")),
        _ => Reply::Close,
    })
    .await;
    let toolset = McpToolset::connect([McpServer::http("fake", &server.url)])
        .await
        .unwrap();
    (server, toolset)
}

#[tokio::test]
async fn a_server_gone_mid_call_is_initialized_again_on_the_next_call() {
    guard(async {
        let (server, toolset) = flaky_server().await;
        let first = call_once(&toolset, "flaky", json!({})).await;
        assert!(first[0].1, "{first:?}");
        let second = call_once(&toolset, "flaky", json!({})).await;
        assert_eq!(second, [("fine".to_owned(), false)]);
        assert_eq!(
            server.received_of("initialize").len(),
            2,
            "one handshake per session"
        );
    })
    .await;
}

#[tokio::test]
async fn a_tool_retry_retries_a_call_the_server_dropped_on_a_new_session() {
    guard(async {
        let (server, toolset) = flaky_server().await;
        let model = ScriptedModel::new([
            ModelResponse::tool_calls([ToolCall::new("c1", "flaky", json!({}))]),
            ModelResponse::text("done"),
        ]);
        let retry = ToolRetry::builder()
            .initial_delay(Duration::from_millis(10))
            .build()
            .unwrap();
        let agent = Agent::builder(model)
            .tools(toolset.registry())
            .chain(chain![retry])
            .build()
            .unwrap();
        let output = agent.run("go").await.unwrap();
        let messages = tool_messages(&output.messages);
        assert_eq!(messages[0].text(), "fine");
        assert_eq!(server.received_of("tools/call").len(), 2);
        assert_eq!(server.received_of("initialize").len(), 2);
    })
    .await;
}

#[tokio::test]
async fn a_call_ends_at_its_timeout_on_the_paused_clock() {
    guard(async {
        let server = FakeServer::start(|method, params| match method {
            "tools/list" => listing(vec![tool("slow", json!({})), tool("fast", json!({}))]),
            "tools/call" if params["name"] == "slow" => Reply::Hang,
            "tools/call" => Reply::Result(text_result("fast")),
            _ => Reply::Close,
        })
        .await;
        let timeout = Duration::from_secs(30);
        let toolset =
            McpToolset::connect([McpServer::http("fake", &server.url).call_timeout(timeout)])
                .await
                .unwrap();
        // From here the time is ours: the runtime jumps to the next timer whenever it waits.
        tokio::time::pause();
        let started = tokio::time::Instant::now();
        let real = std::time::Instant::now();
        let results = call_once(&toolset, "slow", json!({})).await;
        let took = started.elapsed();
        assert!(
            results[0].1 && results[0].0.contains("did not answer within"),
            "{results:?}"
        );
        assert!(
            took >= timeout && took < timeout + Duration::from_secs(1),
            "{took:?}"
        );
        assert!(
            real.elapsed() < Duration::from_secs(30),
            "{:?}",
            real.elapsed()
        );
    })
    .await;
}

/// A server of an older revision that hangs up on `server/discover` (rather than answer that
/// it does not know the method) is reached by the `initialize` handshake, which names
/// 2025-11-25; pinned to 2026-07-28, the connection is refused with the server's name.
#[tokio::test]
async fn a_server_that_hangs_up_on_discover_is_reached_by_the_handshake() {
    guard(async {
        let server = FakeServer::start(|method, _| match method {
            "tools/list" => listing(vec![tool("t", json!({"type": "object"}))]),
            _ => Reply::Close,
        })
        .await;
        let toolset = McpToolset::connect([McpServer::http("old", &server.url)])
            .await
            .unwrap();
        assert_eq!(server.received_of("server/discover").len(), 1);
        let handshakes = server.received_of("initialize");
        assert_eq!(handshakes.len(), 1);
        assert_eq!(handshakes[0]["params"]["protocolVersion"], "2025-11-25");
        assert!(toolset.tool("t").is_some());
        toolset.close().await;
        let pinned = McpToolset::connect([
            McpServer::http("old", &server.url).protocol(McpProtocol::V2026_07_28)
        ])
        .await;
        match pinned {
            Err(Error::Initialize { server, .. }) => assert_eq!(server, "old"),
            Err(other) => panic!("{other}"),
            Ok(_) => panic!("connected to a server that does not speak 2026-07-28"),
        }
        assert_eq!(server.received_of("initialize").len(), 1, "no handshake");
    })
    .await;
}
