//! Serve [hookchain](https://docs.rs/hookchain) agents over HTTP, on
//! [axum](https://docs.rs/axum): runs streamed as server-sent events in the
//! [AG-UI](https://docs.ag-ui.com) protocol — what AG-UI's clients (`@ag-ui/client`,
//! CopilotKit) and the reference chat page of the `chat_server` example read — conversations
//! kept in a [`ThreadStore`](hookchain_core::thread_store::ThreadStore), pauses answered by a
//! follow-up request that resumes from the agent's checkpointer.
//!
//! An application depends on `hookchain` with the feature `axum` and names these items
//! `hookchain::axum::…`: the example of serving an agent is on that module's page.
//!
//! See [`AgentServer`] for the routes, what a disconnect and a shutdown do to a run, and the
//! errors; [`agui`] for how a run's events map to AG-UI's.

#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod agui;
mod runs;
mod server;

pub use hookchain_core::Principal;
/// Who asks: the authorizer an [`AgentServer`] calls on every request (see
/// [`AgentServerBuilder::authorize`]), as in `hookchain::auth`.
pub use hookchain_core::auth::{Anonymous, Authorize, Denied};
pub use server::{
    Action, AgentServer, AgentServerBuilder, ClientUrls, DEFAULT_EVENT_BYTES_PER_RUN,
    DEFAULT_EVENTS_PER_RUN, DEFAULT_KEEP_ENDED, DEFAULT_MAX_BODY, DEFAULT_MAX_ENDED,
    DEFAULT_MAX_RUNNING, DEFAULT_MAX_RUNNING_PER_PRINCIPAL, OwnerOnly, Problem, ServerBuildError,
    ShutdownReport, ThreadAccess, ThreadRef,
};
