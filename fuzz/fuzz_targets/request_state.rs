//! `requestState` decoding (2026-07-28 multi round-trip requests) on
//! arbitrary tokens, as a client may echo anything: the default
//! `ServerStateStore` and the HMAC `SealedStateCodec` must refuse what they
//! did not make, without panicking, and give back what they made.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::json;
use tiny_mcp::{RequestStateCodec, SealedStateCodec, ServerStateStore};

fuzz_target!(|data: &[u8]| {
    let token = String::from_utf8_lossy(data);
    let store = ServerStateStore::default();
    assert!(store.decode(&token).is_err(), "an unknown key decoded");
    let sealed = SealedStateCodec::from_keys(vec![b"a fuzzing key of at least 32 bytes".to_vec()])
        .expect("a long enough key");
    let _ = sealed.decode(&token);
    // What the codec made decodes to what it was given.
    let state = json!({"input": token});
    let made = sealed.encode(&state).expect("encodes");
    assert_eq!(sealed.decode(&made).expect("decodes its own"), state);
});
