use hookchain::prelude::*;
use hookchain::tool;

#[tool]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {
    // No second error here: the tool is still a type implementing `Tool`.
    let agent = Agent::builder(ScriptedModel::new([])).tool(add).build().unwrap();
    let _ = agent;
}
