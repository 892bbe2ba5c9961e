//! The `tracing` spans and events of a run, named as OpenTelemetry's GenAI semantic conventions
//! name them (the table is in the [`agent`](crate::agent) module's docs).
//!
//! Everything here is built to cost next to nothing when no subscriber listens: a span or an
//! event is a level check, its field values are computed only when it is enabled, and nothing
//! allocates (names are `&'static str`s, composite values are written through `Display`).

use std::fmt;
use std::marker::PhantomData;

use tracing::Span;
use tracing::field::Empty;
use tracing::level_filters::{LevelFilter, STATIC_MAX_LEVEL};

use crate::chain::ChainChecks;
use crate::error::{Error, ModelErrorKind};
use crate::message::ToolResult;
use crate::middleware::{Hook, HookSet, Marker, Middleware};
use crate::model::{Model, ModelRequest, ModelResponse, StopReason};
use crate::tool::ToolFailureKind;

/// Whether hook events are wanted: someone listens at `TRACE`.
#[inline]
pub(crate) fn hooks_traced() -> bool {
    // TRACE is the most verbose filter: `==` is `>=`, and compiles to less.
    STATIC_MAX_LEVEL == LevelFilter::TRACE && LevelFilter::current() == LevelFilter::TRACE
}

/// Whether `M` is one middleware (or one adapting one, like `Option<M>`), not a chain: the
/// one whose hooks an event names. A chain's members name themselves.
pub(crate) const fn is_member<M: Middleware>() -> bool {
    ChainChecks::<M>::LEN == 1 && <M::WrapsModel as Marker>::LEAF.is_some()
}

/// The `TRACE` event of `member` running its `hook`.
pub(crate) fn hook_event(member: &'static str, hook: Hook) {
    tracing::trace!(
        hookchain.middleware = member,
        hookchain.hook = hook.name(),
        "hook"
    );
}

/// Which members of a chain ran one of its hooks, told from what the run keeps anyway.
///
/// The events of a chain's hooks are emitted from here, by the agent loop, once the chain's
/// hook (or its onion) returned, rather than by the chain as each member runs: a test per
/// member or per wrap layer on the model path, even a plain store, cost the chain 16 to 67 %
/// more instructions per model call (it keeps the compiler from folding the members' outcomes
/// and from inlining the onion); this costs one level check per hook of the step.
#[derive(Debug, Clone, Copy)]
pub(crate) struct HooksRan {
    /// The hook.
    pub(crate) hook: Hook,
    /// Which of the members implementing it ran.
    pub(crate) ran: Ran,
    /// On a resumed step, the position of the member that was interrupted: the ones before it
    /// (in run order) ran before the pause, not now.
    pub(crate) resumed_at: Option<usize>,
}

/// Which of the members implementing a hook ran, in run order.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Ran {
    /// All of them (`after_agent`; an onion that reached the model or the tool).
    All,
    /// Up to this one, the last entered (`Context::running`); none if `None`.
    UpTo(Option<&'static str>),
    /// The first (the outermost wrap of an onion that never reached the model or the tool:
    /// which inner ones ran is not recorded).
    First,
}

impl HooksRan {
    /// Emits one `hook` event per member of `C` that ran the hook, in the order they ran.
    #[cold]
    #[inline(never)]
    pub(crate) fn emit<C: Middleware>(self) {
        if is_member::<C>() {
            // A chain of one middleware is called directly: it ran if it implements the hook.
            if C::HOOKS.contains(self.hook) {
                hook_event(C::NAME, self.hook);
            }
            return;
        }
        if let Ran::UpTo(None) = self.ran {
            return;
        }
        let reversed = matches!(
            self.hook,
            Hook::OnModelEvent | Hook::AfterModel | Hook::AfterAgent
        );
        // Emits the event of the member at `at` if it ran; false once the last one is reached.
        let visit = |at: usize, name: &'static str, hooks: HookSet| {
            if !hooks.contains(self.hook) {
                return true;
            }
            let skipped = self
                .resumed_at
                .is_some_and(|resumed| if reversed { at > resumed } else { at < resumed });
            if !skipped {
                hook_event(name, self.hook);
            }
            match self.ran {
                Ran::All => true,
                Ran::UpTo(last) => Some(name) != last,
                Ran::First => false,
            }
        };
        let mut members = ChainChecks::<C>::MEMBERS.hooks().enumerate();
        if reversed {
            members
                .rev()
                .all(|(at, (name, hooks))| visit(at, name, hooks));
        } else {
            members.all(|(at, (name, hooks))| visit(at, name, hooks));
        }
    }
}

/// The members of `C` that implement a wrap hook, outermost first, as `A, B`: the ones that
/// may have answered a short-circuited call.
pub(crate) struct Wraps<C: ?Sized> {
    hook: Hook,
    chain: PhantomData<fn(&C)>,
}

impl<C: Middleware> Wraps<C> {
    pub(crate) const fn of(hook: Hook) -> Self {
        Wraps {
            hook,
            chain: PhantomData,
        }
    }
}

impl<C: Middleware> fmt::Display for Wraps<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let wraps = ChainChecks::<C>::MEMBERS
            .hooks()
            .filter(|(_, hooks)| hooks.contains(self.hook));
        for (i, (name, _)) in wraps.enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(name)?;
        }
        Ok(())
    }
}

/// The span of one run (or one resume of it): `invoke_agent {agent}`.
pub(crate) fn invoke_agent_span(
    agent: &str,
    run_id: &str,
    thread_id: Option<&dyn fmt::Display>,
    max_steps: usize,
) -> Span {
    tracing::info_span!(
        "invoke_agent",
        otel.name = %format_args!("invoke_agent {agent}"),
        gen_ai.operation.name = "invoke_agent",
        gen_ai.agent.name = agent,
        gen_ai.conversation.id = thread_id.map(tracing::field::display),
        hookchain.run.id = run_id,
        hookchain.max_steps = max_steps,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        error.type = Empty,
    )
}

/// Records how a run ended on its span: its token totals (unless a call reported none: the
/// totals would be too low), and `error.type` if it failed.
pub(crate) fn record_run_end(span: &Span, usage: crate::model::Usage, error: Option<&Error>) {
    if span.is_disabled() {
        return;
    }
    record_usage(span, usage);
    if let Some(error) = error {
        span.record("error.type", run_error_type(error));
    }
}

/// Records the token counts on `span`, if they are known (an unknown count is left out, never
/// written as 0).
fn record_usage(span: &Span, usage: crate::model::Usage) {
    if usage.is_known() {
        span.record("gen_ai.usage.input_tokens", usage.input_tokens);
        span.record("gen_ai.usage.output_tokens", usage.output_tokens);
    }
}

/// The span of one call of `model` on `request`: `chat {model}`. The request's own `model`
/// (a routed request) wins over the model's name.
pub(crate) fn chat_span<M: Model + ?Sized>(model: &M, request: &ModelRequest) -> Span {
    let request_model = || request.model.as_deref().or_else(|| model.model_name());
    tracing::info_span!(
        "chat",
        otel.name = %OperationName("chat", request_model()),
        gen_ai.operation.name = "chat",
        gen_ai.provider.name = model.provider_name(),
        gen_ai.request.model = request_model(),
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        gen_ai.response.finish_reasons = Empty,
        error.type = Empty,
    )
}

/// Records a model call's answer on its `chat` span.
pub(crate) fn record_response(span: &Span, response: &ModelResponse) {
    if span.is_disabled() {
        return;
    }
    record_usage(span, response.usage);
    span.record(
        "gen_ai.response.finish_reasons",
        finish_reason(response.stop_reason),
    );
}

/// Records a failed model call on its `chat` span.
pub(crate) fn record_model_error(span: &Span, kind: ModelErrorKind) {
    span.record("error.type", model_error_type(kind));
}

/// The span of one tool call, around every `wrap_tool_call` hook of it: `execute_tool {name}`.
pub(crate) fn execute_tool_span(tool: &str, call_id: &str) -> Span {
    tracing::info_span!(
        "execute_tool",
        otel.name = %OperationName("execute_tool", Some(tool)),
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = tool,
        gen_ai.tool.call.id = call_id,
        error.type = Empty,
    )
}

/// Records a tool call's failure on its `execute_tool` span: the failure's kind, or
/// `tool_error` for an error result a hook made without one.
pub(crate) fn record_tool_result(span: &Span, result: &ToolResult) {
    if let Some(failure) = result.failure() {
        span.record("error.type", tool_error_type(failure.kind()));
    } else if result.is_error {
        span.record("error.type", "tool_error");
    }
}

/// `{operation} {name}`, or the operation alone: a span name written without allocating.
struct OperationName<'a>(&'static str, Option<&'a str>);

impl fmt::Display for OperationName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.1 {
            Some(name) => write!(f, "{} {name}", self.0),
            None => f.write_str(self.0),
        }
    }
}

/// `gen_ai.response.finish_reasons`, in the values the conventions use (OpenAI's).
const fn finish_reason(reason: StopReason) -> &'static str {
    match reason {
        StopReason::EndTurn | StopReason::StopSequence => "stop",
        StopReason::ToolUse => "tool_calls",
        StopReason::MaxTokens => "length",
        StopReason::ContentFilter => "content_filter",
        // No value of OpenAI's says it (its refusals end with `stop`): the reason as we name it.
        StopReason::Refusal => "refusal",
    }
}

/// `error.type` of a failed model call: its kind, in snake case.
const fn model_error_type(kind: ModelErrorKind) -> &'static str {
    match kind {
        ModelErrorKind::RateLimited => "rate_limited",
        ModelErrorKind::Overloaded => "overloaded",
        ModelErrorKind::Timeout => "timeout",
        ModelErrorKind::Connection => "connection",
        ModelErrorKind::ContextLengthExceeded => "context_length_exceeded",
        ModelErrorKind::Authentication => "authentication",
        ModelErrorKind::InvalidRequest => "invalid_request",
        ModelErrorKind::ContentFiltered => "content_filtered",
        ModelErrorKind::MalformedResponse => "malformed_response",
        ModelErrorKind::Other => "other",
    }
}

/// `error.type` of a failed tool call: the failure's kind, in snake case.
const fn tool_error_type(kind: ToolFailureKind) -> &'static str {
    match kind {
        ToolFailureKind::UnknownTool => "unknown_tool",
        ToolFailureKind::InvalidArguments => "invalid_arguments",
        ToolFailureKind::Failed => "failed",
        ToolFailureKind::ForModel => "for_model",
        ToolFailureKind::Panicked => "panicked",
        ToolFailureKind::TimedOut => "timed_out",
        ToolFailureKind::Output => "output",
        ToolFailureKind::Middleware => "middleware",
    }
}

/// `error.type` of a failed run: the model error's kind, or the kind of error.
fn run_error_type(error: &Error) -> &'static str {
    match error {
        Error::Model(error) => model_error_type(error.kind()),
        Error::Middleware(_) => "middleware",
        Error::Application(_) => "application",
        Error::MaxStepsExceeded { .. } => "max_steps_exceeded",
        Error::UndeclaredJump { .. } => "undeclared_jump",
        Error::Interrupted(_) => "interrupted",
        Error::Resume(_) => "resume",
        Error::Checkpoint(_) => "checkpoint",
        Error::Thread(_) => "thread",
        Error::ThreadStore(_) => "thread_store",
        Error::History(_) => "history",
        Error::Build(_) => "build",
        Error::ToolCallInterrupted(_) => "tool_call_interrupted",
    }
}
