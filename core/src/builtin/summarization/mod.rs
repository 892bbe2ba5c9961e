//! Summarization: when the history grows too long, its older part is replaced by a summary
//! written by a model.
//!
//! ```
//! use hookchain::builtin::Summarization;
//! use hookchain::builtin::summarization::{Keep, Trigger};
//! use hookchain::{Agent, ModelResponse, ScriptedModel};
//! # use hookchain::builtin::ConfigError;
//! # futures::executor::block_on(async {
//! let summarizer = ScriptedModel::new([ModelResponse::text("The user said hello twice.")]);
//! let summarization = Summarization::builder(summarizer)
//!     .trigger(Trigger::messages(4))
//!     .keep(Keep::Messages(1))
//!     .on_summarize(|summarized| println!("{} messages summarized", summarized.removed.len()))
//!     .build()?;
//! let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("Hello again!")]))
//!     .chain(summarization)
//!     .build()?;
//! let history = vec![
//!     hookchain::Message::user("hello"),
//!     hookchain::Message::assistant("Hi!"),
//!     hookchain::Message::user("hello"),
//!     hookchain::Message::assistant("Hi again!"),
//! ];
//! let output = agent.run(history).await.unwrap();
//! // Four messages reached the trigger: the first three became one summary.
//! assert!(output.messages[0].text().ends_with("The user said hello twice."));
//! assert_eq!(output.messages.len(), 3); // summary, "Hi again!", the answer
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
//!
//! # Rules
//!
//! - Checked in `before_model`, before each model call, on the history: it summarizes when
//!   any [`Trigger`] given is reached; a trigger's bounds (tokens, messages, fraction of the
//!   context window) must all be reached, each as `>=`. Tokens are counted by the
//!   [`TokenCounter`] (an [`ApproximateCounter`] by default); a fraction needs a
//!   [`ModelProfile`].
//! - It keeps the recent part the [`Keep`] says (the last 20 messages by default) and the
//!   leading system messages; the rest is summarized. The cut never separates an assistant's
//!   tool calls from their results: the kept part begins at a message that is not a tool
//!   result. When nothing is left to summarize (or only an earlier summary), nothing happens.
//! - The summarizer is a model of its own, given the summarized messages as a transcript
//!   (an earlier summary included) under a system prompt ([`prompt`]); its call runs in a
//!   `summarize` span holding the usual `chat` span of a model call. Its tokens are not in
//!   the run's [`usage`](crate::RunOutput::usage) (the agent's model only: budgets price
//!   that model), but in [`Summarized::usage`] and on the `chat` span.
//! - The summary enters the history in place of the summarized messages, as a user message
//!   starting with a fixed prefix ([`summary_prefix`]) and tagged `"summary": true` in its
//!   [`metadata`](crate::Message::metadata) ([`is_summary`] tells it). The history is
//!   rewritten (so a [`Thread`](crate::Thread) keeps the summary, not the old messages), and
//!   so is the current request, so the call about to be made is already the shorter one.
//! - The summarized messages are handed to the application: to the callback given to
//!   [`on_summarize`] with the summary ([`Summarized`]), and counted in an `INFO` event.
//!   Without a callback they are dropped after that event.
//! - A failing summarizer (an error, or an empty answer) leaves the history as it was and
//!   emits a `WARN` event; the step goes on. With [`OnFailure::Error`] the run fails instead
//!   with [`SummarizationFailed`].
//!
//! Where it sits: after (inside) a middleware that rewrites the history for privacy (PII
//! redaction), so that the summarizer never reads what it removed. Its request edit keeps
//! what earlier hooks did to the request: when they left the request the same length as the
//! history, the same messages are replaced in it; otherwise the request is left as it is for
//! this call, and the summary shows from the next step on.
//!
//! [`prompt`]: SummarizationBuilder::prompt
//! [`summary_prefix`]: SummarizationBuilder::summary_prefix
//! [`on_summarize`]: SummarizationBuilder::on_summarize

mod cut;
mod error;
mod transcript;
mod trigger;

use std::fmt;
use std::sync::Arc;

use tracing::Instrument as _;

use hookchain_macros::middleware;

pub use error::SummarizationFailed;
pub use trigger::{Keep, Trigger};

use super::ConfigError;
use super::tokens::{ApproximateCounter, ModelProfile, TokenCounter};
use crate::agent::ThreadId;
use crate::context::Context;
use crate::message::Message;
use crate::model::{Model, ModelRequest, ModelSettings, Usage};
use crate::telemetry;

/// The key of the tag a summary carries in its [`metadata`](Message::metadata) (`true`).
pub const SUMMARY_TAG: &str = "summary";

/// The summarizer's instructions unless [`prompt`](SummarizationBuilder::prompt) says
/// otherwise.
pub const DEFAULT_PROMPT: &str = "You summarize conversations between a user and an \
    assistant that uses tools. Write a concise summary of the conversation you are given that \
    keeps every fact, decision, open question and tool result the rest of the conversation may \
    need. If it starts with an earlier summary, fold that summary in. Answer with the summary \
    only.";

/// What a summary message starts with unless
/// [`summary_prefix`](SummarizationBuilder::summary_prefix) says otherwise.
pub const DEFAULT_PREFIX: &str = "Here is a summary of the conversation so far:\n\n";

/// Whether `message` is a summary [`Summarization`] wrote (tagged `"summary": true`).
#[must_use]
pub fn is_summary(message: &Message) -> bool {
    message.metadata.get(SUMMARY_TAG) == Some(&serde_json::Value::Bool(true))
}

/// What happens when the summarizer gives no summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum OnFailure {
    /// The history stays as it was, a `WARN` event says why, and the step goes on (the
    /// default: a summary is an optimization).
    #[default]
    Continue,
    /// The run fails with [`SummarizationFailed`].
    Error,
}

/// One summarization, handed to the [`on_summarize`](SummarizationBuilder::on_summarize)
/// callback.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Summarized {
    /// The messages that left the history, oldest first.
    pub removed: Vec<Message>,
    /// The message that took their place.
    pub summary: Message,
    /// The history's tokens before.
    pub tokens_before: u64,
    /// The history's tokens after.
    pub tokens_after: u64,
    /// What the summarizer's call used. It is not in the run's
    /// [`usage`](crate::RunOutput::usage), which counts the agent's model only (its prices
    /// may differ); it is also on the call's `chat` span.
    pub usage: Usage,
    /// The run it happened in.
    pub run_id: String,
    /// The thread, if the run is in one.
    pub thread_id: Option<ThreadId>,
}

/// The callback given the summarized messages.
type OnSummarize = Arc<dyn Fn(Summarized) + Send + Sync>;

/// Replaces the older part of a long history by a summary (see the [module docs](self)).
pub struct Summarization<M, C = ApproximateCounter> {
    model: M,
    counter: C,
    settings: Settings,
    on_summarize: Option<OnSummarize>,
}

/// The settings that do not depend on the builder's type parameters.
#[derive(Debug, Clone)]
struct Settings {
    triggers: Vec<Trigger>,
    keep: Keep,
    profile: Option<ModelProfile>,
    prompt: String,
    prefix: String,
    max_summary_tokens: Option<u32>,
    on_failure: OnFailure,
}

/// Builds a [`Summarization`]; [`build`](Self::build) checks the settings.
#[must_use]
pub struct SummarizationBuilder<M, C = ApproximateCounter> {
    model: M,
    counter: C,
    settings: Settings,
    on_summarize: Option<OnSummarize>,
}

impl<M: Model + 'static> Summarization<M> {
    /// A builder whose summaries `model` writes; it needs at least one
    /// [`trigger`](SummarizationBuilder::trigger). Defaults: keep the last 20 messages, count
    /// tokens with an [`ApproximateCounter`], go on without a summary when the model fails.
    ///
    /// The middleware owns its model for as long as the agent lives, so the model is
    /// `'static`: a model by value, or shared through an `Arc` (to read a scripted model's
    /// calls afterwards) — not a reference to a local. A model that is not is refused here,
    /// at this call.
    pub fn builder(model: M) -> SummarizationBuilder<M> {
        SummarizationBuilder {
            model,
            counter: ApproximateCounter::new(),
            settings: Settings {
                triggers: Vec::new(),
                keep: Keep::default(),
                profile: None,
                prompt: DEFAULT_PROMPT.to_owned(),
                prefix: DEFAULT_PREFIX.to_owned(),
                max_summary_tokens: None,
                on_failure: OnFailure::Continue,
            },
            on_summarize: None,
        }
    }
}

impl<M, C> SummarizationBuilder<M, C> {
    /// Summarizes when `trigger` is reached; several triggers: when any is.
    pub fn trigger(mut self, trigger: Trigger) -> Self {
        self.settings.triggers.push(trigger);
        self
    }

    /// What to keep as it is (default: the last 20 messages).
    pub fn keep(mut self, keep: Keep) -> Self {
        self.settings.keep = keep;
        self
    }

    /// The model's context window, for fractions in triggers and [`Keep::Fraction`].
    pub fn profile(mut self, profile: ModelProfile) -> Self {
        self.settings.profile = Some(profile);
        self
    }

    /// Counts tokens with `counter` instead of an [`ApproximateCounter`].
    pub fn token_counter<T: TokenCounter>(self, counter: T) -> SummarizationBuilder<M, T> {
        SummarizationBuilder {
            model: self.model,
            counter,
            settings: self.settings,
            on_summarize: self.on_summarize,
        }
    }

    /// The summarizer's instructions (default: [`DEFAULT_PROMPT`]).
    pub fn prompt(mut self, prompt: impl Into<String>) -> Self {
        self.settings.prompt = prompt.into();
        self
    }

    /// What each summary message starts with (default: [`DEFAULT_PREFIX`]).
    pub fn summary_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.settings.prefix = prefix.into();
        self
    }

    /// The most tokens the summarizer may write (its request's `max_tokens`).
    pub fn max_summary_tokens(mut self, tokens: u32) -> Self {
        self.settings.max_summary_tokens = Some(tokens);
        self
    }

    /// What happens when the summarizer gives no summary (default: [`OnFailure::Continue`]).
    pub fn on_failure(mut self, on_failure: OnFailure) -> Self {
        self.settings.on_failure = on_failure;
        self
    }

    /// Gives every summarization (the removed messages and their summary) to `callback`,
    /// called in the hook, before the model call: keep it short (store the messages, send
    /// them to a channel).
    pub fn on_summarize(mut self, callback: impl Fn(Summarized) + Send + Sync + 'static) -> Self {
        self.on_summarize = Some(Arc::new(callback));
        self
    }

    /// The middleware; an error names a setting that cannot work: no trigger, a bound of 0,
    /// a fraction outside `(0, 1]` or without a [`ModelProfile`], an empty prompt, a summary
    /// of at most 0 tokens.
    pub fn build(self) -> Result<Summarization<M, C>, ConfigError> {
        let settings = &self.settings;
        if settings.triggers.is_empty() {
            return Err(ConfigError::new(
                "trigger",
                "no trigger: say when to summarize (Trigger::tokens, ::messages, ::fraction)",
            ));
        }
        for trigger in &settings.triggers {
            trigger.check(settings.profile)?;
        }
        settings.keep.check(settings.profile)?;
        if settings.prompt.trim().is_empty() {
            return Err(ConfigError::new(
                "prompt",
                "the summarizer's prompt is empty",
            ));
        }
        if settings.max_summary_tokens == Some(0) {
            return Err(ConfigError::new(
                "max_summary_tokens",
                "a summary of at most 0 tokens is empty",
            ));
        }
        Ok(Summarization {
            model: self.model,
            counter: self.counter,
            settings: self.settings,
            on_summarize: self.on_summarize,
        })
    }
}

impl<M, C> Summarization<M, C> {
    /// The summarizer model.
    #[must_use]
    pub fn model(&self) -> &M {
        &self.model
    }

    /// Whether a history of `tokens` tokens in `messages` messages reaches a trigger.
    fn triggered(&self, tokens: u64, messages: usize) -> bool {
        self.settings
            .triggers
            .iter()
            .any(|trigger| trigger.reached(tokens, messages, self.settings.profile))
    }
}

impl<M: Model, C> Summarization<M, C> {
    /// The summary of `messages`, from the summarizer model, in `summarize` and `chat` spans.
    async fn summarize(
        &self,
        messages: &[Message],
    ) -> Result<(String, Usage), SummarizationFailed> {
        let mut settings = ModelSettings::new();
        settings.max_tokens = self.settings.max_summary_tokens;
        let request = ModelRequest::new(vec![Message::user(transcript::transcript(
            messages, is_summary,
        ))])
        .with_system_prompt(self.settings.prompt.clone())
        .with_settings(settings);
        let chat = telemetry::chat_span(&self.model, &request);
        let response = match self.model.invoke(request).instrument(chat.clone()).await {
            Ok(response) => response,
            Err(error) => {
                telemetry::record_model_error(&chat, error.kind());
                return Err(SummarizationFailed::Model(error));
            }
        };
        telemetry::record_response(&chat, &response);
        let summary = response.message.text();
        if summary.trim().is_empty() {
            return Err(SummarizationFailed::Empty);
        }
        Ok((summary.into_owned(), response.usage))
    }
}

#[middleware(crate = crate)]
impl<M: Model + 'static, C: TokenCounter + 'static> Summarization<M, C> {
    /// Summarizes the older part of the history when a trigger is reached.
    #[hook(before_model)]
    async fn compact(
        &self,
        cx: &mut Context,
        request: &mut ModelRequest,
    ) -> Result<(), SummarizationFailed> {
        let tokens_before = self.counter.count_messages(cx.messages());
        if !self.triggered(tokens_before, cx.messages().len()) {
            return Ok(());
        }
        let bound = self.settings.keep.resolve(self.settings.profile);
        let Some(cut) = cut::find_cut(cx.messages(), bound, &self.counter, is_summary) else {
            tracing::debug!(
                messages = cx.messages().len(),
                tokens = tokens_before,
                "summarization triggered, but nothing is left to summarize"
            );
            return Ok(());
        };
        let removed = cx.messages()[cut.start..cut.end].to_vec();
        let span = tracing::info_span!(
            "summarize",
            hookchain.middleware = "Summarization",
            hookchain.summarize.messages = removed.len(),
        );
        let (summary, usage) = match self.summarize(&removed).instrument(span).await {
            Ok(answer) => answer,
            Err(error) if self.settings.on_failure == OnFailure::Continue => {
                tracing::warn!(
                    error = %crate::error::Report(&error),
                    "the summarizer failed: the history is left as it was"
                );
                return Ok(());
            }
            Err(error) => return Err(error),
        };
        let summary = Message::user(format!("{}{summary}", self.settings.prefix))
            .with_metadata(SUMMARY_TAG, serde_json::Value::Bool(true));
        if !self.replace(cx, request, cut, &summary) {
            return Ok(());
        }
        let tokens_after = self.counter.count_messages(cx.messages());
        tracing::info!(
            summarized = removed.len(),
            kept = cx.messages().len() - 1,
            tokens_before,
            tokens_after,
            "history summarized"
        );
        if let Some(callback) = &self.on_summarize {
            callback(Summarized {
                removed,
                summary,
                tokens_before,
                tokens_after,
                usage,
                run_id: cx.run_id().to_owned(),
                thread_id: cx.thread_id().cloned(),
            });
        }
        Ok(())
    }
}

impl<M, C> Summarization<M, C> {
    /// Puts `summary` in place of the cut's messages, in the history and in the request;
    /// `false` if the history refused the edit (it cannot: the cut keeps groups whole).
    fn replace(
        &self,
        cx: &mut Context,
        request: &mut ModelRequest,
        cut: cut::Cut,
        summary: &Message,
    ) -> bool {
        let before = cx.messages.clone();
        let splice = |messages: &mut Vec<Message>| {
            messages.splice(cut.start..cut.end, [summary.clone()]);
        };
        if let Err(error) = cx.edit_history(splice) {
            tracing::warn!(%error, "the summary was refused by the history: it is left as it was");
            return false;
        }
        if request.messages.ptr_eq(&before) {
            request.messages = cx.messages.clone();
        } else if request.messages.len() == before.len()
            && request.messages[cut.start..cut.end]
                .iter()
                .zip(&before[cut.start..cut.end])
                .all(|(sent, kept)| {
                    sent.role == kept.role && sent.tool_call_id == kept.tool_call_id
                })
        {
            splice(&mut request.messages);
        } else {
            tracing::debug!(
                "an earlier hook reshaped the request: this call is sent as it is, the \
                 summary shows from the next step"
            );
        }
        true
    }
}

impl<M: Model, C: fmt::Debug> fmt::Debug for Summarization<M, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Summarization")
            .field(
                "model",
                &self
                    .model
                    .model_name()
                    .unwrap_or(self.model.provider_name()),
            )
            .field("counter", &self.counter)
            .field("settings", &self.settings)
            .field("on_summarize", &self.on_summarize.is_some())
            .finish()
    }
}

impl<M: Model, C: fmt::Debug> fmt::Debug for SummarizationBuilder<M, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SummarizationBuilder")
            .field(
                "model",
                &self
                    .model
                    .model_name()
                    .unwrap_or(self.model.provider_name()),
            )
            .field("counter", &self.counter)
            .field("settings", &self.settings)
            .field("on_summarize", &self.on_summarize.is_some())
            .finish()
    }
}
