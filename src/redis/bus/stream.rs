//! Reading Redis stream replies (`XREAD`, `XREVRANGE`, `XINFO STREAM`)
//! from [`redis::Value`] by hand: the redis crate's `streams` feature is
//! off. RESP2 arrays and RESP3 maps are both taken; nothing Redis sends
//! panics here, an odd reply is `None` or a skipped entry.

use redis::Value;

/// A stream entry id, `<ms>-<seq>`; ordered as Redis orders them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct EntryId {
    pub(crate) ms: u64,
    pub(crate) seq: u64,
}

impl EntryId {
    /// `0-0`: before every entry.
    pub(crate) const ZERO: EntryId = EntryId { ms: 0, seq: 0 };

    /// `<ms>-<seq>` (digits both); `None` for anything else.
    pub(crate) fn parse(text: &[u8]) -> Option<EntryId> {
        let text = std::str::from_utf8(text).ok()?;
        let (ms, seq) = text.split_once('-')?;
        Some(EntryId {
            ms: ms.parse().ok()?,
            seq: seq.parse().ok()?,
        })
    }
}

impl std::fmt::Display for EntryId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-{}", self.ms, self.seq)
    }
}

/// One entry read: its id (when it had one) and its `e` field (when it
/// had one).
#[derive(Debug, PartialEq)]
pub(crate) struct Entry {
    pub(crate) id: Option<EntryId>,
    pub(crate) event: Option<Vec<u8>>,
}

/// The entries of `key` in an `XREAD` reply: `Nil` (the block timed out)
/// is none; RESP2 `[[key, [entry, …]], …]` or RESP3 `{key: [entry, …]}`.
/// `None` when the reply has neither shape.
pub(crate) fn xread_entries(reply: &Value, key: &str) -> Option<Vec<Entry>> {
    let streams: Vec<(&Value, &Value)> = match reply {
        Value::Nil => return Some(Vec::new()),
        Value::Array(streams) => {
            let mut pairs = Vec::with_capacity(streams.len());
            for stream in streams {
                match stream {
                    Value::Array(pair) if pair.len() == 2 => pairs.push((&pair[0], &pair[1])),
                    _ => return None,
                }
            }
            pairs
        }
        Value::Map(streams) => streams.iter().map(|(k, v)| (k, v)).collect(),
        _ => return None,
    };
    let mut entries = Vec::new();
    for (name, list) in streams {
        if bytes(name) != Some(key.as_bytes()) {
            continue;
        }
        entries.extend(range_entries(list)?);
    }
    Some(entries)
}

/// The entries of an `XRANGE`/`XREVRANGE` reply, `[[id, [field, value, …]], …]`;
/// `None` when it is not an array.
pub(crate) fn range_entries(reply: &Value) -> Option<Vec<Entry>> {
    match reply {
        Value::Array(list) | Value::Set(list) => Some(list.iter().map(entry).collect()),
        Value::Nil => Some(Vec::new()),
        _ => None,
    }
}

/// One `[id, fields]`: whatever of it can be read.
fn entry(value: &Value) -> Entry {
    let parts = match value {
        Value::Array(parts) if parts.len() == 2 => parts,
        _ => {
            return Entry {
                id: None,
                event: None,
            }
        }
    };
    Entry {
        id: bytes(&parts[0]).and_then(EntryId::parse),
        event: field(&parts[1], b"e"),
    }
}

/// The value of `name` in a flat `[field, value, …]` array or a map.
fn field(fields: &Value, name: &[u8]) -> Option<Vec<u8>> {
    match fields {
        Value::Array(flat) => flat
            .chunks(2)
            .find(|pair| pair.len() == 2 && bytes(&pair[0]) == Some(name))
            .and_then(|pair| bytes(&pair[1]))
            .map(<[u8]>::to_vec),
        Value::Map(pairs) => pairs
            .iter()
            .find(|(k, _)| bytes(k) == Some(name))
            .and_then(|(_, v)| bytes(v))
            .map(<[u8]>::to_vec),
        _ => None,
    }
}

/// `max-deleted-entry-id` of an `XINFO STREAM` reply (Redis 7 and later):
/// the largest id trimmed or deleted; `None` when absent or odd.
pub(crate) fn max_deleted(reply: &Value) -> Option<EntryId> {
    field(reply, b"max-deleted-entry-id").and_then(|id| EntryId::parse(&id))
}

/// The bytes of a string reply.
fn bytes(value: &Value) -> Option<&[u8]> {
    match value {
        Value::BulkString(bytes) => Some(bytes),
        Value::SimpleString(text) => Some(text.as_bytes()),
        Value::VerbatimString { text, .. } => Some(text.as_bytes()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bulk(text: &str) -> Value {
        Value::BulkString(text.as_bytes().to_vec())
    }

    fn id(ms: u64, seq: u64) -> EntryId {
        EntryId { ms, seq }
    }

    // Ids order by milliseconds, then sequence; junk is refused.
    #[test]
    fn ids_parse_and_order() {
        assert_eq!(EntryId::parse(b"12-3"), Some(id(12, 3)));
        assert!(id(2, 0) > id(1, 99));
        assert_eq!(id(7, 1).to_string(), "7-1");
        for junk in [&b"12"[..], b"a-1", b"1-", b"-1", b"1-2-3", b"\xff"] {
            assert_eq!(EntryId::parse(junk), None, "{:?}", junk);
        }
    }

    // RESP2 and RESP3 XREAD replies give the same entries; an entry
    // without `e`, or of an odd shape, is kept as what could be read.
    #[test]
    fn xread_replies_of_both_protocols() {
        let entries = Value::Array(vec![
            Value::Array(vec![bulk("1-0"), Value::Array(vec![bulk("e"), bulk("{}")])]),
            Value::Array(vec![bulk("2-0"), Value::Array(vec![bulk("x"), bulk("y")])]),
            Value::Int(3),
        ]);
        let resp2 = Value::Array(vec![Value::Array(vec![bulk("k"), entries.clone()])]);
        let resp3 = Value::Map(vec![(bulk("k"), entries)]);
        let expected = vec![
            Entry {
                id: Some(id(1, 0)),
                event: Some(b"{}".to_vec()),
            },
            Entry {
                id: Some(id(2, 0)),
                event: None,
            },
            Entry {
                id: None,
                event: None,
            },
        ];
        assert_eq!(xread_entries(&resp2, "k"), Some(expected));
        assert_eq!(xread_entries(&resp3, "k").map(|e| e.len()), Some(3));
        assert_eq!(xread_entries(&resp2, "other"), Some(Vec::new()));
        assert_eq!(xread_entries(&Value::Nil, "k"), Some(Vec::new()));
        assert_eq!(xread_entries(&Value::Int(1), "k"), None);
        assert_eq!(xread_entries(&Value::Array(vec![Value::Nil]), "k"), None);
    }

    // XINFO STREAM's max-deleted-entry-id, flat (RESP2) or a map (RESP3).
    #[test]
    fn max_deleted_from_xinfo() {
        let flat = Value::Array(vec![
            bulk("length"),
            Value::Int(2),
            bulk("max-deleted-entry-id"),
            bulk("5-1"),
        ]);
        assert_eq!(max_deleted(&flat), Some(id(5, 1)));
        let map = Value::Map(vec![(bulk("max-deleted-entry-id"), bulk("0-0"))]);
        assert_eq!(max_deleted(&map), Some(EntryId::ZERO));
        assert_eq!(max_deleted(&Value::Array(vec![bulk("length")])), None);
    }
}
