//! A run state with a `RefCell` in it: not `Sync`, so it cannot be a state (a run's state is
//! reached from the run's future, which may move between threads and is shared while it runs).

use std::cell::RefCell;

use hookchain::middleware;

#[derive(Default, serde::Serialize, serde::Deserialize)]
struct Seen {
    texts: RefCell<Vec<String>>,
}

struct Audit;

#[middleware(state = Seen)]
impl Audit {
    #[hook(before_model)]
    fn seen(&self, seen: &mut Seen) {
        seen.texts.borrow_mut().push("model".into());
    }
}

fn main() {}
