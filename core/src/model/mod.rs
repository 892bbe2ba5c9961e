//! The [`Model`] trait and the types of a model call.

mod assemble;
mod event;
mod request;
mod response;
mod scripted;

use std::future::Future;

pub use assemble::ResponseAssembler;
pub use event::ModelEvent;
pub use request::{ModelRequest, ModelSettings, ToolChoice};
pub use response::{ModelResponse, StopReason, Usage};
pub use scripted::ScriptedModel;

pub use crate::error::{ModelError, ModelErrorKind};

/// A language model the agent can call.
///
/// Implementations translate a [`ModelRequest`] to a provider's API and its answer back to a
/// [`ModelResponse`]. The returned future must be `Send` so that agents can run on a
/// multi-threaded runtime.
///
/// [`ScriptedModel`] is the built-in implementation: deterministic, offline, made for tests and
/// examples.
pub trait Model: Send + Sync {
    /// Calls the model once.
    fn invoke(
        &self,
        request: ModelRequest,
    ) -> impl Future<Output = Result<ModelResponse, ModelError>> + Send;
}

impl<M: Model + ?Sized> Model for &M {
    fn invoke(
        &self,
        request: ModelRequest,
    ) -> impl Future<Output = Result<ModelResponse, ModelError>> + Send {
        (**self).invoke(request)
    }
}

impl<M: Model + ?Sized> Model for std::sync::Arc<M> {
    fn invoke(
        &self,
        request: ModelRequest,
    ) -> impl Future<Output = Result<ModelResponse, ModelError>> + Send {
        (**self).invoke(request)
    }
}
