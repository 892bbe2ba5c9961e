//! The threads a request names, as the principal asking reaches them: the key a client's id
//! stands for (in its tenant's namespace), the thread loaded and its access checked — with a
//! foreign thread answered exactly as an unknown one.

use axum::http::StatusCode;
use hookchain_core::Principal;
use hookchain_core::agent::ThreadId;
use hookchain_core::thread_store::{StoredThread, ThreadStore};
use serde_json::Value;

use super::access::{Action, ThreadRef};
use super::{Problem, Shared};
use crate::agui::MAX_ID_LEN;

/// The key in the stores of the thread a client calls `client_id`, for `principal`: in its
/// tenant's namespace, if it has one. `None` for an id that is no client's: empty, too long,
/// or holding `/` or NUL — so the key of one tenant's thread is never one another principal
/// can name (a request for it is answered as for an unknown thread).
pub(crate) fn thread_key(principal: &Principal, client_id: &str) -> Option<ThreadId> {
    if client_id.is_empty() || client_id.len() > MAX_ID_LEN || client_id.contains(['/', '\0']) {
        return None;
    }
    match principal.tenant() {
        // A validated tenant is not empty and holds no `/`: the namespaced id exists.
        Some(tenant) => ThreadId::namespaced(tenant, client_id),
        None => Some(ThreadId::new(client_id)),
    }
}

/// The id a client knows the thread of `key` by.
pub(crate) fn client_id<'a>(principal: &Principal, key: &'a ThreadId) -> &'a str {
    if principal.tenant().is_some() {
        key.local()
    } else {
        key.as_str()
    }
}

/// The answer to a thread the principal may not reach, or that does not exist.
pub(crate) fn unknown_thread() -> Problem {
    Problem::new(
        StatusCode::NOT_FOUND,
        "unknown_thread",
        "no conversation of that id",
    )
}

/// The failure of the thread store, logged, as the client is told it.
pub(crate) fn store_failed(error: &dyn std::error::Error) -> Problem {
    tracing::warn!(%error, "the thread store failed");
    Problem::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        "thread_store",
        "the conversation could not be loaded",
    )
}

/// Whether `principal` may do `action` to the thread `client_id` owned by `owner`.
pub(crate) fn allowed<M, C, S>(
    shared: &Shared<M, C, S>,
    principal: &Principal,
    client_id: &str,
    owner: Option<&str>,
    action: Action,
) -> bool {
    shared
        .access
        .allows(principal, &ThreadRef::new(client_id, owner), action)
}

/// The stored thread `key` (`None` if none is), if `principal` may do `action` to it; a
/// thread it may not reach is refused as unknown.
pub(crate) async fn load_checked<M, C, S: ThreadStore>(
    shared: &Shared<M, C, S>,
    principal: &Principal,
    key: &ThreadId,
    action: Action,
) -> Result<Option<StoredThread<Value>>, Problem> {
    let stored = shared
        .threads
        .load::<Value>(key)
        .await
        .map_err(|error| store_failed(&error))?;
    match &stored {
        Some(stored)
            if !allowed(
                shared,
                principal,
                client_id(principal, key),
                stored.thread.owner(),
                action,
            ) =>
        {
            Err(unknown_thread())
        }
        _ => Ok(stored),
    }
}
