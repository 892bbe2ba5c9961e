//! A deterministic, offline model for tests, examples and the quickstart.

use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::{BoxFuture, Either};
use futures::stream::{self, Stream};

use super::ModelError;
use super::{Model, ModelEvent, ModelRequest, ModelResponse, ResponseAssembler};
use crate::lock::lock;
use crate::message::validate_history;

type Rule = Box<dyn Fn(&ModelRequest) -> Result<ModelResponse, ModelError> + Send + Sync>;
type Sleep = Arc<dyn Fn(Duration) -> BoxFuture<'static, ()> + Send + Sync>;

enum Source {
    Script(Mutex<VecDeque<Step>>),
    Rule(Rule),
}

/// One call's worth of a script.
enum Step {
    /// Answered whole (streamed as [`ModelResponse::into_events`]).
    Answer(Result<ModelResponse, ModelError>),
    /// Streamed as scripted.
    Stream(Vec<StreamStep>),
}

/// One step of a scripted stream (see [`ScriptedModel::then_stream`]).
#[derive(Debug)]
#[non_exhaustive]
pub enum StreamStep {
    /// The stream yields this event.
    Event(ModelEvent),
    /// The stream waits this long (on the timer given to
    /// [`with_sleep`](ScriptedModel::with_sleep)).
    Delay(Duration),
    /// The stream fails with this error, and ends.
    Fail(ModelError),
}

impl From<ModelEvent> for StreamStep {
    fn from(event: ModelEvent) -> Self {
        StreamStep::Event(event)
    }
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
    sleep: Option<Sleep>,
}

impl ScriptedModel {
    /// Replays `responses` in order, one per call; a call past the end fails with a
    /// [`ModelError`] of kind [`Other`](crate::ModelErrorKind::Other) that names the request.
    pub fn new(responses: impl IntoIterator<Item = ModelResponse>) -> Self {
        Self::from_source(Source::Script(Mutex::new(
            responses
                .into_iter()
                .map(|response| Step::Answer(Ok(response)))
                .collect(),
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
            sleep: None,
        }
    }

    /// Appends a response to the script (no effect on a rule model).
    #[must_use]
    pub fn then(self, response: ModelResponse) -> Self {
        self.push(Step::Answer(Ok(response)));
        self
    }

    /// Appends a failure to the script: the call that reaches it fails with `error`.
    #[must_use]
    pub fn then_fail(self, error: ModelError) -> Self {
        self.push(Step::Answer(Err(error)));
        self
    }

    /// Appends a streamed answer to the script: the call that reaches it yields the events
    /// in order, waits at each [`Delay`](StreamStep::Delay), and fails at a
    /// [`Fail`](StreamStep::Fail) (a failure mid-stream). [`invoke`](Model::invoke) answers
    /// such a step with the assembled events (at once), or the failure.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// use futures::StreamExt;
    /// use hookchain::model::{ModelEvent, StreamStep};
    /// use hookchain::{Model, ModelError, ModelRequest, ScriptedModel, StopReason};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let model = ScriptedModel::new([])
    ///     .then_stream([
    ///         StreamStep::from(ModelEvent::TextDelta { index: 0, text: "Hel".into() }),
    ///         StreamStep::Delay(Duration::from_millis(20)),
    ///         StreamStep::Fail(ModelError::overloaded("the connection dropped")),
    ///     ])
    ///     .with_sleep(tokio::time::sleep);
    /// let events: Vec<_> = model.stream(ModelRequest::default()).collect().await;
    /// assert!(matches!(events[0], Ok(ModelEvent::TextDelta { .. })));
    /// assert!(events[1].is_err());
    /// # }
    /// ```
    #[must_use]
    pub fn then_stream(self, steps: impl IntoIterator<Item = impl Into<StreamStep>>) -> Self {
        self.push(Step::Stream(steps.into_iter().map(Into::into).collect()));
        self
    }

    /// The timer the [`Delay`](StreamStep::Delay)s of scripted streams wait on, such as
    /// `tokio::time::sleep` (core depends on no runtime). A delay without a timer fails the
    /// stream with an error that says so.
    #[must_use]
    pub fn with_sleep<F>(mut self, sleep: impl Fn(Duration) -> F + Send + Sync + 'static) -> Self
    where
        F: Future<Output = ()> + Send + 'static,
    {
        self.sleep = Some(Arc::new(move |duration| Box::pin(sleep(duration))));
        self
    }

    fn push(&self, step: Step) {
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

    /// The step that answers `request`, which is recorded.
    fn step(&self, request: ModelRequest) -> Step {
        let number = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        // Like a real provider, refuse a history whose tool calls are not answered right after
        // them (without using up the script): every test on this model checks the rule.
        let step = if let Err(error) = validate_history(&request.messages) {
            Step::Answer(Err(ModelError::invalid_request(
                "the history breaks the tool-call rule",
            )
            .with_source(error)))
        } else {
            match &self.source {
                Source::Script(script) => lock(script)
                    .pop_front()
                    .unwrap_or_else(|| Step::Answer(Err(exhausted(number)))),
                Source::Rule(rule) => Step::Answer(rule(&request)),
            }
        };
        if self.record {
            lock(&self.requests).push(request);
        }
        step
    }

    fn answer(&self, request: ModelRequest) -> Result<ModelResponse, ModelError> {
        match self.step(request) {
            Step::Answer(answer) => answer,
            Step::Stream(steps) => assemble(steps),
        }
    }
}

/// The answer a scripted stream makes: its events assembled, or its failure.
fn assemble(steps: Vec<StreamStep>) -> Result<ModelResponse, ModelError> {
    let mut assembler = ResponseAssembler::new();
    for step in steps {
        match step {
            StreamStep::Event(event) => assembler.push(&event)?,
            StreamStep::Fail(error) => return Err(error),
            StreamStep::Delay(_) => {}
        }
    }
    assembler.finish()
}

/// A scripted stream: its steps in order, up to the first failure.
fn play(
    steps: Vec<StreamStep>,
    sleep: Option<Sleep>,
) -> impl Stream<Item = Result<ModelEvent, ModelError>> + Send + 'static {
    let steps: VecDeque<StreamStep> = steps.into();
    stream::unfold(Some(steps), move |steps| {
        let sleep = sleep.clone();
        async move {
            let mut steps = steps?;
            loop {
                match steps.pop_front()? {
                    StreamStep::Event(event) => return Some((Ok(event), Some(steps))),
                    StreamStep::Fail(error) => return Some((Err(error), None)),
                    StreamStep::Delay(duration) => match &sleep {
                        Some(sleep) => sleep(duration).await,
                        None => {
                            let error = ModelError::other(
                                "a scripted stream has a delay but the model has no timer: \
                                 give it one with `ScriptedModel::with_sleep(tokio::time::sleep)`",
                            );
                            return Some((Err(error), None));
                        }
                    },
                }
            }
        }
    })
}

/// The failure of request number `request` (1-based) that found the script empty.
fn exhausted(request: usize) -> ModelError {
    ModelError::other(format!(
        "the scripted model has no response left for request #{request}"
    ))
}

// Not listed in a "not a model" error, which names the usual fixes instead.
#[diagnostic::do_not_recommend]
impl Model for ScriptedModel {
    // Answers synchronously: a ready future keeps benchmarks free of an extra state machine.
    fn invoke(
        &self,
        request: ModelRequest,
    ) -> impl Future<Output = Result<ModelResponse, ModelError>> + Send {
        std::future::ready(self.answer(request))
    }

    fn stream(
        &self,
        request: ModelRequest,
    ) -> impl Stream<Item = Result<ModelEvent, ModelError>> + Send {
        match self.step(request) {
            Step::Stream(steps) => Either::Left(play(steps, self.sleep.clone())),
            Step::Answer(answer) => {
                Either::Right(super::replay::replay(std::future::ready(answer)))
            }
        }
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
