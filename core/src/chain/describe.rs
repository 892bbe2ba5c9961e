//! What a chain is made of and in which order its hooks run (for logs and debugging).

use std::fmt;

use crate::middleware::{Hook, HookSet, Phase};

/// One member of a chain, as [`Middleware::describe`](crate::Middleware::describe) lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Member {
    /// [`Middleware::NAME`](crate::Middleware::NAME).
    pub name: &'static str,
    /// The member's phase.
    pub phase: Phase,
    /// The hooks it implements.
    pub hooks: HookSet,
}

/// The members of a chain in listing order, flattened through nested chains.
///
/// Its `Display` lists, per hook, the middleware in the order they run — `after_*` hooks in
/// reverse, wraps from the outermost in:
///
/// ```
/// use hookchain::chain::Description;
/// # use hookchain::prelude::*;
/// # use hookchain::middleware::{False, HookSet, phase};
/// # struct Audit;
/// # impl Middleware for Audit {
/// #     type State = ();
/// #     type ThreadState = ();
/// #     type StreamState = ();
/// #     type Phase = phase::Wrap;
/// #     type WrapsModel = False;
/// #     type WrapsTool = False;
/// #     const NAME: &'static str = "Audit";
/// #     const HOOKS: HookSet = HookSet::of(Hook::BeforeModel).with(Hook::AfterModel);
/// # }
/// # struct Redact;
/// # impl Middleware for Redact {
/// #     type State = ();
/// #     type ThreadState = ();
/// #     type StreamState = ();
/// #     type Phase = phase::Output;
/// #     type WrapsModel = False;
/// #     type WrapsTool = False;
/// #     const NAME: &'static str = "Redact";
/// #     const HOOKS: HookSet = HookSet::of(Hook::AfterModel);
/// # }
/// let chain = (Audit, Redact);
/// let description: Description = chain.describe();
/// assert_eq!(description.order(Hook::AfterModel), ["Redact", "Audit"]);
/// assert_eq!(
///     description.to_string(),
///     "before_model: Audit (wrap)\nafter_model: Redact (output) -> Audit (wrap)\n"
/// );
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Description {
    members: Vec<Member>,
}

impl Description {
    /// Appends a member (chains call this for each of theirs).
    pub fn push(&mut self, member: Member) {
        self.members.push(member);
    }

    /// The members, in listing order.
    #[must_use]
    pub fn members(&self) -> &[Member] {
        &self.members
    }

    /// The names of the members that implement `hook`, in the order they run.
    #[must_use]
    pub fn order(&self, hook: Hook) -> Vec<&'static str> {
        self.running(hook).into_iter().map(|m| m.name).collect()
    }

    /// The members that implement `hook`, in the order they run: `after_*` hooks in reverse.
    fn running(&self, hook: Hook) -> Vec<&Member> {
        let mut members: Vec<&Member> = self
            .members
            .iter()
            .filter(|m| m.hooks.contains(hook))
            .collect();
        if matches!(
            hook,
            Hook::OnModelEvent | Hook::AfterModel | Hook::AfterAgent
        ) {
            members.reverse();
        }
        members
    }
}

impl fmt::Display for Description {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for hook in Hook::ALL {
            let members = self.running(hook);
            if members.is_empty() {
                continue;
            }
            write!(f, "{hook}: ")?;
            for (i, member) in members.iter().enumerate() {
                let arrow = if i == 0 { "" } else { " -> " };
                write!(f, "{arrow}{} ({})", member.name, member.phase)?;
            }
            writeln!(f)?;
        }
        Ok(())
    }
}
