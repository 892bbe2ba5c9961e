use hookchain::tool;

/// Adds two numbers.
#[tool]
struct Add {
    a: i64,
}

fn main() {}
