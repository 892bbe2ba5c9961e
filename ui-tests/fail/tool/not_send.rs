//! A tool whose future is not `Send`: reported at the function's name.

use std::rc::Rc;

use hookchain::tool;

/// Holds an `Rc` across an await.
#[tool]
async fn sticky(text: String) -> String {
    let shared = Rc::new(text);
    std::future::ready(()).await;
    shared.to_string()
}

fn main() {}
