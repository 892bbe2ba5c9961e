//! Ordering constraints between middleware (`before`, `after`, `requires`), checked when a chain
//! is built.
//!
//! A middleware names other middleware *types* in its constraints; the compiler resolves each
//! name, and [`Identified`] gives every nameable type an identity made from its module path and
//! name. The check itself runs in constant evaluation over the chain's flattened members, so a
//! violation fails `cargo build` (and `cargo test`) with a message naming both middleware.

// The checks return their failure (a message in a fixed buffer) rather than panic where they
// find it, so that the panic and the error's location are the checked constant's; they run in
// constant evaluation only, where the size of a `Result` costs nothing.
#![allow(clippy::result_large_err)]

use crate::middleware::{Hook, HookSet, LeafPhase, Marker, Middleware, Phase, PhaseMarker};

/// The most members a chain can have (nested chains included) for its constraints to be checked.
pub const MAX_MEMBERS: usize = 128;

/// A middleware type that constraints can name: every middleware, by its
/// [`Middleware::IDENTITY`].
///
/// `#[middleware]` and `#[hook]` set the identity (the type's path); a hand-written middleware
/// that others should be able to name in `before`, `after` or `requires` sets
/// [`Middleware::IDENTITY`] (naming one that has none fails the build, saying so).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be named in a `before`, `after` or `requires` constraint",
    label = "not a middleware",
    note = "constraints name middleware types: `#[hook]` functions, types with a \
            `#[middleware]` impl block, or hand-written middleware that set \
            `Middleware::IDENTITY`"
)]
pub trait Identified {
    /// The identity: unique per type, e.g. `my_crate::audit::Audit`.
    const IDENTITY: &'static str;
    /// The name shown in messages.
    const NAME: &'static str;
}

// Derived, never kept in sync by hand; not recommended, so that naming a type that is no
// middleware reports `Identified`'s message, not `Middleware`'s.
#[diagnostic::do_not_recommend]
impl<M: Middleware> Identified for M {
    const IDENTITY: &'static str = match M::IDENTITY {
        Some(identity) => identity,
        None => panic!(
            "a middleware named in a `before`, `after` or `requires` constraint has no identity: \
             set `Middleware::IDENTITY` in its hand-written impl"
        ),
    };
    const NAME: &'static str = M::NAME;
}

/// `M`'s constraints as a reference to a static (a generic constant's reference cannot be
/// taken inside a `const fn`).
struct ConstraintsOf<M: ?Sized>(core::marker::PhantomData<M>);

impl<M: Middleware> ConstraintsOf<M> {
    const REF: &'static Constraints = &M::CONSTRAINTS;
}

/// A middleware named in a constraint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Named {
    /// Its [`Identified::IDENTITY`].
    pub identity: &'static str,
    /// Its [`Identified::NAME`].
    pub name: &'static str,
}

impl Named {
    /// The middleware type `M`.
    #[must_use]
    pub const fn of<M: Identified + ?Sized>() -> Named {
        Named {
            identity: M::IDENTITY,
            name: M::NAME,
        }
    }
}

/// What a middleware requires of the chain it is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Constraints {
    /// Wherever one of these is in the chain, this middleware must be listed before it.
    pub before: &'static [Named],
    /// Wherever one of these is in the chain, this middleware must be listed after it.
    pub after: &'static [Named],
    /// Each of these must be in the same chain.
    pub requires: &'static [Named],
}

impl Constraints {
    /// No constraint.
    pub const NONE: Constraints = Constraints {
        before: &[],
        after: &[],
        requires: &[],
    };
}

/// One member of a flattened chain, as the constraint check sees it.
#[derive(Debug, Clone, Copy)]
pub struct MemberInfo {
    name: &'static str,
    identity: Option<&'static str>,
    phase: Phase,
    hooks: HookSet,
    wraps_model: Option<bool>,
    wraps_tool: Option<bool>,
    /// By reference: a member's entry stays small (the list holds `MAX_MEMBERS` of them).
    constraints: &'static Constraints,
}

impl MemberInfo {
    const EMPTY: MemberInfo = MemberInfo {
        name: "",
        identity: None,
        phase: Phase::Wrap,
        hooks: HookSet::NONE,
        wraps_model: None,
        wraps_tool: None,
        constraints: &Constraints::NONE,
    };

    /// The member `M` (one middleware, not a chain).
    #[must_use]
    pub const fn of<M: Middleware>() -> MemberInfo {
        MemberInfo {
            name: M::NAME,
            identity: M::IDENTITY,
            phase: <<M::Phase as PhaseMarker>::First as LeafPhase>::PHASE,
            hooks: M::HOOKS,
            wraps_model: <M::WrapsModel as Marker>::LEAF,
            wraps_tool: <M::WrapsTool as Marker>::LEAF,
            constraints: ConstraintsOf::<M>::REF,
        }
    }
}

/// The members of a chain, flattened through nested chains, in listing order.
#[derive(Debug, Clone, Copy)]
pub struct MemberList {
    len: usize,
    /// The positions the members take in the flattened chain (resume points, answers): one
    /// each, except a member that reserves more (the run-time plugins' member).
    positions: usize,
    items: [MemberInfo; MAX_MEMBERS],
}

impl MemberList {
    /// No members.
    pub const EMPTY: MemberList = MemberList {
        len: 0,
        positions: 0,
        items: [MemberInfo::EMPTY; MAX_MEMBERS],
    };

    /// The list holding only `member`.
    #[must_use]
    pub const fn one(member: MemberInfo) -> MemberList {
        MemberList::reserving(member, 1)
    }

    /// The list holding only `member`, which takes `positions` positions of the flattened
    /// chain (a member that runs members of its own, chosen at run time).
    #[must_use]
    pub const fn reserving(member: MemberInfo, positions: usize) -> MemberList {
        let mut list = MemberList::EMPTY;
        list.items[0] = member;
        list.len = 1;
        list.positions = positions;
        list
    }

    /// This list followed by `other`; members past [`MAX_MEMBERS`] are dropped (and counted).
    #[must_use]
    pub const fn concat(mut self, other: &MemberList) -> MemberList {
        let mut i = 0;
        while i < other.len {
            if self.len < MAX_MEMBERS {
                self.items[self.len] = other.items[i];
            }
            self.len += 1;
            i += 1;
        }
        self.positions += other.positions;
        self
    }

    /// The number of members.
    #[must_use]
    pub const fn len(&self) -> usize {
        self.len
    }

    /// Whether the list is empty.
    #[must_use]
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Each member's name, in listing order.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.items[..self.len.min(MAX_MEMBERS)]
            .iter()
            .map(|member| member.name)
    }

    /// Each member's name and hooks, in listing order.
    pub(crate) fn hooks(
        &self,
    ) -> impl DoubleEndedIterator<Item = (&'static str, HookSet)> + ExactSizeIterator + '_ {
        self.items[..self.len.min(MAX_MEMBERS)]
            .iter()
            .map(|member| (member.name, member.hooks))
    }
}

/// Returns early with the failure of `check` (`?` is not available in a `const fn`).
macro_rules! check {
    ($check:expr) => {
        if let Err(failure) = $check {
            return Err(failure);
        }
    };
}

/// The checks a chain must pass to run, evaluated at compile time (post-monomorphization: they
/// fail `cargo build`, not `cargo check`). `chain!` and the agent evaluate them.
#[derive(Debug)]
pub struct ChainChecks<C: ?Sized>(core::marker::PhantomData<C>);

impl<C: Middleware> ChainChecks<C> {
    /// Evaluating this constant runs every check on `C`'s members.
    ///
    /// The panic is here, in the constant itself, and the checks return their message: a panic
    /// inside the checks would add a note per function it passed through (the build error of a
    /// hand-written impl was sixty lines of hookchain's source).
    pub const OK: () = match check_members(&C::MEMBERS) {
        Ok(()) => (),
        Err(failure) => panic!("{}", failure.message()),
    };

    /// `C`'s members, as a reference to a static: reading the list through it does not copy
    /// the whole constant (several KB) onto the stack, as naming `C::MEMBERS` in a function
    /// does.
    pub(crate) const MEMBERS: &'static MemberList = &C::MEMBERS;

    /// The first rule `C`'s own items break (its wrap markers against `HOOKS`, its hooks against
    /// its phase), for `#[middleware]` on a hand-written impl to report at the impl, in
    /// `cargo check`; the rules between members wait for the chain ([`OK`](Self::OK)).
    pub const fn own_rules() -> Result<(), Failure> {
        let list = Self::MEMBERS;
        let mut i = 0;
        while i < list.len && i < MAX_MEMBERS {
            check!(check_markers(&list.items[i]));
            check!(check_phase_hooks(&list.items[i]));
            i += 1;
        }
        Ok(())
    }

    /// The number of `C`'s members, flattened (1 for a middleware): read off its members, so
    /// that it cannot disagree with them (resume positions count members).
    pub const LEN: usize = C::MEMBERS.positions;
}

/// The first rule the chain breaks, as a message naming the middleware at fault.
const fn check_members(list: &MemberList) -> Result<(), Failure> {
    if list.len > MAX_MEMBERS {
        return Err(fail(&[
            "this chain has more than 128 members (nested chains included): split it",
        ]));
    }
    let mut i = 0;
    while i < list.len {
        let member = &list.items[i];
        check!(check_markers(member));
        check!(check_phase_hooks(member));
        check!(check_order(list, i, member.constraints.after, Side::After));
        check!(check_order(
            list,
            i,
            member.constraints.before,
            Side::Before
        ));
        let mut k = 0;
        while k < member.constraints.requires.len() {
            let required = member.constraints.requires[k];
            if position(list, required.identity, 0).is_none() {
                return Err(fail(&[
                    "middleware `",
                    member.name,
                    "` requires `",
                    required.name,
                    "` in the same chain (it declares `requires = ",
                    required.name,
                    "`): add `",
                    required.name,
                    "` to the chain",
                ]));
            }
            k += 1;
        }
        i += 1;
    }
    Ok(())
}

/// A wrap marker must say `True` exactly when `HOOKS` has the wrap hook: a hand-written impl
/// that overrides a wrap hook but says `False` would otherwise be skipped without a word.
const fn check_markers(member: &MemberInfo) -> Result<(), Failure> {
    check!(check_marker(
        member,
        member.wraps_model,
        Hook::WrapModelCall,
        "`: `WrapsModel` must be `True` exactly when `HOOKS` contains `Hook::WrapModelCall`",
    ));
    check_marker(
        member,
        member.wraps_tool,
        Hook::WrapToolCall,
        "`: `WrapsTool` must be `True` exactly when `HOOKS` contains `Hook::WrapToolCall`",
    )
}

const fn check_marker(
    member: &MemberInfo,
    marker: Option<bool>,
    hook: Hook,
    rule: &str,
) -> Result<(), Failure> {
    if let Some(wraps) = marker
        && wraps != member.hooks.contains(hook)
    {
        return Err(fail(&[
            "middleware `",
            member.name,
            rule,
            " (`HOOKS` is every hook unless the impl sets it): set `HOOKS` to the hooks the impl \
             overrides, or put `#[middleware]` on the impl to derive both",
        ]));
    }
    Ok(())
}

/// Input middleware may only have `before_*` hooks, Output middleware only `after_*` hooks.
const fn check_phase_hooks(member: &MemberInfo) -> Result<(), Failure> {
    const WRAP: HookSet = HookSet::of(Hook::WrapModelCall).with(Hook::WrapToolCall);
    const BEFORE: HookSet = HookSet::of(Hook::BeforeAgent).with(Hook::BeforeModel);
    const AFTER: HookSet = HookSet::of(Hook::OnModelEvent)
        .with(Hook::AfterModel)
        .with(Hook::AfterAgent);
    let hooks = member.hooks;
    let before_only = hooks.intersection(WRAP.union(AFTER)).is_empty();
    let after_only = hooks.intersection(WRAP.union(BEFORE)).is_empty();
    match member.phase {
        Phase::Input if !before_only => Err(fail(&[
            "middleware `",
            member.name,
            "` is in the Input phase but has `after_*`, `on_model_event` or wrap hooks: Input \
             middleware may only have `before_agent` and `before_model` hooks",
        ])),
        Phase::Output if !after_only => Err(fail(&[
            "middleware `",
            member.name,
            "` is in the Output phase but has `before_*` or wrap hooks: Output middleware may \
             only have `on_model_event`, `after_model` and `after_agent` hooks",
        ])),
        _ => Ok(()),
    }
}

#[derive(Clone, Copy)]
enum Side {
    Before,
    After,
}

/// Every occurrence of each named middleware must be on the right side of member `at`.
const fn check_order(
    list: &MemberList,
    at: usize,
    named: &[Named],
    side: Side,
) -> Result<(), Failure> {
    let member = &list.items[at];
    let mut k = 0;
    while k < named.len() {
        let mut from = 0;
        while let Some(j) = position(list, named[k].identity, from) {
            match side {
                Side::After if j > at => {
                    return Err(fail(&[
                        "middleware `",
                        member.name,
                        "` must be listed after `",
                        named[k].name,
                        "` (it declares `after = ",
                        named[k].name,
                        "`): move it after `",
                        named[k].name,
                        "` in the chain",
                    ]));
                }
                Side::Before if j < at => {
                    return Err(fail(&[
                        "middleware `",
                        member.name,
                        "` must be listed before `",
                        named[k].name,
                        "` (it declares `before = ",
                        named[k].name,
                        "`): move it before `",
                        named[k].name,
                        "` in the chain",
                    ]));
                }
                _ => {}
            }
            from = j + 1;
        }
        k += 1;
    }
    Ok(())
}

/// The position of the first member at or after `from` whose identity is `identity`.
const fn position(list: &MemberList, identity: &str, from: usize) -> Option<usize> {
    let mut j = from;
    while j < list.len {
        if let Some(candidate) = list.items[j].identity
            && str_eq(candidate, identity)
        {
            return Some(j);
        }
        j += 1;
    }
    None
}

const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// A broken rule's message: const panics take one `&str`, so the message is assembled in a
/// fixed buffer first.
#[derive(Debug)]
pub struct Failure {
    buffer: [u8; FAILURE_CAPACITY],
    len: usize,
}

const FAILURE_CAPACITY: usize = 512;

impl Failure {
    /// The message.
    pub const fn message(&self) -> &str {
        let (message, _) = self.buffer.split_at(self.len);
        match core::str::from_utf8(message) {
            Ok(message) => message,
            Err(_) => "a middleware constraint is violated",
        }
    }
}

/// The failure whose message is `parts` joined.
const fn fail(parts: &[&str]) -> Failure {
    let mut buffer = [0u8; FAILURE_CAPACITY];
    let mut len = 0;
    let mut p = 0;
    while p < parts.len() {
        let bytes = parts[p].as_bytes();
        let mut b = 0;
        while b < bytes.len() && len < FAILURE_CAPACITY {
            buffer[len] = bytes[b];
            len += 1;
            b += 1;
        }
        p += 1;
    }
    Failure { buffer, len }
}

#[cfg(test)]
mod size {
    use super::{MAX_MEMBERS, MemberInfo, MemberList};

    /// The list is a constant of every chain (evaluated by the compiler for each): an entry is
    /// kept small, its constraints by reference.
    #[test]
    fn a_member_list_stays_small() {
        assert!(std::mem::size_of::<MemberInfo>() <= 48);
        assert!(std::mem::size_of::<MemberList>() <= 48 * MAX_MEMBERS + 16);
        assert_eq!(MAX_MEMBERS, 128);
    }
}
