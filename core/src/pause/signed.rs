//! Signed checkpoints: a checkpoint's JSON sealed with an HMAC-SHA256, for checkpoints that
//! pass through clients.
//!
//! The envelope is JSON with four fields: `signed_checkpoint` (its version, 1), `key` (the id of
//! the key that signed it), `hmac_sha256` (the MAC, 64 lowercase hex digits) and `checkpoint`
//! (the checkpoint's JSON, as a string). The MAC is over the fixed label [`LABEL`] followed by
//! the exact bytes of that string, so verifying needs no canonical form: the string comes back
//! byte for byte through any JSON parser (a browser's `JSON.parse`/`JSON.stringify` included),
//! and nothing is re-serialized before the MAC is checked.

#[cfg(feature = "signing")]
use std::borrow::Cow;
#[cfg(feature = "signing")]
use std::fmt;

#[cfg(feature = "signing")]
use hmac::{Hmac, KeyInit, Mac};
#[cfg(feature = "signing")]
use serde::{Deserialize, Serialize};
#[cfg(feature = "signing")]
use sha2::Sha256;

#[cfg(feature = "signing")]
use super::{Checkpoint, CheckpointError};

/// What the MAC covers before the checkpoint's bytes: the MAC of a signed checkpoint is never
/// the MAC of anything else made with the same secret.
#[cfg(feature = "signing")]
const LABEL: &[u8] = b"hookchain signed checkpoint 1\n";

/// The field of a signed checkpoint that says it is one (and its version).
pub(super) const MARKER: &str = "signed_checkpoint";

/// The envelope's version.
#[cfg(feature = "signing")]
const VERSION: u64 = 1;

/// The fewest bytes of secret a [`SigningKey`] takes: the size of SHA-256's output, as RFC 2104
/// advises for HMAC.
#[cfg(feature = "signing")]
#[cfg_attr(docsrs, doc(cfg(feature = "signing")))]
pub const MIN_SECRET_LEN: usize = 32;

/// The most bytes a key's id has: it is written in every signed checkpoint.
#[cfg(feature = "signing")]
#[cfg_attr(docsrs, doc(cfg(feature = "signing")))]
pub const MAX_KEY_ID_LEN: usize = 64;

/// Why a signed checkpoint was refused (in [`CheckpointError::Signature`]). Whatever the
/// reason, the checkpoint is not read, so nothing of it runs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SignatureError {
    /// The text carries no signature: a checkpoint written with
    /// [`to_json`](super::Checkpoint::to_json), or a signed one whose signature was removed.
    /// Also a [`Checkpoint`](super::Checkpoint) given as it is to an agent that signs its
    /// checkpoints ([`AgentBuilder::checkpoint_signing`](crate::AgentBuilder::checkpoint_signing)).
    #[error("the checkpoint is not signed")]
    Unsigned,
    /// The text is not a signed checkpoint as this version writes it: not JSON, an envelope of
    /// another version, a field missing, or a signature that is not 64 hex digits (truncated).
    #[error("not a signed checkpoint: {0}")]
    Malformed(&'static str),
    /// A signed checkpoint given to an agent without a signing key, or an agent without one
    /// asked to sign (see
    /// [`AgentBuilder::checkpoint_signing`](crate::AgentBuilder::checkpoint_signing)).
    #[error(
        "the agent has no signing key to verify or sign a checkpoint with \
         (AgentBuilder::checkpoint_signing)"
    )]
    NoKey,
    /// The checkpoint was signed with a key none of the given keys has the id of: give the
    /// keys still valid, old ones included, while checkpoints they signed are in circulation.
    #[error("the checkpoint was signed with key `{key}`, which is not among the keys given")]
    UnknownKey {
        /// The id written in the checkpoint (its first 64 characters).
        key: String,
    },
    /// The signature does not verify with the key of its id: the checkpoint changed since it
    /// was signed, or it was signed with another secret under that id.
    #[error(
        "the checkpoint's signature does not verify with key `{key}`: it was changed since it \
         was signed, or signed with another secret"
    )]
    Mismatch {
        /// The key's id.
        key: String,
    },
}

/// A secret that signs checkpoints and verifies them: HMAC-SHA256, under an id written in
/// every checkpoint it signs, so that keys can be rotated (see
/// [`Checkpoint::from_signed_json`]).
///
/// Its `Debug` shows the id only; the secret is never printed, nor put in an error.
///
/// ```
/// use hookchain::interrupt::SigningKey;
///
/// let key = SigningKey::new("2026-11", [7u8; 32])?;
/// assert_eq!(key.id(), "2026-11");
/// assert_eq!(format!("{key:?}"), r#"SigningKey { id: "2026-11", .. }"#);
///
/// // A secret shorter than 32 bytes is refused.
/// assert!(SigningKey::new("short", b"hunter2").is_err());
/// # Ok::<(), hookchain::interrupt::CheckpointError>(())
/// ```
#[cfg(feature = "signing")]
#[cfg_attr(docsrs, doc(cfg(feature = "signing")))]
#[derive(Clone)]
pub struct SigningKey {
    id: String,
    /// The HMAC keyed with the secret (the secret itself is not kept).
    mac: Hmac<Sha256>,
}

#[cfg(feature = "signing")]
impl SigningKey {
    /// A key named `id` (non-empty, at most [`MAX_KEY_ID_LEN`] bytes, not secret: it is
    /// written in every checkpoint the key signs) with `secret`: at least [`MIN_SECRET_LEN`]
    /// random bytes, from a secrets manager or a CSPRNG — not a password. Else
    /// [`CheckpointError::SigningKey`].
    pub fn new(id: impl Into<String>, secret: impl AsRef<[u8]>) -> Result<Self, CheckpointError> {
        let id = id.into();
        let refused = |reason| CheckpointError::SigningKey {
            id: id.chars().take(MAX_KEY_ID_LEN).collect(),
            reason,
        };
        let secret = secret.as_ref();
        if id.is_empty() || id.len() > MAX_KEY_ID_LEN {
            return Err(refused("its id is empty or longer than 64 bytes"));
        }
        if secret.len() < MIN_SECRET_LEN {
            return Err(refused(
                "its secret is shorter than 32 bytes (use 32 random bytes)",
            ));
        }
        let mac = <Hmac<Sha256> as KeyInit>::new_from_slice(secret)
            .map_err(|_| refused("HMAC-SHA256 does not take its secret"))?;
        Ok(SigningKey { id, mac })
    }

    /// The key's id, written in the checkpoints it signs.
    #[must_use]
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The MAC of `payload`, after the label.
    fn keyed(&self, payload: &[u8]) -> Hmac<Sha256> {
        let mut mac = self.mac.clone();
        mac.update(LABEL);
        mac.update(payload);
        mac
    }
}

#[cfg(feature = "signing")]
impl fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SigningKey")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

/// One key, as the list of keys [`Checkpoint::from_signed_json`] takes.
#[cfg(feature = "signing")]
impl AsRef<[SigningKey]> for SigningKey {
    fn as_ref(&self) -> &[SigningKey] {
        std::slice::from_ref(self)
    }
}

/// A signed checkpoint, as written.
#[cfg(feature = "signing")]
#[derive(Serialize)]
struct Sealed<'a> {
    signed_checkpoint: u64,
    key: &'a str,
    hmac_sha256: &'a str,
    checkpoint: &'a str,
}

/// A signed checkpoint, as read: every field optional, so that what is missing is told apart.
#[cfg(feature = "signing")]
#[derive(Deserialize)]
struct Opened<'a> {
    #[serde(default)]
    signed_checkpoint: Option<u64>,
    #[serde(default, borrow)]
    key: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    hmac_sha256: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    checkpoint: Option<Cow<'a, str>>,
}

#[cfg(feature = "signing")]
#[cfg_attr(docsrs, doc(cfg(feature = "signing")))]
impl Checkpoint {
    /// The checkpoint as JSON, signed with `key`: an envelope holding the checkpoint's
    /// [`to_json`](Self::to_json), the id of `key` and an HMAC-SHA256 of those exact bytes.
    /// Read it back with [`from_signed_json`](Self::from_signed_json).
    ///
    /// The checkpoint is not encrypted: a client holding it reads the history and the
    /// interrupts (keep secrets out of them), but cannot change a byte of it unnoticed.
    pub fn to_signed_json(&self, key: &SigningKey) -> Result<String, CheckpointError> {
        let checkpoint = self.to_json()?;
        let mac = key.keyed(checkpoint.as_bytes()).finalize().into_bytes();
        let hmac_sha256 = to_hex(&mac);
        serde_json::to_string(&Sealed {
            signed_checkpoint: VERSION,
            key: &key.id,
            hmac_sha256: &hmac_sha256,
            checkpoint: &checkpoint,
        })
        .map_err(CheckpointError::Encode)
    }

    /// Reads a checkpoint written by [`to_signed_json`](Self::to_signed_json), if its signature
    /// verifies with the key of its id among `keys` (one [`SigningKey`], or a list of them);
    /// else [`CheckpointError::Signature`], and the checkpoint is not read at all: one changed
    /// by a single byte, signed with another key, with a signature truncated or removed, or
    /// never signed is refused. The MAC is compared in constant time.
    ///
    /// **Rotating keys**: sign with the new key, and verify with the new and the old ones
    /// (`&[new, old]`) until the checkpoints the old one signed are resumed or expired; then
    /// drop it.
    ///
    /// Then the checkpoint is read as [`from_json`](Self::from_json) reads it (an older format
    /// migrated, a newer one refused).
    ///
    /// ```
    /// use hookchain::interrupt::{CheckpointError, SignatureError, SigningKey};
    /// use hookchain::prelude::*;
    /// use hookchain::{Checkpoint, chain, hook};
    /// use serde_json::json;
    ///
    /// #[hook(before_model)]
    /// fn ask(cx: &mut Context) -> Flow {
    ///     match cx.resume_value() {
    ///         Some(_) => Flow::Continue,
    ///         None => Flow::interrupt(json!("go on?")),
    ///     }
    /// }
    ///
    /// # futures::executor::block_on(async {
    /// // 32 random bytes, read from your secrets manager.
    /// let old = SigningKey::new("2026-10", [1u8; 32])?;
    /// let new = SigningKey::new("2026-11", [2u8; 32])?;
    /// let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("Hi!")]))
    ///     .chain(chain![ask])
    ///     .build()?;
    /// let paused = agent.run("Hello").await?.checkpoint.unwrap();
    ///
    /// // Handed to a client, signed with the key of the day...
    /// let sent = paused.to_signed_json(&old)?;
    /// // ...and back, after the keys rotated: still read, with the old key among the keys.
    /// let checkpoint = Checkpoint::from_signed_json(&sent, &[new, old])?;
    /// let answers = [(checkpoint.interrupts()[0].id.clone(), json!("yes"))];
    /// let done = agent.resume(checkpoint, answers).await?;
    /// assert_eq!(done.text().as_deref(), Some("Hi!"));
    ///
    /// // Changed on the way: refused, never resumed.
    /// let changed = sent.replace("Hello", "Hellp");
    /// let key = SigningKey::new("2026-10", [1u8; 32])?;
    /// assert!(matches!(
    ///     Checkpoint::from_signed_json(&changed, &key),
    ///     Err(CheckpointError::Signature(SignatureError::Mismatch { .. }))
    /// ));
    /// # Ok::<(), hookchain::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn from_signed_json(
        text: &str,
        keys: impl AsRef<[SigningKey]>,
    ) -> Result<Checkpoint, CheckpointError> {
        let checkpoint = verified(text, keys.as_ref()).map_err(CheckpointError::Signature)?;
        Checkpoint::from_json(&checkpoint)
    }
}

/// The checkpoint's JSON of the signed checkpoint `text`, if its MAC verifies with one of
/// `keys` of its id.
#[cfg(feature = "signing")]
fn verified<'t>(text: &'t str, keys: &[SigningKey]) -> Result<Cow<'t, str>, SignatureError> {
    let opened: Opened<'t> = serde_json::from_str(text)
        .map_err(|_| SignatureError::Malformed("not the JSON of a signed checkpoint"))?;
    let Some(mac) = opened.hmac_sha256 else {
        return Err(SignatureError::Unsigned);
    };
    if opened.signed_checkpoint != Some(VERSION) {
        return Err(SignatureError::Malformed(
            "not an envelope of version 1 (`signed_checkpoint`)",
        ));
    }
    let (Some(id), Some(checkpoint)) = (opened.key, opened.checkpoint) else {
        return Err(SignatureError::Malformed(
            "its key id or its checkpoint is missing",
        ));
    };
    let mac = from_hex(&mac).ok_or(SignatureError::Malformed(
        "its signature is not 64 hex digits",
    ))?;
    let mut known = keys.iter().filter(|key| key.id == *id).peekable();
    if known.peek().is_none() {
        return Err(SignatureError::UnknownKey {
            key: id.chars().take(MAX_KEY_ID_LEN).collect(),
        });
    }
    // Several keys may share an id (a secret replaced without renaming its key): any will do.
    if known.any(|key| key.keyed(checkpoint.as_bytes()).verify_slice(&mac).is_ok()) {
        Ok(checkpoint)
    } else {
        Err(SignatureError::Mismatch {
            key: id.into_owned(),
        })
    }
}

/// `bytes` in lowercase hex.
#[cfg(feature = "signing")]
fn to_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    bytes
        .iter()
        .flat_map(|byte| {
            [
                DIGITS[usize::from(byte >> 4)],
                DIGITS[usize::from(byte & 0xf)],
            ]
        })
        .map(char::from)
        .collect()
}

/// The 32 bytes written as 64 hex digits in `text` (either case), or `None`.
#[cfg(feature = "signing")]
fn from_hex(text: &str) -> Option<[u8; 32]> {
    let digits = text.as_bytes();
    if digits.len() != 64 {
        return None;
    }
    let mut bytes = [0u8; 32];
    for (byte, pair) in bytes.iter_mut().zip(digits.chunks_exact(2)) {
        let high = char::from(pair[0]).to_digit(16)?;
        let low = char::from(pair[1]).to_digit(16)?;
        *byte = u8::try_from(high << 4 | low).ok()?;
    }
    Some(bytes)
}

#[cfg(all(test, feature = "signing"))]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips_and_refuses_what_is_not_32_bytes() {
        let bytes: [u8; 32] = std::array::from_fn(|i| u8::try_from(i * 8).unwrap());
        let hex = to_hex(&bytes);
        assert_eq!(hex.len(), 64);
        assert_eq!(&hex[..6], "000810");
        assert_eq!(from_hex(&hex), Some(bytes));
        assert_eq!(from_hex(&hex.to_uppercase()), Some(bytes));
        assert_eq!(from_hex(&hex[..62]), None);
        assert_eq!(from_hex(&format!("{hex}00")), None);
        assert_eq!(from_hex(&hex.replacen('0', "g", 1)), None);
        assert_eq!(from_hex(&hex.replacen('0', "+", 1)), None);
    }

    /// HMAC-SHA256 as RFC 4231 computes it (test case 2, "Jefe"), so the MAC is the standard
    /// one: a signed checkpoint can be verified by any HMAC library, with the label first.
    #[test]
    fn the_mac_is_hmac_sha256() {
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(b"Jefe").unwrap();
        mac.update(b"what do ya want for nothing?");
        assert_eq!(
            to_hex(&mac.finalize().into_bytes()),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn a_key_is_refused_for_a_short_secret_or_a_bad_id() {
        let refused = |result: Result<SigningKey, CheckpointError>| match result {
            Err(CheckpointError::SigningKey { reason, .. }) => reason,
            other => panic!("expected a refused key, got {other:?}"),
        };
        assert!(refused(SigningKey::new("k", [0u8; 31])).contains("32 bytes"));
        assert!(refused(SigningKey::new("", [0u8; 32])).contains("id"));
        assert!(refused(SigningKey::new("k".repeat(65), [0u8; 32])).contains("id"));
        assert!(SigningKey::new("k".repeat(64), [0u8; 32]).is_ok());
        assert!(SigningKey::new("k", [0u8; 100]).is_ok());
    }

    #[test]
    fn neither_debug_nor_an_error_shows_the_secret() {
        let secret = "s3cr3t-s3cr3t-s3cr3t-s3cr3t-s3cr3t";
        let key = SigningKey::new("k1", secret).unwrap();
        assert!(!format!("{key:?}").contains("s3cr3t"));
        let short = SigningKey::new("k1", "s3cr3t").unwrap_err();
        assert!(!format!("{short:?} {short}").contains("s3cr3t"));
    }
}
