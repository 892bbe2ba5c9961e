//! What generated code names, as `::hookchain::__private::…`. Not public API: it changes
//! without notice.

mod blocking;
mod check;
mod probe;

pub use blocking::{BlockingCall, NoRunBlocking, RunBlocking, TOKIO, run_blocking};
pub use check::{
    Convert, Has, NoArgument, NoBoxError, NoClone, NoCloned, NoContent, NoContentConvert,
    NoDefault, NoDeserialize, NoDoneReturn, NoFallible, NoFallibleConvert, NoFlowReturn,
    NoIdentified, NoJsonSchema, NoModelResponseReturn, NoNamed, NoPlain, NoPlainConvert, NoSend,
    NoSerialize, NoSync, NoToolResult, NoToolResultConvert, NoToolResultReturn, NotSame,
};
pub use probe::{
    ChainProbe, ChainProbeOther, NotMiddleware, PhaseProbe, PhaseProbeOther, Probe, TypeProbe,
    type_probe,
};

// What generated code names that lives in the layer it belongs to, below the chains: the
// hooks' value conversions, the bounds on state and the machinery's token with the middleware;
// what `#[tool]` generates calls to with the tools.
pub use crate::middleware::bounds::{ValidState, ValidThreadState};
pub use crate::middleware::convert::{
    Conversion, DoneReturn, FlowReturn, HookFuture, IntoDone, IntoFlow, IntoModelResponse,
    IntoToolResult, Lazy, StateIs, WrapModelCallReturn, WrapToolCallReturn, convert_now, converted,
    hook_future, lazy,
};
pub use crate::middleware::internal::Internal;
pub use crate::tool::generated::{
    Argument, ArgumentsSchema, ContentOutput, FallibleToolOutput, ToolArgument, ToolOutput,
    ToolResultOutput, answer_as_content, argument_object,
};

pub use serde_json::Value;

pub use crate::chain::{ChainChecks, Constraints, Identified, Named};
pub use crate::error::BoxError;
pub use crate::interrupt::Answer;
pub use crate::message::Content;
pub use crate::middleware::{
    Bool, Contributions, Emit, False, Flow, Hook, HookSet, Jump, JumpSet, Middleware,
    MiddlewareState, ModelNext, ModelWrap, Shareable, Splice, ToolNext, ToolWrap, True, phase,
};
pub use crate::model::ModelEvent;
pub use crate::tool::{Tool, ToolError, ToolSpec};
pub use crate::{Context, Error, ModelRequest, ModelResponse, ToolCall, ToolContext, ToolResult};
pub use std::convert::Into;

pub use std::clone::Clone;
pub use std::default::Default;
pub use std::fmt::Debug;
pub use std::future::Future;
pub use std::marker::{Copy, PhantomData, Send, Sync};
pub use std::module_path;
pub use std::option::Option::{self, None, Some};
pub use std::result::Result;
pub use std::string::String;
pub use std::{concat, panic, stringify};
