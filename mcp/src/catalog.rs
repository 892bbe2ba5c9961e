//! The toolset's tools of the moment: made from every server's last listing, and made again
//! when a server lists other tools (after `notifications/tools/list_changed`, or on a new
//! session).

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use hookchain_core::ToolSpec;
use hookchain_core::tool::{SourcedTool, ToolSource};
use rmcp::model::Tool as McpToolInfo;

use crate::connection::Connection;
use crate::error::Error;
use crate::names::provider_safe_names;
use crate::schema::object_schema;
use crate::tool::McpTool;

/// Every server's tools, named for the model, and a version that changes with them.
pub(crate) struct Catalog {
    connections: Vec<Arc<Connection>>,
    state: Mutex<State>,
    /// Incremented after each change of `state.tools` (what [`ToolSource::version`] reads).
    version: AtomicU64,
}

struct State {
    /// Each connection's last listing, in connection order.
    listings: Vec<Vec<McpToolInfo>>,
    tools: Arc<[McpTool]>,
}

/// What to do with a tool whose model name another tool (listed before it) has already.
#[derive(Clone, Copy)]
enum OnClash {
    /// At connect: refuse the toolset ([`Error::DuplicateToolName`]).
    Refuse,
    /// After a server changed its list: leave the later tool out, with a warning (the
    /// toolset is in use; refusing would take every other tool away).
    LeaveOut,
}

impl Catalog {
    /// The catalog of the `connected` servers, each with its first listing; each connection
    /// then reports its new listings here.
    ///
    /// # Errors
    ///
    /// Two tools of the same model name ([`Error::DuplicateToolName`]).
    pub(crate) fn new(
        connected: Vec<(Arc<Connection>, Vec<McpToolInfo>)>,
    ) -> Result<Arc<Self>, Error> {
        let (connections, listings): (Vec<_>, Vec<_>) = connected.into_iter().unzip();
        let tools = named_tools(&connections, &listings, OnClash::Refuse)?;
        let catalog = Arc::new(Catalog {
            connections,
            state: Mutex::new(State {
                listings,
                tools: tools.into(),
            }),
            version: AtomicU64::new(0),
        });
        for (index, connection) in catalog.connections.iter().enumerate() {
            // Weak: a connection (held by the catalog's tools) must not keep the catalog alive.
            let catalog = Arc::downgrade(&catalog);
            connection.on_listed(Box::new(move |tools| {
                if let Some(catalog) = catalog.upgrade() {
                    catalog.listed(index, tools);
                }
            }));
        }
        Ok(catalog)
    }

    pub(crate) fn connections(&self) -> &[Arc<Connection>] {
        &self.connections
    }

    /// The tools now, in server order and then in the order each server listed them.
    pub(crate) fn tools(&self) -> Arc<[McpTool]> {
        Arc::clone(&self.state().tools)
    }

    /// The connection `index` listed `tools`: the tools are named again (with every other
    /// server's, since a name may depend on the others: see `provider_safe_names`).
    fn listed(&self, index: usize, tools: &[McpToolInfo]) {
        let mut state = self.state();
        let Some(listing) = state.listings.get_mut(index) else {
            return;
        };
        if listing.as_slice() == tools {
            return;
        }
        *listing = tools.to_vec();
        let named = named_tools(&self.connections, &state.listings, OnClash::LeaveOut);
        // `LeaveOut` never refuses; were it to, the last tools would stay.
        if let Ok(named) = named {
            tracing::info!(
                server = %self.connections[index].server().name(),
                tools = named.len(),
                "the MCP server's tools changed"
            );
            state.tools = named.into();
            // After the change, for a reader of the version to see the new tools.
            self.version.fetch_add(1, Ordering::Release);
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic elsewhere leaves the state whole: it is replaced, never edited in place.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl std::fmt::Debug for Catalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Catalog")
            .field("connections", &self.connections)
            .field("tools", &self.tools())
            .finish()
    }
}

/// The catalog as a [`ToolSource`] of a registry: the model is offered the tools of the
/// moment.
pub(crate) struct CatalogSource(pub(crate) Arc<Catalog>);

impl ToolSource for CatalogSource {
    fn version(&self) -> u64 {
        self.0.version.load(Ordering::Acquire)
    }

    fn tools(&self) -> Vec<SourcedTool> {
        self.0
            .tools()
            .iter()
            .cloned()
            .map(SourcedTool::new)
            .collect()
    }
}

/// Each tool of `listings` (one per connection) as the model sees it: the server's prefix
/// and `_` before the server's name for it, mapped to a provider-safe name.
fn named_tools(
    connections: &[Arc<Connection>],
    listings: &[Vec<McpToolInfo>],
    on_clash: OnClash,
) -> Result<Vec<McpTool>, Error> {
    // Every tool with its full name (the prefix included), in server order.
    let mut listed = Vec::new();
    for (connection, tools) in connections.iter().zip(listings) {
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
                match on_clash {
                    OnClash::Refuse => {
                        return Err(Error::DuplicateToolName {
                            name: name.clone(),
                            first_server: first_server.to_owned(),
                            first_tool: first_tool.to_owned(),
                            second_server: connection.server().name.clone(),
                            second_tool: tool.name.to_string(),
                        });
                    }
                    OnClash::LeaveOut => {
                        tracing::warn!(
                            tool = %name,
                            server = %connection.server().name,
                            "the MCP tool `{}` of `{}` would be named `{name}`, as `{first_tool}` \
                             of `{first_server}` is: it is left out",
                            tool.name,
                            connection.server().name,
                        );
                        continue;
                    }
                }
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
    Ok(tools)
}
