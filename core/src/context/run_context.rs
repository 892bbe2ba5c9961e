//! [`RunContext`]: typed values a caller gives to a run (a database handle, a tenant id, request
//! metadata), readable by every hook and tool of that run.

use std::any::{Any, TypeId};
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::{Arc, OnceLock};

use serde::Serialize;
use serde::de::DeserializeOwned;

/// Typed values given to one run, readable by every hook and tool of it.
///
/// It is a map keyed by type, one value per type (wrap plain values such as a tenant id in a
/// type of your own), plus JSON values saved under string keys that travel with checkpoints.
/// Cloning it is cheap: the values are shared, not copied.
///
/// Give them with [`Agent::with_context`](crate::Agent::with_context); read them with
/// [`Context::get`](crate::Context::get) in a hook, or through the
/// [`ToolContext`](crate::ToolContext) in a tool. The agent's own code (its builder, its
/// middleware, its tools) never has to carry them.
///
/// ```
/// use hookchain::prelude::*;
/// use hookchain::{RunContext, hook};
///
/// /// Who the run is for; given by the caller of each run.
/// #[derive(Debug, PartialEq)]
/// struct Tenant(String);
///
/// #[hook(before_model)]
/// fn tag(cx: &mut Context, request: &mut ModelRequest) {
///     if let Some(Tenant(tenant)) = cx.get::<Tenant>() {
///         request.system_prompt = Some(format!("You answer for {tenant}."));
///     }
/// }
///
/// # futures::executor::block_on(async {
/// let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("Hello!")]))
///     .chain(tag)
///     .build()?;
/// let context = RunContext::new().with(Tenant("acme".into()));
/// let output = agent.with_context(context).run("Hi").await?;
/// assert_eq!(output.text().as_deref(), Some("Hello!"));
/// let prompt = agent.model().requests()[0].system_prompt.clone();
/// assert_eq!(prompt.as_deref(), Some("You answer for acme."));
/// # Ok::<(), hookchain::Error>(())
/// # }).unwrap();
/// ```
///
/// # Checkpoints
///
/// Typed values are never serialized: a resume is given them again (a database handle cannot
/// travel to another process). Values the run needs after a resume in another process, and
/// that can be written as JSON, are *saved* ones
/// ([`with_saved`](RunContext::with_saved)): they go into the checkpoint and come back on
/// resume, where a value given to the resume under the same key wins.
#[derive(Clone)]
pub struct RunContext {
    /// Shared with every clone (the run's `Context` holds one): copied only when a clone is
    /// written to after it was shared.
    inner: Arc<Inner>,
}

#[derive(Clone, Default)]
struct Inner {
    typed: HashMap<TypeId, Typed>,
    saved: BTreeMap<String, serde_json::Value>,
}

/// One typed value, with its type's name for `Debug` (a `dyn Any` cannot say it).
#[derive(Clone)]
struct Typed {
    name: &'static str,
    value: Arc<dyn Any + Send + Sync>,
}

/// A value given to [`RunContext::with_saved`] could not be written as JSON.
#[derive(Debug, thiserror::Error)]
#[error("the run context value saved as {key:?} could not be written as JSON")]
pub struct SavedValueError {
    key: String,
    #[source]
    source: serde_json::Error,
}

impl SavedValueError {
    /// The key the value was to be saved under.
    #[must_use]
    pub fn key(&self) -> &str {
        &self.key
    }
}

impl Default for RunContext {
    fn default() -> Self {
        // One empty map shared by every empty context: a plain run, which has none, allocates
        // nothing for it (a first write copies it, as for any shared context).
        static EMPTY: OnceLock<Arc<Inner>> = OnceLock::new();
        RunContext {
            inner: Arc::clone(EMPTY.get_or_init(Arc::default)),
        }
    }
}

impl RunContext {
    /// An empty run context.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `value`, replacing the value of the same type if there is one.
    #[must_use]
    pub fn with<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.insert(value);
        self
    }

    /// Adds `value`, returning the value of the same type it replaces.
    pub fn insert<T: Send + Sync + 'static>(&mut self, value: T) -> Option<Arc<T>> {
        let typed = Typed {
            name: std::any::type_name::<T>(),
            value: Arc::new(value),
        };
        let replaced = Arc::make_mut(&mut self.inner)
            .typed
            .insert(TypeId::of::<T>(), typed)?;
        // The map's entry for `T` holds a `T`: the downcast cannot fail.
        replaced.value.downcast::<T>().ok()
    }

    /// The value of type `T`, if one was given.
    #[must_use]
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.inner
            .typed
            .get(&TypeId::of::<T>())
            .and_then(|typed| typed.value.downcast_ref::<T>())
    }

    /// Asks that the run be kept in the agent's checkpointer after every step, as with
    /// [`Durability::EveryStep`](crate::Durability::EveryStep), whatever the agent's
    /// durability (with none, nothing is kept): for a service that may stop a run — a
    /// shutdown — and go on with it when its client sends the request again, so that no tool
    /// call it completed runs again. (A resumed run is kept so anyway.)
    ///
    /// ```
    /// use hookchain::RunContext;
    ///
    /// let context = RunContext::new().with_steps_kept();
    /// assert!(context.keeps_steps());
    /// assert!(!RunContext::new().keeps_steps());
    /// ```
    #[must_use]
    pub fn with_steps_kept(self) -> Self {
        self.with(KeepSteps)
    }

    /// Whether the run is kept after every step whatever the agent's durability (see
    /// [`with_steps_kept`](Self::with_steps_kept)).
    #[must_use]
    pub fn keeps_steps(&self) -> bool {
        self.contains::<KeepSteps>()
    }

    /// Takes the value of type `T` out, if one was given.
    pub(crate) fn take<T: Send + Sync + 'static>(&mut self) -> Option<Arc<T>> {
        if !self.contains::<T>() {
            return None;
        }
        let typed = Arc::make_mut(&mut self.inner)
            .typed
            .remove(&TypeId::of::<T>())?;
        typed.value.downcast::<T>().ok()
    }

    /// Whether a value of type `T` was given.
    #[must_use]
    pub fn contains<T: Send + Sync + 'static>(&self) -> bool {
        self.inner.typed.contains_key(&TypeId::of::<T>())
    }

    /// Adds `value` as JSON under `key`, saved into the run's checkpoints and given back on
    /// resume (see *Checkpoints* above). A saved value of the same key is replaced.
    ///
    /// ```
    /// use hookchain::RunContext;
    ///
    /// let context = RunContext::new().with_saved("locale", "de-CH")?;
    /// let locale = context.saved::<String>("locale").transpose()?;
    /// assert_eq!(locale.as_deref(), Some("de-CH"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_saved(mut self, key: &str, value: impl Serialize) -> Result<Self, SavedValueError> {
        self.insert_saved(key, value)?;
        Ok(self)
    }

    /// Adds `value` as JSON under `key` (see [`with_saved`](Self::with_saved)).
    pub fn insert_saved(
        &mut self,
        key: &str,
        value: impl Serialize,
    ) -> Result<(), SavedValueError> {
        let value = serde_json::to_value(value).map_err(|source| SavedValueError {
            key: key.to_owned(),
            source,
        })?;
        Arc::make_mut(&mut self.inner)
            .saved
            .insert(key.to_owned(), value);
        Ok(())
    }

    /// The value saved under `key`, read as a `T`; `None` if there is none.
    #[must_use]
    pub fn saved<T: DeserializeOwned>(&self, key: &str) -> Option<Result<T, serde_json::Error>> {
        self.saved_value(key).map(T::deserialize)
    }

    /// The value saved under `key`, as JSON.
    #[must_use]
    pub fn saved_value(&self, key: &str) -> Option<&serde_json::Value> {
        self.inner.saved.get(key)
    }

    /// The number of values: typed and saved.
    #[must_use]
    pub fn len(&self) -> usize {
        self.inner.typed.len() + self.inner.saved.len()
    }

    /// Whether there are no values.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The saved values, as a checkpoint holds them.
    pub(crate) fn saved_values(&self) -> &BTreeMap<String, serde_json::Value> {
        &self.inner.saved
    }

    /// Adds the values a checkpoint saved, except where this context has a value of the same
    /// key: what is given to a resume wins over what the paused run saved.
    pub(crate) fn restore_saved(&mut self, saved: BTreeMap<String, serde_json::Value>) {
        if saved.is_empty() {
            return;
        }
        let inner = Arc::make_mut(&mut self.inner);
        for (key, value) in saved {
            inner.saved.entry(key).or_insert(value);
        }
    }
}

/// The mark of a run kept after every step (see [`RunContext::with_steps_kept`]).
#[derive(Debug, Clone, Copy)]
struct KeepSteps;

/// The run id a sub-agent's run takes (the idempotency key of its parent's call), given by the
/// parent's tool call in the child's run context and taken out when the run starts — so that a
/// child run again after its parent's worker died has the same run id, and its tools the same
/// idempotency keys, and no other run (one a tool of the child starts) inherits it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ChildRunId(pub(crate) String);

/// The store a sub-agent without one of its own keeps its runs in: its parent's, given by the
/// parent's tool call in the child's run context and taken out when the child's run starts or
/// resumes (no run the child's tools start inherits it).
#[derive(Debug, Clone)]
pub(crate) struct ParentStore(pub(crate) super::RunStore);

impl fmt::Debug for RunContext {
    /// Lists the types of the typed values (they need not be `Debug`) and the saved values.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut types: Vec<&str> = self.inner.typed.values().map(|typed| typed.name).collect();
        types.sort_unstable();
        f.debug_struct("RunContext")
            .field("types", &types)
            .field("saved", &self.inner.saved)
            .finish()
    }
}
