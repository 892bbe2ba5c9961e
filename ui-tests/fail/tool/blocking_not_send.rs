//! A blocking tool whose argument is not `Send`: it is moved to the blocking thread.

use std::marker::PhantomData;
use std::rc::Rc;

use hookchain::tool;

/// An amount that must stay on its thread.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Local {
    cents: u64,
    #[serde(skip)]
    #[schemars(skip)]
    _here: PhantomData<Rc<()>>,
}

/// Charges a card through a synchronous client.
#[tool(blocking)]
fn charge(amount: Local) -> String {
    format!("charged {}", amount.cents)
}

fn main() {}
