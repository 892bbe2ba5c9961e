//! `gemini_schema`: each mapping rule, the bounds on recursive, deep and large schemas, and the
//! check of the subset (`gemini_schema_problems`) on every result and on what Gemini refuses.

use hookchain::tool::{gemini_schema, gemini_schema_problems, parameters_schema};
use schemars::JsonSchema;
use serde_json::{Value, json};

/// The mapped `schema`, checked against the subset; mapping it again changes nothing.
fn mapped(schema: &Value) -> Value {
    let gemini = gemini_schema(schema);
    let problems = gemini_schema_problems(&gemini);
    assert!(problems.is_empty(), "{problems:#?}\nin {gemini:#}");
    assert_eq!(gemini_schema(&gemini), gemini, "mapped twice");
    gemini
}

/// How deep `value` nests (a schema's subschemas and keywords alike).
fn depth(value: &Value) -> usize {
    match value {
        Value::Object(object) => 1 + object.values().map(depth).max().unwrap_or(0),
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// How many JSON values `value` holds.
fn size(value: &Value) -> usize {
    match value {
        Value::Object(object) => 1 + object.values().map(size).sum::<usize>(),
        Value::Array(items) => 1 + items.iter().map(size).sum::<usize>(),
        _ => 1,
    }
}

/// `levels` schemas each nested in the one before (`wrap` makes one level; `json!` would copy
/// the inner value through serde, recursively, at every level).
fn nested(levels: usize, wrap: impl Fn(Value) -> Value) -> Value {
    (0..levels).fold(json!({ "type": "string" }), |inner, _| wrap(inner))
}

/// An object of `pairs`, taking their values (no copy).
fn object<const N: usize>(pairs: [(&str, Value); N]) -> Value {
    Value::Object(
        pairs
            .into_iter()
            .map(|(key, value)| (key.to_owned(), value))
            .collect(),
    )
}

/// Drops `value` without recursion (the derived drop of 10 000 levels could overflow the
/// test thread's stack: that is the input's problem, not the mapping's).
fn drop_flat(value: Value) {
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::Object(object) => stack.extend(object.into_iter().map(|(_, value)| value)),
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
}

#[test]
fn a_nullable_type_is_one_type_and_nullable() {
    let gemini = mapped(&json!({ "type": ["string", "null"], "maxLength": 3 }));
    assert_eq!(
        gemini,
        json!({ "type": "STRING", "nullable": true, "maxLength": 3 })
    );

    let gemini = mapped(
        &json!({ "anyOf": [{ "type": "integer" }, { "type": "null" }], "description": "A count." }),
    );
    assert_eq!(
        gemini,
        json!({ "type": "INTEGER", "nullable": true, "description": "A count." })
    );
}

#[test]
fn several_types_are_branches_each_with_its_keywords() {
    let gemini = mapped(&json!({
        "type": ["string", "integer", "null"],
        "minLength": 1,
        "minimum": 0,
        "description": "An id or a name.",
    }));
    assert_eq!(
        gemini,
        json!({
            "description": "An id or a name.",
            "nullable": true,
            "anyOf": [
                { "type": "STRING", "minLength": 1 },
                { "type": "INTEGER", "minimum": 0 },
            ],
        })
    );
}

#[test]
fn one_of_is_any_of_and_the_shape_beside_it_goes_into_each_branch() {
    let gemini = mapped(&json!({
        "type": "object",
        "description": "Where to look.",
        "properties": { "path": { "type": "string" } },
        "oneOf": [
            { "properties": { "line": { "type": "integer" } }, "required": ["line"] },
            { "properties": { "symbol": { "type": "string" } }, "required": ["symbol"] },
        ],
    }));
    assert_eq!(
        gemini,
        json!({
            "description": "Where to look.",
            "anyOf": [
                {
                    "type": "OBJECT",
                    "properties": { "line": { "type": "INTEGER" }, "path": { "type": "STRING" } },
                    "required": ["line"],
                },
                {
                    "type": "OBJECT",
                    "properties": { "symbol": { "type": "STRING" }, "path": { "type": "STRING" } },
                    "required": ["symbol"],
                },
            ],
        })
    );
}

#[test]
fn all_of_objects_are_merged() {
    let gemini = mapped(&json!({
        "allOf": [
            { "type": "object", "properties": { "a": { "type": "string" } }, "required": ["a"] },
            { "properties": { "b": { "type": "boolean" } }, "required": ["b"], "description": "B." },
        ],
    }));
    assert_eq!(
        gemini,
        json!({
            "type": "OBJECT",
            "properties": { "a": { "type": "STRING" }, "b": { "type": "BOOLEAN" } },
            "required": ["a", "b"],
            "description": "B.",
        })
    );
}

#[test]
fn local_refs_are_inlined_and_the_keywords_beside_them_win() {
    let gemini = mapped(&json!({
        "type": "object",
        "properties": {
            "from": { "$ref": "#/$defs/Point", "description": "The start." },
            "to": { "$ref": "#/definitions/Point" },
            "unit": { "$ref": "#/properties/from/properties/never" },
        },
        "$defs": { "Point": { "type": "object", "description": "A point.", "properties": { "x": { "type": "number" } } } },
        "definitions": { "Point": { "type": "object", "properties": { "y": { "type": "number" } } } },
    }));
    assert_eq!(
        gemini["properties"]["from"],
        json!({ "type": "OBJECT", "description": "The start.", "properties": { "x": { "type": "NUMBER" } } })
    );
    assert_eq!(
        gemini["properties"]["to"]["properties"],
        json!({ "y": { "type": "NUMBER" } })
    );
    // A reference to nothing is said, not followed.
    assert_eq!(
        gemini["properties"]["unit"],
        json!({ "type": "STRING", "description": "Follows the schema `#/properties/from/properties/never`." })
    );
}

#[test]
fn a_recursive_ref_is_expanded_twice_then_cut_with_its_type() {
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Node {
        name: String,
        children: Vec<Node>,
    }
    let gemini = mapped(&parameters_schema::<Node>());
    let second = &gemini["properties"]["children"]["items"];
    let third = &second["properties"]["children"]["items"];
    assert_eq!(second["properties"]["name"], json!({ "type": "STRING" }));
    assert_eq!(third["properties"]["name"], json!({ "type": "STRING" }));
    assert_eq!(
        third["properties"]["children"]["items"],
        json!({ "type": "OBJECT", "description": "Not expanded: the whole schema again." })
    );
}

#[test]
fn a_ref_to_the_whole_schema_is_cut_too() {
    let gemini = mapped(&json!({
        "type": "object",
        "properties": { "next": { "$ref": "#" } },
    }));
    assert!(depth(&gemini) < 16, "{gemini:#}");
}

#[test]
fn refs_that_double_at_every_level_stay_bounded() {
    // d0 holds two d1, each holds two d2…: 2^40 schemas once inlined.
    let mut defs = serde_json::Map::new();
    for level in 0..40 {
        let next = json!({ "$ref": format!("#/$defs/d{}", level + 1) });
        defs.insert(
            format!("d{level}"),
            json!({ "type": "object", "properties": { "left": next, "right": next } }),
        );
    }
    defs.insert("d40".to_owned(), json!({ "type": "string" }));
    let gemini = mapped(&json!({ "$ref": "#/$defs/d0", "$defs": defs }));
    assert!(size(&gemini) < 100_000, "{}", size(&gemini));
    assert!(gemini.to_string().contains("Not expanded"));
}

#[test]
fn const_is_a_one_value_enum_for_strings_and_a_sentence_otherwise() {
    assert_eq!(
        mapped(&json!({ "const": "fast" })),
        json!({ "type": "STRING", "enum": ["fast"] })
    );
    assert_eq!(
        mapped(&json!({ "const": 3 })),
        json!({ "type": "INTEGER", "description": "Must be 3." })
    );
    assert_eq!(
        mapped(&json!({ "type": "boolean", "const": true, "description": "Agree" })),
        json!({ "type": "BOOLEAN", "description": "Agree. Must be true." })
    );
}

#[test]
fn non_string_enums_are_told_and_the_type_stays() {
    assert_eq!(
        mapped(&json!({ "type": "integer", "enum": [1, 2, 4] })),
        json!({ "type": "INTEGER", "description": "One of: 1, 2, 4." })
    );
    assert_eq!(
        mapped(&json!({ "enum": [0.5, 1] })),
        json!({ "type": "NUMBER", "description": "One of: 0.5, 1." })
    );
    assert_eq!(
        mapped(&json!({ "enum": ["a", "b", null] })),
        json!({ "type": "STRING", "nullable": true, "enum": ["a", "b"] })
    );
    let many: Vec<u32> = (0..1_000).collect();
    let gemini = mapped(&json!({ "type": "integer", "enum": many }));
    let description = gemini["description"].as_str().unwrap();
    assert!(
        description.len() < 600 && description.ends_with(", …."),
        "{description}"
    );
}

#[test]
fn exclusive_bounds_are_closed_bounds_and_a_sentence() {
    assert_eq!(
        mapped(&json!({ "type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1 })),
        json!({
            "type": "NUMBER",
            "minimum": 0,
            "maximum": 1,
            "description": "Less than 1. Greater than 0.",
        })
    );
    // Draft 4: a flag on `minimum`.
    assert_eq!(
        mapped(&json!({ "type": "integer", "minimum": 5, "exclusiveMinimum": true })),
        json!({ "type": "INTEGER", "minimum": 5, "description": "Greater than 5." })
    );
}

#[test]
fn only_documented_formats_stay() {
    let gemini = mapped(&json!({
        "type": "object",
        "properties": {
            "at": { "type": "string", "format": "date-time" },
            "site": { "type": "string", "format": "uri", "description": "The page" },
            "n": { "type": "integer", "format": "uint32", "minimum": 0 },
            "big": { "type": "integer", "format": "int64" },
            "x": { "type": "number", "format": "double" },
        },
    }));
    assert_eq!(
        gemini["properties"],
        json!({
            "at": { "type": "STRING", "format": "date-time" },
            "site": { "type": "STRING", "description": "The page. Format: uri." },
            "n": { "type": "INTEGER", "minimum": 0 },
            "big": { "type": "INTEGER", "format": "int64" },
            "x": { "type": "NUMBER", "format": "double" },
        })
    );
}

#[test]
fn unsupported_keywords_are_dropped_or_told() {
    let gemini = mapped(&json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "urn:x",
        "$comment": "internal",
        "type": "object",
        "properties": {
            "tags": { "type": "array", "items": { "type": "string" }, "uniqueItems": true, "contains": { "const": "x" } },
            "env": { "type": "object", "additionalProperties": { "type": "string" } },
            "step": { "type": "number", "multipleOf": 0.5, "not": { "const": 1 } },
            "when": { "type": "string", "examples": ["today", "tomorrow"], "readOnly": true },
            "pair": { "type": "array", "prefixItems": [{ "type": "string" }, { "type": "integer" }] },
        },
        "additionalProperties": false,
        "patternProperties": { "^x-": { "type": "string" } },
        "if": { "required": ["tags"] },
        "then": { "required": ["env"] },
        "dependentRequired": { "tags": ["env"] },
    }));
    assert_eq!(
        gemini,
        json!({
            "type": "OBJECT",
            "description": "Keys matching `^x-` are allowed.",
            "properties": {
                "tags": { "type": "ARRAY", "items": { "type": "STRING" }, "description": "Its items are distinct." },
                "env": { "type": "OBJECT", "description": "Other keys are allowed, each with a string value." },
                "step": { "type": "NUMBER", "description": "A multiple of 0.5." },
                "when": { "type": "STRING", "example": "today" },
                "pair": {
                    "type": "ARRAY",
                    "items": { "anyOf": [{ "type": "STRING" }, { "type": "INTEGER" }] },
                    "description": "A list of 2 items in order: the first matches the first alternative of `items`, and so on.",
                },
            },
        })
    );
}

#[test]
fn what_has_no_type_gets_one() {
    assert_eq!(mapped(&json!({})), json!({ "type": "STRING" }));
    assert_eq!(mapped(&json!(true)), json!({ "type": "STRING" }));
    assert_eq!(
        mapped(&json!({ "type": "array" })),
        json!({ "type": "ARRAY", "items": { "type": "STRING" } })
    );
    assert_eq!(
        mapped(&json!({ "properties": { "a": {} } })),
        json!({ "type": "OBJECT", "properties": { "a": { "type": "STRING" } } })
    );
    assert_eq!(
        mapped(&json!({ "type": "any", "maximum": 3 })),
        json!({ "type": "NUMBER", "maximum": 3 })
    );
}

#[test]
fn empty_properties_required_without_property_and_misplaced_keywords_are_dropped() {
    assert_eq!(
        mapped(&json!({ "type": "object", "properties": {}, "required": ["ghost"] })),
        json!({ "type": "OBJECT" })
    );
    assert_eq!(
        mapped(
            &json!({ "type": "integer", "minLength": 1, "items": { "type": "string" }, "enum": ["1"] })
        ),
        json!({ "type": "INTEGER" })
    );
}

#[test]
fn schemas_from_schemars_map_cleanly() {
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    enum Mode {
        Fast,
        Careful { retries: u8 },
    }
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Args {
        /// Where.
        path: String,
        limit: Option<u32>,
        mode: Mode,
        weights: std::collections::HashMap<String, f64>,
        pair: (String, i64),
    }
    let gemini = mapped(&parameters_schema::<Args>());
    assert_eq!(gemini["properties"]["limit"]["nullable"], true);
    assert_eq!(
        gemini["properties"]["mode"]["anyOf"][0]["enum"],
        json!(["Fast"])
    );
}

#[test]
fn ten_thousand_nested_levels_neither_overflow_nor_pass_the_depth_bound() {
    let shapes: [fn(Value) -> Value; 6] = [
        |inner| {
            object([
                ("type", json!("object")),
                ("properties", object([("a", inner)])),
            ])
        },
        |inner| object([("type", json!("array")), ("items", inner)]),
        |inner| {
            object([(
                "anyOf",
                Value::Array(vec![inner, json!({ "type": "null" })]),
            )])
        },
        |inner| object([("allOf", Value::Array(vec![inner]))]),
        |inner| {
            object([
                ("type", json!("string")),
                ("default", object([("deeper", inner)])),
            ])
        },
        |inner| {
            object([(
                "enum",
                Value::Array(vec![json!(1), Value::Array(vec![inner])]),
            )])
        },
    ];
    for shape in shapes {
        let schema = nested(10_000, shape);
        let gemini = mapped(&schema);
        assert!(depth(&gemini) < 120, "{}", depth(&gemini));
        drop_flat(schema);
    }
}

#[test]
fn a_chain_of_ten_thousand_refs_is_cut() {
    let mut defs = serde_json::Map::new();
    for level in 0..10_000 {
        defs.insert(
            format!("d{level}"),
            json!({ "$ref": format!("#/$defs/d{}", level + 1) }),
        );
    }
    let gemini = mapped(&json!({ "$ref": "#/$defs/d0", "$defs": defs }));
    assert_eq!(
        gemini,
        json!({ "type": "STRING", "description": "Not expanded: nested too deep." })
    );
}

#[test]
fn anything_that_is_not_a_schema_maps_without_panicking() {
    let odd = [
        json!(null),
        json!(3),
        json!("object"),
        json!([{ "type": "string" }]),
        json!({ "type": 7, "properties": [], "required": "a", "items": 3, "anyOf": {}, "enum": "x" }),
        json!({ "$ref": 5, "allOf": "x", "oneOf": [1, null], "minLength": -1, "maxItems": 1.5 }),
        json!({ "type": [], "nullable": "yes", "const": null }),
        json!({ "anyOf": [] }),
        json!({ "anyOf": [{ "type": "null" }] }),
        json!({ "$ref": "#/$defs/~1odd~0name", "$defs": { "/odd~name": { "type": "boolean" } } }),
        json!({ "$ref": "https://example.com/schema.json" }),
    ];
    for schema in odd {
        mapped(&schema);
    }
    assert_eq!(
        mapped(
            &json!({ "$ref": "#/$defs/~1odd~0name", "$defs": { "/odd~name": { "type": "boolean" } } })
        ),
        json!({ "type": "BOOLEAN" })
    );
}

#[test]
fn the_check_refuses_what_gemini_refuses() {
    let refused = [
        json!({ "$schema": "x", "type": "object" }),
        json!({ "$ref": "#/$defs/A" }),
        json!({ "type": "object", "additionalProperties": false }),
        json!({ "oneOf": [{ "type": "string" }] }),
        json!({ "allOf": [{ "type": "string" }] }),
        json!({ "not": { "type": "string" } }),
        json!({ "type": "string", "const": "a" }),
        json!({ "type": ["string", "null"] }),
        json!({ "type": "null" }),
        json!({ "type": "number", "exclusiveMinimum": 0 }),
        json!({ "type": "string", "examples": ["a"] }),
        json!({ "type": "integer", "enum": [1, 2] }),
        json!({ "type": "string", "format": "uri" }),
        json!({ "type": "integer", "format": "uint32" }),
        json!({ "type": "object", "properties": {} }),
        json!({ "type": "array" }),
        json!({ "type": "string", "properties": { "a": { "type": "string" } } }),
        json!({ "type": "object", "properties": { "a": { "type": "string" } }, "required": ["b"] }),
        json!({ "description": "no type" }),
        json!({ "type": "object", "properties": { "a": { "type": "string", "if": {} } } }),
        json!({ "type": "array", "items": { "type": "array" } }),
        json!({ "anyOf": [{ "type": "string" }, { "type": "unknown" }] }),
    ];
    for schema in refused {
        assert!(
            !gemini_schema_problems(&schema).is_empty(),
            "accepted {schema}"
        );
    }
    let deep = nested(10_000, |inner| {
        object([("type", json!("array")), ("items", inner)])
    });
    let problems = gemini_schema_problems(&deep);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].ends_with("/items: nested deeper than 64 levels"));
    drop_flat(deep);
}

#[test]
fn a_wide_schema_is_cut_past_the_budget_and_its_alternatives_are_not_multiplied() {
    let properties: serde_json::Map<String, Value> = (0..5_000)
        .map(|index| (format!("p{index}"), json!({ "type": "integer" })))
        .collect();
    let branches: Vec<Value> = (0..1_000)
        .map(|index| json!({ "required": [format!("p{index}")] }))
        .collect();
    let gemini = mapped(&json!({
        "type": "object",
        "properties": properties,
        "anyOf": branches,
    }));
    assert_eq!(gemini["properties"]["p0"], json!({ "type": "INTEGER" }));
    assert_eq!(
        gemini["properties"]["p4999"],
        json!({ "type": "INTEGER", "description": "Not expanded: the schema is too large." })
    );
    assert_eq!(
        gemini["description"],
        "It must also match one of several alternatives, not shown."
    );
    assert!(size(&gemini) < 50_000, "{}", size(&gemini));
}
