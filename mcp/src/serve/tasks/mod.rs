//! Long calls served as MCP **Tasks** (the `io.modelcontextprotocol/tasks` extension,
//! SEP-2663): [`ServedTasks`].

mod reading;
mod record;
mod running;
mod serving;
mod store;

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use hookchain_core::interrupt::SlotStore;
use tokio::sync::Notify;

pub(super) use serving::{Started, TaskCall, takes_tasks};
use store::TaskSlots;

/// How long a task is kept from when it was made, by default: a day.
pub const DEFAULT_TASK_TTL: Duration = Duration::from_secs(24 * 60 * 60);

/// How often a client is told to poll a task, by default.
const DEFAULT_POLL_INTERVAL: Duration = Duration::from_millis(500);

/// How long a replica's hold on a task it runs lasts unless renewed (it is renewed while the
/// call runs): past it, the task counts as failed — its replica stopped.
const LEASE: Duration = Duration::from_secs(30);

/// Whether a served tool runs as a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TaskSupport {
    /// As a task for a client that takes tasks; in the call for one that does not.
    Optional,
    /// Only as a task: a client that does not take tasks is refused (`-32021`, the tasks
    /// extension required).
    Required,
}

/// Where an [`McpToolServer`](super::McpToolServer) keeps the calls it serves as MCP
/// **Tasks** (the `io.modelcontextprotocol/tasks` extension of MCP 2026-07-28), so that a
/// task's status and result are read on any replica that shares the store, after a restart
/// ([`McpToolServer::tasks`](super::McpToolServer::tasks)).
///
/// A call of a tool named here, by a client that declares the extension, is answered at once
/// with a task (`resultType: "task"`, its id, `working`) once the task is stored; the call
/// runs in the background on the replica that took it, which holds the task's key in
/// `store` under a lease (30 s, renewed while it runs). The client polls `tasks/get` on any
/// replica:
///
/// - `completed` with the call's result — an error result too: the tool ran;
/// - `input_required` with the questions of a call that waits for an answer (an approval
///   that gates it, a tool that asks its user): the client answers with `tasks/update`,
///   one answer at a time if it likes, and once every question is answered the replica that
///   took the last one runs the call on from where it asked — once: the answers move the
///   task back to `working` in one atomic change of the store;
/// - `failed` with a JSON-RPC error when the call failed outside the tool (a hook's error),
///   or when the replica running it stopped (its lease ran out): the call is **not** run
///   again — whether the tool acted is unknown, and running it twice is worse;
/// - `cancelled` after `tasks/cancel`: the replica running it drops the call (at its next
///   `.await`; on another replica, at its next renewal).
///
/// A task belongs to the principal that made it: another principal's `tasks/get`,
/// `tasks/update` or `tasks/cancel` is answered as for a task that does not exist. A task is
/// kept for [`ttl`](Self::ttl) from when it was made, then forgotten (removed when it is next
/// read, or swept as more tasks are made).
///
/// `store` is any [`SlotStore`]: an [`InMemoryCheckpointer`](hookchain_core::interrupt::InMemoryCheckpointer)
/// (one process), a [`FileCheckpointer`](hookchain_core::interrupt::FileCheckpointer) or a
/// SQLite one (replicas sharing it). Give the tasks a store of their own: their records are
/// not checkpoints.
///
/// ```
/// use hookchain::interrupt::InMemoryCheckpointer;
/// use hookchain_mcp::{ServedTasks, TaskSupport};
///
/// let tasks = ServedTasks::new(InMemoryCheckpointer::new())
///     .tool("render_video", TaskSupport::Required)
///     .tool("summarize", TaskSupport::Optional)
///     .ttl(std::time::Duration::from_secs(60 * 60));
/// # let _ = tasks;
/// ```
#[derive(Clone)]
pub struct ServedTasks {
    store: Arc<dyn TaskSlots>,
    tools: HashMap<String, TaskSupport>,
    ttl: Duration,
    poll_interval: Duration,
    worker: String,
    /// The tasks this replica runs, by id: how a cancellation reaches one at once.
    running: Arc<Mutex<HashMap<String, Arc<Notify>>>>,
    /// How many tasks this replica made: every so many, the expired ones are swept.
    made: Arc<AtomicUsize>,
}

impl fmt::Debug for ServedTasks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServedTasks")
            .field("tools", &self.tools)
            .field("ttl", &self.ttl)
            .field("poll_interval", &self.poll_interval)
            .field("worker", &self.worker)
            .finish_non_exhaustive()
    }
}

impl ServedTasks {
    /// Tasks kept in `store` (no tool runs as a task until named with [`tool`](Self::tool)),
    /// each for [`DEFAULT_TASK_TTL`].
    pub fn new(store: impl SlotStore + 'static) -> Self {
        ServedTasks {
            store: Arc::new(store),
            tools: HashMap::new(),
            ttl: DEFAULT_TASK_TTL,
            poll_interval: DEFAULT_POLL_INTERVAL,
            worker: format!("mcp-{}", std::process::id()),
            running: Arc::default(),
            made: Arc::default(),
        }
    }

    /// Serves the tool `name` as a task, as `support` says.
    #[must_use]
    pub fn tool(mut self, name: impl Into<String>, support: TaskSupport) -> Self {
        self.tools.insert(name.into(), support);
        self
    }

    /// How long a task is kept from when it was made (its `ttlMs`).
    #[must_use]
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// How often clients are asked to poll a task (its `pollIntervalMs`): 500 ms by default.
    #[must_use]
    pub fn poll_interval(mut self, every: Duration) -> Self {
        self.poll_interval = every;
        self
    }

    /// The name this replica holds the tasks it runs under (default `mcp-<pid>`).
    #[must_use]
    pub fn worker(mut self, name: impl Into<String>) -> Self {
        self.worker = name.into();
        self
    }

    /// How the tool `name` is served.
    pub(super) fn support(&self, name: &str) -> Option<TaskSupport> {
        self.tools.get(name).copied()
    }

    /// Registers task `id` as run here: its cancellation's signal.
    fn run_here(&self, id: &str) -> Arc<Notify> {
        let signal = Arc::new(Notify::new());
        self.running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id.to_owned(), Arc::clone(&signal));
        signal
    }

    /// Task `id` no longer runs here.
    fn ran_here(&self, id: &str) {
        self.running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id);
    }

    /// Stops task `id` at once, if it runs here.
    fn stop_here(&self, id: &str) {
        let signal = self
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(id)
            .cloned();
        if let Some(signal) = signal {
            // A permit is kept if the runner is not waiting yet.
            signal.notify_one();
        }
    }
}
