//! What a user reads in a diagnostic (DESIGN §12): no `.stderr` snapshot of `ui-tests/` names
//! an item of hookchain's machinery (a marker trait, a conversion, `__private`) or points into
//! hookchain's private source. A case that rustc explains in its own words is recorded too, and
//! must pass the same check.

use std::fs;
use std::path::{Path, PathBuf};

/// Names a user never wrote and cannot look up: the list, and the checks' helpers.
const INTERNAL: &[&str] = &[
    "__private",
    "IntoFlow",
    "IntoDone",
    "IntoToolResult",
    "IntoModelResponse",
    "ValidState",
    "ValidThreadState",
    "MiddlewareState",
    "ToolArgument",
    "FallibleToolOutput",
    "ToolOutput",
    "ContentOutput",
    "ToolResultOutput",
    "PluginMember",
    "NoChainYet",
    "Follows<",
    "PhaseOf",
    "PhaseProbe",
    "TypeProbe",
    "NotMiddleware",
    "ChainProbe",
    "ChainChecks",
    "Converted<",
    "FlowReturn",
    "DoneReturn",
    "WrapModelCallReturn",
    "WrapToolCallReturn",
    "StateIs",
    "Identified",
    "Internal",
    "__hookchain",
    "src/private/",
];

fn stderr_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            stderr_files(&path, found);
        } else if path.extension().is_some_and(|ext| ext == "stderr") {
            found.push(path);
        }
    }
}

#[test]
fn no_stderr_snapshot_names_an_internal_item() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("ui-tests");
    let mut files = Vec::new();
    stderr_files(&root, &mut files);
    assert!(files.len() > 100, "the snapshots: {}", files.len());
    let mut offences = Vec::new();
    for file in &files {
        let text = fs::read_to_string(file).unwrap();
        for (number, line) in text.lines().enumerate() {
            for name in INTERNAL {
                if line.contains(name) {
                    offences.push(format!(
                        "{}:{}: `{name}` in: {line}",
                        file.strip_prefix(&root).unwrap().display(),
                        number + 1
                    ));
                }
            }
        }
    }
    assert!(
        offences.is_empty(),
        "internal names in diagnostics:\n{}",
        offences.join("\n")
    );
}
