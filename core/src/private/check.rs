//! Questions the macros ask the compiler about a user's type, answered as `const` booleans, so
//! that a type that does not fit is reported by one message of the macro's, in words, at the
//! user's token (a `const` that panics), rather than by an unmet bound of a trait of ours.
//!
//! `<Has<T>>::DEFAULT` is the inherent constant (`true`) when `T: Default`, and otherwise the
//! trait's (`false`): path resolution prefers an inherent item whose impl applies, and falls
//! back to a trait in scope. The generated code brings the traits into scope with `use … as _`.
//! Only for types without generic parameters (a `const` cannot name them).

use std::marker::PhantomData;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::chain::{Identified, Named};
use crate::error::BoxError;
use crate::message::Content;
use crate::middleware::convert::{IntoDone, IntoFlow, IntoModelResponse, IntoToolResult};
use crate::tool::ToolError;
use crate::tool::generated::{
    Argument, ContentOutput, FallibleToolOutput, ToolOutput, ToolResultOutput,
};

/// The type asked about.
pub struct Has<T: ?Sized>(PhantomData<T>);

impl<T: ?Sized> std::fmt::Debug for Has<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Has")
    }
}

macro_rules! question {
    ($(#[$doc:meta])* $otherwise:ident, $name:ident, $($bound:tt)+) => {
        impl<T: ?Sized + $($bound)+> Has<T> {
            $(#[$doc])*
            pub const $name: bool = true;
        }

        /// The answer "no" to the question of the same name.
        pub trait $otherwise {
            $(#[$doc])*
            const $name: bool = false;
        }

        impl<T: ?Sized> $otherwise for Has<T> {}
    };
}

question!(
    /// `T: Default`.
    NoDefault, DEFAULT, Default
);
question!(
    /// `T: Clone`.
    NoClone, CLONE, Clone
);

impl<T: Clone> Has<T> {
    /// How a `#[tool(blocking)]` type is cloned into its blocking thread.
    pub const CLONED: fn(&T) -> T = T::clone;
}

/// For a type that is not `Clone`, reported by the `CLONE` check beside it: never called.
pub trait NoCloned<T> {
    /// Never called: compilation stops at the check.
    const CLONED: fn(&T) -> T = |_| unreachable!("rejected at compile time");
}

impl<T> NoCloned<T> for Has<T> {}

question!(
    /// `T: serde::Serialize`.
    NoSerialize, SERIALIZE, Serialize
);
question!(
    /// `T: serde::de::DeserializeOwned`.
    NoDeserialize, DESERIALIZE, DeserializeOwned
);
question!(
    /// `T: schemars::JsonSchema`.
    NoJsonSchema, JSON_SCHEMA, JsonSchema
);
question!(
    /// `T: Send`.
    NoSend, SEND, Send
);
question!(
    /// `T: Sync`.
    NoSync, SYNC, Sync
);

impl<T: DeserializeOwned + JsonSchema> Has<T> {
    /// How a tool reads and describes an argument of type `T`.
    pub const ARGUMENT: Argument<T> = Argument::of();
}

/// For a type that cannot be an argument, reported by the `const` check beside it: never used.
pub trait NoArgument<T> {
    /// Never used: compilation stops at the check.
    const ARGUMENT: Argument<T> = Argument::never();
}

impl<T> NoArgument<T> for Has<T> {}

question!(
    /// `T: Into<Box<dyn Error + Send + Sync>>`.
    NoBoxError, INTO_BOX_ERROR, Into<BoxError>
);
question!(
    /// `T` is hookchain's `Content`, or a `Result` of it.
    NoContent, CONTENT, ContentOutput
);
question!(
    /// `T` is hookchain's `ToolResult`, or a `Result` of it.
    NoToolResult, TOOL_RESULT, ToolResultOutput
);
question!(
    /// `T` can be a tool's `Result`.
    NoFallible, FALLIBLE, FallibleToolOutput
);

/// How a tool's result becomes what the model reads.
pub type Convert<T> = fn(T, &str) -> Result<Content, ToolError>;

macro_rules! conversion {
    ($(#[$doc:meta])* $otherwise:ident, $name:ident, $trait:ident) => {
        impl<T: $trait> Has<T> {
            $(#[$doc])*
            pub const $name: Convert<T> = <T as $trait>::into_tool_output;
        }

        /// For a result type the macro's `const` check rejects: never called.
        pub trait $otherwise<T> {
            /// Never called: compilation stops at the check.
            const $name: Convert<T> = |_, _| unreachable!("rejected at compile time");
        }

        impl<T> $otherwise<T> for Has<T> {}
    };
}

conversion!(
    /// The conversion of a result that is not a `Result`.
    NoPlainConvert, PLAIN_CONVERT, ToolOutput
);
conversion!(
    /// The conversion of a `Result`.
    NoFallibleConvert, FALLIBLE_CONVERT, FallibleToolOutput
);
conversion!(
    /// The conversion of hookchain's `Content`.
    NoContentConvert, CONTENT_CONVERT, ContentOutput
);
conversion!(
    /// The conversion of hookchain's `ToolResult`.
    NoToolResultConvert, TOOL_RESULT_CONVERT, ToolResultOutput
);
question!(
    /// `T` can be a tool's result that is not a `Result` (`serde::Serialize`).
    NoPlain, PLAIN, ToolOutput
);
question!(
    /// `T` can be returned by a `before_agent`, `before_model` or `after_model` hook.
    NoFlowReturn, FLOW_RETURN, IntoFlow
);
question!(
    /// `T` can be returned by an `after_agent` or `on_model_event` hook.
    NoDoneReturn, DONE_RETURN, IntoDone
);
question!(
    /// `T` can be returned by a `wrap_model_call` hook.
    NoModelResponseReturn, MODEL_RESPONSE_RETURN, IntoModelResponse
);
question!(
    /// `T` can be returned by a `wrap_tool_call` hook.
    NoToolResultReturn, TOOL_RESULT_RETURN, IntoToolResult
);

impl<T> Has<(T, T)> {
    /// The two types are one (a hook's state parameter and the declared state).
    pub const SAME: bool = true;
}

/// The answer "no" to `SAME`.
pub trait NotSame {
    /// The two types differ.
    const SAME: bool = false;
}

impl<T: ?Sized> NotSame for Has<T> {}

question!(
    /// `T` can be named in a `before`, `after` or `requires` constraint.
    NoIdentified, IDENTIFIED, Identified
);

impl<T: Identified + ?Sized> Has<T> {
    /// `T` as named in a constraint.
    pub const NAMED: Named = Named::of::<T>();
}

/// For a type the macro's `const` check rejects as a constraint: never used.
pub trait NoNamed {
    /// Never used: compilation stops at the check.
    const NAMED: Named = Named {
        identity: "",
        name: "",
    };
}

impl<T: ?Sized> NoNamed for Has<T> {}
