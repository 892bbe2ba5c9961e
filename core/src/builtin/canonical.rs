//! Tool calls compared by what they do: the tool's name and its arguments in canonical JSON.

use std::fmt::Write as _;

use serde_json::Value;

/// The key of a call of `tool` with `arguments`: the name, a NUL (which no tool name holds),
/// then the arguments as JSON with every object's keys sorted, so that `{"a":1,"b":2}` and
/// `{"b":2,"a":1}` are the same call whatever the order the model wrote them in (and whatever
/// order `serde_json` keeps maps in).
pub(crate) fn call_key(tool: &str, arguments: &Value) -> String {
    let mut key = String::with_capacity(tool.len() + 32);
    key.push_str(tool);
    key.push('\0');
    write_canonical(arguments, &mut key);
    key
}

/// Writes `value` as compact JSON, object keys sorted.
pub(crate) fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (key, value)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_scalar(&Value::from(key.as_str()), out);
                out.push(':');
                write_canonical(value, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        scalar => write_scalar(scalar, out),
    }
}

fn write_scalar(value: &Value, out: &mut String) {
    // Writing to a `String` cannot fail.
    let _ = write!(out, "{value}");
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn key_order_does_not_matter() {
        let a = call_key("t", &json!({"b": [1, {"y": 2, "x": "q\""}], "a": null}));
        let b = call_key("t", &json!({"a": null, "b": [1, {"x": "q\"", "y": 2}]}));
        assert_eq!(a, b);
        assert_eq!(a, "t\0{\"a\":null,\"b\":[1,{\"x\":\"q\\\"\",\"y\":2}]}");
    }

    #[test]
    fn names_and_values_tell_calls_apart() {
        assert_ne!(
            call_key("t", &json!({"a": 1})),
            call_key("u", &json!({"a": 1}))
        );
        assert_ne!(
            call_key("t", &json!({"a": 1})),
            call_key("t", &json!({"a": 2}))
        );
    }
}
