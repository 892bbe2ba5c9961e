//! Tool names as every provider accepts them, mapped reversibly from MCP's.

use std::collections::HashMap;

/// The longest tool name OpenAI and Anthropic accept.
pub const MAX_NAME_LEN: usize = 64;

/// The length of the hash suffix: `_` and 8 hex digits.
const SUFFIX_LEN: usize = 9;

/// Whether `name` is a tool name OpenAI and Anthropic both accept: 1 to 64 ASCII letters,
/// digits, `_` or `-` (`^[a-zA-Z0-9_-]{1,64}$`).
///
/// Examples: *Tool names* in the docs of `hookchain::mcp`.
#[must_use]
pub fn is_provider_safe(name: &str) -> bool {
    (1..=MAX_NAME_LEN).contains(&name.len()) && name.bytes().all(is_safe_byte)
}

fn is_safe_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-'
}

/// The names the model is given for tools whose full names (server prefix included) are
/// `names`, in the same order: each matches [`is_provider_safe`].
///
/// A safe name is kept as it is. Another has each character outside `[a-zA-Z0-9_-]` replaced
/// by `_` (`files.read` → `files_read`); when that would collide with the mapping of another
/// name of the set, or the name is longer than 64 bytes (cut to fit), it gets a short hash of
/// the full name as a suffix (`_` and 8 hex digits, FNV-1a: the same in every build and
/// process), so that distinct names stay distinct. Which names get a suffix depends on the
/// set, not on its order. The toolset keeps each mapped name's original and calls the server
/// with that.
///
/// A toolset names the tools of its first listing with this function, and keeps every name it
/// offered for the toolset's life: a tool a server adds later whose name is taken already gets
/// the suffix instead (see [`McpToolset`'s names](crate::McpToolset#names-that-do-not-change)).
///
/// Examples: *Tool names* in the docs of `hookchain::mcp`.
pub fn provider_safe_names<I, S>(names: I) -> Vec<String>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let names: Vec<S> = names.into_iter().collect();
    let cleaned: Vec<String> = names.iter().map(|name| clean(name.as_ref())).collect();
    let mut uses: HashMap<&str, usize> = HashMap::new();
    for name in &cleaned {
        *uses.entry(name.as_str()).or_default() += 1;
    }
    names
        .iter()
        .zip(&cleaned)
        .map(|(original, cleaned)| {
            let original = original.as_ref();
            let kept_as_is = original == cleaned && cleaned.len() <= MAX_NAME_LEN;
            let alone = uses[cleaned.as_str()] == 1;
            if kept_as_is || (alone && cleaned.len() <= MAX_NAME_LEN) {
                cleaned.clone()
            } else {
                with_suffix(cleaned, original)
            }
        })
        .collect()
}

/// The name with a suffix that `full` gets when the name [`provider_safe_names`] would give it
/// is taken: cleaned up, cut to fit, and the hash of `full` after it. A toolset gives it to a
/// tool that comes after another already has its name (names, once offered, are kept).
pub(crate) fn suffixed_name(full: &str) -> String {
    with_suffix(&clean(full), full)
}

/// `name` with every byte outside `[a-zA-Z0-9_-]` replaced: one `_` per character (so that a
/// multi-byte character is one `_`, not several), and `tool` for an empty name.
fn clean(name: &str) -> String {
    if name.is_empty() {
        return "tool".to_owned();
    }
    name.chars()
        .map(|c| {
            if c.is_ascii() && is_safe_byte(c as u8) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// `cleaned`, cut to leave room, then `_` and the hash of `original`.
fn with_suffix(cleaned: &str, original: &str) -> String {
    // `cleaned` is ASCII, so any cut is on a character boundary.
    let kept = &cleaned[..cleaned.len().min(MAX_NAME_LEN - SUFFIX_LEN)];
    format!("{kept}_{:08x}", fnv1a(original.as_bytes()))
}

/// 32-bit FNV-1a: a hash that is the same in every build (std's hasher is not promised to be).
fn fnv1a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5, |hash: u32, &byte| {
        (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn safe_names_are_kept() {
        let names = ["echo", "get-sum", "git_status", &"a".repeat(64)];
        assert_eq!(provider_safe_names(names), names);
    }

    #[test]
    fn unsafe_characters_become_underscores_when_nothing_collides() {
        assert_eq!(
            provider_safe_names(["files.read", "a b/c", "héllo"]),
            ["files_read", "a_b_c", "h_llo"]
        );
    }

    #[test]
    fn names_that_would_collide_get_distinct_stable_suffixes() {
        let names = provider_safe_names(["files.read", "files/read", "files_read"]);
        // The name that was safe already keeps its name; the two others get suffixes.
        assert_eq!(names[2], "files_read");
        assert_eq!(names[0], format!("files_read_{:08x}", fnv1a(b"files.read")));
        assert_ne!(names[0], names[1]);
        // Stable: the same in another order.
        let reversed = provider_safe_names(["files_read", "files/read", "files.read"]);
        assert_eq!(reversed, [names[2].as_str(), &names[1], &names[0]]);
    }

    #[test]
    fn long_names_are_cut_with_a_suffix() {
        let long = "x".repeat(100);
        let longer = "x".repeat(101);
        let names = provider_safe_names([&long, &longer]);
        assert!(names.iter().all(|name| is_provider_safe(name)), "{names:?}");
        assert_ne!(names[0], names[1]);
    }

    #[test]
    fn every_mapped_name_is_safe() {
        let names = provider_safe_names(["", "日本語", "a.b", "-", "x y z", &"é".repeat(40)]);
        assert!(names.iter().all(|name| is_provider_safe(name)), "{names:?}");
    }

    #[test]
    fn a_suffixed_name_is_the_one_a_collision_gives() {
        let names = provider_safe_names(["files.read", "files/read"]);
        assert_eq!(suffixed_name("files.read"), names[0]);
        // A safe name too, when another tool has it already.
        assert_eq!(
            suffixed_name("files_read"),
            format!("files_read_{:08x}", fnv1a(b"files_read"))
        );
        assert!(is_provider_safe(&suffixed_name(&"é".repeat(100))));
    }

    #[test]
    fn fnv1a_is_the_published_function() {
        // Test vectors of FNV-1a 32-bit.
        assert_eq!(fnv1a(b""), 0x811c_9dc5);
        assert_eq!(fnv1a(b"a"), 0xe40c_292c);
        assert_eq!(fnv1a(b"foobar"), 0xbf9c_f968);
    }
}
