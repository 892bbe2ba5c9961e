//! A closure given as a token counter.

use hookchain::Message;
use hookchain::builtin::ContextEditing;

fn main() {
    let _ = ContextEditing::builder()
        .token_counter(|message: &Message| message.text().len() as u64 / 4);
}
