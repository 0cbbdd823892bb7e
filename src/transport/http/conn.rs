//! One connection: read a request, decide its answer (`route.rs`), write
//! it (`answer.rs`), until the client or the server ends the connection.

use std::io::BufReader;
use std::net::TcpStream;
use std::sync::Arc;

use super::answer::{self, rpc_error};
use super::route::route;
use super::wire::{self, HttpResponse, ReadError};
use super::Shared;
use crate::jsonrpc::ErrorObject;

pub(crate) fn serve_connection(shared: &Arc<Shared>, stream: TcpStream) {
    let _ = stream.set_read_timeout(Some(shared.config.connection_idle_timeout));
    let read_half = match stream.try_clone() {
        Ok(s) => s,
        Err(_) => return,
    };
    let mut reader = BufReader::new(read_half);
    let mut out = stream;
    loop {
        if shared.stopping() {
            return;
        }
        let request = match wire::read_request(&mut reader, shared.config.max_body_bytes) {
            Ok(request) => request,
            Err(ReadError::Closed) => return,
            Err(ReadError::Io(e)) => {
                log::debug!("connection dropped inside a request: {}", e);
                return;
            }
            Err(ReadError::Malformed(why)) => {
                let _ = rpc_error(400, None, ErrorObject::invalid_request(why))
                    .write_to(&mut out, false);
                return;
            }
            Err(ReadError::HeadTooLarge) => {
                let _ = HttpResponse::new(431).write_to(&mut out, false);
                return;
            }
            Err(ReadError::BodyTooLarge) => {
                let error = ErrorObject::invalid_request(format!(
                    "request body too large: the limit is {} bytes",
                    shared.config.max_body_bytes
                ));
                let _ = rpc_error(413, None, error).write_to(&mut out, false);
                return;
            }
        };
        let keep_alive = request.keep_alive && !shared.stopping();
        let answer = route(shared, &request);
        match answer::write(answer, &mut out, keep_alive, &shared.config) {
            Ok(()) if keep_alive => continue,
            _ => return,
        }
    }
}
