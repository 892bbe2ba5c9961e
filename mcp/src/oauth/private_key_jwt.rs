//! The client-credentials grant authenticated with a signed JWT instead of a secret
//! (`private_key_jwt`, RFC 7523 §2.2 and OpenID Connect Core §9; MCP's SEP-1046): the
//! authorization server holds the client's public key, and the client proves itself with a
//! short-lived assertion signed by its private key, made for each token request.
//!
//! Signed with `ring` (rmcp's own `auth-client-credentials-jwt` signs with `jsonwebtoken` on
//! aws-lc-rs, a C library this crate does not build); the token request is this crate's.

use std::fmt;
use std::sync::Arc;

use base64::Engine as _;
use ring::rand::{SecureRandom, SystemRandom};
use ring::signature::{self, EcdsaKeyPair, RsaKeyPair};
use rmcp::transport::AuthError;
use rmcp::transport::auth::{AuthorizationManager, AuthorizationMetadata};

use super::error::AuthorizationError;
use super::jwt_bearer::{self, TokenRequest};

/// RFC 7523 §2.2's client assertion type.
const CLIENT_ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// How long a client assertion is valid: one token request's time, with some clock skew.
const ASSERTION_LIFETIME_SECS: u64 = 60;

/// A client's private key, which signs its assertions for `private_key_jwt`
/// ([`McpOAuth::client_credentials_jwt`](super::McpOAuth::client_credentials_jwt)).
///
/// Its `Debug` shows the algorithm and the key id, never the key.
#[derive(Clone)]
pub struct ClientKey {
    algorithm: &'static str,
    signer: Arc<Signer>,
    key_id: Option<String>,
}

enum Signer {
    Ecdsa(EcdsaKeyPair),
    Rsa(RsaKeyPair, &'static dyn signature::RsaEncoding),
}

/// Why a [`ClientKey`] could not be made: an algorithm this crate does not sign with, a PEM
/// that is not PKCS#8, or a key that is not of the algorithm.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct KeyError(String);

impl ClientKey {
    /// The private key of a PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`), for the JWS
    /// `algorithm` it signs with: `ES256` (P-256), `ES384` (P-384), `RS256` or `PS256`
    /// (RSA, 2048 bits or more).
    pub fn from_pkcs8_pem(algorithm: &str, pem: &str) -> Result<Self, KeyError> {
        const BEGIN: &str = "-----BEGIN PRIVATE KEY-----";
        const END: &str = "-----END PRIVATE KEY-----";
        let (Some(start), Some(end)) = (pem.find(BEGIN), pem.find(END)) else {
            return Err(KeyError(
                "the key is not a PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`)".to_owned(),
            ));
        };
        let body: String = pem
            .get(start + BEGIN.len()..end)
            .unwrap_or_default()
            .chars()
            .filter(|c| !c.is_ascii_whitespace())
            .collect();
        let der = base64::engine::general_purpose::STANDARD
            .decode(body)
            .map_err(|_| KeyError("the key's PEM is not base64".to_owned()))?;
        Self::from_pkcs8_der(algorithm, &der)
    }

    /// The private key of a PKCS#8 document (DER), for `algorithm` (see
    /// [`from_pkcs8_pem`](Self::from_pkcs8_pem)).
    pub fn from_pkcs8_der(algorithm: &str, der: &[u8]) -> Result<Self, KeyError> {
        let rejected = |error: ring::error::KeyRejected| {
            KeyError(format!("the key is not an {algorithm} PKCS#8 key: {error}"))
        };
        let rng = SystemRandom::new();
        let (algorithm, signer) = match algorithm {
            "ES256" => (
                "ES256",
                Signer::Ecdsa(
                    EcdsaKeyPair::from_pkcs8(
                        &signature::ECDSA_P256_SHA256_FIXED_SIGNING,
                        der,
                        &rng,
                    )
                    .map_err(rejected)?,
                ),
            ),
            "ES384" => (
                "ES384",
                Signer::Ecdsa(
                    EcdsaKeyPair::from_pkcs8(
                        &signature::ECDSA_P384_SHA384_FIXED_SIGNING,
                        der,
                        &rng,
                    )
                    .map_err(rejected)?,
                ),
            ),
            "RS256" => (
                "RS256",
                Signer::Rsa(
                    RsaKeyPair::from_pkcs8(der).map_err(rejected)?,
                    &signature::RSA_PKCS1_SHA256,
                ),
            ),
            "PS256" => (
                "PS256",
                Signer::Rsa(
                    RsaKeyPair::from_pkcs8(der).map_err(rejected)?,
                    &signature::RSA_PSS_SHA256,
                ),
            ),
            other => {
                return Err(KeyError(format!(
                    "`{other}` is not an algorithm this client signs with (ES256, ES384, RS256, PS256)"
                )));
            }
        };
        Ok(Self {
            algorithm,
            signer: Arc::new(signer),
            key_id: None,
        })
    }

    /// The key's id at the authorization server (the JWS `kid`), when it holds several.
    #[must_use]
    pub fn key_id(mut self, key_id: impl Into<String>) -> Self {
        self.key_id = Some(key_id.into());
        self
    }

    /// A client assertion: `iss` and `sub` the client id, `aud` the authorization server,
    /// valid for a minute, with a random `jti`; signed.
    fn assertion(&self, client_id: &str, audience: &str, now: u64) -> Result<String, AuthError> {
        let rng = SystemRandom::new();
        let failed =
            || AuthError::ClientCredentialsError("signing the client assertion failed".to_owned());
        let mut jti = [0u8; 16];
        rng.fill(&mut jti).map_err(|_| failed())?;
        let encode = |bytes: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
        let mut header = serde_json::json!({"alg": self.algorithm, "typ": "JWT"});
        if let Some(key_id) = &self.key_id {
            header["kid"] = key_id.as_str().into();
        }
        let claims = serde_json::json!({
            "iss": client_id,
            "sub": client_id,
            "aud": audience,
            "iat": now,
            "exp": now + ASSERTION_LIFETIME_SECS,
            "jti": encode(&jti),
        });
        let signed = format!(
            "{}.{}",
            encode(header.to_string().as_bytes()),
            encode(claims.to_string().as_bytes())
        );
        let signature = match &*self.signer {
            Signer::Ecdsa(key) => key
                .sign(&rng, signed.as_bytes())
                .map_err(|_| failed())?
                .as_ref()
                .to_vec(),
            Signer::Rsa(key, padding) => {
                let mut signature = vec![0; key.public().modulus_len()];
                key.sign(*padding, &rng, signed.as_bytes(), &mut signature)
                    .map_err(|_| failed())?;
                signature
            }
        };
        Ok(format!("{signed}.{}", encode(&signature)))
    }
}

impl fmt::Debug for ClientKey {
    /// The key is a credential: not shown.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientKey")
            .field("algorithm", &self.algorithm)
            .field("key_id", &self.key_id)
            .finish_non_exhaustive()
    }
}

/// A client id and the key it proves itself with.
#[derive(Clone, Debug)]
pub(crate) struct ClientJwt {
    pub(crate) id: String,
    pub(crate) key: ClientKey,
}

/// Gets a token with the client-credentials grant for the server that refused a request
/// with `challenge`, the client authenticated by an assertion signed with its key; the token
/// kept in the store.
pub(super) async fn authorize(
    manager: &mut AuthorizationManager,
    client: &ClientJwt,
    request: &TokenRequest<'_>,
    challenge: &str,
) -> Result<(), AuthorizationError> {
    let (metadata, scopes) = jwt_bearer::discover(manager, request, challenge).await?;
    check_metadata(&metadata, client.key.algorithm)?;
    // RFC 7523bis: the audience is the authorization server's issuer identifier.
    let audience = metadata
        .issuer
        .as_deref()
        .unwrap_or(&metadata.token_endpoint);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs());
    let assertion = client.key.assertion(&client.id, audience, now)?;
    let scope = scopes.join(" ");
    let mut form = vec![
        ("grant_type", "client_credentials"),
        ("client_assertion_type", CLIENT_ASSERTION_TYPE),
        ("client_assertion", assertion.as_str()),
        ("resource", request.resource),
    ];
    if !scope.is_empty() {
        form.push(("scope", &scope));
    }
    let answer = jwt_bearer::send(request.http, &metadata.token_endpoint, &form, None).await?;
    jwt_bearer::keep(
        manager,
        request.store,
        &metadata,
        answer,
        &scopes,
        &client.id,
    )
    .await
}

/// An authorization server whose metadata names its token endpoint's authentication methods
/// (or signing algorithms) without `private_key_jwt` (or this key's algorithm) is not sent an
/// assertion it would refuse.
fn check_metadata(metadata: &AuthorizationMetadata, algorithm: &str) -> Result<(), AuthError> {
    let names = |field: &str, value: &str| {
        metadata
            .additional_fields
            .get(field)
            .and_then(|values| values.as_array())
            .is_none_or(|values| values.iter().any(|named| named.as_str() == Some(value)))
    };
    if !names("token_endpoint_auth_methods_supported", "private_key_jwt") {
        return Err(AuthError::ClientCredentialsError(
            "the authorization server does not take private_key_jwt at its token endpoint"
                .to_owned(),
        ));
    }
    if !names(
        "token_endpoint_auth_signing_alg_values_supported",
        algorithm,
    ) {
        return Err(AuthError::ClientCredentialsError(format!(
            "the authorization server does not take {algorithm} client assertions"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A P-256 key generated for this test only.
    fn es256() -> ClientKey {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&signature::ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .unwrap();
        ClientKey::from_pkcs8_der("ES256", pkcs8.as_ref()).unwrap()
    }

    #[test]
    fn an_assertion_is_signed_for_the_client_and_the_authorization_server() {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&signature::ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .unwrap();
        let pair = EcdsaKeyPair::from_pkcs8(
            &signature::ECDSA_P256_SHA256_FIXED_SIGNING,
            pkcs8.as_ref(),
            &rng,
        )
        .unwrap();
        let pem = format!(
            "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
            base64::engine::general_purpose::STANDARD.encode(pkcs8.as_ref())
        );
        let key = ClientKey::from_pkcs8_pem("ES256", &pem)
            .unwrap()
            .key_id("k1");
        let assertion = key
            .assertion("reports", "https://auth.example.com", 1_000)
            .unwrap();
        let parts: Vec<&str> = assertion.split('.').collect();
        assert_eq!(parts.len(), 3);
        let decode = |part: &str| {
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(part)
                .unwrap()
        };
        let header: serde_json::Value = serde_json::from_slice(&decode(parts[0])).unwrap();
        assert_eq!(header["alg"], "ES256");
        assert_eq!(header["kid"], "k1");
        let claims: serde_json::Value = serde_json::from_slice(&decode(parts[1])).unwrap();
        assert_eq!(claims["iss"], "reports");
        assert_eq!(claims["sub"], "reports");
        assert_eq!(claims["aud"], "https://auth.example.com");
        assert_eq!(claims["iat"], 1_000);
        assert_eq!(claims["exp"], 1_060);
        assert!(claims["jti"].as_str().is_some_and(|jti| !jti.is_empty()));
        let public = signature::UnparsedPublicKey::new(
            &signature::ECDSA_P256_SHA256_FIXED,
            ring::signature::KeyPair::public_key(&pair).as_ref(),
        );
        public
            .verify(
                format!("{}.{}", parts[0], parts[1]).as_bytes(),
                &decode(parts[2]),
            )
            .expect("the signature verifies with the public key");
        // Each assertion is new.
        assert_ne!(
            key.assertion("reports", "https://auth.example.com", 1_000)
                .unwrap(),
            assertion
        );
    }

    #[test]
    fn a_key_of_another_kind_or_algorithm_is_refused() {
        assert!(ClientKey::from_pkcs8_pem("ES256", "-----BEGIN EC PRIVATE KEY-----").is_err());
        assert!(ClientKey::from_pkcs8_der("HS256", b"secret").is_err());
        assert!(ClientKey::from_pkcs8_der("ES256", b"not a key").is_err());
    }

    #[test]
    fn the_key_is_not_in_debug_output() {
        let shown = format!("{:?}", es256().key_id("k1"));
        assert_eq!(
            shown,
            r#"ClientKey { algorithm: "ES256", key_id: Some("k1"), .. }"#
        );
    }

    #[test]
    fn metadata_that_refuses_the_method_or_the_algorithm_is_not_sent_an_assertion() {
        let mut metadata = AuthorizationMetadata::default();
        assert!(check_metadata(&metadata, "ES256").is_ok());
        metadata.additional_fields.insert(
            "token_endpoint_auth_methods_supported".to_owned(),
            serde_json::json!(["client_secret_basic"]),
        );
        assert!(check_metadata(&metadata, "ES256").is_err());
        metadata.additional_fields.insert(
            "token_endpoint_auth_methods_supported".to_owned(),
            serde_json::json!(["private_key_jwt"]),
        );
        metadata.additional_fields.insert(
            "token_endpoint_auth_signing_alg_values_supported".to_owned(),
            serde_json::json!(["RS256"]),
        );
        assert!(check_metadata(&metadata, "ES256").is_err());
        assert!(check_metadata(&metadata, "RS256").is_ok());
    }
}
