//! What a matcher says when trajectories differ: the reason, and both sides aligned.

use std::fmt;

/// Why an actual trajectory does not match the expected one.
///
/// Its `Display` (and its `Debug`, so that a test's `unwrap()` or `?` prints it) reads:
///
/// ```text
/// trajectory mismatch (agentevals strict, tool arguments exact): message 1: call weather({"city":"Rome"}) matches no expected call of this message
///       expected                          | actual
///    0  user "Weather in Paris?"          | user "Weather in Paris?"
/// >  1  model → weather({"city":"Paris"}) | model → weather({"city":"Rome"})
///    2  tool weather: "18°C"              | tool weather: "24°C"
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Mismatch(Box<Inner>);

// Boxed: a matcher's `Result<(), Mismatch>` stays a pointer wide on the path that passes.
#[derive(Clone, PartialEq, Eq)]
struct Inner {
    matcher: String,
    reason: String,
    expected: Vec<String>,
    actual: Vec<String>,
    expected_at: Option<usize>,
    actual_at: Option<usize>,
}

impl Mismatch {
    pub(crate) fn new(
        matcher: String,
        reason: String,
        expected: Vec<String>,
        actual: Vec<String>,
    ) -> Self {
        Self(Box::new(Inner {
            matcher,
            reason,
            expected,
            actual,
            expected_at: None,
            actual_at: None,
        }))
    }

    /// Marks the expected side's line `at`.
    pub(crate) fn expected_at(mut self, at: usize) -> Self {
        self.0.expected_at = Some(at);
        self
    }

    /// Marks the actual side's line `at`.
    pub(crate) fn actual_at(mut self, at: usize) -> Self {
        self.0.actual_at = Some(at);
        self
    }

    /// The matcher and its settings: `"agentevals strict, tool arguments exact"`.
    #[must_use]
    pub fn matcher(&self) -> &str {
        &self.0.matcher
    }

    /// Why they differ, naming the step (or call) at fault.
    #[must_use]
    pub fn reason(&self) -> &str {
        &self.0.reason
    }

    /// The index of the expected side's line at fault (a step, or for a matcher of tool calls
    /// a call), when one is.
    #[must_use]
    pub fn expected_index(&self) -> Option<usize> {
        self.0.expected_at
    }

    /// The index of the actual side's line at fault, when one is.
    #[must_use]
    pub fn actual_index(&self) -> Option<usize> {
        self.0.actual_at
    }
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let this = &self.0;
        writeln!(f, "trajectory mismatch ({}): {}", this.matcher, this.reason)?;
        let width = this
            .expected
            .iter()
            .map(|line| line.chars().count())
            .max()
            .unwrap_or(0)
            .max("expected".len());
        // Six columns: the mark, a space, two digits of index, two spaces.
        write!(f, "      {:<width$} | actual", "expected")?;
        for row in 0..this.expected.len().max(this.actual.len()) {
            let marked = this.expected_at == Some(row) || this.actual_at == Some(row);
            let left = this.expected.get(row).map_or("", String::as_str);
            let right = this.actual.get(row).map_or("", String::as_str);
            // `{:<width$}` pads by characters, so arrows and accents stay aligned.
            write!(
                f,
                "\n{} {row:>2}  {left:<width$} | {right}",
                if marked { '>' } else { ' ' }
            )?;
        }
        Ok(())
    }
}

impl fmt::Debug for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for Mismatch {}
