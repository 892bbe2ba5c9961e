//! MCP's official conformance suite (`@modelcontextprotocol/conformance`), as `.ci/run`
//! installs it: where its command is, and what a run of it said.

use std::path::{Path, PathBuf};
use std::process::Output;

/// The revisions the client and the server claim: each is a run of the suite.
pub const REVISIONS: [&str; 2] = ["2025-11-25", "2026-07-28"];

/// The suite's command: `$MCP_CONFORMANCE`, or where `.ci/run` installs it. `None` when it is
/// not installed (and the test says it skipped).
pub fn suite() -> Option<PathBuf> {
    let installed = std::env::var_os("HOME")
        .map(|home| Path::new(&home).join(".cache/hookchain-npm/conformance/conformance"))
        .filter(|path| path.exists());
    let suite = std::env::var_os("MCP_CONFORMANCE")
        .map(Into::into)
        .or(installed);
    if suite.is_none() {
        println!(
            "skipped: the conformance suite is not installed (.ci/run installs it; or set \
             MCP_CONFORMANCE to its command)"
        );
    }
    suite
}

/// Whether the run of the `leg` (client or server) at `revision` that gave `output` passed
/// (its failures all in its baseline); its total is printed, and its whole output when it
/// failed.
pub fn passed(leg: &str, revision: &str, output: &Output) -> bool {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let total = stdout
        .lines()
        .find(|line| line.starts_with("Total:"))
        .unwrap_or("no total");
    println!("{leg}, {revision}: {total}");
    // A run that failed, or one scenario asked for (`MCP_CONFORMANCE_SCENARIO_SHOWN`): whole.
    if !output.status.success() || std::env::var_os("MCP_CONFORMANCE_SCENARIO_SHOWN").is_some() {
        println!("{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    }
    output.status.success()
}
