//! A tool taking the call's context, in any position, and reading the run through it.

#![deny(warnings)]

use hookchain::{Tool, ToolContext, ToolError, tool};

/// Tells the model which call and run this is.
#[tool]
async fn whoami(prefix: String, cx: ToolContext<'_>) -> Result<String, ToolError> {
    Ok(format!("{prefix} {} {} {}", cx.call_id(), cx.run_id(), cx.messages().len()))
}

/// Asks for a confirmation, then reads the answer on the resumed call.
#[tool]
async fn confirm(cx: hookchain::ToolContext<'_>, what: String) -> Result<String, ToolError> {
    match cx.resume_value() {
        Some(answer) => Ok(format!("{what}: {answer}")),
        None => Err(ToolError::Interrupt {
            payload: serde_json::json!({ "confirm": what }),
        }),
    }
}

fn main() {
    assert_eq!(whoami.spec().parameters["required"], serde_json::json!(["prefix"]));
    assert_eq!(confirm.spec().name, "confirm");
}
