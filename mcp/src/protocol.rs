//! Which revision of MCP a connection speaks, and how it is chosen.

use rmcp::model::ProtocolVersion;
use rmcp::service::ClientLifecycleMode;

/// The revision of MCP a connection to a server speaks (see
/// [`McpServer::protocol`](crate::McpServer::protocol)).
///
/// - **2025-11-25**: a session, opened by the `initialize` handshake (and over HTTP named by
///   the `Mcp-Session-Id` header); a server asks for input during a call with requests of its
///   own (`elicitation/create`), answered on that session.
/// - **2026-07-28**: stateless; every request carries the protocol version and the client's
///   capabilities in its `_meta`, and a server that needs input for a call answers it
///   *input required* (its questions and an opaque `requestState`): the call is made again with
///   the answers and the state — from any process, after any delay. A run pauses on the
///   question, keeps the state in its checkpoint, and whichever worker resumes it makes the
///   call again; a server's tool that asked before it acted acts once.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum McpProtocol {
    /// The newest revision both sides speak: 2026-07-28 when the server answers
    /// `server/discover`, 2025-11-25 (the handshake) when it says it does not know the method.
    /// A server that says nothing at all to `server/discover` is taken for an older one after
    /// 10 s (rmcp's wait): pin [`V2025_11_25`](Self::V2025_11_25) for such a server.
    #[default]
    Negotiate,
    /// 2025-11-25 only: the `initialize` handshake, whatever the server also speaks.
    V2025_11_25,
    /// 2026-07-28 only: a server that does not answer `server/discover` cannot be used.
    V2026_07_28,
}

impl McpProtocol {
    /// How rmcp starts the connection.
    pub(crate) fn lifecycle(self) -> ClientLifecycleMode {
        match self {
            McpProtocol::Negotiate => ClientLifecycleMode::Auto {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                legacy_version: Some(ProtocolVersion::V_2025_11_25),
            },
            McpProtocol::V2025_11_25 => ClientLifecycleMode::Initialize,
            McpProtocol::V2026_07_28 => ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        }
    }
}
