//! The peer address that per-peer shares are counted against
//! (DESIGN.md §26): the socket's address, or the address a trusted
//! proxy names in a header the operator chose; none when the operator
//! turned per-peer shares off.

use std::net::IpAddr;

use super::wire::HttpRequest;

/// How the transport learns a request's peer address.
#[derive(Debug, Clone)]
pub(crate) enum PeerSource {
    /// The socket's peer address: clients connect directly (the default).
    Socket,
    /// The last value of this header (lowercase name), which the proxy in
    /// front sets; a request without a readable one counts as the socket's
    /// peer (the proxy itself).
    Header(String),
    /// Per-peer shares are off: behind a proxy that names no client, every
    /// client would be one peer.
    Off,
}

impl PeerSource {
    /// The peer address of `request`, as shares count it.
    pub(crate) fn peer_of(&self, request: &HttpRequest) -> Option<IpAddr> {
        let socket = request.remote.map(|addr| addr.ip());
        match self {
            PeerSource::Socket => socket,
            PeerSource::Off => None,
            PeerSource::Header(name) => request
                .headers
                .get_all(name)
                .last()
                .and_then(last_address)
                .or(socket),
        }
    }
}

/// The last address of a comma-separated list (`X-Forwarded-For: a, b`:
/// the proxy appended `b`, the address it saw), without a port or the
/// brackets of an IPv6 literal.
fn last_address(value: &str) -> Option<IpAddr> {
    let last = value.rsplit(',').next()?.trim();
    if let Ok(ip) = last.parse::<IpAddr>() {
        return Some(ip);
    }
    if let Ok(addr) = last.parse::<std::net::SocketAddr>() {
        return Some(addr.ip());
    }
    last.trim_start_matches('[')
        .split(']')
        .next()
        .and_then(|ip| ip.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::HttpHeaders;

    fn request(headers: Vec<(&str, &str)>) -> HttpRequest {
        let mut all = HttpHeaders::default();
        for (name, value) in headers {
            all.push(name, value);
        }
        HttpRequest {
            method: "POST".into(),
            path: "/mcp".into(),
            query: None,
            headers: all,
            body: Vec::new(),
            keep_alive: true,
            http10: false,
            remote: "10.0.0.1:4000".parse().ok(),
        }
    }

    // DESIGN.md §26: the socket's address, the named header's last value,
    // or nothing when shares are off.
    #[test]
    fn where_the_peer_comes_from() {
        let plain = request(vec![("x-forwarded-for", "192.0.2.1, 198.51.100.2")]);
        let socket: IpAddr = "10.0.0.1".parse().expect("ip");
        assert_eq!(PeerSource::Socket.peer_of(&plain), Some(socket));
        assert_eq!(PeerSource::Off.peer_of(&plain), None);
        let header = PeerSource::Header("x-forwarded-for".into());
        assert_eq!(header.peer_of(&plain), "198.51.100.2".parse().ok());
        let v6 = request(vec![("x-real-ip", "[2001:db8::1]:443")]);
        let real = PeerSource::Header("x-real-ip".into());
        assert_eq!(real.peer_of(&v6), "2001:db8::1".parse().ok());
        let junk = request(vec![("x-real-ip", "unknown")]);
        assert_eq!(real.peer_of(&junk), Some(socket), "unreadable: the proxy");
    }
}
