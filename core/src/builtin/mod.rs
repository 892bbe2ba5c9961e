//! The built-in middleware: ready-made, written with the DSL like a user's.
//!
//! This is the library; the mechanism they are built on (the [`Middleware`](crate::Middleware)
//! trait, chains, markers) lives in [`middleware`](crate::middleware). Each built-in is a file
//! (or folder) of its own here, with its builder, its rules and their tests.
//!
//! | middleware | what it does |
//! |---|---|
//! | [`HumanInTheLoop`] | pauses the run for a person to approve, edit, reject or answer tool calls |

pub mod config;
pub mod human_in_the_loop;

pub use config::ConfigError;
pub use human_in_the_loop::HumanInTheLoop;
