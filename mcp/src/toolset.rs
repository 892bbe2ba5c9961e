//! The tools of several MCP servers, named for the model.

use std::sync::Arc;

use hookchain_core::ToolRegistry;

use crate::catalog::{Catalog, CatalogSource};
use crate::connection::Connection;
use crate::error::Error;
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
/// Examples: *Servers and their tools* in the docs of `hookchain::mcp`.
///
/// The servers live as long as the toolset, a registry made of it or any of its tools: a stdio
/// server's process is killed and reaped when the last of them is dropped, or at once by
/// [`close`](Self::close).
///
/// # Changed lists
///
/// A server that sends `notifications/tools/list_changed` is listed again at once (in a task
/// of its own, within its [connect timeout](McpServer::connect_timeout)), and so is a server
/// on a new session (started again after it died). Its new tools are named by the same rules
/// (a name can depend on the other tools: a tool whose name was cleaned up, `files.read` as
/// `files_read`, gets a suffix when a new tool cleans up to the same name, `files/read`), and
/// from the next model call on an agent with the toolset's
/// [`registry`](Self::registry) is offered them, and no longer offered the removed ones: a
/// call of one gets the unknown-tool error (or, called before the new list came, a message
/// that the server no longer offers it). A new tool that would have the name of another is
/// left out with a warning, where [`connect`](Self::connect) refuses the toolset. A listing
/// that fails keeps the last tools. [`tools`](Self::tools) returns a snapshot: ask again for
/// the tools of the moment.
#[derive(Debug)]
pub struct McpToolset {
    catalog: Arc<Catalog>,
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
        Ok(Self {
            catalog: Catalog::new(connected)?,
        })
    }

    /// Every tool now, in server order and then in the order each server listed them: a
    /// snapshot, which a server's changed list does not change (ask again).
    #[must_use]
    pub fn tools(&self) -> Arc<[McpTool]> {
        self.catalog.tools()
    }

    /// The tool the model calls `name`, now.
    #[must_use]
    pub fn tool(&self, name: &str) -> Option<McpTool> {
        self.tools()
            .iter()
            .find(|tool| tool.name() == name)
            .cloned()
    }

    /// The server's own name for the tool the model calls `name` (the mapping back), now.
    #[must_use]
    pub fn original_name(&self, name: &str) -> Option<String> {
        self.tool(name).map(|tool| tool.original_name().to_owned())
    }

    /// A registry of every tool, for [`AgentBuilder::tools`](hookchain_core::AgentBuilder::tools)
    /// (which replaces the agent's tools: to add them to tools of your own, see
    /// [`register`](Self::register)). The agent is offered the tools of the moment (see
    /// [Changed lists](#changed-lists)).
    #[must_use]
    pub fn registry(&self) -> ToolRegistry {
        let mut registry = ToolRegistry::new();
        self.register(&mut registry);
        registry
    }

    /// Adds the toolset's tools to `registry` (for
    /// [`AgentBuilder::tools`](hookchain_core::AgentBuilder::tools)), as a
    /// [`ToolSource`](hookchain_core::tool::ToolSource): at each model call, the model is
    /// offered the tools of the moment (see [Changed lists](#changed-lists)). A tool whose
    /// name one of the registry's own tools has is left out, with a warning: the registry's
    /// tool stays.
    pub fn register(&self, registry: &mut ToolRegistry) {
        registry.register_source(CatalogSource(Arc::clone(&self.catalog)));
    }

    /// The process id of the stdio server `server` (`None` for an HTTP server, an unknown
    /// name, or a server not running now).
    pub async fn process_id(&self, server: &str) -> Option<u32> {
        let connection = self
            .catalog
            .connections()
            .iter()
            .find(|connection| connection.server().name == server)?;
        connection.process_id().await
    }

    /// Ends every session now: a stdio server's stdin is closed and the process waited for
    /// (then sent SIGTERM, then killed), and reaped. A tool still held by an agent starts its
    /// server again if it is called.
    pub async fn close(self) {
        futures::future::join_all(
            self.catalog
                .connections()
                .iter()
                .map(|connection| connection.close()),
        )
        .await;
    }
}

/// The tools now (see [`McpToolset::tools`]).
impl IntoIterator for &McpToolset {
    type Item = McpTool;
    type IntoIter = std::vec::IntoIter<McpTool>;

    fn into_iter(self) -> Self::IntoIter {
        self.tools().to_vec().into_iter()
    }
}
