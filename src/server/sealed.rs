//! `SealedStateCodec`: a `requestState` that any instance holding the same
//! keys can verify, so that a 2026-07-28 retry may land on any instance
//! behind a load balancer (feature `sealed-state`; DESIGN.md §16).
//!
//! A token is `v1.<key id>.<expiry>.<payload>.<tag>`: the state as JSON in
//! base64url (no padding), its expiry in Unix seconds, and the HMAC-SHA256
//! (RFC 2104, FIPS 180-4) of everything before the tag under the key named
//! by its id, in base64url. The core binds the state to its request
//! (method, tool/prompt/URI name, arguments) and to the principal before
//! it is sealed, and checks both after it is opened (`input/mod.rs`).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hmac::{Hmac, Mac};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::input::RequestStateCodec;
use crate::base64::{self, Alphabet};
use crate::error::Error;

/// The shortest key accepted, in bytes (the HMAC-SHA256 output size, RFC
/// 2104 §3).
const MIN_KEY_BYTES: usize = 32;
/// The envelope's version: a change of format gets a new one.
const VERSION: &str = "v1";

/// Seals `requestState` with HMAC-SHA256 under a key ring shared by every
/// instance (feature `sealed-state`). Set it with
/// [`ServerBuilder::request_state_codec`](crate::ServerBuilder::request_state_codec).
///
/// - Keys are `(id, bytes)`, newest first: the newest signs, every key in
///   the ring verifies, so a key is rotated in by adding it in front on
///   every instance and out by removing it once the TTL has passed.
/// - A token lives for the TTL (default 10 minutes, like the in-memory
///   store's).
/// - Every failure (tampered, truncated, expired, unknown key, another
///   request or principal) is `-32602` with a short reason that says
///   nothing of the state.
///
/// - **It stores nothing on the server**, so no caller's flood of first
///   calls can crowd out another's pending state: the per-caller shares
///   of [`ServerStateStore`](crate::ServerStateStore) do not apply, and
///   this is the codec for a busy server (DESIGN.md §26).
///
/// What it does not do:
/// - **It signs; it does not encrypt.** The client can read the state: the
///   answers it gave, the handler's own state
///   ([`RequestContext::set_request_state`](crate::RequestContext::set_request_state)),
///   the request's name and arguments and the principal's subject and
///   client id. Put nothing there the client may not see.
/// - **No single use across instances.** Until it expires a token can be
///   replayed on any instance, for the same request by the same principal:
///   handlers reached from a retry must be idempotent, as the era requires
///   anyway. Single use needs a shared store (a custom
///   [`RequestStateCodec`]).
///
/// ```
/// use std::time::Duration;
/// use tiny_mcp::{SealedStateCodec, Server};
///
/// let key = [7u8; 32]; // in production: 32+ random bytes shared by all instances
/// let codec = SealedStateCodec::new(vec![("k1".to_string(), key.to_vec())])?
///     .with_ttl(Duration::from_secs(300));
/// let server = Server::builder("demo", "1.0.0").request_state_codec(codec).build();
/// # let _ = server;
/// # Ok::<(), tiny_mcp::Error>(())
/// ```
///
/// Spec: MRTR-5 (2026-07-28: `requestState` is attacker-controlled).
pub struct SealedStateCodec {
    keys: Vec<(String, Vec<u8>)>,
    ttl: Duration,
}

impl std::fmt::Debug for SealedStateCodec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ids: Vec<&str> = self.keys.iter().map(|(id, _)| id.as_str()).collect();
        f.debug_struct("SealedStateCodec")
            .field("key_ids", &ids)
            .field("ttl", &self.ttl)
            .finish()
    }
}

impl SealedStateCodec {
    /// A codec with the key ring `keys`, `(id, key)` newest first.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParams`](crate::ErrorKind::InvalidParams) for an
    /// empty ring, a key shorter than 32 bytes, an id that is empty, longer
    /// than 32 bytes or not `[A-Za-z0-9_-]`, or two keys with one id.
    pub fn new(keys: Vec<(String, Vec<u8>)>) -> Result<SealedStateCodec, Error> {
        if keys.is_empty() {
            return Err(Error::invalid_params("the key ring is empty"));
        }
        for (i, (id, key)) in keys.iter().enumerate() {
            let id_ok = !id.is_empty()
                && id.len() <= 32
                && id
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
            if !id_ok {
                return Err(Error::invalid_params(format!("bad key id {:?}", id)));
            }
            if key.len() < MIN_KEY_BYTES {
                return Err(Error::invalid_params(format!(
                    "key {} has {} bytes; at least {} are needed",
                    id,
                    key.len(),
                    MIN_KEY_BYTES
                )));
            }
            if keys[..i].iter().any(|(other, _)| other == id) {
                return Err(Error::invalid_params(format!("two keys named {}", id)));
            }
        }
        Ok(SealedStateCodec {
            keys,
            ttl: Duration::from_secs(600),
        })
    }

    /// A codec whose keys (newest first) are named by their digest: the
    /// first 8 bytes of SHA-256 over `tiny-mcp key id` and the key, in
    /// hex. Every instance given the same keys names them alike, in any
    /// order, and the id says nothing useful of the key.
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new).
    pub fn from_keys(keys: Vec<Vec<u8>>) -> Result<SealedStateCodec, Error> {
        let named = keys
            .into_iter()
            .map(|key| {
                let digest = Sha256::new()
                    .chain_update(b"tiny-mcp key id")
                    .chain_update(&key)
                    .finalize();
                let id: String = digest[..8].iter().map(|b| format!("{:02x}", b)).collect();
                (id, key)
            })
            .collect();
        SealedStateCodec::new(named)
    }

    /// Sets how long a token is valid. Defaults to 10 minutes.
    pub fn with_ttl(mut self, ttl: Duration) -> SealedStateCodec {
        self.ttl = ttl;
        self
    }

    fn key(&self, id: &str) -> Option<&[u8]> {
        self.keys
            .iter()
            .find(|(k, _)| k == id)
            .map(|(_, key)| key.as_slice())
    }
}

/// HMAC-SHA256 of `data` under `key`.
fn tag(key: &[u8], data: &[u8]) -> Vec<u8> {
    let mut mac = mac(key);
    mac.update(data);
    mac.finalize().into_bytes().to_vec()
}

fn mac(key: &[u8]) -> Hmac<Sha256> {
    // HMAC takes keys of any length (RFC 2104 §2): this cannot fail.
    match Hmac::<Sha256>::new_from_slice(key) {
        Ok(mac) => mac,
        Err(_) => unreachable!("HMAC accepts keys of every length"),
    }
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl RequestStateCodec for SealedStateCodec {
    fn encode(&self, state: &Value) -> Result<String, Error> {
        let (id, key) = &self.keys[0];
        let expiry = now_secs().saturating_add(self.ttl.as_secs());
        let payload = base64url(&serde_json::to_vec(state)?);
        let signed = format!("{}.{}.{}.{}", VERSION, id, expiry, payload);
        let tag = base64url(&tag(key, signed.as_bytes()));
        Ok(format!("{}.{}", signed, tag))
    }

    fn decode(&self, token: &str) -> Result<Value, Error> {
        let invalid = || Error::invalid_params("the state is not valid");
        let (signed, tag) = token.rsplit_once('.').ok_or_else(invalid)?;
        let parts: Vec<&str> = signed.split('.').collect();
        let (version, id, expiry, payload) = match parts.as_slice() {
            [version, id, expiry, payload] => (*version, *id, *expiry, *payload),
            _ => return Err(invalid()),
        };
        if version != VERSION {
            return Err(invalid());
        }
        let key = self
            .key(id)
            .ok_or_else(|| Error::invalid_params("the state's key is not known"))?;
        let tag = from_base64url(tag).ok_or_else(invalid)?;
        let mut mac = mac(key);
        mac.update(signed.as_bytes());
        // Constant time (the `subtle` crate, inside `hmac`).
        mac.verify_slice(&tag).map_err(|_| invalid())?;
        let expiry: u64 = expiry.parse().map_err(|_| invalid())?;
        if expiry < now_secs() {
            return Err(Error::invalid_params("the state has expired"));
        }
        let json = from_base64url(payload).ok_or_else(invalid)?;
        serde_json::from_slice(&json).map_err(|_| invalid())
    }
}

/// base64url without padding (RFC 4648 §5).
fn base64url(bytes: &[u8]) -> String {
    base64::encode_unpadded(bytes, Alphabet::Url)
}

/// The bytes of unpadded base64url `text`; `None` if it is not, or not in
/// its one canonical form (the unused low bits of the last character are
/// zero), so that no two tokens open to the same state.
fn from_base64url(text: &str) -> Option<Vec<u8>> {
    let bytes = base64::decode_unpadded(text, Alphabet::Url)?;
    if base64url(&bytes) != text {
        return None;
    }
    Some(bytes)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{:02x}", b)).collect()
    }

    // RFC 4231 §4.2, §4.3, §4.7 (test cases 1, 2 and 6).
    #[test]
    fn hmac_sha256_test_vectors() {
        assert_eq!(
            hex(&tag(&[0x0b; 20], b"Hi There")),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        );
        assert_eq!(
            hex(&tag(b"Jefe", b"what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        assert_eq!(
            hex(&tag(
                &[0xaa; 131],
                b"Test Using Larger Than Block-Size Key - Hash Key First"
            )),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
    }

    // RFC 4648 §10, in the URL-safe alphabet and without padding.
    #[test]
    fn base64url_round_trips_canonically() {
        let cases = [
            ("", ""),
            ("f", "Zg"),
            ("fo", "Zm8"),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg"),
        ];
        for (plain, coded) in cases.iter() {
            assert_eq!(base64url(plain.as_bytes()), *coded);
            assert_eq!(from_base64url(coded).as_deref(), Some(plain.as_bytes()));
        }
        assert_eq!(base64url(&[0xfb, 0xff]), "-_8");
        assert_eq!(from_base64url("Zh"), None, "non-zero unused bits");
        assert_eq!(from_base64url("Z"), None);
        assert_eq!(from_base64url("Zm9v="), None);
    }

    fn ring(ids: &[(&str, u8)]) -> SealedStateCodec {
        let keys = ids
            .iter()
            .map(|(id, b)| (id.to_string(), vec![*b; 32]))
            .collect();
        SealedStateCodec::new(keys).expect("a valid ring")
    }

    #[test]
    fn round_trip_and_rotation() {
        let state = json!({"method": "tools/call", "answers": {"a": 1}});
        let old = ring(&[("k1", 1)]);
        let token = old.encode(&state).unwrap();
        assert!(token.starts_with("v1.k1."), "{}", token);
        assert_eq!(old.decode(&token).unwrap(), state);
        // k2 rotated in: it signs, k1 still verifies; k1 rotated out: its
        // tokens are refused.
        let rotated = ring(&[("k2", 2), ("k1", 1)]);
        assert_eq!(rotated.decode(&token).unwrap(), state);
        assert!(rotated.encode(&state).unwrap().starts_with("v1.k2."));
        let without_k1 = ring(&[("k2", 2)]);
        let error = without_k1.decode(&token).unwrap_err().to_string();
        assert!(error.contains("key is not known"), "{}", error);
    }

    #[test]
    fn every_failure_is_refused() {
        let codec = ring(&[("k1", 1)]);
        let token = codec.encode(&json!({"secret": "s3"})).unwrap();
        let (signed, tag) = token.rsplit_once('.').unwrap();
        let mut flipped = tag.as_bytes().to_vec();
        flipped[0] = if flipped[0] == b'A' { b'B' } else { b'A' };
        let forged_payload = format!(
            "v1.k1.{}.{}",
            signed.split('.').nth(2).unwrap(),
            base64url(br#"{"secret":"mine"}"#)
        );
        let cases = [
            format!("{}.{}", signed, String::from_utf8(flipped).unwrap()),
            format!("{}.{}", forged_payload, tag),
            format!("v2{}", &token[2..]),
            token[..token.len() - 3].to_string(),
            "v1.k1.1.e30".to_string(),
            "garbage".to_string(),
            String::new(),
        ];
        for case in cases.iter() {
            let error = codec.decode(case).expect_err(case);
            assert!(!error.to_string().contains("s3"), "{}", error);
        }
        let other = ring(&[("k1", 9)]);
        assert!(other.decode(&token).is_err(), "another key of the same id");
        let expired = ring(&[("k1", 1)]).with_ttl(Duration::from_secs(0));
        let stale = expired.encode(&json!(1)).unwrap();
        let (signed, _) = stale.rsplit_once('.').unwrap();
        let parts: Vec<&str> = signed.split('.').collect();
        let past = format!("v1.k1.{}.{}", now_secs() - 1, parts[3]);
        let past = format!(
            "{}.{}",
            past,
            base64url(&super::tag(&[1; 32], past.as_bytes()))
        );
        let error = codec.decode(&past).unwrap_err().to_string();
        assert!(error.contains("expired"), "{}", error);
    }

    #[test]
    fn keys_named_by_their_digest() {
        let a = SealedStateCodec::from_keys(vec![vec![1; 32], vec![2; 32]]).unwrap();
        let b = SealedStateCodec::from_keys(vec![vec![2; 32]]).unwrap();
        assert_eq!(a.keys[1].0, b.keys[0].0, "the same key, the same id");
        assert_eq!(a.keys[0].0.len(), 16);
        let token = b.encode(&json!("s")).unwrap();
        assert_eq!(
            a.decode(&token).unwrap(),
            json!("s"),
            "rotated: the old key verifies"
        );
    }

    #[test]
    fn bad_rings_are_refused() {
        let key = vec![0u8; 32];
        assert!(SealedStateCodec::new(Vec::new()).is_err());
        assert!(SealedStateCodec::new(vec![("k".into(), vec![0; 31])]).is_err());
        assert!(SealedStateCodec::new(vec![("".into(), key.clone())]).is_err());
        assert!(SealedStateCodec::new(vec![("a.b".into(), key.clone())]).is_err());
        let twice = vec![("k".into(), key.clone()), ("k".into(), key)];
        assert!(SealedStateCodec::new(twice).is_err());
    }
}
