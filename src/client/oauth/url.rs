//! The URLs of a login: origins and paths, the well-known locations of
//! RFC 9728 §3.1 and RFC 8414 §3.1 (and OpenID Connect Discovery), the
//! canonical server URI (RFC 8707 §2), and `application/x-www-form-urlencoded`
//! (the HTML form encoding of query strings and token requests).

/// `scheme://authority` and the path (without query or fragment) of an
/// `http(s)` URL; the scheme and host in lower case, a default port
/// dropped. `None` for anything else.
pub(crate) fn split(url: &str) -> Option<(String, String)> {
    let url = url.split('#').next().unwrap_or("");
    let (scheme, rest) = url.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return None;
    }
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    if authority.is_empty() || authority.contains('@') {
        return None;
    }
    let mut authority = authority.to_ascii_lowercase();
    let default = if scheme == "https" { ":443" } else { ":80" };
    if authority.ends_with(default) {
        authority.truncate(authority.len() - default.len());
    }
    let path = tail.split('?').next().unwrap_or("");
    Some((format!("{}://{}", scheme, authority), path.to_string()))
}

/// The canonical URI of an MCP server (basic/authorization "Canonical
/// Server URI"): scheme and host in lower case, no fragment, no default
/// port, no trailing slash; the query kept.
pub(crate) fn canonical(url: &str) -> String {
    let (origin, path) = match split(url) {
        Some(parts) => parts,
        None => return url.to_string(),
    };
    let query = url
        .split('#')
        .next()
        .and_then(|u| u.split_once('?'))
        .map(|(_, q)| format!("?{}", q))
        .unwrap_or_default();
    format!("{}{}{}", origin, path.trim_end_matches('/'), query)
}

/// Whether the protected resource metadata's `resource` names the server
/// at `server`: the same origin, and its path the server's path or a
/// parent of it, segment by segment (RFC 9728 §3.3 and §7.3; a resource
/// may cover several endpoints below it).
pub(crate) fn covers(resource: &str, server: &str) -> bool {
    match (split(resource), split(server)) {
        (Some((a, p)), Some((b, q))) if a == b => {
            let p = p.trim_end_matches('/');
            let q = q.trim_end_matches('/');
            q == p || q.starts_with(&format!("{}/", p))
        }
        _ => false,
    }
}

/// The protected resource metadata locations of `server` (RFC 9728 §3.1),
/// in the order the spec tries them: the path-based one when the server
/// URL has a path, then the root one.
pub(crate) fn resource_metadata_urls(server: &str) -> Vec<String> {
    const SUFFIX: &str = "/.well-known/oauth-protected-resource";
    let (origin, path) = match split(server) {
        Some(parts) => parts,
        None => return Vec::new(),
    };
    let path = path.trim_end_matches('/');
    let mut urls = Vec::new();
    if !path.is_empty() {
        urls.push(format!("{}{}{}", origin, SUFFIX, path));
    }
    urls.push(format!("{}{}", origin, SUFFIX));
    urls
}

/// The authorization server metadata locations of `issuer`, in the spec's
/// order (basic/authorization "Authorization Server Metadata Discovery"):
/// RFC 8414 with the path inserted, OpenID Connect Discovery with the path
/// inserted, then appended; an issuer without a path has two.
pub(crate) fn server_metadata_urls(issuer: &str) -> Vec<String> {
    const OAUTH: &str = "/.well-known/oauth-authorization-server";
    const OIDC: &str = "/.well-known/openid-configuration";
    let (origin, path) = match split(issuer) {
        Some(parts) => parts,
        None => return Vec::new(),
    };
    let path = path.trim_end_matches('/');
    if path.is_empty() {
        return vec![
            format!("{}{}", origin, OAUTH),
            format!("{}{}", origin, OIDC),
        ];
    }
    vec![
        format!("{}{}{}", origin, OAUTH, path),
        format!("{}{}{}", origin, OIDC, path),
        format!("{}{}{}", origin, path, OIDC),
    ]
}

/// `text` percent-encoded for a form or query value: every byte but the
/// unreserved characters of RFC 3986 §2.3.
pub(crate) fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for &b in text.as_bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{:02X}", b)),
        }
    }
    out
}

/// `name=value&…`, each part encoded.
pub(crate) fn form(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(name, value)| format!("{}={}", encode(name), encode(value)))
        .collect::<Vec<_>>()
        .join("&")
}

/// The decoded `name=value` pairs of a query (`+` is a space); a
/// malformed escape is kept as written.
pub(crate) fn parse_query(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|part| !part.is_empty())
        .map(|part| {
            let (name, value) = part.split_once('=').unwrap_or((part, ""));
            (decode(name), decode(value))
        })
        .collect()
}

fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => match (
                bytes.get(i + 1).copied().and_then(hex),
                bytes.get(i + 2).copied().and_then(hex),
            ) {
                (Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `base` with the pairs added to its query.
pub(crate) fn with_query(base: &str, pairs: &[(&str, &str)]) -> String {
    let joiner = if base.contains('?') { '&' } else { '?' };
    format!("{}{}{}", base, joiner, form(pairs))
}

#[cfg(test)]
mod tests {
    use super::*;

    // RFC 9728 §3.1: the path-based location first, then the root one.
    #[test]
    fn resource_metadata_locations() {
        assert_eq!(
            resource_metadata_urls("https://Example.com:443/public/mcp/"),
            [
                "https://example.com/.well-known/oauth-protected-resource/public/mcp",
                "https://example.com/.well-known/oauth-protected-resource"
            ]
        );
        assert_eq!(
            resource_metadata_urls("http://127.0.0.1:8080"),
            ["http://127.0.0.1:8080/.well-known/oauth-protected-resource"]
        );
    }

    // basic/authorization "Authorization Server Metadata Discovery": the
    // three locations of an issuer with a path, the two of one without.
    #[test]
    fn server_metadata_locations() {
        assert_eq!(
            server_metadata_urls("https://auth.example.com/tenant1"),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example.com/.well-known/openid-configuration/tenant1",
                "https://auth.example.com/tenant1/.well-known/openid-configuration"
            ]
        );
        assert_eq!(
            server_metadata_urls("https://auth.example.com/"),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server",
                "https://auth.example.com/.well-known/openid-configuration"
            ]
        );
    }

    // RFC 8707 §2 and the spec's "Canonical Server URI" examples.
    #[test]
    fn canonical_server_uri() {
        assert_eq!(
            canonical("HTTPS://MCP.Example.com/mcp#x"),
            "https://mcp.example.com/mcp"
        );
        assert_eq!(
            canonical("https://mcp.example.com/"),
            "https://mcp.example.com"
        );
        assert_eq!(
            canonical("https://mcp.example.com:8443"),
            "https://mcp.example.com:8443"
        );
        assert_eq!(canonical("http://h:80/a/?q=1"), "http://h/a?q=1");
    }

    // RFC 9728 §3.3: the resource must be the server or a parent path of
    // it on the same origin; another host, port or a sibling path is not.
    #[test]
    fn resource_must_cover_the_server() {
        assert!(covers(
            "https://a.example/mcp",
            "https://A.example:443/mcp/"
        ));
        assert!(covers("https://a.example", "https://a.example/mcp"));
        assert!(!covers("https://a.example/mc", "https://a.example/mcp"));
        assert!(!covers("https://b.example/mcp", "https://a.example/mcp"));
        assert!(!covers("http://a.example/mcp", "https://a.example/mcp"));
        assert!(!covers("not a url", "https://a.example/mcp"));
    }

    #[test]
    fn forms_and_queries_round_trip() {
        let text = form(&[
            ("redirect_uri", "http://127.0.0.1:5/cb?x=1"),
            ("scope", "a b"),
        ]);
        assert_eq!(
            text,
            "redirect_uri=http%3A%2F%2F127.0.0.1%3A5%2Fcb%3Fx%3D1&scope=a%20b"
        );
        assert_eq!(
            parse_query("code=a%2Bb&state=x+y&bad=%zz&&iss"),
            [
                ("code".to_string(), "a+b".to_string()),
                ("state".to_string(), "x y".to_string()),
                ("bad".to_string(), "%zz".to_string()),
                ("iss".to_string(), String::new()),
            ]
        );
        assert_eq!(
            with_query("https://a/authorize?x=1", &[("y", "2")]),
            "https://a/authorize?x=1&y=2"
        );
    }
}
