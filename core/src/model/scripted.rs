//! A deterministic, offline model for tests, examples and the quickstart.

use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::{Model, ModelRequest, ModelResponse};
use crate::error::ModelError;
use crate::lock::lock;
use crate::message::validate_history;

type Rule = Box<dyn Fn(&ModelRequest) -> Result<ModelResponse, ModelError> + Send + Sync>;

enum Source {
    Script(Mutex<VecDeque<Result<ModelResponse, ModelError>>>),
    Rule(Rule),
}

/// A model that replays a script of responses, or answers by a rule, and records every request.
///
/// Like a real provider, it refuses a request whose history breaks the tool-call rule (see
/// [`validate_history`](crate::message::validate_history)), with a provider error; the script
/// is not used up by such a request.
///
/// ```
/// # tokio_test_block(async {
/// use hookchain::{Model, ModelRequest, ModelResponse, ScriptedModel};
///
/// let model = ScriptedModel::new([ModelResponse::text("hello")]);
/// let response = model.invoke(ModelRequest::default()).await.unwrap();
/// assert_eq!(response.message.content, "hello");
/// assert_eq!(model.requests().len(), 1);
/// // The script is exhausted: the next call fails with a clear error.
/// assert!(model.invoke(ModelRequest::default()).await.is_err());
/// # });
/// # fn tokio_test_block(f: impl std::future::Future<Output = ()>) {
/// #     futures::executor::block_on(f)
/// # }
/// ```
pub struct ScriptedModel {
    source: Source,
    record: bool,
    requests: Mutex<Vec<ModelRequest>>,
    calls: AtomicUsize,
}

impl ScriptedModel {
    /// Replays `responses` in order, one per call; a call past the end fails with a
    /// [`ModelError`] of kind [`Other`](crate::ModelErrorKind::Other) that names the request.
    pub fn new(responses: impl IntoIterator<Item = ModelResponse>) -> Self {
        Self::from_source(Source::Script(Mutex::new(
            responses.into_iter().map(Ok).collect(),
        )))
    }

    /// Answers every request with `rule(request)`.
    pub fn from_rule(
        rule: impl Fn(&ModelRequest) -> Result<ModelResponse, ModelError> + Send + Sync + 'static,
    ) -> Self {
        Self::from_source(Source::Rule(Box::new(rule)))
    }

    fn from_source(source: Source) -> Self {
        Self {
            source,
            record: true,
            requests: Mutex::new(Vec::new()),
            calls: AtomicUsize::new(0),
        }
    }

    /// Appends a response to the script (no effect on a rule model).
    #[must_use]
    pub fn then(self, response: ModelResponse) -> Self {
        self.push(Ok(response));
        self
    }

    /// Appends a failure to the script: the call that reaches it fails with `error`.
    #[must_use]
    pub fn then_fail(self, error: ModelError) -> Self {
        self.push(Err(error));
        self
    }

    fn push(&self, step: Result<ModelResponse, ModelError>) {
        if let Source::Script(script) = &self.source {
            lock(script).push_back(step);
        }
    }

    /// Stops recording requests (recording clones each request).
    #[must_use]
    pub fn without_recording(mut self) -> Self {
        self.record = false;
        self
    }

    /// Every request received so far, oldest first.
    pub fn requests(&self) -> Vec<ModelRequest> {
        lock(&self.requests).clone()
    }

    /// The number of calls received so far.
    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }

    fn answer(&self, request: ModelRequest) -> Result<ModelResponse, ModelError> {
        let number = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        // Like a real provider, refuse a history whose tool calls are not answered right after
        // them (without using up the script): every test on this model checks the rule.
        let answer = if let Err(error) = validate_history(&request.messages) {
            Err(
                ModelError::invalid_request("the history breaks the tool-call rule")
                    .with_source(error),
            )
        } else {
            match &self.source {
                Source::Script(script) => lock(script)
                    .pop_front()
                    .unwrap_or_else(|| Err(exhausted(number))),
                Source::Rule(rule) => rule(&request),
            }
        };
        if self.record {
            lock(&self.requests).push(request);
        }
        answer
    }
}

/// The failure of request number `request` (1-based) that found the script empty.
fn exhausted(request: usize) -> ModelError {
    ModelError::other(format!(
        "the scripted model has no response left for request #{request}"
    ))
}

impl Model for ScriptedModel {
    // Answers synchronously: a ready future keeps benchmarks free of an extra state machine.
    fn invoke(
        &self,
        request: ModelRequest,
    ) -> impl Future<Output = Result<ModelResponse, ModelError>> + Send {
        std::future::ready(self.answer(request))
    }

    /// `"scripted"`: no provider serves it.
    fn provider_name(&self) -> &str {
        "scripted"
    }

    fn model_name(&self) -> Option<&str> {
        Some("scripted")
    }
}

impl fmt::Debug for ScriptedModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let source = match &self.source {
            Source::Script(script) => format!("script({} left)", lock(script).len()),
            Source::Rule(_) => "rule".to_owned(),
        };
        f.debug_struct("ScriptedModel")
            .field("source", &source)
            .field("calls", &self.calls())
            .finish()
    }
}
