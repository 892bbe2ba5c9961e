//! The property a schedule must keep, checked on the ledger, the journal, the store and the
//! application's thread once the run is over — and the tally of what was covered.
//!
//! For each effect the promise covers (see [`Effect`](super::schedule::Effect)):
//!
//! - **one idempotency key**: every ledger row of the effect has the same key (a call never
//!   acts under two keys: the run was never started over under a new id);
//! - **at most once, but for deaths in flight**: the effect has at most `1 + d` rows, `d` the
//!   deaths at which its call had started and its result was not in what the store held
//!   (`Note::Crash`); such a call acts again, with its key, as `Durability` documents — the
//!   promise of *at most once* is for calls whose result was kept, and a tool that must act
//!   once passes the key on;
//! - **a kept result is final**: once a death found the call's result kept, the call never
//!   starts again;
//! - **exactly once when finished**: a finished run's effect has a row.
//!
//! And for the run: reported finished at most once; ended exactly once (the store's tombstone,
//! `finished`, or `abandoned` when the application gave the pause up); a finished run reported
//! to the application, whose history has exactly one result for every call (after the call,
//! before the next answer), the result of each visible tool once, and the final answer; no
//! error on the documented path, no refusal of it but a held key; and every duplicated or late
//! approval refused without effect.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use hookchain::interrupt::Record;
use hookchain::{Message, Role, Thread};

use super::ledger::{Note, Tag};
use super::schedule::{App, Scenario};

/// Something the property's checks found that is a known gap of the library, reported apart
/// from violations (see the test file's docs for each).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Finding {
    /// The run's end was stored (its tombstone), but no call of the agent returned the
    /// output: the worker died after writing it. The application's thread is as before the
    /// call, and nothing can give it the run's history (its calls' results, its answer).
    LostAtEnd,
    /// The store holds a pause the application's thread does not wait on (its worker died
    /// after writing it, before returning it): `paused_run` does not find it, a stored resume
    /// with that thread is refused, and the request sent again starts a new run.
    OrphanedPause,
    /// The store holds a run in progress that `interrupted_run` does not find for the thread.
    OrphanedStep,
    /// A run whose future was dropped in the runtime (and the agent settled) still holds its
    /// key: it was dropped while its claim was in flight (a SQLite write on a blocking thread,
    /// a Postgres statement sent), which landed after the drop; nothing releases it, the key
    /// is held until the lease expires.
    HeldAfterDrop,
    /// The application gave up its thread's pause (`Agent::abandon`) after the worker that
    /// resumed it died having finished the run (its tombstone `finished` stored, with
    /// `LostAtEnd`): `abandon` succeeds, and the thread says the calls after the pause were
    /// not run, though they acted.
    AbandonedFinishedRun,
    /// The application gave up a pause (`Agent::abandon`, the store's tombstone `abandoned`)
    /// after a worker died resuming it, and a call after the pause had acted: the history
    /// says it was not run.
    AbandonedAfterEffect,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Finding::LostAtEnd => "lost at end",
            Finding::OrphanedPause => "orphaned pause",
            Finding::OrphanedStep => "orphaned step",
            Finding::AbandonedFinishedRun => "abandoned a finished run",
            Finding::AbandonedAfterEffect => "abandoned after an effect",
            Finding::HeldAfterDrop => "held after drop",
        })
    }
}

/// What the checks of one schedule found.
#[derive(Debug, Default)]
pub(crate) struct Check {
    pub(crate) violations: Vec<String>,
    pub(crate) findings: BTreeSet<Finding>,
    /// What would be violations, but follows from a finding: an effect completed before an
    /// orphaned pause acts again in the run the request sent again starts (under a new key).
    pub(crate) explained: Vec<String>,
    /// What the findings saw, for the report.
    pub(crate) details: Vec<String>,
    /// How many times each effect acted (ledger rows), by tool.
    pub(crate) acted: BTreeMap<&'static str, usize>,
}

/// Checks the property for the run of `app` (see the module's docs).
pub(crate) fn check<S: Scenario, T>(
    scenario: &S,
    tag: &Tag,
    app: &App<Thread<T>>,
    notes: &[Note],
    rows: &[(String, String)],
    record: Option<&Record>,
) -> Check {
    let mut check = Check {
        findings: app.findings.iter().copied().collect(),
        ..Check::default()
    };
    check.violations.extend(app.errors.iter().cloned());

    let violations = &mut check.violations;
    // The ledger is written by the tools alone, each after noting its start.
    for (key, effect) in rows {
        let started = notes.iter().any(
            |note| matches!(note, Note::Start { effect: e, key: k } if e == effect && k == key),
        );
        if !started {
            violations.push(format!("a ledger row no call started: {effect} {key}"));
        }
    }
    let mut effects_of_key: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (key, effect) in rows {
        effects_of_key.entry(key).or_default().insert(effect);
    }
    for (key, effects) in &effects_of_key {
        if effects.len() > 1 {
            violations.push(format!(
                "the idempotency key {key} is shared by {effects:?}"
            ));
        }
    }

    let ended = match record {
        Some(Record::Ended(tombstone)) => Some(tombstone.how.as_str()),
        _ => None,
    };
    let finished = app.finished >= 1 && ended == Some("finished");
    for effect in scenario.effects() {
        let name = tag.effect(effect.tool);
        let done = format!("{name} done");
        // Completed before a pause the application never heard of: the run sent again does it
        // again, under its own key (`Finding::OrphanedPause`).
        let before_orphan = app.orphans.iter().any(|json| json.contains(&done));
        let mut problems = Vec::new();
        let acted: Vec<&String> = rows
            .iter()
            .filter(|(_, e)| *e == name)
            .map(|(key, _)| key)
            .collect();
        check.acted.insert(effect.tool, acted.len());
        let keys: BTreeSet<&String> = acted.iter().copied().collect();
        let (mut started, mut allowed, mut kept) = (0, 1, false);
        for note in notes {
            match note {
                Note::Start { effect: e, .. } if *e == name => {
                    started += 1;
                    if kept && effect.promised {
                        problems.push(format!(
                            "`{}` started again after a death found its result kept",
                            effect.tool
                        ));
                    }
                }
                Note::Crash { in_flight, .. } => {
                    if in_flight.contains(&name) {
                        allowed += 1;
                    } else if started > 0 {
                        kept = true;
                    }
                }
                _ => {}
            }
        }
        if !effect.promised {
            continue;
        }
        if keys.len() > 1 {
            problems.push(format!(
                "`{}` acted under {} idempotency keys: {keys:?}",
                effect.tool,
                keys.len()
            ));
        }
        if acted.len() > allowed {
            problems.push(format!(
                "`{}` acted {} times, {} allowed ({} deaths in flight)",
                effect.tool,
                acted.len(),
                allowed,
                allowed - 1
            ));
        }
        if finished && acted.is_empty() {
            problems.push(format!(
                "the run finished, but `{}` never acted",
                effect.tool
            ));
        }
        if before_orphan {
            check.explained.extend(problems);
        } else {
            check.violations.extend(problems);
        }
        // An effect of a call the abandoned pause had not run (its result not in the pause).
        let before_pause = app
            .pauses
            .last()
            .is_some_and(|(pause, _)| pause.to_json().expect("a checkpoint").contains(&done));
        if app.abandoned && !acted.is_empty() && !before_pause {
            check.findings.insert(match ended {
                Some("finished") => Finding::AbandonedFinishedRun,
                _ => Finding::AbandonedAfterEffect,
            });
            check.details.push(format!(
                "the pause was abandoned after `{}` acted {} times; the journal: {notes:?}",
                effect.tool,
                acted.len()
            ));
        }
    }
    let violations = &mut check.violations;

    if app.finished > 1 {
        violations.push(format!(
            "the run was reported finished {} times",
            app.finished
        ));
    }
    match ended {
        Some("finished") if app.finished == 0 => {
            check.findings.insert(Finding::LostAtEnd);
        }
        Some("finished") if app.abandoned => {
            violations.push("the abandoned run finished".to_owned());
        }
        Some("finished") => {}
        Some("abandoned") if app.abandoned && app.finished == 0 => {}
        Some(how) => violations.push(format!(
            "the run ended `{how}` (abandoned by us: {}, reported finished {} times)",
            app.abandoned, app.finished
        )),
        None => violations.push(format!("the run never ended: the store holds {record:?}")),
    }

    if app.abandoned
        && let Some(problem) = dangling(app.saved.messages())
    {
        violations.push(format!("the abandoned thread's history: {problem}"));
    }
    if app.finished == 1 {
        let messages = app.saved.messages();
        if let Some(problem) = dangling(messages) {
            violations.push(problem);
        }
        let last = messages.last().filter(|m| m.role == Role::Assistant);
        if last.map(|m| m.text().into_owned()).as_deref() != Some(scenario.final_text()) {
            violations.push(format!(
                "the finished run's last message is {last:?}, not `{}`",
                scenario.final_text()
            ));
        }
        for tool in scenario.visible() {
            let result = format!("{} done", tag.effect(tool));
            let shown = messages
                .iter()
                .filter(|m| m.role == Role::Tool && m.text() == result)
                .count();
            if shown != 1 {
                violations.push(format!(
                    "the finished run's history shows `{tool}`'s result {shown} times"
                ));
            }
        }
    }
    check
}

/// Whether a tool call of `messages` lacks its result, or has several, or a result answers
/// no call (`support::assert_no_dangling`, as a value).
fn dangling(messages: &[Message]) -> Option<String> {
    for (at, message) in messages.iter().enumerate() {
        for call in &message.tool_calls {
            let answers = |m: &&Message| {
                m.role == Role::Tool && m.tool_call_id.as_deref() == Some(call.id.as_str())
            };
            let total = messages.iter().filter(answers).count();
            if total != 1 {
                return Some(format!("tool call `{}` has {total} results", call.id));
            }
            let turn_end = messages[at + 1..]
                .iter()
                .position(|m| m.role == Role::Assistant)
                .map_or(messages.len(), |offset| at + 1 + offset);
            if !messages[at + 1..turn_end].iter().any(|m| answers(&m)) {
                return Some(format!(
                    "the result of tool call `{}` is not between the call and the next answer",
                    call.id
                ));
            }
        }
    }
    messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .find(|result| {
            let id = result.tool_call_id.as_deref();
            messages
                .iter()
                .flat_map(|m| &m.tool_calls)
                .filter(|call| Some(call.id.as_str()) == id)
                .count()
                != 1
        })
        .map(|result| {
            format!(
                "the tool result {:?} answers no single call",
                result.tool_call_id
            )
        })
}

/// What the schedules of one scenario on one store covered.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    /// The first worker's await points (a dry run's pendings + 1: it can die before each poll).
    pub(crate) points: usize,
    /// The points at which the first worker died (some schedules end before their point: the
    /// run took fewer polls that time).
    pub(crate) hit: BTreeSet<usize>,
    /// Schedules in which a worker died at its chosen point: the crash points covered (a point
    /// of the first worker with a death and a twist, or a pair of points).
    pub(crate) crashes: usize,
    /// Schedules in all (some end before their point: the run took fewer polls that time).
    pub(crate) schedules: usize,
    /// Schedules whose recovering worker died too.
    pub(crate) pairs: usize,
    /// The sites the deaths fell at (leg and last noted await point).
    pub(crate) sites: BTreeSet<String>,
    /// First deaths nothing released (the key held until its lease ran out), and released.
    pub(crate) held: usize,
    pub(crate) released: usize,
    /// Schedules whose call in flight acted again after a death (with its key).
    pub(crate) reruns: usize,
    pub(crate) findings: BTreeMap<Finding, usize>,
    /// The first schedule of each finding, and what it saw.
    pub(crate) examples: BTreeMap<Finding, String>,
    /// Would-be violations that follow from a finding.
    pub(crate) explained: Vec<String>,
    pub(crate) violations: Vec<String>,
}
