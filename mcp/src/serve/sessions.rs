//! rmcp's in-memory MCP sessions, each bound to the principal that opened it.
//!
//! Every HTTP request is authorized, and a call runs as its own request's principal, not the
//! session's; what a session holds besides is its own (the event stream of `GET`, the replay
//! of a stream by `Last-Event-ID`, its end by `DELETE`). So the principal of a session's
//! `initialize` is recorded here, and a request naming the session with another principal is
//! answered as if there were no such session ([`SessionOwners::admits`], asked by the HTTP
//! service before rmcp sees the request). The record goes when rmcp closes the session:
//! a `DELETE`, the session's idle timeout, the server's shutdown.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use futures::Stream;
use hookchain_core::Principal;
use rmcp::model::{ClientJsonRpcMessage, GetExtensions, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::{
    EventStore, RestoreOutcome, ServerSseMessage, SessionId, SessionManager,
};

/// Who opened each open session.
#[derive(Debug, Default)]
pub(super) struct SessionOwners {
    owners: Mutex<HashMap<SessionId, Principal>>,
}

impl SessionOwners {
    /// Whether `principal` may use the session `id`. One opened by the same principal may;
    /// one opened by another may not. One this process does not know — never opened here, or
    /// already closed — may only where every request is anonymous (`restorable`): rmcp then
    /// answers it (not found, or restored from a session store); otherwise who opened it is
    /// unknown, and it is refused.
    pub(super) fn admits(&self, id: &str, principal: &Principal, restorable: bool) -> bool {
        match self.lock().get(id) {
            Some(owner) => same_principal(owner, principal),
            None => restorable,
        }
    }

    fn record(&self, id: SessionId, owner: Principal) {
        self.lock().insert(id, owner);
    }

    fn forget(&self, id: &SessionId) {
        self.lock().remove(id);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, Principal>> {
        // The map is consistent after every statement: a panic elsewhere leaves nothing half
        // done in it.
        self.owners.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Whether two principals are the same party: the same id, tenant and anonymity. Claims may
/// differ — a renewed token carries a new expiry, a changed role — and the party stays.
fn same_principal(owner: &Principal, asking: &Principal) -> bool {
    owner.id() == asking.id()
        && owner.tenant() == asking.tenant()
        && owner.is_anonymous() == asking.is_anonymous()
}

/// rmcp's [`LocalSessionManager`], recording who opens each session and forgetting it when
/// the session closes.
#[derive(Debug, Default)]
pub(super) struct OwnedSessions {
    sessions: LocalSessionManager,
    owners: Arc<SessionOwners>,
}

impl OwnedSessions {
    /// The owners of the sessions, for the HTTP service's check.
    pub(super) fn owners(&self) -> &Arc<SessionOwners> {
        &self.owners
    }
}

/// The principal the HTTP service put into the request of `message` (an `initialize`).
fn principal_of(message: &ClientJsonRpcMessage) -> Option<Principal> {
    let ClientJsonRpcMessage::Request(request) = message else {
        return None;
    };
    request
        .request
        .extensions()
        .get::<http::request::Parts>()?
        .extensions
        .get::<Principal>()
        .cloned()
}

impl SessionManager for OwnedSessions {
    type Error = <LocalSessionManager as SessionManager>::Error;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        self.sessions.create_session().await
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        // Recorded before the client can learn the id (it is in the response). A session
        // opened without a principal (not through our HTTP service) is recorded as no one's,
        // and refused to everyone but where all are anonymous.
        if let Some(owner) = principal_of(&message) {
            self.owners.record(id.clone(), owner);
        }
        self.sessions.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.sessions.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        // Forgotten first: a session whose closing fails is refused to everyone rather than
        // left to whoever asks.
        self.owners.forget(id);
        self.sessions.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.sessions.create_stream(id, message).await
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.sessions.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.sessions.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.sessions.resume(id, last_event_id).await
    }

    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        self.sessions.restore_session(id).await
    }

    fn event_store(&self) -> Option<Arc<dyn EventStore>> {
        self.sessions.event_store()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_admits_its_owner_and_refuses_others() {
        let owners = SessionOwners::default();
        let alice = Principal::new("alice").with_tenant("acme");
        owners.record("s1".into(), alice.clone());
        assert!(owners.admits("s1", &alice, false));
        // A renewed token: new claims, the same party.
        assert!(owners.admits("s1", &alice.clone().with_claim("exp", 2), false));
        assert!(!owners.admits("s1", &Principal::new("bob").with_tenant("acme"), false));
        assert!(!owners.admits("s1", &Principal::new("alice").with_tenant("other"), false));
        assert!(!owners.admits("s1", &Principal::anonymous(), true));
    }

    #[test]
    fn an_unknown_session_is_refused_unless_everyone_is_anonymous() {
        let owners = SessionOwners::default();
        owners.record("s1".into(), Principal::new("alice"));
        owners.forget(&"s1".into());
        assert!(!owners.admits("s1", &Principal::new("alice"), false));
        assert!(owners.admits("s1", &Principal::anonymous(), true));
    }
}
