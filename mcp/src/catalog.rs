//! The toolset's tools of the moment: made from every server's last listing, and made again
//! when a server lists other tools (after `notifications/tools/list_changed`, or on a new
//! session), each under the name it was first offered under.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use hookchain_core::ToolSpec;
use hookchain_core::tool::{SourcedTool, ToolSource};
use rmcp::model::Tool as McpToolInfo;

use crate::connection::Connection;
use crate::error::Error;
use crate::limits::NAMES_PER_LISTED_TOOL;
use crate::names::{provider_safe_names, suffixed_name};
use crate::offered_names::{OfferedNames, Unnamed};
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
    /// Every name given so far: a tool keeps its name across listings, and a name is never
    /// given to another tool (see `offered_names`).
    names: OfferedNames,
    tools: Arc<[McpTool]>,
}

/// What to do with a tool whose model name another tool has already.
#[derive(Clone, Copy)]
enum OnClash {
    /// At connect: refuse the toolset ([`Error::DuplicateToolName`]).
    Refuse,
    /// After a server changed its list: name the newcomer with a suffix, or, when that is
    /// taken too, leave it out with a warning (the toolset is in use; refusing would take
    /// every other tool away).
    Suffix,
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
        let mut names = OfferedNames::default();
        let tools = named_tools(&connections, &listings, &mut names, OnClash::Refuse)?;
        let catalog = Arc::new(Catalog {
            connections,
            state: Mutex::new(State {
                listings,
                names,
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

    /// The name the tool `original` of `server` was offered under (see
    /// [`McpToolset::offered_name`](crate::McpToolset::offered_name)).
    pub(crate) fn offered_name(&self, server: &str, original: &str) -> Option<String> {
        self.state().names.get(server, original).map(str::to_owned)
    }

    /// The connection `index` listed `tools`: the catalog's tools are made again, those named
    /// before under their names, the server's new ones named.
    fn listed(&self, index: usize, tools: &[McpToolInfo]) {
        let mut state = self.state();
        let State {
            listings, names, ..
        } = &mut *state;
        let Some(listing) = listings.get_mut(index) else {
            return;
        };
        if listing.as_slice() == tools {
            return;
        }
        *listing = tools.to_vec();
        let named = named_tools(&self.connections, listings, names, OnClash::Suffix);
        // `Suffix` never refuses; were it to, the last tools would stay.
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
    /// Read at every model call, the use of the tool lists: a server's list that ran out (its
    /// `ttlMs`) is listed again meanwhile, for the model's next call.
    fn version(&self) -> u64 {
        for connection in &self.0.connections {
            connection.relist_if_stale();
        }
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
/// and `_` before the server's name for it, mapped to a provider-safe name. A tool named before
/// (in `names`) keeps its name; the others are named first, and recorded in `names`.
fn named_tools(
    connections: &[Arc<Connection>],
    listings: &[Vec<McpToolInfo>],
    names: &mut OfferedNames,
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
    name_new_tools(&listed, names, on_clash)?;

    let mut tools = Vec::with_capacity(listed.len());
    // The names offered in this listing, with their tools: a server that lists one tool twice
    // would offer one name twice.
    let mut offered: HashMap<&str, (&str, &str)> = HashMap::with_capacity(listed.len());
    for (connection, tool, _full) in &listed {
        let server = connection.server();
        // A tool without a name was left out (`name_new_tools` said why).
        let Some(name) = names.get(&server.name, &tool.name) else {
            continue;
        };
        match offered.entry(name) {
            Entry::Occupied(first) => {
                let (first_server, first_tool) = *first.get();
                match on_clash {
                    OnClash::Refuse => {
                        return Err(Error::DuplicateToolName {
                            name: name.to_owned(),
                            first_server: first_server.to_owned(),
                            first_tool: first_tool.to_owned(),
                            second_server: server.name.clone(),
                            second_tool: tool.name.to_string(),
                        });
                    }
                    OnClash::Suffix => {
                        tracing::warn!(
                            tool = %name,
                            server = %server.name,
                            "the MCP server `{}` listed its tool `{}` twice: it is offered once",
                            server.name,
                            tool.name,
                        );
                        continue;
                    }
                }
            }
            Entry::Vacant(slot) => {
                slot.insert((server.name.as_str(), &tool.name));
            }
        }
        let spec = ToolSpec::new(
            name,
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

/// Names the tools of `listed` (connection, tool, full name) that have no name in `names`
/// yet, with the names they want among themselves (whether a name needs a suffix depends on
/// the set: see `provider_safe_names`). A name another tool has already stays that tool's: at
/// connect, that is an error; later, the newcomer gets its name with a suffix, or is left out
/// with a warning when that is taken too (or its server has had too many tools).
fn name_new_tools(
    listed: &[(&Arc<Connection>, &McpToolInfo, String)],
    names: &mut OfferedNames,
    on_clash: OnClash,
) -> Result<(), Error> {
    let mut seen = HashSet::new();
    let new: Vec<_> = listed
        .iter()
        .filter(|(connection, tool, _)| {
            let server = connection.server().name();
            names.get(server, &tool.name).is_none() && seen.insert((server, &*tool.name))
        })
        .collect();
    let wanted = provider_safe_names(new.iter().map(|(_, _, full)| full));
    for ((connection, tool, full), wanted) in new.into_iter().zip(wanted) {
        let server = connection.server();
        let (fallback, limit) = match on_clash {
            // At connect every tool is new, and named by `provider_safe_names`: a clash is of
            // two identical names (or a name that is another's with a suffix).
            OnClash::Refuse => (None, usize::MAX),
            OnClash::Suffix => (
                Some(suffixed_name(full)),
                server.max_tools.saturating_mul(NAMES_PER_LISTED_TOOL),
            ),
        };
        match names.give(&server.name, &tool.name, wanted, fallback, limit) {
            Ok(_) => {}
            Err(Unnamed::Taken { name, owner }) => match on_clash {
                OnClash::Refuse => {
                    return Err(Error::DuplicateToolName {
                        name,
                        first_server: owner.server,
                        first_tool: owner.tool,
                        second_server: server.name.clone(),
                        second_tool: tool.name.to_string(),
                    });
                }
                OnClash::Suffix => tracing::warn!(
                    tool = %name,
                    server = %server.name,
                    "the MCP tool `{}` of `{}` would be named `{name}`, as `{}` of `{}` is, \
                     and its name with a suffix is taken too: it is left out",
                    tool.name,
                    server.name,
                    owner.tool,
                    owner.server,
                ),
            },
            Err(Unnamed::TooMany { limit }) => tracing::warn!(
                server = %server.name,
                "the MCP server `{}` has had {limit} tools over the toolset's life (a name is \
                 never given twice): its new tool `{}` is left out",
                server.name,
                tool.name,
            ),
        }
    }
    Ok(())
}
