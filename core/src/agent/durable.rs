//! Durable runs: what an agent writes to its [`Checkpointer`], and when.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use crate::context::{Context, Stepping};
use crate::error::Error;
use crate::interrupt::Checkpoint;
use crate::interrupt::{
    CheckpointError, Checkpointer, Claim, DynCheckpointer, Lease, Record, ResumeError, Tombstone,
};
use crate::model::Usage;
use crate::pause::{Held, LastState};

use super::leased::Renewing;

/// How much of its runs an agent keeps in its checkpointer
/// ([`AgentBuilder::checkpointer`](super::AgentBuilder::checkpointer)).
///
/// A run is kept under its thread's id (a run in a [`Thread`](super::Thread)) or else its run
/// id, leased by the agent's [`worker`](super::AgentBuilder::worker) while it runs (see
/// *Leases* on [`Checkpointer`]). When a run that stored a checkpoint ends, a tombstone stays
/// under its key for the [retention](super::AgentBuilder::tombstone_retention), so a replayed
/// resume is refused; when it fails, its lease is released (its last checkpoint kept, for a
/// worker to resume it); when its future is dropped, its lease is released too (by a task, with
/// the feature `tokio`; else it expires).
///
/// # What each mode promises
///
/// - With `Pauses` and `EveryStep`, an approved tool call runs **at most once**, whoever
///   retries, crashes or replays: a resume claims the key, resumes only the checkpoint the store
///   holds, and a resumed run is kept after every completed call, so a resume retried after
///   its client went away, its future was dropped or its process was killed runs no completed
///   call again. A call that was in flight when its worker died runs again with the same
///   [`idempotency_key`](crate::ToolContext::idempotency_key), so that the tool can tell.
/// - With `Never`, nothing is stored: a paused run's checkpoint is in its output only, and a
///   checkpoint resumed twice runs twice (a [`Thread`](super::Thread) refuses a checkpoint it no
///   longer waits on; outside a thread, only the tool's idempotency key can tell).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Durability {
    /// Nothing is written: a paused run's checkpoint is in its output only, and yours to keep.
    Never,
    /// A paused run's checkpoint is written (its key free, for whoever has the answers to
    /// claim), and still in the output; a run resumed from the store is kept after every step
    /// (as `EveryStep`), so that its resume is never run twice.
    #[default]
    Pauses,
    /// Also a checkpoint after every step of a run in progress: before each model call, when
    /// the model's answer is kept, and as each call of a step with several completes. A run whose
    /// process dies resumes from there ([`Agent::resume`](super::Agent::resume) with
    /// [`ResumeFrom::stored`](super::ResumeFrom::stored) and no answers) in another, once its
    /// lease expired: no completed tool call runs again, and a call that was in flight runs
    /// again with the same [`idempotency_key`](crate::ToolContext::idempotency_key), so that the
    /// tool can tell.
    EveryStep,
}

/// How long a run's lease lasts unless renewed, by default.
pub(super) const DEFAULT_LEASE: Duration = Duration::from_secs(30);

/// How long a tombstone is kept, by default.
pub(super) const DEFAULT_RETENTION: Duration = Duration::from_secs(24 * 60 * 60);

/// An agent's checkpointer and its durability (`Pauses` or `EveryStep`: an agent that keeps
/// nothing has none).
pub(crate) struct Durable {
    store: Arc<dyn DynCheckpointer>,
    mode: Durability,
    /// The keys of dropped runs being let go, in tasks of their own.
    releasing: Arc<Releasing>,
    pub(super) lease: Duration,
    pub(super) retention: Duration,
}

impl fmt::Debug for Durable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Durable")
            .field("mode", &self.mode)
            .field("lease", &self.lease)
            .field("retention", &self.retention)
            .finish_non_exhaustive()
    }
}

impl Durable {
    /// The store the run in `cx` is kept in, while it holds its key.
    pub(crate) fn of_run(cx: &Context) -> Option<&Durable> {
        cx.durable.as_ref()?.get()
    }

    /// [`of_run`](Self::of_run), shared.
    pub(crate) fn shared_of_run(cx: &Context) -> Option<Arc<Durable>> {
        cx.durable.as_ref()?.shared()
    }

    /// The checkpointer `store` kept as `mode` says; `None` for [`Durability::Never`].
    pub(super) fn new(store: impl Checkpointer + 'static, mode: Durability) -> Option<Self> {
        (mode != Durability::Never).then(|| Durable {
            store: Arc::new(store),
            mode,
            releasing: Arc::default(),
            lease: DEFAULT_LEASE,
            retention: DEFAULT_RETENTION,
        })
    }

    /// Whether the run in `cx` is kept after every step (one that goes a step at a time is, and
    /// one whose caller asked: `RunContext::with_steps_kept`).
    pub(super) fn keeps_steps(&self, cx: &Context) -> bool {
        self.mode == Durability::EveryStep
            || cx.stepping != Stepping::Off
            || cx.run_context.keeps_steps()
            || cx
                .held
                .as_ref()
                .is_some_and(|held| held.resumed_from.is_some())
    }

    /// Claims `key` for `worker` — in a task of its own when there is a tokio runtime, so that
    /// a caller dropped while the claim is in flight (its run's future dropped: a client gone,
    /// a timeout) does not leave the key held until the lease expires: the claim lands all the
    /// same (a statement sent runs), and the task lets the key go once it is granted.
    /// [`settled`](Self::settled) waits for such claims too.
    async fn claim_key(&self, key: &str, worker: &str) -> Result<Claim, CheckpointError> {
        #[cfg(feature = "tokio")]
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let store = Arc::clone(&self.store);
            let (owned_key, owned_worker, ttl) = (key.to_owned(), worker.to_owned(), self.lease);
            let pending = Releasing::start(&self.releasing);
            let (answer, claimed) = tokio::sync::oneshot::channel();
            runtime.spawn(async move {
                let _pending = pending;
                let claim = DynCheckpointer::dyn_claim(&*store, &owned_key, &owned_worker, ttl).await;
                if let Err(Ok(Claim::Granted { lease, .. })) = answer.send(claim) {
                    // The claimer is gone: nothing runs under this lease.
                    if let Err(error) = DynCheckpointer::dyn_release(&*store, &owned_key, &lease).await {
                        tracing::warn!(key = %owned_key, error = %crate::error::Report(&error), "a dropped run's claim could not be let go (its lease will expire)");
                    }
                }
            });
            let mut waiting = ClaimWait {
                answer: claimed,
                store: Arc::clone(&self.store),
                releasing: Arc::clone(&self.releasing),
                key: key.to_owned(),
            };
            return (&mut waiting.answer).await.unwrap_or_else(|_| {
                Err(CheckpointError::Store {
                    what: "claim",
                    source: "the claim's task stopped (its runtime is shutting down)".into(),
                })
            });
        }
        DynCheckpointer::dyn_claim(&*self.store, key, worker, self.lease).await
    }

    /// A new run takes `key` for `worker`: refused while another run holds it. What the key
    /// held (a thread's earlier run's tombstone or pause) is replaced by the run's first write,
    /// and left as it was by a run that writes nothing.
    pub(super) async fn begin(&self, key: &str, worker: &str) -> Result<Held, Error> {
        match self.claim_key(key, worker).await? {
            // What does not read is something too: never removed by a run that wrote nothing.
            Claim::Granted { lease, record } => {
                Ok(Held::new(key, lease, !matches!(record, Ok(None))))
            }
            Claim::Busy { holder, .. } => Err(busy(key, holder)),
        }
    }

    /// A resume takes `key` for `worker` and reads the checkpoint stored there: `given` (the
    /// caller's checkpoint's id), if any, must be that one. Refused (the key let go again)
    /// when another run holds the key, when its run ended, when nothing is stored, or when
    /// the store holds another checkpoint.
    pub(super) async fn claim(
        &self,
        key: &str,
        worker: &str,
        given: Option<&str>,
    ) -> Result<(Held, Checkpoint), Error> {
        let (held, stored) = self.claim_record(key, worker, given).await?;
        let refused: Error = match stored {
            Some(stored) => match given {
                Some(given) if given != stored.id() => ResumeError::Superseded {
                    checkpoint: given.to_owned(),
                    stored: stored.id().to_owned(),
                }
                .into(),
                _ => return Ok((held, stored)),
            },
            None => ResumeError::NotStored {
                key: key.to_owned(),
            }
            .into(),
        };
        self.release(key, &held.lease).await;
        Err(refused)
    }

    /// A run that goes a step at a time takes `key` for `worker`: with the checkpoint stored
    /// there to go on from, or with nothing (a new run). Refused (the key let go again) when
    /// another run holds the key or when its run ended — a retried first step never starts
    /// the run over.
    pub(super) async fn claim_for_step(
        &self,
        key: &str,
        worker: &str,
    ) -> Result<(Held, Option<Checkpoint>), Error> {
        self.claim_record(key, worker, None).await
    }

    /// Takes `key` for `worker`, with the checkpoint stored there, if any. Refused (the key let
    /// go again) when another run holds the key, when its run ended (`given`: the checkpoint
    /// the caller asked for, named in the refusal), or when the store fails.
    async fn claim_record(
        &self,
        key: &str,
        worker: &str,
        given: Option<&str>,
    ) -> Result<(Held, Option<Checkpoint>), Error> {
        let (lease, record) = match self.claim_key(key, worker).await? {
            Claim::Granted { lease, record } => (lease, record),
            Claim::Busy { holder, .. } => return Err(busy(key, holder)),
        };
        let mut held = Held::new(key, lease, !matches!(record, Ok(None)));
        let refused: Error = match record {
            Ok(None) => return Ok((held, None)),
            Ok(Some(Record::Checkpoint(stored))) => {
                held.resumed_from = Some(stored.id().to_owned());
                return Ok((held, Some(*stored)));
            }
            Ok(Some(Record::Ended(tombstone))) => ResumeError::Ended {
                checkpoint: given.map(str::to_owned),
                tombstone: Box::new(tombstone),
            }
            .into(),
            Err(error) => error.into(),
        };
        self.release(key, &held.lease).await;
        Err(refused)
    }

    /// Gives up the pause `checkpoint` stored under `key`: claims the key for `worker` and
    /// ends it with a tombstone `abandoned`. Refused (the key let go again) when another run
    /// holds the key, or when the pause was answered and its run went on (the store holds a
    /// later checkpoint of the run, or its end). A key that holds nothing is let go as it was:
    /// there is nothing left to resume.
    pub(super) async fn abandon(
        &self,
        key: &str,
        worker: &str,
        checkpoint: &str,
    ) -> Result<(), Error> {
        let (lease, record) = match self.claim_key(key, worker).await? {
            Claim::Granted { lease, record } => (lease, record),
            Claim::Busy { holder, .. } => return Err(busy(key, holder)),
        };
        let stored = match record {
            Ok(Some(Record::Checkpoint(stored))) => stored,
            // The pause was answered and its run went on to its end (the thread was not told):
            // its calls ran, and giving the pause up would record them as not run.
            Ok(Some(Record::Ended(tombstone))) => {
                self.release(key, &lease).await;
                return Err(ResumeError::Ended {
                    checkpoint: Some(checkpoint.to_owned()),
                    tombstone: Box::new(tombstone),
                }
                .into());
            }
            // Nothing, or what does not read: nothing resumes from it.
            Ok(None) | Err(_) => {
                self.release(key, &lease).await;
                return Ok(());
            }
        };
        if stored.id() != checkpoint {
            self.release(key, &lease).await;
            return Err(ResumeError::Superseded {
                checkpoint: checkpoint.to_owned(),
                stored: stored.id().to_owned(),
            }
            .into());
        }
        let tombstone = Tombstone::new(
            stored.run_id(),
            checkpoint,
            "abandoned",
            worker,
            SystemTime::now(),
            self.retention,
        );
        DynCheckpointer::dyn_end(&*self.store, key, &lease, Some(&tombstone)).await?;
        Ok(())
    }

    /// What `key` holds, read without claiming it.
    pub(super) async fn stored(&self, key: &str) -> Result<Option<Record>, CheckpointError> {
        DynCheckpointer::dyn_get(&*self.store, key).await
    }

    /// Writes `checkpoint` (a step, or a pause) under the run's key, with its lease.
    pub(super) async fn put(
        &self,
        held: &Held,
        checkpoint: &Checkpoint,
    ) -> Result<(), CheckpointError> {
        DynCheckpointer::dyn_put(&*self.store, &held.key, checkpoint, &held.lease).await
    }

    /// The run ended `how` at `now`: a tombstone if it ever stored a checkpoint (a replay of
    /// one is refused while the tombstone is kept), keeping `last` (the run's history and
    /// state at its end), else the key goes.
    pub(super) async fn ended(
        &self,
        held: &Held,
        cx: &Context,
        how: &str,
        stored: bool,
        last: Option<Checkpoint>,
    ) -> Result<(), CheckpointError> {
        let tombstone = stored.then(|| {
            let from = held.resumed_from.clone().unwrap_or_default();
            let tombstone = Tombstone::new(
                &cx.run_id,
                from,
                how,
                held.lease.worker(),
                SystemTime::now(),
                self.retention,
            );
            match last {
                Some(checkpoint) => tombstone.keeping(LastState {
                    checkpoint,
                    stop_reason: cx.stop_reason,
                    charged_from: cx
                        .ledger
                        .as_ref()
                        .map_or(Usage::default(), |ledger| ledger.run_before),
                }),
                None => tombstone,
            }
        });
        DynCheckpointer::dyn_end(&*self.store, &held.key, &held.lease, tombstone.as_ref()).await
    }

    /// The run failed, or was refused: its key is released, what it holds kept for a worker
    /// to resume.
    pub(super) async fn release(&self, key: &str, lease: &Lease) {
        if let Err(error) = DynCheckpointer::dyn_release(&*self.store, key, lease).await {
            tracing::warn!(
                key,
                error = %crate::error::Report(&error),
                "the run's key could not be released (its lease will expire)"
            );
        }
    }

    /// A guard that releases `held`'s lease if the run's future is dropped before it ends.
    pub(super) fn guard(&self, held: &Held) -> ReleaseOnDrop {
        ReleaseOnDrop {
            store: Some(Arc::clone(&self.store)),
            releasing: Arc::clone(&self.releasing),
            key: held.key.clone(),
            lease: held.lease.clone(),
        }
    }

    /// Waits until no dropped run's key is being let go.
    pub(super) async fn settled(&self) {
        self.releasing.idle().await;
    }

    /// Renews `held`'s lease now (a tool call about to start on a lease whose renewals are
    /// late): whether the store did.
    pub(super) async fn renew_now(&self, held: &Held) -> bool {
        match DynCheckpointer::dyn_renew(&*self.store, &held.key, &held.lease).await {
            Ok(_) => {
                #[cfg(feature = "tokio")]
                held.watch.renewed();
                true
            }
            Err(error) => {
                tracing::warn!(key = held.key, error = %crate::error::Report(&error), "the run's lease could not be renewed before a tool call");
                false
            }
        }
    }

    /// Renews `held`'s lease while the run goes on, **in a task of its own**: a tool whose body
    /// blocks the run's thread (a synchronous SDK, CPU work) does not stop the renewals, so no
    /// other worker takes the key while the call goes on (on a runtime of several threads). The
    /// future completes only when the lease is lost (another worker claimed the key, or it
    /// expired before a renewal got through), with the error that ends the run; dropping it
    /// stops the renewals. Each renewal tells `held`'s watch, which keeps a tool call from
    /// starting on a lease about to run out. Without a tokio runtime (or the feature `tokio`)
    /// there is no timer: writes renew.
    pub(super) fn keep_renewed(&self, held: &Held) -> Renewing<'static> {
        #[cfg(feature = "tokio")]
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let (lost, heard) = tokio::sync::oneshot::channel();
            let renewals = renew(
                Arc::clone(&self.store),
                held.key.clone(),
                held.lease.clone(),
                Arc::clone(&held.watch),
                self.lease,
            );
            let task = runtime.spawn(async move {
                let _ = lost.send(renewals.await);
            });
            held.watch.watched();
            return Box::pin(Renewal { heard, task });
        }
        // Outside a tokio runtime (or without the feature): no timer, writes renew.
        let _ = held;
        Box::pin(std::future::pending())
    }
}

/// Renews `lease` on `key` every third of `ttl` until it is lost: the error that ends the run.
#[cfg(feature = "tokio")]
async fn renew(
    store: Arc<dyn DynCheckpointer>,
    key: String,
    mut lease: Lease,
    watch: Arc<crate::pause::LeaseWatch>,
    ttl: Duration,
) -> Error {
    let every = (ttl / 3).max(Duration::from_millis(10));
    loop {
        tokio::time::sleep(every).await;
        if watch.settling() {
            break;
        }
        if watch.expired() {
            tracing::warn!(
                key,
                "the run's lease ran out before it was renewed: it stops"
            );
            return CheckpointError::LeaseLost { key }.into();
        }
        let renewed = DynCheckpointer::dyn_renew(&*store, &key, &lease).await;
        if watch.settling() {
            // The run wrote its end meanwhile (which ends or frees the lease): whatever the
            // store said of this renewal, the run is not lost.
            break;
        }
        match renewed {
            Ok(expires_at) => {
                lease.renewed(expires_at);
                watch.renewed();
            }
            Err(error @ (CheckpointError::Claimed { .. } | CheckpointError::LeaseLost { .. })) => {
                return error.into();
            }
            Err(error) if SystemTime::now() >= lease.expires_at() => {
                tracing::warn!(key, error = %crate::error::Report(&error), "the run's lease expired: it stops");
                return CheckpointError::LeaseLost { key }.into();
            }
            Err(error) => {
                tracing::warn!(key, error = %crate::error::Report(&error), "the run's lease could not be renewed; trying again");
            }
        }
    }
    // Settling: the run's own end decides; nothing is heard from here.
    std::future::pending().await
}

/// The renewals of a run's lease, going in a task of their own: completes with the error that
/// ends the run when the lease is lost; dropped (the run settled, or was dropped), stops them.
#[cfg(feature = "tokio")]
struct Renewal {
    heard: tokio::sync::oneshot::Receiver<Error>,
    task: tokio::task::JoinHandle<()>,
}

#[cfg(feature = "tokio")]
impl std::future::Future for Renewal {
    type Output = Error;

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Error> {
        match std::pin::Pin::new(&mut self.heard).poll(cx) {
            std::task::Poll::Ready(Ok(lost)) => std::task::Poll::Ready(lost),
            // The task is gone without a word (its runtime shutting down): the run goes on as
            // if unrenewed — its writes are still fenced.
            std::task::Poll::Ready(Err(_)) | std::task::Poll::Pending => std::task::Poll::Pending,
        }
    }
}

#[cfg(feature = "tokio")]
impl Drop for Renewal {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A claim in flight in a task of its own ([`Durable::claim_key`]), from the side of the run
/// that waits for it: dropped with the claim granted and not taken (the run's future dropped
/// while the answer waited in the channel), it lets the key go. (Dropped before the answer
/// came, the task lets it go: its answer finds no one.)
#[cfg(feature = "tokio")]
struct ClaimWait {
    answer: tokio::sync::oneshot::Receiver<Result<Claim, CheckpointError>>,
    store: Arc<dyn DynCheckpointer>,
    releasing: Arc<Releasing>,
    key: String,
}

#[cfg(feature = "tokio")]
impl Drop for ClaimWait {
    fn drop(&mut self) {
        if let Ok(Ok(Claim::Granted { lease, .. })) = self.answer.try_recv() {
            drop(ReleaseOnDrop {
                store: Some(Arc::clone(&self.store)),
                releasing: Arc::clone(&self.releasing),
                key: std::mem::take(&mut self.key),
                lease,
            });
        }
    }
}

/// Releases a run's lease when dropped armed: the run's future was dropped (its client went
/// away, it was cancelled) before it settled. The release runs in a task of the current tokio
/// runtime; without one (or without the feature `tokio`), the lease expires.
pub(super) struct ReleaseOnDrop {
    store: Option<Arc<dyn DynCheckpointer>>,
    #[cfg_attr(not(feature = "tokio"), allow(dead_code))]
    releasing: Arc<Releasing>,
    key: String,
    #[cfg_attr(not(feature = "tokio"), allow(dead_code))]
    lease: Lease,
}

impl ReleaseOnDrop {
    /// The run settled: nothing to release on drop.
    pub(super) fn disarm(mut self) {
        self.store = None;
    }
}

impl Drop for ReleaseOnDrop {
    fn drop(&mut self) {
        let Some(store) = self.store.take() else {
            return;
        };
        #[cfg(feature = "tokio")]
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let (key, lease) = (std::mem::take(&mut self.key), self.lease.clone());
            let pending = Releasing::start(&self.releasing);
            runtime.spawn(async move {
                let _pending = pending;
                if let Err(error) = DynCheckpointer::dyn_release(&*store, &key, &lease).await {
                    tracing::warn!(key = %key, error = %crate::error::Report(&error), "a dropped run's key could not be released (its lease will expire)");
                }
            });
            return;
        }
        tracing::debug!(key = self.key, "a dropped run's lease is left to expire");
        drop(store);
    }
}

/// The releases of dropped runs' keys still going, so that a process can wait for them before
/// it exits ([`Agent::settle`](super::Agent::settle)) instead of leaving the keys held until
/// their leases expire.
#[derive(Debug, Default)]
pub(super) struct Releasing {
    #[cfg(feature = "tokio")]
    going: std::sync::atomic::AtomicUsize,
    #[cfg(feature = "tokio")]
    done: tokio::sync::Notify,
}

impl Releasing {
    /// One more release going, until the returned guard drops (the release done, failed, or
    /// its task cancelled with its runtime).
    #[cfg(feature = "tokio")]
    fn start(this: &Arc<Self>) -> ReleaseGoing {
        this.going.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        ReleaseGoing(Arc::clone(this))
    }

    /// Completes when no release is going.
    async fn idle(&self) {
        #[cfg(feature = "tokio")]
        loop {
            let done = self.done.notified();
            let mut done = std::pin::pin!(done);
            // Registered before the count is read, so that a release ending in between wakes it.
            done.as_mut().enable();
            if self.going.load(std::sync::atomic::Ordering::Acquire) == 0 {
                return;
            }
            done.await;
        }
    }
}

/// A release going (see [`Releasing::start`]).
#[cfg(feature = "tokio")]
struct ReleaseGoing(Arc<Releasing>);

#[cfg(feature = "tokio")]
impl Drop for ReleaseGoing {
    fn drop(&mut self) {
        if self
            .0
            .going
            .fetch_sub(1, std::sync::atomic::Ordering::AcqRel)
            == 1
        {
            self.0.done.notify_waiters();
        }
    }
}

/// The error of a key another run holds.
fn busy(key: &str, holder: String) -> Error {
    CheckpointError::Claimed {
        key: key.to_owned(),
        by: holder,
    }
    .into()
}

/// The key a run is kept under: its thread's id, or its own.
pub(super) fn key(cx: &Context) -> &str {
    crate::interrupt::run_key(cx.thread_id.as_ref(), &cx.run_id)
}
