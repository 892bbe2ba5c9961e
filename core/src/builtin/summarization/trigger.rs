//! When [`Summarization`](super::Summarization) summarizes ([`Trigger`]) and what it keeps
//! ([`Keep`]).

use crate::builtin::ConfigError;
use crate::builtin::tokens::ModelProfile;

/// A condition for summarizing: every bound it sets must be reached (`>=`). Give several to
/// [`trigger`](super::SummarizationBuilder::trigger): any one of them reached is enough.
///
/// ```
/// use hookchain::builtin::summarization::Trigger;
///
/// // 50 messages or more, and at least 2,000 tokens.
/// let busy = Trigger::messages(50).and_tokens(2_000);
/// // 80 % of the model's context window (needs a `ModelProfile`).
/// let full = Trigger::fraction(0.8);
/// # let _ = (busy, full);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Trigger {
    tokens: Option<u64>,
    messages: Option<usize>,
    fraction: Option<f64>,
}

impl Trigger {
    /// When the history holds `tokens` tokens or more.
    #[must_use]
    pub const fn tokens(tokens: u64) -> Self {
        Self {
            tokens: Some(tokens),
            messages: None,
            fraction: None,
        }
    }

    /// When the history holds `messages` messages or more.
    #[must_use]
    pub const fn messages(messages: usize) -> Self {
        Self {
            tokens: None,
            messages: Some(messages),
            fraction: None,
        }
    }

    /// When the history fills `fraction` (in `(0, 1]`) of the model's context window or more.
    #[must_use]
    pub const fn fraction(fraction: f64) -> Self {
        Self {
            tokens: None,
            messages: None,
            fraction: Some(fraction),
        }
    }

    /// This condition, and `tokens` tokens or more.
    #[must_use]
    pub const fn and_tokens(mut self, tokens: u64) -> Self {
        self.tokens = Some(tokens);
        self
    }

    /// This condition, and `messages` messages or more.
    #[must_use]
    pub const fn and_messages(mut self, messages: usize) -> Self {
        self.messages = Some(messages);
        self
    }

    /// This condition, and `fraction` of the context window or more.
    #[must_use]
    pub const fn and_fraction(mut self, fraction: f64) -> Self {
        self.fraction = Some(fraction);
        self
    }

    /// Whether a history of `tokens` tokens in `messages` messages reaches every bound.
    pub(crate) fn reached(
        &self,
        tokens: u64,
        messages: usize,
        profile: Option<ModelProfile>,
    ) -> bool {
        let fraction_reached = match (self.fraction, profile) {
            (None, _) => true,
            (Some(fraction), Some(profile)) => tokens >= fraction_tokens(profile, fraction),
            // `build` refuses a fraction without a profile.
            (Some(_), None) => false,
        };
        self.tokens.is_none_or(|bound| tokens >= bound)
            && self.messages.is_none_or(|bound| messages >= bound)
            && fraction_reached
    }

    /// An error names a bound that cannot work.
    pub(crate) fn check(&self, profile: Option<ModelProfile>) -> Result<(), ConfigError> {
        if self.tokens.is_none() && self.messages.is_none() && self.fraction.is_none() {
            return Err(ConfigError::new(
                "trigger",
                "a trigger sets no bound: use Trigger::tokens, ::messages or ::fraction",
            ));
        }
        if self.tokens == Some(0) || self.messages == Some(0) {
            return Err(ConfigError::new(
                "trigger",
                "a bound of 0 is always reached: every step would summarize",
            ));
        }
        if let Some(fraction) = self.fraction {
            check_fraction("trigger", fraction, profile)?;
        }
        Ok(())
    }
}

/// How much of the recent history [`Summarization`](super::Summarization) keeps as it is.
///
/// The kept part never begins between an assistant's tool calls and their results: a cut
/// that would moves to the assistant message (keeping more) for [`Messages`](Keep::Messages),
/// and past its results (keeping less) for [`Tokens`](Keep::Tokens) and
/// [`Fraction`](Keep::Fraction), whose number is a ceiling. The last message, with the
/// results of its calls, is always kept.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Keep {
    /// At least the last `n` messages.
    Messages(usize),
    /// As many recent messages as fit in this many tokens.
    Tokens(u64),
    /// As many recent messages as fit in this fraction (in `(0, 1]`) of the model's context
    /// window (needs a [`ModelProfile`]).
    Fraction(f64),
}

impl Default for Keep {
    /// The last 20 messages.
    fn default() -> Self {
        Keep::Messages(20)
    }
}

impl Keep {
    /// An error names a setting that cannot work.
    pub(crate) fn check(&self, profile: Option<ModelProfile>) -> Result<(), ConfigError> {
        match *self {
            Keep::Messages(0) | Keep::Tokens(0) => Err(ConfigError::new(
                "keep",
                "keeping nothing would summarize the question the model is to answer: keep at \
                 least 1 message or token",
            )),
            Keep::Fraction(fraction) => check_fraction("keep", fraction, profile),
            Keep::Messages(_) | Keep::Tokens(_) => Ok(()),
        }
    }

    /// The bound in messages or tokens, fractions turned into tokens.
    pub(crate) fn resolve(&self, profile: Option<ModelProfile>) -> Bound {
        match *self {
            Keep::Messages(n) => Bound::Messages(n),
            Keep::Tokens(n) => Bound::Tokens(n),
            Keep::Fraction(fraction) => {
                Bound::Tokens(profile.map_or(0, |profile| fraction_tokens(profile, fraction)))
            }
        }
    }
}

/// What [`Keep`] comes to for one history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bound {
    /// At least this many messages.
    Messages(usize),
    /// At most this many tokens (but at least the last message).
    Tokens(u64),
}

/// `fraction` of the window, at least 1 token (a tiny fraction of a tiny window is not 0).
fn fraction_tokens(profile: ModelProfile, fraction: f64) -> u64 {
    profile.tokens_at(fraction).max(1)
}

fn check_fraction(
    field: &'static str,
    fraction: f64,
    profile: Option<ModelProfile>,
) -> Result<(), ConfigError> {
    if !(fraction > 0.0 && fraction <= 1.0) {
        return Err(ConfigError::new(
            field,
            format!("the fraction {fraction} of the context window is not in (0, 1]"),
        ));
    }
    match profile {
        None => Err(ConfigError::new(
            "profile",
            format!(
                "the `{field}` is a fraction of the context window: give the model's \
                 `ModelProfile` (its context size)"
            ),
        )),
        Some(profile) if profile.context_window() == 0 => Err(ConfigError::new(
            "profile",
            "the context window is 0 tokens",
        )),
        Some(_) => Ok(()),
    }
}
