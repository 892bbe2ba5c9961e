//! The runs a server has going or just finished, each with the log of its events.

mod log;
mod registry;

pub(crate) use log::RunLog;
pub(crate) use registry::{Bounds, KnownRun, Refused, RunKey, Runs, Started};
