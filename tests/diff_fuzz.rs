//! Randomized differential test: redis-lite against a real redis-server 7.0.15.
//!
//! A small deterministic PRNG (xorshift64*) generates a sequence of commands
//! over a tiny key space (`k0`..`k5`, databases 0 and 1) so that keys are
//! constantly reused across types: string/list/set/hash/zset writes and
//! reads, DEL/EXPIRE/PERSIST/TTL, MULTI/EXEC/DISCARD with WATCH/UNWATCH (and a
//! second connection that sometimes writes a watched key between WATCH and
//! EXEC), EVAL with a handful of script templates, SELECT, and error cases
//! (wrong arity, WRONGTYPE, syntax errors, queue-time failures in MULTI).
//! Every command goes to both servers in lockstep and the raw reply bytes
//! must be identical.
//!
//! Determinism: replies that depend on timing or hash order are avoided or
//! normalised. TTLs are large (>= 1000 s), and a positive `TTL` reply compares
//! as `:<ttl>`; `KEYS *` is sorted; sets only ever hold small integers (an
//! intset iterates in sorted order on both sides); hashes and zsets stay
//! small (listpack, insertion/score order). No SPOP/SRANDMEMBER/RANDOMKEY.
//!
//! Knobs: `DIFF_FUZZ_SEED` (default 1), `DIFF_FUZZ_STEPS` (default 3000
//! generated operations; one operation may be a whole transaction), and
//! `DIFF_FUZZ_CONTINUE=1` to log every mismatch, reset both servers
//! (FLUSHALL, fresh connections) and keep going instead of stopping at the
//! first one (handy for collecting distinct bugs over many seeds);
//! `DIFF_FUZZ_VERBOSE=1` prints every command with its reply;
//! `DIFF_FUZZ_ALL=1` is accepted but no longer changes anything (every
//! generated command, BITPOS, LCS, BITOP, BITFIELD, PF* and GEO* included,
//! is implemented). On a
//! mismatch the panic message shows the seed, step index, the last commands
//! with redis-server's replies, and both replies.

mod common;

use common::{escape, split_aggregate, Conn, Process, RealRedis, Server};
use std::collections::VecDeque;

/// How many recent commands a mismatch report shows.
const HISTORY: usize = 20;
const DEFAULT_SEED: u64 = 1;
const DEFAULT_STEPS: usize = 3000;

/// xorshift64* (Vigna): tiny, deterministic, good enough for a generator.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        // Mix the seed so that small seeds (1, 2, 3...) diverge at once.
        let mut r = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        for _ in 0..8 {
            r.next();
        }
        r
    }
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }
    /// An integer in `lo..=hi` as a string.
    fn int(&mut self, lo: i64, hi: i64) -> String {
        (lo + self.below((hi - lo + 1) as usize) as i64).to_string()
    }
}

/// How a reply is normalised before comparison.
#[derive(Clone, Copy, PartialEq)]
enum Norm {
    Raw,
    /// A positive integer (remaining TTL) compares as `:<ttl>`.
    Ttl,
    /// Top-level aggregate compared as a sorted multiset.
    Sort,
}

/// One command for one connection (0 = A, the main one; 1 = B).
struct Step {
    conn: usize,
    args: Vec<String>,
    norm: Norm,
}

// ---------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------

const KEYS: &[&str] = &["k0", "k1", "k2", "k3", "k4", "k5"];
const VALUES: &[&str] = &[
    "0",
    "1",
    "2",
    "-1",
    "10",
    "3.5",
    "a",
    "b",
    "hello",
    "",
    "12345678901234567890",
    "x y",
    "007",
    " 1",
];
const SET_MEMBERS: &[&str] = &["0", "1", "2", "3", "5", "8", "13", "-4", "100"];
const FIELDS: &[&str] = &["f0", "f1", "f2", "f3"];
const ZMEMBERS: &[&str] = &["a", "b", "c", "d"];
const SCORES: &[&str] = &[
    "0", "1", "2", "-1", "1.5", "2.25", "+inf", "-inf", "3e2", "abc", "10",
];
const RANGE_BOUNDS: &[&str] = &["0", "1", "-1", "-2", "2", "10", "-10", "x"];
const SCORE_BOUNDS: &[&str] = &["-inf", "+inf", "0", "1", "(1", "2", "(2", "1.5", "bad"];

fn key(rng: &mut Rng) -> String {
    rng.pick(KEYS).to_string()
}
fn val(rng: &mut Rng) -> String {
    rng.pick(VALUES).to_string()
}
fn s(xs: &[&str]) -> Vec<String> {
    xs.iter().map(|x| x.to_string()).collect()
}

/// Script templates for EVAL: (body, number of keys).
const SCRIPTS: &[(&str, usize)] = &[
    ("return redis.call('GET', KEYS[1])", 1),
    ("return redis.pcall('INCR', KEYS[1])", 1),
    ("return redis.call('INCR', KEYS[1])", 1),
    (
        "return {redis.call('RPUSH', KEYS[1], ARGV[1]), redis.call('LRANGE', KEYS[1], 0, -1)}",
        1,
    ),
    ("return {1, 2, nil, 4}", 0),
    ("return {'a', {'b', 3}, nil}", 0),
    ("return redis.status_reply('FINE')", 0),
    ("return redis.error_reply('MYERR something')", 0),
    ("return redis.error_reply('no code here')", 0),
    ("return redis.call('HGETALL', KEYS[1])", 1),
    (
        "local r = redis.pcall('HSET', KEYS[1], 'f1', ARGV[1]) \
         if type(r) == 'table' and r.err then return 'E:' .. r.err end return r",
        1,
    ),
    (
        "return redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')",
        1,
    ),
    ("return 3.99", 0),
    ("return {true, false, 'x'}", 0),
    (
        "redis.call('SET', KEYS[1], ARGV[1]) return redis.call('TYPE', KEYS[1])",
        1,
    ),
    ("return redis.call('TYPE', KEYS[1])", 1),
    ("return redis.call('nosuchcommand')", 0),
    ("return redis.pcall('nosuchcommand')", 0),
    ("return redis.call('SMEMBERS', KEYS[1])", 1),
    ("return redis.call('EXISTS', KEYS[1], KEYS[2])", 2),
    // An integer member only (the length of ARGV[1]): sets stay intsets.
    ("return redis.call('SADD', KEYS[1], string.len(ARGV[1]))", 1),
    ("return redis.pcall('LPUSH', KEYS[1], ARGV[1])", 1),
    ("return redis.call('GET')", 0),
    ("return redis.pcall('SET', KEYS[1])", 1),
    ("return redis.call('DEL', KEYS[1], KEYS[2])", 2),
    ("return redis.call('EXPIRE', KEYS[1], 5000)", 1),
    ("return redis.call('ZINCRBY', KEYS[1], ARGV[1], 'a')", 1),
    (
        "return redis.call('HINCRBYFLOAT', KEYS[1], 'f0', ARGV[1])",
        1,
    ),
    ("return tostring(redis.call('ZSCORE', KEYS[1], 'a'))", 1),
    (
        "local t = redis.call('MGET', KEYS[1], KEYS[2]) return #t",
        2,
    ),
    ("return redis.call('SET', KEYS[1], ARGV[1])", 1),
    ("return redis.call('PING')", 0),
    ("error('raw lua error')", 0),
    ("return {err='ERR custom table error'}", 0),
    ("return {ok='custom status'}", 0),
    ("return redis.call('SELECT', 1)", 0),
    ("return nil", 0),
    ("return ", 0),
    ("return 1 +", 0),
    ("return redis.sha1hex(ARGV[1])", 0),
    ("redis.setresp(3) return redis.call('HGETALL', KEYS[1])", 1),
    (
        "redis.setresp(3) return redis.call('ZSCORE', KEYS[1], 'a')",
        1,
    ),
    ("redis.setresp(3) return redis.call('SMEMBERS', KEYS[1])", 1),
    ("return redis.call('SET', KEYS[1], {})", 1),
    ("return redis.call()", 0),
    ("return {1.5, 2.9, -0.1}", 0),
    ("return redis.call('EVAL', 'return 1', 0)", 0),
    ("return redis.pcall('MULTI')", 0),
    (
        "redis.call('SET', KEYS[1], ARGV[1]) return redis.call('GET', KEYS[1])",
        1,
    ),
    (
        "return pcall(function() redis.call('LPUSH', KEYS[1], 'x') end)",
        1,
    ),
    ("return redis.pcall('GET', KEYS[1], 'extra')", 1),
    ("return redis.error_reply('')", 0),
    ("return {err=''}", 0),
    ("return redis.status_reply('')", 0),
    ("local t = {} t[1] = 'a' t[3] = 'c' return t", 0),
    ("return tonumber(ARGV[1])", 0),
    ("return redis.call('INCRBYFLOAT', KEYS[1], ARGV[1])", 1),
    ("return redis.call('OBJECT', 'ENCODING', KEYS[1])", 1),
    ("return redis.pcall('ZADD', KEYS[1], ARGV[1], 'a')", 1),
    ("return redis.call('LPOP', KEYS[1], 2)", 1),
    ("return redis.call('SORT', KEYS[1])", 1),
    (
        "return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '+inf', 'LIMIT', 1, 2)",
        1,
    ),
    ("return redis.call('HINCRBY', KEYS[1], 'f0', ARGV[1])", 1),
    ("return cjson.encode({1, 'two', ARGV[1]})", 0),
    ("return cjson.decode('[1,2,3]')", 0),
    (
        "return {redis.call('EXISTS', KEYS[1]), redis.call('TYPE', KEYS[1])}",
        1,
    ),
    ("return redis.call('RENAME', KEYS[1], KEYS[2])", 2),
];

/// One random command. `plain` commands only: no normalisation needed (for
/// use inside MULTI, where the reply is nested in EXEC's array).
fn gen_cmd(rng: &mut Rng, plain: bool) -> (Vec<String>, Norm) {
    let pick = rng.below(100);
    // Each type family has a home key it uses most of the time, so values
    // grow into interesting shapes instead of mostly hitting WRONGTYPE.
    let home = match pick {
        0..=16 => "k0",
        17..=31 => "k2",
        32..=44 => "k3",
        45..=56 => "k4",
        57..=69 => "k5",
        _ => "k1",
    };
    let k = if rng.chance(70) {
        home.to_string()
    } else {
        key(rng)
    };
    let k2 = if rng.chance(50) {
        home.to_string()
    } else {
        key(rng)
    };
    let v = val(rng);
    let mut norm = Norm::Raw;
    let args: Vec<String> = match pick {
        // ---- strings
        0..=3 => {
            let mut a = vec!["SET".into(), k, v];
            match rng.below(8) {
                0 => a.push("NX".into()),
                1 => a.push("XX".into()),
                2 => a.push("GET".into()),
                3 => a.extend(["EX".into(), rng.int(1000, 5000)]),
                4 => a.push("KEEPTTL".into()),
                5 => a.extend(["NX".into(), "XX".into()]),
                6 => a.extend(["EX".into(), rng.pick(&["0", "-5", "abc"]).into()]),
                _ => {}
            }
            a
        }
        4..=6 => vec!["GET".into(), k],
        7 => vec![rng.pick(&["INCR", "DECR"]).into(), k],
        8 => vec![
            rng.pick(&["INCRBY", "DECRBY"]).into(),
            k,
            rng.pick(&["5", "-3", "x", "1.5"]).into(),
        ],
        9 => vec![
            "INCRBYFLOAT".into(),
            k,
            rng.pick(&["1.5", "-0.25", "x", "3", "1e3"]).into(),
        ],
        10 => vec!["APPEND".into(), k, v],
        11 => vec!["STRLEN".into(), k],
        12 => vec!["GETRANGE".into(), k, rng.int(-5, 5), rng.int(-5, 5)],
        13 => vec!["SETRANGE".into(), k, rng.int(-1, 8), v],
        14 => vec!["MGET".into(), k, k2],
        15 => vec!["MSET".into(), k, v, k2, val(rng)],
        16 => vec![rng.pick(&["GETDEL", "SETNX"]).into(), k, v]
            .into_iter()
            .take(if rng.chance(50) { 2 } else { 3 })
            .collect(),
        // ---- lists
        17..=19 => {
            let mut a = vec![
                rng.pick(&["LPUSH", "RPUSH", "LPUSHX", "RPUSHX"]).into(),
                k,
                v,
            ];
            if rng.chance(30) {
                a.push(val(rng));
            }
            a
        }
        20..=21 => {
            let mut a = vec![rng.pick(&["LPOP", "RPOP"]).into(), k];
            if rng.chance(40) {
                a.push(rng.pick(&["0", "1", "2", "5", "-1", "x"]).into());
            }
            a
        }
        22..=23 => vec![
            "LRANGE".into(),
            k,
            rng.pick(RANGE_BOUNDS).into(),
            rng.pick(RANGE_BOUNDS).into(),
        ],
        24 => vec!["LLEN".into(), k],
        25 => vec!["LINDEX".into(), k, rng.int(-3, 3)],
        26 => vec!["LSET".into(), k, rng.int(-3, 3), v],
        27 => vec!["LREM".into(), k, rng.int(-2, 2), v],
        28 => vec![
            "LINSERT".into(),
            k,
            rng.pick(&["BEFORE", "AFTER", "MIDDLE"]).into(),
            val(rng),
            v,
        ],
        29 => {
            let mut a = vec!["LPOS".into(), k, v];
            if rng.chance(50) {
                a.extend(["RANK".into(), rng.pick(&["1", "-1", "2", "0"]).into()]);
            }
            if rng.chance(30) {
                a.extend(["COUNT".into(), rng.pick(&["0", "2"]).into()]);
            }
            a
        }
        30 => vec!["LTRIM".into(), k, rng.int(-2, 2), rng.int(-2, 4)],
        31 => vec![
            "LMOVE".into(),
            k,
            k2,
            rng.pick(&["LEFT", "RIGHT"]).into(),
            rng.pick(&["LEFT", "RIGHT", "UP"]).into(),
        ],
        // ---- sets (integers only: intset order is deterministic)
        32..=34 => {
            let mut a = vec!["SADD".into(), k, rng.pick(SET_MEMBERS).into()];
            if rng.chance(40) {
                a.push(rng.pick(SET_MEMBERS).into());
            }
            a
        }
        35 => vec!["SREM".into(), k, rng.pick(SET_MEMBERS).into()],
        36..=37 => vec!["SMEMBERS".into(), k],
        38 => vec!["SISMEMBER".into(), k, rng.pick(SET_MEMBERS).into()],
        39 => vec!["SCARD".into(), k],
        40 => vec![rng.pick(&["SINTER", "SUNION", "SDIFF"]).into(), k, k2],
        41 => vec![
            rng.pick(&["SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"])
                .into(),
            key(rng),
            k,
            k2,
        ],
        42 => vec!["SMOVE".into(), k, k2, rng.pick(SET_MEMBERS).into()],
        43 => vec![
            "SMISMEMBER".into(),
            k,
            rng.pick(SET_MEMBERS).into(),
            rng.pick(SET_MEMBERS).into(),
        ],
        44 => vec![
            "SINTERCARD".into(),
            rng.pick(&["2", "1", "0", "3"]).into(),
            k,
            k2,
        ],
        // ---- hashes
        45..=47 => {
            let mut a = vec!["HSET".into(), k, rng.pick(FIELDS).into(), v];
            if rng.chance(30) {
                a.extend([rng.pick(FIELDS).into(), val(rng)]);
            }
            if rng.chance(5) {
                a.push("dangling".into());
            }
            a
        }
        48 => vec!["HGET".into(), k, rng.pick(FIELDS).into()],
        49..=50 => vec!["HGETALL".into(), k],
        51 => vec![
            "HDEL".into(),
            k,
            rng.pick(FIELDS).into(),
            rng.pick(FIELDS).into(),
        ],
        52 => vec![
            "HINCRBY".into(),
            k,
            rng.pick(FIELDS).into(),
            rng.pick(&["1", "-2", "x"]).into(),
        ],
        53 => vec![
            "HINCRBYFLOAT".into(),
            k,
            rng.pick(FIELDS).into(),
            rng.pick(&["1.5", "-2", "x"]).into(),
        ],
        54 => vec![rng.pick(&["HLEN", "HKEYS", "HVALS"]).into(), k],
        55 => vec![
            "HMGET".into(),
            k,
            rng.pick(FIELDS).into(),
            rng.pick(FIELDS).into(),
        ],
        56 => vec![
            rng.pick(&["HSETNX", "HEXISTS", "HSTRLEN"]).into(),
            k,
            rng.pick(FIELDS).into(),
            v,
        ]
        .into_iter()
        .take(3 + rng.below(2))
        .collect(),
        // ---- zsets
        57..=59 => {
            let mut a = vec!["ZADD".into(), k];
            match rng.below(10) {
                0 => a.push("NX".into()),
                1 => a.push("XX".into()),
                2 => a.push("GT".into()),
                3 => a.push("LT".into()),
                4 => a.push("CH".into()),
                5 => a.push("INCR".into()),
                6 => a.extend(["NX".into(), "XX".into()]),
                7 => a.extend(["GT".into(), "NX".into()]),
                _ => {}
            }
            a.extend([rng.pick(SCORES).into(), rng.pick(ZMEMBERS).into()]);
            if rng.chance(30) {
                a.extend([rng.pick(SCORES).into(), rng.pick(ZMEMBERS).into()]);
            }
            a
        }
        60 => vec![
            "ZINCRBY".into(),
            k,
            rng.pick(SCORES).into(),
            rng.pick(ZMEMBERS).into(),
        ],
        61 => vec!["ZREM".into(), k, rng.pick(ZMEMBERS).into()],
        62..=63 => {
            let mut a = vec![
                rng.pick(&["ZRANGE", "ZREVRANGE"]).into(),
                k,
                rng.pick(RANGE_BOUNDS).into(),
                rng.pick(RANGE_BOUNDS).into(),
            ];
            if rng.chance(50) {
                a.push("WITHSCORES".into());
            }
            a
        }
        64 => {
            let mut a = vec![
                rng.pick(&["ZRANGEBYSCORE", "ZCOUNT", "ZREVRANGEBYSCORE"])
                    .into(),
                k,
                rng.pick(SCORE_BOUNDS).into(),
                rng.pick(SCORE_BOUNDS).into(),
            ];
            if a[0] != "ZCOUNT" && rng.chance(40) {
                a.push("WITHSCORES".into());
            }
            if a[0] != "ZCOUNT" && rng.chance(30) {
                a.extend(["LIMIT".into(), rng.int(-1, 2), rng.int(-1, 2)]);
            }
            a
        }
        65 => vec![
            rng.pick(&["ZRANK", "ZREVRANK", "ZSCORE"]).into(),
            k,
            rng.pick(ZMEMBERS).into(),
        ],
        66 => vec!["ZCARD".into(), k],
        67 => {
            let mut a = vec![rng.pick(&["ZPOPMIN", "ZPOPMAX"]).into(), k];
            if rng.chance(40) {
                a.push(rng.pick(&["0", "1", "3", "-1", "x"]).into());
            }
            a
        }
        68 => vec![
            rng.pick(&["ZUNIONSTORE", "ZINTERSTORE"]).into(),
            key(rng),
            "2".into(),
            k,
            k2,
        ],
        69 => vec![
            "ZMSCORE".into(),
            k,
            rng.pick(ZMEMBERS).into(),
            rng.pick(ZMEMBERS).into(),
        ],
        // ---- keyspace
        70..=72 => {
            let mut a = vec![rng.pick(&["DEL", "UNLINK", "EXISTS"]).into(), k];
            if rng.chance(40) {
                a.push(k2);
            }
            a
        }
        73 => vec!["TYPE".into(), k],
        74..=75 => {
            let mut a = vec![
                rng.pick(&["EXPIRE", "PEXPIRE"]).into(),
                k,
                rng.pick(&[
                    "1000000",
                    "2000000",
                    "5000000",
                    "0",
                    "-1",
                    "x",
                    "9223372036854775807",
                ])
                .into(),
            ];
            if rng.chance(30) {
                a.push(rng.pick(&["NX", "XX", "GT", "LT", "ZZ"]).into());
            }
            if a[0] == "EXPIRE" && a[2].len() == 7 && a[2] != "1000000" {
                a[2] = rng.int(1000, 5000);
            }
            a
        }
        76 => vec!["PERSIST".into(), k],
        77..=78 if !plain => {
            norm = Norm::Ttl;
            vec![rng.pick(&["TTL", "PTTL"]).into(), k]
        }
        79 => vec!["RENAME".into(), k, k2],
        80 => vec!["RENAMENX".into(), k, k2],
        81 => {
            let mut a = vec!["COPY".into(), k, k2];
            if rng.chance(40) {
                a.extend(["DB".into(), rng.pick(&["0", "1", "7"]).into()]);
            }
            if rng.chance(40) {
                a.push("REPLACE".into());
            }
            a
        }
        82 => vec!["MOVE".into(), k, rng.pick(&["0", "1", "x"]).into()],
        83 => vec!["OBJECT".into(), "ENCODING".into(), k],
        84 if !plain => {
            norm = Norm::Sort;
            vec!["KEYS".into(), "*".into()]
        }
        85 => vec!["DBSIZE".into()],
        86 => vec![
            "SELECT".into(),
            rng.pick(&["0", "1", "0", "1", "99", "x"]).into(),
        ],
        // ---- error cases
        87 => {
            // Wrong arity.
            let c = rng.pick(&[
                "GET", "SET", "LPUSH", "SADD", "HSET", "ZADD", "EXPIRE", "DEL", "LRANGE", "HGET",
                "INCRBY", "RENAME", "SELECT",
            ]);
            let mut a = vec![c.to_string()];
            if rng.chance(50) {
                a.push(k);
            }
            a
        }
        88 => {
            let mut a = s(&[rng.pick(&["NOSUCHCMD", "get-", "", "MULTIX"])]);
            if rng.chance(50) {
                a.push(k);
                a.push(v);
            }
            a
        }
        // ---- scripting
        89..=94 => gen_eval(rng),
        95 => vec!["PING".into()],
        96 => vec!["ECHO".into(), v],
        97 => vec![
            "GETEX".into(),
            k,
            rng.pick(&["PERSIST", "EX", "PX"]).into(),
            "5000000".into(),
        ]
        .into_iter()
        .take(3 + rng.below(2))
        .collect(),
        98 => vec![
            "SETEX".into(),
            k,
            rng.pick(&["5000", "0", "-1", "x"]).into(),
            v,
        ],
        _ => vec!["EXISTS".into(), k],
    };
    (args, norm)
}

fn gen_eval(rng: &mut Rng) -> Vec<String> {
    let (body, nkeys) = SCRIPTS[rng.below(SCRIPTS.len())];
    let mut a = vec!["EVAL".to_string(), body.to_string()];
    if rng.chance(3) {
        // Bad numkeys.
        a.push(rng.pick(&["5", "-1", "x"]).into());
        a.push(key(rng));
        return a;
    }
    a.push(nkeys.to_string());
    for _ in 0..nkeys {
        a.push(key(rng));
    }
    a.push(rng.pick(&["1", "2.5", "hello", "-3", "x"]).into());
    a
}

/// Less common commands: SORT, bit ops, lex ranges, multi-key zset ops,
/// small-collection SCANs, bulk inserts that cross encoding thresholds
/// (zset listpack -> skiplist, strings embstr -> raw; sets stay below
/// set-max-intset-entries and hashes below hash-max-listpack-entries so that
/// iteration order stays deterministic).
fn gen_extra(rng: &mut Rng, _all: bool) -> Vec<String> {
    let k = key(rng);
    let k2 = key(rng);
    // Every generated command is implemented now: DIFF_FUZZ_ALL changes
    // nothing here any more.
    match rng.below(41) {
        0 => {
            let mut a = vec!["SORT".into(), k];
            if rng.chance(30) {
                a.push("DESC".into());
            }
            if rng.chance(30) {
                a.push("ALPHA".into());
            }
            if rng.chance(20) {
                a.extend(["LIMIT".into(), rng.int(-1, 2), rng.int(-1, 3)]);
            }
            if rng.chance(10) {
                a.extend(["STORE".into(), key(rng)]);
            }
            a
        }
        1 => vec![
            "SETBIT".into(),
            k,
            rng.int(-1, 40),
            rng.pick(&["0", "1", "2"]).into(),
        ],
        2 => vec!["GETBIT".into(), k, rng.int(0, 40)],
        3 => {
            let mut a = vec!["BITCOUNT".into(), k];
            if rng.chance(50) {
                a.extend([rng.int(-3, 3), rng.int(-3, 3)]);
                if rng.chance(50) {
                    a.push(rng.pick(&["BYTE", "BIT", "NIBBLE"]).into());
                }
            }
            a
        }
        4 => vec![
            "BITPOS".into(),
            k,
            rng.pick(&["0", "1", "2"]).into(),
            rng.int(-2, 2),
        ],
        5 => vec![
            rng.pick(&[
                "ZRANGEBYLEX",
                "ZLEXCOUNT",
                "ZREVRANGEBYLEX",
                "ZREMRANGEBYLEX",
            ])
            .into(),
            k,
            rng.pick(&["-", "+", "[a", "(b", "[c", "x"]).into(),
            rng.pick(&["-", "+", "[a", "(b", "[d", "x"]).into(),
        ],
        6 => vec![
            rng.pick(&["ZREMRANGEBYSCORE", "ZREMRANGEBYRANK"]).into(),
            k,
            rng.int(-2, 2),
            rng.int(-2, 3),
        ],
        7 => {
            let mut a = vec![
                rng.pick(&["ZUNION", "ZINTER", "ZDIFF"]).into(),
                "2".into(),
                k,
                k2,
            ];
            if rng.chance(50) {
                a.push("WITHSCORES".into());
            }
            if rng.chance(20) {
                a.extend([
                    "AGGREGATE".into(),
                    rng.pick(&["MIN", "MAX", "SUM", "AVG"]).into(),
                ]);
            }
            a
        }
        8 => vec!["ZRANGESTORE".into(), k, k2, rng.int(0, 2), rng.int(-1, 5)],
        9 => vec![
            "ZMPOP".into(),
            "2".into(),
            k,
            k2,
            rng.pick(&["MIN", "MAX", "MID"]).into(),
            "COUNT".into(),
            rng.pick(&["1", "3", "0"]).into(),
        ],
        10 => vec![
            "LMPOP".into(),
            "2".into(),
            k,
            k2,
            rng.pick(&["LEFT", "RIGHT"]).into(),
            "COUNT".into(),
            rng.pick(&["1", "3", "0"]).into(),
        ],
        11 => vec![
            // No ZSCAN: a zset that ever crossed 128 members is a skiplist,
            // and its dict iterates in hash order.
            rng.pick(&["SSCAN", "HSCAN"]).into(),
            k,
            "0".into(),
            "COUNT".into(),
            "100".into(),
        ],
        12 => {
            // Bulk zset: crosses zset-max-listpack-entries (128).
            let mut a = vec!["ZADD".into(), "k5".into()];
            let n = 120 + rng.below(20);
            for i in 0..n {
                a.push(format!("{}", (i * 7) % 50));
                a.push(format!("m{i}"));
            }
            a
        }
        13 => {
            let mut a = vec!["RPUSH".into(), "k2".into()];
            for i in 0..(100 + rng.below(100)) {
                a.push(format!("e{}", i % 13));
            }
            a
        }
        14 => {
            // Intset growth below set-max-intset-entries (512).
            let mut a = vec!["SADD".into(), "k3".into()];
            for i in 0..(50 + rng.below(100)) as i64 {
                a.push(format!("{}", i * 3 - 40));
            }
            a
        }
        15 => vec![
            "APPEND".into(),
            k,
            "0123456789012345678901234567890123456789xyz".into(),
        ],
        16 => vec!["OBJECT".into(), "ENCODING".into(), k],
        17 => vec!["LCS".into(), k, k2],
        18 => vec!["MSETNX".into(), k, "1".into(), k2, "2".into()],
        19 => vec![
            "PSETEX".into(),
            k,
            rng.pick(&["5000000", "0", "x"]).into(),
            "v".into(),
        ],
        20 => vec![
            "SWAPDB".into(),
            "0".into(),
            rng.pick(&["1", "0", "9", "x"]).into(),
        ],
        21 => vec!["ZINTERCARD".into(), "2".into(), k, k2],
        22 => vec!["BLPOP".into(), k, k2, "0.01".into()],
        23 => vec![
            "EVALSHA".into(),
            "ffffffffffffffffffffffffffffffffffffffff".into(),
            "0".into(),
        ],
        24 => vec![
            "EVAL_RO".into(),
            "return redis.call('DEL', KEYS[1])".into(),
            "1".into(),
            k,
        ],
        25 => vec![
            "EVAL_RO".into(),
            "return redis.call('GET', KEYS[1])".into(),
            "1".into(),
            k,
        ],
        26 => vec!["SUBSTR".into(), k, rng.int(-3, 3), rng.int(-3, 3)],
        27 => vec![
            "LPOS".into(),
            k,
            rng.pick(&["e1", "a", "1"]).into(),
            "MAXLEN".into(),
            rng.int(0, 3),
        ],
        28 => vec!["ZRANDMEMBER".into(), k, "0".into()],
        29..=39 => gen_bits_geo_hll(rng, k, k2),
        _ => vec!["HSETNX".into(), k, rng.pick(FIELDS).into(), val(rng)],
    }
}

/// Bitmaps (BITOP, BITFIELD, BITPOS ranges), LCS, HyperLogLog and GEO,
/// on the shared keys, so they meet every other type (WRONGTYPE, strings
/// that are not HLLs, zsets whose scores are not geohashes).
fn gen_bits_geo_hll(rng: &mut Rng, k: String, k2: String) -> Vec<String> {
    const TYPES: &[&str] = &["u1", "u8", "i8", "i16", "u63", "i64", "u64", "i0", "x8"];
    const OFFSETS: &[&str] = &["0", "1", "7", "13", "40", "#0", "#1", "#3", "-1", "x"];
    const COORDS: &[(&str, &str)] = &[
        ("13.361389", "38.115556"),
        ("15.087269", "37.502669"),
        ("13.36", "38.11"),
        ("-180", "85.05112878"),
        ("0", "0"),
        ("181", "0"),
        ("x", "1"),
    ];
    match rng.below(11) {
        0 => {
            let op = rng.pick(&["AND", "OR", "XOR", "NOT", "not", "NAND"]);
            let mut a = vec!["BITOP".into(), op.into(), k, k2];
            if rng.chance(50) {
                a.push(key(rng));
            }
            a
        }
        1 | 2 => {
            let ro = rng.chance(20);
            let mut a = vec![if ro { "BITFIELD_RO" } else { "BITFIELD" }.into(), k];
            for _ in 0..1 + rng.below(3) {
                if rng.chance(15) {
                    a.extend([
                        "OVERFLOW".into(),
                        rng.pick(&["WRAP", "SAT", "FAIL", "x"]).into(),
                    ]);
                }
                let op = rng.pick(&["GET", "GET", "SET", "INCRBY"]);
                a.extend([op.into(), rng.pick(TYPES).into(), rng.pick(OFFSETS).into()]);
                if op != "GET" {
                    a.push(
                        rng.pick(&["0", "1", "-1", "127", "300", "-129", "x"])
                            .into(),
                    );
                }
            }
            a
        }
        3 => {
            let mut a = vec!["BITPOS".into(), k, rng.pick(&["0", "1"]).into()];
            a.push(rng.int(-20, 20));
            if rng.chance(70) {
                a.push(rng.int(-20, 20));
                if rng.chance(60) {
                    a.push(rng.pick(&["BIT", "BYTE", "bit"]).into());
                }
            }
            a
        }
        4 => {
            let mut a = vec!["PFADD".into(), k];
            for _ in 0..rng.below(4) {
                a.push(val(rng));
            }
            a
        }
        5 => {
            let mut a = vec!["PFCOUNT".into(), k];
            if rng.chance(40) {
                a.push(k2);
            }
            a
        }
        6 => vec!["PFMERGE".into(), k, k2, key(rng)],
        7 => {
            let mut a = vec!["GEOADD".into(), k];
            if rng.chance(30) {
                a.push(rng.pick(&["NX", "XX", "CH"]).into());
            }
            let (lon, lat) = COORDS[rng.below(COORDS.len())];
            a.extend([lon.into(), lat.into(), rng.pick(ZMEMBERS).into()]);
            a
        }
        8 => match rng.below(3) {
            0 => vec![
                "GEOPOS".into(),
                k,
                rng.pick(ZMEMBERS).into(),
                rng.pick(ZMEMBERS).into(),
            ],
            1 => vec![
                "GEODIST".into(),
                k,
                rng.pick(ZMEMBERS).into(),
                rng.pick(ZMEMBERS).into(),
                rng.pick(&["m", "km", "mi", "ft", "yd"]).into(),
            ],
            _ => vec!["GEOHASH".into(), k, rng.pick(ZMEMBERS).into()],
        },
        9 => {
            let store = rng.chance(25);
            let mut a: Vec<String> = if store {
                vec!["GEOSEARCHSTORE".into(), k2, k]
            } else {
                vec!["GEOSEARCH".into(), k]
            };
            if rng.chance(50) {
                a.extend(["FROMMEMBER".into(), rng.pick(ZMEMBERS).into()]);
            } else {
                let (lon, lat) = COORDS[rng.below(COORDS.len())];
                a.extend(["FROMLONLAT".into(), lon.into(), lat.into()]);
            }
            if rng.chance(50) {
                a.extend([
                    "BYRADIUS".into(),
                    rng.pick(&["1", "200", "5000"]).into(),
                    "km".into(),
                ]);
            } else {
                a.extend([
                    "BYBOX".into(),
                    rng.int(0, 400),
                    rng.int(0, 400),
                    "km".into(),
                ]);
            }
            if !store && rng.chance(40) {
                a.push(rng.pick(&["WITHDIST", "WITHCOORD", "WITHHASH"]).into());
            }
            if rng.chance(30) {
                a.extend(["COUNT".into(), rng.int(0, 3)]);
            }
            if rng.chance(30) {
                a.push(rng.pick(&["ASC", "DESC", "ANY"]).into());
            }
            if store && rng.chance(30) {
                a.push("STOREDIST".into());
            }
            a
        }
        _ => {
            let mut a = vec!["LCS".into(), k, k2];
            if rng.chance(60) {
                a.push(rng.pick(&["IDX", "LEN", "WITHMATCHLEN"]).into());
            }
            if rng.chance(30) {
                a.extend(["MINMATCHLEN".into(), rng.int(-1, 3)]);
            }
            if rng.chance(30) {
                a.push("WITHMATCHLEN".into());
            }
            a
        }
    }
}

/// A command that changes (or may change) a key: B's touch between WATCH
/// and EXEC.
fn gen_write(rng: &mut Rng) -> Vec<String> {
    let k = key(rng);
    match rng.below(12) {
        0 => vec!["SET".into(), k, val(rng)],
        1 => vec!["DEL".into(), k],
        2 => vec!["LPUSH".into(), k, val(rng)],
        3 => vec!["SADD".into(), k, rng.pick(SET_MEMBERS).into()],
        4 => vec!["HSET".into(), k, rng.pick(FIELDS).into(), val(rng)],
        5 => vec!["ZADD".into(), k, "1".into(), rng.pick(ZMEMBERS).into()],
        6 => vec!["EXPIRE".into(), k, rng.int(1000, 5000)],
        7 => vec!["PERSIST".into(), k],
        8 => vec!["INCR".into(), k],
        9 => vec!["SREM".into(), k, rng.pick(SET_MEMBERS).into()],
        10 => vec!["SELECT".into(), rng.pick(&["0", "1"]).into()],
        _ => vec!["GET".into(), k],
    }
}

/// One generated operation: a single command, or a whole transaction.
fn gen_op(rng: &mut Rng, all: bool) -> Vec<Step> {
    let mut steps = Vec::new();
    let r = rng.below(100);
    if r < 12 {
        // Transaction on A, maybe with WATCH and a touch from B.
        if rng.chance(60) {
            let mut w = vec!["WATCH".to_string(), key(rng)];
            if rng.chance(40) {
                w.push(key(rng));
            }
            steps.push(Step {
                conn: 0,
                args: w,
                norm: Norm::Raw,
            });
            if rng.chance(50) {
                steps.push(Step {
                    conn: 1,
                    args: gen_write(rng),
                    norm: Norm::Raw,
                });
            }
            if rng.chance(10) {
                steps.push(Step {
                    conn: 0,
                    args: s(&["UNWATCH"]),
                    norm: Norm::Raw,
                });
            }
        }
        steps.push(Step {
            conn: 0,
            args: s(&["MULTI"]),
            norm: Norm::Raw,
        });
        for _ in 0..rng.below(5) {
            let args = match rng.below(30) {
                0 => s(&["GET"]),            // arity error at queue time
                1 => s(&["NOSUCHCMD", "x"]), // unknown command at queue time
                2 => s(&["WATCH", "k0"]),    // WATCH inside MULTI
                3 => s(&["MULTI"]),          // nested MULTI
                4 => vec!["SELECT".into(), rng.pick(&["0", "1"]).into()],
                _ => gen_cmd(rng, true).0,
            };
            steps.push(Step {
                conn: 0,
                args,
                norm: Norm::Raw,
            });
            if rng.chance(8) {
                steps.push(Step {
                    conn: 1,
                    args: gen_write(rng),
                    norm: Norm::Raw,
                });
            }
        }
        let end = if rng.chance(85) { "EXEC" } else { "DISCARD" };
        steps.push(Step {
            conn: 0,
            args: s(&[end]),
            norm: Norm::Raw,
        });
    } else if r < 14 {
        steps.push(Step {
            conn: 0,
            args: s(&[rng.pick(&["EXEC", "DISCARD", "UNWATCH"])]),
            norm: Norm::Raw,
        });
    } else if r < 15 {
        // Rarely wipe one db, to keep values small.
        steps.push(Step {
            conn: 0,
            args: s(&["FLUSHDB"]),
            norm: Norm::Raw,
        });
    } else {
        let conn = if rng.chance(25) { 1 } else { 0 };
        let (args, norm) = if rng.chance(20) {
            (gen_extra(rng, all), Norm::Raw)
        } else {
            gen_cmd(rng, false)
        };
        steps.push(Step { conn, args, norm });
    }
    steps
}

// ---------------------------------------------------------------------------
// Runner
// ---------------------------------------------------------------------------

fn normalise(reply: Vec<u8>, norm: Norm) -> Vec<u8> {
    match norm {
        Norm::Raw => reply,
        Norm::Ttl => {
            let positive = reply.len() > 3
                && reply[0] == b':'
                && reply[1] != b'-'
                && reply[1..reply.len() - 2].iter().all(u8::is_ascii_digit);
            if positive {
                b":<ttl>\r\n".to_vec()
            } else {
                reply
            }
        }
        Norm::Sort => match split_aggregate(&reply) {
            Some((head, mut elems)) => {
                elems.sort();
                let mut out = head;
                for e in elems {
                    out.extend_from_slice(&e);
                }
                out
            }
            None => reply,
        },
    }
}

fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

fn short(b: &[u8]) -> String {
    let e = escape(b);
    if e.len() > 400 {
        format!("{}...", &e[..400])
    } else {
        e
    }
}

fn describe(args: &[String]) -> String {
    args.iter()
        .map(|a| {
            if a.is_empty() || a.contains(' ') || a.contains('\'') {
                format!("\"{}\"", escape(a.as_bytes()))
            } else {
                a.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Connections A (RESP2) and B (RESP3, so maps, sets, doubles and nulls get
/// compared too) on each server.
fn connect_pair(real: &Process, lite: &Process) -> (Vec<Conn>, Vec<Conn>) {
    let mut r = vec![real.connect(), real.connect()];
    let mut l = vec![lite.connect(), lite.connect()];
    // HELLO's reply holds the client id and version: not compared.
    r[1].must(&["HELLO", "3"]);
    l[1].must(&["HELLO", "3"]);
    (r, l)
}

#[test]
fn diff_fuzz() {
    let Some(real) = RealRedis::start() else {
        return;
    };
    let lite = Server::start();
    let seed = env_num("DIFF_FUZZ_SEED", DEFAULT_SEED);
    let steps = env_num("DIFF_FUZZ_STEPS", DEFAULT_STEPS as u64) as usize;
    let keep_going = std::env::var("DIFF_FUZZ_CONTINUE").is_ok_and(|v| v == "1");
    let all = std::env::var("DIFF_FUZZ_ALL").is_ok_and(|v| v == "1");
    let verbose = std::env::var("DIFF_FUZZ_VERBOSE").is_ok_and(|v| v == "1");
    let mut rng = Rng::new(seed);
    let (mut rc, mut lc) = connect_pair(&real, &lite);
    let mut history: VecDeque<String> = VecDeque::new();
    let mut mismatches = 0usize;
    let mut commands = 0usize;

    for step in 0..steps {
        for st in gen_op(&mut rng, all) {
            commands += 1;
            let who = if st.conn == 0 { "A" } else { "B" };
            let ours = rc[st.conn]
                .cmd(&st.args)
                .unwrap_or_else(|e| panic!("redis-server: {} -> {e}", describe(&st.args)));
            let theirs = match lc[st.conn].cmd(&st.args) {
                Ok(r) => r,
                Err(e) => format!("<{e}>").into_bytes(),
            };
            let (r, l) = (normalise(ours, st.norm), normalise(theirs, st.norm));
            let line = format!("{who}> {}  ->  {}", describe(&st.args), short(&r));
            if verbose {
                eprintln!("{step}: {line}");
            }
            if history.len() == HISTORY {
                history.pop_front();
            }
            history.push_back(line);
            if r != l {
                let report = format!(
                    "diff_fuzz mismatch: DIFF_FUZZ_SEED={seed} step {step} (command #{commands})\n\
                     last commands (conn> command -> redis-server reply):\n  {}\n\
                     command:      {who}> {}\n\
                     redis-server: {}\n\
                     redis-lite:   {}",
                    history.iter().cloned().collect::<Vec<_>>().join("\n  "),
                    describe(&st.args),
                    short(&r),
                    short(&l),
                );
                if !keep_going {
                    panic!("{report}");
                }
                eprintln!("{report}\n");
                mismatches += 1;
                // Reset both sides to a known state and go on.
                rc[0].must(&["FLUSHALL"]);
                lc[0].must(&["FLUSHALL"]);
                (rc, lc) = connect_pair(&real, &lite);
                history.clear();
                break;
            }
        }
    }
    eprintln!(
        "diff_fuzz: seed {seed}, {steps} operations, {commands} commands, {mismatches} mismatches"
    );
    assert_eq!(
        mismatches, 0,
        "diff_fuzz: {mismatches} mismatches (see above)"
    );
}

// ---------------------------------------------------------------------------
// Streams: a generator of its own (so the sequence above is unchanged)
// ---------------------------------------------------------------------------

const STREAM_KEYS: &[&str] = &["x0", "x1", "x2", "xs"];
const STREAM_FIELDS: &[&str] = &["a", "b", "1", "01", "f"];
const STREAM_GROUPS: &[&str] = &["g1", "g2", "nog"];
const STREAM_CONSUMERS: &[&str] = &["c1", "c2", "c3"];

/// An explicit ID near `base` (which grows with the run), so IDs collide
/// (errors), mostly come in order (nodes fill up, trims have work) and
/// sometimes go backwards (XADD refuses).
fn stream_id(rng: &mut Rng, base: u64) -> String {
    let ms = (base + rng.below(12) as u64).saturating_sub(8);
    match rng.below(12) {
        0 => rng
            .pick(&[
                "0-0",
                "0",
                "-",
                "+",
                "x",
                "(5",
                "18446744073709551615-18446744073709551615",
            ])
            .into(),
        1 | 2 => format!("{ms}-*"),
        3 => format!("{ms}"),
        _ => format!("{ms}-{}", rng.below(3)),
    }
}

/// A range bound: `-`, `+`, an ID, an exclusive `(ID` or a bare ms.
fn stream_bound(rng: &mut Rng, base: u64) -> String {
    let ms = base.saturating_sub(rng.below(60) as u64);
    match rng.below(6) {
        0 => "-".into(),
        1 => "+".into(),
        2 => format!("({ms}-{}", rng.below(3)),
        3 => format!("{ms}"),
        _ => format!("{ms}-{}", rng.below(3)),
    }
}

/// One stream command. Replies that hold times (idle, seen-time,
/// delivery time) are avoided: XPENDING only in its summary form, XCLAIM
/// and XAUTOCLAIM with JUSTID, no XINFO CONSUMERS / STREAM FULL.
fn gen_stream(rng: &mut Rng, base: u64) -> Vec<String> {
    let k = rng.pick(STREAM_KEYS).to_string();
    let g = rng.pick(STREAM_GROUPS).to_string();
    let c = rng.pick(STREAM_CONSUMERS).to_string();
    match rng.below(40) {
        0..=11 => {
            let mut a = vec!["XADD".to_string(), k];
            if rng.chance(15) {
                let how = rng.pick(&["MAXLEN", "MINID"]);
                a.push(how.into());
                if rng.chance(50) {
                    a.push(rng.pick(&["~", "="]).into());
                }
                a.push(match how {
                    "MINID" => format!("{}", base.saturating_sub(rng.below(80) as u64)),
                    _ => format!("{}", rng.below(200)),
                });
                if rng.chance(20) {
                    a.push("LIMIT".into());
                    a.push(format!("{}", rng.below(5)));
                }
            }
            if rng.chance(5) {
                a.push("NOMKSTREAM".into());
            }
            a.push(stream_id(rng, base));
            let pairs = 1 + rng.below(3);
            let same = rng.chance(60);
            for field in STREAM_FIELDS.iter().take(pairs) {
                a.push(if same {
                    field.to_string()
                } else {
                    rng.pick(STREAM_FIELDS).into()
                });
                a.push(val(rng));
            }
            if rng.chance(2) {
                a.pop();
            }
            a
        }
        12..=13 => {
            let mut a = vec!["XDEL".to_string(), k];
            for _ in 0..1 + rng.below(3) {
                a.push(stream_id(rng, base));
            }
            a
        }
        14 => {
            let how = rng.pick(&["MAXLEN", "MINID", "BAD"]);
            let mut a = vec!["XTRIM".to_string(), k, how.into()];
            if rng.chance(50) {
                a.push(rng.pick(&["~", "="]).into());
            }
            a.push(match how {
                "MINID" => format!("{}", base.saturating_sub(rng.below(80) as u64)),
                _ => format!("{}", rng.below(200)),
            });
            if rng.chance(20) {
                a.push("LIMIT".into());
                a.push(format!("{}", rng.below(50)));
            }
            a
        }
        15..=17 => {
            let cmd = rng.pick(&["XRANGE", "XREVRANGE"]);
            let mut a = vec![
                cmd.to_string(),
                k,
                stream_bound(rng, base),
                stream_bound(rng, base),
            ];
            if rng.chance(40) {
                a.push("COUNT".into());
                a.push(rng.int(-1, 4));
            }
            a
        }
        18 => vec!["XLEN".into(), k],
        19 => vec!["XINFO".into(), "STREAM".into(), k],
        20 => vec!["MEMORY".into(), "USAGE".into(), k],
        21 => {
            let mut a = s(&["XGROUP", "CREATE"]);
            a.extend([k, g, rng.pick(&["$", "0", "5", "10-1", "x"]).into()]);
            if rng.chance(40) {
                a.push("MKSTREAM".into());
            }
            if rng.chance(20) {
                a.push("ENTRIESREAD".into());
                a.push(rng.int(-2, 5));
            }
            a
        }
        22 => {
            let sub = rng.pick(&["SETID", "DESTROY", "CREATECONSUMER", "DELCONSUMER"]);
            let mut a = vec!["XGROUP".to_string(), sub.into(), k, g];
            match sub {
                "SETID" => a.push(rng.pick(&["$", "0", "7", "3-1"]).into()),
                "DESTROY" => {}
                _ => a.push(c),
            }
            a
        }
        23..=26 => {
            let mut a = s(&["XREADGROUP", "GROUP"]);
            a.extend([g, c]);
            if rng.chance(40) {
                a.push("COUNT".into());
                a.push(rng.int(0, 3));
            }
            if rng.chance(15) {
                a.push("NOACK".into());
            }
            a.push("STREAMS".into());
            a.push(k);
            a.push(rng.pick(&[">", ">", "0", "5-0", "$"]).into());
            a
        }
        27 => {
            let mut a = s(&["XREAD"]);
            if rng.chance(40) {
                a.push("COUNT".into());
                a.push(rng.int(0, 3));
            }
            a.push("STREAMS".into());
            let two = rng.chance(30);
            a.push(k);
            if two {
                a.push(rng.pick(STREAM_KEYS).into());
            }
            a.push(stream_bound(rng, base).replace('(', ""));
            if two {
                a.push(rng.pick(&["$", "0", "3"]).into());
            }
            a
        }
        28..=29 => {
            let mut a = vec!["XACK".to_string(), k, g];
            for _ in 0..1 + rng.below(3) {
                a.push(stream_id(rng, base));
            }
            a
        }
        30 => vec!["XPENDING".into(), k, g],
        31 => {
            let mut a = vec!["XCLAIM".to_string(), k, g, c, "0".into()];
            for _ in 0..1 + rng.below(3) {
                a.push(format!(
                    "{}-{}",
                    base.saturating_sub(rng.below(60) as u64),
                    rng.below(3)
                ));
            }
            a.push("JUSTID".into());
            if rng.chance(30) {
                a.push("FORCE".into());
            }
            if rng.chance(20) {
                a.push("LASTID".into());
                a.push(format!("{}-0", base.saturating_sub(rng.below(60) as u64)));
            }
            a
        }
        32 => {
            let mut a = vec![
                "XAUTOCLAIM".to_string(),
                k,
                g,
                c,
                "0".into(),
                stream_bound(rng, base),
            ];
            if rng.chance(50) {
                a.push("COUNT".into());
                a.push(rng.int(0, 4));
            }
            a.push("JUSTID".into());
            a
        }
        33 => vec!["XINFO".into(), "GROUPS".into(), k],
        34 => {
            let id = format!("{}-{}", base + rng.below(10) as u64, rng.below(3));
            let mut a = vec!["XSETID".to_string(), k, id];
            if rng.chance(30) {
                a.push("ENTRIESADDED".into());
                a.push(rng.int(0, 30));
            }
            if rng.chance(30) {
                a.push("MAXDELETEDID".into());
                a.push(format!("{}-0", base.saturating_sub(rng.below(60) as u64)));
            }
            a
        }
        35 => vec![
            "CONFIG".into(),
            "SET".into(),
            "stream-node-max-entries".into(),
            rng.pick(&["2", "3", "5", "100"]).into(),
        ],
        36 => vec![
            "CONFIG".into(),
            "SET".into(),
            "stream-node-max-bytes".into(),
            rng.pick(&["0", "60", "200", "4096"]).into(),
        ],
        37 => vec!["DEBUG".into(), "DIGEST-VALUE".into(), k],
        38 => vec![
            "COPY".into(),
            k,
            rng.pick(STREAM_KEYS).into(),
            "REPLACE".into(),
        ],
        _ => match rng.below(4) {
            0 => vec!["DEL".into(), k],
            1 => vec!["SET".into(), "xs".into(), "v".into()],
            2 => vec!["TYPE".into(), k],
            _ => vec!["OBJECT".into(), "ENCODING".into(), k],
        },
    }
}

/// The stream fuzz: `DIFF_FUZZ_SEED` and `DIFF_FUZZ_STREAM_STEPS`
/// (default 3000 commands), alternating RESP2 (A) and RESP3 (B).
#[test]
fn diff_fuzz_streams() {
    let Some(real) = RealRedis::start() else {
        return;
    };
    let lite = Server::start();
    let seed = env_num("DIFF_FUZZ_SEED", DEFAULT_SEED);
    let steps = env_num("DIFF_FUZZ_STREAM_STEPS", DEFAULT_STEPS as u64) as usize;
    let verbose = std::env::var("DIFF_FUZZ_VERBOSE").is_ok_and(|v| v == "1");
    let mut rng = Rng::new(seed ^ 0x5354_5245_414D);
    let (mut rc, mut lc) = connect_pair(&real, &lite);
    let mut history: VecDeque<String> = VecDeque::new();
    for step in 0..steps {
        let conn = if rng.chance(25) { 1 } else { 0 };
        let args = gen_stream(&mut rng, step as u64 / 3);
        let ours = rc[conn]
            .cmd(&args)
            .unwrap_or_else(|e| panic!("redis-server: {} -> {e}", describe(&args)));
        let theirs = match lc[conn].cmd(&args) {
            Ok(r) => r,
            Err(e) => format!("<{e}>").into_bytes(),
        };
        let line = format!(
            "{}> {}  ->  {}",
            ["A", "B"][conn],
            describe(&args),
            short(&ours)
        );
        if verbose {
            eprintln!("{step}: {line}");
        }
        if history.len() == HISTORY {
            history.pop_front();
        }
        history.push_back(line);
        assert!(
            ours == theirs,
            "diff_fuzz_streams mismatch: DIFF_FUZZ_SEED={seed} step {step}\n\
             last commands (conn> command -> redis-server reply):\n  {}\n\
             redis-server: {}\nredis-lite:   {}",
            history.iter().cloned().collect::<Vec<_>>().join("\n  "),
            short(&ours),
            short(&theirs),
        );
    }
    // Leave the node limits as they were for any later user of the servers.
    for c in [&mut rc[0], &mut lc[0]] {
        c.must(&["CONFIG", "SET", "stream-node-max-entries", "100"]);
        c.must(&["CONFIG", "SET", "stream-node-max-bytes", "4096"]);
    }
    eprintln!("diff_fuzz_streams: seed {seed}, {steps} commands, no mismatch");
}
