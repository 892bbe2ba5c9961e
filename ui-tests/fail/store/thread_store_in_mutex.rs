//! A thread store put in a `Mutex` to share it: a store is shared through an `Arc` (it takes
//! `&self`).

use std::sync::Mutex;

use hookchain::agent::ThreadId;
use hookchain::prelude::*;
use hookchain::thread_store::InMemoryThreadStore;

async fn ask(agent: &Agent<ScriptedModel>, store: &Mutex<InMemoryThreadStore>) {
    let _ = agent.run_in_store(store, &ThreadId::new("t-1"), "Hi").await;
}

fn main() {}
