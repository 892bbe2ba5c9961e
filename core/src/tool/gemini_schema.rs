//! Tool schemas in the subset of OpenAPI 3.0 that Gemini's function declarations accept.
//!
//! Gemini reads a function's `parameters` as its own `Schema` message, not as JSON Schema: one
//! `type` (no list, no `null`), `nullable`, string-only `enum`, `anyOf`, and a short list of
//! bounds; an unknown keyword (`$ref`, `const`, `additionalProperties`, `$schema`) fails the
//! whole request. MCP servers and `schemars` write full JSON Schema, so a Gemini provider maps
//! every tool schema with [`gemini_schema`]; [`gemini_schema_problems`] says what Gemini would
//! refuse in a schema.

mod draft;
mod problems;
mod values;

use serde_json::{Map, Value};

use draft::Draft;
pub use problems::gemini_schema_problems;
use values::{bounded_copy, read_const, read_enum, read_exclusive_bound};

/// How deep schemas nest in the result; deeper ones are cut (see [`gemini_schema`]).
const MAX_DEPTH: usize = 32;
/// How many schemas are read in all (a bound on work and on the result's size, which `$ref`s
/// could otherwise make exponential).
const MAX_SCHEMAS: usize = 2_000;
/// How many times one `$ref` is expanded inside itself (a recursive type) before it is cut.
const MAX_EXPANSIONS: usize = 2;

/// The JSON schema `schema` mapped to the subset of OpenAPI 3.0 that Gemini's function
/// declarations (`parameters`) accept, as faithfully as the subset allows.
///
/// - `$ref`s to the same document (`#/$defs/…`, `#/definitions/…`, any `#/…` pointer) are
///   inlined; a recursive one is expanded twice, then cut (below). `$ref`s elsewhere are cut.
/// - `"type": [T, "null"]` and `anyOf: [S, {"type": "null"}]` become `nullable: true`; a list
///   of several types becomes `anyOf`, one branch per type, each with that type's keywords.
/// - `oneOf` becomes `anyOf`; `allOf`, and the keywords beside a `$ref`, are merged into one
///   schema (properties and `required` joined); the keywords beside an `anyOf` go into each
///   branch, its description stays outside.
/// - `const` becomes a one-value `enum` for a string; other `enum`s and `const`s, which
///   Gemini cannot list (it takes strings only), are told in the description ("One of: 1, 2.")
///   and the type stays, so the model still sends numbers.
/// - `exclusiveMinimum` and `exclusiveMaximum` become `minimum` and `maximum` (the bound
///   itself then passes) and a sentence in the description; `multipleOf`, `uniqueItems`, a
///   string `format` Gemini does not know (`uri`, `email`), a value schema under
///   `additionalProperties` and `patternProperties` are told there too. Tuples
///   (`prefixItems`) become `items` with one `anyOf` branch per position, and a sentence.
/// - A schema without a type gets the one its keywords imply, else STRING (Gemini wants a
///   type, and a string is among the values an untyped schema accepts); an ARRAY without
///   `items` gets STRING items; an OBJECT's empty `properties` and `required` names without a
///   property are dropped; keywords on the wrong type (`minLength` on a number) are dropped.
/// - Types are written in Gemini's spelling (`"STRING"`).
///
/// What is lost: `not`, `if`/`then`/`else`, `dependentRequired`, `propertyNames`, `contains`,
/// `$comment`, `readOnly`, `deprecated` and other keywords outside the subset are dropped
/// without a word (`additionalProperties: false`, Gemini's default, needs none), and so are
/// the number formats Gemini does not know (`uint32`: the bounds say it) and a `default`
/// or `example` nested deeper than 16 levels or larger than 1 000 values. What the
/// description tells, Gemini does not enforce. A recursive schema is cut after two
/// expansions, a schema nested deeper than 32 levels (a `$ref` counts as one) and the schemas
/// past the 2 000th are cut: a cut schema keeps its type (an OBJECT without properties, an
/// ARRAY of strings) and its description says that it was cut. Hostile input costs work in
/// proportion to its size and a bounded stack (no recursion follows the input's depth), and
/// the result is bounded.
///
/// ```
/// use hookchain::tool::{gemini_schema, gemini_schema_problems};
/// use serde_json::json;
///
/// let mcp = json!({
///     "$schema": "http://json-schema.org/draft-07/schema#",
///     "type": "object",
///     "properties": {
///         "path": { "type": "string", "format": "uri" },
///         "depth": { "type": ["integer", "null"], "exclusiveMinimum": 0 },
///         "mode": { "const": "fast" },
///         "owner": { "$ref": "#/$defs/Person" },
///     },
///     "required": ["path"],
///     "additionalProperties": false,
///     "$defs": { "Person": { "type": "object", "properties": { "name": { "type": "string" } } } },
/// });
/// let gemini = gemini_schema(&mcp);
/// assert_eq!(
///     gemini,
///     json!({
///         "type": "OBJECT",
///         "properties": {
///             "path": { "type": "STRING", "description": "Format: uri." },
///             "depth": {
///                 "type": "INTEGER",
///                 "nullable": true,
///                 "minimum": 0,
///                 "description": "Greater than 0.",
///             },
///             "mode": { "type": "STRING", "enum": ["fast"] },
///             "owner": { "type": "OBJECT", "properties": { "name": { "type": "STRING" } } },
///         },
///         "required": ["path"],
///     })
/// );
/// assert!(gemini_schema_problems(&gemini).is_empty());
/// ```
#[must_use]
pub fn gemini_schema(schema: &Value) -> Value {
    let mut reader = Reader {
        root: schema,
        budget: MAX_SCHEMAS,
        expanding: Vec::new(),
    };
    Value::Object(reader.read(schema, 0).finish())
}

/// Reads a JSON schema into a [`Draft`], within the bounds.
struct Reader<'a> {
    /// The document `#/…` references point into.
    root: &'a Value,
    /// How many more schemas may be read.
    budget: usize,
    /// The `$ref`s being expanded, outermost first.
    expanding: Vec<&'a str>,
}

impl<'a> Reader<'a> {
    /// Reads `schema`, `depth` levels below the top.
    fn read(&mut self, schema: &'a Value, depth: usize) -> Draft {
        if depth > MAX_DEPTH {
            return cut(schema, "Not expanded: nested too deep.");
        }
        if self.budget == 0 {
            return cut(schema, "Not expanded: the schema is too large.");
        }
        self.budget -= 1;
        // `true`, `{}` and what is not a schema accept anything.
        let Value::Object(object) = schema else {
            return Draft::default();
        };
        let mut draft = Draft::default();
        for (key, value) in object {
            self.read_keyword(&mut draft, object, key, value, depth);
        }
        if let Some(Value::String(reference)) = object.get("$ref") {
            let target = self.follow(reference, depth);
            draft.absorb(target);
        }
        if let Some(Value::Array(members)) = object.get("allOf") {
            for member in members {
                let member = self.read(member, depth + 1);
                draft.absorb(member);
            }
        }
        if draft.branches.is_some() {
            let cost = draft.shape_size() * draft.branches.as_ref().map_or(0, Vec::len);
            if cost <= self.budget {
                self.budget -= cost;
                draft.distribute_shape();
            } else {
                draft.branches = None;
                draft
                    .notes
                    .push("It must also match one of several alternatives, not shown.".to_owned());
            }
        }
        draft
    }

    /// Reads one keyword of `object` into `draft`.
    fn read_keyword(
        &mut self,
        draft: &mut Draft,
        object: &'a Map<String, Value>,
        key: &str,
        value: &'a Value,
        depth: usize,
    ) {
        match (key, value) {
            ("type", Value::String(name)) => {
                draft.add_type(name);
                draft.only_null = name.eq_ignore_ascii_case("null");
            }
            ("type", Value::Array(names)) => {
                names
                    .iter()
                    .filter_map(Value::as_str)
                    .for_each(|name| draft.add_type(name));
                draft.only_null = draft.types.is_empty() && draft.nullable;
            }
            ("nullable", Value::Bool(true)) => draft.nullable = true,
            ("title" | "description" | "pattern" | "format", Value::String(_))
            | ("minimum" | "maximum", Value::Number(_)) => {
                draft.fields.insert(key.to_owned(), value.clone());
            }
            (
                "minLength" | "maxLength" | "minItems" | "maxItems" | "minProperties"
                | "maxProperties",
                Value::Number(count),
            ) => {
                if let Some(count) = count.as_u64() {
                    draft.fields.insert(key.to_owned(), Value::from(count));
                }
            }
            ("default" | "example", value) => {
                if let Some(value) = bounded_copy(value) {
                    draft.fields.insert(key.to_owned(), value);
                }
            }
            ("examples", Value::Array(examples)) => {
                if let Some(first) = examples.first().and_then(bounded_copy) {
                    draft.fields.entry("example").or_insert(first);
                }
            }
            ("enum", Value::Array(values)) => read_enum(draft, values),
            ("const", value) => read_const(draft, value),
            ("exclusiveMinimum" | "exclusiveMaximum", bound) => {
                read_exclusive_bound(draft, object, key, bound);
            }
            ("multipleOf", Value::Number(step)) => {
                draft.notes.push(format!("A multiple of {step}."))
            }
            ("uniqueItems", Value::Bool(true)) => {
                draft.notes.push("Its items are distinct.".to_owned())
            }
            ("properties", Value::Object(properties)) => {
                let mut mapped = Map::new();
                for (name, schema) in properties {
                    let schema = self.read(schema, depth + 1).finish();
                    mapped.insert(name.clone(), Value::Object(schema));
                }
                draft.fields.insert(key.to_owned(), Value::Object(mapped));
            }
            ("required", Value::Array(names)) => {
                let names = names
                    .iter()
                    .filter(|name| name.is_string())
                    .cloned()
                    .collect();
                draft.fields.insert(key.to_owned(), Value::Array(names));
            }
            ("items", Value::Object(_) | Value::Bool(_)) => {
                let items = self.read(value, depth + 1).finish();
                draft.fields.insert(key.to_owned(), Value::Object(items));
            }
            ("items" | "prefixItems", Value::Array(positions)) => {
                self.read_tuple(draft, positions, depth);
            }
            ("additionalProperties", Value::Object(_)) => {
                let note = match peek_types(value).first() {
                    Some(ty) => format!(
                        "Other keys are allowed, each with a{} {ty} value.",
                        article(ty)
                    ),
                    None => "Other keys are allowed.".to_owned(),
                };
                draft.notes.push(note);
            }
            ("patternProperties", Value::Object(patterns)) => {
                for pattern in patterns.keys().take(3) {
                    draft
                        .notes
                        .push(format!("Keys matching `{pattern}` are allowed."));
                }
            }
            ("anyOf" | "oneOf", Value::Array(members)) => {
                if draft.branches.is_some() {
                    draft.notes.push(
                        "It must also match a second list of alternatives, not shown.".to_owned(),
                    );
                    return;
                }
                let branches = members
                    .iter()
                    .map(|member| self.read(member, depth + 1))
                    .collect();
                draft.branches = Some(branches);
            }
            // `$ref` and `allOf` are read after the other keywords (theirs lose); the rest is
            // outside the subset and dropped.
            _ => {}
        }
    }

    /// Reads a tuple (`prefixItems`, or draft 4's `items` list) as `items` with one branch per
    /// position, unless an `items` schema says more.
    fn read_tuple(&mut self, draft: &mut Draft, positions: &'a [Value], depth: usize) {
        if positions.is_empty() || draft.fields.contains_key("items") {
            return;
        }
        let branches = positions
            .iter()
            .map(|position| self.read(position, depth + 1))
            .collect();
        let items = Draft {
            branches: Some(branches),
            ..Draft::default()
        };
        draft
            .fields
            .insert("items".to_owned(), Value::Object(items.finish()));
        draft.add_type("array");
        if positions.len() > 1 {
            draft.notes.push(format!(
                "A list of {} items in order: the first matches the first alternative of `items`, and so on.",
                positions.len()
            ));
        }
    }

    /// Reads the target of a `$ref`, or cuts it (recursive too often, or not in the document).
    fn follow(&mut self, reference: &'a str, depth: usize) -> Draft {
        let target = reference
            .strip_prefix('#')
            .and_then(|pointer| self.root.pointer(pointer));
        let Some(target) = target else {
            return Draft::with_note(Vec::new(), format!("Follows the schema `{reference}`."));
        };
        let expansions = self
            .expanding
            .iter()
            .filter(|seen| **seen == reference)
            .count();
        if expansions >= MAX_EXPANSIONS {
            let why = match reference.rsplit_once('/') {
                Some((_, name)) => format!("Not expanded: the recursive `{name}` again."),
                None => "Not expanded: the whole schema again.".to_owned(),
            };
            return cut(target, &why);
        }
        self.expanding.push(reference);
        let draft = self.read(target, depth + 1);
        self.expanding.pop();
        draft
    }
}

/// A schema not read further: its own type (read without following anything) and `why`.
fn cut(schema: &Value, why: &str) -> Draft {
    Draft::with_note(peek_types(schema), why.to_owned())
}

/// The types `schema` says it has, or its properties imply, without reading further.
fn peek_types(schema: &Value) -> Vec<&'static str> {
    let mut draft = Draft::default();
    match schema.get("type") {
        Some(Value::String(name)) => draft.add_type(name),
        Some(Value::Array(names)) => names
            .iter()
            .filter_map(Value::as_str)
            .for_each(|name| draft.add_type(name)),
        _ if schema.get("properties").is_some() => draft.add_type("object"),
        _ => {}
    }
    draft.types
}

/// "a" or "an" before a type's name.
fn article(ty: &str) -> &'static str {
    if ty.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "n"
    } else {
        ""
    }
}
