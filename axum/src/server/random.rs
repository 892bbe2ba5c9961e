//! Ids a client sees and must not be able to guess: 128 bits of the OS's randomness.

/// 128 random bits, as 32 hex digits. Were the OS's randomness to fail (it does not on the
/// platforms tokio runs on), the bits are zero and the failure is logged: an id then stays
/// opaque, and is no longer unique or secret.
pub(crate) fn random_hex() -> String {
    let mut bytes = [0_u8; 16];
    if let Err(error) = getrandom::fill(&mut bytes) {
        tracing::error!(%error, "no randomness from the OS");
    }
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}
