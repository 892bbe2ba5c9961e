//! Dispatches tool calls by name.

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::ops::Deref;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;

use super::answer::Answer;
use super::offered::{Offered, Sources};
use super::{Tool, ToolError, ToolFailure, ToolSource, ToolSpec};
use crate::context::{CallFrame, Context, ToolContext};
use crate::message::{Content, ToolCall, ToolResult};
use crate::shared::Shared;

/// Object-safe form of [`Tool`], so tools of different types can share one registry.
///
/// The registry is the one place that boxes: one future per tool call, off the middleware chain.
pub(crate) trait ErasedTool: Send + Sync {
    fn call_boxed<'a>(
        &'a self,
        cx: ToolContext<'a>,
        arguments: serde_json::Value,
    ) -> BoxFuture<'a, Result<Content, ToolError>>;

    fn check_arguments(&self, arguments: &serde_json::Value) -> Result<(), ToolError>;

    fn check_answer(
        &self,
        arguments: &serde_json::Value,
        answer: &Answer<'_>,
    ) -> Result<(), ToolError>;
}

impl<T: Tool> ErasedTool for T {
    fn call_boxed<'a>(
        &'a self,
        cx: ToolContext<'a>,
        arguments: serde_json::Value,
    ) -> BoxFuture<'a, Result<Content, ToolError>> {
        Box::pin(self.call(cx, arguments))
    }

    fn check_arguments(&self, arguments: &serde_json::Value) -> Result<(), ToolError> {
        Tool::check_arguments(self, arguments)
    }

    fn check_answer(
        &self,
        arguments: &serde_json::Value,
        answer: &Answer<'_>,
    ) -> Result<(), ToolError> {
        Tool::check_answer(self, arguments, answer)
    }
}

struct Entry {
    /// Where its spec is in `specs`.
    spec: usize,
    /// Shared, so that a call spawned as a task of its own can hold the tool.
    tool: Arc<dyn ErasedTool>,
}

/// The tools of an agent, by name.
///
/// Its tools are fixed ones ([`register`](Self::register)) and, when the set changes while
/// the agent runs, those of [`ToolSource`]s ([`register_source`](Self::register_source)):
/// what the model is offered, and what a call by name runs, are the sources' tools as of
/// the model call (see [`ToolSource`] for names that clash).
///
/// [`execute`](Self::execute) never fails: an unknown tool, bad arguments, a tool error or a
/// panicking tool each become an error [`ToolResult`] that the model can read.
#[derive(Default)]
pub struct ToolRegistry {
    tools: BTreeMap<String, Entry>,
    /// The fixed tools' specs, shared with every model request (no copy per request).
    specs: Shared<Vec<ToolSpec>>,
    /// The first name given to two tools: an agent with this registry is not built.
    registered_twice: Option<String>,
    /// Empty for most agents, which then pay one `is_empty` check per model call for them.
    sources: Sources,
}

/// A tool found by name: a fixed one is borrowed, a source's is held (its source may drop it
/// meanwhile).
enum Found<'a> {
    Fixed(&'a Arc<dyn ErasedTool>),
    Sourced(Arc<dyn ErasedTool>),
}

impl Found<'_> {
    #[cfg(feature = "tokio")]
    fn shared(&self) -> Arc<dyn ErasedTool> {
        match self {
            Found::Fixed(tool) => Arc::clone(tool),
            Found::Sourced(tool) => Arc::clone(tool),
        }
    }
}

impl Deref for Found<'_> {
    type Target = dyn ErasedTool;

    fn deref(&self) -> &Self::Target {
        match self {
            Found::Fixed(tool) => &***tool,
            Found::Sourced(tool) => &**tool,
        }
    }
}

impl ToolRegistry {
    /// An empty registry.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `tool`. A second tool under a name already registered is not added: the agent
    /// refuses the registry when it is built
    /// ([`AgentBuildError::ToolRegisteredTwice`](crate::agent::AgentBuildError::ToolRegisteredTwice)),
    /// rather than let one tool silently stand in for the other.
    pub fn register(&mut self, tool: impl Tool) -> &mut Self {
        let spec = tool.spec();
        if self.tools.contains_key(&spec.name) {
            self.registered_twice.get_or_insert(spec.name);
            return self;
        }
        let name = spec.name.clone();
        self.specs.push(spec);
        let at = self.specs.len() - 1;
        let tool = Arc::new(tool);
        self.tools.insert(name, Entry { spec: at, tool });
        self.sources.forget();
        self
    }

    /// Adds the tools of `source`, a set that changes while the agent runs: at each model
    /// call, the model is offered its tools of the moment (see [`ToolSource`]). A name taken
    /// by a fixed tool or an earlier source's is left out, with a warning, rather than refused
    /// (the names are only known at run time).
    pub fn register_source(&mut self, source: impl ToolSource) -> &mut Self {
        self.sources.add(Box::new(source));
        self
    }

    /// Adds the tools of `source` and returns the registry, for chaining (see
    /// [`register_source`](Self::register_source)).
    #[must_use]
    pub fn with_source(mut self, source: impl ToolSource) -> Self {
        self.register_source(source);
        self
    }

    /// The first name under which two tools were registered, if any (see
    /// [`register`](Self::register)).
    #[must_use]
    pub fn registered_twice(&self) -> Option<&str> {
        self.registered_twice.as_deref()
    }

    /// Adds `tool` and returns the registry, for chaining.
    #[must_use]
    pub fn with(mut self, tool: impl Tool) -> Self {
        self.register(tool);
        self
    }

    /// The specs of every tool, as the model is told about them now: the fixed tools in
    /// registration order, then the sources' (see [`shared_specs`](Self::shared_specs)).
    #[must_use]
    pub fn specs(&self) -> Shared<Vec<ToolSpec>> {
        self.shared_specs()
    }

    /// The specs, shared: what every model request holds (a reference count, not a copy).
    ///
    /// Without sources, every call returns the same list. With sources, the list is made
    /// again when a source's version changed since the last call, and shared until then.
    #[must_use]
    pub fn shared_specs(&self) -> Shared<Vec<ToolSpec>> {
        match self.offered() {
            None => self.specs.clone(),
            Some(offered) => offered.specs.clone(),
        }
    }

    /// The sources' tools merged with the fixed ones, as of now (`None` without sources).
    fn offered(&self) -> Option<Arc<Offered>> {
        if self.sources.is_empty() {
            return None;
        }
        Some(
            self.sources
                .current(&self.specs, &|name| self.tools.contains_key(name)),
        )
    }

    /// Whether `name` is the name of a fixed tool (one a source offers may clash with it:
    /// the fixed one stays).
    pub(crate) fn has_fixed(&self, name: &str) -> bool {
        self.tools.contains_key(name)
    }

    /// Puts this registry's specs in place of `request`'s tools, which a checkpoint names
    /// only: shared when they are all of them, in order; a tool this registry does not have is
    /// dropped from the request (with a warning: the agent no longer has it).
    pub(crate) fn fill_specs(&self, request: &mut crate::model::ModelRequest) {
        let current = self.shared_specs();
        let all = request.tools.len() == current.len()
            && request
                .tools
                .iter()
                .zip(current.iter())
                .all(|(named, spec)| named.name == spec.name);
        if all {
            request.tools = current;
            return;
        }
        let specs = request
            .tools
            .iter()
            .filter_map(|named| {
                let spec = current.iter().find(|spec| spec.name == named.name);
                if spec.is_none() {
                    tracing::warn!(
                        tool = %named.name,
                        "the checkpoint's request offers the tool `{}`, which this agent has not: \
                         it is left out",
                        named.name
                    );
                }
                spec.cloned()
            })
            .collect();
        request.tools = Shared::new(specs);
    }

    /// The spec of the tool named `name` (a source's as of now).
    #[must_use]
    pub fn spec(&self, name: &str) -> Option<ToolSpec> {
        if let Some(entry) = self.tools.get(name) {
            return Some(self.specs[entry.spec].clone());
        }
        let offered = self.offered()?;
        offered.specs.iter().find(|spec| spec.name == name).cloned()
    }

    /// Whether there is a tool named `name` (a source's as of now).
    #[must_use]
    pub fn contains(&self, name: &str) -> bool {
        self.tools.contains_key(name)
            || self
                .offered()
                .is_some_and(|offered| offered.sourced.contains_key(name))
    }

    /// The number of tools (the sources' as of now).
    #[must_use]
    pub fn len(&self) -> usize {
        match self.offered() {
            None => self.tools.len(),
            Some(offered) => offered.specs.len(),
        }
    }

    /// Whether there are no tools (as of now).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Runs `call` outside an agent (a unit test, a tool server), turning every failure into
    /// an error result.
    ///
    /// The tool gets a detached context: a fresh run [`Context`] with no messages, and the
    /// call's id and name. Use [`execute_in`](Self::execute_in) to give it a run's context.
    pub async fn execute(&self, call: &ToolCall) -> ToolResult {
        result_of(call, self.try_execute(call).await)
    }

    /// Runs `call` outside an agent, reporting failures as [`ToolError`] (see
    /// [`execute`](Self::execute) for the context the tool gets).
    pub async fn try_execute(&self, call: &ToolCall) -> Result<Content, ToolError> {
        let run = Context::new(Vec::new());
        let frame = CallFrame::new(call.id.clone(), call.name.clone());
        self.try_execute_in(ToolContext::new(&run, &frame), call)
            .await
    }

    /// Runs `call` with the context `cx`, turning every failure into an error result.
    pub async fn execute_in(&self, cx: ToolContext<'_>, call: &ToolCall) -> ToolResult {
        result_of(call, self.try_execute_in(cx, call).await)
    }

    /// Runs `call` with the context `cx`, reporting failures as [`ToolError`].
    pub async fn try_execute_in(
        &self,
        cx: ToolContext<'_>,
        call: &ToolCall,
    ) -> Result<Content, ToolError> {
        let tool = self.entry(call)?;
        guard(call, tool.call_boxed(cx, call.arguments.clone())).await
    }

    /// Checks `arguments` for the tool `name` without running it (see
    /// [`Tool::check_arguments`]).
    pub fn check_arguments(
        &self,
        name: &str,
        arguments: &serde_json::Value,
    ) -> Result<(), ToolError> {
        self.named(name)?.check_arguments(arguments)
    }

    /// Checks the `answer` to an interrupt the tool of `call` raised (see
    /// [`Tool::check_answer`]).
    pub fn check_answer(&self, call: &ToolCall, answer: &Answer<'_>) -> Result<(), ToolError> {
        self.entry(call)?.check_answer(&call.arguments, answer)
    }

    /// The tool of `call`, shared (for a call that runs in a task of its own).
    #[cfg(feature = "tokio")]
    pub(super) fn shared(&self, call: &ToolCall) -> Result<Arc<dyn ErasedTool>, ToolError> {
        self.entry(call).map(|tool| tool.shared())
    }

    fn entry(&self, call: &ToolCall) -> Result<Found<'_>, ToolError> {
        self.named(&call.name)
    }

    /// The tool named `name`: a fixed one, or a source's as of now.
    fn named(&self, name: &str) -> Result<Found<'_>, ToolError> {
        if let Some(entry) = self.tools.get(name) {
            return Ok(Found::Fixed(&entry.tool));
        }
        let offered = self.offered();
        if let Some(tool) = offered
            .as_ref()
            .and_then(|offered| offered.sourced.get(name))
        {
            return Ok(Found::Sourced(Arc::clone(tool)));
        }
        let mut available: Vec<&str> = self.tools.keys().map(String::as_str).collect();
        if let Some(offered) = &offered {
            available.extend(offered.sourced.keys().map(String::as_str));
            available.sort_unstable();
        }
        Err(ToolError::UnknownTool {
            name: name.to_owned(),
            available: available.join(", "),
        })
    }
}

/// The result the model reads for `call`, given what the tool did: a failure becomes an error
/// result with the failure's message.
pub(crate) fn result_of(call: &ToolCall, outcome: Result<Content, ToolError>) -> ToolResult {
    match outcome {
        Ok(content) => ToolResult::ok(&call.id, content),
        Err(error) => ToolResult::failed(&call.id, ToolFailure::from_tool_error(&call.name, error)),
    }
}

/// Runs a tool's future; a panicking tool must not take the run down: it becomes an error.
pub(super) async fn guard(
    call: &ToolCall,
    run: impl Future<Output = Result<Content, ToolError>>,
) -> Result<Content, ToolError> {
    AssertUnwindSafe(run)
        .catch_unwind()
        .await
        .unwrap_or_else(|payload| {
            Err(ToolError::Panicked {
                tool: call.name.clone(),
                message: panic_message(payload.as_ref()),
            })
        })
}

impl fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.shared_specs().iter().map(|spec| &spec.name))
            .finish()
    }
}

/// The text of a panic payload, when it is a string.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "(non-string panic payload)".to_owned()
    }
}
