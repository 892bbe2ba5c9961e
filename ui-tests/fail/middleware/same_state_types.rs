use hookchain::middleware;

struct Limits;

#[middleware(state = u32, thread_state = u32)]
impl Limits {
    #[hook(before_model)]
    fn count(&self, run: &mut u32, thread: &mut u32) {
        *run += 1;
        *thread += 1;
    }
}

fn main() {}
