use hookchain::tool;

/// Waits.
#[tool]
async fn wait(until: std::time::Instant) -> String {
    let _ = until;
    String::new()
}

fn main() {}
