//! What a served call asks a client of MCP 2025-11-25, asked in its session: the requests
//! sent to the client as requests of the server's own (`elicitation/create`,
//! `sampling/createMessage`, `roots/list`) while the call waits in this process.

use rmcp::RoleServer;
use rmcp::model::{InputRequest, InputRequests, InputResponses, ServerRequest};
use rmcp::service::{Peer, ServiceError};

/// The client's responses to `requests`, by key, asked one after the other.
pub(super) async fn ask_in_session(
    peer: &Peer<RoleServer>,
    requests: &InputRequests,
) -> Result<InputResponses, Asked> {
    let mut responses = InputResponses::new();
    for (key, request) in requests {
        let request = match request.clone() {
            InputRequest::Elicitation(request) => ServerRequest::ElicitRequest(request),
            InputRequest::CreateMessage(request) => ServerRequest::CreateMessageRequest(request),
            InputRequest::ListRoots(request) => ServerRequest::ListRootsRequest(request),
            _ => return Err(Asked::Unknown),
        };
        let response = peer.send_request(request).await?;
        responses.insert(key.clone(), to_value(response));
    }
    Ok(responses)
}

/// Why a client's session did not answer.
#[derive(Debug, thiserror::Error)]
pub(super) enum Asked {
    /// The client refused, or the session ended.
    #[error("the client did not answer: {0}")]
    Client(#[from] ServiceError),
    /// A request this server does not know how to send.
    #[error("a request this server cannot send")]
    Unknown,
}

fn to_value(result: impl serde::Serialize) -> serde_json::Value {
    serde_json::to_value(result).unwrap_or(serde_json::Value::Null)
}
