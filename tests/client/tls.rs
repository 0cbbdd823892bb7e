//! `https://` (feature `tls`): the client through a TLS relay in front of
//! the example, trusting a test CA (`tests/client/tls/`: a P-256 CA and a
//! certificate for `localhost` and `127.0.0.1`, valid until 2126).

use std::io::{ErrorKind as IoKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::{ServerConfig, ServerConnection, StreamOwned};
use serde_json::json;
use tiny_mcp::{Client, Era, ErrorKind};

use crate::support::Example;

const CA: &[u8] = include_bytes!("tls/ca.pem");
const CERT: &[u8] = include_bytes!("tls/server.der");
const KEY: &[u8] = include_bytes!("tls/server.key.der");

/// Terminates TLS on a free port and relays each connection to `backend`.
fn tls_relay(backend: SocketAddr) -> SocketAddr {
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(KEY.to_vec()));
    let config = ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(vec![CertificateDer::from(CERT.to_vec())], key)
        .expect("the test certificate and key");
    let config = Arc::new(config);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    thread::spawn(move || {
        for socket in listener.incoming().flatten() {
            let config = Arc::clone(&config);
            thread::spawn(move || relay(socket, backend, config));
        }
    });
    addr
}

/// Copies bytes both ways until either side ends; each side is polled
/// with a short read timeout (one thread owns the TLS session).
fn relay(socket: TcpStream, backend: SocketAddr, config: Arc<ServerConfig>) {
    let plain = match TcpStream::connect(backend) {
        Ok(plain) => plain,
        Err(_) => return,
    };
    let poll = Some(Duration::from_millis(2));
    if socket.set_read_timeout(poll).is_err() || plain.set_read_timeout(poll).is_err() {
        return;
    }
    let mut plain = plain;
    let mut tls = match ServerConnection::new(config) {
        Ok(conn) => StreamOwned::new(conn, socket),
        Err(_) => return,
    };
    let mut buf = [0u8; 16 * 1024];
    loop {
        let moved = pump(&mut tls, &mut plain, &mut buf)
            .and_then(|a| Some(a | pump(&mut plain, &mut tls, &mut buf)?));
        if moved.is_none() {
            return;
        }
    }
}

/// One read from `from` written to `to`: `Some(true)` when bytes moved,
/// `Some(false)` when none were ready, `None` at the end.
fn pump(from: &mut impl Read, to: &mut impl Write, buf: &mut [u8]) -> Option<bool> {
    match from.read(buf) {
        Ok(0) => None,
        Ok(n) => to
            .write_all(&buf[..n])
            .and_then(|_| to.flush())
            .ok()
            .map(|_| true),
        Err(e)
            if matches!(
                e.kind(),
                IoKind::WouldBlock | IoKind::TimedOut | IoKind::Interrupted
            ) =>
        {
            Some(false)
        }
        Err(_) => None,
    }
}

// The client over https:// in both eras, its server certificate checked
// against the root it was given.
#[test]
fn https_in_both_eras() {
    let example = Example::start(&[]);
    let relay = tls_relay(example.addr);
    for era in [None, Some(Era::V2025_11_25)] {
        let mut b = Client::builder("tls-test", "1")
            .request_timeout(Duration::from_secs(10))
            .tls_root_certificates(CA);
        if let Some(era) = era {
            b = b.era(era);
        }
        let url = format!("https://localhost:{}/mcp", relay.port());
        let client = b.connect_http(&url).expect("connect over TLS");
        assert_eq!(client.era(), era.unwrap_or(Era::V2026_07_28));
        let answer = client.call_tool("echo", json!({"text": "sealed"})).unwrap();
        assert_eq!(
            serde_json::to_value(&answer.content).unwrap()[0]["text"],
            "sealed"
        );
    }
}

// A certificate that chains to no trusted root is refused: Mozilla's
// roots do not include the test CA.
#[test]
fn an_untrusted_certificate_is_refused() {
    let example = Example::start(&[]);
    let relay = tls_relay(example.addr);
    let url = format!("https://127.0.0.1:{}/mcp", relay.port());
    let err = Client::builder("tls-test", "1")
        .connect_http(&url)
        .unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Io(_)), "{:?}", err);
    assert!(format!("{:?}", err).contains("UnknownIssuer"), "{:?}", err);
}
