use hookchain::tool;

/// Echoes a value.
#[tool]
async fn echo<T: serde::Serialize>(value: T) -> T {
    value
}

fn main() {}
