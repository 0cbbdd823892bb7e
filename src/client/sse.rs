//! Server-Sent Events as the client reads them: the event-stream parser
//! of WHATWG HTML "Server-sent events" (§9.2.5 "Parsing an event stream",
//! §9.2.6 "Interpreting an event stream"), incremental over a `BufRead`
//! and bounded. Nothing of MCP.

use std::io::{self, BufRead};

/// UTF-8's byte order mark, skipped once at the start of a stream.
const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

fn too_large(max: usize) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("the server sent an event over {} bytes", max),
    )
}

/// What one block of lines up to a blank line gave: a dispatched event,
/// or only an `id`, a `retry` or a keepalive.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Event {
    /// The block's `id` field (the last one without a NUL), which becomes
    /// the stream's last event ID; `Some("")` resets it.
    pub(crate) id: Option<String>,
    /// The block's `retry` field, in milliseconds (only ASCII digits count).
    pub(crate) retry: Option<u64>,
    /// The event type: `message` unless an `event` field named another;
    /// empty when nothing is dispatched (a block without `data`, a comment).
    pub(crate) kind: String,
    /// The `data` lines joined with LF.
    pub(crate) data: String,
}

/// Reads events from an event-stream body; all the lines of one block
/// together (comments and unknown fields too) at most `max` bytes.
pub(crate) struct Events<R> {
    reader: R,
    max: usize,
    line: Vec<u8>,
    /// Bytes of the byte order mark matched so far; 3 once past it.
    bom: usize,
    /// The last line ended with CR: a LF that comes next belongs to it,
    /// even in the next read.
    after_cr: bool,
}

/// The fields of the block being read.
#[derive(Default)]
struct Block {
    started: bool,
    id: Option<String>,
    retry: Option<u64>,
    kind: String,
    data: String,
}

impl<R: BufRead> Events<R> {
    pub(crate) fn new(reader: R, max: usize) -> Events<R> {
        Events {
            reader,
            max,
            line: Vec::new(),
            bom: 0,
            after_cr: false,
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

    /// The next block ended by a blank line: an event with data (`kind`
    /// not empty), or one with only an `id` or `retry`, or an empty one for
    /// a comment (such as a keepalive) between events. `None` at the end of
    /// the stream, where an unfinished block is dropped (its `retry`, which
    /// takes effect when read, is handed up first).
    ///
    /// # Errors
    ///
    /// The reader's, and `InvalidData` for a block over `max` bytes.
    pub(crate) fn next_event(&mut self) -> io::Result<Option<Event>> {
        let mut block = Block::default();
        let mut used = 0usize;
        loop {
            if !self.read_line()? {
                let retry = block.retry.take();
                return Ok(retry.map(|retry| Event {
                    retry: Some(retry),
                    ..Event::default()
                }));
            }
            used += self.line.len() + 1;
            if used > self.max {
                return Err(too_large(self.max));
            }
            match self.line.first() {
                None if block.started => return Ok(Some(block.dispatch())),
                None => continue,
                // A comment, handed up as an empty event when no block is
                // under way, so that the reader can check its deadline.
                Some(b':') if !block.started => return Ok(Some(Event::default())),
                Some(b':') => continue,
                Some(_) => block.field(&String::from_utf8_lossy(&self.line)),
            }
        }
    }

    /// Reads the next line into `self.line`, without its end (CRLF, LF or
    /// a lone CR); `false` at the end of the stream, where a last line
    /// without an end is dropped.
    fn read_line(&mut self) -> io::Result<bool> {
        self.line.clear();
        self.skip_bom()?;
        loop {
            let available = match self.reader.fill_buf() {
                Ok(bytes) => bytes,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if available.is_empty() {
                return Ok(false);
            }
            if self.after_cr {
                self.after_cr = false;
                if available[0] == b'\n' {
                    self.reader.consume(1);
                    continue;
                }
            }
            let end = available.iter().position(|&b| b == b'\n' || b == b'\r');
            let take = end.unwrap_or(available.len());
            if self.line.len() + take >= self.max {
                return Err(too_large(self.max));
            }
            self.line.extend_from_slice(&available[..take]);
            match end {
                Some(at) => {
                    self.after_cr = available[at] == b'\r';
                    self.reader.consume(at + 1);
                    return Ok(true);
                }
                None => self.reader.consume(take),
            }
        }
    }

    /// Skips a byte order mark at the start of the stream, read in pieces
    /// if it comes so; the bytes of a near miss are kept.
    fn skip_bom(&mut self) -> io::Result<()> {
        while self.bom < BOM.len() {
            let available = match self.reader.fill_buf() {
                Ok(bytes) => bytes,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            match available.first() {
                None => return Ok(()),
                Some(&b) if b == BOM[self.bom] => {
                    self.reader.consume(1);
                    self.bom += 1;
                }
                Some(_) => {
                    self.line.extend_from_slice(&BOM[..self.bom]);
                    self.bom = BOM.len();
                }
            }
        }
        Ok(())
    }
}

impl Block {
    /// One field line (not a comment): `name: value`, `name:value`, or a
    /// name alone with an empty value.
    fn field(&mut self, line: &str) {
        self.started = true;
        let (name, value) = match line.split_once(':') {
            Some((name, value)) => (name, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match name {
            "event" => self.kind = value.to_string(),
            "data" => {
                self.data.push_str(value);
                self.data.push('\n');
            }
            "id" if !value.contains('\0') => self.id = Some(value.to_string()),
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                // Digits past u64 wait as long as can be said.
                self.retry = Some(value.parse().unwrap_or(u64::MAX));
            }
            _ => {}
        }
    }

    /// The block at its blank line: dispatched when it had data (the last
    /// LF dropped, the type `message` by default), else only its `id` and
    /// `retry`.
    fn dispatch(mut self) -> Event {
        if self.data.is_empty() {
            self.kind.clear();
        } else {
            self.data.pop();
            if self.kind.is_empty() {
                self.kind.push_str("message");
            }
        }
        Event {
            id: self.id,
            retry: self.retry,
            kind: self.kind,
            data: self.data,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands out its bytes in the pieces given, as a socket
    /// would, then fails if `fail_after` (instead of ending).
    struct Pieces {
        pieces: Vec<Vec<u8>>,
        at: usize,
        fail_after: bool,
    }

    impl io::Read for Pieces {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let n = self.fill_buf()?.len().min(out.len());
            out[..n].copy_from_slice(&self.pieces[0][self.at..self.at + n]);
            self.consume(n);
            Ok(n)
        }
    }

    impl BufRead for Pieces {
        fn fill_buf(&mut self) -> io::Result<&[u8]> {
            while self.pieces.first().map_or(false, |p| self.at == p.len()) {
                self.pieces.remove(0);
                self.at = 0;
            }
            match self.pieces.first() {
                Some(piece) => Ok(&piece[self.at..]),
                None if self.fail_after => Err(io::Error::new(io::ErrorKind::Other, "no more")),
                None => Ok(&[]),
            }
        }

        fn consume(&mut self, n: usize) {
            self.at += n;
        }
    }

    fn pieces(parts: &[&[u8]]) -> Pieces {
        Pieces {
            pieces: parts.iter().map(|p| p.to_vec()).collect(),
            at: 0,
            fail_after: false,
        }
    }

    fn all<R: BufRead>(reader: R, max: usize) -> io::Result<Vec<Event>> {
        let mut events = Events::new(reader, max);
        let mut out = Vec::new();
        while let Some(event) = events.next_event()? {
            out.push(event);
        }
        Ok(out)
    }

    fn events(text: &str) -> Vec<Event> {
        all(text.as_bytes(), 1024).unwrap()
    }

    fn message(data: &str) -> Event {
        Event {
            kind: "message".into(),
            data: data.into(),
            ..Event::default()
        }
    }

    fn with_id(mut event: Event, id: &str) -> Event {
        event.id = Some(id.into());
        event
    }

    // HTML §9.2.6: the standard's stock-ticker example; data lines joined
    // with LF, the last LF dropped, the type `message` by default.
    #[test]
    fn multi_line_data_is_joined() {
        assert_eq!(
            events("data: YHOO\ndata: +2\ndata: 10\n\n"),
            [message("YHOO\n+2\n10")]
        );
    }

    // HTML §9.2.6: the standard's example of a comment, ids, `id` alone
    // (an empty value: the last event ID reset), and one space stripped.
    #[test]
    fn comments_ids_and_the_space_after_the_colon() {
        let got = events(
            ": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n\n",
        );
        assert_eq!(
            got,
            [
                Event::default(),
                with_id(message("first event"), "1"),
                with_id(message("second event"), ""),
                message(" third event"),
            ]
        );
    }

    // HTML §9.2.6: "data:\n\ndata\ndata\n\ndata:" fires an empty event and
    // one of a single LF; the last block has no blank line and is dropped.
    // "data:test\n\ndata: test\n\n" fires two identical events.
    #[test]
    fn the_standards_data_examples() {
        assert_eq!(
            events("data\n\ndata\ndata\n\ndata:"),
            [message(""), message("\n")]
        );
        assert_eq!(
            events("data:\n\ndata\ndata\n\ndata:"),
            [message(""), message("\n")]
        );
        assert_eq!(
            events("data:test\n\ndata: test\n\n"),
            [message("test"), message("test")]
        );
    }

    // HTML §9.2.5: a lone CR ends a line as CRLF and LF do.
    #[test]
    fn lines_end_with_cr_alone() {
        assert_eq!(
            events("data: a\rdata: b\r\rid: 7\r\r: c\r\rdata: d\r\n\r\n"),
            [
                message("a\nb"),
                with_id(Event::default(), "7"),
                Event::default(),
                message("d"),
            ]
        );
    }

    // HTML §9.2.5: CRLF is one line end even when CR ends one read and LF
    // starts the next; CR CR is two.
    #[test]
    fn a_crlf_split_between_reads_is_one_line_end() {
        let split = pieces(&[b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n"]);
        assert_eq!(all(split, 1024).unwrap(), [message("a\nb")]);
        let two = pieces(&[b"data: a\r", b"\r", b"data: b\r\n\r\n"]);
        assert_eq!(all(two, 1024).unwrap(), [message("a"), message("b")]);
    }

    // HTML §9.2.5: one leading byte order mark is skipped, even split
    // across reads; a second one is part of a field name.
    #[test]
    fn a_leading_bom_is_skipped() {
        assert_eq!(events("\u{feff}data: x\n\n"), [message("x")]);
        let split = pieces(&[b"\xef", b"\xbb", b"\xbfdata: y\n\n"]);
        assert_eq!(all(split, 1024).unwrap(), [message("y")]);
        assert_eq!(
            events("\u{feff}\u{feff}data: x\n\n"),
            [Event::default()],
            "the second BOM makes an unknown field"
        );
        // Not a BOM: the byte is kept, so the field is not `data`.
        let near = pieces(&[b"\xef", b"data: z\n\n"]);
        assert_eq!(all(near, 1024).unwrap(), [Event::default()]);
    }

    // HTML §9.2.6: `retry` with anything but ASCII digits is ignored.
    #[test]
    fn retry_takes_only_digits() {
        let retry = |text: &str| events(text).first().and_then(|e| e.retry);
        assert_eq!(retry("retry: 1500\n\n"), Some(1500));
        assert_eq!(retry("retry:0\n\n"), Some(0));
        for ignored in [
            "retry: 15x\n\n",
            "retry: -1\n\n",
            "retry: +5\n\n",
            "retry:\n\n",
            "retry:  5\n\n",
            "retry: 1.5\n\n",
        ] {
            assert_eq!(retry(ignored), None, "{:?}", ignored);
        }
        assert_eq!(retry("retry: 99999999999999999999999\n\n"), Some(u64::MAX));
    }

    // HTML §9.2.6: an `id` with NUL is ignored; a block without data is
    // not dispatched but its id still counts; `event` sets the type of one
    // event; unknown fields are ignored; the name is case-sensitive.
    #[test]
    fn ids_types_and_unknown_fields() {
        assert_eq!(events("id: a\0b\ndata: x\n\n"), [message("x")]);
        assert_eq!(events("id: 5\n\n"), [with_id(Event::default(), "5")]);
        let typed = Event {
            kind: "add".into(),
            data: "1".into(),
            ..Event::default()
        };
        assert_eq!(
            events("event: add\ndata: 1\n\nevent: add\n\ndata: 2\n\n"),
            [typed, Event::default(), message("2")]
        );
        assert_eq!(events("foo: bar\nDATA: no\ndata\n\n"), [message("")]);
    }

    // HTML §9.2.5: at the end an unfinished block is not dispatched; its
    // retry was already in effect.
    #[test]
    fn the_end_drops_an_unfinished_block() {
        assert_eq!(events("data: x\n"), []);
        let retry = Event {
            retry: Some(10),
            ..Event::default()
        };
        assert_eq!(events("data: x\nretry: 10\n"), [retry]);
    }

    // Bounded: a line or a block over `max` fails; keepalives between
    // events do not add up; incremental: an event is handed up before the
    // rest of the stream is read.
    #[test]
    fn bounded_and_incremental() {
        assert!(all("data: 0123456789\n\n".as_bytes(), 8).is_err());
        assert!(all("data: 0123\ndata: 4567\n\n".as_bytes(), 16).is_err());
        let keepalives = ":\n".repeat(100);
        assert_eq!(all(keepalives.as_bytes(), 8).unwrap().len(), 100);
        let mut reader = pieces(&[b"data: first\n\n", b"data: sec"]);
        reader.fail_after = true;
        let mut events = Events::new(reader, 1024);
        assert_eq!(events.next_event().unwrap(), Some(message("first")));
        assert!(events.next_event().is_err());
    }
}
