//! Base64 (RFC 4648), the two forms the crate reads: standard with
//! padding (the `=?base64?…?=` header values of 2026-07-28 HTTP) and
//! URL-safe without padding (sealed `requestState`, PKCE), and writes
//! standard with padding (HTTP Basic credentials) too. Knows nothing of MCP.

/// Which 64 characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Alphabet {
    /// `+` and `/` (RFC 4648 §4).
    Standard,
    /// `-` and `_` (RFC 4648 §5).
    Url,
}

impl Alphabet {
    fn value(self, c: u8) -> Option<u32> {
        let v = match (c, self) {
            (b'A'..=b'Z', _) => c - b'A',
            (b'a'..=b'z', _) => c - b'a' + 26,
            (b'0'..=b'9', _) => c - b'0' + 52,
            (b'+', Alphabet::Standard) | (b'-', Alphabet::Url) => 62,
            (b'/', Alphabet::Standard) | (b'_', Alphabet::Url) => 63,
            _ => return None,
        };
        Some(u32::from(v))
    }

    fn char(self, v: u32) -> char {
        const UPPER_LOWER_DIGITS: &[u8; 62] =
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        match (v, self) {
            (62, Alphabet::Standard) => '+',
            (63, Alphabet::Standard) => '/',
            (62, Alphabet::Url) => '-',
            (63, Alphabet::Url) => '_',
            (v, _) => UPPER_LOWER_DIGITS[v as usize] as char,
        }
    }
}

/// Standard base64 with its padding required (a length that is a multiple
/// of 4, at most two `=` at the end); `None` for anything else.
pub(crate) fn decode_padded(text: &str) -> Option<Vec<u8>> {
    if text.len() % 4 != 0 {
        return None;
    }
    let body = text
        .strip_suffix("==")
        .or_else(|| text.strip_suffix('='))
        .unwrap_or(text);
    decode_unpadded(body, Alphabet::Standard)
}

/// Base64 without padding in `alphabet`; `None` for a character outside
/// it or a length that no bytes encode to.
pub(crate) fn decode_unpadded(text: &str, alphabet: Alphabet) -> Option<Vec<u8>> {
    if text.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    for chunk in text.as_bytes().chunks(4) {
        let mut n = 0u32;
        for (i, c) in chunk.iter().enumerate() {
            n |= alphabet.value(*c)? << (18 - 6 * i);
        }
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&bytes[..chunk.len() - 1]);
    }
    Some(out)
}

/// Standard base64 with padding (the client's `=?base64?…?=` headers).
pub(crate) fn encode_padded(bytes: &[u8]) -> String {
    let mut out = encode_unpadded(bytes, Alphabet::Standard);
    while out.len() % 4 != 0 {
        out.push('=');
    }
    out
}

/// `bytes` in base64 without padding, in `alphabet`.
pub(crate) fn encode_unpadded(bytes: &[u8], alphabet: Alphabet) -> String {
    let mut out = String::with_capacity(bytes.len() * 4 / 3 + 3);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..=chunk.len() {
            out.push(alphabet.char(n >> (18 - 6 * i) & 63));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    // RFC 4648 §10.
    #[test]
    fn test_vectors() {
        let cases = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (plain, coded) in cases.iter() {
            assert_eq!(
                decode_padded(coded).as_deref(),
                Some(plain.as_bytes()),
                "{}",
                coded
            );
        }
        for bad in ["Zg", "Zg=", "Z===", "Zg==Zg==", "Zm9v-_8=", "Zm 9"].iter() {
            assert_eq!(decode_padded(bad), None, "{}", bad);
        }
        assert_eq!(
            decode_unpadded("-_8", Alphabet::Url).as_deref(),
            Some(&[0xfb, 0xff][..])
        );
        assert_eq!(decode_unpadded("+/8", Alphabet::Url), None);
    }
}
