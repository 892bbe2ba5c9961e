use hookchain::tool;

#[derive(serde::Serialize)]
struct Content {
    body: String,
}

/// Gets a page.
#[tool]
async fn page(path: String) -> Content {
    Content { body: path }
}

fn main() {
    let _ = page::call(String::new());
}
