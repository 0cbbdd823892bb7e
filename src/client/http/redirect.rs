//! Which redirects the client follows (RFC 9110 §15.4): `307` and `308`
//! to the same origin, which keep the method, body and headers (a server
//! that moved `/mcp` to `/mcp/`), at most [`MAX_REDIRECTS`] in a row.
//! Every other redirect is the request's error, naming where the server
//! pointed: `301`, `302` and `303` may turn a request into a `GET`, and a
//! redirect to another origin would hand it the session and the bearer
//! token (basic/authorization "Token Handling": a token is for its
//! resource only).

use crate::client::wire::{Endpoint, Head};
use crate::error::{Error, ErrorKind};

/// Redirects followed for one request at most; one more is an error.
pub(super) const MAX_REDIRECTS: usize = 5;

/// Where a response sends the request next: `Ok(None)` when it is not a
/// redirect (or one without a `Location`, reported as any other status),
/// `Ok(Some(target))` for a same-origin `307` or `308` within the limit,
/// the error otherwise. `hops` counts the redirects already followed.
pub(super) fn next_hop(
    from: &Endpoint,
    head: &Head,
    hops: usize,
) -> Result<Option<Endpoint>, Error> {
    if !matches!(head.status, 301 | 302 | 303 | 307 | 308) {
        return Ok(None);
    }
    let location = match head.header("location") {
        Some(location) => location,
        None => return Ok(None),
    };
    let refused = |why: String| {
        Err(Error::new(ErrorKind::Http {
            status: head.status,
            challenge: None,
            body: why,
        }))
    };
    let target = match resolve(from, location) {
        Ok(target) => target,
        Err(()) => return refused("redirected to a Location that is not an http(s) URL".into()),
    };
    let shown = shown(&target);
    if !same_origin(from, &target) {
        return refused(format!(
            "redirected to {}, another origin: not followed",
            shown
        ));
    }
    if !matches!(head.status, 307 | 308) {
        return refused(format!(
            "redirected to {}: not followed (only 307 and 308 keep the request as sent)",
            shown
        ));
    }
    if hops >= MAX_REDIRECTS {
        return refused(format!(
            "redirected to {}: more than {} redirects",
            shown, MAX_REDIRECTS
        ));
    }
    Ok(Some(target))
}

/// `true` for the same scheme, host and port (RFC 6454 §4).
fn same_origin(a: &Endpoint, b: &Endpoint) -> bool {
    a.tls == b.tls && a.port == b.port && a.host.eq_ignore_ascii_case(&b.host)
}

/// The target as an error shows it: without its query, which may carry
/// a secret of the server's (a signed URL); `?…` says one was dropped.
fn shown(target: &Endpoint) -> String {
    let scheme = if target.tls { "https" } else { "http" };
    let (path, dropped) = match target.path.split_once('?') {
        Some((path, _)) => (path, "?…"),
        None => (target.path.as_str(), ""),
    };
    format!("{}://{}{}{}", scheme, target.authority, path, dropped)
}

/// `location` against `from` (RFC 3986 §5.2): an absolute `http(s)` URL,
/// `//authority/path`, an absolute path, a query, or a relative path.
pub(crate) fn resolve(from: &Endpoint, location: &str) -> Result<Endpoint, ()> {
    let location = location.trim();
    let location = location.split('#').next().unwrap_or("");
    if location.starts_with("http://") || location.starts_with("https://") {
        return Endpoint::parse(location).map_err(|_| ());
    }
    if let Some(rest) = location.strip_prefix("//") {
        let scheme = if from.tls { "https://" } else { "http://" };
        return Endpoint::parse(&format!("{}{}", scheme, rest)).map_err(|_| ());
    }
    let scheme_end = location.find([':', '/', '?']);
    if scheme_end.map_or(false, |i| location.as_bytes()[i] == b':') || location.is_empty() {
        // Another scheme (`ftp:`, `mailto:`), or nothing.
        return Err(());
    }
    let base = from.path.split('?').next().unwrap_or("/");
    let joined = if location.starts_with('/') {
        location.to_string()
    } else if location.starts_with('?') {
        format!("{}{}", base, location)
    } else {
        let dir = &base[..base.rfind('/').map_or(0, |i| i + 1)];
        format!("{}{}", dir, location)
    };
    Ok(Endpoint {
        path: without_dot_segments(&joined),
        ..from.clone()
    })
}

/// The path with `.` and `..` segments removed (RFC 3986 §5.2.4); the
/// query as it was.
fn without_dot_segments(target: &str) -> String {
    let (path, query) = match target.find('?') {
        Some(i) => target.split_at(i),
        None => (target, ""),
    };
    let mut out: Vec<&str> = Vec::new();
    let segments: Vec<&str> = path.split('/').skip(1).collect();
    for (i, segment) in segments.iter().enumerate() {
        let last = i + 1 == segments.len();
        match *segment {
            "." | ".." => {
                if *segment == ".." {
                    out.pop();
                }
                if last {
                    out.push("");
                }
            }
            other => out.push(other),
        }
    }
    format!("/{}{}", out.join("/"), query)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(status: u16, location: &str) -> Head {
        Head {
            status,
            minor_version: 1,
            headers: vec![("location".into(), location.into())],
        }
    }

    fn hop(status: u16, location: &str) -> Result<Option<String>, String> {
        let from = Endpoint::parse("http://example.com:8080/a/mcp?x=1").unwrap();
        next_hop(&from, &head(status, location), 0)
            .map(|t| t.map(|t| t.path))
            .map_err(|e| e.to_string())
    }

    // RFC 3986 §5.2: the forms of Location a server sends, resolved.
    #[test]
    fn locations_are_resolved_against_the_request() {
        assert_eq!(hop(308, "/mcp/"), Ok(Some("/mcp/".into())));
        assert_eq!(hop(307, "mcp/"), Ok(Some("/a/mcp/".into())));
        assert_eq!(hop(307, "../b/./c?y=2#f"), Ok(Some("/b/c?y=2".into())));
        assert_eq!(hop(307, "?y=2"), Ok(Some("/a/mcp?y=2".into())));
        assert_eq!(hop(307, "http://EXAMPLE.com:8080/z"), Ok(Some("/z".into())));
        assert_eq!(hop(307, "//example.com:8080/z"), Ok(Some("/z".into())));
        assert_eq!(hop(200, "/elsewhere"), Ok(None));
    }

    // RFC 9110 §15.4, basic/authorization "Token Handling": what is not
    // followed, and how the error names the target (no query).
    #[test]
    fn other_redirects_are_errors_that_name_the_target() {
        let other = hop(307, "https://example.com:8080/mcp?token=secret").unwrap_err();
        assert_eq!(
            other,
            "HTTP 307: redirected to https://example.com:8080/mcp?…, another origin: not followed"
        );
        assert!(hop(307, "http://example.com/mcp").is_err(), "another port");
        let found = hop(302, "/mcp/").unwrap_err();
        assert!(found.starts_with("HTTP 302: redirected to http://example.com:8080/mcp/"));
        assert!(hop(307, "ftp://example.com/").is_err());
        assert!(hop(307, "mailto:x@example.com").is_err());
        assert!(hop(307, "http://user:pw@example.com:8080/").is_err());
        let from = Endpoint::parse("http://example.com/mcp").unwrap();
        let fifth = next_hop(&from, &head(307, "/mcp/"), MAX_REDIRECTS - 1);
        assert!(matches!(fifth, Ok(Some(_))));
        let sixth = next_hop(&from, &head(307, "/mcp/"), MAX_REDIRECTS).unwrap_err();
        assert!(
            sixth.to_string().contains("more than 5 redirects"),
            "{}",
            sixth
        );
    }
}
