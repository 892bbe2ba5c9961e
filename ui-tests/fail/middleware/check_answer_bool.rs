use hookchain::interrupt::Answer;
use hookchain::middleware;

struct Gate;

#[middleware]
impl Gate {
    #[hook(before_model)]
    fn ask(&self) {}

    #[check_answer]
    fn check(&self, answer: &Answer<'_>) -> bool {
        let _ = answer;
        true
    }
}

fn main() {}
