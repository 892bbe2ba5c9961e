//! Tools from [MCP](https://modelcontextprotocol.io) servers for
//! [hookchain](https://docs.rs/hookchain) agents.
//!
//! Depend on `hookchain` with the feature `mcp` (its items are then `hookchain::mcp::…`);
//! this crate is built on [`rmcp`], the official Rust SDK of MCP (major 3), client side only.
//!
//! An [`McpToolset`] connects to servers — a program run as a child process speaking MCP on
//! stdio ([`McpServer::stdio`]), or a URL speaking streamable HTTP ([`McpServer::http`]) —
//! and lists their tools. Each becomes an [`McpTool`], a hookchain [`Tool`](hookchain_core::Tool)
//! like any other: every `wrap_tool_call` middleware (approval, retry, timeout, limits)
//! applies to it as to a `#[tool]`.
//!
//! An agent takes a toolset's tools as any others
//! (`Agent::builder(model).tools(toolset.registry())`). The examples are in the docs of the
//! facade's module `hookchain::mcp`, which name the items as an application does: *Servers and
//! their tools*, *Tool names*, *A server's questions*, *Serving an agent's tools*.
//!
//! # Names and schemas
//!
//! OpenAI and Anthropic accept tool names matching `^[a-zA-Z0-9_-]{1,64}$`; MCP names may
//! hold dots, slashes, spaces, any Unicode, and be longer. Names are mapped
//! ([`provider_safe_names`]): safe ones are kept, others cleaned up, with a short stable hash
//! where that would collide or cut; the toolset keeps the original, which is what the server
//! is called with ([`McpToolset::original_name`]). A name once offered keeps meaning its tool
//! for the toolset's life: a tool a server adds later whose name is taken gets the suffix, and
//! a removed tool's name is never given to another, so a gate by name (`HumanInTheLoop`)
//! stays on its tool; [`McpToolset::offered_name`] gives the name of a server's tool (see
//! [`McpToolset`'s Names that do not change](McpToolset#names-that-do-not-change)).
//!
//! Input schemas get a top-level `"type": "object"` and `"properties"` where they lack them;
//! nothing else is changed.
//! Gemini takes a narrower subset of JSON Schema (no `$ref`, `const`, `additionalProperties`
//! or type lists): a Gemini provider maps every tool schema with
//! [`hookchain::tool::gemini_schema`](hookchain_core::tool::gemini_schema) (tested on the
//! schemas of the servers above).
//!
//! # Calls
//!
//! A call sends `tools/call` with the original name and the model's arguments, and ends at
//! the server's [call timeout](McpServer::call_timeout) (60 s by default). The result is the
//! tool's [`Content`](hookchain_core::message::Content), part by part: text, images, audio,
//! resource links, embedded resources (text or binary), the `structuredContent` as JSON when
//! there is no text; each provider sends the model what it can of them (see its docs: OpenAI's
//! tool messages are text, an image, audio or a binary resource written as a placeholder
//! naming its type and size). A result with
//! `isError: true` is an error the model reads with the server's text, and so are a tool the
//! server no longer offers (after it announced `notifications/tools/list_changed`) and a call
//! it refused (a JSON-RPC error: unknown tool, invalid arguments). A call that times out, and a
//! server that crashes mid-call or cannot be started again, are failures: the model reads
//! that the tool failed, the application gets why (`RunOutput::tool_failures`, `tracing`), and
//! a `ToolRetry` middleware retries them. After a crash, the next call starts a new session (a
//! stdio server is started again; an HTTP server gets a new handshake); after a timeout, the
//! next call pings the server first and starts a new session if it does not answer. A call
//! whose future is dropped (the run was cancelled, a `Timeout` middleware fired) sends
//! `notifications/cancelled` to the server. The server's progress notifications for a call
//! reach a streamed run's consumer as
//! [`AgentEvent::ToolProgress`](hookchain_core::AgentEvent::ToolProgress) while the call goes
//! on (a consumer slower than the server loses reports, never holds up the server's other
//! calls). With [`McpServer::trace_context`], a call carries the W3C trace context of its
//! `execute_tool` span in its `_meta` (SEP-414), for the server's spans to join the run's
//! trace.
//!
//! # Revisions
//!
//! A connection speaks MCP 2026-07-28 when the server does (it answers `server/discover`:
//! stateless, the protocol version and the client's capabilities in every request's `_meta`),
//! else 2025-11-25 (the `initialize` handshake, a session). [`McpServer::protocol`] pins one
//! ([`McpProtocol`]). A server of the older revision that hangs up on `server/discover` rather
//! than answer that it does not know it is reached by the handshake on a new connection.
//!
//! # OAuth
//!
//! A streamable-HTTP server that requires OAuth 2.1, as MCP specifies it, is given an
//! [`McpOAuth`](oauth::McpOAuth) ([`McpServer::oauth`]): on a `401` the client discovers the
//! server's authorization server, registers (or uses a pre-registered client, or a client-id
//! metadata document), has a person authorize through the application's
//! [`AuthorizationHandler`](oauth::AuthorizationHandler) (PKCE), keeps the tokens in a
//! [`CredentialStore`](oauth::CredentialStore), refreshes them, and asks again for more
//! scopes on a `403 insufficient_scope`. Without a handler, a tool call that needs a person
//! pauses the run on a durable interrupt ([`McpAuthorization`](oauth::McpAuthorization): the
//! URL to open), resumed with the redirect the browser came back to; a connect that needs one
//! fails with [`Error::AuthorizationRequired`], which carries the URL. A client no person stands
//! behind gets its token with its own id and secret instead (the client-credentials grant,
//! [`McpOAuth::client_credentials`](oauth::McpOAuth::client_credentials); or with its key,
//! [`McpOAuth::client_credentials_jwt`](oauth::McpOAuth::client_credentials_jwt)), or with
//! the JWT its platform gave it (workload identity federation, the JWT-bearer grant:
//! [`McpOAuth::jwt_bearer`](oauth::McpOAuth::jwt_bearer)); an enterprise's people, through
//! their IdP's sign-in ([`McpOAuth::enterprise_managed`](oauth::McpOAuth::enterprise_managed)).
//! Tokens are DPoP-bound (RFC 9449) when the authorization server offers it. See [`oauth`].
//!
//! # Elicitation
//!
//! A server that asks the user something for a call (a form) pauses the run: the call raises
//! an interrupt whose payload is an [`Elicitation`](elicitation::Elicitation) (the server, the
//! tool, the message and the form's schema), stored in the run's checkpoint like an approval.
//! Resume the run — later, in another process — with
//! [`Elicitation::answer`](elicitation::Elicitation::answer). Under 2026-07-28 the server asked
//! with an *input required* result: its state is kept in the interrupt's payload, and the call
//! is made again with the answers and the state, so a server's tool that acted before it asked
//! acts once. Under 2025-11-25 the server asked during the call (`elicitation/create`): the
//! tool is called again and the server's elicitation gets the user's answer, so the server's
//! tool runs again up to its elicitation. A question the application can answer itself is
//! answered in the process, without a pause, by a handler ([`McpServer::on_elicitation`]). See
//! [`elicitation`] for the details; [`McpServer::elicitation`] turns it off.
//!
//! # Changed tool lists
//!
//! A server that sends `notifications/tools/list_changed` is listed again at once, in a task
//! of its own (and so is a server on a new session, after it was started again). From the
//! next model call on, an agent with the toolset's [`registry`](McpToolset::registry) is
//! offered the server's new tools (the tools it had keep their names), and no longer its
//! removed ones
//! (the registry holds the toolset as a
//! [`ToolSource`](hookchain_core::tool::ToolSource)); a call of a removed tool gets the
//! unknown-tool error. A server that says how long its list may be reused (`ttlMs`,
//! 2026-07-28) is listed again, the same way, at the first use of its list after that. See
//! [`McpToolset`'s Changed lists](McpToolset#changed-lists).
//!
//! # Limits
//!
//! A server's tool list is refused ([`Error::TooLarge`]) beyond [`McpServer::max_tools`]
//! tools (512 by default), 64 pages, a 64 KiB input schema or a 16 KiB description. One
//! message from a server is at most 16 MiB (rmcp's limit, stdio and HTTP), and a stdio
//! server's stderr is read line by line (4 KiB a line) and logged, never buffered whole. What
//! the model reads of one tool result is at most [`McpServer::max_result_bytes`] (1 MiB by
//! default): text beyond it is cut, images, audio, binary resources and links dropped, with a
//! note saying what.
//!
//! # Serving an agent's tools (feature `serve`)
//!
//! The other way round: an `McpToolServer` serves an agent's tools to MCP clients, over
//! stdio (a process an MCP client starts) or streamable HTTP, each call through the agent's
//! chain ([`Agent::call_tool`](hookchain_core::Agent::call_tool)) as when its own model calls
//! the tool. With the facade: `hookchain = { features = ["mcp-serve"] }`. Over HTTP it must be
//! told who may call — an authorizer asked on every request (`hookchain::auth::Authorize`;
//! the principal it returns, `hookchain::Principal`, is in each call's run context), or
//! `allow_anonymous()` — or it refuses to serve: see `McpToolServer`'s *Who may call*.
//! A served call that waits for an answer (an approval, a tool that asks) asks the client:
//! in its session at 2025-11-25, with an input-required result at 2026-07-28, kept by
//! `ServedPauses` so that any replica takes the answer. A long call can be served as an
//! MCP Task (`ServedTasks`): the client gets a task at once, and reads it on any replica.
//!
//! # Not yet
//!
//! Sampling (a server that asks for it under 2026-07-28 fails the call, saying so), URL-mode
//! elicitation (declined), Tasks as a client (a server's task result is not awaited); on the
//! serving side, middleware state kept per client session, and `list_changed` for an agent
//! whose tools change (its tools are listed once, when the server is made).

#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod catalog;
mod connection;
pub mod elicitation;
mod error;
mod freshness;
mod http;
mod limits;
mod names;
pub mod oauth;
mod offered_names;
mod output;
mod progress;
mod protocol;
mod result_bound;
mod schema;
#[cfg(feature = "serve")]
mod serve;
mod server;
mod stdio;
mod tool;
mod toolset;
mod trace_context;

pub use error::Error;
pub use names::{MAX_NAME_LEN, is_provider_safe, provider_safe_names};
pub use protocol::McpProtocol;
/// The MCP SDK this crate is built on, for its model types (`rmcp::model`).
pub use rmcp;
/// What seals a served call's `requestState` ([`ServedPauses::new`]): rmcp's HMAC-SHA256 codec.
#[cfg(feature = "serve")]
#[cfg_attr(docsrs, doc(cfg(feature = "serve")))]
pub use rmcp::model::RequestStateCodec;
#[cfg(feature = "serve")]
#[cfg_attr(docsrs, doc(cfg(feature = "serve")))]
pub use serve::{
    DEFAULT_ANSWER_WITHIN, DEFAULT_MAX_ARGUMENT_BYTES, DEFAULT_TASK_TTL, McpHttpService,
    McpToolServer, ServeError, ServedPauses, ServedTasks, TaskSupport,
};
pub use server::{
    DEFAULT_CALL_TIMEOUT, DEFAULT_CONNECT_TIMEOUT, DEFAULT_MAX_RESULT_BYTES, DEFAULT_MAX_TOOLS,
    McpServer,
};
pub use tool::McpTool;
pub use trace_context::TraceContext;

/// The key of a `tools/call` request's `_meta` under which the client sends the call's
/// [idempotency key](hookchain_core::ToolContext::idempotency_key): the same in every attempt
/// of one call — a retry (`ToolRetry`), the call run again after its server died mid-call or
/// after the run's worker died — so a server that deduplicates by it acts once.
///
/// ```json
/// {"method": "tools/call", "params": {"name": "charge", "arguments": {"amount": 40},
///  "_meta": {"io.hookchain/idempotencyKey": "3f2a…:call_1", "progressToken": 1}}}
/// ```
pub const IDEMPOTENCY_KEY_META: &str = "io.hookchain/idempotencyKey";
pub use toolset::McpToolset;

/// The README's example, compiled as a doctest so that it cannot rot (with `server-tests`,
/// which gives the facade its `mcp`; see Cargo.toml).
#[cfg(all(doctest, feature = "server-tests"))]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
