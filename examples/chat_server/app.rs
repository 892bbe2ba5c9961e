//! The chat server's application: the agent (a scripted model, a gated tool, its checkpoints
//! and conversations in one SQLite database), and the routes — the agent under `/agent`, the chat page at
//! `/`. Shared by the example's `main` and by the test that drives the page in Chromium.

use std::path::Path;
use std::sync::Arc;

use axum::response::Html;
use axum::routing::get;
use hookchain::axum::AgentServer;
use hookchain::builtin::human_in_the_loop::{HumanInTheLoop, ToolPolicy};
use hookchain::interrupt::SqliteCheckpointer;
use hookchain::prelude::*;
use hookchain::thread_store::SqliteThreadStore;
use hookchain::{Durability, ModelError, Role};
use serde_json::json;

/// The chat page: static HTML and JavaScript, no build step.
pub(crate) const PAGE: &str = include_str!("index.html");

/// The server of the chat's agent.
pub(crate) type ChatServer = AgentServer<ScriptedModel, HumanInTheLoop, SqliteThreadStore>;

/// Deletes a file. (A fake: it only says what it would do.)
#[hookchain::tool]
async fn delete_file(
    /// The file to delete.
    path: String,
) -> String {
    format!("deleted {path}")
}

/// What the scripted model answers: after a tool's result, what it did; asked to delete
/// something, a call to `delete_file`; anything else, an echo that says how to see an approval.
fn answer(request: &ModelRequest) -> Result<ModelResponse, ModelError> {
    let last = request.messages.last();
    if let Some(result) = last.filter(|message| message.role == Role::Tool) {
        return Ok(ModelResponse::text(format!("Done: {}.", result.text())));
    }
    let said = last
        .map(|message| message.text().into_owned())
        .unwrap_or_default();
    if let Some(rest) = said.to_lowercase().split("delete").nth(1) {
        let path = rest.split_whitespace().next().unwrap_or("logs/old.log");
        let call = ToolCall::new(
            format!("call_{}", request.messages.len()),
            "delete_file",
            json!({ "path": path }),
        );
        return Ok(ModelResponse::tool_calls([call]));
    }
    Ok(ModelResponse::text(format!(
        "You said: {said}. Ask me to delete a file (\"delete notes.txt\") to see an approval."
    )))
}

/// The server, its conversations and checkpoints in the database `dir/chat.db`: a server
/// started again on the same `dir` resumes the conversations the last one paused, and goes on
/// with the runs it stopped (their steps are kept: `EveryStep`) when the page sends them again.
pub(crate) fn server(dir: &Path) -> Result<ChatServer, Box<dyn std::error::Error>> {
    std::fs::create_dir_all(dir)?;
    let store = SqliteCheckpointer::open(dir.join("chat.db"))?;
    let threads = store.threads();
    let agent = Agent::builder(ScriptedModel::from_rule(answer))
        .system_prompt("You tidy folders.")
        .tool(delete_file)
        .chain(HumanInTheLoop::new().interrupt_on(
            "delete_file",
            ToolPolicy::always().description("Deletes a file for good"),
        ))
        .checkpointer(store, Durability::EveryStep)
        .build()?;
    // The page is served on loopback, to the one person at this machine: anyone who reaches
    // the server is that person (see the README's *Serve it safely* for a server on a network).
    Ok(AgentServer::builder()
        .allow_anonymous()
        .build(Arc::new(agent), threads)?)
}

/// The routes: the chat page at `/`, the agent under `/agent`.
pub(crate) fn router(server: &ChatServer) -> axum::Router {
    axum::Router::new()
        .route("/", get(|| async { Html(PAGE) }))
        .merge(server.mount("/agent"))
}
