//! The JSON schema of a tool's arguments, in the shape providers accept.
//!
//! `schemars` writes a schema for validators: a `$schema` URI, a `title`, and a `format` on
//! every number (`int64`, `uint32`, `double`). Providers read tool schemas more narrowly: the
//! noise costs tokens, some reject unknown integer formats, and strict modes (OpenAI's
//! `strict`) want `"additionalProperties": false` on objects. Gemini's function declarations
//! take a narrower subset still, which [`gemini_schema`](super::gemini_schema) maps to.

use schemars::JsonSchema;
use schemars::generate::{SchemaGenerator, SchemaSettings};
use serde_json::{Map, Value};

/// The schema of the arguments `A`, cleaned for providers (see [`clean_schema`]).
///
/// Subschemas are inlined (no `$defs`), except for recursive types, which need a `$ref`.
///
/// ```
/// use hookchain::tool::parameters_schema;
/// use schemars::JsonSchema;
/// use serde_json::json;
///
/// #[derive(JsonSchema)]
/// struct Page {
///     /// Where to start.
///     offset: u32,
///     limit: Option<u8>,
/// }
///
/// assert_eq!(
///     parameters_schema::<Page>(),
///     json!({
///         "type": "object",
///         "properties": {
///             "offset": { "type": "integer", "minimum": 0, "description": "Where to start." },
///             "limit": { "type": ["integer", "null"], "minimum": 0, "maximum": 255 },
///         },
///         "required": ["offset"],
///         "additionalProperties": false,
///     })
/// );
/// ```
#[must_use]
pub fn parameters_schema<A: JsonSchema + ?Sized>() -> Value {
    clean_schema(generator().into_root_schema_for::<A>().to_value())
}

/// The generator of argument schemas: for deserializing, no meta-schema, subschemas inlined.
pub(crate) fn generator() -> SchemaGenerator {
    SchemaSettings::draft2020_12()
        .for_deserialize()
        .with(|settings| {
            settings.meta_schema = None;
            settings.inline_subschemas = true;
        })
        .into_generator()
}

/// Cleans a generated schema for providers: no `$schema` or `title` at the top,
/// `"additionalProperties": false` on the top-level object and on every nested object with
/// `properties` (a struct), unless the schema says otherwise, and no `format` on integers and
/// numbers (their bounds, such as `"minimum": 0` for unsigned types,
/// stay: they say something the model can use).
///
/// ```
/// use hookchain::tool::clean_schema;
/// use serde_json::json;
///
/// let raw = json!({
///     "$schema": "https://json-schema.org/draft/2020-12/schema",
///     "title": "Args",
///     "type": "object",
///     "properties": { "n": { "type": "integer", "format": "uint64", "minimum": 0 } },
///     "required": ["n"],
/// });
/// assert_eq!(
///     clean_schema(raw),
///     json!({
///         "type": "object",
///         "properties": { "n": { "type": "integer", "minimum": 0 } },
///         "required": ["n"],
///         "additionalProperties": false,
///     })
/// );
/// ```
#[must_use]
pub fn clean_schema(mut schema: Value) -> Value {
    if let Value::Object(top) = &mut schema {
        top.remove("$schema");
        top.remove("title");
        if is_type(top, "object") && !top.contains_key("additionalProperties") {
            top.insert("additionalProperties".to_owned(), Value::Bool(false));
        }
    }
    tidy(&mut schema);
    schema
}

/// At any depth: removes `format` from integer and number schemas, and closes struct objects.
fn tidy(value: &mut Value) {
    match value {
        Value::Object(object) => {
            if is_type(object, "integer") || is_type(object, "number") {
                object.remove("format");
            }
            if is_type(object, "object")
                && object.contains_key("properties")
                && !object.contains_key("additionalProperties")
            {
                object.insert("additionalProperties".to_owned(), Value::Bool(false));
            }
            object.values_mut().for_each(tidy);
        }
        Value::Array(items) => items.iter_mut().for_each(tidy),
        _ => {}
    }
}

/// Whether the schema's `type` is `name`, alone or in a list (`["integer", "null"]`).
fn is_type(schema: &Map<String, Value>, name: &str) -> bool {
    match schema.get("type") {
        Some(Value::String(ty)) => ty == name,
        Some(Value::Array(types)) => types.iter().any(|ty| ty == name),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use schemars::JsonSchema;
    use serde_json::json;

    use super::*;

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Args {
        /// A signed count.
        count: i64,
        ratio: f64,
        small: Option<u16>,
        nested: Inner,
        list: Vec<u64>,
    }

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Inner {
        at: i32,
    }

    #[test]
    fn no_meta_schema_title_or_number_formats_and_closed_objects() {
        let schema = parameters_schema::<Args>();
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "properties": {
                    "count": { "type": "integer", "description": "A signed count." },
                    "ratio": { "type": "number" },
                    "small": { "type": ["integer", "null"], "minimum": 0, "maximum": 65535 },
                    "nested": {
                        "type": "object",
                        "properties": { "at": { "type": "integer" } },
                        "required": ["at"],
                        "additionalProperties": false,
                    },
                    "list": { "type": "array", "items": { "type": "integer", "minimum": 0 } },
                },
                "required": ["count", "ratio", "nested", "list"],
                "additionalProperties": false,
            })
        );
    }

    #[test]
    fn string_formats_and_explicit_additional_properties_stay() {
        let schema = clean_schema(json!({
            "type": "object",
            "properties": { "at": { "type": "string", "format": "date-time" } },
            "additionalProperties": { "type": "string" },
        }));
        assert_eq!(schema["properties"]["at"]["format"], "date-time");
        assert_eq!(schema["additionalProperties"], json!({ "type": "string" }));
    }

    #[test]
    fn a_property_named_format_is_kept() {
        let schema = clean_schema(json!({
            "type": "object",
            "properties": { "format": { "type": "string" }, "type": { "type": "integer" } },
        }));
        assert_eq!(schema["properties"]["format"], json!({ "type": "string" }));
    }
}
