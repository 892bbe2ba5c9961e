//! An agent's stream awaited as if it were a future. One error, at the `.await`, in our words:
//! read its events (`StreamExt::next`, `TryStreamExt::try_next`), or call `run`. `AgentStream`
//! has a `Future` impl whose where-clause never holds (`(AgentStream,): AwaitableStream`, a
//! trait implemented by nothing); rustc reports the unmet bound in that trait's words. The bound
//! is on a one-element tuple, not on the stream: rustc reports the root obligation (std's
//! "is not a future") when the unmet bound's type is the awaited type. The impl's output is a
//! `Result`, so the `?` that usually follows adds no second error. Tried before: an
//! `IntoFuture` impl (std's blanket impl for every `Future` is a second candidate, and std's
//! message stays). See the table in `hookchain-macros`' docs.

use hookchain::prelude::*;

async fn ask(agent: &Agent<ScriptedModel>) -> Result<(), hookchain::Error> {
    let _events = agent.stream("Hi").await?;
    Ok(())
}

fn main() {}
