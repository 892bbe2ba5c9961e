//! A thread passed to `run` (the fix is `run_in`). The first error, at the thread, is the
//! message of a run's input (`IntoRunInput`), which names `run_in`. rustc still adds E0061 and
//! its "remove the extra argument" (it counts arguments before any bound, and no attribute
//! changes E0061), and, `run` being an `async fn` whose future captures the input's type, the
//! input's bound again at the call and at the `.await`. Tried besides: an input impl for
//! `&mut Thread` (E0061 alone, whose help then suggests `run(&mut thread)`). See the table in
//! `hookchain-macros`' docs.

use hookchain::prelude::*;

async fn ask(agent: &Agent<ScriptedModel>) -> Result<(), hookchain::Error> {
    let mut thread = agent.thread();
    let _ = agent.run(&mut thread, "Hi").await?;
    Ok(())
}

fn main() {}
