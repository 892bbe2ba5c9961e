use hookchain::tool;

struct Db;

impl Db {
    /// Searches the database.
    #[tool]
    async fn search(&self, query: String) -> String {
        query
    }
}

fn main() {}
