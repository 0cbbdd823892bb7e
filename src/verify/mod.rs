//! Token verifiers in the crate (DESIGN.md §28): [`JwtVerifier`] (feature
//! `jwt`) checks signed JWT access tokens against a JWKS; and
//! [`IntrospectionVerifier`] asks the authorization server (RFC 7662).
//! Both are [`TokenVerifier`](crate::TokenVerifier)s for a
//! [`ProtectedResource`](crate::ProtectedResource), share the claim rules
//! of `claims.rs`, and reach the authorization server with the client's
//! HTTP code (`client::oauth::fetch`: one deadline per exchange, a
//! bounded body, `https://` through the `tls` feature).

mod cache;
mod claims;
mod introspect;
#[cfg(feature = "jwt")]
mod jwk;
#[cfg(feature = "jwt")]
mod jwks;
#[cfg(feature = "jwt")]
mod jwt;

use std::time::Duration;

pub use introspect::{IntrospectionVerifier, IntrospectionVerifierBuilder};
#[cfg(feature = "jwt")]
pub use jwt::{JwtVerifier, JwtVerifierBuilder};

use crate::client::oauth::fetch::Fetcher;
use crate::error::Error;

/// The fetcher for `url`: one deadline of `timeout` for a whole exchange,
/// bodies up to `max_bytes`.
///
/// # Errors
/// A URL that is not `http://` or `https://`, or `https://` without the
/// `tls` feature.
fn fetcher(url: &str, timeout: Duration, max_bytes: usize) -> Result<Fetcher, Error> {
    let https = url.starts_with("https://");
    if !https && !url.starts_with("http://") {
        return Err(Error::msg(format!(
            "a JWKS or introspection URL must be http:// or https://, not {:?}",
            crate::client::oauth::fetch::shown(url)
        )));
    }
    if https && !cfg!(feature = "tls") {
        return Err(Error::msg(
            "an https:// JWKS or introspection URL needs tiny-mcp's `tls` feature",
        ));
    }
    let mut fetcher = Fetcher::standalone();
    fetcher.timeout = timeout;
    fetcher.connect_timeout = fetcher.connect_timeout.min(timeout);
    fetcher.max_bytes = max_bytes;
    Ok(fetcher)
}
