//! Tools returning hookchain's `Content`, by any path, plain or in a `Result`: their parts reach
//! the model as they are, not as JSON text.

#![deny(warnings)]

use hookchain::message::{Content, ContentPart};
use hookchain::{ToolError, tool};

/// Draws the chart of a series.
#[tool]
fn chart(series: String) -> Content {
    Content::from(vec![
        ContentPart::text(format!("The chart of {series}:")),
        ContentPart::image_base64("image/png", "iVBORw0KGgo="),
    ])
}

/// Looks a record up.
#[tool]
async fn record(id: u32) -> Result<hookchain::Content, ToolError> {
    match id {
        0 => Err(ToolError::for_model("record", "no record 0")),
        _ => Ok(ContentPart::json(serde_json::json!({ "id": id })).into()),
    }
}

fn main() {
    let _: Content = chart::call(String::new());
    let _ = record::call(1);
}
