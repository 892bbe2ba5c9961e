//! A stdio server's child process: spawned in a process group of its own, its stderr logged
//! and its last lines kept.

use std::collections::VecDeque;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use process_wrap::tokio::{CommandWrap, KillOnDrop, ProcessGroup};
use rmcp::transport::TokioChildProcess;
use tokio::process::ChildStderr;
use tokio::task::JoinHandle;
use tokio_util::codec::{AnyDelimiterCodec, AnyDelimiterCodecError, FramedRead};

use crate::error::Error;
use crate::server::StdioCommand;

/// The most stderr lines kept for an error message.
const TAIL_LINES: usize = 20;

/// The longest stderr line read; a longer one is cut (what remains of it is skipped).
const MAX_LINE: usize = 4096;

/// The last lines a server wrote to stderr, shared by its reader task and the errors.
#[derive(Debug, Clone, Default)]
pub(crate) struct StderrTail(Arc<Mutex<VecDeque<String>>>);

impl StderrTail {
    fn push(&self, line: String) {
        let mut lines = self
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if lines.len() == TAIL_LINES {
            lines.pop_front();
        }
        lines.push_back(line);
    }

    /// The kept lines, joined, or `None` if there are none.
    pub(crate) fn text(&self) -> Option<String> {
        let lines = self
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        (!lines.is_empty()).then(|| lines.iter().cloned().collect::<Vec<_>>().join("\n"))
    }
}

/// Starts `command` for the server `server`; returns its transport and the task that reads
/// its stderr (which ends when the process closes stderr, at its exit). The process is the leader of a new process
/// group, so that killing it kills what it started too (`npx` runs `node` as a child), and
/// is killed when its handle is dropped even where no runtime is left to reap it.
pub(crate) fn spawn(
    server: &str,
    command: &StdioCommand,
    tail: &StderrTail,
) -> Result<(TokioChildProcess, Option<JoinHandle<()>>), Error> {
    let mut cmd = tokio::process::Command::new(&command.program);
    cmd.args(&command.args);
    for (key, value) in &command.env {
        cmd.env(key, value);
    }
    if let Some(dir) = &command.current_dir {
        cmd.current_dir(dir);
    }
    let mut wrapped = CommandWrap::from(cmd);
    wrapped.wrap(ProcessGroup::leader()).wrap(KillOnDrop);
    let (process, stderr) = TokioChildProcess::builder(wrapped)
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| Error::Spawn {
            server: server.to_owned(),
            program: command.program.to_string_lossy().into_owned(),
            source,
        })?;
    let reader =
        stderr.map(|stderr| tokio::spawn(forward_stderr(server.to_owned(), stderr, tail.clone())));
    Ok((process, reader))
}

/// Logs each line the server writes to stderr and keeps the last ones, until it closes
/// stderr (when it exits). Lines are read as bytes (a line that is not UTF-8 is shown
/// lossily): a decoding error must not stop the reading, or a server that goes on writing
/// would block on a full pipe.
async fn forward_stderr(server: String, stderr: ChildStderr, tail: StderrTail) {
    let codec = AnyDelimiterCodec::new_with_max_length(b"\n".to_vec(), Vec::new(), MAX_LINE);
    let mut lines = FramedRead::new(stderr, codec);
    while let Some(line) = lines.next().await {
        match line {
            Ok(line) => {
                let line = String::from_utf8_lossy(&line);
                let line = line.trim_end_matches('\r');
                tracing::info!(target: "hookchain_mcp::stderr", server = %server, "{line}");
                tail.push(line.to_owned());
            }
            // The codec skips the rest of the line and goes on.
            Err(AnyDelimiterCodecError::MaxChunkLengthExceeded) => {
                tail.push(format!("[a line longer than {MAX_LINE} bytes]"));
            }
            Err(AnyDelimiterCodecError::Io(error)) => {
                tracing::debug!(target: "hookchain_mcp::stderr", server = %server, %error, "stderr unreadable");
                break;
            }
        }
    }
}
