//! Against the Python reference servers `mcp-server-time` and `mcp-server-git` (PyPI), over
//! stdio, together in one toolset (git's tools under a prefix): an agent on the scripted model
//! calls `get_current_time` and `git_status` through approval and retry.

mod support;

use std::time::Instant;

use hookchain::builtin::ToolRetry;
use hookchain::builtin::human_in_the_loop::{
    ApprovalRequest, ApprovalResponse, HumanInTheLoop, ToolPolicy,
};
use hookchain::prelude::*;
use hookchain::{EndReason, chain};
use hookchain_mcp::McpToolset;
use serde_json::json;
use support::servers::{GitRepo, git_server, time_server};
use support::{guard, provider_accepts, tool_messages};

#[tokio::test]
async fn an_agent_asks_the_time_and_the_status_of_a_repository() {
    guard(async {
        let repo = GitRepo::new();
        let started = Instant::now();
        let toolset = McpToolset::connect([time_server(), git_server(&repo.path).prefix("repo")])
            .await
            .unwrap();
        eprintln!("connected to time and git in {:?}", started.elapsed());
        for tool in &toolset {
            assert!(provider_accepts(tool.name()), "{}", tool.name());
        }
        assert_eq!(
            toolset.original_name("repo_git_status").as_deref(),
            Some("git_status")
        );
        assert_eq!(
            toolset
                .tool("get_current_time")
                .map(|tool| tool.server().to_owned())
                .as_deref(),
            Some("time")
        );

        let model = ScriptedModel::new([
            ModelResponse::tool_calls([
                ToolCall::new("c1", "get_current_time", json!({"timezone": "Asia/Tokyo"})),
                ToolCall::new(
                    "c2",
                    "repo_git_status",
                    json!({"repo_path": repo.path.to_string_lossy()}),
                ),
            ]),
            ModelResponse::text("done"),
        ]);
        let agent = Agent::builder(model)
            .tools(toolset.registry())
            .chain(chain![
                ToolRetry::new(),
                HumanInTheLoop::new().interrupt_on("repo_git_status", ToolPolicy::always())
            ])
            .build()
            .unwrap();
        let paused = agent
            .run("What time is it in Tokyo, and what changed?")
            .await
            .unwrap();
        assert_eq!(paused.end, EndReason::Interrupted);
        let checkpoint = paused.checkpoint.expect("a checkpoint");
        let answers: Vec<_> = checkpoint
            .interrupts()
            .iter()
            .map(|interrupt| {
                let request = ApprovalRequest::from_interrupt(interrupt).expect("an approval");
                assert_eq!(request.actions[0].name, "repo_git_status");
                ApprovalResponse::approve_all(&request).answer(interrupt)
            })
            .collect();
        let output = agent.resume(checkpoint, answers).await.unwrap();
        let messages = tool_messages(&output.messages);
        let (time, status) = (messages[0].text(), messages[1].text());
        assert!(
            !messages[0].is_error && time.contains("Asia/Tokyo"),
            "{time}"
        );
        assert!(
            !messages[1].is_error && status.contains("hello.txt"),
            "{status}"
        );
        eprintln!("{time}\n{status}");
        toolset.close().await;
    })
    .await;
}

#[tokio::test]
async fn an_error_of_the_server_is_a_tool_error_the_model_reads() {
    guard(async {
        let toolset = McpToolset::connect([time_server()]).await.unwrap();
        let model = ScriptedModel::new([
            ModelResponse::tool_calls([ToolCall::new(
                "c1",
                "get_current_time",
                json!({"timezone": "Not/AZone"}),
            )]),
            ModelResponse::text("done"),
        ]);
        let agent = Agent::builder(model)
            .tools(toolset.registry())
            .build()
            .unwrap();
        let output = agent.run("go").await.unwrap();
        let messages = tool_messages(&output.messages);
        assert!(messages[0].is_error, "{:?}", messages[0]);
        assert!(
            messages[0].text().contains("Not/AZone"),
            "{}",
            messages[0].text()
        );
    })
    .await;
}
