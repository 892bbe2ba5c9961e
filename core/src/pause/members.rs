//! The members of a chain as a checkpoint records them, and how a checkpoint's state is carried
//! over to a chain that changed since (chain evolution).
//!
//! A chain's state serializes nested as the chain is (`chain![a, chain![b, c]]` has the state
//! `[a, [b, c]]`), so the checkpoint records the members nested the same way: with both, the
//! state splits into one value per member, whatever each member's state looks like. A member of
//! the new chain takes the state of the member of the old chain it continues (see [`Matching`]),
//! a new member starts from `Default`, and a removed member's state is dropped.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::ResumeError;

/// A chain's members, nested as its state is: a member's name, or a chain of members.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
#[doc(hidden)]
pub enum Members {
    /// A middleware, by name.
    Member(String),
    /// A named instance of a middleware ([`Named`](crate::middleware::Named)). Listed before
    /// `Wide`: untagged, a record with an `instance` is read as this variant.
    Named {
        /// The middleware's name ([`Middleware::NAME`](crate::Middleware::NAME)).
        name: String,
        /// The instance's name.
        instance: String,
        /// The positions it takes (1 unless it is the run-time plugins' member).
        #[serde(default = "one", skip_serializing_if = "is_one")]
        positions: usize,
    },
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

fn one() -> usize {
    1
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's `skip_serializing_if` passes a reference
fn is_one(positions: &usize) -> bool {
    *positions == 1
}

/// One member of the flattened chain: its name, its instance's name if it has one, its first
/// position, the positions it takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Leaf<'a> {
    pub(crate) name: &'a str,
    pub(crate) instance: Option<&'a str>,
    pub(crate) start: usize,
    pub(crate) positions: usize,
}

impl Leaf<'_> {
    /// What users call the member: its instance's name, else its middleware's.
    pub(crate) fn display(&self) -> &str {
        self.instance.unwrap_or(self.name)
    }

    /// The member in an error: its middleware's name, and its instance's if it has one.
    fn label(&self) -> String {
        match self.instance {
            Some(instance) => format!("{} \"{instance}\"", self.name),
            None => self.name.to_owned(),
        }
    }
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

    /// These members, the instance named `instance` (a middleware's record names it; one named
    /// already keeps its name, as its interrupts and errors do; a chain's is left as it is: a
    /// chain is not an instance).
    #[must_use]
    pub fn named(self, instance: &str) -> Members {
        let (name, positions) = match self {
            Members::Member(name) => (name, 1),
            Members::Wide { name, positions } => (name, positions),
            named @ Members::Named { .. } => return named,
            chain @ Members::Chain(_) => return chain,
        };
        Members::Named {
            name,
            instance: instance.to_owned(),
            positions,
        }
    }

    /// The members of the flattened chain, in order.
    pub(crate) fn leaves(&self) -> Vec<Leaf<'_>> {
        fn walk<'a>(members: &'a Members, start: &mut usize, out: &mut Vec<Leaf<'a>>) {
            match members {
                Members::Member(name) => {
                    out.push(Leaf {
                        name,
                        instance: None,
                        start: *start,
                        positions: 1,
                    });
                    *start += 1;
                }
                Members::Named {
                    name,
                    instance,
                    positions,
                } => {
                    out.push(Leaf {
                        name,
                        instance: Some(instance),
                        start: *start,
                        positions: *positions,
                    });
                    *start += positions;
                }
                Members::Wide { name, positions } => {
                    out.push(Leaf {
                        name,
                        instance: None,
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

    /// The names of the flattened chain's members, in order: an instance's name where it has
    /// one, else its middleware's.
    pub(crate) fn names(&self) -> Vec<String> {
        self.leaves()
            .into_iter()
            .map(|leaf| leaf.display().to_owned())
            .collect()
    }

    /// The names of the middleware of the flattened chain's members, in order (instances'
    /// names left out).
    pub(crate) fn type_names(&self) -> Vec<&str> {
        self.leaves().into_iter().map(|leaf| leaf.name).collect()
    }

    /// `state`, serialized nested as these members, split into one value per member (in the
    /// order of [`leaves`](Self::leaves)); `None` if its shape is not theirs.
    pub(crate) fn split(&self, state: Value) -> Option<Vec<Value>> {
        fn walk(members: &Members, state: Value, out: &mut Vec<Value>) -> Option<()> {
            match (members, state) {
                (Members::Member(_) | Members::Named { .. } | Members::Wide { .. }, state) => {
                    out.push(state);
                }
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
            Members::Member(_) | Members::Named { .. } | Members::Wide { .. } => {
                states.next().unwrap_or(Value::Null)
            }
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

/// How the members of an old chain map onto a new one. Members of one middleware are matched
/// among themselves, in three rounds, each pairing the members of a group in order:
///
/// 1. a named instance continues the old instance of its middleware with its name;
/// 2. the unnamed members continue the old unnamed ones;
/// 3. the members still unmatched, if one side's are unnamed (names given to, or taken from, the
///    members of a chain that had none), continue each other.
///
/// A group whose old and new members are as many pairs up in order; a group with members on
/// only one side has nothing to pair (new, or removed). Any other group would make the
/// matching guess which member continues which: it is paired in order all the same, and
/// recorded as ambiguous; a state carried over through it is refused
/// ([`ResumeError::AmbiguousMember`], naming the members) unless every old member of the group
/// holds its default state, when any pairing carries the same (two stateless hooks, one left),
/// and no interrupt or paused hook was recorded in the group
/// ([`refuse_guess_at`](Self::refuse_guess_at)).
/// Named instances with different names never continue each other.
#[derive(Debug)]
pub(crate) struct Matching<'a> {
    pub(crate) old: Vec<Leaf<'a>>,
    pub(crate) new: Vec<Leaf<'a>>,
    /// For each new member, the old member it continues (by index in `old`), if any.
    pub(crate) continues: Vec<Option<usize>>,
    /// The groups paired by a guess.
    ambiguous: Vec<Ambiguous<'a>>,
}

/// A group of members of one middleware paired by a guess (not as many old as new).
#[derive(Debug)]
struct Ambiguous<'a> {
    /// The middleware.
    name: &'a str,
    /// The group's old members (indices in `Matching::old`).
    old: Vec<usize>,
    /// The group's new members (indices in `Matching::new`).
    new: Vec<usize>,
}

impl<'a> Matching<'a> {
    /// Matches the members of `old` with those of `new` (see [`refuse_guess`](Self::refuse_guess)
    /// for the groups paired by a guess).
    pub(crate) fn new(old: &'a Members, new: &'a Members) -> Self {
        let (old, new) = (old.leaves(), new.leaves());
        let mut matching = Matching {
            continues: vec![None; new.len()],
            old,
            new,
            ambiguous: Vec::new(),
        };
        let mut taken = vec![false; matching.old.len()];
        let types: BTreeSet<&str> = matching.new.iter().map(|leaf| leaf.name).collect();
        for name in types {
            let of = |leaves: &[Leaf<'a>]| -> Vec<usize> {
                (0..leaves.len())
                    .filter(|&i| leaves[i].name == name)
                    .collect()
            };
            let (old_of, new_of) = (of(&matching.old), of(&matching.new));
            // 1. By instance name.
            let instances: BTreeSet<&str> = new_of
                .iter()
                .filter_map(|&j| matching.new[j].instance)
                .collect();
            for instance in instances {
                let old_group: Vec<usize> = old_of
                    .iter()
                    .copied()
                    .filter(|&i| matching.old[i].instance == Some(instance))
                    .collect();
                let new_group: Vec<usize> = new_of
                    .iter()
                    .copied()
                    .filter(|&j| matching.new[j].instance == Some(instance))
                    .collect();
                matching.pair(name, &old_group, &new_group, &mut taken);
            }
            // 2. The unnamed members.
            let unnamed_old: Vec<usize> = old_of
                .iter()
                .copied()
                .filter(|&i| matching.old[i].instance.is_none())
                .collect();
            let unnamed_new: Vec<usize> = new_of
                .iter()
                .copied()
                .filter(|&j| matching.new[j].instance.is_none())
                .collect();
            matching.pair(name, &unnamed_old, &unnamed_new, &mut taken);
            // 3. What is left, if one side's is unnamed.
            let left_old: Vec<usize> = old_of.iter().copied().filter(|&i| !taken[i]).collect();
            let left_new: Vec<usize> = new_of
                .iter()
                .copied()
                .filter(|&j| matching.continues[j].is_none())
                .collect();
            let unnamed = |leaves: &[Leaf<'_>], group: &[usize]| {
                group.iter().all(|&i| leaves[i].instance.is_none())
            };
            if unnamed(&matching.old, &left_old) || unnamed(&matching.new, &left_new) {
                matching.pair(name, &left_old, &left_new, &mut taken);
            }
        }
        matching
    }

    /// Pairs the old members `old` (indices in `self.old`) with the new members `new` of the
    /// middleware `name`, in order; nothing if one side has none; recorded as a guess if they
    /// are not as many.
    fn pair(&mut self, name: &'a str, old: &[usize], new: &[usize], taken: &mut [bool]) {
        if old.is_empty() || new.is_empty() {
            return;
        }
        if old.len() != new.len() {
            self.ambiguous.push(Ambiguous {
                name,
                old: old.to_vec(),
                new: new.to_vec(),
            });
        }
        for (&i, &j) in old.iter().zip(new) {
            taken[i] = true;
            self.continues[j] = Some(i);
        }
    }

    /// Refuses the matching if the old position `at` is in a member of a group paired by a
    /// guess: where the interrupt or the paused hook recorded there goes on would be a guess.
    pub(crate) fn refuse_guess_at(&self, at: usize) -> Result<(), ResumeError> {
        let old = self
            .old
            .iter()
            .position(|leaf| (leaf.start..leaf.start + leaf.positions).contains(&at));
        match self
            .ambiguous
            .iter()
            .find(|group| old.is_some_and(|old| group.old.contains(&old)))
        {
            Some(group) => Err(self.ambiguity(group.name)),
            None => Ok(()),
        }
    }

    /// The error of a guess among the members of the middleware `name`.
    fn ambiguity(&self, name: &str) -> ResumeError {
        let labels = |leaves: &[Leaf<'_>]| {
            leaves
                .iter()
                .filter(|leaf| leaf.name == name)
                .map(Leaf::label)
                .collect()
        };
        ResumeError::AmbiguousMember {
            name: name.to_owned(),
            checkpoint: labels(&self.old),
            agent: labels(&self.new),
        }
    }

    /// Refuses the matching if a group paired by a guess has an old member whose state (in
    /// `old_states`, one per old member) is not its default (in `defaults`, one per new
    /// member): which state goes on, and in which member, would then be a guess.
    pub(crate) fn refuse_guess(
        &self,
        old_states: &[Value],
        defaults: &[Value],
    ) -> Result<(), ResumeError> {
        for group in &self.ambiguous {
            let default = group.new.first().and_then(|&j| defaults.get(j));
            if group
                .old
                .iter()
                .any(|&i| default.is_none() || old_states.get(i) != default)
            {
                return Err(self.ambiguity(group.name));
            }
        }
        Ok(())
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

    fn named(name: &str, instance: &str) -> Members {
        m(name).named(instance)
    }

    /// The old member each new member continues, or the error when every old member holds a
    /// state other than its default.
    fn continues(old: &[Members], new: &[Members]) -> Result<Vec<Option<usize>>, ResumeError> {
        let (old, new) = (chain(old), chain(new));
        let matching = Matching::new(&old, &new);
        let (states, defaults) = (
            vec![json!(1); old.leaves().len()],
            vec![json!(0); new.leaves().len()],
        );
        matching.refuse_guess(&states, &defaults)?;
        Ok(matching.continues)
    }

    #[test]
    fn named_instances_serialize_with_their_middleware() {
        let members = chain(&[
            named("L", "daily"),
            Members::member("p", 3).named("plugins"),
        ]);
        let json = serde_json::to_value(&members).unwrap();
        assert_eq!(
            json,
            json!([
                {"name": "L", "instance": "daily"},
                {"name": "p", "instance": "plugins", "positions": 3}
            ])
        );
        assert_eq!(serde_json::from_value::<Members>(json).unwrap(), members);
        assert_eq!(members.names(), ["daily", "plugins"]);
        assert_eq!(members.type_names(), ["L", "p"]);
        assert_eq!(
            chain(&[m("a")]).named("x"),
            chain(&[m("a")]),
            "a chain is not named"
        );
        assert_eq!(
            named("L", "a").named("b"),
            named("L", "a"),
            "the first name stays"
        );
    }

    #[test]
    fn a_named_instance_continues_the_one_of_its_name() {
        let daily = || named("L", "daily");
        let hourly = || named("L", "hourly");
        assert_eq!(
            continues(&[daily(), hourly()], &[hourly()]).unwrap(),
            [Some(1)]
        );
        assert_eq!(
            continues(&[daily(), hourly()], &[m("a"), hourly(), daily()]).unwrap(),
            [None, Some(1), Some(0)]
        );
        // Another name is another instance, even the only one of its middleware.
        assert_eq!(
            continues(&[daily()], &[named("L", "weekly")]).unwrap(),
            [None]
        );
        // Named and unnamed members of one middleware side by side.
        assert_eq!(continues(&[daily(), m("L")], &[m("L")]).unwrap(), [Some(1)]);
    }

    #[test]
    fn unnamed_members_continue_in_order_when_as_many() {
        assert_eq!(
            continues(&[m("L"), m("a"), m("L")], &[m("L"), m("L"), m("b")]).unwrap(),
            [Some(0), Some(2), None]
        );
        // Names given to the members of a chain that had none.
        assert_eq!(
            continues(&[m("L"), m("L")], &[named("L", "x"), named("L", "y")]).unwrap(),
            [Some(0), Some(1)]
        );
        assert_eq!(continues(&[m("L")], &[named("L", "x")]).unwrap(), [Some(0)]);
        assert_eq!(continues(&[named("L", "x")], &[m("L")]).unwrap(), [Some(0)]);
        // All gone, all new.
        assert_eq!(continues(&[m("L"), m("L")], &[m("a")]).unwrap(), [None]);
        assert_eq!(
            continues(&[m("a")], &[m("L"), m("L")]).unwrap(),
            [None, None]
        );
    }

    #[test]
    fn a_guess_is_refused_naming_the_members() {
        for (old, new) in [
            (vec![m("L"), m("L")], vec![m("L")]),
            (vec![m("L")], vec![m("a"), m("L"), m("L")]),
            (vec![m("L"), m("L")], vec![named("L", "x")]),
            (vec![named("L", "x"), named("L", "y")], vec![m("L")]),
            (vec![m("L"), m("L")], vec![named("L", "x"), m("L")]),
            (
                vec![named("L", "x"), named("L", "x")],
                vec![named("L", "x")],
            ),
        ] {
            let error = continues(&old, &new).unwrap_err();
            let ResumeError::AmbiguousMember {
                name,
                checkpoint,
                agent,
            } = &error
            else {
                panic!("{error:?}");
            };
            assert_eq!(name, "L");
            assert_eq!(
                checkpoint.len(),
                old.iter().filter(|o| o.type_names() == ["L"]).count()
            );
            assert_eq!(
                agent.len(),
                new.iter().filter(|n| n.type_names() == ["L"]).count()
            );
            assert!(error.to_string().contains(".named("), "{error}");
        }
        let error = continues(&[named("L", "x"), m("L")], &[m("L"), m("L"), m("L")])
            .unwrap_err()
            .to_string();
        assert!(error.contains("[L \"x\", L]"), "{error}");
    }

    #[test]
    fn a_guess_that_carries_only_defaults_is_no_guess() {
        let (old, new) = (chain(&[m("L"), m("a"), m("L")]), chain(&[m("L")]));
        let matching = Matching::new(&old, &new);
        // Both `L`s at their default (null: stateless): any pairing carries the same.
        let defaults = [Value::Null];
        matching
            .refuse_guess(&[Value::Null, json!(5), Value::Null], &defaults)
            .unwrap();
        assert_eq!(matching.continues, [Some(0)]);
        // One of them counted something: refused.
        let error = matching
            .refuse_guess(&[Value::Null, Value::Null, json!(1)], &defaults)
            .unwrap_err();
        assert!(
            matches!(error, ResumeError::AmbiguousMember { .. }),
            "{error:?}"
        );
    }
}
