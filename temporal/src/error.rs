//! The errors of the client and worker helpers.

use temporalio_client::errors::{
    ClientConnectError, ClientNewError, WorkflowGetResultError, WorkflowInteractionError,
    WorkflowQueryError, WorkflowStartError, WorkflowUpdateError,
};
use temporalio_common::data_converters::PayloadConversionError;
use temporalio_sdk::{RuntimeError, WorkerCreateError, WorkerRunError, WorkflowRegistrationError};

/// What went wrong talking to Temporal, or running a worker.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The server's address is not a URL nor `host:port`.
    #[error("invalid Temporal server address {address:?}: {reason}")]
    InvalidAddress {
        /// The address given.
        address: String,
        /// Why it is refused.
        reason: String,
    },
    /// [`AgentSteps::new`](crate::AgentSteps::new) was given an agent without a checkpointer.
    #[error(
        "the agent has no checkpointer: its runs cannot go from one step to the next, nor from \
         one worker to another (give it one shared by the workers: Postgres, or SQLite or files \
         on one machine)"
    )]
    NoCheckpointer,
    /// A [`StepPolicy`](crate::StepPolicy) the server would refuse.
    #[error("invalid step policy: {0}")]
    InvalidPolicy(String),
    /// The server could not be reached, or refused the connection.
    #[error("could not connect to the Temporal server at {address}")]
    Connect {
        /// The server's address.
        address: String,
        /// The SDK's error.
        #[source]
        source: ClientConnectError,
    },
    /// The client could not be made from the connection.
    #[error("could not create the Temporal client")]
    Client(#[source] ClientNewError),
    /// The SDK's runtime could not be made (no current Tokio runtime, say).
    #[error("could not create the Temporal worker runtime")]
    Runtime(#[source] RuntimeError),
    /// The workflow could not be registered on the worker.
    #[error("could not register the workflow")]
    Registration(#[source] WorkflowRegistrationError),
    /// The worker could not be created.
    #[error("could not create the Temporal worker")]
    Worker(#[source] WorkerCreateError),
    /// The worker stopped on an error (its namespace does not exist, say).
    #[error("the Temporal worker stopped on an error")]
    WorkerRun(#[source] WorkerRunError),
    /// A run with this key is open already.
    #[error("a run with key {key:?} is already running")]
    AlreadyRunning {
        /// The run's key.
        key: String,
    },
    /// The run could not be started.
    #[error("could not start the run {key:?}")]
    Start {
        /// The run's key.
        key: String,
        /// The SDK's error.
        #[source]
        source: WorkflowStartError,
    },
    /// The run could not be signalled, or cancelled (it is closed, or unknown, say).
    #[error("could not {action} the run {key:?}")]
    Interaction {
        /// What was tried: `signal` or `cancel`.
        action: &'static str,
        /// The run's key.
        key: String,
        /// The SDK's error.
        #[source]
        source: WorkflowInteractionError,
    },
    /// The run refused the answers of [`RunClient::resume`](crate::RunClient::resume): it is
    /// not paused, has answers pending, or waits on other interrupts than those answered (the
    /// reason says which); it goes on as it was.
    #[error("the run {key:?} refused the answers: {reason}")]
    Rejected {
        /// The run's key.
        key: String,
        /// Why, as the run said.
        reason: String,
    },
    /// The update of [`RunClient::resume`](crate::RunClient::resume) could not be delivered (the
    /// run is closed or unknown, or no worker answers).
    #[error("could not send answers to the run {key:?}")]
    Update {
        /// The run's key.
        key: String,
        /// The SDK's error.
        #[source]
        source: WorkflowUpdateError,
    },
    /// The run's status could not be queried (no worker polls its task queue, say).
    #[error("could not query the status of the run {key:?}")]
    Query {
        /// The run's key.
        key: String,
        /// The SDK's error.
        #[source]
        source: WorkflowQueryError,
    },
    /// The run ended otherwise than done or cancelled: failed (a step's last attempt failed, or
    /// it took more steps than allowed), terminated, or timed out; or its result could not be
    /// fetched.
    #[error("the run {key:?} did not complete")]
    Run {
        /// The run's key.
        key: String,
        /// The SDK's error.
        #[source]
        source: WorkflowGetResultError,
    },
    /// A heartbeat's details could not be converted to or from their payload.
    #[error("could not convert heartbeat details")]
    Heartbeat(#[source] PayloadConversionError),
}
