//! `Option` parameters are optional arguments; a user's own types are arguments too.

#![deny(warnings)]

use hookchain::{Tool, tool};
use schemars::JsonSchema;
use serde::Deserialize;

/// A temperature unit.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Unit {
    /// Degrees Celsius.
    Celsius,
    /// Degrees Fahrenheit.
    Fahrenheit,
}

/// Gets the weather in a city.
#[tool]
async fn weather(
    /// The city.
    city: String,
    /// The unit (Celsius by default).
    unit: Option<Unit>,
    /// How many days ahead.
    days: Option<u32>,
) -> String {
    let unit = match unit {
        Some(Unit::Fahrenheit) => "F",
        Some(Unit::Celsius) | None => "C",
    };
    format!("{city}: 21 {unit} in {} days", days.unwrap_or(0))
}

fn main() {
    let schema = weather.spec().parameters;
    assert_eq!(schema["required"], serde_json::json!(["city"]));
}
