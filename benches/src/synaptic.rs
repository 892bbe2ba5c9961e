//! Variant (e): Synaptic 0.4.0, the main Rust peer — its `MiddlewareChain::call_model` around a
//! fake model.
//!
//! `MiddlewareChain::call_model` runs every member's `before_model`, the `wrap_model_call` onion
//! (a `WrapModelChain` per layer, every call an `async_trait` boxed future through a vtable),
//! then every `after_model` in reverse. The innermost `ModelCaller` is [`SynAnswer`], which
//! answers at once like hookchain's fake model (not `BaseChatModelCaller`, which would add a
//! `ChatRequest` conversion and a `dyn ChatModel` call that hookchain's variants do not pay).

use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use synaptic_core::{Message, SynapticError};
use synaptic_middleware::{
    AgentMiddleware, MiddlewareChain, ModelCaller, ModelRequest, ModelResponse,
};

/// A middleware that overrides nothing: every hook is Synaptic's default no-op (which the chain
/// still calls, boxed).
#[derive(Debug, Default)]
pub struct SynNoop;

#[async_trait]
impl AgentMiddleware for SynNoop {}

/// The work of (b) in Synaptic's shape: the counter lives in the middleware (Synaptic has no
/// per-run state), the wrap is the default pass-through, `after_model` reads the response.
#[derive(Debug, Default)]
pub struct SynActive {
    count: AtomicU64,
}

#[async_trait]
impl AgentMiddleware for SynActive {
    async fn before_model(&self, _request: &mut ModelRequest) -> Result<(), SynapticError> {
        self.count.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    async fn after_model(
        &self,
        _request: &ModelRequest,
        response: &mut ModelResponse,
    ) -> Result<(), SynapticError> {
        black_box(response.message.content().len());
        Ok(())
    }
}

/// The fake model: answers an empty AI message at once.
#[derive(Debug, Default)]
pub struct SynAnswer;

#[async_trait]
impl ModelCaller for SynAnswer {
    async fn call(&self, request: ModelRequest) -> Result<ModelResponse, SynapticError> {
        drop(request);
        Ok(ModelResponse {
            message: Message::ai(""),
            usage: None,
        })
    }
}

/// A chain of `n` [`SynNoop`].
pub fn noop_chain(n: usize) -> MiddlewareChain {
    MiddlewareChain::new(
        (0..n)
            .map(|_| Arc::new(SynNoop) as Arc<dyn AgentMiddleware>)
            .collect(),
    )
}

/// A chain of `n` [`SynActive`].
pub fn active_chain(n: usize) -> MiddlewareChain {
    MiddlewareChain::new(
        (0..n)
            .map(|_| Arc::new(SynActive::default()) as Arc<dyn AgentMiddleware>)
            .collect(),
    )
}

/// An empty request (empty collections: building it allocates nothing).
#[inline]
pub fn request() -> ModelRequest {
    ModelRequest {
        messages: Vec::new(),
        tools: Vec::new(),
        tool_choice: None,
        system_prompt: None,
    }
}

/// One model call through `chain`.
pub async fn model_call(chain: &MiddlewareChain) -> Result<ModelResponse, SynapticError> {
    chain.call_model(request(), &SynAnswer).await
}
