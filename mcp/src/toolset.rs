//! The tools of several MCP servers, named for the model.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::sync::Arc;

use hookchain_core::{ToolRegistry, ToolSpec};

use crate::connection::Connection;
use crate::error::Error;
use crate::names::provider_safe_names;
use crate::schema::object_schema;
use crate::server::McpServer;
use crate::tool::McpTool;

/// The tools of one or more MCP servers, connected, as hookchain tools.
///
/// [`connect`](Self::connect) starts (or reaches) every server, does the MCP handshake and
/// lists its tools (following pagination, within limits: see [`Error::TooLarge`]). Each tool
/// becomes an [`McpTool`] named for the model: the server's [prefix](McpServer::prefix) and `_`
/// before the server's name for it, mapped to `^[a-zA-Z0-9_-]{1,64}$` (what OpenAI and
/// Anthropic accept; see [`provider_safe_names`](crate::provider_safe_names)). Two tools that
/// would have the same name are an error ([`Error::DuplicateToolName`]) rather than one
/// hiding the other.
///
/// ```no_run
/// use hookchain::prelude::*;
/// use hookchain_mcp::{McpServer, McpToolset};
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let toolset = McpToolset::connect([
///     McpServer::stdio("time", "python3").args(["-m", "mcp_server_time"]),
///     McpServer::stdio("git", "python3")
///         .args(["-m", "mcp_server_git", "--repository", "."])
///         .prefix("repo"),
/// ])
/// .await?;
/// # let model = ScriptedModel::new([ModelResponse::text("ok")]);
/// let agent = Agent::builder(model).tools(toolset.registry()).build()?;
/// # let _ = agent;
/// # Ok(())
/// # }
/// ```
///
/// The servers live as long as the toolset or any of its tools: a stdio server's process is
/// killed and reaped when the last of them is dropped, or at once by [`close`](Self::close).
#[derive(Debug)]
pub struct McpToolset {
    connections: Vec<Arc<Connection>>,
    tools: Vec<McpTool>,
}

impl McpToolset {
    /// Connects to every server in `servers` (at the same time) and lists their tools.
    ///
    /// # Errors
    ///
    /// The first server that cannot be started, reached or listed (the others are dropped,
    /// their processes killed), two servers of the same name, or two tools of the same name.
    pub async fn connect(servers: impl IntoIterator<Item = McpServer>) -> Result<Self, Error> {
        let servers: Vec<McpServer> = servers.into_iter().collect();
        let mut names = std::collections::HashSet::new();
        for server in &servers {
            if !names.insert(server.name.as_str()) {
                return Err(Error::DuplicateServerName(server.name.clone()));
            }
        }
        let connected =
            futures::future::try_join_all(servers.into_iter().map(Connection::connect)).await?;

        // Every tool with its full name (the prefix included), in server order.
        let mut listed = Vec::new();
        for (connection, tools) in &connected {
            for tool in tools {
                let full = match &connection.server().prefix {
                    Some(prefix) => format!("{prefix}_{}", tool.name),
                    None => tool.name.to_string(),
                };
                listed.push((connection, tool, full));
            }
        }
        let mapped = provider_safe_names(listed.iter().map(|(_, _, full)| full));

        let mut tools = Vec::with_capacity(listed.len());
        let mut taken: HashMap<&str, (&str, &str)> = HashMap::with_capacity(listed.len());
        for ((connection, tool, _full), name) in listed.iter().zip(&mapped) {
            match taken.entry(name.as_str()) {
                Entry::Occupied(first) => {
                    let (first_server, first_tool) = *first.get();
                    return Err(Error::DuplicateToolName {
                        name: name.clone(),
                        first_server: first_server.to_owned(),
                        first_tool: first_tool.to_owned(),
                        second_server: connection.server().name.clone(),
                        second_tool: tool.name.to_string(),
                    });
                }
                Entry::Vacant(slot) => {
                    slot.insert((connection.server().name.as_str(), &tool.name));
                }
            }
            let spec = ToolSpec::new(
                name.clone(),
                tool.description.as_deref().unwrap_or_default(),
                object_schema(&tool.input_schema),
            );
            tools.push(McpTool::new(
                spec,
                tool.name.to_string(),
                Arc::clone(connection),
            ));
        }
        drop(taken);
        let connections = connected
            .into_iter()
            .map(|(connection, _)| connection)
            .collect();
        Ok(Self { connections, tools })
    }

    /// Every tool, in server order and then in the order each server listed them.
    #[must_use]
    pub fn tools(&self) -> &[McpTool] {
        &self.tools
    }

    /// The tool the model calls `name`.
    #[must_use]
    pub fn tool(&self, name: &str) -> Option<&McpTool> {
        self.tools.iter().find(|tool| tool.name() == name)
    }

    /// The server's own name for the tool the model calls `name` (the mapping back).
    #[must_use]
    pub fn original_name(&self, name: &str) -> Option<&str> {
        self.tool(name).map(McpTool::original_name)
    }

    /// A registry of every tool, for [`AgentBuilder::tools`](hookchain_core::AgentBuilder::tools)
    /// (which replaces the agent's tools: to add them to tools of your own, see
    /// [`register`](Self::register)).
    #[must_use]
    pub fn registry(&self) -> ToolRegistry {
        let mut registry = ToolRegistry::new();
        self.register(&mut registry);
        registry
    }

    /// Adds every tool to `registry` (for [`AgentBuilder::tools`](hookchain_core::AgentBuilder::tools)).
    /// A tool whose name the registry has already is refused by the agent when it is built
    /// ([`ToolRegistry::register`]).
    pub fn register(&self, registry: &mut ToolRegistry) {
        for tool in &self.tools {
            registry.register(tool.clone());
        }
    }

    /// The process id of the stdio server `server` (`None` for an HTTP server, an unknown
    /// name, or a server not running now).
    pub async fn process_id(&self, server: &str) -> Option<u32> {
        let connection = self
            .connections
            .iter()
            .find(|connection| connection.server().name == server)?;
        connection.process_id().await
    }

    /// Ends every session now: a stdio server's stdin is closed and the process waited for
    /// (then sent SIGTERM, then killed), and reaped. A tool still held by an agent starts its
    /// server again if it is called.
    pub async fn close(self) {
        futures::future::join_all(self.connections.iter().map(|connection| connection.close()))
            .await;
    }
}

impl<'a> IntoIterator for &'a McpToolset {
    type Item = &'a McpTool;
    type IntoIter = std::slice::Iter<'a, McpTool>;

    fn into_iter(self) -> Self::IntoIter {
        self.tools.iter()
    }
}
