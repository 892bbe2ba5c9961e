//! The members of a chain as a checkpoint records them, and how a checkpoint's state is carried
//! over to a chain that changed since (chain evolution).
//!
//! A chain's state serializes nested as the chain is (`chain![a, chain![b, c]]` has the state
//! `[a, [b, c]]`), so the checkpoint records the members nested the same way: with both, the
//! state splits into one value per member, whatever each member's state looks like. A member of
//! the new chain takes the state of the member of the old chain with its name (the k-th of a
//! name the k-th), a new member starts from `Default`, and a removed member's state is dropped.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A chain's members, nested as its state is: a member's name, or a chain of members.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
#[doc(hidden)]
pub enum Members {
    /// A middleware, by name.
    Member(String),
    /// A middleware that takes more than one position of the flattened chain (the run-time
    /// plugins' member).
    Wide {
        /// Its name.
        name: String,
        /// The positions it takes.
        positions: usize,
    },
    /// A chain: its members, in order.
    Chain(Vec<Members>),
}

/// One member of the flattened chain: its name, its first position, the positions it takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Leaf<'a> {
    pub(crate) name: &'a str,
    pub(crate) start: usize,
    pub(crate) positions: usize,
}

impl Members {
    /// The member `name`, taking `positions` positions of the flattened chain.
    #[must_use]
    pub fn member(name: &str, positions: usize) -> Members {
        if positions == 1 {
            Members::Member(name.to_owned())
        } else {
            Members::Wide {
                name: name.to_owned(),
                positions,
            }
        }
    }

    /// The members of the flattened chain, in order.
    pub(crate) fn leaves(&self) -> Vec<Leaf<'_>> {
        fn walk<'a>(members: &'a Members, start: &mut usize, out: &mut Vec<Leaf<'a>>) {
            match members {
                Members::Member(name) => {
                    out.push(Leaf {
                        name,
                        start: *start,
                        positions: 1,
                    });
                    *start += 1;
                }
                Members::Wide { name, positions } => {
                    out.push(Leaf {
                        name,
                        start: *start,
                        positions: *positions,
                    });
                    *start += positions;
                }
                Members::Chain(members) => {
                    for member in members {
                        walk(member, start, out);
                    }
                }
            }
        }
        let mut leaves = Vec::new();
        walk(self, &mut 0, &mut leaves);
        leaves
    }

    /// The names of the flattened chain's members, in order.
    pub(crate) fn names(&self) -> Vec<String> {
        self.leaves()
            .into_iter()
            .map(|leaf| leaf.name.to_owned())
            .collect()
    }

    /// `state`, serialized nested as these members, split into one value per member (in the
    /// order of [`leaves`](Self::leaves)); `None` if its shape is not theirs.
    pub(crate) fn split(&self, state: Value) -> Option<Vec<Value>> {
        fn walk(members: &Members, state: Value, out: &mut Vec<Value>) -> Option<()> {
            match (members, state) {
                (Members::Member(_) | Members::Wide { .. }, state) => out.push(state),
                // The empty chain's state is `()`.
                (Members::Chain(members), Value::Null) if members.is_empty() => {}
                (Members::Chain(members), Value::Array(states))
                    if members.len() == states.len() =>
                {
                    for (member, state) in members.iter().zip(states) {
                        walk(member, state, out)?;
                    }
                }
                _ => return None,
            }
            Some(())
        }
        let mut out = Vec::new();
        walk(self, state, &mut out)?;
        Some(out)
    }

    /// The state nested as these members, from one value per member (in the order of
    /// [`leaves`](Self::leaves)).
    pub(crate) fn assemble(&self, states: &mut impl Iterator<Item = Value>) -> Value {
        match self {
            Members::Member(_) | Members::Wide { .. } => states.next().unwrap_or(Value::Null),
            Members::Chain(members) if members.is_empty() => Value::Null,
            Members::Chain(members) => Value::Array(
                members
                    .iter()
                    .map(|member| member.assemble(states))
                    .collect(),
            ),
        }
    }
}

/// How the members of an old chain map onto a new one: by name, the k-th member of a name to
/// the k-th member of that name.
#[derive(Debug)]
pub(crate) struct Matching<'a> {
    pub(crate) old: Vec<Leaf<'a>>,
    pub(crate) new: Vec<Leaf<'a>>,
    /// For each new member, the old member it continues (by index in `old`), if any.
    pub(crate) continues: Vec<Option<usize>>,
}

impl<'a> Matching<'a> {
    /// Matches the members of `old` with those of `new`.
    pub(crate) fn new(old: &'a Members, new: &'a Members) -> Self {
        let (old, new) = (old.leaves(), new.leaves());
        let mut taken = vec![false; old.len()];
        let continues = new
            .iter()
            .map(|leaf| {
                let found = old
                    .iter()
                    .enumerate()
                    .position(|(i, candidate)| !taken[i] && candidate.name == leaf.name)?;
                taken[found] = true;
                Some(found)
            })
            .collect();
        Matching {
            old,
            new,
            continues,
        }
    }

    /// The old members no new member continues.
    pub(crate) fn removed(&self) -> impl Iterator<Item = &Leaf<'a>> {
        self.old
            .iter()
            .enumerate()
            .filter(|(i, _)| !self.continues.contains(&Some(*i)))
            .map(|(_, leaf)| leaf)
    }

    /// The new position of the old position `at`: in the member that continues the old one,
    /// at the same offset; `None` if that member is gone.
    pub(crate) fn position(&self, at: usize) -> Option<usize> {
        let old = self
            .old
            .iter()
            .position(|leaf| (leaf.start..leaf.start + leaf.positions).contains(&at))?;
        let new = self.continues.iter().position(|&c| c == Some(old))?;
        let offset = at - self.old[old].start;
        (offset < self.new[new].positions).then_some(self.new[new].start + offset)
    }

    /// The first new position after the old position `at` whose member continues an old
    /// member after it: where a step goes on when the member at `at` is gone.
    pub(crate) fn next_after(&self, at: usize) -> usize {
        self.new
            .iter()
            .zip(&self.continues)
            .find(|(_, old)| old.is_some_and(|old| self.old[old].start > at))
            .map_or_else(
                || {
                    self.new
                        .last()
                        .map_or(0, |leaf| leaf.start + leaf.positions)
                },
                |(leaf, _)| leaf.start,
            )
    }
}

impl Matching<'_> {
    /// The position of the last new member (in listing order) that continues an old member
    /// before the old position `at`: where a step that runs its hooks in reverse goes on when
    /// the member at `at` is gone; `None` if there is none.
    pub(crate) fn previous_before(&self, at: usize) -> Option<usize> {
        self.new
            .iter()
            .zip(&self.continues)
            .rev()
            .find(|(_, old)| old.is_some_and(|old| self.old[old].start < at))
            .map(|(leaf, _)| leaf.start)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn chain(members: &[Members]) -> Members {
        Members::Chain(members.to_vec())
    }

    fn m(name: &str) -> Members {
        Members::member(name, 1)
    }

    #[test]
    fn splits_and_assembles_nested_states() {
        let members = chain(&[m("a"), chain(&[m("b"), m("c")]), Members::member("p", 32)]);
        let state = json!([[1, 2], [{"x": 1}, null], {"plugins": {}}]);
        let split = members.split(state.clone()).unwrap();
        assert_eq!(
            split,
            [
                json!([1, 2]),
                json!({"x": 1}),
                Value::Null,
                json!({"plugins": {}})
            ]
        );
        assert_eq!(members.assemble(&mut split.into_iter()), state);
        assert_eq!(members.split(json!([1, 2])), None, "another shape");
        assert_eq!(chain(&[]).split(Value::Null), Some(vec![]));
        let names = members.names();
        assert_eq!(names, ["a", "b", "c", "p"]);
        let starts: Vec<usize> = members.leaves().iter().map(|leaf| leaf.start).collect();
        assert_eq!(starts, [0, 1, 2, 3]);
    }

    #[test]
    fn serializes_as_names_nested() {
        let members = chain(&[m("a"), chain(&[m("b")]), Members::member("p", 32)]);
        let json = serde_json::to_value(&members).unwrap();
        assert_eq!(json, json!(["a", ["b"], {"name": "p", "positions": 32}]));
        assert_eq!(serde_json::from_value::<Members>(json).unwrap(), members);
    }

    #[test]
    fn matches_by_name_in_order() {
        let old = chain(&[m("a"), m("b"), m("a"), Members::member("p", 3), m("gone")]);
        let new = chain(&[m("new"), m("a"), Members::member("p", 3), m("a"), m("b")]);
        let matching = Matching::new(&old, &new);
        assert_eq!(
            matching.continues,
            [None, Some(0), Some(3), Some(2), Some(1)]
        );
        let removed: Vec<&str> = matching.removed().map(|leaf| leaf.name).collect();
        assert_eq!(removed, ["gone"]);
        // Old positions: a 0, b 1, a 2, p 3..6, gone 6. New: new 0, a 1, p 2..5, a 5, b 6.
        assert_eq!(matching.position(0), Some(1));
        assert_eq!(matching.position(1), Some(6));
        assert_eq!(matching.position(2), Some(5));
        assert_eq!(matching.position(4), Some(3));
        assert_eq!(matching.position(6), None);
        // After the gone member (old 6) nothing continues: past the end.
        assert_eq!(matching.next_after(6), 7);
        // After old position 1 (b), the next continued old member is `a` (old 2): new 5. New
        // member order is by new position: p (old 3) sits at new 2, which comes first.
        assert_eq!(matching.next_after(1), 2);
        // Before old position 2 (the second `a`): `a` (old 0, new 1) and `b` (old 1, new 6);
        // the last in new order is `b`.
        assert_eq!(matching.previous_before(2), Some(6));
        assert_eq!(matching.previous_before(0), None);
    }
}
