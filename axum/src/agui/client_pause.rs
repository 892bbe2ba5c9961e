//! What a client sees of a pause, and how its answers find their interrupts again
//! ([`ClientPause`]): the interrupts a person answers — a sub-agent's pause opened to its own,
//! at any depth — under ids that are opaque and unguessable, and never a checkpoint.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use hookchain_core::interrupt::{Interrupt, InterruptId};
use hookchain_core::subagent::SubAgentPause;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::events::AguiInterrupt;

/// How deep a pause is opened: a sub-agent's sub-agent's … past it, an interrupt is shown as
/// it is (the agent limits its depth far below this; the bound is for a hand-made payload).
const MAX_DEPTH: usize = 16;

/// What a client is shown of one interrupt (its `metadata`), from the interrupt.
pub type InterruptMetadata = Arc<dyn Fn(&Interrupt) -> Value + Send + Sync>;

/// The client's view of a run's pauses.
///
/// - **What is shown.** The interrupts a person answers: a sub-agent's pause (whose payload is
///   the child's whole checkpoint — its history, its state, what its run saved) is opened, and
///   its own interrupts shown instead, recursively; the checkpoint stays on the server. Each is
///   shown with its raiser (`reason`), the tool call it concerns and `metadata`, which is
///   `{"payload": <the interrupt's payload>}` (an approval's calls, a question) unless
///   [`with_metadata`](Self::with_metadata) says otherwise.
/// - **Ids.** An interrupt's id as the agent makes it names the step, the hook, the middleware
///   and the call; a client sees instead a hash of the interrupt's path (its sub-agents' and
///   its own ids) keyed by the view's *salt*: 32 hex digits that tell nothing and that no one
///   can guess without the salt. [`AgentServer`](crate::AgentServer) draws a random salt per
///   conversation turn and keeps it with the run, on the server.
/// - **Answers** come back under those ids; [`answers`](Self::answers) finds each interrupt
///   and nests the answers of a sub-agent's interrupts into the answer of its parent's, as
///   [`SubAgentPause::answer`] does.
#[derive(Clone)]
pub struct ClientPause {
    salt: String,
    metadata: Option<InterruptMetadata>,
}

/// An answer named an interrupt the pause does not have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no interrupt of the pause has the id `{0}`")]
pub struct UnknownInterrupt(pub String);

/// An interrupt a person answers, with the ids of the interrupts it is nested in.
struct Leaf {
    path: Vec<InterruptId>,
    interrupt: Interrupt,
}

impl ClientPause {
    /// The view whose ids are keyed by `salt` (keep it on the server: with it, ids can be
    /// told apart; without, they cannot be guessed).
    pub fn new(salt: impl Into<String>) -> Self {
        ClientPause {
            salt: salt.into(),
            metadata: None,
        }
    }

    /// The view, showing `metadata(interrupt)` as each interrupt's metadata instead of its
    /// payload (to show less of it, or in a client's own form).
    #[must_use]
    pub fn with_metadata(mut self, metadata: InterruptMetadata) -> Self {
        self.metadata = Some(metadata);
        self
    }

    /// The interrupts of `interrupts` (a paused run's) a client is shown, in order.
    pub fn interrupts(&self, interrupts: &[Interrupt]) -> Vec<AguiInterrupt> {
        leaves(interrupts)
            .into_iter()
            .map(|leaf| AguiInterrupt {
                id: self.client_id(&leaf.path),
                reason: leaf.interrupt.source.clone(),
                tool_call_id: leaf.interrupt.tool_call_id.clone(),
                metadata: match &self.metadata {
                    Some(metadata) => metadata(&leaf.interrupt),
                    None => json!({ "payload": leaf.interrupt.payload }),
                },
            })
            .collect()
    }

    /// The answers to `interrupts` (a paused run's) that `answers` give by the ids the client
    /// was shown, as the agent takes them: by its own ids, a sub-agent's nested into its
    /// parent's. An interrupt left unanswered pauses the run again.
    pub fn answers(
        &self,
        interrupts: &[Interrupt],
        answers: impl IntoIterator<Item = (String, Value)>,
    ) -> Result<Vec<(InterruptId, Value)>, UnknownInterrupt> {
        let by_client_id: HashMap<String, Vec<InterruptId>> = leaves(interrupts)
            .into_iter()
            .map(|leaf| (self.client_id(&leaf.path), leaf.path))
            .collect();
        let mut answered = HashMap::new();
        for (id, answer) in answers {
            let path = by_client_id.get(&id).ok_or(UnknownInterrupt(id))?;
            answered.insert(path.clone(), answer);
        }
        Ok(nest(interrupts, &answered, &mut Vec::new()))
    }

    /// The id a client knows the interrupt at `path` by.
    fn client_id(&self, path: &[InterruptId]) -> String {
        let mut hash = Sha256::new();
        hash.update(self.salt.as_bytes());
        for id in path {
            // NUL separates: no id holds one that a client could send, and the salt is hex.
            hash.update([0]);
            hash.update(id.as_str().as_bytes());
        }
        let digest = hash.finalize();
        digest[..16]
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect()
    }
}

impl Default for ClientPause {
    /// The view with an empty salt: its ids are opaque but the same for every run of the same
    /// shape. A server that shows pauses to people sets a salt of its own.
    fn default() -> Self {
        ClientPause::new("")
    }
}

impl fmt::Debug for ClientPause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientPause")
            .field("metadata", &self.metadata.as_ref().map(|_| "custom"))
            .finish_non_exhaustive()
    }
}

/// The interrupts of `interrupts` a person answers, a sub-agent's pause opened.
fn leaves(interrupts: &[Interrupt]) -> Vec<Leaf> {
    fn walk(interrupts: &[Interrupt], path: &mut Vec<InterruptId>, out: &mut Vec<Leaf>) {
        for interrupt in interrupts {
            path.push(interrupt.id.clone());
            match SubAgentPause::from_interrupt(interrupt) {
                Some(child) if path.len() < MAX_DEPTH => walk(child.interrupts(), path, out),
                _ => out.push(Leaf {
                    path: path.clone(),
                    interrupt: shown(interrupt),
                }),
            }
            path.pop();
        }
    }
    let mut out = Vec::new();
    walk(interrupts, &mut Vec::new(), &mut out);
    out
}

/// `interrupt` as it may be shown: a sub-agent's pause past the depth opened loses its
/// checkpoint (never shown), and keeps the child's name and tool.
fn shown(interrupt: &Interrupt) -> Interrupt {
    let mut shown = interrupt.clone();
    if let Some(child) = SubAgentPause::from_interrupt(interrupt) {
        shown.payload =
            json!({ "kind": "sub_agent_pause", "agent": child.agent, "tool": child.tool });
    }
    shown
}

/// The answers of `answered` (by path) to `interrupts`, as the agent takes them.
fn nest(
    interrupts: &[Interrupt],
    answered: &HashMap<Vec<InterruptId>, Value>,
    path: &mut Vec<InterruptId>,
) -> Vec<(InterruptId, Value)> {
    let mut out = Vec::new();
    for interrupt in interrupts {
        path.push(interrupt.id.clone());
        match SubAgentPause::from_interrupt(interrupt) {
            Some(child) if path.len() < MAX_DEPTH => {
                let answers = nest(child.interrupts(), answered, path);
                if !answers.is_empty() {
                    out.push((interrupt.id.clone(), child.answer(answers)));
                }
            }
            _ => {
                if let Some(answer) = answered.get(path.as_slice()) {
                    out.push((interrupt.id.clone(), answer.clone()));
                }
            }
        }
        path.pop();
    }
    out
}
