//! [`ModelProfile`]: what a model can read at once.

/// What a model can read and write at once: the size of its context window and, if known,
/// the most tokens it writes in one answer.
///
/// Settings given as a fraction of the context ("summarize at 80 % of the window") are
/// turned into tokens with it.
///
/// ```
/// use hookchain::builtin::tokens::ModelProfile;
///
/// let profile = ModelProfile::new(200_000).max_output_tokens(8_192);
/// assert_eq!(profile.context_window(), 200_000);
/// assert_eq!(profile.tokens_at(0.8), 160_000);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelProfile {
    context_window: u64,
    max_output_tokens: Option<u64>,
}

impl ModelProfile {
    /// A model whose context window holds `context_window` tokens.
    #[must_use]
    pub const fn new(context_window: u64) -> Self {
        Self {
            context_window,
            max_output_tokens: None,
        }
    }

    /// The most tokens the model writes in one answer.
    #[must_use]
    pub const fn max_output_tokens(mut self, tokens: u64) -> Self {
        self.max_output_tokens = Some(tokens);
        self
    }

    /// The context window, in tokens.
    #[must_use]
    pub const fn context_window(&self) -> u64 {
        self.context_window
    }

    /// The most tokens the model writes in one answer, if set.
    #[must_use]
    pub const fn output_limit(&self) -> Option<u64> {
        self.max_output_tokens
    }

    /// `fraction` of the context window, in tokens (rounded down; a fraction outside `0..=1`
    /// is clamped to it).
    #[must_use]
    pub fn tokens_at(&self, fraction: f64) -> u64 {
        let fraction = if fraction.is_nan() {
            0.0
        } else {
            fraction.clamp(0.0, 1.0)
        };
        // Exact for windows below 2^53 tokens, which every real window is.
        (self.context_window as f64 * fraction).floor() as u64
    }
}
