//! A thread store put in a `Mutex` to share it: a store is shared through an `Arc` (it takes
//! `&self`). The store's bound is reported three times (at the argument, the call and the
//! `.await`): `run_in_store` is an `async fn` whose future holds the store, so it is generic over
//! the store's type, and rustc checks the bound where the future is named too. The same floor as
//! `ui-tests/fail/agent/run_with_thread.rs` (see there for the experiments).

use std::sync::Mutex;

use hookchain::agent::ThreadId;
use hookchain::prelude::*;
use hookchain::thread_store::InMemoryThreadStore;

async fn ask(agent: &Agent<ScriptedModel>, store: &Mutex<InMemoryThreadStore>) {
    let _ = agent.run_in_store(store, &ThreadId::new("t-1"), "Hi").await;
}

fn main() {}
