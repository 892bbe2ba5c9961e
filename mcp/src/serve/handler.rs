//! The MCP requests an [`McpToolServer`] answers: `initialize`, `tools/list`, `tools/call`.

use std::sync::Arc;

use hookchain_core::{Middleware, Model, Principal, RunContext, ToolCall, ToolSpec};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientCapabilities, GetTaskParams,
    GetTaskResult, Implementation, JsonObject, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, Tool as McpToolInfo, UpdateTaskParams,
};
// Logging is deprecated by MCP 2026-07-28 (SEP-2577), and still served.
#[allow(deprecated)]
use rmcp::model::SetLevelRequestParams;
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};

use super::McpToolServer;
use super::driving::Relay;
use super::logging::least_level;
use super::resuming::{Answer, Asker};
use super::tasks::{Started, TaskCall, TaskSupport, takes_tasks};
use crate::schema::object_schema;

/// How `tools/list` shows a tool of the agent: its name, description and an object schema.
pub(super) fn tool_info(spec: &ToolSpec) -> McpToolInfo {
    let schema = match &spec.parameters {
        serde_json::Value::Object(schema) => object_schema(schema),
        // A tool whose schema is not an object (none is made so, but `ToolSpec` is open)
        // takes no named arguments as MCP sees it.
        _ => object_schema(&JsonObject::new()),
    };
    let schema = match schema {
        serde_json::Value::Object(schema) => schema,
        _ => JsonObject::new(),
    };
    let description = (!spec.description.is_empty()).then(|| spec.description.clone().into());
    McpToolInfo::new_with_raw(spec.name.clone(), description, Arc::new(schema))
}

impl<M, C> ServerHandler for McpToolServer<M, C>
where
    M: Model + Send + Sync + 'static,
    C: Middleware + Send + Sync + 'static,
{
    // `enable_logging`: deprecated by 2026-07-28 (SEP-2577), still part of it.
    #[allow(deprecated)]
    fn get_info(&self) -> ServerConfig {
        let settings = &self.settings;
        // Logging: a tool's log lines reach a client that asks for them (`ToolContext::log`).
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_logging();
        // Tasks (SEP-2663): advertised only by a server that serves some.
        let capabilities = match settings.tasks {
            Some(_) => capabilities.enable_tasks().build(),
            None => capabilities.build(),
        };
        let config = ServerConfig::new(capabilities)
            .with_server_info(Implementation::new(&settings.name, &settings.version));
        match &settings.instructions {
            Some(instructions) => config.with_instructions(instructions),
            None => config,
        }
    }

    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.session_level.set(request.level);
        Ok(())
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        self.task_now(&request.task_id, &context).await
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.answer_task(&request.task_id, request.input_responses, &context)
            .await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.cancel_task_now(&request.task_id, &context).await
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        // One page: the agent's tools are a list the application wrote, not a data set.
        Ok(ListToolsResult::with_all_items(
            self.settings.tools.as_ref().clone(),
        ))
    }

    /// A tool as listed: rmcp checks a call's `Mcp-Param-*` headers against the arguments its
    /// schema mirrors into headers (`x-mcp-header`, SEP-2243) with it.
    fn get_tool(&self, name: &str) -> Option<McpToolInfo> {
        self.settings
            .tools
            .iter()
            .find(|tool| tool.name == name)
            .cloned()
    }

    async fn call_tool(
        &self,
        mut request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        // An answer to a call that waits: the state this server sealed, and the user's answer.
        let answering = request.request_state.take();
        let responses = request.input_responses.take();
        let call = self.checked_call(request, &context)?;
        let mut run_context = self.run_context(&context)?;
        let principal = run_context
            .get::<Principal>()
            .map(|who| who.id().to_owned());
        if let Some(tasks) = self.tasks_for(&call.name, &context)
            && answering.is_none()
        {
            let name = call.name.clone();
            let call = TaskCall::Fresh(call);
            let started = self
                .start_task(tasks, call, run_context, principal.clone(), &context)
                .await?;
            return match started {
                Started::Task(response) => Ok(response),
                Started::Ended(outcome) => {
                    self.respond(outcome, 1, principal.as_deref(), &context, &name)
                }
            };
        }
        let required = self
            .settings
            .tasks
            .as_ref()
            .and_then(|tasks| tasks.support(&call.name));
        if required == Some(TaskSupport::Required) && !takes_tasks(&context) {
            // SEP-2663: a tool that runs only as a task names the extension it needs.
            return Err(McpError::missing_required_client_capability(
                ClientCapabilities::builder().enable_tasks().build(),
            ));
        }
        let least = least_level(&context, &self.session_level);
        let mut relay = Relay::attach(&mut run_context, &context, least);
        let name = call.name.clone();
        let agent = self.agent.with_context(run_context);
        let Some(state) = answering else {
            let calling = agent.call_tool_or_pause(call);
            let outcome = relay.drive(calling, &context, &name, None).await?;
            let asker = Asker {
                round: 1,
                principal: principal.as_deref(),
                name: &name,
            };
            return self
                .conclude(&agent, outcome, &mut relay, asker, &context)
                .await;
        };
        let answer = Answer {
            state: &state,
            responses: responses.as_ref(),
            principal: principal.as_deref(),
            tool: &name,
        };
        self.resume(&agent, answer, relay, &context).await
    }
}

impl<M, C> McpToolServer<M, C> {
    /// The run context of a call: with the principal of the HTTP request that made it (our
    /// HTTP service put it into the request's extensions, which rmcp hands on), or over stdio
    /// the application's [`stdio_principal`](Self::stdio_principal), if any.
    ///
    /// A request that came over HTTP without a principal did not pass an authorizer: this
    /// server was mounted in an rmcp service of someone's own, not [`http_service`]'s. Its
    /// call is refused rather than run as no one.
    ///
    /// [`http_service`]: Self::http_service
    pub(super) fn run_context(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> Result<RunContext, McpError> {
        let principal = match context.extensions.get::<http::request::Parts>() {
            Some(parts) => match parts.extensions.get::<Principal>() {
                Some(principal) => Some(principal.clone()),
                None => {
                    tracing::error!(
                        "an MCP tool call came over HTTP without an authorized principal: serve \
                         the McpToolServer with `http_service` or `serve_http`"
                    );
                    return Err(McpError::internal_error(
                        "this server cannot tell who is calling",
                        None,
                    ));
                }
            },
            None => self.settings.stdio_principal.clone(),
        };
        Ok(match principal {
            Some(principal) => RunContext::new().with(principal),
            None => RunContext::new(),
        })
    }

    /// The call a `tools/call` request asks for, or the JSON-RPC error that refuses it: a tool
    /// the agent does not have, arguments too large.
    fn checked_call(
        &self,
        request: CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<ToolCall, McpError> {
        let name = request.name.into_owned();
        if !self.agent.tools().contains(&name) {
            return Err(McpError::invalid_params(
                format!("unknown tool: `{}`", crate::limits::cut(&name, 256)),
                None,
            ));
        }
        let arguments = request.arguments.unwrap_or_default();
        let max = self.settings.max_argument_bytes;
        let bytes = serde_json::to_vec(&arguments).map_or(usize::MAX, |json| json.len());
        if bytes > max {
            return Err(McpError::invalid_params(
                format!(
                    "the arguments of `{name}` have {bytes} bytes; this server takes at most {max}"
                ),
                None,
            ));
        }
        // The call's id, for the chain and its logs: the request's, which the client chose.
        let id = format!("mcp-{}", context.id);
        Ok(ToolCall::new(
            id,
            name,
            serde_json::Value::Object(arguments),
        ))
    }
}
