use hookchain::tool;

/// Adds two numbers.
#[tool(rename = "sum")]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {}
