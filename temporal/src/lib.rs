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
mod model;
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
