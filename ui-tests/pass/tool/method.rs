//! `#[tool]` on an impl block with one `&self` method: the type is the tool, and holds its
//! state (a database handle, here a list).

#![deny(warnings)]

use std::sync::Mutex;

use hookchain::prelude::*;
use hookchain::tool;

/// A tiny database.
struct Db {
    rows: Mutex<Vec<String>>,
}

#[tool(name = "search")]
impl Db {
    /// Searches the rows for a text.
    pub async fn search(
        &self,
        /// What to look for.
        query: String,
    ) -> Vec<String> {
        let rows = self.rows.lock().unwrap();
        rows.iter().filter(|row| row.contains(&query)).cloned().collect()
    }
}

fn main() {
    let db = Db {
        rows: Mutex::new(vec!["apple".to_owned()]),
    };
    drop(db.search("app".to_owned()));
    let agent = Agent::builder(ScriptedModel::new([])).tool(db).build().unwrap();
    let _ = agent;
}
