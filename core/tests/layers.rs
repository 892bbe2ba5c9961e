//! The core's layers, kept: each module may import from the modules below it, never from one
//! above (see "How the crate is built" in the crate docs). Any import that goes up a layer fails
//! this test: move the item down to the layer that owns it, or import it from below. There is
//! no list of exceptions; the last ones (the debt the layering started with) were paid.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The modules of `core/src`, bottom up: a module imports from those before it.
const LAYERS: &[&str] = &[
    // Foundations.
    "ids",
    "shared",
    "lock",
    "files",
    "config",
    "report",
    "hook",
    // Messages; models.
    "message",
    "model",
    // A paused run's values and its keeping.
    "pause",
    // What a run emits and returns.
    "run",
    // A run's context; tools.
    "context",
    "tool",
    // Interrupts (the face), threads kept.
    "interrupt",
    "thread",
    "thread_store",
    // Who asks: the authorizer servers call (a principal, over a request's head).
    "auth",
    // The run's error.
    "error",
    // Middleware and chains, and the telemetry of a chain's hooks.
    "middleware",
    "chain",
    "private",
    "telemetry",
    // The agent.
    "agent",
    "subagent",
    "plugin",
    // The built-in library.
    "builtin",
];

/// The module of `crate::<name>`: `__private` is the `private` module; an item the crate root
/// re-exports (`crate::Message`) is its module's (read from `lib.rs`'s `pub use` statements).
fn module_of(name: &str, root: &str) -> String {
    if name == "__private" {
        return "private".to_owned();
    }
    if !name.starts_with(|c: char| c.is_ascii_uppercase()) {
        return name.to_owned();
    }
    root.split(';')
        .filter_map(|statement| statement.trim().strip_prefix("pub use "))
        .find(|path| {
            path.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .any(|word| word == name)
        })
        .and_then(|path| path.split("::").next())
        .unwrap_or(name)
        .to_owned()
}

fn rank(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| *layer == module)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read the source directory") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
}

/// `source` with its comments and the insides of its string and character literals blanked
/// out (newlines kept): a doc link or a message naming a higher layer is not an import.
fn code_of(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut code = String::with_capacity(source.len());
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let mut at = 0;
    while at < chars.len() {
        let c = chars[at];
        let next = chars.get(at + 1).copied();
        if c == '/' && next == Some('/') {
            while at < chars.len() && chars[at] != '\n' {
                at += 1;
            }
        } else if c == '/' && next == Some('*') {
            // Block comments nest.
            let mut depth = 0;
            while at < chars.len() {
                if chars[at] == '/' && chars.get(at + 1) == Some(&'*') {
                    depth += 1;
                    at += 2;
                } else if chars[at] == '*' && chars.get(at + 1) == Some(&'/') {
                    depth -= 1;
                    at += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    code.push(blank(chars[at]));
                    at += 1;
                }
            }
        } else if c == 'r'
            && matches!(next, Some('"' | '#'))
            && !chars[..at]
                .last()
                .is_some_and(|c| c.is_alphanumeric() || *c == '_')
        {
            // A raw string: r"…", r#"…"#.
            let hashes = chars[at + 1..].iter().take_while(|c| **c == '#').count();
            if chars.get(at + 1 + hashes) != Some(&'"') {
                code.push(c);
                at += 1;
                continue;
            }
            at += hashes + 2;
            code.push_str("\"\"");
            while at < chars.len() {
                if chars[at] == '"' && chars[at + 1..].iter().take(hashes).all(|c| *c == '#') {
                    at += 1 + hashes;
                    break;
                }
                code.push(blank(chars[at]));
                at += 1;
            }
        } else if c == '"' {
            code.push_str("\"\"");
            at += 1;
            while at < chars.len() && chars[at] != '"' {
                if chars[at] == '\\' {
                    code.push(' ');
                    at += 1;
                }
                if let Some(&c) = chars.get(at) {
                    code.push(blank(c));
                }
                at += 1;
            }
            at += 1;
        } else if c == '\'' && (next == Some('\\') || chars.get(at + 2) == Some(&'\'')) {
            // A character literal ('{', '\n', '\''), not a lifetime ('a).
            let end = if next == Some('\\') {
                chars[at + 3..]
                    .iter()
                    .position(|c| *c == '\'')
                    .map(|p| at + 3 + p)
            } else {
                Some(at + 2)
            };
            let end = end.unwrap_or(chars.len() - 1);
            code.push_str("' '");
            at = end + 1;
        } else {
            code.push(c);
            at += 1;
        }
    }
    code
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The first segments of the paths that `rest` starts with: `a::X` gives `a`, a group
/// `{a::X, b, c::{d, e}}` gives `a`, `b` and `c`.
fn first_segments(rest: &str) -> Vec<String> {
    let rest = rest.trim_start();
    if let Some(group) = rest.strip_prefix('{') {
        let mut names = Vec::new();
        let mut depth = 0;
        let mut item_start = true;
        for (at, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => break,
                '}' => depth -= 1,
                ',' if depth == 0 => item_start = true,
                c if c.is_whitespace() => {}
                _ if item_start && depth == 0 => {
                    item_start = false;
                    let name: String = group[at..].chars().take_while(|c| is_ident(*c)).collect();
                    if !name.is_empty() && name != "self" {
                        names.push(name);
                    }
                }
                _ => {}
            }
        }
        names
    } else {
        let name: String = rest.chars().take_while(|c| is_ident(*c)).collect();
        if name.is_empty() {
            Vec::new()
        } else {
            vec![name]
        }
    }
}

/// The top-level modules `source` names: by `crate::<module>` (or `$crate::`), by a group
/// `crate::{a::X, Y}` (each of its paths, nested groups too), and by `super::` paths that climb
/// out of the file's top-level module (`depth` is how deep the file's module is: 1 for
/// `x.rs` and `x/mod.rs`, 2 for `x/y.rs`; a `mod m { … }` inside adds one). Comments and
/// literals are left out.
fn named_modules(source: &str, root: &str, depth: usize) -> BTreeSet<String> {
    let code = code_of(source);
    let mut named = BTreeSet::new();
    // The braces at which inline modules were opened: each one deepens `super`.
    let mut inline: Vec<usize> = Vec::new();
    let mut braces = 0;
    let bytes = code.as_bytes();
    let mut at = 0;
    while at < code.len() {
        let c = bytes[at];
        let starts_word = at == 0 || !is_ident(char::from(bytes[at - 1]));
        if c == b'{' {
            braces += 1;
        } else if c == b'}' {
            braces -= 1;
            if inline.last() == Some(&braces) {
                inline.pop();
            }
        } else if starts_word && code[at..].starts_with("mod ") {
            let name_end = at + 4 + code[at + 4..].find(|c: char| !is_ident(c)).unwrap_or(0);
            if code[name_end..].trim_start().starts_with('{') {
                inline.push(braces);
            }
        } else if starts_word && code[at..].starts_with("crate::") {
            for name in first_segments(&code[at + "crate::".len()..]) {
                named.insert(module_of(&name, root));
            }
            at += "crate::".len();
            continue;
        } else if starts_word && code[at..].starts_with("super::") {
            let mut rest = &code[at..];
            let mut climbs = 0;
            while let Some(after) = rest.strip_prefix("super::") {
                climbs += 1;
                rest = after.trim_start();
            }
            if climbs >= depth + inline.len() {
                for name in first_segments(rest) {
                    named.insert(module_of(&name, root));
                }
            }
            at += "super::".len() * climbs;
            continue;
        }
        at += 1;
    }
    named
}

/// How deep the module of the file at `relative` (to `src`) is: `x.rs` and `x/mod.rs` are 1,
/// `x/y.rs` is 2.
fn depth_of(relative: &Path) -> usize {
    let parts = relative.components().count();
    if relative.file_name().is_some_and(|name| name == "mod.rs") {
        parts - 1
    } else {
        parts
    }
}

#[test]
fn imports_go_down_the_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let root = std::fs::read_to_string(src.join("lib.rs")).expect("read lib.rs");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut going_up = BTreeSet::new();
    let mut unlisted = BTreeSet::new();
    for file in &files {
        let relative = file.strip_prefix(&src).expect("under src");
        let first = relative
            .components()
            .next()
            .and_then(|part| part.as_os_str().to_str())
            .unwrap_or_default();
        let module = first.trim_end_matches(".rs");
        // The crate root wires the modules; a module's tests (`*tests.rs`) may use any layer.
        let test_only = file
            .file_name()
            .and_then(|name| name.to_str())
            .is_some_and(|name| name.ends_with("tests.rs"));
        if module == "lib" || test_only {
            continue;
        }
        let Some(from) = rank(module) else {
            unlisted.insert(module.to_owned());
            continue;
        };
        let source = std::fs::read_to_string(file).expect("read a source file");
        for named in named_modules(&source, &root, depth_of(relative)) {
            match rank(&named) {
                Some(to) if to > from => {
                    going_up.insert((module.to_owned(), named));
                }
                Some(_) => {}
                None => {
                    unlisted.insert(named);
                }
            }
        }
    }
    assert!(
        unlisted.is_empty(),
        "modules not in LAYERS (place each in its layer): {unlisted:?}"
    );
    assert!(
        going_up.is_empty(),
        "imports that go up a layer (import from below, or move the item down): {going_up:?}"
    );
}

#[test]
fn the_scan_finds_paths_and_skips_comments() {
    let root = "pub use agent::{Agent, RunOutput};\npub use shared::Shared;";
    let scan = |source: &str, depth: usize| -> Vec<String> {
        named_modules(source, root, depth).into_iter().collect()
    };
    // A path, a root re-export, `__private`; not a comment, a doc link, a string.
    let source = "use crate::agent::Agent; // crate::builtin\n/// [`x`](crate::tool::X)\nfn f() { crate::__private::g(crate::Shared::new(())) }\n/* crate::thread /* nested */ crate::plugin */ let s = \"crate::telemetry\"; let r = r#\"crate::chain\"#;";
    assert_eq!(scan(source, 1), ["agent", "private", "shared"]);
    // Grouped paths, over lines and nested; a word that ends in `crate` is not the crate.
    let grouped = "use crate::{\n    message::{Content, Message},\n    model::ModelRequest,\n    Agent, self,\n};\nuse my_crate::error::X;\nmacro_rules! m { () => { $crate::config::X } }";
    assert_eq!(scan(grouped, 1), ["agent", "config", "message", "model"]);
    // `super` climbs out of `x/y.rs` (depth 2) on its second step, and of `x.rs` on its first;
    // a character literal's brace and an inline module count as they should.
    let climbing = "use super::z::W;\nuse super::super::thread::T;\nuse super::super::{lock::L, files::F};\nconst C: char = '{';\nfn g<'a>(_: &'a str) {}";
    assert_eq!(scan(climbing, 2), ["files", "lock", "thread"]);
    assert_eq!(scan("use super::ids::Id;", 1), ["ids"]);
    let inline = "mod inner {\n    use super::super::ids::Id;\n}\nuse super::super::lock::L;";
    assert_eq!(scan(inline, 2), ["lock"]);
    assert_eq!(scan(inline, 1), ["ids", "lock"]);
}
