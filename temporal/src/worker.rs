//! Connecting to a server, and the worker that runs the workflow and its step activities.

use std::{fmt, str::FromStr, sync::Arc};

use temporalio_client::{Client, ClientOptions, Connection, ConnectionOptions, Url};
use temporalio_sdk::{Runtime, Worker, WorkerOptions, runtime::RuntimeOptions};

use crate::{Error, StepHandler, activity::StepActivities, workflow::AgentRun};

/// Connects a client to the server at `address` (`host:port`, or a URL: `http://host:port`,
/// `https://…` for TLS), bound to `namespace`.
///
/// # Errors
///
/// [`Error::InvalidAddress`] if `address` is neither; [`Error::Connect`] if the server cannot be
/// reached; [`Error::Client`] if the client cannot be made.
pub async fn connect(address: &str, namespace: &str) -> Result<Client, Error> {
    let url = parse_address(address)?;
    let connection = Connection::connect(ConnectionOptions::new(url).build())
        .await
        .map_err(|source| Error::Connect {
            address: address.to_owned(),
            source,
        })?;
    Client::new(connection, ClientOptions::new(namespace).build()).map_err(Error::Client)
}

fn parse_address(address: &str) -> Result<Url, Error> {
    let invalid = |reason: String| Error::InvalidAddress {
        address: address.to_owned(),
        reason,
    };
    let with_scheme = if address.contains("://") {
        address.to_owned()
    } else {
        format!("http://{address}")
    };
    let url = Url::from_str(&with_scheme).map_err(|e| invalid(e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(invalid(format!(
            "scheme {:?} is not http or https",
            url.scheme()
        )));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(invalid("no host".to_owned()));
    }
    Ok(url)
}

/// A worker that runs the run workflow and its step activities on one task queue.
///
/// Start as many as you like, in as many processes: the server hands each step to one of them.
pub struct StepWorker {
    worker: Worker,
    // The SDK's runtime (telemetry, the worker heartbeat): kept as long as the worker.
    _sdk_runtime: Runtime,
    /// The Tokio runtime the worker was made in (for its shutdown, from any thread).
    runtime: tokio::runtime::Handle,
}

impl fmt::Debug for StepWorker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StepWorker")
            .field("task_queue", &self.worker.task_queue())
            .finish_non_exhaustive()
    }
}

impl StepWorker {
    /// Makes a worker that polls `task_queue` of `client`'s namespace, with `handler` for the
    /// steps. Call it inside a Tokio runtime (the worker uses the current one).
    ///
    /// The SDK refuses a second worker of the same namespace and task queue on one connection
    /// while the first is registered (until its [`run`](Self::run) returned after a shutdown):
    /// for two in one process, [`connect`] twice.
    ///
    /// # Errors
    ///
    /// [`Error::Runtime`] outside a Tokio runtime; [`Error::Registration`] or [`Error::Worker`]
    /// if the SDK refuses the worker.
    pub fn new(client: Client, task_queue: &str, handler: impl StepHandler) -> Result<Self, Error> {
        Self::with_handler(client, task_queue, Arc::new(handler))
    }

    /// Like [`new`](Self::new), with a handler shared already.
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new).
    pub fn with_handler(
        client: Client,
        task_queue: &str,
        handler: Arc<dyn StepHandler>,
    ) -> Result<Self, Error> {
        let runtime =
            Runtime::from_current_tokio(RuntimeOptions::default()).map_err(Error::Runtime)?;
        let throttle = handler.heartbeat_throttle();
        let options = WorkerOptions::new(task_queue)
            .register_workflow::<AgentRun>()
            .map_err(Error::Registration)?
            .register_activities(StepActivities::new(handler))
            .maybe_max_heartbeat_throttle_interval(throttle)
            .build();
        let worker = Worker::new(&runtime, client, options).map_err(Error::Worker)?;
        Ok(Self {
            worker,
            _sdk_runtime: runtime,
            // `Runtime::from_current_tokio` succeeded: there is a current runtime.
            runtime: tokio::runtime::Handle::current(),
        })
    }

    /// A handle that stops the worker: it stops polling, lets the steps under way finish, and
    /// [`run`](Self::run) returns.
    pub fn shutdown_handle(&self) -> ShutdownHandle {
        ShutdownHandle {
            shutdown: Arc::new(self.worker.shutdown_handle()),
            runtime: self.runtime.clone(),
        }
    }

    /// Runs the worker until it is shut down ([`shutdown_handle`](Self::shutdown_handle)).
    ///
    /// The future is not `Send` (workflows run in a Tokio `LocalSet`): await it in the task that
    /// drives the runtime (`#[tokio::main]`, `Runtime::block_on`), or in a `LocalSet`, not in
    /// `tokio::spawn`. Steps run on the runtime's pool all the same.
    ///
    /// # Errors
    ///
    /// [`Error::WorkerRun`] if the worker stops on an error (its namespace does not exist, the
    /// server is gone for good).
    pub async fn run(mut self) -> Result<(), Error> {
        self.worker.run().await.map_err(Error::WorkerRun)
    }
}

/// Stops a [`StepWorker`]; see [`StepWorker::shutdown_handle`].
#[derive(Clone)]
pub struct ShutdownHandle {
    shutdown: Arc<dyn Fn() + Send + Sync>,
    /// The worker's runtime: the SDK's shutdown spawns a task on it, from whatever thread.
    runtime: tokio::runtime::Handle,
}

impl fmt::Debug for ShutdownHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ShutdownHandle")
    }
}

impl ShutdownHandle {
    /// Starts the shutdown (returns at once; the worker's `run` returns when it is done). Any
    /// thread may call it, inside a Tokio runtime or not.
    pub fn shutdown(&self) {
        let _entered = self.runtime.enter();
        (self.shutdown)();
    }
}

#[cfg(test)]
mod tests {
    use super::parse_address;

    #[test]
    fn addresses() {
        assert_eq!(
            parse_address("127.0.0.1:7233").unwrap().as_str(),
            "http://127.0.0.1:7233/"
        );
        assert_eq!(
            parse_address("https://x.tmprl.cloud:7233")
                .unwrap()
                .scheme(),
            "https"
        );
        assert!(parse_address("").is_err());
        assert!(parse_address("ftp://host:1").is_err());
        assert!(parse_address("http://").is_err());
    }
}
