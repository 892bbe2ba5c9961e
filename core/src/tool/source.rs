//! Tools that come and go while the agent runs: [`ToolSource`], and the tools it hands out
//! ([`SourcedTool`]).

use std::fmt;
use std::sync::Arc;

use super::registry::ErasedTool;
use super::{Tool, ToolSpec};

/// A set of tools that changes while the agent runs (the tools of an MCP server that
/// announces a changed list, plugins loaded at run time), registered with
/// [`ToolRegistry::register_source`](super::ToolRegistry::register_source).
///
/// At each model call the registry asks every source its [`version`](Self::version); only
/// when a version differs from the one it saw last does it ask for the [`tools`](Self::tools)
/// and make the list the model is offered again. Otherwise the model requests share the
/// list made last time, as they share an agent's fixed tools. A call by name goes to the
/// source's tool of that name when the call is made (the versions are checked again then); a
/// tool the source no longer has gets the unknown-tool error the model reads.
///
/// Names: the agent's own (fixed) tools come first, then the sources in the order they were
/// registered. A source's tool whose name is taken by one of them is left out, with a
/// `tracing` warning (its names change at run time, so this cannot be refused when the agent
/// is built, as two fixed tools of one name are). A fixed tool is never displaced by a
/// source's tool, whenever it was registered: a server must not be able to stand in for a
/// tool of the application by announcing its name.
///
/// ```
/// use std::sync::Mutex;
/// use std::sync::atomic::{AtomicU64, Ordering};
///
/// use hookchain::tool::{SourcedTool, ToolSource};
/// use hookchain::{FnTool, ToolRegistry};
/// use schemars::JsonSchema;
/// use serde::Deserialize;
///
/// /// Tools the application adds while its agent runs.
/// #[derive(Default)]
/// struct Plugins {
///     tools: Mutex<Vec<SourcedTool>>,
///     version: AtomicU64,
/// }
///
/// impl Plugins {
///     fn add(&self, tool: SourcedTool) {
///         self.tools.lock().unwrap().push(tool);
///         // After the change: a registry that sees the new version then sees the new tools.
///         self.version.fetch_add(1, Ordering::Release);
///     }
/// }
///
/// impl ToolSource for Plugins {
///     fn version(&self) -> u64 {
///         self.version.load(Ordering::Acquire)
///     }
///
///     fn tools(&self) -> Vec<SourcedTool> {
///         self.tools.lock().unwrap().clone()
///     }
/// }
///
/// #[derive(Deserialize, JsonSchema)]
/// struct Nothing {}
///
/// // The registry holds one handle (a source behind an `Arc` is a source), the application
/// // another.
/// let plugins = std::sync::Arc::new(Plugins::default());
/// let registry = ToolRegistry::new().with_source(std::sync::Arc::clone(&plugins));
/// assert!(registry.is_empty());
///
/// plugins.add(SourcedTool::new(FnTool::new(
///     "clock",
///     "The time now.",
///     |_: Nothing| async { Ok::<_, std::convert::Infallible>("noon") },
/// )));
/// assert_eq!(registry.shared_specs()[0].name, "clock");
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a source of tools",
    label = "not a tool source",
    note = "one tool goes in `.register(tool)` / `.with(tool)`; a source is a set of tools \
            that changes while the program runs: a type with a hand-written `impl ToolSource` \
            (`version` and `tools`), or an `Arc` of one"
)]
pub trait ToolSource: Send + Sync + 'static {
    /// A number that differs whenever [`tools`](Self::tools) would return other tools than
    /// at the version seen before (a counter incremented after each change, typically an
    /// `AtomicU64`). It is read at every model call, so it should be cheap.
    ///
    /// Change it after the tools are changed: the registry reads the version before the
    /// tools, so that a change made between the two is seen at the next check.
    fn version(&self) -> u64;

    /// The tools now, in the order the model is to be offered them.
    fn tools(&self) -> Vec<SourcedTool>;
}

/// A source shared with the application, which changes it through its own handle.
#[diagnostic::do_not_recommend]
impl<S: ToolSource> ToolSource for Arc<S> {
    fn version(&self) -> u64 {
        S::version(self)
    }

    fn tools(&self) -> Vec<SourcedTool> {
        S::tools(self)
    }
}

/// A tool as a [`ToolSource`] hands it out: any [`Tool`], shared (cloning it is a reference
/// count), with its spec taken once.
#[derive(Clone)]
pub struct SourcedTool {
    spec: ToolSpec,
    pub(super) tool: Arc<dyn ErasedTool>,
}

impl SourcedTool {
    /// `tool`, with its [`spec`](Tool::spec).
    pub fn new(tool: impl Tool) -> Self {
        Self {
            spec: tool.spec(),
            tool: Arc::new(tool),
        }
    }

    /// What the model is told about the tool.
    #[must_use]
    pub fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    /// The name the model calls the tool by.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.spec.name
    }
}

impl fmt::Debug for SourcedTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("SourcedTool").field(&self.spec.name).finish()
    }
}

#[cfg(test)]
#[path = "source_tests.rs"]
mod tests;
