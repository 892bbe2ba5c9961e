use hookchain::middleware;

#[middleware]
struct Audit;

fn main() {}
