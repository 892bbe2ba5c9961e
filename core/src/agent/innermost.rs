//! The centre of each onion: the model call and the tool call themselves.

use std::future::Future;

use crate::context::Context;
use crate::error::Error;
use crate::message::{ToolCall, ToolResult};
use crate::middleware::{ModelNext, ToolNext};
use crate::model::{Model, ModelRequest, ModelResponse};
use crate::tool::ToolRegistry;

/// Invokes the model; the innermost `next` of the model-call onion.
pub(super) struct CallModel<'a, M> {
    pub(super) model: &'a M,
}

impl<M: Model> ModelNext for CallModel<'_, M> {
    fn call(
        &mut self,
        cx: &mut Context,
        request: ModelRequest,
    ) -> impl Future<Output = Result<ModelResponse, Error>> + Send {
        cx.model_calls += 1;
        let model = self.model;
        async move { Ok(model.invoke(&request).await?) }
    }
}

/// Runs the tool; the innermost `next` of the tool-call onion.
pub(super) struct CallTool<'a> {
    pub(super) tools: &'a ToolRegistry,
}

impl ToolNext for CallTool<'_> {
    fn call(
        &mut self,
        _cx: &Context,
        call: ToolCall,
    ) -> impl Future<Output = Result<ToolResult, Error>> + Send {
        let tools = self.tools;
        async move { Ok(tools.execute(&call).await) }
    }
}
