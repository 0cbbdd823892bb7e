//! Lenient header checks: media types, and `Host`/`Origin` for DNS
//! rebinding protection (SEC-1).

/// The media types of an `Accept` or `Content-Type` value, lowercased,
/// without parameters (`charset`, `q`, …).
pub(crate) fn media_types(value: &str) -> impl Iterator<Item = String> + '_ {
    value.split(',').filter_map(|item| {
        let media = item
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        if media.is_empty() {
            None
        } else {
            Some(media)
        }
    })
}

/// `true` if a `Content-Type` is JSON (`application/json; charset=utf-8`,
/// `Application/JSON`, …).
pub(crate) fn is_json(content_type: &str) -> bool {
    media_types(content_type).any(|m| m == "application/json")
}

/// What an `Accept` header takes: `(json, event_stream)`. A missing header
/// takes both.
pub(crate) fn accepts(accept: Option<&str>) -> (bool, bool) {
    let accept = match accept {
        Some(a) if !a.trim().is_empty() => a,
        _ => return (true, true),
    };
    let mut json = false;
    let mut sse = false;
    for media in media_types(accept) {
        match media.as_str() {
            "*/*" => {
                json = true;
                sse = true;
            }
            "application/json" | "application/*" => json = true,
            "text/event-stream" | "text/*" => sse = true,
            _ => {}
        }
    }
    (json, sse)
}

/// The host part of `host[:port]`, `[v6]:port` or an origin's authority,
/// lowercased; empty (no host) when what follows the host is not a port
/// (`127.0.0.1:80.evil`).
fn host_name(authority: &str) -> String {
    let authority = authority.trim();
    let split = if authority.starts_with('[') {
        authority.find(']').map(|end| end + 1)
    } else {
        Some(authority.find(':').unwrap_or(authority.len()))
    };
    let (host, rest) = match split {
        Some(at) => authority.split_at(at),
        None => return String::new(),
    };
    let port_ok = match rest.strip_prefix(':') {
        Some(port) => port.bytes().all(|b| b.is_ascii_digit()),
        None => rest.is_empty(),
    };
    if port_ok {
        host.to_ascii_lowercase()
    } else {
        String::new()
    }
}

fn is_loopback_name(host: &str) -> bool {
    matches!(host, "localhost" | "127.0.0.1" | "[::1]")
}

/// Checks `Host` and `Origin`; `Err` with the reason for a 403.
pub(crate) fn check_host_and_origin(
    host: Option<&str>,
    origin: Option<&str>,
    loopback_bound: bool,
    allowed_hosts: &[String],
    allowed_origins: &[String],
) -> Result<(), String> {
    let host_value = host.unwrap_or("");
    let host_ok = allowed_hosts.iter().any(|h| {
        h.eq_ignore_ascii_case(host_value) || h.eq_ignore_ascii_case(&host_name(host_value))
    }) || !loopback_bound
        || is_loopback_name(&host_name(host_value));
    if !host_ok {
        return Err(format!("Invalid Host: {}", host_value));
    }
    if let Some(origin) = origin {
        let origin = origin.trim();
        if allowed_origins
            .iter()
            .any(|o| o.eq_ignore_ascii_case(origin))
        {
            return Ok(());
        }
        let authority = origin
            .split_once("://")
            .map(|(_, rest)| rest.split('/').next().unwrap_or(""))
            .unwrap_or("");
        let origin_host = host_name(authority);
        let ok = if loopback_bound {
            is_loopback_name(&origin_host)
        } else {
            !origin_host.is_empty() && origin_host == host_name(host_value)
        };
        if !ok {
            return Err(format!("Invalid Origin: {}", origin));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    // SEC-1: a port that is not digits leaves no host to trust.
    #[test]
    fn host_names_and_ports() {
        assert_eq!(host_name("127.0.0.1:8080"), "127.0.0.1");
        assert_eq!(host_name("LOCALHOST"), "localhost");
        assert_eq!(host_name("[::1]:80"), "[::1]");
        assert_eq!(host_name("127.0.0.1:80.evil.example"), "");
        assert_eq!(host_name("[::1]x"), "");
        assert!(check_host_and_origin(Some("127.0.0.1:1.evil"), None, true, &[], &[]).is_err());
    }

    // HTTP-2: media types are parsed leniently.
    #[test]
    fn lenient_media_types() {
        assert!(is_json("application/json; charset=utf-8"));
        assert!(is_json("Application/JSON"));
        assert!(!is_json("text/plain"));
        assert_eq!(accepts(Some("*/*")), (true, true));
        assert_eq!(accepts(Some("text/event-stream")), (false, true));
        assert_eq!(accepts(Some("application/json;q=0.9")), (true, false));
        assert_eq!(accepts(None), (true, true));
        assert_eq!(accepts(Some("image/png")), (false, false));
    }

    // SEC-1: loopback binds take only loopback hosts and origins.
    #[test]
    fn dns_rebinding() {
        let check = |h, o| check_host_and_origin(h, o, true, &[], &[]);
        assert!(check(Some("127.0.0.1:3000"), None).is_ok());
        assert!(check(Some("localhost"), Some("http://localhost:5173")).is_ok());
        assert!(check(Some("[::1]:80"), None).is_ok());
        assert!(check(Some("evil.example.com"), None).is_err());
        assert!(check(Some("127.0.0.1:3000"), Some("http://evil.example.com")).is_err());
        assert!(check(None, None).is_err());
        let allowed = vec!["mcp.example.com".to_string()];
        assert!(
            check_host_and_origin(Some("mcp.example.com:8080"), None, true, &allowed, &[]).is_ok()
        );
        // Bound elsewhere: the origin must match the host.
        assert!(
            check_host_and_origin(Some("a.com"), Some("https://a.com"), false, &[], &[]).is_ok()
        );
        assert!(
            check_host_and_origin(Some("a.com"), Some("https://b.com"), false, &[], &[]).is_err()
        );
    }
}
