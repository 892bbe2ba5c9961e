//! What a registry with [`ToolSource`]s offers the model: its fixed tools and the sources'
//! current ones, merged, made again only when a source's version changes.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use super::registry::ErasedTool;
use super::{ToolSource, ToolSpec};
use crate::lock::lock;
use crate::shared::Shared;

/// The merged tools as of the sources' `versions`.
pub(super) struct Offered {
    /// Each source's version when its tools were taken, in registration order.
    versions: Vec<u64>,
    /// The fixed tools' specs, then the sources' (shared with every model request).
    pub(super) specs: Shared<Vec<ToolSpec>>,
    /// The sources' tools by name (the fixed ones are the registry's own).
    pub(super) sourced: BTreeMap<String, Arc<dyn ErasedTool>>,
}

/// The sources of a registry and the last merge of their tools.
#[derive(Default)]
pub(super) struct Sources {
    sources: Vec<Box<dyn ToolSource>>,
    /// `None` until the first model call, and after a registration.
    last: Mutex<Option<Arc<Offered>>>,
}

impl Sources {
    pub(super) fn is_empty(&self) -> bool {
        self.sources.is_empty()
    }

    pub(super) fn add(&mut self, source: Box<dyn ToolSource>) {
        self.sources.push(source);
        self.forget();
    }

    /// Drops the last merge: the fixed tools changed.
    pub(super) fn forget(&mut self) {
        *self
            .last
            .get_mut()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = None;
    }

    /// The tools offered now beside the fixed ones (`fixed`; `is_fixed` says whether a name
    /// is one of theirs): the last merge while every source's version is the one it was made
    /// at, a new one otherwise.
    ///
    /// The lock is held only to read or replace the last merge, never while a source is
    /// asked: a source's code cannot deadlock the registry, nor hold up other model calls.
    /// Two calls that both see a change both merge; the later merge stored is kept, and one
    /// older than the sources is made again at the next call.
    pub(super) fn current(
        &self,
        fixed: &Shared<Vec<ToolSpec>>,
        is_fixed: &dyn Fn(&str) -> bool,
    ) -> Arc<Offered> {
        let last = lock(&self.last).clone();
        if let Some(offered) = last
            && offered
                .versions
                .iter()
                .zip(&self.sources)
                .all(|(seen, source)| *seen == source.version())
        {
            return offered;
        }
        let offered = Arc::new(self.merge(fixed, is_fixed));
        *lock(&self.last) = Some(Arc::clone(&offered));
        offered
    }

    /// The fixed tools, then each source's in order, leaving out a name already taken.
    fn merge(&self, fixed: &Shared<Vec<ToolSpec>>, is_fixed: &dyn Fn(&str) -> bool) -> Offered {
        let mut specs = Vec::clone(fixed);
        let mut sourced = BTreeMap::new();
        let mut versions = Vec::with_capacity(self.sources.len());
        for (index, source) in self.sources.iter().enumerate() {
            // The version before the tools: a change between the two is seen next time.
            versions.push(source.version());
            for tool in source.tools() {
                let name = tool.name();
                if is_fixed(name) {
                    tracing::warn!(
                        tool = %name,
                        source = index,
                        "a tool source offers `{name}`, the name of one of the agent's own tools: \
                         it is left out"
                    );
                    continue;
                }
                if sourced.contains_key(name) {
                    tracing::warn!(
                        tool = %name,
                        source = index,
                        "a tool source offers `{name}`, which a source registered before it (or \
                         a tool before it in the same source) offers: it is left out"
                    );
                    continue;
                }
                let name = name.to_owned();
                specs.push(tool.spec().clone());
                sourced.insert(name, tool.tool);
            }
        }
        Offered {
            versions,
            specs: Shared::new(specs),
            sourced,
        }
    }
}
