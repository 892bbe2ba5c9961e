//! What Gemini would refuse in a function's `parameters`: a check of the subset, independent of
//! the mapping (the tests run every mapped schema through it).

use serde_json::{Map, Value};

/// The keywords of Gemini's `Schema`, in JSON Schema's spelling.
const KEYWORDS: [&str; 22] = [
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "anyOf",
    "propertyOrdering",
    "default",
    "items",
    "minimum",
    "maximum",
];

/// How deep the check goes (a mapped schema nests at most 33 levels; a hostile one must not
/// cost a path string per level per schema).
const MAX_DEPTH: usize = 64;
/// How many problems are told before the rest is summed up.
const MAX_PROBLEMS: usize = 100;

/// What Gemini would refuse in `schema` as a function's `parameters`, one sentence per
/// problem, each starting with where (a JSON pointer, `#` being the top); empty when the
/// schema is within the subset [`gemini_schema`](super::gemini_schema) maps to.
///
/// The check is that subset, which is narrower than what every Gemini version accepts: each
/// schema has one `type` (STRING, NUMBER, INTEGER, BOOLEAN, ARRAY or OBJECT, either case) or
/// an `anyOf`; the keywords are Gemini's own, each on the types it applies to (`properties`
/// on an OBJECT, `items` on an ARRAY, which must have them, `minLength` on a STRING); `enum`
/// lists strings, on a STRING; `format`s are the documented ones (`date-time` and `enum`,
/// `float` and `double`, `int32` and `int64`); `required` names properties; an OBJECT's
/// `properties` are not empty.
///
/// ```
/// use hookchain::tool::gemini_schema_problems;
/// use serde_json::json;
///
/// let problems = gemini_schema_problems(&json!({
///     "type": "object",
///     "properties": { "id": { "type": ["string", "null"] } },
///     "additionalProperties": false,
/// }));
/// assert_eq!(
///     problems,
///     [
///         "#: Gemini does not know `additionalProperties`",
///         "#/properties/id: `type` must be one of Gemini's types, not [\"string\",\"null\"]",
///     ]
/// );
/// ```
#[must_use]
pub fn gemini_schema_problems(schema: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let mut stack = vec![(schema, "#".to_owned(), 0)];
    while let Some((schema, path, depth)) = stack.pop() {
        if depth > MAX_DEPTH {
            problems.push(format!("{path}: nested deeper than {MAX_DEPTH} levels"));
            continue;
        }
        let Value::Object(object) = schema else {
            problems.push(format!("{path}: a schema must be an object"));
            continue;
        };
        let mut children = Vec::new();
        check_schema(object, &path, &mut problems, &mut children);
        // Reversed, so that the problems come in the schema's order.
        for (child, child_path) in children.into_iter().rev() {
            stack.push((child, child_path, depth + 1));
        }
        if problems.len() > MAX_PROBLEMS {
            break;
        }
    }
    if problems.len() > MAX_PROBLEMS {
        problems.truncate(MAX_PROBLEMS);
        problems.push("and more".to_owned());
    }
    problems
}

/// Checks one schema object at `path`; its subschemas go to `children`.
fn check_schema<'a>(
    object: &'a Map<String, Value>,
    path: &str,
    problems: &mut Vec<String>,
    children: &mut Vec<(&'a Value, String)>,
) {
    let mut problem = |text: String| problems.push(format!("{path}: {text}"));
    for key in object.keys() {
        if !KEYWORDS.contains(&key.as_str()) {
            problem(format!("Gemini does not know `{key}`"));
        }
    }
    let ty = match object.get("type") {
        Some(Value::String(ty)) if is_gemini_type(ty) => Some(ty.to_ascii_lowercase()),
        Some(other) => {
            problem(format!("`type` must be one of Gemini's types, not {other}"));
            None
        }
        None => None,
    };
    let ty = ty.as_deref();
    match object.get("anyOf") {
        Some(Value::Array(branches)) if !branches.is_empty() => {
            for (index, branch) in branches.iter().enumerate() {
                children.push((branch, format!("{path}/anyOf/{index}")));
            }
        }
        Some(_) => problem("`anyOf` must be a list of schemas".to_owned()),
        None if !object.contains_key("type") => {
            problem("a schema needs a `type` or an `anyOf`".to_owned())
        }
        None => {}
    }
    let on = |keyword: &str, types: &[&str]| -> Option<String> {
        let misplaced = object.contains_key(keyword) && !ty.is_some_and(|ty| types.contains(&ty));
        misplaced.then(|| {
            format!(
                "`{keyword}` is only for {}",
                types.join(" or ").to_uppercase()
            )
        })
    };
    let placements: [(&str, &[&str]); 13] = [
        ("properties", &["object"]),
        ("required", &["object"]),
        ("minProperties", &["object"]),
        ("maxProperties", &["object"]),
        ("items", &["array"]),
        ("minItems", &["array"]),
        ("maxItems", &["array"]),
        ("minLength", &["string"]),
        ("maxLength", &["string"]),
        ("pattern", &["string"]),
        ("enum", &["string"]),
        ("minimum", &["number", "integer"]),
        ("maximum", &["number", "integer"]),
    ];
    for (keyword, types) in placements {
        if let Some(text) = on(keyword, types) {
            problem(text);
        }
    }
    for key in [
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "minProperties",
        "maxProperties",
    ] {
        if object
            .get(key)
            .is_some_and(|count| count.as_u64().is_none())
        {
            problem(format!("`{key}` must be a count"));
        }
    }
    for key in ["minimum", "maximum"] {
        if object.get(key).is_some_and(|bound| !bound.is_number()) {
            problem(format!("`{key}` must be a number"));
        }
    }
    for key in ["title", "description", "pattern"] {
        if object.get(key).is_some_and(|text| !text.is_string()) {
            problem(format!("`{key}` must be a string"));
        }
    }
    if object
        .get("nullable")
        .is_some_and(|flag| !flag.is_boolean())
    {
        problem("`nullable` must be true or false".to_owned());
    }
    match object.get("enum") {
        Some(Value::Array(values)) if !values.is_empty() && values.iter().all(Value::is_string) => {
        }
        Some(_) => problem("`enum` must list strings".to_owned()),
        None => {}
    }
    if let Some(format) = object.get("format") {
        let documented = matches!(
            (ty, format.as_str()),
            (Some("string"), Some("date-time" | "enum"))
                | (Some("number"), Some("float" | "double"))
                | (Some("integer"), Some("int32" | "int64"))
        );
        if !documented {
            problem(format!(
                "Gemini documents no format {format} on {}",
                ty.unwrap_or("this schema")
            ));
        }
    }
    match object.get("properties") {
        Some(Value::Object(properties)) if !properties.is_empty() => {
            for (name, property) in properties {
                children.push((property, format!("{path}/properties/{}", escape(name))));
            }
        }
        Some(_) => problem("`properties` must be a non-empty object of schemas".to_owned()),
        None => {}
    }
    let is_property = |name: &str| {
        object
            .get("properties")
            .and_then(Value::as_object)
            .is_some_and(|properties| properties.contains_key(name))
    };
    match object.get("required") {
        Some(Value::Array(names)) => {
            for name in names {
                if !name.as_str().is_some_and(is_property) {
                    problem(format!("`required` names {name}, which is not a property"));
                }
            }
        }
        Some(_) => problem("`required` must list names".to_owned()),
        None => {}
    }
    if let Some(Value::Array(names)) = object.get("propertyOrdering")
        && !names
            .iter()
            .all(|name| name.as_str().is_some_and(is_property))
    {
        problem("`propertyOrdering` must list properties".to_owned());
    }
    match (ty, object.get("items")) {
        (_, Some(items)) => children.push((items, format!("{path}/items"))),
        (Some("array"), None) => problem("an ARRAY needs `items`".to_owned()),
        _ => {}
    }
}

/// Whether `ty` is one of Gemini's types (the API takes either case).
fn is_gemini_type(ty: &str) -> bool {
    ["string", "number", "integer", "boolean", "array", "object"]
        .iter()
        .any(|known| known.eq_ignore_ascii_case(ty))
}

/// A property name as a JSON pointer segment.
fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}
