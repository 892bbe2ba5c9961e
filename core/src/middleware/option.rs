//! `Option<M>`: a middleware that can be switched off at run time without leaving the static chain.

use std::future::Future;

use futures::future::Either;

use super::Internal;
use super::{Bool, Emit, Hook, HookSet, Marker, Middleware, ModelNext, ToolNext};
use crate::context::{Context, ToolContext};
use crate::error::Error;
use crate::message::{ToolCall, ToolResult};
use crate::middleware::Flow;
use crate::model::{ModelEvent, ModelRequest, ModelResponse};

/// `Some(m)` behaves as `m`; `None` lets every hook pass through.
#[diagnostic::do_not_recommend]
impl<M: Middleware> Middleware for Option<M> {
    type State = M::State;
    type ThreadState = M::ThreadState;
    type StreamState = M::StreamState;
    type Phase = M::Phase;
    // `None` is decided at run time, so `Option<M>` is one layer (or none if `M` never wraps).
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
    // Checked as the members of `M`: `Option<M>` is `M`, switched off or on at run time.
    const MEMBERS: super::constraints::MemberList = M::MEMBERS;
    const SYNC_HOOKS: HookSet = M::SYNC_HOOKS;
    const LIVE_STREAM: bool = M::LIVE_STREAM;

    fn members(internal: Internal) -> crate::interrupt::Members {
        M::members(internal)
    }

    fn instance_name(&self, internal: Internal) -> &'static str {
        match self {
            Some(m) => m.instance_name(internal),
            None => M::NAME,
        }
    }

    fn instance_members(&self, internal: Internal) -> crate::interrupt::Members {
        match self {
            Some(m) => m.instance_members(internal),
            None => M::members(internal),
        }
    }

    fn on_model_event<E: Emit>(
        &self,
        state: &mut Self::StreamState,
        event: ModelEvent,
        out: &mut E,
    ) -> Result<(), Error> {
        match self {
            Some(m) => m.on_model_event(state, event, out),
            None => out.emit(event),
        }
    }

    async fn before_agent(
        &self,
        cx: &mut Context,
        state: &mut Self::State,
        thread: &mut Self::ThreadState,
    ) -> Result<Flow, Error> {
        match self {
            Some(m) => m.before_agent(cx, state, thread).await,
            None => Ok(Flow::Continue),
        }
    }

    async fn before_model(
        &self,
        cx: &mut Context,
        state: &mut Self::State,
        thread: &mut Self::ThreadState,
        request: &mut ModelRequest,
    ) -> Result<Flow, Error> {
        match self {
            Some(m) => m.before_model(cx, state, thread, request).await,
            None => Ok(Flow::Continue),
        }
    }

    fn before_model_sync(
        &self,
        cx: &mut Context,
        state: &mut Self::State,
        thread: &mut Self::ThreadState,
        request: &mut ModelRequest,
        internal: Internal,
    ) -> Result<Flow, Error> {
        match self {
            Some(m) => m.before_model_sync(cx, state, thread, request, internal),
            None => Ok(Flow::Continue),
        }
    }

    // `Some` returns the member's own future: no state machine of its own around it.
    fn wrap_model_call<N: ModelNext>(
        &self,
        cx: &mut Context,
        state: &mut Self::State,
        thread: &mut Self::ThreadState,
        request: ModelRequest,
        mut next: N,
    ) -> impl Future<Output = Result<ModelResponse, Error>> + Send {
        match self {
            Some(m) => Either::Left(m.wrap_model_call(cx, state, thread, request, next)),
            None => Either::Right(async move { next.call(cx, request).await }),
        }
    }

    async fn after_model(
        &self,
        cx: &mut Context,
        state: &mut Self::State,
        thread: &mut Self::ThreadState,
        response: &mut ModelResponse,
    ) -> Result<Flow, Error> {
        match self {
            Some(m) => m.after_model(cx, state, thread, response).await,
            None => Ok(Flow::Continue),
        }
    }

    fn after_model_sync(
        &self,
        cx: &mut Context,
        state: &mut Self::State,
        thread: &mut Self::ThreadState,
        response: &mut ModelResponse,
        internal: Internal,
    ) -> Result<Flow, Error> {
        match self {
            Some(m) => m.after_model_sync(cx, state, thread, response, internal),
            None => Ok(Flow::Continue),
        }
    }

    fn wrap_tool_call<N: ToolNext>(
        &self,
        cx: ToolContext<'_>,
        state: &Self::State,
        thread: &Self::ThreadState,
        call: ToolCall,
        mut next: N,
    ) -> impl Future<Output = Result<ToolResult, Error>> + Send {
        match self {
            Some(m) => Either::Left(m.wrap_tool_call(cx, state, thread, call, next)),
            None => Either::Right(async move { Ok(next.call(cx, call).await) }),
        }
    }

    fn check_answer_at(
        &self,
        at: usize,
        answer: &crate::interrupt::Answer<'_>,
        internal: Internal,
    ) -> Result<(), crate::error::BoxError> {
        match self {
            Some(m) => m.check_answer_at(at, answer, internal),
            None => Ok(()),
        }
    }

    fn contribute(&self, to: &mut super::Contributions) {
        if let Some(m) = self {
            to.collect(m);
        }
    }

    fn describe_into(&self, description: &mut super::describe::Description) {
        if let Some(m) = self {
            m.describe_into(description);
        }
    }

    async fn after_agent(
        &self,
        cx: &mut Context,
        state: &mut Self::State,
        thread: &mut Self::ThreadState,
    ) -> Result<(), Error> {
        match self {
            Some(m) => m.after_agent(cx, state, thread).await,
            None => Ok(()),
        }
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
