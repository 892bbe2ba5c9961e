//! What the model reads of a large result, against a server of the test's own answering 8 MiB:
//! at most the bound and a note saying what was cut, valid UTF-8 where the cut falls inside a
//! character.

mod support;

use hookchain::ToolRegistry;
use hookchain::message::ContentPart;
use hookchain::prelude::*;
use hookchain_mcp::{DEFAULT_MAX_RESULT_BYTES, McpServer, McpToolset};
use serde_json::{Value, json};
use support::fake::{FakeServer, Reply, tool};
use support::{call_once, guard};

const EIGHT_MIB: usize = 8 * 1024 * 1024;

/// `€` (3 bytes) repeated to nearly 8 MiB: a bound of a power of two falls inside one.
fn large_text() -> String {
    "€".repeat(EIGHT_MIB / 3)
}

/// A server whose tool `big` answers `result`.
async fn answering(result: Value) -> FakeServer {
    FakeServer::start(move |method, _| match method {
        "tools/list" => Reply::Result(json!({"tools": [tool("big", json!({}))]})),
        "tools/call" => Reply::Result(result.clone()),
        _ => Reply::Close,
    })
    .await
}

/// The note after `kept` bytes of `total` were kept.
fn note_after(total: usize, kept: usize) -> String {
    let cut = (total - kept).to_string();
    // Grouped by thousands, as the note writes it.
    let mut grouped = String::new();
    for (i, digit) in cut.chars().enumerate() {
        if i > 0 && (cut.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    format!("[… {grouped} more bytes cut: the result was larger than this agent takes]")
}

#[tokio::test]
async fn an_8_mib_text_result_is_cut_to_the_default_bound_with_a_note() {
    guard(async {
        let text = large_text();
        let server = answering(json!({"content": [{"type": "text", "text": text}]})).await;
        let toolset = McpToolset::connect([McpServer::http("fake", &server.url)])
            .await
            .unwrap();

        let results = call_once(&toolset, "big", json!({})).await;
        let [(read, false)] = results.as_slice() else {
            let start: String = results[0].0.chars().take(200).collect();
            panic!("one result, not an error: {start:?}");
        };
        let (kept, note) = read
            .rsplit_once('\n')
            .expect("the note on a line of its own");
        // The most whole characters within 1 MiB: 349,525 of 3 bytes.
        assert_eq!(kept.len(), DEFAULT_MAX_RESULT_BYTES / 3 * 3);
        assert!(text.starts_with(kept));
        assert!(kept.chars().all(|c| c == '€'));
        assert_eq!(note, note_after(text.len(), kept.len()));
        assert_eq!(
            note,
            "[… 7,340,031 more bytes cut: the result was larger than this agent takes]"
        );
        assert!(read.len() <= DEFAULT_MAX_RESULT_BYTES + 1 + note.len());
    })
    .await;
}

#[tokio::test]
async fn an_error_result_is_bounded_too() {
    guard(async {
        let text = large_text();
        let server = answering(json!({
            "content": [{"type": "text", "text": text}],
            "isError": true
        }))
        .await;
        let toolset =
            McpToolset::connect([McpServer::http("fake", &server.url).max_result_bytes(1000)])
                .await
                .unwrap();
        let results = call_once(&toolset, "big", json!({})).await;
        let (read, is_error) = &results[0];
        assert!(is_error);
        // The model reads the server's text, bounded; the failure's account follows it here.
        let expected = format!("{}\n{}\n", "€".repeat(333), note_after(text.len(), 999));
        assert!(read.starts_with(&expected), "{}", &read[999..]);
    })
    .await;
}

#[tokio::test]
async fn an_image_beyond_the_bound_is_dropped_and_the_text_after_it_kept() {
    guard(async {
        let server = answering(json!({"content": [
            {"type": "text", "text": "Here is the chart:"},
            {"type": "image", "data": "A".repeat(EIGHT_MIB), "mimeType": "image/png"},
            {"type": "text", "text": " (made today)"},
        ]}))
        .await;
        let toolset =
            McpToolset::connect([McpServer::http("fake", &server.url).max_result_bytes(4096)])
                .await
                .unwrap();
        let big = toolset.tool("big").expect("listed");
        let result = ToolRegistry::new()
            .with(big)
            .execute(&ToolCall::new("c1", "big", json!({})))
            .await;
        assert!(!result.is_error, "{result:?}");
        assert_eq!(
            result.content.parts(),
            [
                ContentPart::text("Here is the chart:"),
                ContentPart::text(" (made today)"),
                ContentPart::text(
                    "\n[… 1 image dropped: the result was larger than this agent takes]"
                ),
            ]
        );
    })
    .await;
}
