use hookchain::middleware;
use hookchain::middleware::Contributions;

struct Todos;

#[middleware]
impl Todos {
    #[contribute]
    fn contribute(&mut self, to: &mut Contributions) {
        to.system_prompt("Keep a list of your tasks.");
    }
}

fn main() {}
