//! Server-Sent Events as the client reads them (WHATWG HTML
//! "Server-sent events"): `id`, `retry`, joined `data` lines, comments.
//! Nothing of MCP.

use std::io::{self, BufRead};

use crate::lines::{read_line, Line};

fn invalid(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("the server sent {}", what),
    )
}

/// One Server-Sent Event: its `id`, `retry` and joined `data` lines.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Event {
    pub(crate) id: Option<String>,
    pub(crate) retry: Option<u64>,
    pub(crate) data: String,
}

/// Reads events from an event-stream body, each at most `max` bytes.
pub(crate) struct Events<R> {
    reader: R,
    max: usize,
    line: Vec<u8>,
}

impl<R: BufRead> Events<R> {
    pub(crate) fn new(reader: R, max: usize) -> Events<R> {
        Events {
            reader,
            max,
            line: Vec::new(),
        }
    }

    /// The reader under the events.
    pub(crate) fn reader(&self) -> &R {
        &self.reader
    }

    /// The reader under the events, to change its deadline.
    pub(crate) fn reader_mut(&mut self) -> &mut R {
        &mut self.reader
    }

    /// The next event with data or an id, or an empty one for a comment
    /// (such as a keepalive) between events; `None` at the end of the
    /// stream.
    pub(crate) fn next_event(&mut self) -> io::Result<Option<Event>> {
        let mut event = Event::default();
        let mut seen = false;
        // Every line of the event counts, comments and unknown fields too.
        let mut used = 0usize;
        loop {
            match read_line(&mut self.reader, &mut self.line, self.max)? {
                Line::End => return Ok(if seen { Some(event) } else { None }),
                Line::TooLong => return Err(invalid(&format!("an event over {} bytes", self.max))),
                Line::Complete => {}
            }
            used += self.line.len() + 1;
            if used > self.max {
                return Err(invalid(&format!("an event over {} bytes", self.max)));
            }
            let line = self.line.strip_suffix(b"\r").unwrap_or(&self.line);
            if line.is_empty() {
                if seen {
                    return Ok(Some(event));
                }
                continue;
            }
            if line[0] == b':' {
                // A comment (a keepalive): handed up as an empty event when
                // no event is under way, so that the reader can check its
                // deadline between them.
                if !seen {
                    return Ok(Some(Event::default()));
                }
                continue;
            }
            let text = String::from_utf8_lossy(line);
            let (field, value) = match text.split_once(':') {
                Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
                None => (&*text, ""),
            };
            match field {
                "data" => {
                    if event.data.len() + value.len() > self.max {
                        return Err(invalid(&format!("an event over {} bytes", self.max)));
                    }
                    if seen && !event.data.is_empty() {
                        event.data.push('\n');
                    }
                    event.data.push_str(value);
                    seen = true;
                }
                "id" if !value.contains('\0') => {
                    event.id = Some(value.to_string());
                    seen = true;
                }
                "retry" => event.retry = value.trim().parse().ok(),
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(text: &str, max: usize) -> io::Result<Vec<Event>> {
        let mut reader = Events::new(text.as_bytes(), max);
        let mut out = Vec::new();
        while let Some(event) = reader.next_event()? {
            out.push(event);
        }
        Ok(out)
    }

    // SSE framing: id, retry, multi-line data, comments, CRLF.
    #[test]
    fn sse_events() {
        let got = events(": ping\r\nid: 1-1\r\nretry: 500\r\ndata:\r\n\r\nevent: message\ndata: {\"a\":\ndata: 1}\n\n", 1024).unwrap();
        assert_eq!(got.len(), 3);
        assert_eq!(got[0], Event::default(), "the comment");
        assert_eq!(got[1].id.as_deref(), Some("1-1"));
        assert_eq!(got[1].retry, Some(500));
        assert_eq!(got[1].data, "");
        assert_eq!(got[2].data, "{\"a\":\n1}");
        assert!(events("data: 0123456789\n\n", 8).is_err());
    }
}
