//! Keyspace notifications, differentially: redis-lite and a real
//! redis-server 7.0.15 run the same script with the same
//! `notify-keyspace-events` flags while a second connection PSUBSCRIBEs to
//! `__key*__:*`; the messages each server published, in order, and the
//! replies to the script must be byte-identical.
//!
//! The script (`SCRIPT` below) touches every command family, both ends of
//! each "key emptied" path (the `del` that follows `lpop`, `srem`, `hdel`,
//! `zrem`, ...), the STORE commands, the blocking pops served at once and
//! served later, and both kinds of expiry: a key that the active cycle
//! expires, and keys that expire lazily on their next lookup while
//! `DEBUG SET-ACTIVE-EXPIRE 0` keeps the cycle away.
//!
//! Script lines are whitespace-separated arguments (`""` is an empty
//! argument), plus directives:
//! - `!sleep MS`: wait (expiry);
//! - `!any CMD...`: run CMD but do not compare its reply (SPOP draws at
//!   random; the events are still compared);
//! - `!block CMD...`: send CMD on a third connection and wait until the
//!   server reports it blocked;
//! - `!served`: read that connection's reply (after a command fed it).
//!
//! The run ends with a PUBLISH on a marker channel that the pattern also
//! matches: once it arrives, every earlier notification has arrived too.

mod common;

use common::{escape, Conn, Process, RealRedis, Server};
use std::time::{Duration, Instant};

/// The channel of the end marker (matched by the test's pattern).
const END_CHANNEL: &str = "__keyevent@0__:end-of-script";

/// The script; see the module comment for the syntax.
const SCRIPT: &str = r#"
# ---- strings (t_string.c)
SET s1 v
SET s1 v2 EX 100
SET s1 v3 KEEPTTL
SET s1 v4 PX 100000 GET
SET s2 x NX
SET s2 y NX
SET s2 z XX
SET s3 z XX
SET s4 v GET
SET s4 w NX GET
SET sx v EXAT 1
GET sx
SETNX s5 a
SETNX s5 b
SETEX s6 100 v
PSETEX s7 100000 v
GETSET s6 nv
GETSET s8 new
GETDEL s8
GETDEL s8
GETEX s1 EX 100
GETEX s1 PERSIST
GETEX s1 PERSIST
GETEX s1
GETEX s1 PXAT 1
GETEX nokey EX 10
MSET m1 a m2 b
MSETNX m1 x m3 y
MSETNX m3 x m4 y
APPEND a1 hello
APPEND a1 world
INCR c1
INCRBY c1 5
DECR c1
DECRBY c1 2
INCRBYFLOAT c2 1.5
INCRBYFLOAT c2 1
INCR s7
SETRANGE r1 5 hi
SETRANGE r1 0 ""
SETRANGE r2 0 ""
SETRANGE r1 1 x
SETBIT b1 7 1
SETBIT b1 7 1
SETBIT b1 7 0
SETBIT b1 100 0
SETBIT b9 0 0
BITOP OR bo1 b1 b1
BITOP AND bo1 nokey nokey2
BITOP AND bo1 nokey nokey2
BITFIELD bf1 SET u8 0 1
BITFIELD bf1 SET u8 0 1
BITFIELD bf1 SET u8 0 1 INCRBY u8 8 0 INCRBY u8 8 2
BITFIELD bf2 OVERFLOW FAIL SET u8 0 256
BITFIELD_RO bf1 GET u8 0
PFADD hl1 a b c
PFADD hl1 a b c
PFADD hl2
PFCOUNT hl1
PFMERGE hl3 hl1 hl2
PFDEBUG TODENSE hl3
GEOADD geo1 13.361389 38.115556 Palermo 15.087269 37.502669 Catania
GEOADD geo1 13.361389 38.115556 Palermo
GEOSEARCHSTORE gd geo1 FROMLONLAT 15 37 BYRADIUS 200 km
GEOSEARCHSTORE gd geo1 FROMLONLAT 100 0 BYRADIUS 1 km
GEORADIUS geo1 15 37 200 km STOREDIST gd2
GEORADIUSBYMEMBER geo1 Palermo 1 m STORE gd2
GEORADIUS nogeo 15 37 200 km STORE gd3
GET nokey
MGET m1 nokey m2 nokey2
STRLEN nokey
GETRANGE nokey 0 1
SUBSTR nokey 0 1
GETBIT nokey 0
BITCOUNT nokey
GET s2
LPUSH s2 x
# ---- keyspace (db.c)
DEL m1 m2 nokey
UNLINK m3
EXISTS m4 nokey nokey
TYPE nokey
TYPE m4
TOUCH nokey m4
RENAME m4 m5
RENAME m5 m5
RENAME nokey m5
RENAMENX m5 c1
RENAMENX m5 m6
SET d1 v
EXPIRE d1 1000
RENAME d1 m6
RENAME m6 d1
COPY d1 d2
COPY d1 d2
COPY d1 d2 REPLACE
COPY nokey d3
COPY d1 d3 DB 1
MOVE d2 1
MOVE d2 1
SET d2 v
MOVE d2 1
SWAPDB 0 1
SWAPDB 0 1
SELECT 1
DEL d3
GET nokey
SELECT 0
OBJECT ENCODING nokey
OBJECT ENCODING d1
DEBUG OBJECT nokey
MEMORY USAGE nokey
# ---- expire.c
EXPIRE d1 100
EXPIRE d1 100 NX
PEXPIRE d1 100000 XX
EXPIREAT d1 1
EXPIRE nokey 10
SET e1 v
PERSIST e1
EXPIRE e1 100
PERSIST e1
PERSIST nokey
TTL nokey
PTTL nokey
EXPIRETIME nokey
PEXPIRETIME nokey
TTL e1
SET e2 v
EXPIRE e2 -1
SET e3 v
PEXPIREAT e3 0
# ---- lists (t_list.c)
LPUSH l1 a b c
RPUSH l1 d
LPUSHX nol x
RPUSHX l1 e
LINSERT l1 BEFORE a z
LINSERT l1 BEFORE nosuch z
LINSERT nol BEFORE a z
LSET l1 0 q
LPOP l1
RPOP l1
LPOP l1 2
LPOP l1 0
RPOP nol
LPOP nol 2
LRANGE nol 0 -1
LLEN nol
LINDEX nol 0
LPOS nol a
LREM l1 0 zz
RPUSH l2 a b a c
LREM l2 0 a
LTRIM l2 0 -1
LTRIM nol 0 1
LTRIM l2 1 0
RPUSH l3 1 2 3
LMOVE l3 l4 LEFT RIGHT
RPOPLPUSH l3 l4
LMOVE l3 l3 LEFT RIGHT
LMOVE l3 l4 RIGHT LEFT
LMOVE nol l4 LEFT LEFT
LMOVE l4 s2 LEFT LEFT
LMPOP 2 nol l4 LEFT COUNT 1
LMPOP 1 l4 RIGHT COUNT 10
LMPOP 1 nol RIGHT
RPUSH l5 x
BLPOP l5 0
RPUSH l6 a
BLMOVE l6 l7 LEFT LEFT 0
BLMPOP 0 1 l7 LEFT
RPUSH l8 a b
BRPOPLPUSH l8 l8 0
BRPOP l8 0
LPUSH l9 1 2 3
LPOP l9 3
# ---- blocking pops served later (blocked.c)
!block BLPOP bw1 0
RPUSH bw1 a b
!served
!block BLMOVE bw2 bw3 RIGHT LEFT 0
LPUSH bw2 x
!served
!block BLMPOP 0 1 bw4 LEFT COUNT 5
RPUSH bw4 1 2
!served
!block BRPOPLPUSH bw5 bw5 0
RPUSH bw5 only
!served
!block BZPOPMIN bz1 0
ZADD bz1 1 a 2 b
!served
!block BZMPOP 0 1 bz2 MAX COUNT 2
ZADD bz2 1 a
!served
# ---- sets (t_set.c)
SADD st1 a b c
SADD st1 a
SREM st1 a zz
SREM st1 zz
SREM nost a
SADD st2 x
SREM st2 x
SMOVE st1 st3 b
SMOVE st1 st3 b
SMOVE st1 st3 c
SMOVE st3 st3 b
SMOVE nost st3 b
SADD st6 b
SMOVE st3 st6 b
SADD st4 1 2 3 4 5
!any SPOP st4
SPOP st4 0
!any SPOP st4 2
!any SPOP st4 10
SPOP nost
SPOP nost 3
SADD st7 1 2 3 4 5 6 7 8 9 10
!any SPOP st7 8
SADD st5 1 2 3
SINTERSTORE dst st5 nost
SINTERSTORE dst st5 st5
SINTERSTORE dst st5 nost
SUNIONSTORE dst st5 nost
SUNIONSTORE dst nost nost2
SDIFFSTORE dst st5 nost
SDIFFSTORE dst st5 st5
SINTER st5 nost
SUNION nost st5
SDIFF nost st5
SINTERCARD 2 st5 nost
SMEMBERS nost
SISMEMBER nost a
SMISMEMBER nost a
SCARD nost
SRANDMEMBER nost
SSCAN nost 0
# ---- hashes (t_hash.c)
HSET h1 f1 v1 f2 v2
HSET h1 f1 v1
HMSET h1 f3 v3
HSETNX h1 f1 x
HSETNX h1 f9 x
HSETNX noh f x
HINCRBY h1 n 5
HINCRBYFLOAT h1 fl 1.5
HINCRBY h1 f1 1
HINCRBYFLOAT h3 f 2.5
HINCRBY h4 f 1
HDEL h1 zz
HDEL h1 f1 f2
HDEL noh f
HSET h2 a 1
HDEL h2 a
HGET noh f
HMGET noh a b
HLEN noh
HSTRLEN noh f
HEXISTS noh f
HGETALL noh
HKEYS noh
HVALS noh
HRANDFIELD noh
HSCAN noh 0
# ---- sorted sets (t_zset.c)
ZADD z1 1 a 2 b
ZADD z1 1 a
ZADD z1 CH 5 a
ZADD z1 XX 1 zz
ZADD noz XX 1 a
ZADD z1 INCR 1 a
ZINCRBY z1 2 b
ZINCRBY z9 2 b
ZADD z1 NX 1 a
ZADD z1 GT 1 a
ZREM z1 zz
ZREM z1 a
ZREM noz a
ZADD z2 1 a
ZREM z2 a
ZADD z3 1 a 2 b 3 c 4 d 5 e
ZREMRANGEBYRANK z3 0 0
ZREMRANGEBYRANK z3 10 20
ZREMRANGEBYSCORE z3 2 2
ZREMRANGEBYLEX z3 [d [d
ZREMRANGEBYRANK z3 0 -1
ZREMRANGEBYSCORE noz 0 1
ZADD z4 1 a 2 b 3 c
ZPOPMIN z4
ZPOPMAX z4 5
ZPOPMIN noz
ZPOPMAX noz 2
ZMPOP 1 noz MIN
ZADD z5 1 a 2 b 3 c
ZMPOP 2 noz z5 MAX COUNT 1
BZPOPMIN z5 0
BZPOPMAX noz z5 0
ZADD z7 1 a
BZMPOP 0 1 z7 MIN COUNT 3
ZADD z6 1 a 2 b 3 c
ZRANGESTORE zd z6 0 1
ZRANGESTORE zd z6 5 10
ZRANGESTORE zd z6 0 1
ZRANGESTORE zd noz 0 -1
ZRANGESTORE zd z6 (1 +inf BYSCORE
ZUNIONSTORE zd 2 z6 noz
ZINTERSTORE zd 2 z6 noz
ZUNIONSTORE zd 1 z6
ZDIFFSTORE zd 1 z6
ZDIFFSTORE zd 2 z6 z6
ZUNION 2 z6 noz
ZINTER 2 noz z6
ZDIFF 2 noz z6
ZINTERCARD 2 noz z6
ZRANGE noz 0 -1
ZRANGEBYSCORE noz 0 1
ZREVRANGE noz 0 -1
ZSCORE noz a
ZMSCORE noz a
ZCARD noz
ZCOUNT noz 0 1
ZLEXCOUNT noz - +
ZRANK noz a
ZREVRANK noz a
ZRANDMEMBER noz
ZSCAN noz 0
# ---- streams (t_stream.c)
XADD st 1-0 f v
XADD st 2-0 f v
XADD st MAXLEN 1 3-0 f v
XADD nost NOMKSTREAM 1-0 f v
XTRIM st MAXLEN 0
XTRIM st MAXLEN 0
XADD st 4-0 f v
XADD st 5-0 f v
XDEL st 4-0
XDEL st 9-0
XGROUP CREATE st g 0
XGROUP CREATE st2 g $ MKSTREAM
XGROUP SETID st g 0
XGROUP CREATECONSUMER st g c1
XGROUP CREATECONSUMER st g c1
XREADGROUP GROUP g c2 STREAMS st >
XACK st g 5-0
XCLAIM st g c3 0 5-0 FORCE
XAUTOCLAIM st g c4 0 0
XGROUP DELCONSUMER st g c1
XGROUP DESTROY st g
XSETID st 10-0
!block XREAD BLOCK 0 STREAMS st $
XADD st 11-0 f v
!served
XGROUP CREATE st g2 $
!block XREADGROUP GROUP g2 c9 BLOCK 0 STREAMS st >
XADD st 12-0 f v
!served
DEL st st2
# ---- SORT (sort.c) and MULTI/EXEC
RPUSH sl 3 1 2
SORT sl STORE sd
SORT sl LIMIT 0 0 STORE sd
SORT nol STORE sd
SORT_RO nol
SORT sl BY w_* GET g_* GET #
MULTI
LPUSH ml a
SET ms v EX 100
DEL ml nokey
EXEC
# ---- expiry: active, then lazy with the cycle off
SET ax v
PEXPIRE ax 50
!sleep 400
DEBUG SET-ACTIVE-EXPIRE 0
SET lx1 v PX 30
SET lx2 v PX 30
SET lx3 v PX 30
SET lx4 v PX 30
SET lx5 v PX 30
LPUSH lx6 a
PEXPIRE lx6 30
SET lx7 v PX 30
SET lx8 v PX 30
!sleep 120
GET lx1
LPUSH lx2 a
DEL lx3
EXISTS lx4
TTL lx5
LLEN lx6
SET lx7 new
OBJECT ENCODING lx8
DEBUG SET-ACTIVE-EXPIRE 1
# ---- flushes emit nothing per key
SET f1 v
FLUSHDB
SET f2 v
FLUSHALL
"#;

/// One step of the script.
enum Step {
    Cmd {
        line: usize,
        args: Vec<String>,
        compare: bool,
    },
    Sleep(u64),
    Block {
        line: usize,
        args: Vec<String>,
    },
    Served {
        line: usize,
    },
}

fn parse_script(text: &str) -> Vec<Step> {
    let mut steps = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let l = raw.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let mut words: Vec<String> = l
            .split_whitespace()
            .map(|w| {
                if w == "\"\"" {
                    String::new()
                } else {
                    w.to_string()
                }
            })
            .collect();
        match words[0].as_str() {
            "!sleep" => steps.push(Step::Sleep(words[1].parse().expect("sleep ms"))),
            "!served" => steps.push(Step::Served { line }),
            "!block" => {
                words.remove(0);
                steps.push(Step::Block { line, args: words });
            }
            "!any" => {
                words.remove(0);
                steps.push(Step::Cmd {
                    line,
                    args: words,
                    compare: false,
                });
            }
            _ => steps.push(Step::Cmd {
                line,
                args: words,
                compare: true,
            }),
        }
    }
    steps
}

/// What one server did with the script: the compared replies (tagged with
/// their script line) and the pmessages its subscriber received.
struct Run {
    replies: Vec<String>,
    messages: Vec<String>,
}

/// `blocked_clients` from INFO clients.
fn blocked_clients(c: &mut Conn) -> String {
    let info = String::from_utf8_lossy(&c.must(&["INFO", "clients"])).into_owned();
    info.lines()
        .find_map(|l| l.strip_prefix("blocked_clients:"))
        .unwrap_or("?")
        .trim()
        .to_string()
}

/// Run the script on `p` with `flags` and collect what happened.
fn run(p: &Process, flags: &str, steps: &[Step]) -> Run {
    let mut ctl = p.connect();
    ctl.must(&["FLUSHALL"]);
    let set = ctl.must(&["CONFIG", "SET", "notify-keyspace-events", flags]);
    assert_eq!(set, b"+OK\r\n", "{}: CONFIG SET {flags}", p.name);

    let mut sub = p.connect();
    let r = sub.must(&["PSUBSCRIBE", "__key*__:*"]);
    assert!(
        r.starts_with(b"*3\r\n$10\r\npsubscribe"),
        "{}: {}",
        p.name,
        escape(&r)
    );

    let mut cmd = p.connect();
    let mut blocker = p.connect();
    let mut replies = Vec::new();
    for step in steps {
        match step {
            Step::Cmd {
                line,
                args,
                compare,
            } => {
                let r = cmd
                    .cmd(args)
                    .unwrap_or_else(|e| panic!("{} line {line} {args:?}: {e}", p.name));
                if *compare {
                    replies.push(format!("line {line} {}: {}", args.join(" "), escape(&r)));
                }
            }
            Step::Sleep(ms) => std::thread::sleep(Duration::from_millis(*ms)),
            Step::Block { line, args } => {
                blocker.send_cmd(args).expect("send blocking command");
                let deadline = Instant::now() + Duration::from_secs(5);
                while blocked_clients(&mut ctl) != "1" {
                    assert!(
                        Instant::now() < deadline,
                        "{} line {line}: {args:?} did not block",
                        p.name
                    );
                    std::thread::sleep(Duration::from_millis(5));
                }
            }
            Step::Served { line } => {
                let r = blocker
                    .read_reply()
                    .unwrap_or_else(|e| panic!("{} line {line}: blocked client: {e}", p.name));
                replies.push(format!("line {line} (served): {}", escape(&r)));
            }
        }
    }

    // The marker: it is published after every notification above, on a
    // channel the pattern matches, so it arrives last.
    cmd.must(&["PUBLISH", END_CHANNEL, "end"]);
    let mut messages = Vec::new();
    loop {
        let m = sub
            .read_reply()
            .unwrap_or_else(|e| panic!("{}: subscriber: {e} after {messages:#?}", p.name));
        let text = escape(&m);
        if text.contains(END_CHANNEL) {
            break;
        }
        messages.push(text);
    }
    ctl.must(&["CONFIG", "SET", "notify-keyspace-events", ""]);
    Run { replies, messages }
}

/// The first index where two sequences differ, with a window around it.
fn first_difference(a: &[String], b: &[String]) -> Option<String> {
    let n = a.len().max(b.len());
    let i = (0..n).find(|&i| a.get(i) != b.get(i))?;
    let from = i.saturating_sub(3);
    let show = |v: &[String]| -> String {
        v.iter()
            .enumerate()
            .skip(from)
            .take(8)
            .map(|(j, s)| format!("  {}{j}: {s}", if j == i { ">" } else { " " }))
            .collect::<Vec<_>>()
            .join("\n")
    };
    Some(format!(
        "first difference at #{i} (of {} vs {}):\nredis-server:\n{}\nredis-lite:\n{}",
        a.len(),
        b.len(),
        show(a),
        show(b)
    ))
}

/// Every flag mix runs the whole script on both servers.
#[test]
fn keyspace_events_match_redis() {
    let Some(real) = RealRedis::start() else {
        return;
    };
    let lite = Server::start();
    let steps = parse_script(SCRIPT);
    let mut failures = Vec::new();
    for flags in [
        "KEA", "KEAmn", "Kl", "Ex", "E$gm", "Kshz", "Kn", "KEd", "KEe", "Kt", "Egt",
    ] {
        let want = run(&real, flags, &steps);
        let got = run(&lite, flags, &steps);
        if let Some(d) = first_difference(&want.messages, &got.messages) {
            failures.push(format!("flags {flags:?}: messages differ, {d}"));
        }
        if let Some(d) = first_difference(&want.replies, &got.replies) {
            failures.push(format!("flags {flags:?}: replies differ, {d}"));
        }
        if flags == "KEA" {
            // The script must exercise notifications at all.
            assert!(
                want.messages.len() > 300,
                "only {} messages",
                want.messages.len()
            );
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n\n"));
}

/// CONFIG SET / GET of odd flag strings: Redis normalises the letters
/// (keyspaceEventsFlagsToString), e.g. `AKE` reads back as `AKE`, `g$lshzxetd`
/// as `AKE`-less `g$lshzxetd`, and refuses unknown letters.
#[test]
fn notify_keyspace_events_config_matches_redis() {
    let Some(real) = RealRedis::start() else {
        return;
    };
    let lite = Server::start();
    let inputs = [
        "",
        "K",
        "E",
        "A",
        "KEA",
        "AKE",
        "EKA",
        "g$lshzxet",
        "g$lshzxetd",
        "Ag",
        "AKEmn",
        "mn",
        "nmEK",
        "Kx",
        "x",
        "KEAd",
        "Ed",
        "ee",
        "AAKK",
        "q",
        "KEAq",
        "a",
        "k",
    ];
    let mut out = Vec::new();
    for p in [&real, &lite] {
        let mut c = p.connect();
        let mut seen = Vec::new();
        for f in inputs {
            let set = c.must(&["CONFIG", "SET", "notify-keyspace-events", f]);
            let get = c.must(&["CONFIG", "GET", "notify-keyspace-events"]);
            seen.push(format!("{f:?}: {} {}", escape(&set), escape(&get)));
        }
        out.push(seen);
    }
    assert_eq!(out[0], out[1], "left: redis-server, right: redis-lite");
}
