//! A checkpointer lent to the agent: the agent owns its checkpointer; one the application uses
//! too is shared through an `Arc`.

use hookchain::interrupt::InMemoryCheckpointer;
use hookchain::prelude::*;
use hookchain::Durability;

fn main() {
    let store = InMemoryCheckpointer::new();
    let _ = Agent::builder(ScriptedModel::new([])).checkpointer(&store, Durability::Pauses);
}
