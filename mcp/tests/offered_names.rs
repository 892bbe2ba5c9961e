//! A name once offered keeps meaning its tool, against a server of the test's own whose tool
//! list changes: the first tool keeps its name when a colliding one is added, a gate by that
//! name stays on it (and not on the newcomer), and a removed tool's name goes to no other tool
//! and comes back with the tool.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use hookchain::EndReason;
use hookchain::builtin::human_in_the_loop::{
    ApprovalRequest, ApprovalResponse, HumanInTheLoop, ToolPolicy,
};
use hookchain::chain;
use hookchain::prelude::*;
use hookchain_mcp::{McpServer, McpToolset, provider_safe_names};
use serde_json::{Value, json};
use support::fake::{FakeServer, Reply, text_result, tool};
use support::{call_once, guard, tool_messages};

/// A server whose `n`-th listing (from 0) is `listings[n]` (the last one after that); its
/// tool `change` answers after announcing that its list changed, and every other tool answers
/// `<its name> ran`.
async fn changing_server(listings: Vec<Vec<&'static str>>) -> FakeServer {
    let listed = AtomicUsize::new(0);
    FakeServer::start(move |method, params| match method {
        "tools/list" => {
            let n = listed
                .fetch_add(1, Ordering::SeqCst)
                .min(listings.len() - 1);
            let tools: Vec<Value> = listings[n]
                .iter()
                .map(|name| tool(name, json!({})))
                .collect();
            Reply::Result(json!({ "tools": tools }))
        }
        "tools/call" if params["name"] == "change" => Reply::NotifyThenResult(
            vec![json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})],
            text_result("changed"),
        ),
        "tools/call" => Reply::Result(text_result(&format!(
            "{} ran",
            params["name"].as_str().unwrap_or("?")
        ))),
        _ => Reply::Close,
    })
    .await
}

/// Calls `change` (the server lists its tools again, in the background), then waits until the
/// toolset offers `name` (or, for `false`, no longer does).
async fn change_until(toolset: &McpToolset, name: &str, offered: bool) {
    assert_eq!(
        call_once(toolset, "change", json!({})).await,
        [("changed".to_owned(), false)]
    );
    while toolset.tool(name).is_some() != offered {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The name a short `full` gets when another tool has its cleaned-up name: cleaned up, then
/// `_` and its 32-bit FNV-1a hash in hex (written here without the crate's code).
fn suffixed(full: &str) -> String {
    let cleaned: String = full
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let hash = full.bytes().fold(0x811c_9dc5_u32, |hash, byte| {
        (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193)
    });
    format!("{cleaned}_{hash:08x}")
}

#[test]
fn the_suffix_written_here_is_the_crate_s() {
    assert_eq!(
        provider_safe_names(["files.delete", "files/delete"]),
        [suffixed("files.delete"), suffixed("files/delete")]
    );
}

/// The tool the model calls `name`: its server's name for it.
fn original_of(toolset: &McpToolset, name: &str) -> Option<String> {
    toolset.original_name(name)
}

#[tokio::test]
async fn the_first_tool_keeps_its_name_when_a_colliding_tool_is_added_and_its_gate_stays_on_it() {
    guard(async {
        let server = changing_server(vec![
            vec!["change", "files.delete"],
            // Two newcomers that want `files_delete`: one cleans up to it, one is it.
            vec!["change", "files.delete", "files/delete", "files_delete"],
        ])
        .await;
        let toolset = Arc::new(
            McpToolset::connect([McpServer::http("fake", &server.url)])
                .await
                .unwrap(),
        );
        assert_eq!(
            toolset.offered_name("fake", "files.delete").as_deref(),
            Some("files_delete")
        );
        // The gate is set up by the server's name for the tool, before the list changes.
        let gated = toolset.offered_name("fake", "files.delete").unwrap();
        let gate = HumanInTheLoop::new().interrupt_on(gated, ToolPolicy::always());

        change_until(&toolset, &suffixed("files/delete"), true).await;

        // The first tool kept its name; the newcomers got theirs with a suffix.
        assert_eq!(
            original_of(&toolset, "files_delete").as_deref(),
            Some("files.delete")
        );
        assert_eq!(
            toolset.offered_name("fake", "files/delete"),
            Some(suffixed("files/delete"))
        );
        assert_eq!(
            toolset.offered_name("fake", "files_delete"),
            Some(suffixed("files_delete"))
        );
        let names: Vec<String> = toolset
            .tools()
            .iter()
            .map(|tool| tool.name().to_owned())
            .collect();
        assert_eq!(
            names,
            [
                "change".to_owned(),
                "files_delete".to_owned(),
                suffixed("files/delete"),
                suffixed("files_delete"),
            ]
        );

        // The model calls the three: only the first tool's call waits for a person.
        let model = ScriptedModel::new([
            ModelResponse::tool_calls([
                ToolCall::new("c1", "files_delete", json!({})),
                ToolCall::new("c2", suffixed("files/delete"), json!({})),
                ToolCall::new("c3", suffixed("files_delete"), json!({})),
            ]),
            ModelResponse::text("done"),
        ]);
        let agent = Agent::builder(model)
            .tools(toolset.registry())
            .chain(chain![gate])
            .build()
            .unwrap();
        let mut output = agent.run("delete").await.unwrap();
        assert_eq!(output.end, EndReason::Interrupted);
        let checkpoint = output.checkpoint.take().expect("a paused run's checkpoint");
        let [interrupt] = checkpoint.interrupts() else {
            panic!("one interrupt: {:?}", checkpoint.interrupts());
        };
        let request = ApprovalRequest::from_interrupt(interrupt).expect("an approval");
        let asked: Vec<(&str, &str)> = request
            .actions
            .iter()
            .map(|action| (action.call_id.as_str(), action.name.as_str()))
            .collect();
        assert_eq!(asked, [("c1", "files_delete")]);
        assert!(
            server.received_of("tools/call").len() == 1,
            "nothing but `change` ran before the approval"
        );

        let answer = ApprovalResponse::approve_all(&request).answer(interrupt);
        let output = agent.resume(checkpoint, [answer]).await.unwrap();
        let texts: Vec<String> = tool_messages(&output.messages)
            .iter()
            .map(|message| message.text().into_owned())
            .collect();
        assert_eq!(
            texts,
            ["files.delete ran", "files/delete ran", "files_delete ran"]
        );
    })
    .await;
}

#[tokio::test]
async fn a_removed_tool_s_name_goes_to_no_other_tool_and_comes_back_with_it() {
    guard(async {
        let server = changing_server(vec![
            vec!["change", "files.delete"],
            // `files.delete` is gone; a newcomer that cleans up to its name is added.
            vec!["change", "files/delete"],
            // `files.delete` is back.
            vec!["change", "files/delete", "files.delete"],
        ])
        .await;
        let toolset = McpToolset::connect([McpServer::http("fake", &server.url)])
            .await
            .unwrap();
        assert_eq!(
            original_of(&toolset, "files_delete").as_deref(),
            Some("files.delete")
        );

        change_until(&toolset, "files_delete", false).await;
        // The name is still the removed tool's: the newcomer has its own.
        assert_eq!(
            toolset.offered_name("fake", "files.delete").as_deref(),
            Some("files_delete")
        );
        assert_eq!(
            original_of(&toolset, &suffixed("files/delete")).as_deref(),
            Some("files/delete")
        );
        let results = call_once(&toolset, "files_delete", json!({})).await;
        assert!(
            results[0].1 && results[0].0.contains("unknown tool `files_delete`"),
            "{results:?}"
        );

        change_until(&toolset, "files_delete", true).await;
        // The same tool (the same server, the same name on it) gets its name back.
        assert_eq!(
            original_of(&toolset, "files_delete").as_deref(),
            Some("files.delete")
        );
        assert_eq!(
            original_of(&toolset, &suffixed("files/delete")).as_deref(),
            Some("files/delete")
        );
        assert_eq!(
            call_once(&toolset, "files_delete", json!({})).await,
            [("files.delete ran".to_owned(), false)]
        );
        // A tool never listed has no name.
        assert_eq!(toolset.offered_name("fake", "files.create"), None);
        assert_eq!(toolset.offered_name("other", "files.delete"), None);
    })
    .await;
}

#[tokio::test]
async fn a_newcomer_of_another_server_gets_a_suffix_and_the_gate_stays_on_the_first() {
    guard(async {
        let first = changing_server(vec![vec!["echo"]]).await;
        let second = changing_server(vec![vec!["change"], vec!["change", "echo"]]).await;
        let toolset = McpToolset::connect([
            McpServer::http("first", &first.url),
            McpServer::http("second", &second.url),
        ])
        .await
        .unwrap();
        let echo = suffixed("echo");
        change_until(&toolset, &echo, true).await;

        assert_eq!(
            toolset.offered_name("first", "echo").as_deref(),
            Some("echo")
        );
        assert_eq!(toolset.offered_name("second", "echo"), Some(echo.clone()));
        assert_eq!(toolset.tool("echo").unwrap().server(), "first");
        assert_eq!(toolset.tool(&echo).unwrap().server(), "second");
        assert_eq!(
            call_once(&toolset, "echo", json!({})).await,
            [("echo ran".to_owned(), false)]
        );
        assert_eq!(first.received_of("tools/call").len(), 1);
        assert_eq!(
            call_once(&toolset, &echo, json!({})).await,
            [("echo ran".to_owned(), false)]
        );
        // `change` and the newcomer.
        assert_eq!(second.received_of("tools/call").len(), 2);
    })
    .await;
}
