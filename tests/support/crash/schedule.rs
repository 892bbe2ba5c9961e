//! One crash schedule: a scenario's run, its worker killed at await point k, then recovered
//! the documented way (maybe with a second death during the recovery), and the property
//! checked.
//!
//! The application keeps its thread as it last saved it — after a call of the agent returned —
//! and nothing more: a worker that dies leaves it as it was before that call. Recovery is what
//! a service does on restart, through the agent's API:
//!
//! 1. `Agent::interrupted_run(&thread)`: a run in progress whose worker died → `resume_in(thread,
//!    ResumeFrom::stored(key), [])`;
//! 2. else `Agent::paused_run(&thread)`: the pause the thread waits on (or one of its current
//!    run it never heard of) → `resume_in(thread, ResumeFrom::stored(key), answers)`, answered
//!    as a person would;
//! 3. else what the store holds: a tombstone → `resume_in(thread, ResumeFrom::stored(key), [])`
//!    once, which hands back an end the thread never heard of (its worker died after writing
//!    it), and is refused (`ResumeError::Ended`) when the thread had; nothing → the request is
//!    sent again (`run_in` with the input); a checkpoint neither call recognises → an *orphan*
//!    (noted as a finding), and the request is sent again, as a service that cannot resume
//!    does.
//!
//! A resume refused because a (dead) worker's lease still holds the key lets time pass and
//! tries again.

use std::sync::Arc;

use futures::StreamExt;
use hookchain::builtin::human_in_the_loop::ApprovalResponse;
use hookchain::interrupt::ResumeError;
use hookchain::interrupt::{CheckpointError, Checkpointer, Claim, DynCheckpointer, Record};
use hookchain::prelude::*;
use hookchain::subagent::SubAgentPause;
use hookchain::{Checkpoint, EndReason, InterruptId, Model, ResumeFrom, RunOutput, Thread};

use super::check::{self, Check, Finding};
use super::cut::{Budget, Death, Polled, Work, drive};
use super::ledger::{Journal, Ledger, Note, Tag};
use super::stores::{LEASE, Stores};

/// A tool's effect, and whether the promise covers it: at most one effect per call (acting
/// again only with the same key, and only after a death while it was in flight), and exactly
/// one in a finished run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Effect {
    pub(crate) tool: &'static str,
    pub(crate) promised: bool,
}

impl Effect {
    pub(crate) const fn promised(tool: &'static str) -> Effect {
        Effect {
            tool,
            promised: true,
        }
    }

    /// An effect outside the promise: counted, not bounded (a run not kept before its pause,
    /// under `Durability::Pauses`, starts over after a crash).
    pub(crate) const fn unpromised(tool: &'static str) -> Effect {
        Effect {
            tool,
            promised: false,
        }
    }
}

/// What a scenario's agent is built from, for one worker.
pub(crate) struct Worker {
    pub(crate) store: Arc<dyn DynCheckpointer>,
    pub(crate) name: String,
    pub(crate) tag: Tag,
}

/// A scenario: an agent, its input, how a person answers it, what its finished run shows.
pub(crate) trait Scenario: Sync {
    type M: Model + 'static;
    type C: Middleware + 'static;

    fn name(&self) -> &'static str;
    /// The agent as `worker` runs it.
    fn agent(&self, worker: &Worker) -> Agent<Self::M, Self::C>;
    fn input(&self) -> &'static str;
    /// Whether each call of the agent is streamed (`stream_in`, `stream_resume_in`), its
    /// stream read to the end.
    fn streamed(&self) -> bool {
        false
    }
    fn effects(&self) -> &'static [Effect];
    /// The tools whose results the finished run's history shows (each exactly once).
    fn visible(&self) -> &'static [&'static str];
    fn final_text(&self) -> &'static str;
}

/// The answers a person gives to `pause`: every approval approved, a sub-agent's approvals too.
pub(crate) fn answer(pause: &Checkpoint) -> Vec<(InterruptId, serde_json::Value)> {
    pause
        .interrupts()
        .iter()
        .map(|interrupt| match SubAgentPause::from_interrupt(interrupt) {
            Some(child) => (
                interrupt.id.clone(),
                child.answer(ApprovalResponse::approve_every(child.interrupts())),
            ),
            None => ApprovalResponse::approve_every(std::slice::from_ref(interrupt))
                .pop()
                .unwrap_or_else(|| panic!("an interrupt that is not an approval: {interrupt:?}")),
        })
        .collect()
}

/// What the application asks of a worker.
pub(crate) enum Act {
    /// The request: `run_in` with the input.
    Start,
    /// `resume_in` from `from` with these answers.
    Resume(ResumeFrom, Vec<(InterruptId, serde_json::Value)>),
}

/// The thread type of a scenario.
pub(crate) type ThreadOf<S> = Thread<<<S as Scenario>::C as Middleware>::ThreadState>;

/// One call of the agent on `thread`, as a worker runs it (streamed, read to the end, if the
/// scenario streams).
pub(crate) fn leg<'a, S: Scenario>(
    scenario: &'a S,
    agent: &'a Agent<S::M, S::C>,
    thread: &'a mut ThreadOf<S>,
    act: Act,
) -> Work<'a, Result<RunOutput, Error>> {
    if scenario.streamed() {
        Box::pin(async move {
            let mut stream = match act {
                Act::Start => agent.stream_in(thread, scenario.input()),
                Act::Resume(from, answers) => agent.stream_resume_in(thread, from, answers),
            };
            let mut output = None;
            while let Some(event) = stream.next().await {
                if let AgentEvent::Output(out) = event? {
                    assert!(output.is_none(), "a stream gave two outputs");
                    output = Some(*out);
                }
            }
            Ok(output.expect("a stream ended without its output"))
        })
    } else {
        match act {
            Act::Start => Box::pin(agent.run_in(thread, scenario.input())),
            Act::Resume(from, answers) => Box::pin(agent.resume_in(thread, from, answers)),
        }
    }
}

/// A variation mixed into a schedule after its first death.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Twist {
    /// Recovery only.
    Plain,
    /// The approval of the last pause the application saw is delivered again (a webhook
    /// retried, late): with the checkpoint in hand, then from the store — after the run may
    /// have moved on.
    LateApproval,
    /// The recovering worker's clock is skewed (the n-th skewed handle of the store; the
    /// memory store has none, and recovers plainly).
    Skewed(usize),
    /// The application gives the paused thread up (`Agent::abandon`) instead of recovering.
    Abandon,
}

/// A schedule: where the first worker dies, how, what is mixed in, and where the first
/// recovering worker dies (a pair), if it does.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Schedule {
    pub(crate) crash: Option<usize>,
    pub(crate) death: Death,
    pub(crate) twist: Twist,
    pub(crate) recovery_crash: Option<usize>,
    pub(crate) recovery_death: Death,
}

impl Schedule {
    /// A run with no death: how many await points it has.
    pub(crate) fn dry() -> Schedule {
        Schedule {
            crash: None,
            death: Death::Dead,
            twist: Twist::Plain,
            recovery_crash: None,
            recovery_death: Death::Dead,
        }
    }
}

/// What a schedule did, and whether the property held.
#[derive(Debug)]
pub(crate) struct Outcome {
    /// How many times the first worker's futures returned `Pending` (a dry run: its await
    /// points).
    pub(crate) first_pendings: usize,
    /// How many times the first recovering worker's did.
    pub(crate) recovery_pendings: usize,
    pub(crate) crashed: bool,
    pub(crate) recovery_crashed: bool,
    /// Where the first death fell: the leg and the last await point a model or tool noted.
    pub(crate) site: String,
    /// Whether the key was still held when the first worker had died (its lease unexpired):
    /// `Some(true)` is a death that nothing released.
    pub(crate) held_at_death: Option<bool>,
    pub(crate) check: Check,
}

/// The application: its thread as last saved, and what the agent's calls gave it.
pub(crate) struct App<T> {
    pub(crate) saved: T,
    /// The pauses it was given, with its thread as saved then.
    pub(crate) pauses: Vec<(Checkpoint, T)>,
    /// The runs reported finished.
    pub(crate) finished: usize,
    pub(crate) abandoned: bool,
    /// What went wrong that the documented path should not meet.
    pub(crate) errors: Vec<String>,
    pub(crate) findings: Vec<Finding>,
    /// The orphaned checkpoints recovery met (as JSON): the request was sent again past them.
    pub(crate) orphans: Vec<String>,
    /// How many calls of the agent returned (the leg a death falls in).
    pub(crate) legs: usize,
    /// Whether recovery asked the store for a run's end the thread never heard of.
    pub(crate) recovered_end: bool,
}

/// What the application does next after a call returned.
enum Next {
    Answer(Box<Checkpoint>),
    Done,
    Failed(Error),
}

impl<S: Clone> App<Thread<S>> {
    fn absorb(&mut self, result: Result<RunOutput, Error>, working: Thread<S>, who: &str) -> Next {
        self.legs += 1;
        let output = match result {
            Ok(output) => output,
            Err(error) => return Next::Failed(error),
        };
        self.saved = working;
        if let Some(cleanup) = &output.cleanup_error {
            self.errors
                .push(format!("{who}: the run's end was not stored: {cleanup}"));
        }
        match output.end {
            EndReason::Interrupted => {
                let pause = output.checkpoint.expect("a paused run's checkpoint");
                self.pauses.push(((*pause).clone(), self.saved.clone()));
                Next::Answer(pause)
            }
            EndReason::Finished => {
                self.finished += 1;
                Next::Done
            }
            other => {
                self.errors.push(format!("{who}: the run ended {other:?}"));
                Next::Done
            }
        }
    }
}

/// Whether `error` is a refusal a duplicated, late or replayed answer may meet: the key is
/// held, the run went on or ended, the answers are for a pause no longer waited on.
pub(crate) fn refused(error: &Error) -> bool {
    match error {
        Error::Checkpoint(error) => matches!(**error, CheckpointError::Claimed { .. }),
        Error::Resume(_) => true,
        _ => false,
    }
}

fn claimed(error: &Error) -> bool {
    matches!(error, Error::Checkpoint(error) if matches!(**error, CheckpointError::Claimed { .. }))
}

impl<T> App<T> {
    /// The application with its thread `saved`, before its first call.
    pub(crate) fn new(saved: T) -> App<T> {
        App {
            saved,
            pauses: Vec::new(),
            finished: 0,
            abandoned: false,
            errors: Vec::new(),
            findings: Vec::new(),
            orphans: Vec::new(),
            legs: 0,
            recovered_end: false,
        }
    }
}

/// The first worker: the application's calls, one after the other (the request, then the
/// answer to each pause), until the run ends or `budget` runs out — then `die` gets the
/// worker's future, at its point. `kept` is called after each call returned (the application
/// saved its thread). Returns whether the worker died.
pub(crate) async fn first_worker<S: Scenario>(
    scenario: &S,
    agent: &Agent<S::M, S::C>,
    app: &mut App<ThreadOf<S>>,
    budget: &mut Budget,
    die: impl FnOnce(Work<'_, Result<RunOutput, Error>>),
    mut kept: impl FnMut(&App<ThreadOf<S>>),
) -> bool {
    let mut act = Act::Start;
    let mut die = Some(die);
    loop {
        let mut working = app.saved.clone();
        let result = match drive(budget, leg(scenario, agent, &mut working, act)).await {
            Polled::Cut(work) => {
                (die.take().expect("one death"))(work);
                None
            }
            Polled::Ready(result) => Some(result),
        };
        let Some(result) = result else { return true };
        let next = app.absorb(result, working, "the first worker");
        kept(app);
        match next {
            Next::Answer(pause) => {
                let answers = answer(&pause);
                act = Act::Resume(ResumeFrom::from(pause), answers);
            }
            Next::Done => return false,
            Next::Failed(error) => {
                app.errors.push(format!("the first worker failed: {error}"));
                return false;
            }
        }
    }
}

/// Runs `schedule` of `scenario` on `stores`, its effects in `ledger` under the id `sid`.
pub(crate) async fn run_schedule<S: Scenario>(
    scenario: &S,
    stores: &Stores,
    ledger: &Ledger,
    sid: String,
    schedule: &Schedule,
) -> Outcome {
    let tag = Tag::new(sid, ledger, Journal::memory());
    let first = scenario.agent(&Worker {
        store: Arc::clone(&stores.normal),
        name: "w0".to_owned(),
        tag: tag.clone(),
    });
    let thread = first.thread();
    let key = thread.id().as_str().to_owned();
    let mut app = App::new(thread);
    let mut budget = Budget::of(schedule.crash);
    let death = schedule.death;
    let crashed = first_worker(
        scenario,
        &first,
        &mut app,
        &mut budget,
        |work| death.drop_work(work),
        |_| {},
    )
    .await;
    if crashed && death == Death::Released {
        first.settle().await;
    }
    let first_pendings = budget.pendings;
    recover(
        scenario,
        stores,
        ledger,
        &tag,
        &key,
        app,
        schedule,
        crashed,
        first_pendings,
    )
    .await
}

/// Once the first worker died (if `crashed`; `schedule.death` says how, and a released key
/// was let go already): the death noted, time passed, the twist mixed in, the run recovered,
/// the approvals delivered again, and the property checked.
#[allow(clippy::too_many_arguments)] // One call site per kind of first worker.
pub(crate) async fn recover<S: Scenario>(
    scenario: &S,
    stores: &Stores,
    ledger: &Ledger,
    tag: &Tag,
    key: &str,
    mut app: App<ThreadOf<S>>,
    schedule: &Schedule,
    crashed: bool,
    first_pendings: usize,
) -> Outcome {
    let journal = &tag.journal;
    let key = key.to_owned();
    let worker = |name: &str, store: &Arc<dyn DynCheckpointer>| {
        scenario.agent(&Worker {
            store: Arc::clone(store),
            name: name.to_owned(),
            tag: tag.clone(),
        })
    };
    let site = match crashed {
        true => format!(
            "leg {} after {}",
            app.legs + 1,
            journal.last_point().unwrap_or_else(|| "nothing".to_owned())
        ),
        false => "no death".to_owned(),
    };
    let mut deaths = 0;
    let mut held_at_death = None;
    if crashed {
        deaths += 1;
        note_death(stores, &key, journal, deaths).await;
        held_at_death = Some(after_death(stores, &key, schedule.death, &mut app).await);
    }

    // What is mixed in before the recovery.
    let helper = worker("w1", &stores.normal);
    if crashed {
        match schedule.twist {
            Twist::LateApproval => {
                if let Some((pause, _)) = app.pauses.last().cloned() {
                    let answers = answer(&pause);
                    for from in [ResumeFrom::from(pause), ResumeFrom::stored(key.clone())] {
                        if app.finished > 0 {
                            break;
                        }
                        let mut working = app.saved.clone();
                        let result = helper.resume_in(&mut working, from, answers.clone()).await;
                        match result {
                            Err(error) if refused(&error) => {}
                            result => {
                                if let Next::Failed(error) =
                                    app.absorb(result, working, "a late approval")
                                {
                                    app.errors.push(format!(
                                        "a late approval failed, not refused: {error}"
                                    ));
                                }
                            }
                        }
                    }
                }
            }
            Twist::Abandon if app.saved.is_paused() => {
                let mut working = app.saved.clone();
                match helper.abandon(&mut working).await {
                    Ok(true) => {
                        app.saved = working;
                        app.abandoned = true;
                    }
                    Ok(false) => {}
                    Err(error) if refused(&error) => {}
                    Err(error) => app
                        .errors
                        .push(format!("abandon failed, not refused: {error}")),
                }
            }
            _ => {}
        }
    }

    // The recovery: a second worker (skewed, maybe) resumes what the store holds, dying itself
    // after `recovery_crash` pendings if given; then others, until the run ended.
    let recoverer = match schedule.twist {
        Twist::Skewed(n) if !stores.skewed.is_empty() => {
            let (_, store) = &stores.skewed[n % stores.skewed.len()];
            worker("w1-skewed", store)
        }
        _ => worker("w1", &stores.normal),
    };
    let mut budget = Budget::of(schedule.recovery_crash.filter(|_| crashed));
    let mut recovery_pendings = 0;
    let mut recovery_crashed = false;
    let mut current = recoverer;
    let mut generation = 1;
    let mut rounds = 0;
    while crashed && app.finished == 0 && !app.abandoned {
        rounds += 1;
        if rounds > 24 {
            app.errors
                .push("the run was not recovered in 24 rounds".to_owned());
            break;
        }
        let act = match next_act(&current, &mut app, stores, &key).await {
            Ok(Some(act)) => act,
            Ok(None) => break,
            Err(error) => {
                app.errors
                    .push(format!("recovery could not read the run: {error}"));
                break;
            }
        };
        let mut working = app.saved.clone();
        let result = match drive(&mut budget, leg(scenario, &current, &mut working, act)).await {
            Polled::Cut(work) => {
                schedule.recovery_death.drop_work(work);
                None
            }
            Polled::Ready(result) => Some(result),
        };
        let Some(result) = result else {
            recovery_crashed = true;
            recovery_pendings = budget.pendings;
            deaths += 1;
            if schedule.recovery_death == Death::Released {
                current.settle().await;
            }
            note_death(stores, &key, journal, deaths).await;
            after_death(stores, &key, schedule.recovery_death, &mut app).await;
            generation += 1;
            current = worker(&format!("w{generation}"), &stores.normal);
            budget = Budget::unlimited();
            continue;
        };
        match app.absorb(result, working, &format!("recovering worker w{generation}")) {
            Next::Answer(_) | Next::Done => {}
            // The run is over, and the thread had heard of its end (it was abandoned).
            Next::Failed(Error::Resume(refusal))
                if app.recovered_end && matches!(*refusal, ResumeError::Ended { .. }) =>
            {
                break;
            }
            Next::Failed(error) if claimed(&error) => stores.pass_the_leases(),
            Next::Failed(error) => {
                app.errors.push(format!(
                    "recovering worker w{generation} was refused: {error}"
                ));
                break;
            }
        }
    }

    if !recovery_crashed {
        recovery_pendings = budget.pendings;
    }

    // Every approval the application was given, delivered again once the run is over: with the
    // checkpoint in hand and the thread as saved, and from the store with the thread as it was
    // at the pause. Refused, and nothing runs.
    let ended = matches!(stores.settled_record(&key).await.0, Some(Record::Ended(_)));
    if ended {
        for (pause, at_pause) in app.pauses.clone() {
            let answers = answer(&pause);
            for (from, thread) in [
                (ResumeFrom::from(pause.clone()), app.saved.clone()),
                (ResumeFrom::stored(key.clone()), at_pause),
            ] {
                let mut thread = thread;
                match helper.resume_in(&mut thread, from, answers.clone()).await {
                    Ok(output) => app.errors.push(format!(
                        "a duplicated approval was not refused: the run went on and ended {:?}",
                        output.end
                    )),
                    Err(error) if refused(&error) => {}
                    Err(error) => app.errors.push(format!(
                        "a duplicated approval failed, not refused: {error}"
                    )),
                }
            }
        }
    }

    let (record, _) = stores.settled_record(&key).await;
    let rows = ledger.rows(&tag.sid).await;
    let check = check::check(
        scenario,
        tag,
        &app,
        &journal.notes(),
        &rows,
        record.as_ref(),
    );
    Outcome {
        first_pendings,
        recovery_pendings,
        crashed,
        recovery_crashed,
        site,
        held_at_death,
        check,
    }
}

/// What a restarted service does for the run of `app`'s thread: see the module's docs.
/// `None`: the run is over.
async fn next_act<M: Model, C: Middleware, S: Clone>(
    agent: &Agent<M, C>,
    app: &mut App<Thread<S>>,
    stores: &Stores,
    key: &str,
) -> Result<Option<Act>, Error> {
    if agent.interrupted_run(&app.saved).await?.is_some() {
        return Ok(Some(Act::Resume(ResumeFrom::stored(key), Vec::new())));
    }
    if let Some(pause) = agent.paused_run(&app.saved).await? {
        return Ok(Some(Act::Resume(ResumeFrom::stored(key), answer(&pause))));
    }
    let (record, _) = stores.settled_record(key).await;
    Ok(match record {
        // Over — and if the thread never heard of its end (its worker died after writing it),
        // a stored resume with no answers hands the end back; refused otherwise.
        Some(Record::Ended(_)) if app.finished == 0 && !app.recovered_end => {
            app.recovered_end = true;
            Some(Act::Resume(ResumeFrom::stored(key), Vec::new()))
        }
        Some(Record::Ended(_)) => None,
        None => Some(Act::Start),
        Some(Record::Checkpoint(checkpoint)) => {
            app.findings.push(if checkpoint.is_pause() {
                Finding::OrphanedPause
            } else {
                Finding::OrphanedStep
            });
            app.orphans
                .push(checkpoint.to_json().expect("a checkpoint"));
            Some(Act::Start)
        }
        Some(other) => panic!("an unknown record: {other:?}"),
    })
}

/// After a worker died: whether its key is still held (a probe claims it, and lets it go), then
/// time passes beyond the leases if it was a death nothing released. A key still held after a
/// released death (the future dropped in the runtime, and the agent settled) is
/// `Finding::HeldAfterDrop`: a dropped run should let its key go.
async fn after_death<T>(stores: &Stores, key: &str, death: Death, app: &mut App<T>) -> bool {
    let probe = stores
        .normal
        .claim(key, "probe", LEASE)
        .await
        .expect("probe the key");
    let held = match probe {
        Claim::Granted { lease, .. } => {
            stores
                .normal
                .release(key, &lease)
                .await
                .expect("let the probe's claim go");
            false
        }
        Claim::Busy { .. } => true,
    };
    match death {
        Death::Dead => stores.pass_the_leases(),
        Death::Released if held => app.findings.push(Finding::HeldAfterDrop),
        Death::Released => {}
    }
    held
}

/// Notes death number `n` in the journal: which effects were started and are not kept in the
/// store (their results are not in what it holds), so may act once more.
async fn note_death(stores: &Stores, key: &str, journal: &Journal, n: usize) {
    let (record, text) = stores.settled_record(key).await;
    let ended = matches!(record, Some(Record::Ended(_)));
    let mut in_flight: Vec<String> = Vec::new();
    for note in journal.notes() {
        if let Note::Start { effect, .. } = note
            && !ended
            && !text.contains(&format!("{effect} done"))
            && !in_flight.contains(&effect)
        {
            in_flight.push(effect);
        }
    }
    journal.note(Note::Crash { n, in_flight });
}
