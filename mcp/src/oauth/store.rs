//! One credential store shared by every connection to a server: rmcp's authorization manager
//! takes its store by value, and each connection (each toolset built with the same
//! [`McpOAuth`](super::McpOAuth)) has a manager of its own. The same for the store of the
//! authorizations waiting for a person (their PKCE verifiers).

use std::sync::Arc;

use rmcp::transport::auth::{
    AuthError, CredentialRefreshGuard, CredentialStore, StateStore, StoredAuthorizationState,
    StoredCredentials,
};

/// The application's store, behind an `Arc`, as rmcp's manager wants it.
pub(crate) struct SharedStore(pub(crate) Arc<dyn CredentialStore>);

#[async_trait::async_trait]
impl CredentialStore for SharedStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        self.0.load().await
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.0.save(credentials).await
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.0.clear().await
    }

    async fn on_refresh_token_rejected(
        &self,
        credentials: &StoredCredentials,
    ) -> Result<(), AuthError> {
        self.0.on_refresh_token_rejected(credentials).await
    }

    async fn acquire_refresh_guard(&self) -> Result<Option<CredentialRefreshGuard>, AuthError> {
        self.0.acquire_refresh_guard().await
    }
}

/// The application's state store, behind an `Arc`, as rmcp's manager wants it.
pub(crate) struct SharedStates(pub(crate) Arc<dyn StateStore>);

#[async_trait::async_trait]
impl StateStore for SharedStates {
    async fn save(
        &self,
        csrf_token: &str,
        state: StoredAuthorizationState,
    ) -> Result<(), AuthError> {
        self.0.save(csrf_token, state).await
    }

    async fn load(&self, csrf_token: &str) -> Result<Option<StoredAuthorizationState>, AuthError> {
        self.0.load(csrf_token).await
    }

    async fn delete(&self, csrf_token: &str) -> Result<(), AuthError> {
        self.0.delete(csrf_token).await
    }
}
