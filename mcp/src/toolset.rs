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
/// hiding the other. Two rules hold for the toolset's life: a name once offered keeps meaning
/// its tool ([Names that do not change](#names-that-do-not-change)), and a result reaches the
/// model within a bound ([Results](#results)).
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
/// on a new session (started again after it died). Its tools keep their names, its new ones
/// are named (see below), and from the next model call on an agent with the toolset's
/// [`registry`](Self::registry) is offered them, and no longer offered the removed ones: a
/// call of one gets the unknown-tool error (or, called before the new list came, a message
/// that the server no longer offers it). A listing that fails keeps the last tools.
/// [`tools`](Self::tools) returns a snapshot: ask again for the tools of the moment.
///
/// A 2026-07-28 server may say how long its list stays fresh (`ttlMs`, SEP-2549): the list
/// is reused that long, and at its first use after — a model call offered the registry's
/// tools, a call of one of them — it is listed again the same way, in a task of its own (the
/// use does not wait: the model is offered the new list from its next call on). A list
/// without `ttlMs` is kept until the server says it changed. A listing that fails is tried
/// again at the next use.
///
/// # Names that do not change
///
/// A name the toolset has offered the model means the same tool for the toolset's life, so
/// that a middleware that acts on tools by name — a `HumanInTheLoop` gate, a filter, a limit
/// per tool — acts on the tool it was set up for, whatever the servers list later:
///
/// - **The tool that got a name first keeps it**, across every later listing (a changed list,
///   a server started again). The tools of [`connect`](Self::connect)'s listings are named
///   together, by [`provider_safe_names`](crate::provider_safe_names) (`files.delete` and
///   `files/delete` listed at once both get a suffix).
/// - **A newcomer that collides gets the suffix**: a tool a server adds later, whose name
///   another tool has (or had), is offered under its name with the hash suffix
///   (`files/delete` added after `files.delete` was offered as `files_delete`:
///   `files_delete_<8 hex digits>`), even a name that needs no cleaning up (`files_delete`
///   itself). When the name with the suffix is taken too, the newcomer is left out, with a
///   warning.
/// - **A tool that disappears frees nothing**: its name is never given to another tool, and the
///   tool gets it back if its server lists it again (the same server, the same name on the
///   server); another tool that cleans up to it gets the suffix.
///
/// Names are never freed, so a server whose tools keep changing gets names for at most 8 ×
/// its [`max_tools`](McpServer::max_tools) tools (4096 by default) over the toolset's life;
/// its new tools past that are left out, with a warning.
///
/// # Gating a tool by its server and name
///
/// A gate names a tool as the model calls it. For an MCP tool, ask the toolset for that name
/// with [`offered_name`](Self::offered_name)`(server, name on the server)`: the server is the
/// name given to [`McpServer::stdio`] or [`McpServer::http`], the tool's name is the server's
/// own (before any [`prefix`](McpServer::prefix) and cleaning up). By the rules above, the
/// name returned stays that tool's (and no other's) for the toolset's life. A tool the server
/// has not listed yet has no name yet (`None`): build the gate after
/// [`connect`](Self::connect), and give each server a [prefix](McpServer::prefix), so that a
/// tool of one server cannot take the name another server's would want.
///
/// ```no_run
/// use hookchain::builtin::human_in_the_loop::{HumanInTheLoop, ToolPolicy};
/// use hookchain_mcp::{McpServer, McpToolset};
///
/// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
/// let toolset = McpToolset::connect([
///     McpServer::stdio("files", "files-mcp-server").prefix("fs"),
/// ])
/// .await?;
/// // `files.delete` of the server `files`: offered as `fs_files_delete` (or, had another tool
/// // taken that name first, with a suffix); the gate is on that tool, and only on it.
/// let delete = toolset
///     .offered_name("files", "files.delete")
///     .ok_or("the server `files` has no `files.delete`")?;
/// let approval = HumanInTheLoop::new().interrupt_on(delete, ToolPolicy::always());
/// # let _ = approval;
/// # Ok(())
/// # }
/// ```
///
/// # Results
///
/// What the model reads of a call's result is bounded by its server's
/// [`max_result_bytes`](McpServer::max_result_bytes), 1 MiB by default: text beyond it is cut
/// on a character boundary, images and links that do not fit are dropped, and a note at the
/// end says how much was cut and what was dropped
/// (`[… 7,340,032 more bytes cut: the result was larger than this agent takes]`).
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

    /// The name the model is offered the tool `original` of the server `server` under (the
    /// mapping there): the server's name as given to [`McpServer::stdio`] or
    /// [`McpServer::http`], the tool's as the server lists it. The name is the tool's for the
    /// toolset's life, and no other tool's: this is how to gate an MCP tool by name (see
    /// [Gating a tool](#gating-a-tool-by-its-server-and-name)). Also while the server does not
    /// list the tool (it removed it); `None` for a tool it has never listed, or that was left
    /// out.
    #[must_use]
    pub fn offered_name(&self, server: &str, original: &str) -> Option<String> {
        self.catalog.offered_name(server, original)
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
