//! Entry points for the fuzz targets in `fuzz/` (feature `fuzzing`): the
//! parts of the crate that peers reach but that the public API does not
//! expose one by one. Not part of the API; nothing here is stable.

use std::collections::BTreeMap;
use std::net::TcpStream;

/// Reads one HTTP/1.1 request from `stream` as a connection of the HTTP
/// transport does (the head within its limits, then the body, chunked or
/// by length): the method and the body's length, or `None` for a request
/// the transport would refuse.
pub fn read_http_request(stream: &TcpStream) -> Option<(String, usize)> {
    crate::transport::http::read_one(stream)
}

/// Matches `uri` against the RFC 6570 template `template` as
/// `resources/read` does: the variables, percent-decoded, or `None`.
pub fn match_uri_template(template: &str, uri: &str) -> Option<BTreeMap<String, String>> {
    crate::server::UriTemplate::parse(template).matches(uri)
}
