//! The cassette file: its serde types, read and written atomically.

use std::fs;
use std::io::Write as _;
use std::path::Path;

use hookchain_core::model::{ModelEvent, ModelResponse, StopReason, Usage};
use hookchain_core::{ModelError, ToolCall};
use serde::{Deserialize, Serialize};

use super::CassetteError;

/// The version of the file format this crate writes and reads.
pub(crate) const FORMAT_VERSION: u32 = 1;

/// What a cassette file holds: the model calls, in the order they were made.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct CassetteFile {
    pub(crate) version: u32,
    #[serde(default)]
    pub(crate) interactions: Vec<Interaction>,
}

/// One recorded model call.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Interaction {
    /// The request's fingerprint (see the module docs of `cassette`).
    pub(crate) request: serde_json::Value,
    /// The answer (assembled from the events, for a streamed call); its usage included.
    pub(crate) response: ModelResponse,
    /// A streamed call's events, with the time each came after the call began.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) events: Option<Vec<TimedEvent>>,
}

/// An event of a streamed call and when it came.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct TimedEvent {
    /// Milliseconds after the call began.
    pub(crate) at_ms: u64,
    #[serde(flatten)]
    pub(crate) event: RecordedEvent,
}

/// A [`ModelEvent`] as the file spells it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub(crate) enum RecordedEvent {
    TextDelta {
        index: usize,
        text: String,
    },
    ReasoningDelta {
        index: usize,
        text: String,
    },
    ReasoningSignature {
        index: usize,
        signature: String,
    },
    RedactedReasoning {
        index: usize,
        data: String,
    },
    ToolCallStart {
        index: usize,
        id: String,
        name: String,
    },
    ToolCallDelta {
        index: usize,
        arguments: String,
    },
    ToolCallEnd {
        index: usize,
        call: ToolCall,
    },
    Usage {
        usage: Usage,
    },
    Metadata {
        key: String,
        value: serde_json::Value,
    },
    Finish {
        stop_reason: StopReason,
    },
}

impl RecordedEvent {
    /// The event to record, or an error for a kind of event this version cannot write.
    pub(crate) fn record(event: &ModelEvent) -> Result<Self, ModelError> {
        let event = event.clone();
        Ok(match event {
            ModelEvent::TextDelta { index, text } => Self::TextDelta { index, text },
            ModelEvent::ReasoningDelta { index, text } => Self::ReasoningDelta { index, text },
            ModelEvent::ReasoningSignature { index, signature } => {
                Self::ReasoningSignature { index, signature }
            }
            ModelEvent::RedactedReasoning { index, data } => {
                Self::RedactedReasoning { index, data }
            }
            ModelEvent::ToolCallStart { index, id, name } => {
                Self::ToolCallStart { index, id, name }
            }
            ModelEvent::ToolCallDelta { index, arguments } => {
                Self::ToolCallDelta { index, arguments }
            }
            ModelEvent::ToolCallEnd { index, call } => Self::ToolCallEnd { index, call },
            ModelEvent::Usage(usage) => Self::Usage { usage },
            ModelEvent::Metadata { key, value } => Self::Metadata { key, value },
            ModelEvent::Finish { stop_reason } => Self::Finish { stop_reason },
            other => {
                return Err(ModelError::other(format!(
                    "the cassette cannot record the model event {other:?}"
                )));
            }
        })
    }

    /// The event to replay.
    pub(crate) fn replay(self) -> ModelEvent {
        match self {
            Self::TextDelta { index, text } => ModelEvent::TextDelta { index, text },
            Self::ReasoningDelta { index, text } => ModelEvent::ReasoningDelta { index, text },
            Self::ReasoningSignature { index, signature } => {
                ModelEvent::ReasoningSignature { index, signature }
            }
            Self::RedactedReasoning { index, data } => {
                ModelEvent::RedactedReasoning { index, data }
            }
            Self::ToolCallStart { index, id, name } => {
                ModelEvent::ToolCallStart { index, id, name }
            }
            Self::ToolCallDelta { index, arguments } => {
                ModelEvent::ToolCallDelta { index, arguments }
            }
            Self::ToolCallEnd { index, call } => ModelEvent::ToolCallEnd { index, call },
            Self::Usage { usage } => ModelEvent::Usage(usage),
            Self::Metadata { key, value } => ModelEvent::Metadata { key, value },
            Self::Finish { stop_reason } => ModelEvent::Finish { stop_reason },
        }
    }
}

/// Reads the cassette at `path`: `None` if there is no file.
pub(crate) fn load(path: &Path) -> Result<Option<CassetteFile>, CassetteError> {
    let text = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(CassetteError::io(path, "cannot read the cassette", error)),
    };
    let file: CassetteFile = serde_json::from_str(&text)
        .map_err(|error| CassetteError::corrupt(path, format!("not a cassette: {error}")))?;
    if file.version != FORMAT_VERSION {
        return Err(CassetteError::corrupt(
            path,
            format!(
                "cassette format version {} (this version of hookchain-eval reads {FORMAT_VERSION})",
                file.version
            ),
        ));
    }
    Ok(Some(file))
}

/// Writes `file` to `path` atomically: to a temporary file beside it, then renamed over it, so a
/// reader (or a crash) never sees half a cassette.
pub(crate) fn save(path: &Path, file: &CassetteFile) -> Result<(), CassetteError> {
    let mut text = serde_json::to_string_pretty(file)
        .map_err(|error| CassetteError::io(path, "cannot serialize the cassette", error))?;
    text.push('\n');
    if let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
        fs::create_dir_all(dir).map_err(|error| {
            CassetteError::io(path, "cannot create the cassette's folder", error)
        })?;
    }
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".{}.tmp", std::process::id()));
    let temporary = path.with_file_name(name);
    let written = fs::File::create(&temporary).and_then(|mut out| {
        out.write_all(text.as_bytes())?;
        out.sync_all()
    });
    if let Err(error) = written.and_then(|()| fs::rename(&temporary, path)) {
        let _ = fs::remove_file(&temporary);
        return Err(CassetteError::io(path, "cannot write the cassette", error));
    }
    Ok(())
}
