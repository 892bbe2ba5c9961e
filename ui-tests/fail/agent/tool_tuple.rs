use hookchain::prelude::*;
use hookchain::tool;

/// Gets the weather.
#[tool]
async fn weather(city: String) -> String {
    city
}

/// Gets the time.
#[tool]
async fn time(city: String) -> String {
    city
}

fn main() {
    let _ = Agent::builder(ScriptedModel::new([])).tool((weather, time)).build();
}
