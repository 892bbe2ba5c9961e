//! A schema on its way into Gemini's subset: what has been read of it (its types, its
//! keywords already in Gemini's form, the notes for its description, its `anyOf` branches),
//! before it is written as one Gemini schema object.
//!
//! The reading (in the parent module) may meet one schema in several parts — its own keywords,
//! the target of its `$ref`, the members of its `allOf`, the parent of an `anyOf` branch — and
//! [`Draft::absorb`] merges them; [`Draft::finish`] then writes the object, keeping only the
//! keywords Gemini allows for its type (Gemini refuses `properties` on a STRING, `items` on
//! an OBJECT, and an ARRAY without `items`).

use serde_json::{Map, Value};

/// The JSON types Gemini knows, as JSON Schema names them (`null` is `nullable` instead).
pub(super) const TYPES: [&str; 6] = ["string", "number", "integer", "boolean", "array", "object"];

/// What Gemini accepts on a schema of the given JSON type, besides the keywords of every type.
fn keywords_of(ty: &str) -> &'static [&'static str] {
    match ty {
        "string" => &["enum", "format", "minLength", "maxLength", "pattern"],
        "number" | "integer" => &["format", "minimum", "maximum"],
        "array" => &["items", "minItems", "maxItems"],
        "object" => &["properties", "required", "minProperties", "maxProperties"],
        _ => &[],
    }
}

/// What a schema with `anyOf` keeps for itself rather than give its branches.
const OUTER_KEYWORDS: [&str; 3] = ["title", "description", "default"];

/// What Gemini accepts on a schema of any type.
const COMMON_KEYWORDS: [&str; 4] = ["title", "description", "default", "example"];

/// The formats Gemini documents, by type: any other is dropped (or told in the description).
fn format_is_supported(ty: &str, format: &str) -> bool {
    matches!(
        (ty, format),
        ("string", "date-time" | "enum")
            | ("number", "float" | "double")
            | ("integer", "int32" | "int64")
    )
}

/// One schema, read and not yet written.
#[derive(Debug, Default, Clone)]
pub(super) struct Draft {
    /// Its non-null JSON types, in order, each once; empty when the schema does not say.
    pub(super) types: Vec<&'static str>,
    /// Whether `null` is allowed (a `"null"` type, `nullable`, a `null` in `enum`).
    pub(super) nullable: bool,
    /// Whether the schema allows nothing but `null`.
    pub(super) only_null: bool,
    /// Keywords already in Gemini's form (`properties` and `items` hold finished schemas).
    pub(super) fields: Map<String, Value>,
    /// What the description must add for what Gemini cannot say (an exclusive bound, the
    /// values of a numeric enum), one sentence each.
    pub(super) notes: Vec<String>,
    /// The `anyOf` (or `oneOf`) branches, when the schema has them.
    pub(super) branches: Option<Vec<Draft>>,
    /// The type of the values an `enum` or `const` lists, for a schema that says no type.
    pub(super) hinted_type: Option<&'static str>,
}

impl Draft {
    /// A schema that says nothing but `notes` (a cut, a `$ref` outside the document).
    pub(super) fn with_note(types: Vec<&'static str>, note: String) -> Self {
        Self {
            types,
            notes: vec![note],
            ..Self::default()
        }
    }

    /// Adds the JSON type `name`, in JSON Schema's spelling or Gemini's (ignoring types Gemini
    /// does not know).
    pub(super) fn add_type(&mut self, name: &str) {
        if name.eq_ignore_ascii_case("null") {
            self.nullable = true;
        } else if let Some(known) = TYPES.iter().find(|known| known.eq_ignore_ascii_case(name))
            && !self.types.contains(known)
        {
            self.types.push(known);
        }
    }

    /// Merges `other` in, as both must hold (`allOf`, a `$ref` with keywords beside it):
    /// what `self` says wins, `properties` and `required` are joined, types are intersected.
    pub(super) fn absorb(&mut self, other: Draft) {
        let permits_null = |draft: &Draft| draft.nullable || draft.types.is_empty();
        self.nullable =
            (self.nullable || other.nullable) && permits_null(self) && permits_null(&other);
        self.types = match (self.types.is_empty(), other.types.is_empty()) {
            (true, _) => other.types,
            (false, true) => std::mem::take(&mut self.types),
            (false, false) => intersect(&self.types, &other.types),
        };
        self.only_null = self.only_null || other.only_null;
        self.hinted_type = self.hinted_type.or(other.hinted_type);
        for (key, value) in other.fields {
            match (key.as_str(), self.fields.get_mut(&key), value) {
                ("properties", Some(Value::Object(mine)), Value::Object(theirs)) => {
                    for (name, schema) in theirs {
                        mine.entry(name).or_insert(schema);
                    }
                }
                ("required", Some(Value::Array(mine)), Value::Array(theirs)) => {
                    for name in theirs {
                        if !mine.contains(&name) {
                            mine.push(name);
                        }
                    }
                }
                (_, Some(_), _) => {}
                (_, None, value) => {
                    self.fields.insert(key, value);
                }
            }
        }
        self.notes.extend(other.notes);
        match (&mut self.branches, other.branches) {
            (None, branches) => self.branches = branches,
            (Some(_), Some(_)) => self
                .notes
                .push("It must also match a second list of alternatives, not shown.".to_owned()),
            (Some(_), None) => {}
        }
    }

    /// Writes the Gemini schema object.
    pub(super) fn finish(mut self) -> Map<String, Value> {
        if let Some(branches) = self.branches.take() {
            return self.finish_union(branches);
        }
        if self.types.len() > 1 {
            // `"type": ["string", "integer"]`: one branch per type, each with its keywords.
            let branches = self
                .types
                .iter()
                .map(|ty| Draft {
                    types: vec![ty],
                    ..Draft::default()
                })
                .collect();
            self.branches = Some(branches);
            self.distribute_shape();
            let branches = self.branches.take().unwrap_or_default();
            return self.finish_union(branches);
        }
        let ty = self
            .types
            .first()
            .copied()
            .unwrap_or_else(|| self.inferred_type());
        let mut out = Map::new();
        out.insert("type".to_owned(), Value::String(ty.to_ascii_uppercase()));
        if self.nullable || self.only_null {
            out.insert("nullable".to_owned(), Value::Bool(true));
        }
        for (key, value) in std::mem::take(&mut self.fields) {
            if key == "format" {
                self.keep_format(ty, value, &mut out);
            } else if COMMON_KEYWORDS.contains(&key.as_str()) || keywords_of(ty).contains(&&*key) {
                out.insert(key, value);
            }
        }
        tidy_object(&mut out);
        if ty == "array" && !out.contains_key("items") {
            // Gemini refuses an ARRAY without `items`; strings are a part of "anything".
            out.insert("items".to_owned(), serde_json::json!({ "type": "STRING" }));
        }
        self.write_notes(&mut out);
        out
    }

    /// Gives each branch the parent's types and keywords it does not have itself (JSON
    /// Schema's `{type, properties, anyOf}` means "this and one of those"; Gemini wants the
    /// shape in the branches).
    pub(super) fn distribute_shape(&mut self) {
        let Some(branches) = &mut self.branches else {
            return;
        };
        let mut shape = Draft {
            types: self.types.clone(),
            fields: self.fields.clone(),
            hinted_type: self.hinted_type,
            ..Draft::default()
        };
        for key in OUTER_KEYWORDS {
            shape.fields.remove(key);
        }
        for branch in branches {
            branch.absorb(shape.clone());
        }
    }

    /// The size of the shape [`distribute_shape`](Self::distribute_shape) copies into each
    /// branch, in JSON values.
    pub(super) fn shape_size(&self) -> usize {
        let mut size = 0;
        let mut stack: Vec<&Value> = self.fields.values().collect();
        while let Some(value) = stack.pop() {
            size += 1;
            match value {
                Value::Array(items) => stack.extend(items),
                Value::Object(object) => stack.extend(object.values()),
                _ => {}
            }
        }
        size
    }

    /// Writes a schema with `anyOf`: the parent keeps its description (its shape is already
    /// in the branches), and `null` branches become `nullable`.
    fn finish_union(mut self, branches: Vec<Draft>) -> Map<String, Value> {
        let mut outer = Map::new();
        for key in OUTER_KEYWORDS {
            if let Some(value) = self.fields.remove(key) {
                outer.insert(key.to_owned(), value);
            }
        }
        let mut nullable = self.nullable;
        let mut kept = Vec::new();
        for mut branch in branches {
            if branch.only_null {
                nullable = true;
                continue;
            }
            nullable |= branch.nullable;
            branch.nullable = false;
            kept.push(branch);
        }
        if kept.is_empty() {
            // Only `null` (or nothing) is allowed: Gemini has no such type.
            self.only_null = true;
            self.fields = outer;
            return self.finish();
        }
        if kept.len() == 1 {
            let mut only = kept.remove(0);
            only.nullable = nullable;
            for (key, value) in outer {
                only.fields.insert(key, value);
            }
            only.notes.splice(0..0, self.notes);
            return only.finish();
        }
        let any_of = kept
            .into_iter()
            .map(|branch| Value::Object(branch.finish()))
            .collect();
        outer.insert("anyOf".to_owned(), Value::Array(any_of));
        if nullable {
            outer.insert("nullable".to_owned(), Value::Bool(true));
        }
        self.write_notes(&mut outer);
        outer
    }

    /// The type of a schema that does not say one: what its keywords are about, else STRING.
    /// (A schema without a type takes any value; Gemini wants a type, and strings are among
    /// the values the tool takes.)
    fn inferred_type(&self) -> &'static str {
        let has = |keys: &[&str]| keys.iter().any(|key| self.fields.contains_key(*key));
        if let Some(hinted) = self.hinted_type {
            hinted
        } else if has(&["properties", "required", "minProperties", "maxProperties"]) {
            "object"
        } else if has(&["items", "minItems", "maxItems"]) {
            "array"
        } else if has(&["minimum", "maximum"]) {
            "number"
        } else {
            "string"
        }
    }

    /// Keeps a format Gemini documents for `ty`; tells any other string format in the
    /// description (an `email` or `uri` helps the model); drops the number formats
    /// (`uint32`: the bounds say it).
    fn keep_format(&mut self, ty: &str, format: Value, out: &mut Map<String, Value>) {
        let Value::String(name) = format else { return };
        if format_is_supported(ty, &name) {
            out.insert("format".to_owned(), Value::String(name));
        } else if ty == "string" {
            self.notes.push(format!("Format: {name}."));
        }
    }

    /// Appends the notes to the description.
    fn write_notes(&self, out: &mut Map<String, Value>) {
        if self.notes.is_empty() {
            return;
        }
        let mut text = match out.get("description") {
            Some(Value::String(description)) if !description.is_empty() => {
                let mut text = description.clone();
                if !text.ends_with(['.', '!', '?', '\n']) {
                    text.push('.');
                }
                text.push(' ');
                text
            }
            _ => String::new(),
        };
        text.push_str(&self.notes.join(" "));
        out.insert("description".to_owned(), Value::String(text));
    }
}

/// Drops what Gemini refuses on an OBJECT: empty `properties` (some versions refuse them) and
/// `required` names without a property.
fn tidy_object(out: &mut Map<String, Value>) {
    let names: Vec<String> = match out.get("properties") {
        Some(Value::Object(properties)) if !properties.is_empty() => {
            properties.keys().cloned().collect()
        }
        _ => {
            out.remove("properties");
            Vec::new()
        }
    };
    if let Some(Value::Array(required)) = out.get_mut("required") {
        required.retain(|name| {
            name.as_str()
                .is_some_and(|name| names.iter().any(|n| n == name))
        });
        if required.is_empty() {
            out.remove("required");
        }
    }
}

/// The types in both lists (an integer is a number).
fn intersect(mine: &[&'static str], theirs: &[&'static str]) -> Vec<&'static str> {
    let both: Vec<&'static str> =
        mine.iter()
            .copied()
            .filter(|ty| theirs.contains(ty) || (*ty == "integer" && theirs.contains(&"number")))
            .chain(
                theirs.iter().copied().filter(|ty| {
                    *ty == "integer" && mine.contains(&"number") && !mine.contains(ty)
                }),
            )
            .collect();
    if both.is_empty() { mine.to_vec() } else { both }
}
