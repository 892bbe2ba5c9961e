//! Checks only `cargo build` can see: the ordering constraints (`before`, `after`, `requires`),
//! the phase/hook rules of hand-written middleware and the wrap-marker rule are evaluated after
//! monomorphization, which `cargo check` does not reach. Their primary location is the constant
//! evaluation in hookchain's own source, followed by a long backtrace, so they are checked here by
//! message rather than snapshotted by trybuild. Each binary of the fixture crate
//! `ui-tests/build-fail` breaks one rule and names the message it expects in a `// expect: …`
//! first line; each must fail with exactly that one error, of at most 20 lines (the panic sits
//! in the checked constant itself, so no note per function of hookchain's it passed through).
//! `#[middleware]` on a hand-written impl checks the impl's own rules in `cargo check` instead
//! (`ui-tests/fail/middleware/trait_form_*`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::{env, fs};

#[test]
fn post_monomorphization_checks_fail_the_build_naming_the_middleware() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let fixture = root.join("ui-tests/build-fail/src/bin");
    let work = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("build-fail");
    let bins = work.join("src/bin");
    fs::create_dir_all(&bins).unwrap();

    let mut expected = Vec::new();
    for entry in fs::read_dir(&fixture).unwrap() {
        let path = entry.unwrap().path();
        let source = fs::read_to_string(&path).unwrap();
        let first = source.lines().next().unwrap_or_default();
        let message = first
            .strip_prefix("// expect: ")
            .unwrap_or_else(|| panic!("{} must start with `// expect: …`", path.display()));
        let bin = path.file_stem().unwrap().to_string_lossy().into_owned();
        expected.push((bin, message.to_owned()));
        fs::write(bins.join(path.file_name().unwrap()), source).unwrap();
    }
    assert!(expected.len() >= 6, "fixture binaries: {expected:?}");

    let manifest = format!(
        r#"[package]
name = "hookchain-build-fail"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
hookchain = {{ path = {root:?} }}
futures = {{ version = "0.3", features = ["executor"] }}

[workspace]
"#,
        root = root.display().to_string()
    );
    fs::write(work.join("Cargo.toml"), manifest).unwrap();
    // The workspace's lock file pins the same dependency versions the tests were built with.
    fs::copy(root.join("Cargo.lock"), work.join("Cargo.lock")).unwrap();

    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let output = Command::new(cargo)
        .args([
            "build",
            "--bins",
            "--keep-going",
            "--message-format",
            "json",
        ])
        .current_dir(&work)
        .env("CARGO_TARGET_DIR", work.join("target"))
        .env_remove("RUSTFLAGS")
        .output()
        .expect("cargo runs");
    assert!(
        !output.status.success(),
        "the fixture must not build:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );

    // The errors of each binary, rendered as rustc prints them.
    let mut errors: HashMap<String, Vec<String>> = HashMap::new();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if message["reason"] != "compiler-message" || message["message"]["level"] != "error" {
            continue;
        }
        let bin = message["target"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let rendered = message["message"]["rendered"].as_str().unwrap_or_default();
        errors.entry(bin).or_default().push(rendered.to_owned());
    }
    for (bin, message) in &expected {
        let found = errors.get(bin).cloned().unwrap_or_default();
        assert_eq!(
            found.len(),
            1,
            "{bin}: expected exactly one error, got {}:\n{}",
            found.len(),
            found.join("\n")
        );
        assert!(
            found[0].contains(message.as_str()),
            "{bin}: expected the build to fail with\n  {message}\nbut rustc said:\n{}",
            found[0]
        );
        assert!(
            found[0].lines().count() <= 20,
            "{bin}: the error is longer than 20 lines:\n{}",
            found[0]
        );
    }
}
