use hookchain::interrupt::Answer;
use hookchain::prelude::*;
use hookchain::middleware;

struct Gate;

#[middleware]
impl Gate {
    #[hook(before_model)]
    fn ask(&self) {}

    #[check_answer]
    async fn check(&self, answer: &Answer<'_>) -> Result<(), Error> {
        let _ = answer;
        Ok(())
    }
}

fn main() {}
