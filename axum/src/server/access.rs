//! Who may do what to a thread: [`ThreadAccess`], checked by every route after the
//! authorizer, with the thread's recorded owner.

use hookchain_core::Principal;

/// What a request does to a thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Action {
    /// Read it: its messages (`GET /threads/{id}`), a run's events.
    Read,
    /// Start a turn in it (the thread is made if it does not exist: then its owner is the
    /// principal asking).
    Run,
    /// Answer its pause (an approval, an edit, a form).
    Resume,
    /// Give up its pause.
    Cancel,
}

/// A thread as an access check sees it: the id the client knows it by, and who owns it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ThreadRef<'a> {
    /// The thread's id, as the client sent it.
    pub id: &'a str,
    /// Its owner (the id of the principal that made it); `None` for a thread no one owns
    /// (made by the anonymous principal, or stored before threads had owners).
    pub owner: Option<&'a str>,
}

/// Decides whether `principal` may do `action` to an existing `thread`. The server asks it on
/// every route, after the authorizer and before anything of the thread is read or changed; a
/// refusal is answered as the thread being unknown (`404`), so that a foreign id and an
/// unknown one look the same.
///
/// The default, [`OwnerOnly`], lets a thread's owner do everything and no one else anything.
/// Replace it for shared threads or administrators — the check is synchronous: put what it
/// needs into the principal's claims in the authorizer (its teams, its roles):
///
/// ```
/// use hookchain::Principal;
/// use hookchain_axum::{Action, OwnerOnly, ThreadAccess, ThreadRef};
///
/// /// Owners, and support staff, who may read any thread but change none.
/// fn owners_and_support() -> impl ThreadAccess {
///     |principal: &Principal, thread: &ThreadRef<'_>, action: Action| {
///         let support = principal.claim("role").and_then(|role| role.as_str()) == Some("support");
///         OwnerOnly.allows(principal, thread, action) || (support && action == Action::Read)
///     }
/// }
///
/// let access = owners_and_support();
/// let thread = ThreadRef::new("t-1", Some("alice"));
/// let support = Principal::new("sam").with_claim("role", "support");
/// assert!(access.allows(&support, &thread, Action::Read));
/// assert!(!access.allows(&support, &thread, Action::Resume));
/// assert!(!access.allows(&Principal::new("bob"), &thread, Action::Read));
/// ```
pub trait ThreadAccess: Send + Sync + 'static {
    /// Whether `principal` may do `action` to `thread`.
    fn allows(&self, principal: &Principal, thread: &ThreadRef<'_>, action: Action) -> bool;
}

impl<F> ThreadAccess for F
where
    F: Fn(&Principal, &ThreadRef<'_>, Action) -> bool + Send + Sync + 'static,
{
    fn allows(&self, principal: &Principal, thread: &ThreadRef<'_>, action: Action) -> bool {
        self(principal, thread, action)
    }
}

/// The default [`ThreadAccess`]: a thread's owner may do everything to it, no one else
/// anything. The anonymous principal owns nothing, and reaches the threads no one owns (those
/// it made).
#[derive(Debug, Clone, Copy, Default)]
pub struct OwnerOnly;

impl ThreadAccess for OwnerOnly {
    fn allows(&self, principal: &Principal, thread: &ThreadRef<'_>, _action: Action) -> bool {
        thread.owner == principal.owner()
    }
}

impl<'a> ThreadRef<'a> {
    /// The thread `id`, owned by `owner`.
    #[must_use]
    pub fn new(id: &'a str, owner: Option<&'a str>) -> Self {
        ThreadRef { id, owner }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owners_reach_their_threads_and_no_one_elses() {
        let alice = Principal::new("alice");
        let hers = ThreadRef::new("t", Some("alice"));
        let unowned = ThreadRef::new("t", None);
        for action in [Action::Read, Action::Run, Action::Resume, Action::Cancel] {
            assert!(OwnerOnly.allows(&alice, &hers, action));
            assert!(!OwnerOnly.allows(&Principal::new("bob"), &hers, action));
            assert!(!OwnerOnly.allows(&alice, &unowned, action));
            assert!(OwnerOnly.allows(&Principal::anonymous(), &unowned, action));
            assert!(!OwnerOnly.allows(&Principal::anonymous(), &hers, action));
        }
    }

    #[test]
    fn a_principal_named_anonymous_is_not_the_anonymous_principal() {
        let named = Principal::new("anonymous");
        assert!(!OwnerOnly.allows(&named, &ThreadRef::new("t", None), Action::Read));
    }
}
