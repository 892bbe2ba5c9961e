//! The core's layers, kept: each module may import from the modules below it (see "How the
//! crate is built" in the crate docs), and the imports that still go up are listed here, one by
//! one, as debt. A new upward import fails this test; so does a listed one that is gone (strike
//! it from the list, so that it cannot come back unnoticed).

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

/// The imports that still go up a layer (`from -> to`): each one to be removed.
const GOING_UP: &[(&str, &str)] = &[];

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

/// The top-level modules `source` names as `crate::<module>`, comments left out (a doc link
/// to a higher layer is not an import).
fn named_modules(source: &str, root: &str) -> BTreeSet<String> {
    let mut named = BTreeSet::new();
    for line in source.lines() {
        let code = line.split("//").next().unwrap_or_default();
        for (at, _) in code.match_indices("crate::") {
            let rest = &code[at + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                named.insert(module_of(&name, root));
            }
        }
    }
    named
}

#[test]
fn imports_go_down_the_layers_but_for_the_listed_debt() {
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
        for named in named_modules(&source, &root) {
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
    let listed: BTreeSet<(String, String)> = GOING_UP
        .iter()
        .map(|(from, to)| ((*from).to_owned(), (*to).to_owned()))
        .collect();
    let new: Vec<_> = going_up.difference(&listed).collect();
    let gone: Vec<_> = listed.difference(&going_up).collect();
    assert!(
        new.is_empty(),
        "imports that go up a layer (import from below, or move the item down): {new:?}"
    );
    assert!(
        gone.is_empty(),
        "imports listed in GOING_UP that are gone (strike them from the list): {gone:?}"
    );
}

#[test]
fn the_scan_finds_paths_and_skips_comments() {
    let source = "use crate::agent::Agent; // crate::builtin\n/// [`x`](crate::tool::X)\nfn f() { crate::__private::g(crate::Shared::new(())) }";
    let root = "pub use agent::{Agent, RunOutput};\npub use shared::Shared;";
    let named: Vec<String> = named_modules(source, root).into_iter().collect();
    assert_eq!(named, ["agent", "private", "shared"]);
}
