//! Static chains of middleware.
//!
//! A chain is a value of one concrete type: a tuple of middleware (nested for more than 12),
//! which implements [`Middleware`](crate::Middleware) itself. There is no `Box<dyn>`, no boxed
//! future and no allocation per call in a chain, and hooks a member does not implement are not
//! called (its [`HOOKS`](crate::Middleware::HOOKS) say so at compile time).
//!
//! Order: `before_*` hooks run in the order listed, `after_*` hooks in reverse, and wraps nest
//! with the first listed outermost.

mod tuple;

pub use crate::middleware::constraints::{Constraints, Identified, MAX_MEMBERS, Named};
// What the compile-time checks work on: generated code's, not users'.
#[doc(hidden)]
pub use crate::middleware::constraints::{ChainChecks, Failure, MemberInfo, MemberList};
pub use crate::middleware::describe::{Contribution, Description, Member};
