//! Cassettes at the model boundary: record a model's calls to a file, replay them without it.
//!
//! A [`Cassette`] wraps a [`Model`]. Recording, it passes each call to the model and writes the
//! call to a human-readable JSON file: the request's fingerprint, the answer, and for a streamed
//! call its events with the time each came. Replaying, it answers from the file and never calls
//! the model; a request that is not the recorded one fails with the fields that differ.
//!
//! # The fingerprint
//!
//! A request matches a recording by its *fingerprint*: the [`ModelRequest`] as JSON — `model`,
//! `system_prompt`, `messages` (role, content, tool calls with their names and arguments, the
//! id a tool message answers, `is_error`, the tool's `name`), `tools` (name, description,
//! schema), `tool_choice`, `response_format`, `settings` (temperature, max tokens, top p, stop
//! sequences, provider extras) and `prompt_cache` — less what differs between two runs of the
//! same conversation:
//!
//! - tool call ids, which providers make up anew on each call: each is replaced by `call_1`,
//!   `call_2`, … in the order it first appears, so a tool message still names the call it
//!   answers;
//! - messages' [`metadata`](hookchain_core::Message::metadata): the application's tags and
//!   notes, never sent to the model;
//!
//! and redacted (next section). Requests carry no timestamps or headers; the model's name of
//! itself ([`Model::model_name`]) is not in it, so a cassette recorded with one provider
//! replays in place of another.
//!
//! # Redaction
//!
//! What is written is redacted first; the fingerprint too, so that matching compares redacted
//! with redacted. By default:
//!
//! - in the request's provider extras (`settings.extra`, at any depth), the value of a key that
//!   names a credential (`api_key`, `apiKey`, `x-api-key`, `authorization`, `password`,
//!   `secret`, `client_secret`, `access_token`, `token`, `private_key`, `credentials`, `cookie`;
//!   not `max_tokens`) becomes `"[REDACTED]"`;
//! - everywhere (request and answer), a word in the format of a well-known key — `sk-…`,
//!   `sk_live_…`, `AKIA…`, `AIza…`, `ghp_…`, `github_pat_…`, `glpat-…`, `xoxb-…`, `hf_…`,
//!   `Bearer …`, with at least 16 more characters — becomes `[REDACTED]`.
//!
//! Add your own with [`redact`](CassetteBuilder::redact): a function over each text of the
//! cassette (a PII detector, a known secret); turn the defaults off with
//! [`without_default_redaction`](CassetteBuilder::without_default_redaction). A replayed
//! answer is the redacted one.
//!
//! # Modes
//!
//! As VCR users know them ([`CassetteMode`]); the mode is chosen in code
//! ([`mode`](CassetteBuilder::mode), `once` unless set) and the environment variable
//! `HOOKCHAIN_CASSETTE_MODE`, when set, overrides it (`HOOKCHAIN_CASSETTE_MODE=all cargo test`
//! records again), unless the builder is told [`without_env`](CassetteBuilder::without_env).
//!
//! # Matching
//!
//! Calls are replayed in the order they were recorded. In strict matching (the default) the
//! n-th call must have the fingerprint of the n-th recorded call, or it fails with a
//! [`Drift`](CassetteErrorKind::Drift) error that lists the differing fields, expected and
//! actual; with [`strict(false)`](CassetteBuilder::strict) a call takes the first recorded
//! call not yet replayed that has its fingerprint. The error reaches the agent as a
//! [`ModelError`] of kind `Other` (not retryable) whose message is the [`CassetteError`]'s,
//! and whose source is the `CassetteError` itself.
//!
//! # Streams and timing
//!
//! A streamed call ([`Model::stream`]) is recorded as its events, each with the milliseconds
//! since the call began (on tokio's clock, so a test on a paused clock records virtual time),
//! and the answer they assemble to. Replayed, it yields the same events in the same order,
//! with their [`Timing`]: `Original` waits as the recording did, `Compressed` (the default)
//! does not wait. A call recorded unstreamed and replayed streamed yields the answer's events
//! at once, and the other way round gives the assembled answer.
//!
//! A call that failed (or a stream that failed midway) is not recorded: replaying, the same
//! call finds no recording.
//!
//! # Example
//!
//! ```
//! use hookchain::prelude::*;
//! use hookchain_eval::cassette::{Cassette, CassetteMode};
//!
//! # async fn example(dir: &std::path::Path) -> Result<(), Box<dyn std::error::Error>> {
//! let path = dir.join("greeting.json");
//! // Recording: the model is called, and the call written to the cassette.
//! let model = ScriptedModel::new([ModelResponse::text("Hello!")]);
//! let recorder = Cassette::builder(model, &path).mode(CassetteMode::Once).without_env().open()?;
//! let recorded = Agent::builder(recorder).build()?.run("Hi").await?;
//!
//! // Replaying: the cassette answers; the model (with an empty script) is never called.
//! let replayer = Cassette::builder(ScriptedModel::new([]), &path)
//!     .mode(CassetteMode::None)
//!     .without_env()
//!     .open()?;
//! let replayed = Agent::builder(replayer).build()?.run("Hi").await?;
//! assert_eq!(replayed.text(), recorded.text());
//!
//! // Another question is not on the cassette: the run fails with the difference.
//! let replayer = Cassette::builder(ScriptedModel::new([]), &path)
//!     .mode(CassetteMode::None)
//!     .without_env()
//!     .open()?;
//! let error = Agent::builder(replayer).build()?.run("Hello").await.unwrap_err();
//! // "the model call failed", caused by the cassette's error, which lists the differing fields.
//! let cause = std::error::Error::source(&error).map(ToString::to_string).unwrap_or_default();
//! assert!(cause.contains(r#"messages[0].content: expected "Hi", actual "Hello""#), "{cause}");
//! # Ok(())
//! # }
//! # fn main() {
//! #     let dir = std::env::temp_dir().join(format!("hookchain-cassette-doc-{}", std::process::id()));
//! #     let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
//! #     runtime.block_on(example(&dir)).unwrap();
//! #     std::fs::remove_dir_all(&dir).ok();
//! # }
//! ```
//!
//! A failure reads, for instance:
//!
//! ```text
//! cassette tests/cassettes/greeting.json: call #1 drifted from the recording:
//!   messages[0].content: expected "Hi", actual "Hello"
//! ```

mod error;
mod file;
mod fingerprint;
mod redact;

use std::collections::VecDeque;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use futures::future::Either;
use futures::stream::{self, Stream, StreamExt};
use hookchain_core::model::{ModelEvent, ResponseAssembler};
use hookchain_core::{Model, ModelError, ModelRequest, ModelResponse};

pub use error::{CassetteError, CassetteErrorKind};
pub use redact::REDACTED;

use file::{CassetteFile, FORMAT_VERSION, Interaction, TimedEvent};
use redact::Redaction;

/// The environment variable that chooses the mode of every cassette (unless a builder is told
/// [`without_env`](CassetteBuilder::without_env)).
pub const MODE_ENV: &str = "HOOKCHAIN_CASSETTE_MODE";

/// When a cassette records and when it replays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum CassetteMode {
    /// `none`: replay only. The file must exist; a call it has no recording for fails.
    None,
    /// `once`: record if the file does not exist, else replay only (as `none`).
    #[default]
    Once,
    /// `new_episodes`: replay the calls that match a recording; call the model for the others
    /// and add them to the file, in the order of the calls.
    NewEpisodes,
    /// `all`: call the model every time and record anew (the file is replaced at the first
    /// call).
    All,
}

impl FromStr for CassetteMode {
    type Err = String;

    /// `none`, `once`, `new_episodes` (or `new-episodes`), `all`; case ignored.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.trim().to_ascii_lowercase().replace('-', "_").as_str() {
            "none" => Ok(Self::None),
            "once" => Ok(Self::Once),
            "new_episodes" => Ok(Self::NewEpisodes),
            "all" => Ok(Self::All),
            _ => Err(format!(
                "unknown cassette mode `{text}`: expected one of `none`, `once`, `new_episodes`, `all`"
            )),
        }
    }
}

/// How a replayed stream is timed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Timing {
    /// No waiting: every event at once.
    #[default]
    Compressed,
    /// Each event when it came in the recording, after the call began (on tokio's clock).
    Original,
}

/// A [`Model`] that records the calls of the model it wraps to a cassette file, or replays them
/// from it (see the [module docs](self)). Built by [`Cassette::builder`].
pub struct Cassette<M> {
    inner: M,
    path: PathBuf,
    mode: CassetteMode,
    timing: Timing,
    strict: bool,
    redaction: Redaction,
    state: Mutex<State>,
}

/// The recordings and where the replay is.
#[derive(Debug)]
struct State {
    file: CassetteFile,
    /// Which recordings were replayed (or recorded) in this run.
    used: Vec<bool>,
    /// Whether calls with no recording go to the model.
    records: bool,
    /// Whether calls are replayed at all.
    replays: bool,
    /// Calls so far.
    calls: usize,
}

/// The settings of a [`Cassette`]; [`open`](Self::open) reads the file.
pub struct CassetteBuilder<M> {
    inner: M,
    path: PathBuf,
    mode: CassetteMode,
    env: bool,
    timing: Timing,
    strict: bool,
    redaction: Redaction,
}

impl<M> fmt::Debug for CassetteBuilder<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CassetteBuilder")
            .field("path", &self.path)
            .field("mode", &self.mode)
            .field("env", &self.env)
            .field("timing", &self.timing)
            .field("strict", &self.strict)
            .field("redaction", &self.redaction)
            .finish_non_exhaustive()
    }
}

impl<M> fmt::Debug for Cassette<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cassette")
            .field("path", &self.path)
            .field("mode", &self.mode)
            .field("timing", &self.timing)
            .field("strict", &self.strict)
            .finish_non_exhaustive()
    }
}

impl<M: Model> Cassette<M> {
    /// A cassette at `path` around `model` (the model recorded; never called when replaying).
    pub fn builder(model: M, path: impl Into<PathBuf>) -> CassetteBuilder<M> {
        CassetteBuilder {
            inner: model,
            path: path.into(),
            mode: CassetteMode::Once,
            env: true,
            timing: Timing::Compressed,
            strict: true,
            redaction: Redaction::default(),
        }
    }

    /// The cassette's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The mode in effect (the environment's, if it set one).
    pub fn mode(&self) -> CassetteMode {
        self.mode
    }

    /// The model wrapped.
    pub fn inner(&self) -> &M {
        &self.inner
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// What to do with a call: replay recording `index`, or record at position `index`.
    fn route(&self, request: &ModelRequest) -> Result<Route, ModelError> {
        let fingerprint = fingerprint::fingerprint(request, &self.redaction);
        let mut state = self.state();
        state.calls += 1;
        let call = state.calls;
        let next = state.used.iter().position(|used| !used);
        if state.replays {
            let found = if self.strict {
                next.filter(|&index| state.file.interactions[index].request == fingerprint)
            } else {
                (0..state.used.len()).find(|&index| {
                    !state.used[index] && state.file.interactions[index].request == fingerprint
                })
            };
            if let Some(index) = found {
                state.used[index] = true;
                return Ok(Route::Replay(state.file.interactions[index].clone()));
            }
            if !state.records {
                let error = match next {
                    Some(index) => CassetteError::new(
                        CassetteErrorKind::Drift,
                        &self.path,
                        format!(
                            "call #{call} drifted from the recording{}:\n{}",
                            if self.strict {
                                ""
                            } else {
                                " (no recording left matches it)"
                            },
                            fingerprint::diff(
                                &state.file.interactions[index].request,
                                &fingerprint
                            )
                            .trim_end()
                        ),
                    ),
                    None => CassetteError::new(
                        CassetteErrorKind::Exhausted,
                        &self.path,
                        format!(
                            "call #{call} has no recording: all {} recorded calls were replayed; \
                             the request:\n{}",
                            state.used.len(),
                            serde_json::to_string_pretty(&fingerprint).unwrap_or_default()
                        ),
                    ),
                };
                return Err(model_error(error));
            }
        }
        Ok(Route::Record {
            at: next.unwrap_or(state.used.len()),
            fingerprint,
        })
    }

    /// Adds a recorded call at `at` (redacted) and writes the file.
    fn record(
        &self,
        at: usize,
        fingerprint: serde_json::Value,
        response: ModelResponse,
        events: Option<Vec<TimedEvent>>,
    ) -> Result<(), ModelError> {
        let interaction = Interaction {
            request: fingerprint,
            response,
            events,
        };
        let interaction = self.redact(interaction).map_err(model_error)?;
        let mut state = self.state();
        let at = at.min(state.used.len());
        state.file.interactions.insert(at, interaction);
        state.used.insert(at, true);
        file::save(&self.path, &state.file).map_err(model_error)
    }

    /// `interaction` with its texts redacted (its fingerprint already is).
    fn redact(&self, interaction: Interaction) -> Result<Interaction, CassetteError> {
        let Interaction {
            request,
            response,
            events,
        } = interaction;
        let redacted = |value: serde_json::Value| {
            let mut value = value;
            self.redaction.texts(&mut value);
            value
        };
        let failed = |error: serde_json::Error| {
            CassetteError::corrupt(&self.path, format!("cannot redact a recording: {error}"))
        };
        let response = serde_json::to_value(response).map_err(failed)?;
        let response = serde_json::from_value(redacted(response)).map_err(failed)?;
        let events = match events {
            Some(events) => {
                let events = serde_json::to_value(events).map_err(failed)?;
                Some(serde_json::from_value(redacted(events)).map_err(failed)?)
            }
            None => None,
        };
        Ok(Interaction {
            request,
            response,
            events,
        })
    }
}

enum Route {
    Replay(Interaction),
    Record {
        at: usize,
        fingerprint: serde_json::Value,
    },
}

fn model_error(error: CassetteError) -> ModelError {
    let message = error.to_string();
    ModelError::other(message).with_source(error)
}

impl<M: Model> CassetteBuilder<M> {
    /// The mode when `HOOKCHAIN_CASSETTE_MODE` does not set one (`once` unless set).
    #[must_use]
    pub fn mode(mut self, mode: CassetteMode) -> Self {
        self.mode = mode;
        self
    }

    /// Ignores `HOOKCHAIN_CASSETTE_MODE`: the mode is the one set in code.
    #[must_use]
    pub fn without_env(mut self) -> Self {
        self.env = false;
        self
    }

    /// How replayed streams are timed (`Compressed` unless set).
    #[must_use]
    pub fn timing(mut self, timing: Timing) -> Self {
        self.timing = timing;
        self
    }

    /// Whether the n-th call must match the n-th recording (`true`, the default), or may match
    /// any recording not yet replayed.
    #[must_use]
    pub fn strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }

    /// Adds a redactor: each text written to the cassette (and each text of a request's
    /// fingerprint) becomes `redactor(text)`, after the default redaction and the redactors
    /// added before.
    #[must_use]
    pub fn redact(mut self, redactor: impl Fn(&str) -> String + Send + Sync + 'static) -> Self {
        self.redaction.redactors.push(Arc::new(redactor));
        self
    }

    /// Turns the default redaction (credentials by key and by format) off; the redactors added
    /// with [`redact`](Self::redact) still apply.
    #[must_use]
    pub fn without_default_redaction(mut self) -> Self {
        self.redaction.defaults = false;
        self
    }

    /// Reads the cassette (unless the mode is `all`) and makes the model.
    ///
    /// # Errors
    ///
    /// A mode in `HOOKCHAIN_CASSETTE_MODE` that is not one of the four; a file that cannot be
    /// read or is not a cassette; mode `none` without a file.
    pub fn open(self) -> Result<Cassette<M>, CassetteError> {
        let mut mode = self.mode;
        if self.env
            && let Ok(text) = std::env::var(MODE_ENV)
        {
            mode = text.parse().map_err(|reason: String| {
                CassetteError::new(
                    CassetteErrorKind::UnknownMode,
                    &self.path,
                    format!("{MODE_ENV}: {reason}"),
                )
            })?;
        }
        let loaded = match mode {
            CassetteMode::All => None,
            _ => file::load(&self.path)?,
        };
        let (records, replays) = match (mode, loaded.is_some()) {
            (CassetteMode::None, false) => {
                return Err(CassetteError::new(
                    CassetteErrorKind::Missing,
                    &self.path,
                    "no cassette to replay (mode `none`): record it first, with mode `once` \
                     or `all`",
                ));
            }
            (CassetteMode::None, true) | (CassetteMode::Once, true) => (false, true),
            (CassetteMode::Once, false) | (CassetteMode::All, _) => (true, false),
            (CassetteMode::NewEpisodes, _) => (true, true),
        };
        let file = loaded.unwrap_or(CassetteFile {
            version: FORMAT_VERSION,
            interactions: Vec::new(),
        });
        let used = vec![false; file.interactions.len()];
        Ok(Cassette {
            inner: self.inner,
            path: self.path,
            mode,
            timing: self.timing,
            strict: self.strict,
            redaction: self.redaction,
            state: Mutex::new(State {
                file,
                used,
                records,
                replays,
                calls: 0,
            }),
        })
    }
}

type Events = VecDeque<TimedEvent>;

impl<M: Model> Model for Cassette<M> {
    async fn invoke(&self, request: ModelRequest) -> Result<ModelResponse, ModelError> {
        match self.route(&request)? {
            Route::Replay(interaction) => Ok(interaction.response),
            Route::Record { at, fingerprint } => {
                let response = self.inner.invoke(request).await?;
                self.record(at, fingerprint, response.clone(), None)?;
                Ok(response)
            }
        }
    }

    fn stream(
        &self,
        request: ModelRequest,
    ) -> impl Stream<Item = Result<ModelEvent, ModelError>> + Send {
        match self.route(&request) {
            Err(error) => Either::Left(stream::iter([Err(error)])),
            Ok(Route::Replay(interaction)) => {
                Either::Right(Either::Left(self.replay_stream(interaction)))
            }
            Ok(Route::Record { at, fingerprint }) => {
                Either::Right(Either::Right(self.record_stream(request, at, fingerprint)))
            }
        }
    }

    fn provider_name(&self) -> &str {
        self.inner.provider_name()
    }

    fn model_name(&self) -> Option<&str> {
        self.inner.model_name()
    }
}

impl<M: Model> Cassette<M> {
    /// The recorded events, timed as [`Timing`] says.
    fn replay_stream(
        &self,
        interaction: Interaction,
    ) -> impl Stream<Item = Result<ModelEvent, ModelError>> + Send + 'static {
        let events: Events = match interaction.events {
            Some(events) => events.into(),
            None => (interaction.response.into_events().into_iter())
                .map(|event| TimedEvent { at_ms: 0, event })
                .collect(),
        };
        let original = self.timing == Timing::Original;
        let start = tokio::time::Instant::now();
        stream::unfold(events, move |mut events| async move {
            let TimedEvent { at_ms, event } = events.pop_front()?;
            if original {
                tokio::time::sleep_until(start + Duration::from_millis(at_ms)).await;
            }
            Some((Ok(event), events))
        })
    }

    /// The model's stream, each event recorded as it passes; at its `Finish`, the call is
    /// written (a failure to write replaces the `Finish`).
    fn record_stream(
        &self,
        request: ModelRequest,
        at: usize,
        fingerprint: serde_json::Value,
    ) -> impl Stream<Item = Result<ModelEvent, ModelError>> + Send + '_ {
        let start = tokio::time::Instant::now();
        let mut events = Vec::new();
        let mut fingerprint = Some(fingerprint);
        self.inner.stream(request).map(move |item| {
            let event = item?;
            let millis = u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
            events.push(TimedEvent {
                at_ms: millis,
                event: event.clone(),
            });
            if matches!(event, ModelEvent::Finish { .. })
                && let Some(fingerprint) = fingerprint.take()
            {
                let mut assembler = ResponseAssembler::new();
                for timed in &events {
                    assembler.push(&timed.event)?;
                }
                let response = assembler.finish()?;
                self.record(at, fingerprint, response, Some(std::mem::take(&mut events)))?;
            }
            Ok(event)
        })
    }
}
