use hookchain::middleware;
use hookchain::prelude::*;

struct Tagged<T> {
    tag: T,
}

#[middleware]
impl<T: std::fmt::Display> Tagged<T> {
    #[hook(after_model)]
    fn tag(&self, response: &mut ModelResponse) {
        response.message.content.push_text(format!(" [{}]", self.tag));
    }
}

fn main() {}
