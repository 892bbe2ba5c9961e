use hookchain::tool;

/// Looks a word up.
#[tool]
async fn lookup(#[serde(rename = "q")] word: String) -> String {
    word
}

fn main() {}
