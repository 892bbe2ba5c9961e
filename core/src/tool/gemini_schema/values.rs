//! The values in a schema that Gemini cannot take as they are: an `enum` or `const` of
//! numbers (Gemini lists strings only), an exclusive bound, a `default` or `example` that could
//! be too large to copy.

use serde_json::{Map, Value};

use super::draft::Draft;

/// The largest `default` or `example` copied (deeper or larger ones are dropped).
const MAX_VALUE_DEPTH: usize = 16;
const MAX_VALUE_NODES: usize = 1_000;
/// The longest list of values told in a description (a numeric `enum`).
const MAX_NOTE_CHARS: usize = 500;

/// Reads an `enum`: strings stay an `enum`; other values are told in the description, and
/// `null` makes the schema nullable.
pub(super) fn read_enum(draft: &mut Draft, values: &[Value]) {
    let others: Vec<&Value> = values
        .iter()
        .filter(|value| !value.is_string() && !value.is_null())
        .collect();
    if values.iter().any(Value::is_null) {
        draft.nullable = true;
    }
    if others.is_empty() {
        let strings: Vec<Value> = values
            .iter()
            .filter(|value| value.is_string())
            .cloned()
            .collect();
        if !strings.is_empty() {
            draft
                .fields
                .insert("enum".to_owned(), Value::Array(strings));
        }
        return;
    }
    draft.hinted_type = common_type(values.iter().filter(|value| !value.is_null()));
    draft
        .notes
        .push(format!("One of: {}.", render_list(values)));
}

/// Reads a `const`: a one-value `enum` for a string, else a sentence.
pub(super) fn read_const(draft: &mut Draft, value: &Value) {
    match value {
        Value::String(_) => {
            draft
                .fields
                .insert("enum".to_owned(), Value::Array(vec![value.clone()]));
            draft.hinted_type = Some("string");
        }
        Value::Null => {
            draft.nullable = true;
            draft.only_null = true;
        }
        _ => {
            draft.hinted_type = common_type(std::iter::once(value));
            draft.notes.push(format!(
                "Must be {}.",
                render_list(std::slice::from_ref(value))
            ));
        }
    }
}

/// Reads `exclusiveMinimum` or `exclusiveMaximum` (a number since draft 6, a flag on
/// `minimum`/`maximum` in draft 4): the closed bound Gemini takes, and the open one in words.
pub(super) fn read_exclusive_bound(
    draft: &mut Draft,
    object: &Map<String, Value>,
    key: &str,
    bound: &Value,
) {
    let (closed, words) = if key == "exclusiveMinimum" {
        ("minimum", "Greater than")
    } else {
        ("maximum", "Less than")
    };
    let bound = match bound {
        Value::Number(_) => bound,
        Value::Bool(true) => match object.get(closed) {
            Some(number @ Value::Number(_)) => number,
            _ => return,
        },
        _ => return,
    };
    draft.fields.entry(closed).or_insert_with(|| bound.clone());
    draft.notes.push(format!("{words} {bound}."));
}

/// The JSON type all `values` share, if they share one (integers are numbers too).
fn common_type<'v>(values: impl Iterator<Item = &'v Value>) -> Option<&'static str> {
    let mut common = None;
    for value in values {
        let ty = match value {
            Value::Bool(_) => "boolean",
            Value::Number(number) if number.is_f64() => "number",
            Value::Number(_) => "integer",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
            Value::Null => continue,
        };
        common = match (common, ty) {
            (None, ty) => Some(ty),
            (Some(seen), ty) if seen == ty => Some(ty),
            (Some("integer" | "number"), "integer" | "number") => Some("number"),
            _ => return None,
        };
    }
    common
}

/// `values` as JSON, separated by commas, within [`MAX_NOTE_CHARS`].
fn render_list(values: &[Value]) -> String {
    let mut text = String::new();
    for value in values {
        let rendered = if fits(value, 4, 32) {
            value.to_string()
        } else {
            "…".to_owned()
        };
        if text.len() + rendered.len() > MAX_NOTE_CHARS {
            text.push_str(", …");
            break;
        }
        if !text.is_empty() {
            text.push_str(", ");
        }
        text.push_str(&rendered);
    }
    text
}

/// A copy of `value` if it is small enough to copy (a hostile one could be nested deep
/// enough to overflow the stack of a recursive clone).
pub(super) fn bounded_copy(value: &Value) -> Option<Value> {
    fits(value, MAX_VALUE_DEPTH, MAX_VALUE_NODES).then(|| value.clone())
}

/// Whether `value` nests at most `max_depth` levels and holds at most `max_nodes` values,
/// checked without recursion.
fn fits(value: &Value, max_depth: usize, max_nodes: usize) -> bool {
    let mut stack = vec![(value, 0)];
    let mut nodes = 0;
    while let Some((value, depth)) = stack.pop() {
        nodes += 1;
        if depth > max_depth || nodes > max_nodes {
            return false;
        }
        match value {
            Value::Array(items) => stack.extend(items.iter().map(|item| (item, depth + 1))),
            Value::Object(object) => stack.extend(object.values().map(|item| (item, depth + 1))),
            _ => {}
        }
    }
    true
}
