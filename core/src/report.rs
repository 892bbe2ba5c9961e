//! An error and its causes, below every layer: the boxed error each layer carries its causes
//! in ([`BoxError`]), the walk through the causes that finds one by its type, and their
//! display ([`Report`]). It names no layer, so that every layer can use it.

use std::fmt;

/// A type-erased error, as carried inside [`Error`](crate::Error) and [`ModelError`](crate::ModelError).
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Displays an error and its causes, each once: `what failed: why: why that`.
///
/// ```
/// use hookchain::error::Report;
///
/// let io = std::io::Error::other("connection reset");
/// let error = hookchain::Error::middleware("Audit", hookchain::Hook::AfterAgent, io);
/// assert_eq!(
///     Report(&error).to_string(),
///     "middleware `Audit` failed in `after_agent`: connection reset"
/// );
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Report<'a>(pub &'a (dyn std::error::Error + 'static));

impl fmt::Display for Report<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)?;
        let mut cause = self.0.source();
        while let Some(error) = cause {
            write!(f, ": {error}")?;
            cause = error.source();
        }
        Ok(())
    }
}

/// The first error of type `E` among `error` and its causes.
pub(crate) fn find_in_chain<'e, E: std::error::Error + 'static>(
    error: &'e (dyn std::error::Error + 'static),
) -> Option<&'e E> {
    let mut cause = Some(error);
    while let Some(error) = cause {
        if let Some(found) = error.downcast_ref::<E>() {
            return Some(found);
        }
        cause = error.source();
    }
    None
}
