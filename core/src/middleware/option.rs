//! `Option<M>`: a middleware that can be switched off at run time without leaving the static chain.

use super::{Middleware, ModelNext, ToolNext};
use crate::context::{Context, ToolContext};
use crate::error::Error;
use crate::message::{ToolCall, ToolResult};
use crate::middleware::Flow;
use crate::model::{ModelRequest, ModelResponse};

/// `Some(m)` behaves as `m`; `None` lets every hook pass through.
impl<M: Middleware> Middleware for Option<M> {
    type State = M::State;
    type Phase = M::Phase;
    type WrapsModel = M::WrapsModel;
    type WrapsTool = M::WrapsTool;
    const NAME: &'static str = M::NAME;
    const HOOKS: super::HookSet = M::HOOKS;
    const JUMPS: super::JumpSet = M::JUMPS;

    async fn before_agent(&self, cx: &mut Context<'_, Self::State>) -> Result<Flow, Error> {
        match self {
            Some(m) => m.before_agent(cx).await,
            None => Ok(Flow::Continue),
        }
    }

    async fn before_model(
        &self,
        cx: &mut Context<'_, Self::State>,
        request: &mut ModelRequest,
    ) -> Result<Flow, Error> {
        match self {
            Some(m) => m.before_model(cx, request).await,
            None => Ok(Flow::Continue),
        }
    }

    async fn wrap_model_call<N: ModelNext>(
        &self,
        cx: &mut Context<'_, Self::State>,
        request: ModelRequest,
        mut next: N,
    ) -> Result<ModelResponse, Error> {
        match self {
            Some(m) => m.wrap_model_call(cx, request, next).await,
            None => next.call(cx, request).await,
        }
    }

    async fn after_model(
        &self,
        cx: &mut Context<'_, Self::State>,
        response: &mut ModelResponse,
    ) -> Result<Flow, Error> {
        match self {
            Some(m) => m.after_model(cx, response).await,
            None => Ok(Flow::Continue),
        }
    }

    async fn wrap_tool_call<N: ToolNext>(
        &self,
        cx: &ToolContext<'_, Self::State>,
        call: ToolCall,
        mut next: N,
    ) -> Result<ToolResult, Error> {
        match self {
            Some(m) => m.wrap_tool_call(cx, call, next).await,
            None => next.call(cx, call).await,
        }
    }

    async fn after_agent(&self, cx: &mut Context<'_, Self::State>) -> Result<(), Error> {
        match self {
            Some(m) => m.after_agent(cx).await,
            None => Ok(()),
        }
    }
}
