use hookchain::prelude::*;

/// Gets the weather.
async fn weather(city: String) -> String {
    city
}

fn main() {
    let _ = Agent::builder(ScriptedModel::new([])).tool(weather).build();
}
