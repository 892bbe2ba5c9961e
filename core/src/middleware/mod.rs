//! The [`Middleware`] trait: seven hooks around an agent's run, composed statically.
//!
//! # Hooks
//!
//! | hook              | runs                                   | may                                       |
//! |-------------------|----------------------------------------|-------------------------------------------|
//! | `before_agent`    | once per run, chain order              | edit the history, respond, jump           |
//! | `before_model`    | before every model call, chain order   | edit the request, respond (skip the model), jump |
//! | `wrap_model_call` | around every model call, first listed = outermost | call `next` 0..n times, edit request/response |
//! | `on_model_event`  | on every event of the model's answer, as it arrives, reverse order | edit, drop, hold back or inject events |
//! | `after_model`     | after every model call, reverse order  | edit the response, jump                   |
//! | `wrap_tool_call`  | around every tool call, first listed = outermost; the calls of one step run concurrently | call `next` 0..n times, edit call/result |
//! | `after_agent`     | once per run, reverse order, when the run ends: also after a jump to end, an error or a panic (see below) | edit the history |
//!
//! One run:
//!
//! ```text
//! before_agent                       (chain order)
//! loop {                             until no tool calls, a jump to end, or max_steps
//!     before_model                   (chain order)
//!     wrap_model_call -> model       (onion, first listed = outermost)
//!         on_model_event             (per event of the answer, reverse chain order)
//!     after_model                    (reverse chain order)
//!     wrap_tool_call -> tool         (onion, per tool call, concurrently)
//! }
//! after_agent                        (reverse chain order)
//! ```
//!
//! # Streaming: one path
//!
//! A middleware acts on streamed runs ([`Agent::stream`](crate::Agent::stream)) and unstreamed
//! runs alike; no guard can be bypassed by streaming:
//!
//! - `on_model_event` sees every event of the model's answer (as [`ModelEvent`]s), in both
//!   modes: the answer is assembled from what the hooks let through, so an edit made there is
//!   in the response the wraps and `after_model` see, in the history, and in what the consumer
//!   of a stream receives. It is synchronous (it runs per token) and keeps what it needs
//!   between events — a bounded look-back of held-back text, say — in its
//!   [`StreamState`](Middleware::StreamState), created afresh for every model call (a retried
//!   call starts clean). A chain with such a hook calls the model's
//!   [`stream`](crate::Model::stream) also in unstreamed runs.
//! - `after_model` runs once, on the assembled response, in both modes.
//! - The consumer of a stream sees the model's events **live** only when every member says
//!   that it may ([`LIVE_STREAM`](Middleware::LIVE_STREAM)): by default a member with a
//!   `wrap_model_call` or `after_model` hook does not, since those hooks could change what the
//!   model said after the consumer saw it. Then the answer is held back and the consumer
//!   receives it once `after_model` has run, as it enters the history.
//! - What reaches the consumer is always what enters the history: if the answer a step keeps
//!   differs from what was streamed (a wrap retried, fell back or answered itself, an
//!   `after_model` edited), the consumer is told that what it received is void, then receives
//!   the answer kept.
//!
//! # Phases
//!
//! See [`phase`]: `Input` middleware (only `before_*` hooks) are listed first, `Wrap` middleware
//! (any hook, the default) next, `Output` middleware (only `after_*` hooks) last.
//!
//! # State
//!
//! A middleware's configuration is the value itself, shared by every run. Its data lives in
//! one of two scopes:
//!
//! - [`Middleware::State`], **run-scoped**: created with `Default` at the start of every run
//!   (also every run of a [`Thread`](crate::Thread)): per-run counters and limits.
//! - [`Middleware::ThreadState`], **thread-scoped**: created with `Default` with the thread (or
//!   for a run outside any) and kept across the thread's runs: per-conversation totals.
//!
//! Both are `Default + Serialize + DeserializeOwned + Send + Sync` (saved in checkpoints), passed
//! to every hook as `&mut` on the model path and `&` on the tool path (tool calls of one step
//! run concurrently). A chain's states are the tuples of its members'; each hook sees only its
//! own.
//!
//! # Interrupts
//!
//! `before_model` and `after_model` may return [`Flow::interrupt`], `wrap_tool_call` may return
//! `Err(Error::interrupt(..))`: the run pauses with a checkpoint and resumes later with an answer
//! ([`Context::resume_value`](crate::Context::resume_value),
//! [`ToolContext::resume_value`](crate::ToolContext::resume_value)). A `#[check_answer]`
//! method (or [`Middleware::check_answer`]) refuses a wrong answer before the run resumes. See
//! [`interrupt`](crate::interrupt). An `Err(Error::interrupt(..))` from any other hook does not
//! pause the run: it ends with [`Error::Interrupted`], whose message says which to use where.
//!
//! # Errors
//!
//! A sequential hook's error is named after its middleware and hook by the chain; so is an error
//! that escapes a `wrap_tool_call` (it becomes the call's error result). A hand-written
//! `wrap_model_call` names its own errors with [`Error::middleware`] (the chain adds nothing
//! around it, which keeps onions shallow); the macros do it for you. Errors from `next` pass
//! through unchanged (already named). A hook that ends the run with an error of the
//! application's (a quota, a refusal) returns [`Error::application`], which the caller finds
//! again by its type with [`Error::downcast_ref`].
//!
//! # Panics and cancellation
//!
//! | where the panic is          | what happens |
//! |-----------------------------|--------------|
//! | `before_agent`, `before_model`, `after_model`, `after_agent` | the run ends with [`Error::Middleware`] naming the middleware and the hook (the panic's message is its cause); every `after_agent` still runs |
//! | `wrap_model_call`           | the same, naming the hook (the onion does not record which layer panicked) |
//! | the model's `invoke`        | the call fails with [`Error::Model`]; a wrap may retry it, else the run ends as for an error |
//! | `wrap_tool_call`, a tool    | the call gets an error result the model reads; the run goes on |
//!
//! A run that ends with a panic's error keeps no checkpoint: state a panicking hook left half
//! changed is never resumed from. With `panic = "abort"` nothing of this applies: the process
//! ends at the panic. When the run's future is dropped (a timeout, a `select!`, a stream the
//! consumer drops), nothing more runs — no hook, no `after_agent` — and a
//! [`Thread`](crate::Thread) is left as it was before the run. `after_agent` runs when a run
//! ends: a run that pauses runs it when the resumed run ends, and a run never resumed never
//! runs it.
//!
//! # Implementing by hand
//!
//! The `#[middleware]` and `#[hook]` macros write this impl for you. By hand, declare the
//! associated types and constants and override the hooks you need. Set [`Middleware::HOOKS`] to
//! exactly the hooks you override: it defaults to *all* hooks (a forgotten hook must not be
//! skipped silently), and the chain skips the hooks not in it. `WrapsModel`/`WrapsTool` must be
//! [`True`] exactly when `HOOKS` has the wrap hook; the chain checks this when it is built
//! (`cargo build`), so a wrap hook cannot be skipped by mistake.
//!
//! The chain awaits the hooks of a hand-written impl. The macros do a little better for a
//! `before_model` or `after_model` hook written as a plain `fn`: they also generate a synchronous
//! form, which the chain calls with no future at all (see `BENCHMARKS.md`).
//!
//! ```
//! use hookchain::prelude::*;
//! use hookchain::middleware::{HookSet, False, phase};
//!
//! /// Adds a line to the system prompt of every model call.
//! #[derive(Debug, Clone)]
//! struct Stamp(&'static str);
//!
//! impl Middleware for Stamp {
//!     type State = ();
//!     type ThreadState = ();
//!     type StreamState = ();
//!     type Phase = phase::Input;
//!     type WrapsModel = False;
//!     type WrapsTool = False;
//!     const NAME: &'static str = "Stamp";
//!     const HOOKS: HookSet = HookSet::of(Hook::BeforeModel);
//!
//!     async fn before_model(
//!         &self,
//!         _cx: &mut Context,
//!         _state: &mut (),
//!         _thread: &mut (),
//!         request: &mut ModelRequest,
//!     ) -> Result<Flow, Error> {
//!         let prompt = request.system_prompt.get_or_insert_with(String::new);
//!         prompt.push_str(self.0);
//!         Ok(Flow::Continue)
//!     }
//! }
//! ```

// What generated code names through `__private` (the value conversions of hooks, the bounds
// on state), what a chain knows of its members (its compile-time checks, its description:
// public as `chain::…`), and the machinery's token: middleware's own, below the chains.
pub(crate) mod bounds;
pub(crate) mod constraints;
mod contribute;
pub(crate) mod convert;
pub(crate) mod describe;
mod emit;
mod flow;
pub(crate) mod internal;
mod marker;
mod named;
mod next;
mod option;
pub mod phase;

use std::future::Future;

use serde::Serialize;
use serde::de::DeserializeOwned;

pub use contribute::Contributions;
pub use emit::Emit;
// The machinery of chains and onions: named by generated code and rustc's messages, never by
// users (a hand-written impl names only `True`/`False` and a `phase`).
#[doc(hidden)]
pub use emit::EventRelay;
pub use flow::Flow;
#[doc(hidden)]
pub use marker::{Bool, Marker, ModelWrap, Splice, ToolWrap};
pub use marker::{False, True};
pub use named::Named;
#[doc(hidden)]
pub use next::{ModelLayer, ToolLayer};
pub use next::{ModelNext, ToolNext};
pub use phase::Phase;
#[doc(hidden)]
pub use phase::{LeafPhase, PhaseMarker};

// The names of the hooks and of where they jump, below every layer that names them.
pub use crate::hook::{Hook, HookSet, Jump, JumpSet};

// The items generated code checks user code with, named here as well as in `__private` (hidden
// in both): rustc's messages print an item by its shortest public path, so a mistake reads
// `StateIs<u32>`, not `hookchain::__private::…`.
#[doc(hidden)]
pub use crate::tool::generated::{FallibleToolOutput, ToolArgument, ToolOutput};
#[doc(hidden)]
pub use bounds::{ValidState, ValidThreadState};
#[doc(hidden)]
pub use convert::{
    Conversion, DoneReturn, FlowReturn, HookFuture, IntoDone, IntoFlow, IntoModelResponse,
    IntoToolResult, StateIs, WrapModelCallReturn, WrapToolCallReturn, convert_now,
};

use crate::context::{Context, ToolContext};
use crate::error::{BoxError, Error};
use crate::interrupt::Answer;
use crate::message::{ToolCall, ToolResult};
use crate::model::{ModelEvent, ModelRequest, ModelResponse};
pub(crate) use constraints::ChainChecks;
use constraints::{Constraints, MemberInfo, MemberList};
use describe::{Description, Member};
pub(crate) use internal::Internal;

/// The state a middleware keeps per run: created with `Default`, serializable so that it can be
/// part of a checkpoint, and shared read-only by concurrent tool calls.
///
/// Blanket-implemented; `()` is the state of a middleware that keeps none.
pub trait MiddlewareState: Default + Serialize + DeserializeOwned + Send + Sync + 'static {}

impl<T: Default + Serialize + DeserializeOwned + Send + Sync + 'static> MiddlewareState for T {}

/// What the type parameters of a middleware type must be: a middleware is shared by every run of
/// an agent, on any thread. `T: Shareable` is `T: Send + Sync + 'static`; write either.
///
/// ```
/// use hookchain::middleware::Shareable;
///
/// fn spawnable<T: Shareable>(value: T) -> impl Send + Sync + 'static {
///     value
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "the type parameter `{Self}` of a middleware must be `Send + Sync + 'static`: a \
               middleware is shared by every run, on any thread",
    label = "add `Send + Sync + 'static` to the bounds of `{Self}`"
)]
pub trait Shareable: Send + Sync + 'static {}

// Not recommended: a missing bound is then reported as `Shareable`'s message, not as `Send`'s.
#[diagnostic::do_not_recommend]
impl<T: Send + Sync + 'static + ?Sized> Shareable for T {}

/// Hooks around an agent's run. See the [module docs](self) for the order of the hooks.
///
/// A chain of middleware — a tuple such as `(a, b, c)`, or what `chain![a, b, c]` builds —
/// implements `Middleware` too, so chains nest. [`Option<M>`] is a middleware that does nothing
/// when `None`: a run-time toggle that keeps the chain static.
///
/// Configuration lives in the middleware value, which every run shares; data of one run lives in
/// [`Middleware::State`], which each run creates afresh.
///
/// A middleware is never a `dyn Middleware` (its hooks are generic and allocation-free):
/// middleware chosen at run time — a list read from a configuration, loaded plugins — are
/// [`plugin`](crate::plugin)'s: [`plugin::boxed`](crate::plugin::boxed) makes any middleware a
/// `Box<dyn DynMiddleware>`, and a [`Plugins`](crate::plugin::Plugins) member runs a list of
/// them inside a static chain.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a middleware",
    label = "not a middleware",
    note = "a middleware is a `#[hook]` function, a type with a `#[middleware]` impl block, a \
            hand-written `impl Middleware`, a chain (`chain![..]`, or a tuple of up to 12 \
            middleware), or an `Option` of one; `chain![..]` takes any number of members",
    note = "a built-in's builder becomes a middleware with `.build()?` \
            (`ModelRetry::builder().build()?`), a `Result` with `?`, and an \
            `Option<Result<..>>` with `.transpose()?`"
)]
// `Sized`: a middleware is never `dyn` (its hooks are generic and return `impl Future`), and with
// `Sized` a supertrait, `dyn Middleware` is refused (E0038) with that one reason rather than
// a list of every constant and hook of the trait. Middleware chosen at run time are
// `hookchain::plugin`'s.
// `where Self: Sync` on each hook returning a future (implied by the supertrait): the future
// holds `&self`, and with the bound the check of an impl assumes it, so a middleware that is not
// `Sync` (a `Cell` field) gets no error per hook besides the supertrait's.
pub trait Middleware: Send + Sync + Sized {
    /// This middleware's run-scoped state; `()` if it keeps none. Created with `Default` at the
    /// start of every run, also of every run in a [`Thread`](crate::Thread).
    type State: MiddlewareState;

    /// This middleware's thread-scoped state; `()` if it keeps none. Created with `Default` with
    /// the thread (or for a run outside a thread) and kept across the runs of a
    /// [`Thread`](crate::Thread). `Clone`: a run works on a copy, which becomes the thread's
    /// when the run ends or pauses, so a run dropped half-way leaves the thread as it was.
    type ThreadState: MiddlewareState + Clone;

    /// This middleware's state for one model call's stream of events, read and written by
    /// [`on_model_event`](Middleware::on_model_event); `()` if it keeps none. Created with
    /// `Default` for every model call (a retried call starts afresh) and dropped with the
    /// call, so it is never saved.
    type StreamState: Default + Send;

    /// The phase ([`phase::Input`], [`phase::Wrap`] or [`phase::Output`]).
    type Phase: PhaseMarker;

    /// [`True`] if this middleware overrides [`wrap_model_call`](Middleware::wrap_model_call),
    /// [`False`] if not ([`Splice`] for chains).
    type WrapsModel: ModelWrap<Self>;

    /// [`True`] if this middleware overrides [`wrap_tool_call`](Middleware::wrap_tool_call),
    /// [`False`] if not ([`Splice`] for chains).
    type WrapsTool: ToolWrap<Self>;

    /// The name errors and descriptions use.
    const NAME: &'static str;

    /// The hooks this middleware implements; the chain calls no other. Defaults to all hooks.
    const HOOKS: HookSet = HookSet::ALL;

    /// The jumps this middleware may make, per hook: a [`Flow::Jump`] to a target its hook did
    /// not declare is an [`Error::UndeclaredJump`]. Defaults to every target from every hook
    /// that can jump.
    ///
    /// A declaration is per hook (`JumpSet::of(Hook::BeforeModel, Jump::End)` lets `before_model`
    /// end the run, not `after_model`); a chain's set is the union of its members', but each
    /// member's jumps are checked against its own set.
    const JUMPS: JumpSet = JumpSet::ALL;

    /// The identity other middleware name this one by in their constraints (see
    /// [`Identified`](crate::chain::Identified)); `None` if it cannot be named.
    const IDENTITY: Option<&'static str> = None;

    /// Where this middleware must sit relative to others (`before`, `after`, `requires`),
    /// checked when the chain is built.
    const CONSTRAINTS: Constraints = Constraints::NONE;

    /// Whether the consumer of a streamed run may see the model's events as they arrive, before
    /// this middleware's `wrap_model_call` and `after_model` have seen the whole answer: say
    /// `true` when those hooks leave what the model said as it is (they count, log, retry on an
    /// error), or when `on_model_event` makes the same change on the events. When any member
    /// of a chain says `false`, a streamed run holds each answer back until `after_model` has
    /// run (see the [module docs](self) on streaming).
    ///
    /// Defaults to `true` only for a middleware with neither hook in [`HOOKS`](Self::HOOKS).
    const LIVE_STREAM: bool =
        !Self::HOOKS.contains(Hook::WrapModelCall) && !Self::HOOKS.contains(Hook::AfterModel);

    /// The chain's members, flattened, for the compile-time checks. A chain overrides it.
    #[doc(hidden)]
    const MEMBERS: MemberList = MemberList::one(MemberInfo::of::<Self>());

    /// The sequential hooks the chain runs through their synchronous form
    /// ([`before_model_sync`](Middleware::before_model_sync),
    /// [`after_model_sync`](Middleware::after_model_sync)) instead of awaiting their future: a
    /// hook that never awaits then costs a plain call, with no future stored in the chain's. The
    /// macros list the hooks written as plain `fn`s; a chain lists a hook when all its members
    /// that have it do. Only `BeforeModel` and `AfterModel` count.
    #[doc(hidden)]
    const SYNC_HOOKS: HookSet = HookSet::NONE;

    /// Runs once, before the first model call.
    fn before_agent(
        &self,
        cx: &mut Context,
        state: &mut Self::State,
        thread: &mut Self::ThreadState,
    ) -> impl Future<Output = Result<Flow, Error>> + Send
    where
        Self: Sync,
    {
        let _ = (cx, state, thread);
        async { Ok(Flow::Continue) }
    }

    /// Runs before every model call; may edit the request (this call only).
    fn before_model(
        &self,
        cx: &mut Context,
        state: &mut Self::State,
        thread: &mut Self::ThreadState,
        request: &mut ModelRequest,
    ) -> impl Future<Output = Result<Flow, Error>> + Send
    where
        Self: Sync,
    {
        let _ = (cx, state, thread, request);
        async { Ok(Flow::Continue) }
    }

    /// `before_model` without a future; called instead of it when [`Middleware::SYNC_HOOKS`]
    /// has `BeforeModel`, and must then do what it does.
    #[doc(hidden)]
    fn before_model_sync(
        &self,
        cx: &mut Context,
        state: &mut Self::State,
        thread: &mut Self::ThreadState,
        request: &mut ModelRequest,
        _: Internal,
    ) -> Result<Flow, Error> {
        let _ = (cx, state, thread, request);
        Err(Error::no_sync_form(Self::NAME, Hook::BeforeModel))
    }

    /// Wraps every model call; `next` runs the inner layers and the model.
    ///
    /// The chain adds no future of its own around a wrap hook (that keeps deep onions within
    /// the compiler's limits), so it cannot name errors raised here: raise them with
    /// [`Error::middleware`] to name this middleware.
    fn wrap_model_call<N: ModelNext>(
        &self,
        cx: &mut Context,
        state: &mut Self::State,
        thread: &mut Self::ThreadState,
        request: ModelRequest,
        mut next: N,
    ) -> impl Future<Output = Result<ModelResponse, Error>> + Send
    where
        Self: Sync,
    {
        let _ = (state, thread);
        async move { next.call(cx, request).await }
    }

    /// Runs on every event of a model call's answer, as it arrives, in streamed and unstreamed
    /// runs alike (see the [module docs](self) on streaming); `out` takes the events it lets
    /// through, to the members listed before this one and then into the answer.
    ///
    /// Emit each event as it is, edited, or not at all; hold events back in `state` and emit
    /// them later (at the latest when the [`Finish`](ModelEvent::Finish) event comes, which
    /// ends every answer), or emit events of your own. The events emitted must make a valid
    /// answer (see [`ModelEvent`]): one that contradicts the answer so far fails the call. An
    /// error fails the model call, as the model's error would (a wrap may retry it).
    fn on_model_event<E: Emit>(
        &self,
        state: &mut Self::StreamState,
        event: ModelEvent,
        out: &mut E,
    ) -> Result<(), Error> {
        let _ = state;
        out.emit(event)
    }

    /// Runs after every model call; may edit the response before it enters the history.
    fn after_model(
        &self,
        cx: &mut Context,
        state: &mut Self::State,
        thread: &mut Self::ThreadState,
        response: &mut ModelResponse,
    ) -> impl Future<Output = Result<Flow, Error>> + Send
    where
        Self: Sync,
    {
        let _ = (cx, state, thread, response);
        async { Ok(Flow::Continue) }
    }

    /// `after_model` without a future; called instead of it when [`Middleware::SYNC_HOOKS`] has
    /// `AfterModel`, and must then do what it does.
    #[doc(hidden)]
    fn after_model_sync(
        &self,
        cx: &mut Context,
        state: &mut Self::State,
        thread: &mut Self::ThreadState,
        response: &mut ModelResponse,
        _: Internal,
    ) -> Result<Flow, Error> {
        let _ = (cx, state, thread, response);
        Err(Error::no_sync_form(Self::NAME, Hook::AfterModel))
    }

    /// Wraps every tool call; `next` runs the inner layers and the tool.
    ///
    /// An error that escapes becomes the call's error result (named after this middleware), and
    /// `Err(Error::interrupt(payload))` pauses the run; `cx` is this hook's own view of the call
    /// ([`ToolContext::resume_value`] is the answer to *its* interrupt).
    fn wrap_tool_call<'c, N: ToolNext>(
        &self,
        cx: ToolContext<'c>,
        state: &Self::State,
        thread: &Self::ThreadState,
        call: ToolCall,
        mut next: N,
    ) -> impl Future<Output = Result<ToolResult, Error>> + Send
    where
        Self: Sync,
    {
        let _ = (state, thread);
        async move { Ok(next.call(cx, call).await) }
    }

    /// Checks an answer to an interrupt this middleware raised, before the run resumes: an
    /// answer refused here stops [`Agent::resume`](crate::Agent::resume) with
    /// [`ResumeError::InvalidAnswer`](crate::interrupt::ResumeError::InvalidAnswer) before
    /// anything runs, instead of failing the resumed run. Accepts every answer by default.
    fn check_answer(&self, answer: &Answer<'_>) -> Result<(), BoxError> {
        let _ = answer;
        Ok(())
    }

    /// [`check_answer`](Self::check_answer) of the member at `at` in the flattened chain (a
    /// chain finds the member; a middleware is member 0).
    #[doc(hidden)]
    fn check_answer_at(&self, at: usize, answer: &Answer<'_>, _: Internal) -> Result<(), BoxError> {
        debug_assert_eq!(at, 0, "a middleware is one member");
        self.check_answer(answer)
    }

    /// The members as a checkpoint records them, nested as the state is (a middleware is one
    /// member; a chain lists its members).
    #[doc(hidden)]
    fn members(_: Internal) -> crate::interrupt::Members
    where
        Self: Sized,
    {
        crate::interrupt::Members::member(Self::NAME, ChainChecks::<Self>::LEN)
    }

    /// The members of this value as a checkpoint records them: [`members`](Self::members),
    /// with the names of [`Named`] instances (a chain lists its members').
    #[doc(hidden)]
    fn instance_members(&self, internal: Internal) -> crate::interrupt::Members
    where
        Self: Sized,
    {
        Self::members(internal)
    }

    /// The name this member is known by: its instance's name ([`Named`]), else
    /// [`NAME`](Self::NAME).
    #[doc(hidden)]
    fn instance_name(&self, _: Internal) -> &'static str {
        Self::NAME
    }

    /// This middleware as the instance named `name` ([`Named`]): checkpoints, threads,
    /// interrupts and errors know it by its name, and a checkpoint or thread resumed on a chain
    /// that changed since gives it the state of the instance of its name.
    ///
    /// Name the members of a chain that lists a middleware more than once, so that a change to
    /// the chain never hands one's state to another.
    ///
    /// ```
    /// use hookchain::prelude::*;
    /// use hookchain::builtin::ModelCallLimit;
    /// use hookchain::chain;
    ///
    /// # fn main() -> Result<(), hookchain::builtin::ConfigError> {
    /// let chain = chain![
    ///     ModelCallLimit::builder().run_limit(10).build()?.named("per-run"),
    ///     ModelCallLimit::builder().thread_limit(200).build()?.named("per-thread"),
    /// ];
    /// assert_eq!(chain.describe().members()[1].name, "per-thread");
    /// # Ok(())
    /// # }
    /// ```
    fn named(self, name: &'static str) -> Named<Self>
    where
        Self: Sized,
    {
        Named::new(name, self)
    }

    /// Adds the tools and system-prompt pieces this middleware brings to the agent (Sagents'
    /// `tools/1` and `system_prompt/1`): called once, when the agent is built, and by
    /// [`describe`](Self::describe). Adds nothing by default; a chain forwards to each member.
    ///
    /// A contributed tool whose name another tool of the agent has is an error at build
    /// ([`AgentBuildError`](crate::agent::AgentBuildError)); prompt pieces follow the agent's own system
    /// prompt, in listing order. In a `#[middleware]` block, mark a method
    /// `#[contribute]`.
    fn contribute(&self, to: &mut Contributions) {
        let _ = to;
    }

    /// Adds this middleware (or, for a chain, each member) to `description`.
    ///
    /// Chains override this to list their members; a disabled `Option<M>` lists nothing.
    fn describe_into(&self, description: &mut Description) {
        description.push(Member {
            name: Self::NAME,
            phase: <<Self::Phase as PhaseMarker>::First as LeafPhase>::PHASE,
            hooks: Self::HOOKS,
        });
        let mut contributions = Contributions::new();
        contributions.collect(self);
        description.contributed(&contributions);
    }

    /// The members of this chain and, per hook, the order in which they run.
    fn describe(&self) -> Description
    where
        Self: Sized,
    {
        let mut description = Description::default();
        self.describe_into(&mut description);
        description
    }

    /// Runs once at the end of the run, also after a jump to end or an error.
    fn after_agent(
        &self,
        cx: &mut Context,
        state: &mut Self::State,
        thread: &mut Self::ThreadState,
    ) -> impl Future<Output = Result<(), Error>> + Send
    where
        Self: Sync,
    {
        let _ = (cx, state, thread);
        async { Ok(()) }
    }
}

/// Checks that `M` declared, for `hook`, the target of a jump `hook` returned (by reference: a
/// `Flow` is checked on every hook call, and never copied for it).
#[inline]
pub(crate) fn check_jump<M: Middleware>(flow: &Flow, hook: Hook) -> Result<(), Error> {
    match flow {
        Flow::Jump(target) if !M::JUMPS.contains(hook, *target) => Err(Error::UndeclaredJump {
            middleware: M::NAME,
            hook,
            target: *target,
        }),
        _ => Ok(()),
    }
}
