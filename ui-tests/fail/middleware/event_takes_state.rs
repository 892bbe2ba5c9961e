// `on_model_event` taking the middleware's `state` type would get a fresh per-call value, never
// the run's state: refused, naming the fix.
use hookchain::middleware;
use hookchain::prelude::*;

#[derive(Debug, Default, Clone, serde::Serialize, serde::Deserialize)]
struct Seen {
    words: usize,
}

struct WordCount;

#[middleware(state = Seen)]
impl WordCount {
    #[hook(on_model_event)]
    fn count(&self, event: ModelEvent, out: &mut impl Emit, seen: &mut Seen) -> Result<(), Error> {
        seen.words += 1;
        out.emit(event)
    }
}

#[derive(Debug, Default, Clone, serde::Serialize, serde::Deserialize)]
struct Total(usize);

struct ThreadCount;

#[middleware(thread_state = Total)]
impl ThreadCount {
    #[hook(on_model_event)]
    fn count(&self, event: ModelEvent, out: &mut impl Emit, total: &mut Total) -> Result<(), Error> {
        total.0 += 1;
        out.emit(event)
    }
}

fn main() {}
