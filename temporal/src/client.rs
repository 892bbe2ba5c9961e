//! Starting, answering, querying and cancelling runs, and waiting for their end.

use serde_json::Value;
use temporalio_client::{
    Client, WorkflowCancelOptions, WorkflowExecuteUpdateOptions, WorkflowGetResultOptions,
    WorkflowHandle, WorkflowQueryOptions, WorkflowSignalOptions, WorkflowStartOptions,
    errors::{WorkflowGetResultError, WorkflowStartError, WorkflowUpdateError},
};

use crate::{Error, RunResult, RunStatus, StepPolicy, model::RunInput, workflow::AgentRun};

/// Starts runs on a task queue, and talks to them by key.
#[derive(Clone, Debug)]
pub struct RunClient {
    client: Client,
    task_queue: String,
}

impl RunClient {
    /// Runs started by this client go to the workers of `task_queue`.
    pub fn new(client: Client, task_queue: impl Into<String>) -> Self {
        Self {
            client,
            task_queue: task_queue.into(),
        }
    }

    /// The SDK's client, for what this one does not do.
    pub fn client(&self) -> &Client {
        &self.client
    }

    fn handle(&self, key: &str) -> WorkflowHandle<Client, AgentRun> {
        self.client.get_workflow_handle::<AgentRun>(key)
    }

    /// Starts a run whose workflow id is `key`: its first step gets `input`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidPolicy`] if `policy` does not [validate](StepPolicy::validate);
    /// [`Error::AlreadyRunning`] if a run with this key is open; [`Error::Start`] otherwise.
    pub async fn start(&self, key: &str, input: Value, policy: &StepPolicy) -> Result<(), Error> {
        policy.validate()?;
        let run_input = RunInput {
            input,
            policy: policy.clone(),
        };
        let options = WorkflowStartOptions::new(self.task_queue.as_str(), key).build();
        match self
            .client
            .start_workflow(AgentRun::run, run_input, options)
            .await
        {
            Ok(_) => Ok(()),
            Err(WorkflowStartError::AlreadyStarted { .. }) => Err(Error::AlreadyRunning {
                key: key.to_owned(),
            }),
            Err(source) => Err(Error::Start {
                key: key.to_owned(),
                source,
            }),
        }
    }

    /// Sends `answers` to the run `key`: if paused, its next step gets them; if not, its next
    /// pause does. Nothing checks them on the way (prefer [`resume`](Self::resume)): answers
    /// that are not to the pause the step finds are dropped there, and the run waits again.
    ///
    /// # Errors
    ///
    /// [`Error::Interaction`] if the run is closed or unknown, or the server unreachable.
    pub async fn answer(&self, key: &str, answers: Value) -> Result<(), Error> {
        self.handle(key)
            .signal(AgentRun::answers, answers, WorkflowSignalOptions::default())
            .await
            .map_err(|source| Error::Interaction {
                action: "signal",
                key: key.to_owned(),
                source,
            })
    }

    /// Sends `answers` to the run `key` if it is paused now and they are to its pause (an
    /// object of the ids of the interrupts it waits on, each to its answer), and returns the
    /// step that paused; a Temporal update, which a worker validates and acknowledges (unlike
    /// [`answer`](Self::answer), a signal, which the server takes whatever the run's state).
    ///
    /// Sending the same answers again once the run went on (a webhook delivered twice) is
    /// refused, and the run is not disturbed: it waits on its next pause as before.
    ///
    /// # Errors
    ///
    /// [`Error::Rejected`] if the run is not paused, has answers pending, or waits on other
    /// interrupts than those answered (an earlier pause's, say), or on more of them;
    /// [`Error::Update`] if it is closed or unknown, or no worker answers.
    pub async fn resume(&self, key: &str, answers: Value) -> Result<u32, Error> {
        let options = WorkflowExecuteUpdateOptions::default();
        match self
            .handle(key)
            .execute_update(AgentRun::resume, answers, options)
            .await
        {
            Ok(step) => Ok(step),
            Err(WorkflowUpdateError::Failed(failure)) => Err(Error::Rejected {
                key: key.to_owned(),
                reason: failure.message,
            }),
            Err(source) => Err(Error::Update {
                key: key.to_owned(),
                source,
            }),
        }
    }

    /// Where the run `key` stands. A worker answers the query: with none polling the task queue,
    /// this waits (and fails on the server's deadline).
    ///
    /// # Errors
    ///
    /// [`Error::Query`] if the run is unknown, or no worker answers.
    pub async fn status(&self, key: &str) -> Result<RunStatus, Error> {
        self.handle(key)
            .query(AgentRun::status, (), WorkflowQueryOptions::default())
            .await
            .map_err(|source| Error::Query {
                key: key.to_owned(),
                source,
            })
    }

    /// Asks the run `key` to stop: the step under way is told at its next heartbeat, the
    /// cleanup activity runs, and the run ends [`RunResult::Cancelled`].
    ///
    /// # Errors
    ///
    /// [`Error::Interaction`] if the run is closed or unknown, or the server unreachable.
    pub async fn cancel(&self, key: &str, reason: &str) -> Result<(), Error> {
        let options = WorkflowCancelOptions::builder().reason(reason).build();
        self.handle(key)
            .cancel(options)
            .await
            .map_err(|source| Error::Interaction {
                action: "cancel",
                key: key.to_owned(),
                source,
            })
    }

    /// Waits for the run `key` to end.
    ///
    /// # Errors
    ///
    /// [`Error::Run`] if it failed, was terminated or timed out, or its end could not be fetched.
    pub async fn result(&self, key: &str) -> Result<RunResult, Error> {
        match self
            .handle(key)
            .get_result(WorkflowGetResultOptions::default())
            .await
        {
            Ok(outcome) => Ok(RunResult::Completed(outcome)),
            Err(WorkflowGetResultError::Cancelled { .. }) => Ok(RunResult::Cancelled),
            Err(source) => Err(Error::Run {
                key: key.to_owned(),
                source,
            }),
        }
    }
}
