use hookchain::middleware;

struct Audit;

#[middleware]
impl Audit {
    fn log(&self) {}
}

fn main() {}
