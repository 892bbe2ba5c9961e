//! A thread's stream (`stream_in_owned`) awaited as if it were a future, to get the thread or
//! the output. One error, at the `.await`, in our words: read its events, then take the thread
//! back with `into_thread` (or call `run_in`). The same device as `stream_awaited.rs`: a
//! `Future` impl whose where-clause never holds. See the table in `hookchain-macros`' docs.

use std::sync::Arc;

use hookchain::prelude::*;

async fn ask(agent: Arc<Agent<ScriptedModel>>) -> Result<(), hookchain::Error> {
    let thread = agent.thread();
    let _thread = Arc::clone(&agent).stream_in_owned(thread, "Hi").await?;
    Ok(())
}

fn main() {}
