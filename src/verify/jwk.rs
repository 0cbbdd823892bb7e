//! JSON Web Keys (RFC 7517) as ring public keys, each bound to the one
//! algorithm (RFC 7518 §3) it verifies: the algorithm comes from the key
//! (`kty`, `crv`, `alg`), and a token that names another is refused
//! (RFC 8725 §3.1). Symmetric (`oct`) keys are never read.

use ring::signature::{self, RsaPublicKeyComponents, UnparsedPublicKey};
use serde_json::Value;

use crate::base64::{decode_unpadded, Alphabet};

/// The signature algorithms a key may verify.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Alg {
    Rs256,
    Rs384,
    Rs512,
    Ps256,
    Es256,
    Es384,
    EdDsa,
}

impl Alg {
    /// The algorithm a JWS header's `alg` names, if supported.
    pub(crate) fn from_name(name: &str) -> Option<Alg> {
        Some(match name {
            "RS256" => Alg::Rs256,
            "RS384" => Alg::Rs384,
            "RS512" => Alg::Rs512,
            "PS256" => Alg::Ps256,
            "ES256" => Alg::Es256,
            "ES384" => Alg::Es384,
            "EdDSA" => Alg::EdDsa,
            _ => return None,
        })
    }

    fn is_rsa(self) -> bool {
        matches!(self, Alg::Rs256 | Alg::Rs384 | Alg::Rs512 | Alg::Ps256)
    }
}

/// A verification key from a JWKS.
#[derive(Debug, Clone)]
pub(crate) struct Jwk {
    /// `kid`, if the set names it.
    pub(crate) kid: Option<String>,
    /// The one algorithm this key verifies.
    pub(crate) alg: Alg,
    key: PublicKey,
}

#[derive(Debug, Clone)]
enum PublicKey {
    /// Modulus and exponent, big-endian.
    Rsa { n: Vec<u8>, e: Vec<u8> },
    /// An uncompressed point: `04 || x || y`.
    Ec(Vec<u8>),
    /// 32 bytes.
    Ed25519(Vec<u8>),
}

impl Jwk {
    /// The key `value` describes, or why it is skipped: another use than
    /// `sig`, an unsupported type, curve or algorithm, a malformed member.
    /// An RSA key without `alg` verifies RS256 only.
    pub(crate) fn parse(value: &Value) -> Result<Jwk, String> {
        let text = |name: &str| value.get(name).and_then(Value::as_str);
        if text("use").map_or(false, |u| u != "sig") {
            return Err("a key for another use than sig".into());
        }
        let named = text("alg");
        let (alg, key) = match (text("kty"), text("crv")) {
            (Some("RSA"), _) => {
                let alg = match named {
                    None => Alg::Rs256,
                    Some(name) => Alg::from_name(name)
                        .filter(|a| a.is_rsa())
                        .ok_or_else(|| format!("an RSA key for alg {}", name))?,
                };
                let n = member(value, "n")?;
                let e = member(value, "e")?;
                (alg, PublicKey::Rsa { n, e })
            }
            (Some("EC"), Some(crv)) => {
                let (alg, size) = match crv {
                    "P-256" => (Alg::Es256, 32),
                    "P-384" => (Alg::Es384, 48),
                    _ => return Err(format!("an EC key on curve {}", crv)),
                };
                let (x, y) = (member(value, "x")?, member(value, "y")?);
                if x.len() != size || y.len() != size {
                    return Err("an EC key with coordinates of the wrong size".into());
                }
                let mut point = vec![4];
                point.extend_from_slice(&x);
                point.extend_from_slice(&y);
                (alg, PublicKey::Ec(point))
            }
            (Some("OKP"), Some("Ed25519")) => (Alg::EdDsa, PublicKey::Ed25519(member(value, "x")?)),
            (kty, crv) => return Err(format!("a key of type {:?} {:?}", kty, crv)),
        };
        if named.map_or(false, |name| Alg::from_name(name) != Some(alg)) {
            return Err("a key whose alg does not fit its type".into());
        }
        Ok(Jwk {
            kid: text("kid").map(str::to_string),
            alg,
            key,
        })
    }

    /// `true` if `signature` over `message` verifies with this key and
    /// algorithm.
    pub(crate) fn verifies(&self, message: &[u8], signature: &[u8]) -> bool {
        let rsa: &'static signature::RsaParameters = match self.alg {
            Alg::Rs256 => &signature::RSA_PKCS1_2048_8192_SHA256,
            Alg::Rs384 => &signature::RSA_PKCS1_2048_8192_SHA384,
            Alg::Rs512 => &signature::RSA_PKCS1_2048_8192_SHA512,
            Alg::Ps256 => &signature::RSA_PSS_2048_8192_SHA256,
            Alg::Es256 => {
                return self.unparsed(&signature::ECDSA_P256_SHA256_FIXED, message, signature)
            }
            Alg::Es384 => {
                return self.unparsed(&signature::ECDSA_P384_SHA384_FIXED, message, signature)
            }
            Alg::EdDsa => return self.unparsed(&signature::ED25519, message, signature),
        };
        match &self.key {
            PublicKey::Rsa { n, e } => RsaPublicKeyComponents { n, e }
                .verify(rsa, message, signature)
                .is_ok(),
            _ => false,
        }
    }

    fn unparsed(
        &self,
        algorithm: &'static dyn signature::VerificationAlgorithm,
        message: &[u8],
        signature: &[u8],
    ) -> bool {
        let bytes = match &self.key {
            PublicKey::Ec(bytes) | PublicKey::Ed25519(bytes) => bytes,
            PublicKey::Rsa { .. } => return false,
        };
        UnparsedPublicKey::new(algorithm, bytes)
            .verify(message, signature)
            .is_ok()
    }
}

/// A base64url member of the key.
fn member(value: &Value, name: &str) -> Result<Vec<u8>, String> {
    value
        .get(name)
        .and_then(Value::as_str)
        .and_then(|text| decode_unpadded(text, Alphabet::Url))
        .filter(|bytes| !bytes.is_empty())
        .ok_or_else(|| format!("a key without a valid {:?}", name))
}

/// The SHA-256 of `data` by ring, the accepted-token cache's key: ring
/// uses the CPU's SHA extensions where there are some, and a token is
/// hashed on every request.
pub(super) fn sha256(data: &[u8]) -> [u8; 32] {
    let digest = ring::digest::digest(&ring::digest::SHA256, data);
    let mut out = [0u8; 32];
    out.copy_from_slice(digest.as_ref());
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    // RFC 7518 §6 / RFC 8037 §2: the algorithm comes from the key; an RSA
    // key without `alg` is RS256; `oct`, other uses and misfits are
    // skipped (RFC 8725 §3.1).
    #[test]
    fn the_key_decides_the_algorithm() {
        let rsa = json!({"kty": "RSA", "kid": "r", "n": "AQAB", "e": "AQAB"});
        assert_eq!(Jwk::parse(&rsa).map(|k| k.alg), Ok(Alg::Rs256));
        let mut ps = rsa.clone();
        ps["alg"] = json!("PS256");
        assert_eq!(Jwk::parse(&ps).map(|k| k.alg), Ok(Alg::Ps256));
        let xy = "A".repeat(43);
        let ec = json!({"kty": "EC", "crv": "P-256", "x": xy, "y": xy});
        assert_eq!(Jwk::parse(&ec).map(|k| k.alg), Ok(Alg::Es256));
        let ed = json!({"kty": "OKP", "crv": "Ed25519", "x": xy});
        assert_eq!(Jwk::parse(&ed).map(|k| k.alg), Ok(Alg::EdDsa));
        let refused = [
            json!({"kty": "oct", "k": "c2VjcmV0"}),
            json!({"kty": "RSA", "alg": "HS256", "n": "AQAB", "e": "AQAB"}),
            json!({"kty": "RSA", "use": "enc", "n": "AQAB", "e": "AQAB"}),
            json!({"kty": "EC", "crv": "P-256", "alg": "ES384", "x": xy, "y": xy}),
            json!({"kty": "EC", "crv": "P-384", "x": xy, "y": xy}),
            json!({"kty": "EC", "crv": "secp256k1", "x": xy, "y": xy}),
            json!({"kty": "RSA", "n": "!!", "e": "AQAB"}),
        ];
        for key in refused.iter() {
            assert!(Jwk::parse(key).is_err(), "{}", key);
        }
    }

    // A bogus key or signature never verifies, and never panics.
    #[test]
    fn garbage_does_not_verify() {
        let xy = "A".repeat(43);
        for key in [
            json!({"kty": "RSA", "n": "AQAB", "e": "AQAB"}),
            json!({"kty": "EC", "crv": "P-256", "x": xy, "y": xy}),
            json!({"kty": "OKP", "crv": "Ed25519", "x": xy}),
        ] {
            let key = Jwk::parse(&key).expect("parsed");
            assert!(!key.verifies(b"message", &[0; 64]));
            assert!(!key.verifies(b"", &[]));
        }
    }
}
