//! Hundreds of runs on several workers sharing one store, with and without workers dying in the
//! middle of their runs: every caller gets its run's real outcome — the answer, never "lost"
//! for a run whose end was stored — and no charge acts twice but one in flight at a death.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::{Either, select};
use hookchain::interrupt::{CheckpointError, Checkpointer, Clock, InMemoryCheckpointer, Record};
use hookchain::prelude::*;
use hookchain::{Content, Durability, ResumeFrom, Thread, ThreadId, Tool, ToolError, ToolSpec};
use serde_json::json;
use tokio::sync::watch;

use super::lagging::Lagging;
use super::support::{self, EffectTool, Effects};

/// An agent that pays once, then says it is done.
fn pay_then_done() -> ScriptedModel {
    ScriptedModel::from_rule(|request| {
        Ok(if support::tool_texts(&request.messages).is_empty() {
            ModelResponse::tool_calls([ToolCall::new("c1", "pay", json!({}))])
        } else {
            ModelResponse::text("Done.")
        })
    })
}

/// Hundreds of runs on three workers at once: every caller gets its run's real outcome. (The
/// lease is long enough that a machine busy with other work does not let it expire; the race
/// of a renewal with the run's last write is shown on the paused clock in `edges.rs`.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_whose_end_is_stored_is_never_reported_lost() {
    let store = Arc::new(InMemoryCheckpointer::new());
    let effects = Effects::memory();
    let workers: Vec<_> = (0..3)
        .map(|worker| {
            Arc::new(
                Agent::builder(pay_then_done())
                    .tool(EffectTool {
                        name: "pay",
                        effects: effects.clone(),
                        hang: false,
                    })
                    .checkpointer(Arc::clone(&store), Durability::EveryStep)
                    .worker(format!("worker-{worker}"))
                    .lease(Duration::from_secs(2))
                    .build()
                    .unwrap(),
            )
        })
        .collect();
    let runs: Vec<_> = (0..300)
        .map(|run| {
            let agent = Arc::clone(&workers[run % workers.len()]);
            tokio::spawn(async move {
                let mut thread = agent.thread();
                // A little work between the steps, so that renewals fall anywhere.
                tokio::time::sleep(Duration::from_millis((run % 7) as u64)).await;
                agent.run_in(&mut thread, "Pay").await
            })
        })
        .collect();
    let mut lost = Vec::new();
    for run in runs {
        match run.await.unwrap() {
            Ok(output) => assert_eq!(output.text().as_deref(), Some("Done.")),
            Err(error) => lost.push(error.to_string()),
        }
    }
    assert!(
        lost.is_empty(),
        "{} runs reported lost: {:?}",
        lost.len(),
        &lost[..lost.len().min(3)]
    );
    assert_eq!(effects.of("pay").len(), 300);
}

/// On tokio's paused clock: the schedule of deaths is the same at every run of the test.
#[tokio::test(start_paused = true)]
async fn runs_on_workers_that_die_each_end_once_with_their_answer() {
    let tally = run_with_deaths(Duration::from_millis(400)).await;
    eprintln!("paused clock: {tally:?}");
    // The deaths found runs of each kind: nothing kept yet, in progress, ended unreported.
    for kind in ["nothing", "in progress", "ended"] {
        assert!(tally.recovered.get(kind) > Some(&0), "{kind}: {tally:?}");
    }
}

/// On two threads and the real clock, where a renewal and a run's last write can race.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_on_workers_that_die_each_end_once_with_their_answer_on_threads() {
    let tally = run_with_deaths(Duration::from_secs(1)).await;
    eprintln!("two threads: {tally:?}");
    assert!(tally.cut > 0, "{tally:?}");
}

const RUNS: usize = 300;
const WORKERS: usize = 3;
/// How many times a worker dies (then comes back under a new name).
const DEATHS: usize = 20;

/// What happened over the runs, printed by the tests.
#[derive(Debug, Default)]
struct Tally {
    /// Workers killed.
    deaths: usize,
    /// Runs in flight at a death.
    cut: usize,
    /// Runs told their lease was lost while their end was not stored (then recovered).
    lost_unstored: usize,
    /// How the callers of cut runs found them: what `unseen_run` said first, by kind.
    recovered: BTreeMap<&'static str, usize>,
    /// Charges that acted again under their key (the first was in flight at a death).
    acted_again: usize,
}

/// `RUNS` runs of `pay` on `WORKERS` workers sharing an in-memory store, while a worker dies
/// every few milliseconds, `DEATHS` times: its runs are dropped where they stand, outside the
/// runtime — nothing is let go, as in a process that died — and it comes back under a new name.
/// Each caller recovers its run the documented way (`unseen_run`, then `resume_in` from the
/// store with no answers, or `run_in` again when the store kept nothing of it), on whichever
/// worker is alive, waiting while the dead worker's lease lasts.
///
/// Checked: each caller gets `Done.` and a thread that holds its charge once; a caller is told
/// its lease was lost only when its run's end was not stored; each run charged under one key,
/// again only when its first charge was in flight at a death.
async fn run_with_deaths(lease: Duration) -> Tally {
    let workers = Arc::new(Workers::new(lease));
    let tally = Arc::new(Mutex::new(Tally::default()));
    let callers: Vec<_> = (0..RUNS)
        .map(|run| {
            let (workers, tally) = (Arc::clone(&workers), Arc::clone(&tally));
            tokio::spawn(async move { call(&workers, &tally, run).await })
        })
        .collect();
    let killer = {
        let workers = Arc::clone(&workers);
        tokio::spawn(async move {
            for death in 0..DEATHS {
                let after = 7 + (death as u64 * 13) % 29;
                tokio::time::sleep(Duration::from_millis(after)).await;
                workers.kill(death % WORKERS);
            }
        })
    };
    for caller in callers {
        caller.await.expect("a caller panicked");
    }
    killer.await.unwrap();
    let mut tally = Arc::into_inner(tally).unwrap().into_inner().unwrap();
    tally.deaths = DEATHS;
    // Each run charged under one key of its own; a key charged again only after a worker that
    // died had charged it (in flight: acted, not yet answered).
    let ledger = workers.ledger.lock().unwrap();
    let mut by_key: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (key, worker) in ledger.iter() {
        by_key.entry(key).or_default().push(worker);
    }
    assert_eq!(by_key.len(), RUNS, "one key per run");
    let dead = workers.dead.lock().unwrap();
    for (key, charged_by) in &by_key {
        let (_, before) = charged_by.split_last().unwrap();
        for worker in before {
            assert!(
                dead.contains(&worker.to_string()),
                "{key} charged again after {worker} charged it, which did not die: {charged_by:?}"
            );
        }
        tally.acted_again += before.len();
    }
    tally
}

/// The workers, each alive under its latest name, and what their charges did.
struct Workers {
    store: Arc<Lagging>,
    lease: Duration,
    slots: Vec<Mutex<Worker>>,
    /// `(idempotency key, worker)` of each charge that acted.
    ledger: Arc<Mutex<Vec<(String, String)>>>,
    /// The names of the workers that died.
    dead: Mutex<Vec<String>>,
}

/// A worker under one name: its agent, and the signal of its death.
#[derive(Clone)]
struct Worker {
    agent: Arc<Agent<ScriptedModel>>,
    death: watch::Receiver<bool>,
    kill: Arc<watch::Sender<bool>>,
    lives: usize,
}

impl Workers {
    fn new(lease: Duration) -> Self {
        // The store judges leases by tokio's clock (paused in a test that pauses it), and
        // answers each write a moment after it landed: a worker can die in between, its run's
        // end stored and never reported.
        let store = Arc::new(Lagging {
            inner: InMemoryCheckpointer::new().with_clock(Clock::tokio()),
            renewal_sent: Duration::ZERO,
            end_answered: Duration::from_millis(3),
            writes_answered: Duration::from_millis(1),
        });
        let ledger = Arc::new(Mutex::new(Vec::new()));
        let workers = Workers {
            slots: Vec::new(),
            store,
            lease,
            ledger,
            dead: Mutex::new(Vec::new()),
        };
        let slots = (0..WORKERS)
            .map(|slot| Mutex::new(workers.worker(slot, 0)))
            .collect();
        Workers { slots, ..workers }
    }

    fn worker(&self, slot: usize, lives: usize) -> Worker {
        let name = format!("worker-{slot}.{lives}");
        let agent = Agent::builder(pay_then_done())
            .tool(Charge {
                worker: name.clone(),
                ledger: Arc::clone(&self.ledger),
            })
            .checkpointer(Arc::clone(&self.store), Durability::EveryStep)
            .worker(name)
            .lease(self.lease)
            .build()
            .unwrap();
        let (kill, death) = watch::channel(false);
        Worker {
            agent: Arc::new(agent),
            death,
            kill: Arc::new(kill),
            lives,
        }
    }

    /// The worker alive in `slot`.
    fn alive(&self, slot: usize) -> Worker {
        self.slots[slot % WORKERS].lock().unwrap().clone()
    }

    /// Kills the worker in `slot` (its runs die where they stand) and starts another there.
    fn kill(&self, slot: usize) {
        let mut worker = self.slots[slot].lock().unwrap();
        let _ = worker.kill.send(true);
        self.dead
            .lock()
            .unwrap()
            .push(format!("worker-{slot}.{}", worker.lives));
        *worker = self.worker(slot, worker.lives + 1);
    }
}

/// A caller's run future, which a death drops on another thread.
type Work<'a> = Pin<Box<dyn Future<Output = Result<hookchain::RunOutput, Error>> + Send + 'a>>;

/// One caller: runs `Pay` in a thread of its own, recovers it after each death of its worker,
/// and checks what it got.
async fn call(workers: &Workers, tally: &Mutex<Tally>, run: usize) {
    // The thread as the application keeps it before the run (a death leaves it so).
    let key = format!("order-{run}");
    let saved: Thread<()> = Thread::with_id(ThreadId::new(key.clone()));
    let mut thread = saved.clone();
    // Callers start over the first 300 ms, a millisecond apart, so that deaths fall anywhere
    // in their runs.
    tokio::time::sleep(Duration::from_millis(run as u64)).await;
    let mut attempt = 0;
    let mut fresh = true;
    // Whether the run was just cut (what the store kept of it is then counted).
    let mut cut = false;
    let output = loop {
        let worker = workers.alive(run + attempt);
        attempt += 1;
        let key = key.as_str();
        let work: Work<'_> = if fresh {
            Box::pin(worker.agent.run_in(&mut thread, "Pay"))
        } else {
            match worker.agent.unseen_run(&thread).await {
                Ok(Some(unseen)) => {
                    if std::mem::take(&mut cut) {
                        *tally
                            .lock()
                            .unwrap()
                            .recovered
                            .entry(kind(&unseen))
                            .or_default() += 1;
                    }
                    Box::pin(
                        worker
                            .agent
                            .resume_in(&mut thread, ResumeFrom::stored(key), []),
                    )
                }
                Ok(None) => {
                    if std::mem::take(&mut cut) {
                        *tally
                            .lock()
                            .unwrap()
                            .recovered
                            .entry("nothing")
                            .or_default() += 1;
                    }
                    Box::pin(worker.agent.run_in(&mut thread, "Pay"))
                }
                Err(error) => panic!("order-{run}: reading the store: {error}"),
            }
        };
        let mut death = worker.death.clone();
        let died = Box::pin(async move {
            let _ = death.wait_for(|dead| *dead).await;
        });
        let finished = match select(work, died).await {
            Either::Left((result, _)) => Some(result),
            Either::Right((_, work)) => {
                // Dropped outside the runtime: nothing lets the key go, as in a process that
                // died.
                std::thread::scope(|scope| {
                    scope.spawn(move || drop(work)).join().unwrap();
                });
                None
            }
        };
        match finished {
            Some(Ok(output)) => break output,
            Some(Err(Error::Checkpoint(error))) => match *error {
                // The dead worker's lease lasts: wait, then try again.
                CheckpointError::Claimed { .. } => {
                    fresh = false;
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                CheckpointError::LeaseLost { .. } => {
                    // Told lost: right only if its end was not stored.
                    let stored = workers.store.inner.get(key).await.unwrap();
                    assert!(
                        !matches!(stored, Some(Record::Ended(_))),
                        "order-{run} reported lost, its end stored"
                    );
                    tally.lock().unwrap().lost_unstored += 1;
                    thread = saved.clone();
                    fresh = false;
                }
                other => panic!("order-{run}: {other}"),
            },
            Some(Err(error)) => panic!("order-{run}: {error}"),
            None => {
                // The application still has the thread as it was before the run.
                tally.lock().unwrap().cut += 1;
                cut = true;
                thread = saved.clone();
                fresh = false;
            }
        }
    };
    assert_eq!(output.text().as_deref(), Some("Done."), "order-{run}");
    assert_eq!(
        support::tool_texts(thread.messages()),
        ["charged"],
        "order-{run}: the thread holds its charge once"
    );
}

fn kind(unseen: &hookchain::UnseenRun) -> &'static str {
    match unseen {
        hookchain::UnseenRun::InProgress(_) => "in progress",
        hookchain::UnseenRun::Paused(_) => "paused",
        hookchain::UnseenRun::Ended(_) => "ended",
        _ => "other",
    }
}

/// Charges: a moment before, the charge (recorded with its key and the worker), a moment
/// after — so that a death finds calls not started, in flight, and answered.
struct Charge {
    worker: String,
    ledger: Arc<Mutex<Vec<(String, String)>>>,
}

impl Tool for Charge {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new("pay", "Charges.", json!({ "type": "object" }))
    }

    async fn call(
        &self,
        cx: ToolContext<'_>,
        _arguments: serde_json::Value,
    ) -> Result<Content, ToolError> {
        tokio::time::sleep(Duration::from_millis(3)).await;
        self.ledger
            .lock()
            .unwrap()
            .push((cx.idempotency_key().to_owned(), self.worker.clone()));
        tokio::time::sleep(Duration::from_millis(3)).await;
        Ok("charged".into())
    }
}
