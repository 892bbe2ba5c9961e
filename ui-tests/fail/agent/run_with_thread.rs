//! A thread passed to `run` (the fix is `run_in`). The first error, at the thread, is the
//! message of a run's input (`IntoRunInput`), which names `run_in`. rustc still adds E0061 and
//! its "remove the extra argument" (it counts arguments before any bound, and no attribute
//! changes E0061), and, `run`'s future capturing the input's type, the input's bound again at
//! the call and at the `.await`: 4 errors, the measured floor without a cost. Experiments
//! (rustc 1.95): a plain `fn` converting the input eagerly and returning
//! `impl Future + use<'_, M, C>` is refused ("`impl Trait` must mention all type parameters in
//! scope in `use<...>`": an `impl` argument's type cannot be left out); returning
//! `impl Future` (which captures it) gives the same 4 errors; a named return type (a struct
//! whose future is a `Pin<Box<dyn Future>>`) gives 2 (ours, then E0061), at the cost of an
//! allocation and a dynamic poll per run; naming the run's future unboxed needs `impl Trait` in
//! an associated type, unstable. Tried besides: an input impl for `&mut Thread` (E0061 alone,
//! whose help then suggests `run(&mut thread)`). See the table in `hookchain-macros`' docs.

use hookchain::prelude::*;

async fn ask(agent: &Agent<ScriptedModel>) -> Result<(), hookchain::Error> {
    let mut thread = agent.thread();
    let _ = agent.run(&mut thread, "Hi").await?;
    Ok(())
}

fn main() {}
