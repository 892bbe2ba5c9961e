//! Tool input schemas as every provider accepts them.

use serde_json::{Map, Value};

/// The schema the model is given for an MCP tool's `input_schema`: the same schema, with a
/// top-level `"type": "object"` and a `"properties"` object where it has none.
///
/// MCP only requires an object schema and allows `properties` to be missing (a tool without
/// arguments is often just `{"type": "object"}`); OpenAI refuses a function whose parameters
/// have no `properties`. Everything else (`required`, `$defs`, descriptions, …) is kept as is.
pub(crate) fn object_schema(input_schema: &Map<String, Value>) -> Value {
    let mut schema = input_schema.clone();
    schema
        .entry("type")
        .or_insert_with(|| Value::String("object".into()));
    if !schema.get("properties").is_some_and(Value::is_object) {
        schema.insert("properties".into(), Value::Object(Map::new()));
    }
    Value::Object(schema)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn of(value: Value) -> Value {
        object_schema(value.as_object().expect("an object"))
    }

    #[test]
    fn a_schema_without_properties_gets_an_empty_properties_object() {
        assert_eq!(
            of(json!({"type": "object"})),
            json!({"type": "object", "properties": {}})
        );
        assert_eq!(of(json!({})), json!({"type": "object", "properties": {}}));
    }

    #[test]
    fn everything_else_is_kept() {
        let schema = json!({
            "type": "object",
            "properties": {"path": {"type": "string", "description": "A path."}},
            "required": ["path"],
            "additionalProperties": false,
            "$defs": {"x": {"type": "integer"}}
        });
        assert_eq!(of(schema.clone()), schema);
    }
}
