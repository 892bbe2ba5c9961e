//! Crash schedules (DESIGN §21): scenarios driven to each await point in turn, their worker
//! killed there, then recovered through the documented path — with duplicated and late
//! approvals, abandonment and clock skew mixed in — and a property checked on an external
//! ledger after each.
//!
//! - [`Ledger`]: the external ledger, a Postgres table `ledger(idempotency_key, effect, at)`
//!   with no unique constraint, one row each time a tool acts; and [`Journal`], the tools'
//!   synchronous notes (a call started, acted, returned; the await point reached last).
//! - [`Stores`]: one checkpoint store (memory, SQLite or Postgres) as the workers of a test
//!   share it, with a [`ManualClock`](super::ManualClock) that lets a dead worker's lease run
//!   out, and a second handle whose clock is skewed.
//! - [`Budget`] and [`drive`]: a worker's future polled until it returned `Pending` k times,
//!   then handed back, to be dropped ([`Death`]): in the runtime (its key released) or on a
//!   thread outside any runtime (nothing releases it: the lease must expire).
//! - [`scenarios`]: the agents, their inputs and how a person answers them.
//! - [`run_schedule`]: one schedule (a crash at k, maybe another in the recovery); [`Check`]:
//!   the property, as violations and known findings.
//!
//! Built only with the features `sqlite` and `postgres` (the stores it crashes).

mod check;
mod cut;
mod ledger;
pub(crate) mod scenarios;
mod schedule;
mod stores;

pub(crate) use check::{Finding, Tally};
pub(crate) use cut::{Budget, Death};
pub(crate) use ledger::{Journal, Ledger, Tag};
pub(crate) use schedule::{
    App, Outcome, Scenario, Schedule, ThreadOf, Twist, Worker, first_worker, recover, run_schedule,
};
pub(crate) use stores::{Kind, LEASE, Stores};
