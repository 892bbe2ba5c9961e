//! A checkpoint's chain state carried over to this agent's chain, which may have changed since
//! the checkpoint was made (chain evolution, Sagents' restorable interrupts).
//!
//! Members are matched per middleware, by instance name where they have one
//! ([`Named`](crate::middleware::Named)), else in order (see [`Matching`]). A matched member
//! keeps its state, a new member starts from `Default`, a removed member's state is dropped
//! with a warning. Positions recorded in the checkpoint (the interrupted hook's member, the
//! members that raised interrupts or got answers) move with their members; an interrupt whose
//! member is gone no longer waits (see [`Carried::gone`]). Refused: a match that would be a
//! guess where it matters ([`ResumeError::AmbiguousMember`]), and a state that no longer
//! deserializes ([`ResumeError::State`], naming its member).

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::run_loop::States;
use crate::context::{Raiser, ResumePoint};
use crate::interrupt::{Checkpoint, Matching, Members, Position, ResumeError};
use crate::middleware::Middleware;

/// The chain's state from a checkpoint, and what moved.
pub(super) struct Carried<C: Middleware> {
    pub(super) states: States<C>,
    /// Interrupts whose member is no longer in the chain (by index in the checkpoint's
    /// interrupts): the run goes on without their answers.
    pub(super) gone: Vec<usize>,
    /// Where a step paused in a sequential hook goes on when the member that asked is gone:
    /// at the next member, which runs its hook afresh.
    pub(super) resume_instead: Option<usize>,
}

/// Carries `checkpoint`'s state over to the chain `C`, moving the positions it records to the
/// members of `C`, in place.
pub(super) fn carry_over<C: Middleware>(
    checkpoint: &mut Checkpoint,
    members: &Members,
) -> Result<Carried<C>, ResumeError> {
    let mismatch = |checkpoint: &Checkpoint| ResumeError::ChainMismatch {
        checkpoint: checkpoint.chain.names(),
        agent: members.names(),
    };
    // Format 2 did not record how members nest: its state splits only on the same members.
    if checkpoint.flat_chain {
        if checkpoint.chain.type_names() != members.type_names() {
            return Err(mismatch(checkpoint));
        }
        checkpoint.chain = members.clone();
        checkpoint.flat_chain = false;
    }
    let old = checkpoint.chain.clone();
    let matching = Matching::new(&old, members);
    let (Some(run), Some(thread)) = (
        carry_state(&matching, &old, members, &checkpoint.state)?,
        carry_state(&matching, &old, members, &checkpoint.thread_state)?,
    ) else {
        return Err(mismatch(checkpoint));
    };
    let states = States { run, thread };
    if old == *members {
        return Ok(Carried {
            states,
            gone: Vec::new(),
            resume_instead: None,
        });
    }
    // Where the run stopped must not be in a member paired by a guess.
    let recorded = checkpoint
        .interrupts
        .iter()
        .filter_map(|interrupt| interrupt.member)
        .chain(match &checkpoint.position {
            Position::BeforeModel { member, .. } | Position::AfterModel { member, .. } => {
                vec![*member]
            }
            Position::Tools { answers, .. } => answers
                .iter()
                .filter_map(|answer| match answer.raiser {
                    Raiser::Member(at) => Some(at),
                    Raiser::Tool => None,
                })
                .collect(),
            Position::Step => Vec::new(),
        });
    for at in recorded {
        matching.refuse_guess_at(at)?;
    }
    warn_removed(&matching, "checkpoint");
    let mut gone = Vec::new();
    for (i, interrupt) in checkpoint.interrupts.iter_mut().enumerate() {
        let Some(at) = interrupt.member else { continue };
        match matching.position(at) {
            Some(moved) => interrupt.member = Some(moved),
            None => {
                tracing::warn!(
                    member = %interrupt.source,
                    interrupt = %interrupt.id,
                    "the interrupt's member is not in this chain: the run goes on without it"
                );
                gone.push(i);
            }
        }
    }
    let mut resume_instead = None;
    match &mut checkpoint.position {
        Position::BeforeModel { member, .. } => match matching.position(*member) {
            Some(moved) => *member = moved,
            None => resume_instead = Some(matching.next_after(*member)),
        },
        Position::AfterModel { member, .. } => match matching.position(*member) {
            Some(moved) => *member = moved,
            // `after_model` runs in reverse: the members before the one that asked are next.
            None => {
                resume_instead = Some(
                    matching
                        .previous_before(*member)
                        .unwrap_or(ResumePoint::ALL_RAN),
                );
            }
        },
        Position::Tools { answers, .. } => answers.retain_mut(|answer| match answer.raiser {
            Raiser::Member(at) => matching.position(at).is_some_and(|moved| {
                answer.raiser = Raiser::Member(moved);
                true
            }),
            Raiser::Tool => true,
        }),
        Position::Step => {}
    }
    Ok(Carried {
        states,
        gone,
        resume_instead,
    })
}

/// A thread's thread-scoped `state`, stored by the chain `old` (`None`: this one), as the
/// thread-scoped state of the chain `C`.
pub(super) fn carry_thread_state<C: Middleware>(
    old: Option<&Members>,
    state: &Value,
    members: &Members,
) -> Result<C::ThreadState, ResumeError> {
    let old = old.unwrap_or(members);
    let matching = Matching::new(old, members);
    if old != members {
        warn_removed(&matching, "thread");
    }
    carry_state(&matching, old, members, state)?.ok_or_else(|| ResumeError::ChainMismatch {
        checkpoint: old.names(),
        agent: members.names(),
    })
}

/// Warns of each member of the `whose` (checkpoint, thread) chain that the new chain has not.
fn warn_removed(matching: &Matching<'_>, whose: &str) {
    for removed in matching.removed() {
        tracing::warn!(
            member = removed.display(),
            "the {whose}'s member `{}` is not in this chain: its state is dropped",
            removed.display()
        );
    }
}

/// `state` (nested as `old`) as the state `T` of the chain `new`: each member of `new` takes
/// the state of the old member it continues, or its default. `Ok(None)` if `state` is not
/// nested as `old` says (not this checkpoint's state); an error naming the member whose state
/// no longer deserializes.
fn carry_state<T: DeserializeOwned + Serialize + Default>(
    matching: &Matching<'_>,
    old: &Members,
    new: &Members,
    state: &Value,
) -> Result<Option<T>, ResumeError> {
    // The same chain (every resume but one after a deploy): the state as it is; member by
    // member only to name the one whose state no longer fits.
    if old == new
        && let Ok(state) = T::deserialize(state)
    {
        return Ok(Some(state));
    }
    let Some(old_states) = old.split(state.clone()) else {
        return Ok(None);
    };
    // The defaults split as the new chain says: they are its own state's.
    let defaults = serde_json::to_value(T::default())
        .ok()
        .and_then(|defaults| new.split(defaults))
        .unwrap_or_default();
    matching.refuse_guess(&old_states, &defaults)?;
    let chosen: Vec<Value> = (0..matching.new.len())
        .map(|j| match matching.continues[j] {
            Some(i) => old_states[i].clone(),
            None => defaults.get(j).cloned().unwrap_or(Value::Null),
        })
        .collect();
    match serde_json::from_value::<T>(new.assemble(&mut chosen.iter().cloned())) {
        Ok(state) => Ok(Some(state)),
        Err(error) => {
            // Which member's state no longer fits: each carried state tried alone, the others
            // at their defaults.
            let culprit = (0..chosen.len())
                .filter(|&j| matching.continues[j].is_some())
                .find_map(|j| {
                    let mut trial = defaults.clone();
                    *trial.get_mut(j)? = chosen[j].clone();
                    let tried = serde_json::from_value::<T>(new.assemble(&mut trial.into_iter()));
                    tried.err().map(|error| (matching.new[j].display(), error))
                });
            let (member, source) = culprit.unwrap_or(("the chain", error));
            Err(ResumeError::State {
                member: member.to_owned(),
                source,
            })
        }
    }
}
