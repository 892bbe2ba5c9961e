//! The bounds on what a server may send: its tool list, and the refusals the model reads.

use rmcp::model::{PaginatedRequestParams, Tool as McpToolInfo};
use rmcp::{Peer, RoleClient};

use crate::error::Error;
use crate::freshness::Freshness;
use crate::server::McpServer;

/// The most pages of `tools/list` followed: a server whose cursor never ends is refused.
pub(crate) const MAX_PAGES: usize = 64;

/// The largest input schema of one tool, as JSON: a schema is sent to the model with every
/// request, so a huge one is refused rather than paid for on each turn.
pub(crate) const MAX_SCHEMA_BYTES: usize = 64 * 1024;

/// The largest description of one tool, for the same reason.
pub(crate) const MAX_DESCRIPTION_BYTES: usize = 16 * 1024;

/// The longest JSON-RPC error message of a refused call that the model reads.
pub(crate) const MAX_REFUSAL_BYTES: usize = 2048;

/// How many tools of one server a toolset names over its life, per tool the server may list
/// at once (its [`max_tools`](McpServer::max_tools)): 4096 by default. A name is never given
/// to another tool, so names are never freed; a server whose tools keep changing names would
/// otherwise grow the toolset without end. Its new tools past this are left out.
pub(crate) const NAMES_PER_LISTED_TOOL: usize = 8;

/// Every tool of the server behind `peer`, following `nextCursor`, within the limits, and
/// how long the list may be reused (its pages' `ttlMs`).
///
/// (A single message is bounded by rmcp: 16 MiB on a stdio line or an HTTP response.)
pub(crate) async fn list_tools(
    server: &McpServer,
    peer: &Peer<RoleClient>,
) -> Result<(Vec<McpToolInfo>, Freshness), Error> {
    let too_large = |what: String, limit: usize| Error::TooLarge {
        server: server.name.clone(),
        what,
        limit,
    };
    let mut tools = Vec::new();
    let mut freshness = None;
    let mut cursor = None;
    for _ in 0..MAX_PAGES {
        let mut params = PaginatedRequestParams::default().with_cursor(cursor);
        if let Some(trace_context) = &server.trace_context {
            trace_context.write_current(params.meta.get_or_insert_default());
        }
        let page = peer
            .list_tools(Some(params))
            .await
            .map_err(|source| Error::ListTools {
                server: server.name.clone(),
                source,
            })?;
        let page_freshness = Freshness::of_page(page.ttl_ms, tokio::time::Instant::now());
        freshness = Some(freshness.map_or(page_freshness, |listing: Freshness| {
            listing.and(page_freshness)
        }));
        tools.extend(page.tools);
        if tools.len() > server.max_tools {
            return Err(too_large(
                format!("more than {} tools", server.max_tools),
                server.max_tools,
            ));
        }
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => {
                for tool in &tools {
                    check_tool(tool).map_err(|(what, limit)| too_large(what, limit))?;
                }
                return Ok((tools, freshness.unwrap_or(Freshness::UNTIL_CHANGED)));
            }
        }
    }
    Err(too_large(
        format!("more than {MAX_PAGES} pages of tools"),
        MAX_PAGES,
    ))
}

fn check_tool(tool: &McpToolInfo) -> Result<(), (String, usize)> {
    let schema_bytes = serde_json::to_string(&*tool.input_schema).map_or(0, |json| json.len());
    if schema_bytes > MAX_SCHEMA_BYTES {
        return Err((
            format!(
                "the input schema of `{}` has {schema_bytes} bytes",
                tool.name
            ),
            MAX_SCHEMA_BYTES,
        ));
    }
    let description_bytes = tool.description.as_deref().map_or(0, str::len);
    if description_bytes > MAX_DESCRIPTION_BYTES {
        return Err((
            format!(
                "the description of `{}` has {description_bytes} bytes",
                tool.name
            ),
            MAX_DESCRIPTION_BYTES,
        ));
    }
    Ok(())
}

/// `text`, cut to at most `max` bytes on a character boundary, with `…` when cut.
pub(crate) fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    format!("{}…", &text[..text.floor_char_boundary(max)])
}
