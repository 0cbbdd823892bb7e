//! The login's own HTTP requests: metadata documents, registration, the
//! token endpoint. One request per connection, every one bounded: the
//! whole exchange by one deadline, the body by a size, redirects (of a
//! `GET` only) by a count. Nothing of OAuth but the error's step.

use std::io::Write;
#[cfg(feature = "tls")]
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::client::wire::{Body, Conn, Endpoint, Transport};
use crate::error::{Error, ErrorKind};

/// Redirects a metadata `GET` follows at most.
const MAX_REDIRECTS: usize = 5;

/// How the login reaches the servers: timeouts, sizes and TLS.
#[derive(Clone)]
pub(crate) struct Fetcher {
    pub(crate) connect_timeout: Duration,
    /// One request, connecting to the last byte of the body.
    pub(crate) timeout: Duration,
    /// The largest body read.
    pub(crate) max_bytes: usize,
    #[cfg(feature = "tls")]
    pub(crate) tls: Option<Arc<crate::client::tls::Tls>>,
}

/// An answer: status, headers (names in lower case) and body.
#[derive(Debug)]
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
}

impl Reply {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON (any media type: some servers say `text/plain`).
    pub(crate) fn json(&self, step: &'static str, what: &str) -> Result<serde_json::Value, Error> {
        serde_json::from_slice(&self.body)
            .map_err(|e| failed(step, format!("{} is not JSON: {}", what, e)))
    }
}

/// The error of a step of the login.
pub(crate) fn failed(step: &'static str, message: impl Into<String>) -> Error {
    Error::new(ErrorKind::Authorization {
        step,
        message: message.into(),
    })
}

/// A URL as errors show it: without query or user information.
pub(crate) fn shown(url: &str) -> String {
    let bare = url.split(['?', '#']).next().unwrap_or("");
    match (bare.find("://"), bare.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            format!("{}://…@{}", &bare[..scheme], &bare[at + 1..])
        }
        _ => bare.to_string(),
    }
}

impl Fetcher {
    /// Default limits: connect in 10 s, an exchange in 30 s, bodies up to
    /// 1 MiB; Mozilla's roots for `https://` (feature `tls`).
    pub(crate) fn standalone() -> Fetcher {
        Fetcher {
            connect_timeout: Duration::from_secs(10),
            timeout: Duration::from_secs(30),
            max_bytes: 1024 * 1024,
            #[cfg(feature = "tls")]
            tls: crate::client::tls::Tls::new(&[]).ok().map(Arc::new),
        }
    }

    /// `GET url` with `Accept: application/json`, redirects followed (at
    /// most 5).
    pub(crate) fn get(&self, step: &'static str, url: &str) -> Result<Reply, Error> {
        let mut target = url.to_string();
        for _ in 0..=MAX_REDIRECTS {
            let reply = self.get_once(step, &target)?;
            match (reply.status, reply.header("location")) {
                (301 | 302 | 303 | 307 | 308, Some(location)) => {
                    target = self.resolve(step, &target, location)?;
                }
                _ => return Ok(reply),
            }
        }
        Err(failed(
            step,
            format!("{}: more than {} redirects", shown(url), MAX_REDIRECTS),
        ))
    }

    /// `GET url`, a redirect returned as it is.
    pub(crate) fn get_once(&self, step: &'static str, url: &str) -> Result<Reply, Error> {
        let deadline = Instant::now() + self.timeout;
        let target = parse(step, url)?;
        let headers = [("Accept", "application/json".to_string())];
        self.once(step, "GET", &target, &headers, None, deadline)
    }

    /// A redirect's `location` against the URL that answered it.
    pub(crate) fn resolve(
        &self,
        step: &'static str,
        from: &str,
        location: &str,
    ) -> Result<String, Error> {
        let base = parse(step, from)?;
        let target = crate::client::http::resolve(&base, location).map_err(|()| {
            failed(
                step,
                format!("{} redirected to a bad Location", shown(from)),
            )
        })?;
        let scheme = if target.tls { "https" } else { "http" };
        Ok(format!("{}://{}{}", scheme, target.authority, target.path))
    }

    /// `POST url` with `body` of `content_type`; no redirect followed.
    pub(crate) fn post(
        &self,
        step: &'static str,
        url: &str,
        headers: &[(&str, String)],
        content_type: &str,
        body: &[u8],
    ) -> Result<Reply, Error> {
        let deadline = Instant::now() + self.timeout;
        let target = parse(step, url)?;
        let mut all: Vec<(&str, String)> = vec![
            ("Content-Type", content_type.to_string()),
            ("Accept", "application/json".to_string()),
        ];
        all.extend(headers.iter().cloned());
        self.once(step, "POST", &target, &all, Some(body), deadline)
    }

    fn once(
        &self,
        step: &'static str,
        verb: &str,
        target: &Endpoint,
        headers: &[(&str, String)],
        body: Option<&[u8]>,
        deadline: Instant,
    ) -> Result<Reply, Error> {
        let where_ = format!(
            "{}://{}{}",
            if target.tls { "https" } else { "http" },
            target.authority,
            target.path.split('?').next().unwrap_or("")
        );
        let io = |e: std::io::Error| failed(step, format!("{} {}: {}", verb, where_, e));
        let left = deadline.saturating_duration_since(Instant::now());
        let socket = target.connect(self.connect_timeout.min(left)).map_err(io)?;
        let mut conn = Conn::new(self.secure(step, target, socket)?);
        conn.set_deadline(Some(deadline));
        let mut headers: Vec<(&str, String)> = headers.to_vec();
        headers.push(("Connection", "close".to_string()));
        conn.send(verb, target, &headers, &[], body).map_err(io)?;
        let head = conn.head().map_err(io)?;
        let bytes = Body::new(&mut conn, head.framing())
            .read_all(self.max_bytes)
            .map_err(io)?;
        let _ = conn.reader.get_mut().flush();
        Ok(Reply {
            status: head.status,
            headers: head.headers,
            body: bytes,
        })
    }

    #[cfg_attr(not(feature = "tls"), allow(unused_variables))]
    fn secure(
        &self,
        step: &'static str,
        target: &Endpoint,
        socket: std::net::TcpStream,
    ) -> Result<Transport, Error> {
        if !target.tls {
            return Ok(Transport::plain(socket));
        }
        #[cfg(feature = "tls")]
        if let Some(tls) = &self.tls {
            let stream = tls
                .wrap(&target.host, socket)
                .map_err(|e| failed(step, format!("TLS with {}: {}", target.host, e)))?;
            return Ok(Transport::tls(stream));
        }
        Err(failed(
            step,
            format!(
                "https://{}: https:// needs tiny-mcp's `tls` feature",
                target.authority
            ),
        ))
    }
}

fn parse(step: &'static str, url: &str) -> Result<Endpoint, Error> {
    Endpoint::parse(url).map_err(|e| failed(step, e))
}
