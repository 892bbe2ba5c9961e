//! Variant (d): a `Vec<Arc<dyn Middleware>>` chain with boxed futures — the design the peers use
//! (LangChain-style hook traits made object-safe with boxed futures, as `async_trait` does).
//!
//! Written to be as favourable to the design as it honestly can be: the per-run state is a
//! typed `u64` slot per member (peers keep a dynamically typed map, or atomics in the
//! middleware), and the chain walks a slice rather than cloning anything. What it cannot avoid
//! is the design itself: every hook call and every layer of the onion returns a boxed future
//! through a vtable.

use std::hint::black_box;
use std::sync::Arc;

use futures::future::BoxFuture;
use hookchain::prelude::*;

use crate::fixtures::answer;

/// The object-safe middleware trait of a dyn chain.
pub trait DynMiddleware: Send + Sync {
    /// Before every model call, chain order.
    fn before_model<'a>(
        &'a self,
        cx: &'a mut Context,
        state: &'a mut u64,
        request: &'a mut ModelRequest,
    ) -> BoxFuture<'a, Result<Flow, Error>>;

    /// Around every model call, first member outermost.
    fn wrap_model_call<'a>(
        &'a self,
        cx: &'a mut Context,
        state: &'a mut u64,
        request: ModelRequest,
        next: &'a mut dyn DynModelNext,
    ) -> BoxFuture<'a, Result<ModelResponse, Error>>;

    /// After every model call, reverse order.
    fn after_model<'a>(
        &'a self,
        cx: &'a mut Context,
        state: &'a mut u64,
        response: &'a mut ModelResponse,
    ) -> BoxFuture<'a, Result<Flow, Error>>;
}

/// The rest of the onion, as a dyn chain hands it to a wrap.
pub trait DynModelNext: Send {
    /// Runs the inner layers and the model.
    fn call<'a>(
        &'a mut self,
        cx: &'a mut Context,
        request: ModelRequest,
    ) -> BoxFuture<'a, Result<ModelResponse, Error>>;
}

/// The same work as (b): counter bump, pass-through wrap, response read.
#[derive(Debug, Clone, Copy, Default)]
pub struct DynActive;

impl DynMiddleware for DynActive {
    fn before_model<'a>(
        &'a self,
        _cx: &'a mut Context,
        count: &'a mut u64,
        _request: &'a mut ModelRequest,
    ) -> BoxFuture<'a, Result<Flow, Error>> {
        Box::pin(async move {
            *count += 1;
            Ok(Flow::Continue)
        })
    }

    fn wrap_model_call<'a>(
        &'a self,
        cx: &'a mut Context,
        _count: &'a mut u64,
        request: ModelRequest,
        next: &'a mut dyn DynModelNext,
    ) -> BoxFuture<'a, Result<ModelResponse, Error>> {
        Box::pin(async move { next.call(cx, request).await })
    }

    fn after_model<'a>(
        &'a self,
        _cx: &'a mut Context,
        _count: &'a mut u64,
        response: &'a mut ModelResponse,
    ) -> BoxFuture<'a, Result<Flow, Error>> {
        Box::pin(async move {
            black_box(response.message.text().len());
            Ok(Flow::Continue)
        })
    }
}

/// The model, behind the same object-safe interface (peers hold a `dyn` model).
#[derive(Debug, Clone, Copy, Default)]
pub struct DynAnswer;

impl DynModelNext for DynAnswer {
    fn call<'a>(
        &'a mut self,
        _cx: &'a mut Context,
        request: ModelRequest,
    ) -> BoxFuture<'a, Result<ModelResponse, Error>> {
        Box::pin(answer(request))
    }
}

/// One layer of the onion: the first of `members` around the rest.
struct Layer<'a> {
    members: &'a [Arc<dyn DynMiddleware>],
    states: &'a mut [u64],
    model: &'a mut dyn DynModelNext,
}

impl DynModelNext for Layer<'_> {
    fn call<'a>(
        &'a mut self,
        cx: &'a mut Context,
        request: ModelRequest,
    ) -> BoxFuture<'a, Result<ModelResponse, Error>> {
        Box::pin(async move {
            match (self.members.split_first(), self.states.split_first_mut()) {
                (Some((first, members)), Some((state, states))) => {
                    let mut next = Layer {
                        members,
                        states,
                        model: &mut *self.model,
                    };
                    first.wrap_model_call(cx, state, request, &mut next).await
                }
                _ => self.model.call(cx, request).await,
            }
        })
    }
}

/// A chain of dyn middleware.
#[derive(Clone, Default)]
pub struct DynChain {
    members: Vec<Arc<dyn DynMiddleware>>,
}

impl std::fmt::Debug for DynChain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DynChain")
            .field("members", &self.members.len())
            .finish()
    }
}

impl DynChain {
    /// `n` [`DynActive`] members.
    pub fn active(n: usize) -> Self {
        Self {
            members: (0..n)
                .map(|_| Arc::new(DynActive) as Arc<dyn DynMiddleware>)
                .collect(),
        }
    }

    /// The number of members.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// Whether the chain is empty.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// A fresh per-run state: one slot per member.
    pub fn state(&self) -> Vec<u64> {
        vec![0; self.members.len()]
    }

    /// One model call: `before_model` in order, the onion, `after_model` in reverse.
    pub async fn model_call(
        &self,
        cx: &mut Context,
        states: &mut [u64],
    ) -> Result<ModelResponse, Error> {
        let mut request = crate::fixtures::empty_request();
        for (member, state) in self.members.iter().zip(states.iter_mut()) {
            match member.before_model(cx, state, &mut request).await? {
                Flow::Continue => {}
                Flow::Respond(response) => return Ok(*response),
                flow => panic!("unexpected {flow:?}"),
            }
        }
        let mut model = DynAnswer;
        let mut response = Layer {
            members: &self.members,
            states: &mut *states,
            model: &mut model,
        }
        .call(cx, request)
        .await?;
        for (member, state) in self.members.iter().zip(states.iter_mut()).rev() {
            match member.after_model(cx, state, &mut response).await? {
                Flow::Continue => {}
                Flow::Respond(replacement) => response = *replacement,
                flow => panic!("unexpected {flow:?}"),
            }
        }
        Ok(response)
    }
}
