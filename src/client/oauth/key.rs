//! The client's own key (feature `jwt`): JWT client assertions for
//! `private_key_jwt` authentication at the token endpoint (RFC 7523 §2.2,
//! §3; OpenID Connect Core §9), signed with ring.

use std::fmt;

use ring::rand::SystemRandom;
use ring::signature::{
    EcdsaKeyPair, RsaKeyPair, ECDSA_P256_SHA256_FIXED_SIGNING, RSA_PKCS1_SHA256,
};
use serde_json::json;

use super::store::now_secs;
use crate::base64::{decode_padded, encode_unpadded, Alphabet};
use crate::error::Error;

/// How long an assertion is valid: five minutes (RFC 7523 §3 wants a
/// short `exp`).
const LIFETIME_SECS: u64 = 300;

/// A private key the client proves itself with: `ES256` (ECDSA P-256) or
/// `RS256` (RSA PKCS#1 v1.5, SHA-256). Give it to
/// [`OAuth::private_key_jwt`](super::OAuth::private_key_jwt) or
/// [`OAuth::client_credentials_jwt`](super::OAuth::client_credentials_jwt);
/// the authorization server knows the public half (its JWKS or the
/// client's registration).
pub struct ClientKey {
    pair: Pair,
    key_id: Option<String>,
    rng: SystemRandom,
}

enum Pair {
    Es256(EcdsaKeyPair),
    Rs256(RsaKeyPair),
}

impl fmt::Debug for ClientKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientKey")
            .field("algorithm", &self.algorithm())
            .field("key_id", &self.key_id)
            .finish_non_exhaustive()
    }
}

impl ClientKey {
    /// A PKCS#8 private key in PEM (`-----BEGIN PRIVATE KEY-----`) for
    /// `algorithm`, `"ES256"` or `"RS256"`.
    ///
    /// # Errors
    /// Another algorithm, text that is not such a PEM block, or a key that
    /// is not of the algorithm's kind. The message never shows the key.
    pub fn from_pkcs8_pem(pem: &str, algorithm: &str) -> Result<ClientKey, Error> {
        let der = pem_block(pem, "PRIVATE KEY")
            .ok_or_else(|| Error::msg("the client key is not a PKCS#8 PEM block (PRIVATE KEY)"))?;
        let rng = SystemRandom::new();
        let rejected = |e: ring::error::KeyRejected| {
            Error::msg(format!(
                "the client key is not a usable {} key: {}",
                algorithm, e
            ))
        };
        let pair = match algorithm {
            "ES256" => Pair::Es256(
                EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &der, &rng)
                    .map_err(rejected)?,
            ),
            "RS256" => Pair::Rs256(RsaKeyPair::from_pkcs8(&der).map_err(rejected)?),
            other => {
                return Err(Error::msg(format!(
                    "client key algorithm {:?}: ES256 or RS256",
                    other.chars().take(20).collect::<String>()
                )))
            }
        };
        Ok(ClientKey {
            pair,
            key_id: None,
            rng,
        })
    }

    /// The `kid` the assertions' header names, for a server that knows
    /// several of the client's keys. Default: none.
    pub fn key_id(mut self, kid: &str) -> ClientKey {
        self.key_id = Some(kid.into());
        self
    }

    /// `"ES256"` or `"RS256"`.
    pub fn algorithm(&self) -> &'static str {
        match self.pair {
            Pair::Es256(_) => "ES256",
            Pair::Rs256(_) => "RS256",
        }
    }

    /// A client assertion (RFC 7523 §3): `iss` and `sub` the client id,
    /// `aud` the authorization server's issuer, `iat`, `exp` five minutes
    /// later, a random `jti`.
    pub(crate) fn assertion(&self, client_id: &str, audience: &str) -> Result<String, Error> {
        let mut header = json!({ "alg": self.algorithm(), "typ": "JWT" });
        if let Some(kid) = &self.key_id {
            header["kid"] = json!(kid);
        }
        let now = now_secs();
        let claims = json!({
            "iss": client_id,
            "sub": client_id,
            "aud": audience,
            "iat": now,
            "exp": now + LIFETIME_SECS,
            "jti": uuid::Uuid::new_v4().to_string(),
        });
        let part = |value: &serde_json::Value| {
            encode_unpadded(value.to_string().as_bytes(), Alphabet::Url)
        };
        let input = format!("{}.{}", part(&header), part(&claims));
        let signature = self.sign(input.as_bytes())?;
        Ok(format!(
            "{}.{}",
            input,
            encode_unpadded(&signature, Alphabet::Url)
        ))
    }

    fn sign(&self, message: &[u8]) -> Result<Vec<u8>, Error> {
        let failed = |_| Error::msg("signing the client assertion failed");
        match &self.pair {
            Pair::Es256(pair) => Ok(pair
                .sign(&self.rng, message)
                .map_err(failed)?
                .as_ref()
                .to_vec()),
            Pair::Rs256(pair) => {
                let mut signature = vec![0; pair.public().modulus_len()];
                pair.sign(&RSA_PKCS1_SHA256, &self.rng, message, &mut signature)
                    .map_err(failed)?;
                Ok(signature)
            }
        }
    }
}

/// The bytes of the first `-----BEGIN {label}-----` block of `pem`.
fn pem_block(pem: &str, label: &str) -> Option<Vec<u8>> {
    let begin = format!("-----BEGIN {}-----", label);
    let end = format!("-----END {}-----", label);
    let start = pem.find(&begin)? + begin.len();
    let stop = start + pem[start..].find(&end)?;
    let text: String = pem[start..stop]
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    decode_padded(&text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ring::signature::{KeyPair, UnparsedPublicKey, ECDSA_P256_SHA256_FIXED};

    // RFC 7523 §3: a compact JWS whose signature verifies with the public
    // key, and whose claims name the client and the audience.
    #[test]
    fn es256_assertions_verify() {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        let body = crate::base64::encode_padded(pkcs8.as_ref());
        let pem = format!(
            "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
            body
        );
        let key = ClientKey::from_pkcs8_pem(&pem, "ES256").unwrap();
        let jwt = key.assertion("client-1", "https://as.example").unwrap();
        let parts: Vec<&str> = jwt.split('.').collect();
        assert_eq!(parts.len(), 3);
        let claims = crate::base64::decode_unpadded(parts[1], Alphabet::Url).unwrap();
        let claims: serde_json::Value = serde_json::from_slice(&claims).unwrap();
        assert_eq!(claims["iss"], "client-1");
        assert_eq!(claims["sub"], "client-1");
        assert_eq!(claims["aud"], "https://as.example");
        let signature = crate::base64::decode_unpadded(parts[2], Alphabet::Url).unwrap();
        let pair = match &key.pair {
            Pair::Es256(pair) => pair,
            Pair::Rs256(_) => panic!("an ES256 key"),
        };
        let public = UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, pair.public_key().as_ref());
        let input = format!("{}.{}", parts[0], parts[1]);
        assert!(public.verify(input.as_bytes(), &signature).is_ok());
    }

    #[test]
    fn bad_keys_are_refused_without_echo() {
        assert!(ClientKey::from_pkcs8_pem("not a key", "ES256").is_err());
        let pem = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----";
        let e = ClientKey::from_pkcs8_pem(pem, "ES256")
            .unwrap_err()
            .to_string();
        assert!(!e.contains("AAAA"), "{}", e);
        assert!(ClientKey::from_pkcs8_pem(pem, "HS256").is_err());
    }
}
