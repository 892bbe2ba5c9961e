//! One tool given where a source of tools is expected.

use hookchain::{ToolRegistry, tool};

/// The weather in a city.
#[tool]
async fn weather(city: String) -> String {
    format!("Sunny in {city}")
}

fn main() {
    let _ = ToolRegistry::new().with_source(weather);
}
