//! Stdio servers that fail: what the error says, with nothing installed (`sh` plays the
//! server).

#![cfg(unix)]

mod support;

use std::time::Duration;

use hookchain_mcp::{Error, McpServer, McpToolset};
use support::guard;

#[tokio::test]
async fn a_server_that_exits_at_once_is_an_error_quoting_its_stderr() {
    guard(async {
        let server = McpServer::stdio("broken", "sh")
            .args(["-c", "echo 'boom: no configuration file' >&2; exit 3"]);
        let error = McpToolset::connect([server]).await.unwrap_err();
        match &error {
            Error::Initialize { server, stderr, .. } => {
                assert_eq!(server, "broken");
                let stderr = stderr.as_deref().unwrap_or_default();
                assert!(stderr.contains("boom: no configuration file"), "{error}");
            }
            other => panic!("{other}"),
        }
    })
    .await;
}

#[tokio::test]
async fn a_program_that_is_not_there_is_a_spawn_error() {
    guard(async {
        let server = McpServer::stdio("missing", "/nonexistent/mcp-server");
        let error = McpToolset::connect([server]).await.unwrap_err();
        assert!(
            matches!(&error, Error::Spawn { server, program, .. }
                if server == "missing" && program == "/nonexistent/mcp-server"),
            "{error}"
        );
    })
    .await;
}

#[tokio::test]
async fn a_server_that_never_answers_ends_at_the_connect_timeout() {
    guard(async {
        let server = McpServer::stdio("silent", "sh")
            .args(["-c", "echo 'waiting for nothing' >&2; exec sleep 60"])
            .connect_timeout(Duration::from_millis(500));
        let started = std::time::Instant::now();
        let error = McpToolset::connect([server]).await.unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(
            matches!(&error, Error::ConnectTimeout { server, .. } if server == "silent"),
            "{error}"
        );
        assert!(error.to_string().contains("waiting for nothing"), "{error}");
    })
    .await;
}
