//! The bounds a `#[middleware]` or `#[hook]` declaration must meet, each checked once, at the
//! user's token, with a message that says why the bound is there.

use crate::middleware::MiddlewareState;

/// A state type (`state = S`, `thread_state = T`), checked on its own, once, at `S`, with a
/// message saying why a state needs its bounds (rather than one error per missing bound). The
/// macros also bound the `Middleware` impl by `for<'a> S: MiddlewareState`, which holds inside
/// the impl whether or not `S` fits, so the impl adds no error of its own.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a middleware's state: a state is created with `Default` at every \
               run (or thread) and saved in checkpoints",
    label = "needs `Default`, `serde::Serialize`, `serde::Deserialize`, `Send`, `Sync` and `'static`",
    note = "on a type of yours, `#[derive(Default, serde::Serialize, serde::Deserialize)]`; a type \
            from another crate goes in a field of such a type of yours"
)]
pub trait ValidState {
    /// Reports nothing: calling it is the check.
    fn check() {}
}

#[diagnostic::do_not_recommend]
impl<T: MiddlewareState> ValidState for T {}

/// A thread state type: [`ValidState`], and `Clone` (each run works on a copy).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a middleware's thread state: it is created with `Default`, copied \
               for each run and saved in checkpoints",
    label = "needs `Default`, `Clone`, `serde::Serialize`, `serde::Deserialize`, `Send`, `Sync` \
             and `'static`",
    note = "on a type of yours, `#[derive(Default, Clone, serde::Serialize, serde::Deserialize)]`; \
            a type from another crate goes in a field of such a type of yours"
)]
pub trait ValidThreadState {
    /// Reports nothing: calling it is the check.
    fn check() {}
}

#[diagnostic::do_not_recommend]
impl<T: MiddlewareState + Clone> ValidThreadState for T {}
