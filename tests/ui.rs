//! Compile-fail and compile-pass cases of the macros (`ui-tests/`), each failure with the exact
//! diagnostic a user sees (`.stderr`). Regenerate with `TRYBUILD=overwrite cargo test --test ui`,
//! then review every diff.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("ui-tests/fail/**/*.rs");
    cases.pass("ui-tests/pass/**/*.rs");
}
