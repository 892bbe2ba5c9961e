//! A tool with an effect outside the run, recorded so a test can count how often it ran: in
//! memory, or in a file when the runs are in several processes.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use hookchain::prelude::*;
use hookchain::{Content, Tool, ToolError, ToolSpec};
use serde_json::json;

/// Where an [`EffectTool`] records its runs, one `<tool> <idempotency key>` line each.
#[derive(Clone)]
pub(crate) enum Effects {
    Memory(Arc<Mutex<Vec<String>>>),
    File(PathBuf),
}

impl Effects {
    /// An empty record in memory.
    pub(crate) fn memory() -> Self {
        Effects::Memory(Arc::default())
    }

    /// The record in `<dir>/side-effects.txt`.
    pub(crate) fn file(dir: &Path) -> Self {
        Effects::File(dir.join("side-effects.txt"))
    }

    /// The lines recorded so far.
    pub(crate) fn lines(&self) -> Vec<String> {
        match self {
            Effects::Memory(lines) => lines.lock().unwrap().clone(),
            Effects::File(path) => std::fs::read_to_string(path)
                .unwrap_or_default()
                .lines()
                .map(str::to_owned)
                .collect(),
        }
    }

    /// The lines of the runs of `tool`.
    pub(crate) fn of(&self, tool: &str) -> Vec<String> {
        let prefix = format!("{tool} ");
        self.lines()
            .into_iter()
            .filter(|line| line.starts_with(&prefix))
            .collect()
    }

    pub(crate) fn record(&self, line: String) {
        match self {
            Effects::Memory(lines) => lines.lock().unwrap().push(line),
            Effects::File(path) => {
                let mut file = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .expect("open the side-effect file");
                // One write: lines of several processes never interleave.
                file.write_all(format!("{line}\n").as_bytes())
                    .expect("record");
                file.sync_all().expect("sync the side-effect file");
            }
        }
    }
}

/// A tool that records `<name> <idempotency key>` in `effects` each time it runs, then answers
/// `<name> done` — or, if `hang`, never returns (a call still in flight when its worker stops).
pub(crate) struct EffectTool {
    pub(crate) name: &'static str,
    pub(crate) effects: Effects,
    pub(crate) hang: bool,
}

impl Tool for EffectTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            self.name,
            "Records that it ran.",
            json!({ "type": "object" }),
        )
    }

    async fn call(
        &self,
        cx: ToolContext<'_>,
        _arguments: serde_json::Value,
    ) -> Result<Content, ToolError> {
        self.effects
            .record(format!("{} {}", self.name, cx.idempotency_key()));
        if self.hang {
            std::future::pending::<()>().await;
        }
        Ok(format!("{} done", self.name).into())
    }
}

/// A fresh directory `<target tmp>/<file>/<test>-<pid>` for one test (one per process:
/// concurrent runs of the tests must not share files).
pub(crate) fn temp_dir(file: &str, test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(file)
        .join(format!("{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
