use hookchain::middleware;

#[derive(serde::Serialize, serde::Deserialize)]
struct Counts {
    calls: u32,
}

struct Limit;

#[middleware(state = Counts)]
impl Limit {
    #[hook(before_model)]
    fn count(&self, counts: &mut Counts) {
        counts.calls += 1;
    }
}

fn main() {}
