//! The HTTP request reader on arbitrary bytes: the head (request line,
//! headers, framing rules) and the body (by length or chunked), read from
//! a loopback socket as a connection reads them. It must return, without
//! panicking and without growing past its limits, whatever it is sent.
#![no_main]

use std::io::Write;
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;

fn listener() -> &'static TcpListener {
    static LISTENER: OnceLock<TcpListener> = OnceLock::new();
    LISTENER.get_or_init(|| TcpListener::bind("127.0.0.1:0").expect("a loopback port"))
}

fuzz_target!(|data: &[u8]| {
    let listener = listener();
    let mut client = match TcpStream::connect(listener.local_addr().expect("bound")) {
        Ok(client) => client,
        Err(_) => return,
    };
    let (server, _) = match listener.accept() {
        Ok(accepted) => accepted,
        Err(_) => return,
    };
    // The inputs are small (libFuzzer's -max_len): they fit the socket's
    // buffer, so writing before reading cannot block.
    let _ = client.write_all(data);
    let _ = client.shutdown(Shutdown::Write);
    if let Some((_, body)) = tiny_mcp::fuzzing::read_http_request(&server) {
        assert!(body <= 64 * 1024, "a body past the limit was accepted");
    }
});
