//! `https://` for the client (feature `tls`): rustls 0.22 on ring, trusting
//! Mozilla's roots (webpki-roots) and the program's own (PEM).

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;

use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore, StreamOwned};

use crate::error::Error;

/// A TLS configuration: the roots a server's certificate must chain to.
pub(crate) struct Tls {
    config: Arc<ClientConfig>,
}

impl Tls {
    /// Mozilla's roots, plus every certificate in `extra_pem`.
    pub(crate) fn new(extra_pem: &[Vec<u8>]) -> Result<Tls, Error> {
        let mut roots = RootCertStore::empty();
        roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        for pem in extra_pem {
            for der in pem_certificates(pem)? {
                roots
                    .add(CertificateDer::from(der))
                    .map_err(|e| Error::msg(format!("a root certificate is not usable: {}", e)))?;
            }
        }
        let config = ClientConfig::builder()
            .with_root_certificates(roots)
            .with_no_client_auth();
        Ok(Tls {
            config: Arc::new(config),
        })
    }

    /// Starts TLS with `host` on `socket`; the handshake runs with the
    /// first read or write.
    pub(crate) fn wrap(&self, host: &str, socket: TcpStream) -> io::Result<TlsStream> {
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let name = ServerName::try_from(host.to_string()).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("not a TLS server name: {}", host),
            )
        })?;
        let connection = ClientConnection::new(Arc::clone(&self.config), name)
            .map_err(|e| io::Error::new(io::ErrorKind::Other, e))?;
        Ok(TlsStream(StreamOwned::new(connection, socket)))
    }
}

/// A TLS session over its socket.
pub(crate) struct TlsStream(StreamOwned<ClientConnection, TcpStream>);

impl TlsStream {
    pub(crate) fn socket(&self) -> &TcpStream {
        self.0.get_ref()
    }
}

impl Read for TlsStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf)
    }
}

impl Write for TlsStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

/// The DER bytes of each `CERTIFICATE` block of a PEM text.
fn pem_certificates(pem: &[u8]) -> Result<Vec<Vec<u8>>, Error> {
    let text = std::str::from_utf8(pem).map_err(|_| Error::msg("a PEM file is not text"))?;
    let mut out = Vec::new();
    let mut body: Option<String> = None;
    for line in text.lines().map(str::trim) {
        match (&mut body, line) {
            (None, "-----BEGIN CERTIFICATE-----") => body = Some(String::new()),
            (Some(b64), "-----END CERTIFICATE-----") => {
                let der = crate::base64::decode_padded(b64)
                    .ok_or_else(|| Error::msg("a PEM certificate is not base64"))?;
                out.push(der);
                body = None;
            }
            (Some(b64), line) => b64.push_str(line),
            (None, _) => {}
        }
    }
    if out.is_empty() {
        return Err(Error::msg("no CERTIFICATE in the PEM text"));
    }
    Ok(out)
}
