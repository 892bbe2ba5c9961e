//! [`Principal`]: who a run is for, as a server's authorizer established it.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Who asked for a run: the identity an application's authorizer established for the request
/// that started or resumed it — a user, a service account — with the tenant it belongs to and
/// the claims the application chose to pass on (roles, scopes, an email).
///
/// A server of hookchain's (`hookchain::axum::AgentServer`, the MCP tool server) calls the
/// application's authorizer on every request and puts the principal it returns into the run's
/// [`RunContext`](crate::RunContext), so hooks and tools read who asked with
/// [`Context::get`](crate::Context::get) or [`ToolContext`](crate::ToolContext)'s `get`:
///
/// ```
/// use hookchain::prelude::*;
/// use hookchain::{Principal, RunContext, ToolContext, ToolError, tool};
///
/// /// Pays an invoice; only a member of the finance team may.
/// #[tool]
/// async fn pay(cx: ToolContext<'_>, invoice: String) -> Result<String, ToolError> {
///     let Some(who) = cx.get::<Principal>() else {
///         return Err(ToolError::for_model("pay", "no one is signed in"));
///     };
///     if who.claim("team").and_then(|team| team.as_str()) != Some("finance") {
///         return Err(ToolError::for_model("pay", format!("{} may not pay invoices", who.id())));
///     }
///     Ok(format!("{invoice} paid by {}", who.id()))
/// }
///
/// # futures::executor::block_on(async {
/// let model = ScriptedModel::new([
///     ModelResponse::tool_calls([ToolCall::new("c1", "pay", serde_json::json!({"invoice": "INV-7"}))]),
///     ModelResponse::text("Paid."),
/// ]);
/// let agent = Agent::builder(model).tool(pay).build()?;
/// let alice = Principal::new("alice").with_claim("team", "finance");
/// agent.with_context(RunContext::new().with(alice)).run("Pay INV-7").await?;
/// let result = agent.model().requests()[1].messages.last().unwrap().text().into_owned();
/// assert_eq!(result, "INV-7 paid by alice");
/// # Ok::<(), hookchain::Error>(())
/// # }).unwrap();
/// ```
///
/// A principal is never saved into a checkpoint (it is a typed value of the run context, not
/// a saved one): every request that resumes a run is authorized again, and the resumed run
/// gets that request's principal.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Principal {
    id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tenant: Option<String>,
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    claims: Map<String, Value>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    anonymous: bool,
}

/// The longest principal id, or tenant, that a server takes, in bytes: 255, so that a tenant's
/// namespace and a client's thread id of 256 bytes make a store's key of at most 512
/// ([`MAX_KEY_LEN`](crate::interrupt::MAX_KEY_LEN)).
pub const MAX_PRINCIPAL_LEN: usize = 255;

/// A principal a server cannot use: its id or tenant is not one that can be recorded as a
/// thread's owner or a key's namespace.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PrincipalError {
    /// The id is empty, longer than [`MAX_PRINCIPAL_LEN`] bytes, or holds NUL.
    #[error("a principal's id must be 1 to {MAX_PRINCIPAL_LEN} bytes, without NUL")]
    Id,
    /// The tenant is empty, longer than [`MAX_PRINCIPAL_LEN`] bytes, or holds `/` or NUL.
    #[error("a principal's tenant must be 1 to {MAX_PRINCIPAL_LEN} bytes, without `/` or NUL")]
    Tenant,
}

impl Principal {
    /// The principal of id `id` (a user's or a service's stable id: a token's `sub`, a
    /// session's user id), with no tenant and no claims.
    pub fn new(id: impl Into<String>) -> Self {
        Principal {
            id: id.into(),
            tenant: None,
            claims: Map::new(),
            anonymous: false,
        }
    }

    /// The principal of a request that no one vouched for: what a server that was told to
    /// `allow_anonymous()` gives every request. It owns no thread: the threads it makes are
    /// owned by no one, and it reaches only those.
    #[must_use]
    pub fn anonymous() -> Self {
        Principal {
            anonymous: true,
            ..Principal::new("anonymous")
        }
    }

    /// The principal, as a member of `tenant`: a server keeps each tenant's threads and runs
    /// under keys of its own (see [`ThreadId::namespaced`](crate::ThreadId::namespaced)).
    #[must_use]
    pub fn with_tenant(mut self, tenant: impl Into<String>) -> Self {
        self.tenant = Some(tenant.into());
        self
    }

    /// The principal, with the claim `name` (a role, a scope, an email: what hooks and tools
    /// should know of who asked).
    #[must_use]
    pub fn with_claim(mut self, name: impl Into<String>, value: impl Into<Value>) -> Self {
        self.claims.insert(name.into(), value.into());
        self
    }

    /// Its id.
    #[must_use]
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Its tenant, if it has one.
    #[must_use]
    pub fn tenant(&self) -> Option<&str> {
        self.tenant.as_deref()
    }

    /// Its claims.
    #[must_use]
    pub fn claims(&self) -> &Map<String, Value> {
        &self.claims
    }

    /// The claim `name`, if it has one.
    #[must_use]
    pub fn claim(&self, name: &str) -> Option<&Value> {
        self.claims.get(name)
    }

    /// Whether it is the [`anonymous`](Self::anonymous) principal.
    #[must_use]
    pub fn is_anonymous(&self) -> bool {
        self.anonymous
    }

    /// What a thread it makes records as its owner: its id; `None` for the anonymous
    /// principal, whose threads no one owns.
    #[must_use]
    pub fn owner(&self) -> Option<&str> {
        (!self.anonymous).then_some(self.id.as_str())
    }

    /// Checks that its id and tenant can be recorded (an owner, a namespace): a server refuses
    /// a request whose authorizer returned one that cannot.
    pub fn validate(&self) -> Result<(), PrincipalError> {
        let fits = |text: &str| !text.is_empty() && text.len() <= MAX_PRINCIPAL_LEN;
        if !fits(&self.id) || self.id.contains('\0') {
            return Err(PrincipalError::Id);
        }
        match &self.tenant {
            Some(tenant) if !fits(tenant) || tenant.contains(['/', '\0']) => {
                Err(PrincipalError::Tenant)
            }
            _ => Ok(()),
        }
    }
}

impl fmt::Debug for Principal {
    /// The id and tenant, and the claims' names only: their values may be personal data, and
    /// a `Debug` line ends up in logs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Principal")
            .field("id", &self.id)
            .field("tenant", &self.tenant)
            .field("claims", &self.claims.keys().collect::<Vec<_>>())
            .field("anonymous", &self.anonymous)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anonymous_owns_nothing_and_a_named_principal_owns_by_its_id() {
        assert_eq!(Principal::anonymous().owner(), None);
        assert!(Principal::anonymous().is_anonymous());
        let alice = Principal::new("alice").with_tenant("acme");
        assert_eq!(alice.owner(), Some("alice"));
        assert_eq!(alice.tenant(), Some("acme"));
        assert!(!alice.is_anonymous());
    }

    #[test]
    fn ids_and_tenants_that_cannot_be_recorded_are_refused() {
        assert_eq!(Principal::new("").validate(), Err(PrincipalError::Id));
        assert_eq!(Principal::new("a\0b").validate(), Err(PrincipalError::Id));
        assert_eq!(
            Principal::new("x".repeat(MAX_PRINCIPAL_LEN + 1)).validate(),
            Err(PrincipalError::Id)
        );
        let bad_tenant = Principal::new("alice").with_tenant("a/b");
        assert_eq!(bad_tenant.validate(), Err(PrincipalError::Tenant));
        assert_eq!(
            Principal::new("alice").with_tenant("").validate(),
            Err(PrincipalError::Tenant)
        );
        assert!(
            Principal::new("alice")
                .with_tenant("acme")
                .validate()
                .is_ok()
        );
    }

    #[test]
    fn debug_names_claims_without_their_values() {
        let alice = Principal::new("alice").with_claim("email", "alice@example.com");
        let line = format!("{alice:?}");
        assert!(line.contains("email"), "{line}");
        assert!(!line.contains("alice@example.com"), "{line}");
    }
}
