//! Padding that makes a value moved through every layer of a model call a whole number of
//! 64-byte blocks.
//!
//! A model call moves its request into each wrap layer's future, each copy reading what the copy
//! before it has just written. glibc's `memcpy` moves 129–256 bytes as four 64-byte blocks, two
//! from each end. At 232 bytes (the request's size without padding, with the default features)
//! the blocks overlap, so the next copy's load of bytes 64..128 reads bytes that two different
//! stores of the copy before wrote. The CPU cannot forward that load from its store buffer and
//! waits for both stores to reach the cache: a stall at every layer. At a multiple of 64 the
//! blocks do not overlap, and each load is forwarded from exactly one store (larger sizes are
//! copied in 64-byte blocks from both ends too). Measured on ten wrap layers (`b10` in
//! `benches/`, BENCHMARKS.md): 149–162 ns a call unpadded, 120–141 ns padded, for 24 bytes
//! more per copy.

/// `BYTES` bytes of padding: zeros, equal to each other, never serialized.
#[derive(Clone, PartialEq)]
pub(crate) struct Padding<const BYTES: usize>([u8; BYTES]);

impl<const BYTES: usize> Default for Padding<BYTES> {
    fn default() -> Self {
        Self([0; BYTES])
    }
}

/// The bytes that round `size` up to whole 64-byte blocks (none where pointers are not 64-bit).
pub(crate) const fn padding_to_blocks(size: usize) -> usize {
    if cfg!(target_pointer_width = "64") {
        size.next_multiple_of(64) - size
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::padding_to_blocks;
    use crate::model::ModelRequest;

    #[test]
    fn padding_rounds_up_to_the_next_block_only() {
        if cfg!(target_pointer_width = "64") {
            assert_eq!(padding_to_blocks(232), 24);
            assert_eq!(padding_to_blocks(256), 0);
            assert_eq!(padding_to_blocks(257), 63);
        }
    }

    #[test]
    fn the_padding_is_invisible_to_users() {
        let request = ModelRequest::new(Vec::new()).with_system_prompt("Be brief.");
        let json = serde_json::to_value(&request).unwrap();
        assert!(json.get("padding").is_none(), "{json}");
        let back: ModelRequest = serde_json::from_value(json).unwrap();
        assert_eq!(back, request);
        assert!(!format!("{request:?}").contains("padding"));
    }
}
