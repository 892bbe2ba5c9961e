//! A request's structural fingerprint, and the diff of two fingerprints.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use hookchain_core::ModelRequest;
use serde_json::Value;

use super::redact::Redaction;

/// The fingerprint of `request`: the request as JSON, less what changes between two runs of
/// the same conversation (message metadata; tool call ids, renamed `call_1`, `call_2`, … in
/// the order they first appear), redacted.
pub(crate) fn fingerprint(request: &ModelRequest, redaction: &Redaction) -> Value {
    let mut value = serde_json::to_value(request).unwrap_or(Value::Null);
    let mut ids = BTreeMap::new();
    if let Some(messages) = value.get_mut("messages").and_then(Value::as_array_mut) {
        for message in messages {
            let Some(message) = message.as_object_mut() else {
                continue;
            };
            message.remove("metadata");
            if let Some(calls) = message.get_mut("tool_calls").and_then(Value::as_array_mut) {
                for call in calls {
                    if let Some(id) = call.get_mut("id") {
                        rename(id, &mut ids);
                    }
                }
            }
            if let Some(id) = message.get_mut("tool_call_id") {
                rename(id, &mut ids);
            }
        }
    }
    redaction.request(&mut value);
    value
}

/// Replaces a call id by its ordinal name.
fn rename(id: &mut Value, ids: &mut BTreeMap<String, String>) {
    if let Value::String(text) = id {
        let next = ids.len() + 1;
        let name = ids
            .entry(text.clone())
            .or_insert_with(|| format!("call_{next}"));
        *text = name.clone();
    }
}

/// The fields where `expected` and `actual` differ, one line each:
/// `messages[0].content: expected "a", actual "b"`.
pub(crate) fn diff(expected: &Value, actual: &Value) -> String {
    let mut lines = String::new();
    walk("", expected, actual, &mut lines);
    lines
}

fn walk(at: &str, expected: &Value, actual: &Value, out: &mut String) {
    match (expected, actual) {
        (Value::Object(left), Value::Object(right)) => {
            let keys: std::collections::BTreeSet<&String> =
                left.keys().chain(right.keys()).collect();
            for key in keys {
                let path = if at.is_empty() {
                    key.clone()
                } else {
                    format!("{at}.{key}")
                };
                match (left.get(key), right.get(key)) {
                    (Some(left), Some(right)) => walk(&path, left, right, out),
                    (Some(left), None) => line(out, &path, Some(left), None),
                    (None, Some(right)) => line(out, &path, None, Some(right)),
                    (None, None) => {}
                }
            }
        }
        (Value::Array(left), Value::Array(right)) => {
            for index in 0..left.len().max(right.len()) {
                let path = format!("{at}[{index}]");
                match (left.get(index), right.get(index)) {
                    (Some(left), Some(right)) => walk(&path, left, right, out),
                    (left, right) => line(out, &path, left, right),
                }
            }
        }
        (left, right) if left != right => line(out, at, Some(left), Some(right)),
        _ => {}
    }
}

fn line(out: &mut String, at: &str, expected: Option<&Value>, actual: Option<&Value>) {
    let show =
        |value: Option<&Value>| value.map_or_else(|| "(absent)".to_owned(), Value::to_string);
    let at = if at.is_empty() { "(request)" } else { at };
    let _ = writeln!(
        out,
        "  {at}: expected {}, actual {}",
        show(expected),
        show(actual)
    );
}
