use hookchain::tool;

struct Counter {
    count: u64,
}

#[tool]
impl Counter {
    /// Counts the calls.
    async fn count(&mut self) -> u64 {
        self.count += 1;
        self.count
    }
}

fn main() {}
