//! Recorded as rustc prints it, not improved: an agent's stream awaited as if it were a future
//! (the fix: read its events with `StreamExt::next` / `TryStreamExt::try_collect`, or `run`).
//! The message is std's `IntoFuture` one and rustc adds "remove the `.await`". Tried: an
//! `IntoFuture` impl for `AgentStream` whose where-clause fails with a message of ours — std's
//! blanket impl for every `Future` is a second candidate, so rustc still reports std's trait
//! (and adds "the trait `IntoFuture` is implemented for `AgentStream`"); an impl that compiles
//! would turn the mistake into a run whose events are dropped. See the table in
//! `hookchain-macros`' docs.

use hookchain::prelude::*;

async fn ask(agent: &Agent<ScriptedModel>) -> Result<(), hookchain::Error> {
    let _events = agent.stream("Hi").await?;
    Ok(())
}

fn main() {}
