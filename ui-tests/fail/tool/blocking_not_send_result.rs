//! A blocking tool whose result is not `Send`: it comes back from the blocking thread.

use std::marker::PhantomData;
use std::rc::Rc;

use hookchain::tool;

/// A receipt that must stay on its thread.
#[derive(serde::Serialize)]
struct Receipt {
    cents: u64,
    #[serde(skip)]
    _here: PhantomData<Rc<()>>,
}

/// Charges a card through a synchronous client.
#[tool(blocking)]
fn charge(cents: u64) -> Receipt {
    Receipt {
        cents,
        _here: PhantomData,
    }
}

fn main() {}
