//! The cassette file: its serde types, read and written atomically.

use std::fs;
use std::io::Write as _;
use std::path::Path;

use hookchain_core::model::{ModelEvent, ModelResponse};
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
    pub(crate) event: ModelEvent,
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
