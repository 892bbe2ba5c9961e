//! JSON equality as Python's `==` on the parsed values, which both references use.

use serde_json::{Number, Value};

/// `a == b` as Python compares `json.loads` results: numbers by value (`1 == 1.0`), and a
/// boolean as the integer it is (`True == 1`); objects without regard to key order. serde's
/// own `==` tells `1` from `1.0`, which would fail arguments the references accept.
pub(crate) fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => number_eq(x, y),
        (Value::Bool(x), Value::Number(y)) | (Value::Number(y), Value::Bool(x)) => {
            number_eq(&Number::from(u8::from(*x)), y)
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| json_eq(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(key, x)| y.get(key).is_some_and(|y| json_eq(x, y)))
        }
        _ => a == b,
    }
}

fn number_eq(x: &Number, y: &Number) -> bool {
    if let (Some(x), Some(y)) = (x.as_i64(), y.as_i64()) {
        return x == y;
    }
    if let (Some(x), Some(y)) = (x.as_u64(), y.as_u64()) {
        return x == y;
    }
    match (x.as_f64(), y.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::json_eq;
    use serde_json::json;

    #[test]
    fn numbers_compare_by_value_as_in_python() {
        assert!(json_eq(&json!({"n": 1}), &json!({"n": 1.0})));
        assert!(json_eq(&json!([true]), &json!([1])));
        assert!(!json_eq(&json!({"n": 1}), &json!({"n": 2})));
        assert!(!json_eq(&json!({"n": 1}), &json!({"n": 1, "m": 2})));
        assert!(!json_eq(&json!(-1), &json!(u64::MAX)));
    }
}
