//! Python's `repr`, `str` and type names of JSON values, for Pydantic Evals' reasons.

use serde_json::Value;

/// `repr(value)` of the value `json.loads` gives.
pub(super) fn repr(value: &Value) -> String {
    let mut out = String::new();
    write_repr(value, &mut out);
    out
}

/// `str(value)`: a string as it is, anything else as its repr.
pub(super) fn str(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => repr(other),
    }
}

/// `repr(text)` of a string: single quotes unless it holds one and no double quote.
pub(super) fn repr_str(text: &str) -> String {
    let mut out = String::new();
    write_repr_str(text, &mut out);
    out
}

/// Pydantic Evals' `_truncated_repr` on an already rendered repr: longer than `max` characters,
/// its first and last `max / 2` characters around `...`.
pub(super) fn truncated(repr: String, max: usize) -> String {
    let len = repr.chars().count();
    if len <= max {
        return repr;
    }
    let half = max / 2;
    let head: String = repr.chars().take(half).collect();
    let tail: String = repr.chars().skip(len - half).collect();
    format!("{head}...{tail}")
}

/// `type(value).__name__`.
pub(super) fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "NoneType",
        Value::Bool(_) => "bool",
        Value::Number(number) if number.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

/// `type(value).__mro__`'s names: `bool` is an `int`, everything an `object`.
pub(super) fn mro(value: &Value) -> &'static [&'static str] {
    match type_name(value) {
        "NoneType" => &["NoneType", "object"],
        "bool" => &["bool", "int", "object"],
        "float" => &["float", "object"],
        "int" => &["int", "object"],
        "str" => &["str", "object"],
        "list" => &["list", "object"],
        _ => &["dict", "object"],
    }
}

fn write_repr(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("None"),
        Value::Bool(true) => out.push_str("True"),
        Value::Bool(false) => out.push_str("False"),
        Value::Number(number) => {
            let text = number.to_string();
            if number.is_f64() && !text.contains(['.', 'e', 'E', 'i', 'N']) {
                out.push_str(&text);
                out.push_str(".0");
            } else {
                out.push_str(&text);
            }
        }
        Value::String(text) => write_repr_str(text, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_repr(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_repr_str(key, out);
                out.push_str(": ");
                write_repr(item, out);
            }
            out.push('}');
        }
    }
}

fn write_repr_str(text: &str, out: &mut String) {
    let quote = if text.contains('\'') && !text.contains('"') {
        '"'
    } else {
        '\''
    };
    out.push(quote);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push(quote);
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{repr, truncated};

    #[test]
    fn reprs_read_as_python_prints_them() {
        assert_eq!(
            repr(&json!({"a": [1, 2.0, true, null, "it's"]})),
            r#"{'a': [1, 2.0, True, None, "it's"]}"#
        );
        assert_eq!(repr(&json!("a'b\"c\n")), r#"'a\'b"c\n'"#);
    }

    #[test]
    fn truncation_keeps_both_ends_of_long_reprs_on_char_boundaries() {
        assert_eq!(truncated("abcdef".into(), 10), "abcdef");
        assert_eq!(truncated("ééééééé".into(), 4), "éé...éé");
    }
}
