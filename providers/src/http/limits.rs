//! How much of an answer a client reads: bounds on bodies and server-sent events, and buffers
//! that never grow past them.

/// One mebibyte.
const MIB: usize = 1024 * 1024;

/// The most of an error body kept (64 KiB): far more than any provider's error JSON, and the
/// start of an HTML page from a proxy. The rest is not read.
pub(crate) const DEFAULT_MAX_ERROR_BODY: usize = 64 * 1024;

/// The largest unstreamed answer read (32 MiB): an answer at the largest output limits (about
/// 128k tokens, a few hundred KiB of text), with several whole images as base64, fits many
/// times over.
pub(crate) const DEFAULT_MAX_ANSWER: usize = 32 * MIB;

/// The longest line of a stream (8 MiB): a chunk carrying a whole image as base64, or a whole
/// tool call of a server that sends calls at once, fits; an endless line is cut there.
pub(crate) const DEFAULT_MAX_LINE: usize = 8 * MIB;

/// The largest event of a stream, its data lines together (8 MiB), for the same reasons.
pub(crate) const DEFAULT_MAX_EVENT: usize = 8 * MIB;

/// The bounds on what a provider's client reads, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limits {
    /// The most of an error body kept; the rest is not read.
    pub(crate) error_body: usize,
    /// The largest unstreamed answer.
    pub(crate) answer: usize,
    /// The longest line of a streamed answer.
    pub(crate) line: usize,
    /// The largest event of a streamed answer (its data).
    pub(crate) event: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            error_body: DEFAULT_MAX_ERROR_BODY,
            answer: DEFAULT_MAX_ANSWER,
            line: DEFAULT_MAX_LINE,
            event: DEFAULT_MAX_EVENT,
        }
    }
}

/// Appends `bytes` to `buffer` unless that makes it longer than `limit` (then `false`, and
/// `buffer` is unchanged). The buffer grows by doubling, as a `Vec` does, but its capacity never
/// passes `limit`.
pub(crate) fn push_capped(buffer: &mut Vec<u8>, bytes: &[u8], limit: usize) -> bool {
    let Some(needed) = buffer.len().checked_add(bytes.len()) else {
        return false;
    };
    if needed > limit {
        return false;
    }
    if needed > buffer.capacity() {
        let target = needed.max(buffer.capacity().saturating_mul(2)).min(limit);
        buffer.reserve_exact(target - buffer.len());
    }
    buffer.extend_from_slice(bytes);
    true
}

/// [`push_capped`] for text.
pub(crate) fn push_str_capped(buffer: &mut String, text: &str, limit: usize) -> bool {
    let Some(needed) = buffer.len().checked_add(text.len()) else {
        return false;
    };
    if needed > limit {
        return false;
    }
    if needed > buffer.capacity() {
        let target = needed.max(buffer.capacity().saturating_mul(2)).min(limit);
        buffer.reserve_exact(target - buffer.len());
    }
    buffer.push_str(text);
    true
}

/// A size in the units a person reads: `64 KiB`, `32 MiB`, `100 bytes`.
pub(crate) fn size(bytes: usize) -> String {
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else if bytes >= 1024 && bytes.is_multiple_of(1024) {
        format!("{} KiB", bytes / 1024)
    } else {
        format!("{bytes} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_capped_buffer_never_holds_nor_reserves_more_than_its_limit() {
        let mut buffer = Vec::new();
        for _ in 0..10 {
            assert!(push_capped(&mut buffer, &[7; 30], 100) || buffer.len() > 70);
            assert!(buffer.capacity() <= 100, "{}", buffer.capacity());
        }
        assert_eq!(buffer.len(), 90);
        assert!(!push_capped(&mut buffer, &[7; 11], 100));
        assert!(push_capped(&mut buffer, &[7; 10], 100));
        assert_eq!((buffer.len(), buffer.capacity()), (100, 100));
        let mut text = String::new();
        assert!(push_str_capped(&mut text, "abc", 4));
        assert!(!push_str_capped(&mut text, "de", 4));
        assert!(text.capacity() <= 4);
    }

    #[test]
    fn sizes_read_in_their_unit() {
        assert_eq!(size(64 * 1024), "64 KiB");
        assert_eq!(size(32 * MIB), "32 MiB");
        assert_eq!(size(1000), "1000 bytes");
    }
}
