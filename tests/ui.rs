//! Compile-fail and compile-pass cases of the macros (`ui-tests/`), each failure with the exact
//! diagnostic a user sees (`.stderr`). Regenerate with `TRYBUILD=overwrite cargo test --test ui`,
//! then review every diff.

#[test]
// trybuild builds the cases against `hookchain` with this run's features: with the providers,
// the stores, Temporal or MCP, every one of their dependencies again (gigabytes of a disk CI is short
// of), for diagnostics that do not depend on them. The run without features checks them.
#[cfg_attr(
    any(
        feature = "temporal",
        feature = "mcp",
        feature = "postgres",
        feature = "sqlite",
        feature = "openai",
        feature = "anthropic",
        feature = "gemini",
        feature = "bedrock",
        feature = "axum"
    ),
    ignore = "the macros' diagnostics are checked by the run without these features"
)]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("ui-tests/fail/**/*.rs");
    cases.pass("ui-tests/pass/**/*.rs");
}
