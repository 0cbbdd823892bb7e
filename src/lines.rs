//! Bounded reading of newline-delimited text: the framing of stdio, for
//! the server's stdio transport and the client's. Nothing of MCP.

use std::io::{self, BufRead};

/// What [`read_line`] found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Line {
    /// A line (or the last bytes before end of input) is in the buffer.
    Complete,
    /// A line over the limit was consumed and dropped.
    TooLong,
    /// End of input, nothing read.
    End,
}

/// Reads up to the next `\n` into `buf` (without it), keeping at most
/// `max` bytes; a longer line is consumed and reported as `TooLong`.
pub(crate) fn read_line<R: BufRead>(
    reader: &mut R,
    buf: &mut Vec<u8>,
    max: usize,
) -> io::Result<Line> {
    buf.clear();
    let mut too_long = false;
    loop {
        let available = match reader.fill_buf() {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok(if too_long {
                Line::TooLong
            } else if buf.is_empty() {
                Line::End
            } else {
                Line::Complete
            });
        }
        let newline = find_newline(available);
        let chunk = &available[..newline.unwrap_or(available.len())];
        if !too_long {
            if buf.len() + chunk.len() > max {
                too_long = true;
                buf.clear();
            } else {
                buf.extend_from_slice(chunk);
            }
        }
        let used = newline.map_or(available.len(), |i| i + 1);
        reader.consume(used);
        if newline.is_some() {
            return Ok(if too_long {
                Line::TooLong
            } else {
                Line::Complete
            });
        }
    }
}

/// The index of the first `\n` in `bytes`, read eight bytes at a time (a
/// pipelining client's lines are scanned once each, on the reading thread).
pub(crate) fn find_newline(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    const NEWLINES: u64 = u64::from_ne_bytes([b'\n'; 8]);
    let mut words = bytes.chunks_exact(8);
    let mut start = 0;
    for word in &mut words {
        let mut eight = [0; 8];
        eight.copy_from_slice(word);
        // Zero bytes where `\n` was; a zero byte sets its high bit here.
        let x = u64::from_ne_bytes(eight) ^ NEWLINES;
        if x.wrapping_sub(ONES) & !x & HIGHS != 0 {
            break;
        }
        start += 8;
    }
    let rest = &bytes[start..];
    rest.iter().position(|&b| b == b'\n').map(|i| start + i)
}

/// `line` without leading and trailing ASCII whitespace (`\r` included).
pub(crate) fn trim(mut line: &[u8]) -> &[u8] {
    while let [rest @ .., last] = line {
        if last.is_ascii_whitespace() {
            line = rest;
        } else {
            break;
        }
    }
    while let [first, rest @ ..] = line {
        if first.is_ascii_whitespace() {
            line = rest;
        } else {
            break;
        }
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8], max: usize) -> Vec<Result<Vec<u8>, &'static str>> {
        let mut reader = io::BufReader::with_capacity(4, input);
        let mut buf = Vec::new();
        let mut out = Vec::new();
        loop {
            match read_line(&mut reader, &mut buf, max).unwrap() {
                Line::Complete => out.push(Ok(buf.clone())),
                Line::TooLong => out.push(Err("too long")),
                Line::End => return out,
            }
        }
    }

    // STDIO-1: lines are split on \n; an over-long line is skipped whole.
    #[test]
    fn capped_lines() {
        let got = lines(b"ab\n0123456789\ncd\nlast", 5);
        assert_eq!(
            got,
            vec![
                Ok(b"ab".to_vec()),
                Err("too long"),
                Ok(b"cd".to_vec()),
                Ok(b"last".to_vec())
            ]
        );
        assert_eq!(lines(b"0123456789", 5), vec![Err("too long")]);
    }

    // The word-at-a-time search agrees with a byte-by-byte one at every
    // length and position, with bytes that differ from `\n` by one bit.
    #[test]
    fn finds_the_first_newline() {
        for len in 0..40 {
            for at in 0..=len {
                let mut bytes = vec![b'\n' ^ 0x80; len];
                bytes
                    .iter_mut()
                    .skip(at + 1)
                    .for_each(|b| *b = b'\n' ^ 0x01);
                if at < len {
                    bytes[at] = b'\n';
                    bytes
                        .iter_mut()
                        .skip(at + 2)
                        .step_by(3)
                        .for_each(|b| *b = b'\n');
                }
                let slow = bytes.iter().position(|&b| b == b'\n');
                assert_eq!(find_newline(&bytes), slow, "{:?}", bytes);
            }
        }
    }

    #[test]
    fn trims_whitespace_and_cr() {
        assert_eq!(trim(b"  {}\r"), b"{}");
        assert_eq!(trim(b" \t "), b"");
    }
}
