//! What a cassette never writes: credentials, and whatever the user's redactors remove.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

/// What stands in the file for a redacted secret.
pub const REDACTED: &str = "[REDACTED]";

/// A user's redactor: the text to write in place of a text of the cassette.
pub(crate) type Redactor = Arc<dyn Fn(&str) -> String + Send + Sync>;

/// The redaction of a cassette: the default rules (unless turned off), then the user's
/// redactors in the order they were added.
#[derive(Clone)]
pub(crate) struct Redaction {
    pub(crate) defaults: bool,
    pub(crate) redactors: Vec<Redactor>,
}

impl Default for Redaction {
    fn default() -> Self {
        Self {
            defaults: true,
            redactors: Vec::new(),
        }
    }
}

impl fmt::Debug for Redaction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Redaction")
            .field("defaults", &self.defaults)
            .field("redactors", &self.redactors.len())
            .finish()
    }
}

/// Prefixes of well-known credential formats: a word that starts so and goes on for at least
/// [`MIN_SECRET`] more token characters is a secret.
const SECRET_PREFIXES: &[&str] = &[
    "sk-",
    "sk_live_",
    "sk_test_",
    "rk_live_",
    "AKIA",
    "ASIA",
    "AIza",
    "ghp_",
    "gho_",
    "ghs_",
    "github_pat_",
    "glpat-",
    "xoxb-",
    "xoxp-",
    "hf_",
    "Bearer ",
];

/// Token characters after a secret prefix, at least.
const MIN_SECRET: usize = 16;

impl Redaction {
    /// Redacts a request's fingerprint: credential-named keys of the provider extras
    /// (`settings.extra`, at any depth), then every text.
    pub(crate) fn request(&self, value: &mut Value) {
        if self.defaults
            && let Some(extra) = value.pointer_mut("/settings/extra")
        {
            redact_keys(extra);
        }
        self.texts(value);
    }

    /// Redacts every text (not the keys) of `value`.
    pub(crate) fn texts(&self, value: &mut Value) {
        match value {
            Value::String(text) => {
                let mut redacted = if self.defaults {
                    redact_credentials(text)
                } else {
                    text.clone()
                };
                for redactor in &self.redactors {
                    redacted = redactor(&redacted);
                }
                *text = redacted;
            }
            Value::Array(items) => items.iter_mut().for_each(|item| self.texts(item)),
            Value::Object(map) => map.values_mut().for_each(|item| self.texts(item)),
            _ => {}
        }
    }
}

/// Whether a key names a credential: `api_key`, `apiKey`, `x-api-key`, `authorization`,
/// `password`, `secret`, `client_secret`, `access_token`, `token`, `private_key`, … (not
/// `max_tokens`: a count of tokens is no secret).
pub(crate) fn is_secret_key(key: &str) -> bool {
    let key: String = key
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect::<String>()
        .to_ascii_lowercase();
    [
        "apikey",
        "authorization",
        "password",
        "passwd",
        "secret",
        "privatekey",
        "credential",
        "cookie",
    ]
    .iter()
    .any(|word| key.contains(word))
        || key == "token"
        || key == "auth"
        || key.ends_with("token") && !key.ends_with("maxtoken")
}

fn redact_keys(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, item) in map.iter_mut() {
                if is_secret_key(key) {
                    *item = Value::String(REDACTED.to_owned());
                } else {
                    redact_keys(item);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact_keys),
        _ => {}
    }
}

/// `text` with every word that looks like a credential (see [`SECRET_PREFIXES`]) replaced.
pub(crate) fn redact_credentials(text: &str) -> String {
    let is_token = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    'scan: while !rest.is_empty() {
        let at_word_start = out.chars().last().is_none_or(|c| !is_token(c));
        if at_word_start {
            for prefix in SECRET_PREFIXES {
                if let Some(after) = rest.strip_prefix(prefix) {
                    let run = after.find(|c: char| !is_token(c)).unwrap_or(after.len());
                    // A sentence's full stop is not part of the key.
                    let run = after[..run].trim_end_matches(['.', '-', '_']).len();
                    if run >= MIN_SECRET {
                        out.push_str(REDACTED);
                        rest = &after[run..];
                        continue 'scan;
                    }
                }
            }
        }
        let mut chars = rest.chars();
        if let Some(c) = chars.next() {
            out.push(c);
        }
        rest = chars.as_str();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_found_by_their_format() {
        assert_eq!(
            redact_credentials("key sk-proj-abcdefghijklmnop1234 here"),
            "key [REDACTED] here"
        );
        assert_eq!(
            redact_credentials("It is sk-proj-abcdefghijklmnop1234."),
            "It is [REDACTED]."
        );
        assert_eq!(
            redact_credentials("Authorization: Bearer abcdefghijklmnopqrstu"),
            "Authorization: [REDACTED]"
        );
        assert_eq!(redact_credentials("ask-me sk-short"), "ask-me sk-short");
        assert_eq!(redact_credentials("désolé"), "désolé");
    }

    #[test]
    fn credential_keys_are_named_so() {
        for key in [
            "api_key",
            "apiKey",
            "x-api-key",
            "Authorization",
            "client_secret",
            "access_token",
            "token",
        ] {
            assert!(is_secret_key(key), "{key}");
        }
        for key in [
            "max_tokens",
            "max_completion_tokens",
            "seed",
            "top_k",
            "reasoning_effort",
        ] {
            assert!(!is_secret_key(key), "{key}");
        }
    }
}
