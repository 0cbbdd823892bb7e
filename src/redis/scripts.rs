//! The Lua scripts that make each move of the task store atomic.
//!
//! Every script takes the same eight keys ([`Keys`](super::keys::Keys)):
//! the record, its lease, the sets that count kept tasks (all, the share's,
//! the peer's, the anonymous owner's; sorted sets of task ids scored by the
//! millisecond at which the record's key expires), the owner's listing
//! (a sorted set of `<created ms, 16 digits>:<id>` members, all scored 0,
//! read by lexical range) and the same members scored by expiry, by which
//! an insert removes up to 100 expired members from the owner's listing. And the same first arguments: the time now (ms
//! since the epoch), the task id, the record's JSON, its key's expiry (ms),
//! which of the share, peer and anonymous sets count it (`"110"`: the share
//! and the peer), its listing member, and its lease (ms; 0: none).

use redis::Script;

/// What every script shares: `rescore` sets the expiry of the record's key
/// and moves its entries in the counting sets and the listing with it.
const COMMON: &str = r#"
local function extend(key, px)
  if redis.call('PTTL', key) < px then redis.call('PEXPIRE', key, px) end
end
local function rescore(px)
  local now = tonumber(ARGV[1])
  redis.call('PEXPIRE', KEYS[1], px)
  local sets = {KEYS[3]}
  for i = 1, 3 do
    if string.sub(ARGV[5], i, i) == '1' then table.insert(sets, KEYS[3 + i]) end
  end
  for _, key in ipairs(sets) do
    redis.call('ZADD', key, now + px, ARGV[2])
    extend(key, px)
  end
  redis.call('ZADD', KEYS[7], 0, ARGV[6])
  extend(KEYS[7], px)
  redis.call('ZADD', KEYS[8], now + px, ARGV[6])
  extend(KEYS[8], px)
end
"#;

/// Keeps a new record unless a bound is reached (ARGV 8 to 11: the bounds
/// on all tasks, per share, per peer, for the anonymous owner). Answers
/// `ok`, `exists`, or the name of the bound: `all`, `share`, `peer`, `anon`.
const INSERT: &str = r#"
local now = tonumber(ARGV[1])
for i = 3, 6 do redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now) end
local gone = redis.call('ZRANGEBYSCORE', KEYS[8], '-inf', now, 'LIMIT', 0, 100)
for _, member in ipairs(gone) do
  redis.call('ZREM', KEYS[7], member)
  redis.call('ZREM', KEYS[8], member)
end
if redis.call('EXISTS', KEYS[1]) == 1 then return 'exists' end
if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[8]) then return 'all' end
local names = {'share', 'peer', 'anon'}
for i = 1, 3 do
  if string.sub(ARGV[5], i, i) == '1'
    and redis.call('ZCARD', KEYS[3 + i]) >= tonumber(ARGV[8 + i]) then
    return names[i]
  end
end
redis.call('SET', KEYS[1], ARGV[3])
rescore(tonumber(ARGV[4]))
if tonumber(ARGV[7]) > 0 then redis.call('SET', KEYS[2], '1', 'PX', ARGV[7]) end
return 'ok'
"#;

/// Compare-and-set: writes the record only if its key still holds ARGV 8
/// (what the caller read and changed) and, when ARGV 9 is `1`, only while
/// its lease is absent. Answers `ok`, `gone`, `retry` or `alive`.
const WRITE: &str = r#"
local old = redis.call('GET', KEYS[1])
if not old then return 'gone' end
if old ~= ARGV[8] then return 'retry' end
if ARGV[9] == '1' and redis.call('EXISTS', KEYS[2]) == 1 then return 'alive' end
redis.call('SET', KEYS[1], ARGV[3])
rescore(tonumber(ARGV[4]))
return 'ok'
"#;

/// Renews the lease of a running task and keeps its record at least ARGV
/// 4 ms more; 0 (and nothing done) when the record is gone or final.
const RENEW: &str = r#"
local value = redis.call('GET', KEYS[1])
if not value then return 0 end
local ok, record = pcall(cjson.decode, value)
if not ok or type(record) ~= 'table' then return 0 end
if record['status'] ~= 'working' and record['status'] ~= 'input_required' then
  return 0
end
redis.call('SET', KEYS[2], '1', 'PX', ARGV[7])
local px = redis.call('PTTL', KEYS[1])
if px < tonumber(ARGV[4]) then px = tonumber(ARGV[4]) end
rescore(px)
return 1
"#;

/// The three scripts, loaded on first use (`EVALSHA`, then `SCRIPT LOAD`
/// when Redis does not know them: the redis crate's `Script`).
pub(crate) struct Scripts {
    pub(crate) insert: Script,
    pub(crate) write: Script,
    pub(crate) renew: Script,
}

impl std::fmt::Debug for Scripts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Scripts")
    }
}

impl Scripts {
    pub(crate) fn new() -> Scripts {
        Scripts {
            insert: Script::new(&format!("{}{}", COMMON, INSERT)),
            write: Script::new(&format!("{}{}", COMMON, WRITE)),
            renew: Script::new(&format!("{}{}", COMMON, RENEW)),
        }
    }
}
