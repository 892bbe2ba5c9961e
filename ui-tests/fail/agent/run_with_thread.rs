//! Recorded as rustc prints it, not improved: a thread passed to `run` (the fix is `run_in`).
//! rustc checks the number of arguments before any bound, and nothing a library declares
//! changes E0061 or its "remove the extra argument"; the bound on `run`'s input is then
//! reported at the argument, the call and the `.await` (the `async fn`'s future captures the
//! input's type). Tried: a trait of our own for the input with `on_unimplemented` naming
//! `run_in` (still three errors plus E0061), and an input impl for `&mut Thread` (E0061 alone,
//! whose help then suggests `run(&mut thread)`). See the table in `hookchain-macros`' docs.

use hookchain::prelude::*;

async fn ask(agent: &Agent<ScriptedModel>) -> Result<(), hookchain::Error> {
    let mut thread = agent.thread();
    let _ = agent.run(&mut thread, "Hi").await?;
    Ok(())
}

fn main() {}
