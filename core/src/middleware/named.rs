//! [`Named`]: a middleware instance with a name of its own, which checkpoints, threads,
//! interrupts and errors know it by.

use std::future::Future;

use super::Internal;
use super::{Bool, Emit, Hook, HookSet, Marker, Middleware, ModelNext, ToolNext};
use crate::context::{Context, ToolContext};
use crate::error::Error;
use crate::message::{ToolCall, ToolResult};
use crate::middleware::Flow;
use crate::model::{ModelEvent, ModelRequest, ModelResponse};

/// A middleware instance named `name`: it behaves as the middleware it names, and is known by
/// its name where the chain records or reports its members. Built by
/// [`Middleware::named`] (or [`Named::new`]).
///
/// A chain may list a middleware more than once: two
/// [`ToolCallLimit`](crate::builtin::ToolCallLimit)s, say, one for all tools and one for
/// `search`. Their states are told apart by the position each takes, which is enough for a
/// run; but a checkpoint or a thread stored by one chain may be resumed on a chain
/// that changed since (see [`Agent::resume`](crate::Agent::resume)), and then members are
/// matched by middleware, not by position. A name makes the match certain:
///
/// - **Carry-over**: a named instance continues the stored instance of its middleware with its
///   name, whatever moved around it. Unnamed members of a middleware continue the stored
///   unnamed ones in order when the chains have as many of them; when they do not (two
///   unnamed limits stored, one left), which one continues would be a guess, and the resume is
///   refused with [`ResumeError::AmbiguousMember`](crate::interrupt::ResumeError::AmbiguousMember)
///   (unless they carry nothing: each held its default state, none paused the run).
/// - **Reports**: an interrupt the instance raises has the name as its
///   [`source`](crate::interrupt::Interrupt::source); an error of its hooks names the instance
///   (except `wrap_model_call`'s, which the middleware names itself); its members in
///   [`Checkpoint::chain`](crate::interrupt::Checkpoint::chain), its entry in
///   [`describe`](Middleware::describe) and the errors of a resume use the name.
///
/// Tracing spans and events, and the error of a hook that panicked, keep the middleware's
/// [`NAME`](Middleware::NAME).
///
/// ```
/// use hookchain::prelude::*;
/// use hookchain::builtin::ToolCallLimit;
/// use hookchain::chain;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let chain = chain![
///     ToolCallLimit::builder().run_limit(20).build()?.named("all-tools"),
///     ToolCallLimit::builder().tool("search").run_limit(3).build()?.named("search"),
/// ];
/// let names: Vec<_> = chain.describe().members().iter().map(|member| member.name).collect();
/// assert_eq!(names, ["all-tools", "search"]);
/// # let _agent = Agent::builder(ScriptedModel::new([])).chain(chain).build()?;
/// # Ok(())
/// # }
/// ```
///
/// The name is a `&'static str`, as a middleware's [`NAME`](Middleware::NAME) is: names are
/// part of the chain's code, as the members are. It is stored, as a string, in every
/// checkpoint and thread: renaming an instance makes it a new one (the state stored under the
/// old name is dropped). Naming the members of a chain that had no names, or dropping a name,
/// keeps their states where that is no guess (as many members of the middleware on both
/// sides).
///
/// To switch a named instance off at run time, name the [`Option`]
/// (`Some(limit).named("daily")`, `None::<ToolCallLimit>.named("daily")`): it keeps its name
/// while off. A chain cannot be named (that does not build): name its members. An instance
/// named twice keeps its first (inner) name.
///
/// # Performance
///
/// `Named<M>` is `M` and a `&'static str`, and allocates nothing per call. Its sequential hooks
/// add a branch on their result; its wrap hooks are `M`'s own futures, so it adds nothing to
/// the depth of the onions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Named<M> {
    name: &'static str,
    inner: M,
}

impl<M: Middleware> Named<M> {
    /// The instance of `inner` named `name`.
    ///
    /// `inner` is one middleware (or an [`Option`] of one), not a chain: naming a chain does
    /// not compile.
    ///
    /// ```
    /// use hookchain::builtin::ToolCallLimit;
    /// use hookchain::middleware::Named;
    ///
    /// let limit = ToolCallLimit::builder().thread_limit(100).build().unwrap();
    /// let daily = Named::new("daily", limit);
    /// assert_eq!(daily.name(), "daily");
    /// ```
    ///
    /// Naming a chain fails to build (in `cargo build`; `cargo check` does not evaluate the
    /// check, a constant per type):
    ///
    /// ```compile_fail
    /// use hookchain::builtin::{ModelCallLimit, ToolCallLimit};
    /// use hookchain::prelude::*;
    ///
    /// let limits = (
    ///     ModelCallLimit::builder().build().unwrap(),
    ///     ToolCallLimit::builder().build().unwrap(),
    /// );
    /// let _ = limits.named("limits");
    /// ```
    pub const fn new(name: &'static str, inner: M) -> Self {
        const {
            assert!(
                M::MEMBERS.len() == 1,
                "a chain cannot be named: name each of its members (`.named(..)`)"
            );
        }
        Named { name, inner }
    }

    /// The instance's name.
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// The middleware named.
    pub const fn inner(&self) -> &M {
        &self.inner
    }

    /// The middleware named, without its name.
    pub fn into_inner(self) -> M {
        self.inner
    }

    /// `result` of the hook `hook`, its error and interrupt named after this instance.
    fn own<T>(&self, hook: Hook, result: Result<T, Error>) -> Result<T, Error> {
        result.map_err(|error| error.renamed(M::NAME, self.name).attribute(self.name, hook))
    }

    /// [`own`](Self::own), for a sequential hook's [`Flow`].
    fn own_flow(&self, hook: Hook, result: Result<Flow, Error>) -> Result<Flow, Error> {
        match self.own(hook, result)? {
            Flow::Interrupt(mut interruption) => {
                interruption.renamed(M::NAME, self.name);
                interruption.raised_by(self.name);
                Ok(Flow::Interrupt(interruption))
            }
            flow => Ok(flow),
        }
    }
}

/// The named instance behaves as `M`; only its name differs.
#[diagnostic::do_not_recommend]
impl<M: Middleware> Middleware for Named<M> {
    type State = M::State;
    type ThreadState = M::ThreadState;
    type StreamState = M::StreamState;
    type Phase = M::Phase;
    type WrapsModel = <M::WrapsModel as Marker>::AsLeaf;
    type WrapsTool = <M::WrapsTool as Marker>::AsLeaf;
    const NAME: &'static str = M::NAME;
    const HOOKS: HookSet = M::HOOKS
        .union(wrap_hook(
            <Self::WrapsModel as Bool>::VALUE,
            Hook::WrapModelCall,
        ))
        .union(wrap_hook(
            <Self::WrapsTool as Bool>::VALUE,
            Hook::WrapToolCall,
        ));
    const JUMPS: super::JumpSet = M::JUMPS;
    const IDENTITY: Option<&'static str> = M::IDENTITY;
    const CONSTRAINTS: super::constraints::Constraints = M::CONSTRAINTS;
    const MEMBERS: super::constraints::MemberList = M::MEMBERS;
    const SYNC_HOOKS: HookSet = M::SYNC_HOOKS;
    const LIVE_STREAM: bool = M::LIVE_STREAM;

    fn members(internal: Internal) -> crate::interrupt::Members {
        M::members(internal)
    }

    fn instance_members(&self, internal: Internal) -> crate::interrupt::Members {
        self.inner.instance_members(internal).named(self.name)
    }

    fn on_model_event<E: Emit>(
        &self,
        state: &mut Self::StreamState,
        event: ModelEvent,
        out: &mut E,
    ) -> Result<(), Error> {
        self.inner.on_model_event(state, event, out)
    }

    async fn before_agent(
        &self,
        cx: &mut Context,
        state: &mut Self::State,
        thread: &mut Self::ThreadState,
    ) -> Result<Flow, Error> {
        let result = self.inner.before_agent(cx, state, thread).await;
        self.own_flow(Hook::BeforeAgent, result)
    }

    async fn before_model(
        &self,
        cx: &mut Context,
        state: &mut Self::State,
        thread: &mut Self::ThreadState,
        request: &mut ModelRequest,
    ) -> Result<Flow, Error> {
        let result = self.inner.before_model(cx, state, thread, request).await;
        self.own_flow(Hook::BeforeModel, result)
    }

    fn before_model_sync(
        &self,
        cx: &mut Context,
        state: &mut Self::State,
        thread: &mut Self::ThreadState,
        request: &mut ModelRequest,
        internal: Internal,
    ) -> Result<Flow, Error> {
        let result = self
            .inner
            .before_model_sync(cx, state, thread, request, internal);
        self.own_flow(Hook::BeforeModel, result)
    }

    // `M`'s own future: errors that reach it through `next` are other members', and it names
    // its own (a wrap hook names its errors itself).
    fn wrap_model_call<N: ModelNext>(
        &self,
        cx: &mut Context,
        state: &mut Self::State,
        thread: &mut Self::ThreadState,
        request: ModelRequest,
        next: N,
    ) -> impl Future<Output = Result<ModelResponse, Error>> + Send {
        self.inner.wrap_model_call(cx, state, thread, request, next)
    }

    async fn after_model(
        &self,
        cx: &mut Context,
        state: &mut Self::State,
        thread: &mut Self::ThreadState,
        response: &mut ModelResponse,
    ) -> Result<Flow, Error> {
        let result = self.inner.after_model(cx, state, thread, response).await;
        self.own_flow(Hook::AfterModel, result)
    }

    fn after_model_sync(
        &self,
        cx: &mut Context,
        state: &mut Self::State,
        thread: &mut Self::ThreadState,
        response: &mut ModelResponse,
        internal: Internal,
    ) -> Result<Flow, Error> {
        let result = self
            .inner
            .after_model_sync(cx, state, thread, response, internal);
        self.own_flow(Hook::AfterModel, result)
    }

    // `M`'s own future: the onion's layer names its interrupt and errors after the instance
    // ([`instance_name`](Middleware::instance_name)), with no future of this one's around it.
    fn wrap_tool_call<N: ToolNext>(
        &self,
        cx: ToolContext<'_>,
        state: &Self::State,
        thread: &Self::ThreadState,
        call: ToolCall,
        next: N,
    ) -> impl Future<Output = Result<ToolResult, Error>> + Send {
        self.inner.wrap_tool_call(cx, state, thread, call, next)
    }

    fn instance_name(&self, _: Internal) -> &'static str {
        self.name
    }

    fn check_answer_at(
        &self,
        at: usize,
        answer: &crate::interrupt::Answer<'_>,
        internal: Internal,
    ) -> Result<(), crate::error::BoxError> {
        self.inner.check_answer_at(at, answer, internal)
    }

    fn contribute(&self, to: &mut super::Contributions) {
        to.collect(&self.inner);
    }

    fn describe_into(&self, description: &mut super::describe::Description) {
        let from = description.members().len();
        self.inner.describe_into(description);
        description.rename_from(from, M::NAME, self.name);
    }

    async fn after_agent(
        &self,
        cx: &mut Context,
        state: &mut Self::State,
        thread: &mut Self::ThreadState,
    ) -> Result<(), Error> {
        let result = self.inner.after_agent(cx, state, thread).await;
        self.own(Hook::AfterAgent, result)
    }
}

/// `hook` if `wraps`, else nothing.
const fn wrap_hook(wraps: bool, hook: Hook) -> HookSet {
    if wraps {
        HookSet::of(hook)
    } else {
        HookSet::NONE
    }
}
