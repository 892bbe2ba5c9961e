//! [`SummarizationFailed`]: the summarizer gave no summary, and the middleware was told to fail.

use crate::error::ModelError;

/// The summarizer gave no summary (returned by the run, named after `Summarization`, only
/// with [`OnFailure::Error`](super::OnFailure::Error); by default the step goes on without
/// a summary).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SummarizationFailed {
    /// The summarizer model failed.
    #[error("the summarizer model failed")]
    Model(#[source] ModelError),
    /// The summarizer answered with no text.
    #[error("the summarizer answered with an empty summary")]
    Empty,
}
