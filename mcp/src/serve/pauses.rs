//! Where a served call that waits for an answer is kept between the input-required result
//! that asks and the call that answers: [`ServedPauses`].

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use hookchain_core::PausedCall;
use hookchain_core::interrupt::{
    CheckpointError, Checkpointer, Claim, DynCheckpointer, Lease, Tombstone,
};
use rmcp::model::{RequestStateCodec, RequestStateError, SealOptions};
use serde::{Deserialize, Serialize};

use super::asking::Asking;

/// How long a served call waits for its answer, by default.
pub const DEFAULT_ANSWER_WITHIN: Duration = Duration::from_secs(60 * 60);

/// How long a served call's resume holds its claim unless renewed (it is renewed while the
/// call runs): how long a retry waits when the replica answering it died.
const LEASE: Duration = Duration::from_secs(30);

/// How long the mark of an answered call stays after its answer is late: a replayed answer
/// within the state's life is refused, and after it the state itself is.
const RETENTION_MARGIN: Duration = Duration::from_secs(60 * 60);

/// What the text of the MAC covers besides the state: whose call it is. A state is good for
/// the principal it was issued to and no one else.
const PURPOSE: &str = "hookchain-mcp served pause 1\n";

/// Where an [`McpToolServer`](super::McpToolServer) keeps the calls that wait for an answer,
/// so that a client of MCP 2026-07-28 can give it on any replica, after a restart
/// ([`McpToolServer::pauses`](super::McpToolServer::pauses)).
///
/// A served call that an approval gates (a
/// [`HumanInTheLoop`](hookchain_core::builtin::HumanInTheLoop)), or whose tool asks the user,
/// is answered with an **input-required result**: an elicitation form for the client's user,
/// and a `requestState` — the paused call, sealed with `codec` (HMAC-SHA256, rmcp's
/// [`RequestStateCodec`]: give every replica the same keys) and bound to the principal it was
/// issued to. The client calls again with the user's answer and the state; the replica that
/// gets it opens the state, claims the call in `store` (a
/// [`Checkpointer`]: the key `mcp-call:<run id>:<round>`), runs it from where it asked, and
/// leaves a tombstone there. So the approved call runs **once**: a replayed or duplicated
/// answer finds the tombstone (or the claim of the replica running it) and is refused; a
/// state that was changed, is another principal's, or is older than
/// [`answer_within`](Self::answer_within) is refused too, and nothing runs. A replica that
/// dies while it runs the call lets its claim lapse (30 s); the client's retry then runs the
/// call again with the same [`idempotency_key`](hookchain_core::ToolContext::idempotency_key),
/// so that the tool can tell.
///
/// The state is readable by the client (it is signed, not encrypted): it holds the call, as
/// the client made it, and what was asked of the client's user — nothing of the run context.
///
/// ```
/// use hookchain::interrupt::InMemoryCheckpointer;
/// use hookchain_mcp::{RequestStateCodec, ServedPauses};
///
/// // The same keys on every replica (from your secrets), and a store they share.
/// let codec = RequestStateCodec::new_with_keyring("2026-12", [("2026-12", [7u8; 32])])?;
/// let pauses = ServedPauses::new(InMemoryCheckpointer::new(), codec)
///     .answer_within(std::time::Duration::from_secs(15 * 60));
/// # let _ = pauses;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct ServedPauses {
    store: Arc<dyn DynCheckpointer>,
    codec: RequestStateCodec,
    answer_within: Duration,
    worker: String,
}

impl fmt::Debug for ServedPauses {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServedPauses")
            .field("answer_within", &self.answer_within)
            .field("worker", &self.worker)
            .finish_non_exhaustive()
    }
}

impl ServedPauses {
    /// Calls kept in `store`, their states sealed with `codec`, answered within
    /// [`DEFAULT_ANSWER_WITHIN`].
    pub fn new(store: impl Checkpointer + 'static, codec: RequestStateCodec) -> Self {
        ServedPauses {
            store: Arc::new(store),
            codec,
            answer_within: DEFAULT_ANSWER_WITHIN,
            worker: format!("mcp-{}", std::process::id()),
        }
    }

    /// How long a call waits for its answer: a state older than this is refused.
    #[must_use]
    pub fn answer_within(mut self, within: Duration) -> Self {
        self.answer_within = within;
        self
    }

    /// The name this replica claims calls under (default `mcp-<pid>`): what the store says
    /// of who runs one.
    #[must_use]
    pub fn worker(mut self, name: impl Into<String>) -> Self {
        self.worker = name.into();
        self
    }

    /// The `requestState` of `paused`, asked as `asking`, for `principal`.
    pub(super) fn seal(
        &self,
        paused: &PausedCall,
        asking: Asking,
        round: u32,
        principal: Option<&str>,
    ) -> Result<String, RequestStateError> {
        let state = SealedState {
            round,
            asking,
            paused: paused.clone(),
        };
        let bound = bound_to(principal);
        let options = SealOptions::new()
            .associated_data(bound.as_bytes())
            .ttl(self.answer_within);
        self.codec.seal_json_with(&state, &options)
    }

    /// The paused call in `state`, if this server sealed it for `principal` and it is not
    /// too old.
    pub(super) fn open(
        &self,
        state: &str,
        principal: Option<&str>,
    ) -> Result<SealedState, RequestStateError> {
        self.codec
            .open_json_with(state, bound_to(principal).as_bytes())
    }

    /// Claims the call of `state` for its resume.
    pub(super) async fn take(&self, state: &SealedState) -> Result<Taken, CheckpointError> {
        let key = state.key();
        match self.store.claim(&key, &self.worker, LEASE).await? {
            Claim::Granted {
                lease,
                record: Ok(None),
            } => Ok(Taken::Granted(lease)),
            // A tombstone: answered already (or what the key holds does not decode: not ours
            // to run).
            Claim::Granted { lease, .. } => {
                self.store.release(&key, &lease).await?;
                Ok(Taken::Answered)
            }
            Claim::Busy { .. } => Ok(Taken::Busy),
        }
    }

    /// Keeps the claim of `state`'s call while it runs.
    pub(super) async fn renew(
        &self,
        state: &SealedState,
        lease: &Lease,
    ) -> Result<SystemTime, CheckpointError> {
        self.store.renew(&state.key(), lease).await
    }

    /// Marks `state`'s call answered: a tombstone kept past the state's life.
    pub(super) async fn answered(
        &self,
        state: &SealedState,
        lease: &Lease,
        how: &str,
    ) -> Result<(), CheckpointError> {
        let tombstone = Tombstone::new(
            state.paused.run_id(),
            state.key(),
            how,
            &self.worker,
            SystemTime::now(),
            self.answer_within + RETENTION_MARGIN,
        );
        self.store.end(&state.key(), lease, Some(&tombstone)).await
    }

    /// Lets `state`'s call go unanswered (its resume failed before it ran), for a retry.
    pub(super) async fn let_go(&self, state: &SealedState, lease: &Lease) {
        if let Err(error) = self.store.release(&state.key(), lease).await {
            tracing::warn!(%error, "a served call's claim was not released: it lapses");
        }
    }

    /// How often a running call's claim is renewed.
    pub(super) fn renew_every() -> Duration {
        LEASE / 3
    }
}

/// What a served call's resume found in the store.
pub(super) enum Taken {
    /// The call is this replica's to run.
    Granted(Lease),
    /// It was answered already: a replay.
    Answered,
    /// Another replica runs it now: a duplicate.
    Busy,
}

/// A served call's `requestState`, opened.
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct SealedState {
    /// Which of the call's pauses this is (from 1).
    pub(super) round: u32,
    /// How it was asked.
    pub(super) asking: Asking,
    /// The call.
    pub(super) paused: PausedCall,
}

impl SealedState {
    /// The key of the call's round in the store.
    fn key(&self) -> String {
        format!("mcp-call:{}:{}", self.paused.run_id(), self.round)
    }
}

/// What a state is bound to: this purpose and the principal (none: calls over stdio, or an
/// anonymous server's).
fn bound_to(principal: Option<&str>) -> String {
    match principal {
        Some(id) => format!("{PURPOSE}principal {id}"),
        None => format!("{PURPOSE}no principal"),
    }
}
