//! The errors of cassettes.

use std::fmt;
use std::path::{Path, PathBuf};

/// What went wrong with a cassette: its file, its mode, or a call it has no recording for.
#[derive(Debug)]
#[non_exhaustive]
pub struct CassetteError {
    /// What kind of failure.
    pub kind: CassetteErrorKind,
    /// The cassette's file.
    pub path: PathBuf,
    /// What happened, for a person: for a drift, the differing fields of the request.
    pub message: String,
    source: Option<std::io::Error>,
}

/// The kinds of [`CassetteError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CassetteErrorKind {
    /// The file could not be read or written.
    Io,
    /// The file is not a cassette (bad JSON, wrong shape, another format version).
    Corrupt,
    /// Mode `none` and no file.
    Missing,
    /// The mode (in code or in `HOOKCHAIN_CASSETTE_MODE`) is not one of `none`, `once`,
    /// `new_episodes`, `all`.
    UnknownMode,
    /// A request differs from the recorded one it should match.
    Drift,
    /// A request came after every recorded call was replayed.
    Exhausted,
}

impl CassetteError {
    pub(crate) fn new(kind: CassetteErrorKind, path: &Path, message: impl Into<String>) -> Self {
        Self {
            kind,
            path: path.to_path_buf(),
            message: message.into(),
            source: None,
        }
    }

    pub(crate) fn io(path: &Path, what: &str, error: impl Into<std::io::Error>) -> Self {
        let error = error.into();
        let mut this = Self::new(CassetteErrorKind::Io, path, format!("{what}: {error}"));
        this.source = Some(error);
        this
    }

    pub(crate) fn corrupt(path: &Path, message: impl Into<String>) -> Self {
        Self::new(CassetteErrorKind::Corrupt, path, message)
    }
}

impl fmt::Display for CassetteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cassette {}: {}", self.path.display(), self.message)
    }
}

impl std::error::Error for CassetteError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_ref()
            .map(|source| source as &(dyn std::error::Error + 'static))
    }
}
