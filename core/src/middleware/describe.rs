//! What a chain is made of and in which order its hooks run (for logs and debugging).

use std::fmt;

use crate::middleware::{Contributions, Hook, HookSet, Phase};

/// One member of a chain, as [`Middleware::describe`](crate::Middleware::describe) lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Member {
    /// [`Middleware::NAME`](crate::Middleware::NAME), or the instance's name
    /// ([`Named`](crate::middleware::Named)).
    pub name: &'static str,
    /// The member's phase.
    pub phase: Phase,
    /// The hooks it implements.
    pub hooks: HookSet,
}

/// What a member adds to the agent ([`Middleware::contribute`](crate::Middleware::contribute)).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Contribution {
    /// A tool, by name.
    Tool {
        /// The member's [`NAME`](crate::Middleware::NAME).
        member: &'static str,
        /// The tool's name.
        name: String,
    },
    /// A piece of the system prompt.
    SystemPrompt {
        /// The member's [`NAME`](crate::Middleware::NAME).
        member: &'static str,
        /// The piece.
        text: String,
    },
}

/// The members of a chain in listing order, flattened through nested chains, and what they
/// contribute to the agent (tools, system-prompt pieces).
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
///
/// Contributed tools and system-prompt pieces follow, one line each:
/// `tool: write_todos (TodoList)`, `system prompt: TodoList (212 bytes)`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Description {
    members: Vec<Member>,
    contributions: Vec<Contribution>,
}

impl Description {
    /// Appends a member (chains call this for each of theirs).
    pub fn push(&mut self, member: Member) {
        self.members.push(member);
    }

    /// Names the members pushed since the first `from` that are named `middleware` (not an
    /// instance's name already) after the instance `name` ([`Named`](crate::middleware::Named)).
    pub(crate) fn rename_from(&mut self, from: usize, middleware: &str, name: &'static str) {
        for member in self.members.iter_mut().skip(from) {
            if member.name == middleware {
                member.name = name;
            }
        }
    }

    /// Records what a member contributes (the default
    /// [`describe_into`](crate::Middleware::describe_into) calls this).
    pub fn contributed(&mut self, contributions: &Contributions) {
        let tools = contributions
            .tools_by_member()
            .map(|(member, name)| Contribution::Tool {
                member,
                name: name.to_owned(),
            });
        let prompts =
            contributions
                .prompts_by_member()
                .map(|(member, text)| Contribution::SystemPrompt {
                    member,
                    text: text.to_owned(),
                });
        self.contributions.extend(tools.chain(prompts));
    }

    /// The tools and system-prompt pieces the members contribute, in listing order.
    #[must_use]
    pub fn contributions(&self) -> &[Contribution] {
        &self.contributions
    }

    /// The names of the contributed tools, in listing order.
    #[must_use]
    pub fn tools(&self) -> Vec<&str> {
        self.contributions
            .iter()
            .filter_map(|c| match c {
                Contribution::Tool { name, .. } => Some(name.as_str()),
                Contribution::SystemPrompt { .. } => None,
            })
            .collect()
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
        for contribution in &self.contributions {
            match contribution {
                Contribution::Tool { member, name } => writeln!(f, "tool: {name} ({member})")?,
                Contribution::SystemPrompt { member, text } => {
                    writeln!(f, "system prompt: {member} ({} bytes)", text.len())?;
                }
            }
        }
        Ok(())
    }
}
