//! Personal data (e-mail addresses, card numbers, IP and MAC addresses, URLs, your own kinds)
//! found in the input, the model's answers or tool results, and blocked, redacted, masked or
//! hashed — in the history itself (feature `pii`).
//!
//! ```
//! use hookchain::builtin::{Pii, PiiStrategy, PiiType};
//! use hookchain::{Agent, ModelResponse, ScriptedModel};
//! # futures::executor::block_on(async {
//! let pii = Pii::builder()
//!     .detect(PiiType::Email, PiiStrategy::Redact)
//!     .detect(PiiType::CreditCard, PiiStrategy::Mask)
//!     .build()?;
//! let model = ScriptedModel::new([ModelResponse::text("Noted.")]);
//! let agent = Agent::builder(model).chain(pii).build()?;
//! let output = agent.run("I am ann@example.com, card 4111 1111 1111 1111").await.unwrap();
//! assert_eq!(output.messages[0].text(), "I am [REDACTED_EMAIL], card **** **** **** 1111");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
//!
//! # Rules
//!
//! - Detectors: the built-in [`PiiType`]s (an e-mail address, a card number that passes the
//!   Luhn check, an IPv4 or IPv6 address, a MAC address, a URL), a regular expression
//!   ([`custom_regex`](PiiBuilder::custom_regex)) or a function
//!   ([`custom`](PiiBuilder::custom)) of your own; each with its [`PiiStrategy`]: block,
//!   redact (`[REDACTED_EMAIL]`), mask (keep the last 4 digits, the last octet, the domain) or
//!   hash (stable: the documented SHA-256 prefix).
//! - Where: the input (user and system messages, at the start of every run; on by default),
//!   the model's answers (its text and reasoning, after every model call) and tool results
//!   (as each call returns); each switched on or off by itself. In every message, all of its
//!   text is read: every text part, reasoning, the strings inside a tool result's JSON (not
//!   its object keys), a resource link's name, title and description (not its URI), an
//!   embedded text resource's text (not its URI). Images, audio and binary resources are not
//!   read.
//! - What is found is rewritten **in the history**, not in a copy sent to the model: the
//!   checkpoints, the thread, the logs, a summarizer and every later model call see only the
//!   rewritten text. Tool-call arguments are not rewritten (the tools need them as written).
//! - Block: input or an answer with blocked data ends the run with an error naming the
//!   middleware and carrying a [`PiiBlocked`] (the kinds and counts, never the values); a tool
//!   result with blocked data is replaced by an error result saying so, and the run goes on.
//! - Overlapping findings: the one that starts first wins (the longer at the same start).
//! - Each finding is logged at `DEBUG` (the kind, the strategy, where; never the value); a
//!   block at `WARN`.
//!
//! List `Pii` first, so that the middleware after it (an audit, a summarizer) see only
//! rewritten text. Its hooks are `before_agent`, `after_model` and `wrap_tool_call`, so its
//! phase is `Wrap`.
//!
//! # Streams
//!
//! [`redact`](Pii::redact) is the core every hook calls: a text in, the rewritten text (or
//! the block) out. A stream's per-event hook redacts text deltas with
//! [`release`](Pii::release): it keeps the text not yet released (a buffer in its state),
//! appends each delta, and emits what `release` returns; it holds back at most
//! [`look_back`](Pii::look_back) bytes (the longest match of any detector), and never half a
//! finding. At the end of the stream, `release(pending, true)` flushes the rest.

mod detector;
mod error;
mod scan;
mod strategy;
mod stream;

use std::borrow::Cow;
use std::ops::Range;
use std::sync::Arc;

use hookchain_macros::middleware;
use regex::Regex;

pub use detector::PiiType;
pub use error::{PiiBlocked, PiiPlace};
pub use strategy::PiiStrategy;
pub use stream::PendingText;

use self::detector::Detector;
use self::scan::{Rule, find_all, releasable, rewrite};
use super::ConfigError;
use crate::context::{Context, ToolContext};
use crate::error::Error;
use crate::message::{Content, Message, Role, ToolCall, ToolResult};
use crate::middleware::{Emit, ToolNext};
use crate::model::{ModelEvent, ModelResponse};

/// Finds personal data and blocks, redacts, masks or hashes it (see the [module docs](self)).
#[derive(Debug, Clone)]
pub struct Pii {
    rules: Arc<[Rule]>,
    look_back: usize,
    input: bool,
    output: bool,
    tool_results: bool,
}

/// Builds a [`Pii`]; [`build`](Self::build) checks the settings.
#[derive(Debug, Clone)]
#[must_use]
pub struct PiiBuilder {
    rules: Vec<Rule>,
    /// Custom patterns, compiled by `build` (an invalid one is a `ConfigError` there).
    patterns: Vec<(String, String, usize, PiiStrategy)>,
    /// What `Redact` writes for a detector, by the detector's name.
    redactions: Vec<(String, String)>,
    input: bool,
    output: bool,
    tool_results: bool,
}

/// The longest match assumed for a detector of your own that does not say
/// ([`PiiBuilder::custom_regex`]).
pub const DEFAULT_CUSTOM_MAX_LEN: usize = 256;

impl Pii {
    /// A builder with no detector yet; the input switched on, the model's answers and tool
    /// results off.
    pub fn builder() -> PiiBuilder {
        PiiBuilder {
            rules: Vec::new(),
            patterns: Vec::new(),
            redactions: Vec::new(),
            input: true,
            output: false,
            tool_results: false,
        }
    }

    /// `text` with what the detectors find rewritten by their strategies (borrowed when
    /// nothing is found), or [`PiiBlocked`] (with `place` in it) when a blocking detector
    /// finds something.
    pub fn redact<'t>(&self, text: &'t str, place: PiiPlace) -> Result<Cow<'t, str>, PiiBlocked> {
        let found = find_all(&self.rules, text);
        rewrite(&self.rules, text, &found, place)
    }

    /// The longest text any detector matches, in bytes: what a stream holds back.
    #[must_use]
    pub fn look_back(&self) -> usize {
        self.look_back
    }

    /// For streamed text: of `pending` (the text received and not yet released), the part
    /// that can be released now, rewritten, and how many bytes of `pending` it consumes (drop
    /// them from the buffer; keep the rest for the next delta). When the stream is
    /// `finished`, all of it.
    ///
    /// ```
    /// use hookchain::builtin::{Pii, PiiPlace, PiiStrategy, PiiType};
    ///
    /// let pii = Pii::builder().detect(PiiType::Email, PiiStrategy::Redact).build()?;
    /// let mut pending = String::new();
    /// let mut shown = String::new();
    /// for delta in ["Write to ann@exa", "mple.com today, or ", "later."] {
    ///     pending.push_str(delta);
    ///     let (text, used) = pii.release(&pending, false, PiiPlace::Output)?;
    ///     shown.push_str(&text);
    ///     pending.drain(..used);
    /// }
    /// let (text, _) = pii.release(&pending, true, PiiPlace::Output)?;
    /// shown.push_str(&text);
    /// assert_eq!(shown, "Write to [REDACTED_EMAIL] today, or later.");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn release<'t>(
        &self,
        pending: &'t str,
        finished: bool,
        place: PiiPlace,
    ) -> Result<(Cow<'t, str>, usize), PiiBlocked> {
        let found = find_all(&self.rules, pending);
        let cut = releasable(&found, pending, self.look_back, finished);
        let inside = found.iter().take_while(|f| f.range.end <= cut).count();
        let text = rewrite(&self.rules, &pending[..cut], &found[..inside], place)?;
        Ok((text, cut))
    }

    /// Rewrites the text of `message`: its text and reasoning parts, and a tool result's JSON,
    /// resource links and text resources; whether anything changed.
    fn redact_message(&self, message: &mut Message, place: PiiPlace) -> Result<bool, PiiBlocked> {
        let Some(rewritten) = self.redact_content(&message.content, place)? else {
            return Ok(false);
        };
        message.content = rewritten;
        Ok(true)
    }

    /// `content` with the personal data in every piece of its text rewritten (see
    /// `Content::try_rewrite_text`: text, reasoning, the strings of JSON, a link's name, title
    /// and description, a text resource's text); `None` when there was none.
    fn redact_content(
        &self,
        content: &Content,
        place: PiiPlace,
    ) -> Result<Option<Content>, PiiBlocked> {
        content.try_rewrite_text(|text| match self.redact(text, place)? {
            Cow::Owned(rewritten) => Ok(Some(rewritten)),
            Cow::Borrowed(_) => Ok(None),
        })
    }
}

impl PiiBuilder {
    /// Looks for `kind`, and applies `strategy` to what it finds (a second rule for the same
    /// kind replaces the first).
    pub fn detect(mut self, kind: PiiType, strategy: PiiStrategy) -> Self {
        self.rules
            .retain(|rule| rule.detector.built_in() != Some(kind));
        self.rules.push(Rule {
            detector: Detector::BuiltIn(kind),
            strategy,
            redacted_as: None,
        });
        self
    }

    /// Looks for every built-in [`PiiType`], each with `strategy`.
    pub fn detect_all(self, strategy: PiiStrategy) -> Self {
        PiiType::ALL
            .into_iter()
            .fold(self, |builder, kind| builder.detect(kind, strategy))
    }

    /// Looks for matches of the regular expression `pattern` (the `regex` crate's syntax),
    /// named `name` in replacements and errors (`[REDACTED_<NAME>]`); a match is assumed no
    /// longer than [`DEFAULT_CUSTOM_MAX_LEN`] bytes on streams (see
    /// [`custom_regex_max_len`](Self::custom_regex_max_len)). An invalid pattern is an error
    /// of [`build`](Self::build).
    pub fn custom_regex(
        self,
        name: impl Into<String>,
        pattern: impl Into<String>,
        strategy: PiiStrategy,
    ) -> Self {
        self.custom_regex_max_len(name, pattern, DEFAULT_CUSTOM_MAX_LEN, strategy)
    }

    /// [`custom_regex`](Self::custom_regex), with the longest match in bytes (what a stream
    /// holds back for it).
    pub fn custom_regex_max_len(
        mut self,
        name: impl Into<String>,
        pattern: impl Into<String>,
        max_len: usize,
        strategy: PiiStrategy,
    ) -> Self {
        self.patterns
            .push((name.into(), pattern.into(), max_len, strategy));
        self
    }

    /// Looks for what `find` finds: the byte ranges of personal data in a text (ranges that
    /// are empty, outside the text or not on character boundaries are ignored), each no
    /// longer than `max_len` bytes; named `name` in replacements and errors.
    ///
    /// ```
    /// use hookchain::builtin::{Pii, PiiPlace, PiiStrategy};
    ///
    /// let pii = Pii::builder()
    ///     .custom("badge", 8, PiiStrategy::Redact, |text: &str| {
    ///         text.match_indices("BADGE-").map(|(at, _)| at..(at + 8).min(text.len())).collect()
    ///     })
    ///     .build()?;
    /// assert_eq!(pii.redact("my BADGE-42 here", PiiPlace::Input)?, "my [REDACTED_BADGE] here");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn custom(
        mut self,
        name: impl Into<String>,
        max_len: usize,
        strategy: PiiStrategy,
        find: impl Fn(&str) -> Vec<Range<usize>> + Send + Sync + 'static,
    ) -> Self {
        self.rules.push(Rule {
            detector: Detector::Function {
                name: name.into().into(),
                find: Arc::new(find),
                max_len,
            },
            strategy,
            redacted_as: None,
        });
        self
    }

    /// What [`Redact`](PiiStrategy::Redact) writes for what the detector named `detector`
    /// finds (a built-in's [`PiiType::name`], `"email"`, or a custom detector's name), instead
    /// of `[REDACTED_<NAME>]`. A name that no detector has, or one whose strategy is not
    /// `Redact`, is an error of [`build`](Self::build).
    ///
    /// ```
    /// use hookchain::builtin::{Pii, PiiPlace, PiiStrategy, PiiType};
    ///
    /// let pii = Pii::builder()
    ///     .detect(PiiType::Email, PiiStrategy::Redact)
    ///     .detect(PiiType::Ipv4, PiiStrategy::Redact)
    ///     .redact_as("email", "<an e-mail address>")
    ///     .build()?;
    /// assert_eq!(
    ///     pii.redact("ann@example.com on 10.0.0.7", PiiPlace::Input)?,
    ///     "<an e-mail address> on [REDACTED_IPV4]"
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn redact_as(mut self, detector: impl Into<String>, text: impl Into<String>) -> Self {
        let detector = detector.into();
        self.redactions.retain(|(name, _)| *name != detector);
        self.redactions.push((detector, text.into()));
        self
    }

    /// Whether the input (user and system messages) is checked at the start of every run
    /// (default: yes).
    pub fn input(mut self, on: bool) -> Self {
        self.input = on;
        self
    }

    /// Whether the model's answers are checked (default: no).
    pub fn output(mut self, on: bool) -> Self {
        self.output = on;
        self
    }

    /// Whether tool results are checked (default: no).
    pub fn tool_results(mut self, on: bool) -> Self {
        self.tool_results = on;
        self
    }

    /// The middleware; an error names a setting that cannot work: no detector, every switch
    /// off, a custom pattern that does not compile, a custom detector with an empty name, a
    /// name used twice or a `max_len` of 0.
    pub fn build(self) -> Result<Pii, ConfigError> {
        let mut rules = self.rules;
        for (name, pattern, max_len, strategy) in self.patterns {
            let regex = Regex::new(&pattern).map_err(|error| {
                ConfigError::new("custom_regex", format!("the pattern of `{name}`: {error}"))
            })?;
            rules.push(Rule {
                detector: Detector::Regex {
                    name: name.into(),
                    regex,
                    max_len,
                },
                strategy,
                redacted_as: None,
            });
        }
        if rules.is_empty() {
            return Err(ConfigError::new(
                "detect",
                "no detector: add one with `detect`, `detect_all`, `custom_regex` or `custom`",
            ));
        }
        if !(self.input || self.output || self.tool_results) {
            return Err(ConfigError::new(
                "input",
                "`input`, `output` and `tool_results` are all off: nothing would be checked",
            ));
        }
        for (i, rule) in rules.iter().enumerate() {
            let name = rule.detector.name();
            if name.is_empty() {
                return Err(ConfigError::new("custom", "a detector's name is empty"));
            }
            if rule.detector.max_len() == 0 {
                return Err(ConfigError::new(
                    "max_len",
                    format!("the longest match of `{name}` is 0 bytes"),
                ));
            }
            if rules[..i].iter().any(|r| r.detector.name() == name) {
                return Err(ConfigError::new(
                    "custom",
                    format!("two detectors are named `{name}`"),
                ));
            }
        }
        for (name, text) in self.redactions {
            let Some(rule) = rules.iter_mut().find(|rule| rule.detector.name() == name) else {
                return Err(ConfigError::new(
                    "redact_as",
                    format!("no detector is named `{name}`"),
                ));
            };
            if rule.strategy != PiiStrategy::Redact {
                return Err(ConfigError::new(
                    "redact_as",
                    format!(
                        "`{name}` is handled with {:?}; `redact_as` sets what `Redact` writes",
                        rule.strategy
                    ),
                ));
            }
            rule.redacted_as = Some(text.into());
        }
        let look_back = rules
            .iter()
            .map(|r| r.detector.max_len())
            .max()
            .unwrap_or(0);
        Ok(Pii {
            rules: rules.into(),
            look_back,
            input: self.input,
            output: self.output,
            tool_results: self.tool_results,
        })
    }
}

// `live_stream`: what `check_output` changes, `redact_stream` has already changed on the events.
#[middleware(crate = crate, live_stream)]
impl Pii {
    /// Rewrites the user and system messages of the history, or stops the run.
    #[hook(before_agent)]
    fn check_input(&self, cx: &mut Context) -> Result<(), Error> {
        if !self.input {
            return Ok(());
        }
        let outcome = cx
            .edit_history(|messages| {
                let mut rewritten = 0;
                for message in messages.iter_mut() {
                    if matches!(message.role, Role::User | Role::System)
                        && self.redact_message(message, PiiPlace::Input)?
                    {
                        rewritten += 1;
                    }
                }
                Ok::<_, PiiBlocked>(rewritten)
            })
            .map_err(Error::hook)?;
        match outcome {
            Ok(rewritten) => {
                if rewritten > 0 {
                    tracing::debug!(messages = rewritten, "personal data rewritten in the input");
                }
                Ok(())
            }
            Err(blocked) => Err(self.blocked(blocked)),
        }
    }

    /// Rewrites the model's answer as it streams (in every run: the answer is assembled from
    /// the events), holding back at most [`look_back`](Pii::look_back) bytes per block.
    #[hook(on_model_event)]
    fn redact_stream(
        &self,
        pending: &mut PendingText,
        event: ModelEvent,
        out: &mut impl Emit,
    ) -> Result<(), Error> {
        self.stream_event(pending, event, out)
    }

    /// Rewrites the model's answer before it enters the history, or stops the run: an answer
    /// the events made is already rewritten; one a hook gave in place of the model is here.
    #[hook(after_model)]
    fn check_output(&self, response: &mut ModelResponse) -> Result<(), Error> {
        if !self.output {
            return Ok(());
        }
        match self.redact_message(&mut response.message, PiiPlace::Output) {
            Ok(true) => {
                tracing::debug!("personal data rewritten in the model's answer");
                Ok(())
            }
            Ok(false) => Ok(()),
            Err(blocked) => Err(self.blocked(blocked)),
        }
    }

    /// Rewrites a tool's result, or replaces it with an error result.
    #[hook(wrap_tool_call)]
    async fn check_tool_result(
        &self,
        cx: ToolContext<'_>,
        call: ToolCall,
        mut next: impl ToolNext,
    ) -> Result<ToolResult, Error> {
        if !self.tool_results {
            return Ok(next.call(cx, call).await);
        }
        let name = call.name.clone();
        let mut result = next.call(cx, call).await;
        if result.is_paused() {
            return Ok(result);
        }
        match self.redact_content(&result.content, PiiPlace::ToolResult) {
            Ok(None) => {}
            Ok(Some(rewritten)) => {
                tracing::debug!(tool = %name, "personal data rewritten in a tool result");
                result.content = rewritten;
            }
            Err(blocked) => {
                tracing::warn!(tool = %name, error = %blocked, "tool result blocked");
                return Ok(ToolResult::error(
                    &result.call_id,
                    format!(
                        "The result of `{name}` was withheld: it contains personal data ({}).",
                        blocked_counts(&blocked)
                    ),
                ));
            }
        }
        Ok(result)
    }
}

impl Pii {
    fn blocked(&self, blocked: PiiBlocked) -> Error {
        tracing::warn!(error = %blocked, "personal data blocked");
        Error::hook(blocked)
    }
}

/// `2 email, 1 credit_card`.
fn blocked_counts(blocked: &PiiBlocked) -> String {
    blocked
        .found
        .iter()
        .map(|(kind, count)| format!("{count} {kind}"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pii() -> Pii {
        Pii::builder()
            .detect(PiiType::Email, PiiStrategy::Redact)
            .detect(PiiType::CreditCard, PiiStrategy::Block)
            .build()
            .unwrap()
    }

    #[test]
    fn release_holds_back_the_look_back_and_never_cuts_a_finding() {
        let pii = pii();
        assert_eq!(pii.look_back(), 254);
        let text = "x ".repeat(200) + "ann@example.com";
        let (shown, used) = pii.release(&text, false, PiiPlace::Output).unwrap();
        assert_eq!(used, text.len() - 254);
        assert_eq!(shown, &text[..used]);
        // The cut would fall inside the address (bytes 400..415): it moves to its start.
        let text = text + " " + &"y".repeat(250);
        let (shown, used) = pii.release(&text, false, PiiPlace::Output).unwrap();
        assert_eq!(used, 400);
        assert!(!shown.contains("ann"));
        let (rest, used) = pii.release(&text[400..], true, PiiPlace::Output).unwrap();
        assert_eq!(used, text.len() - 400);
        assert!(rest.starts_with("[REDACTED_EMAIL] yyy"));
    }

    #[test]
    fn redact_borrows_when_nothing_is_found() {
        assert!(matches!(
            pii().redact("nothing here", PiiPlace::Input),
            Ok(Cow::Borrowed(_))
        ));
    }

    #[test]
    fn a_block_names_kind_and_count() {
        let blocked = pii()
            .redact("4111 1111 1111 1111 and 5500005555555559", PiiPlace::Input)
            .unwrap_err();
        assert_eq!(blocked.count("credit_card"), 2);
        assert_eq!(
            blocked.to_string(),
            "personal data in the input is blocked: found 2 × credit_card"
        );
    }
}
