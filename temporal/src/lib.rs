//! Agent runs as durable [Temporal](https://temporal.io) workflows, spread over many workers.
//!
//! A run is a workflow whose id is the run's key. It calls a *step* activity in a loop; each
//! step answers [`StepReply::Next`] (go on), [`StepReply::Paused`] (wait for the `answers`
//! signal, then go on with them) or [`StepReply::Done`] (the run's result). Any worker polling
//! the run's task queue may run any step; a worker that dies mid-step is noticed by the missing
//! heartbeat and its step retried elsewhere, under the run's [`StepPolicy`].
//!
//! - [`StepWorker`] runs the workflow and the steps, with a [`StepHandler`] (or a closure,
//!   [`step_fn`]) for what a step does.
//! - [`RunClient`] starts runs, sends answers, queries their [`RunStatus`], cancels them and
//!   waits for their [`RunResult`].
//!
//! # Heartbeats
//!
//! A step of [`AgentSteps`] sends its heartbeats from a Tokio task of its own, for as long as
//! it runs (stopped when it ends, or when it is dropped: its attempt cancelled), with what it
//! did so far (its completed tool calls). So a tool whose body blocks its thread (a synchronous
//! payment SDK, CPU work) does not silence them: on a runtime of several threads (the
//! default of `#[tokio::main]`), the server keeps hearing from the step, and does not time it
//! out and retry it while the tool still runs — which would run the tool twice at once. The
//! agent's lease is renewed the same way, from a task of its own.
//!
//! What it does not do: on a current-thread runtime, a tool that blocks blocks the only
//! thread, and nothing — heartbeats or renewals — is sent until it returns; a block longer
//! than the heartbeat timeout gets the step retried under it. Run the workers on a
//! multi-thread runtime with more threads than the steps that may block at once, or move the
//! blocking call to `tokio::task::spawn_blocking`. A [`StepHandler`] of one's own heartbeats
//! as it chooses ([`StepContext::heartbeat`]).
//!
//! The policy of [`AgentSteps::policy`] waits a third of the agent's lease longer than the
//! lease for a heartbeat, and the worker sends them at least every third of the lease
//! ([`StepHandler::heartbeat_throttle`]): a dead worker's step is retried once its lease has
//! expired, when the retry can take the run over.
//!
//! # Late answers
//!
//! [`RunClient::resume`] sends answers as an update, which the workflow validates before it is
//! accepted: answers to interrupts the run does not wait on now (an earlier pause's, delivered
//! again by a webhook or a retrying client) are refused with [`Error::Rejected`], and the run
//! goes on waiting for the right ones. A signal ([`RunClient::answer`]) is not validated: a
//! late one reaches a step, which drops the answers and reports the pause as it stands. Either
//! way, a late answer never fails the run.
//!
//! Depend on `hookchain` with the feature `temporal` (the items are then
//! `hookchain::temporal::…`). The examples are in the docs of the facade's module
//! `hookchain::temporal`, which name the items as an application does: *Workers and runs*,
//! *Steps*, *A dev server of your own*.
#![forbid(unsafe_code)]

mod activity;
mod agent;
mod client;
pub mod dev_server;
mod error;
mod heartbeat;
mod model;
mod pause_answers;
mod worker;
mod workflow;

pub use activity::{BoxFuture, StepContext, StepFailure, StepFn, StepHandler, step_fn};
pub use agent::{AgentSteps, SUMMARY_TEXT_LIMIT, StepEvent, Summary};
pub use client::RunClient;
pub use error::Error;
pub use model::{
    INTERRUPT_PAYLOAD_LIMIT, InterruptSummary, MAX_RUN_STEPS, RunOutcome, RunResult, RunStatus,
    StepPolicy, StepReply, StepRequest,
};
pub use worker::{ShutdownHandle, StepWorker, connect};

/// The SDK's client, as [`connect`] returns it.
pub use temporalio_client::Client;
