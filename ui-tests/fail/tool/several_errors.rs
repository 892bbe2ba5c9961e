use hookchain::tool;

// Every mistake of one `#[tool]` is reported in one build.
#[tool(nam = "shout")]
async fn shout(text: &str, (a, b): (u8, u8)) -> String {
    format!("{text}{a}{b}")
}

fn main() {}
