//! `--token-file`: the bearer tokens `mcp serve` accepts, one per line.
//!
//! Blank lines and lines starting with `#` are skipped; each token must be
//! RFC 6750 `b64token` text (the library refuses anything else before the
//! verifier runs). A token is compared with every accepted one, each
//! comparison in time that depends only on the lengths, so the time taken
//! does not tell how much of a guess was right. The principal is
//! `token-N`, N the token's line among the accepted ones: a session
//! belongs to the token that opened it.

use std::fs;

use tiny_mcp::{HttpRequestHead, Principal, TokenError, TokenVerifier};

/// The tokens read from a file.
pub(crate) struct TokenFile {
    tokens: Vec<Vec<u8>>,
}

impl TokenFile {
    /// Reads `path`.
    ///
    /// # Errors
    ///
    /// The file cannot be read, or holds no token.
    pub(crate) fn read(path: &str) -> Result<TokenFile, String> {
        let text = fs::read_to_string(path).map_err(|e| format!("cannot read {}: {}", path, e))?;
        let tokens: Vec<Vec<u8>> = text
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty() && !line.starts_with('#'))
            .map(|line| line.as_bytes().to_vec())
            .collect();
        if tokens.is_empty() {
            return Err(format!("{} holds no token", path));
        }
        Ok(TokenFile { tokens })
    }
}

impl TokenVerifier for TokenFile {
    fn verify(&self, token: &str, _: &HttpRequestHead<'_>) -> Result<Principal, TokenError> {
        let mut found = 0;
        for (n, accepted) in self.tokens.iter().enumerate() {
            // Every token is compared, matched or not.
            if same(accepted, token.as_bytes()) {
                found = n + 1;
            }
        }
        match found {
            0 => Err(TokenError::invalid("unknown token")),
            n => Ok(Principal::new(format!("token-{}", n))),
        }
    }
}

/// `a == b`, in time that depends only on the lengths.
fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::same;

    #[test]
    fn tokens_compare_whole() {
        assert!(same(b"abc", b"abc"));
        assert!(!same(b"abc", b"abd"));
        assert!(!same(b"abc", b"abcd"));
        assert!(!same(b"", b"a"));
    }
}
