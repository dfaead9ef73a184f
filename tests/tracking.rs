//! Client-side caching (tracking.rs, Redis's tracking.c), differential:
//! each scenario runs on redis-lite and on a real redis-server and the raw
//! replies, pushes included, must be byte-identical. Client ids differ
//! between the two servers, so replies that carry one (GETREDIR,
//! TRACKINGINFO, tracking-redir-broken) have it replaced by `ID` first.
//!
//! redis-py (8.1) has client-side caching, but refuses it below Redis 7.4
//! ("client-side caching is supported by Redis 7.4 or later"), and
//! redis-lite is 7.0.15: no redis-py test here.
//!
//! "No message arrived" is checked without timing: the client sends PING,
//! and the next frame must be its PONG (the server writes a pending
//! invalidation before it answers a later command).

mod common;

use common::{escape, run_on_both, Conn, Process, RealRedis, Server};
use std::time::Duration;

/// Send one command and keep its raw reply.
fn run(c: &mut Conn, log: &mut Vec<String>, args: &[&str]) {
    let r = c.must(args);
    log.push(escape(&r));
}

/// Read one frame the server sends on its own (a push, a message).
fn read(c: &mut Conn, log: &mut Vec<String>) {
    let r = c.read_reply().expect("an invalidation message");
    log.push(escape(&r));
}

/// The client's id, and the id written as `:id` replaced by `:ID`.
fn client_id(c: &mut Conn) -> String {
    let r = c.must(&["CLIENT", "ID"]);
    String::from_utf8_lossy(&r[1..r.len() - 2]).into_owned()
}

fn norm(s: String, id: &str) -> String {
    s.replace(&format!(":{id}\\r\\n"), ":ID\\r\\n")
}

/// A client subscribed to __redis__:invalidate, and its id.
fn redirect_client(p: &Process) -> (Conn, String) {
    let mut r = p.connect();
    let id = client_id(&mut r);
    r.must(&["SUBSCRIBE", "__redis__:invalidate"]);
    (r, id)
}

#[test]
fn tracking_default_mode_resp3_pushes_match_redis() {
    let log = run_on_both(|p| {
        let mut log = Vec::new();
        let mut c = p.connect();
        let mut w = p.connect();
        c.must(&["HELLO", "3"]);
        run(&mut c, &mut log, &["CLIENT", "TRACKING", "ON"]);
        w.must(&["MSET", "k", "1", "x{t}", "1", "y{t}", "2"]);
        run(&mut c, &mut log, &["GET", "k"]);
        // Another client writes: one push.
        w.must(&["SET", "k", "2"]);
        read(&mut c, &mut log);
        // The entry was consumed: a second write says nothing.
        w.must(&["SET", "k", "3"]);
        run(&mut c, &mut log, &["PING"]);
        // Its own write: the push follows the reply.
        run(&mut c, &mut log, &["HSET", "h", "f", "1"]);
        run(&mut c, &mut log, &["HGET", "h", "f"]);
        run(&mut c, &mut log, &["HDEL", "h", "f"]);
        read(&mut c, &mut log);
        // Several keys of one read, changed in a transaction: after EXEC.
        run(&mut c, &mut log, &["MGET", "x{t}", "y{t}"]);
        run(&mut c, &mut log, &["MULTI"]);
        run(&mut c, &mut log, &["INCR", "x{t}"]);
        run(&mut c, &mut log, &["GET", "y{t}"]);
        run(&mut c, &mut log, &["EXEC"]);
        read(&mut c, &mut log);
        w.must(&["DEL", "y{t}"]);
        read(&mut c, &mut log);
        run(&mut c, &mut log, &["CLIENT", "TRACKINGINFO"]);
        run(&mut c, &mut log, &["CLIENT", "GETREDIR"]);
        // A script's read tracks the keys the script declared, for its caller.
        run(
            &mut c,
            &mut log,
            &["EVAL", "redis.call('set', 's3', 'x')", "2", "s1", "s2"],
        );
        w.must(&["MSET", "s1", "1", "s2", "1"]);
        run(
            &mut c,
            &mut log,
            &["EVAL", "redis.call('get', 's3')", "2", "s1", "s2"],
        );
        w.must(&["MSET", "s2", "2", "s1", "2"]);
        read(&mut c, &mut log);
        read(&mut c, &mut log);
        run(&mut c, &mut log, &["PING"]);
        let info = String::from_utf8_lossy(&c.must(&["CLIENT", "INFO"])).into_owned();
        let flags: Vec<&str> = info
            .split(' ')
            .filter(|f| f.starts_with("flags=") || f.starts_with("redir="))
            .collect();
        log.push(flags.join(" "));
        run(&mut c, &mut log, &["CLIENT", "TRACKING", "OFF"]);
        run(&mut c, &mut log, &["CLIENT", "TRACKINGINFO"]);
        log
    });
    assert!(log.iter().any(|l| l.contains("invalidate")), "{log:?}");
}

#[test]
fn tracking_redirect_under_resp2_matches_redis() {
    let log = run_on_both(|p| {
        let mut log = Vec::new();
        let (mut r, rid) = redirect_client(p);
        let mut c = p.connect();
        let mut w = p.connect();
        run(
            &mut c,
            &mut log,
            &["CLIENT", "TRACKING", "ON", "REDIRECT", &rid],
        );
        log.push(norm(escape(&c.must(&["CLIENT", "GETREDIR"])), &rid));
        w.must(&["SET", "a", "1"]);
        run(&mut c, &mut log, &["GET", "a"]);
        w.must(&["SET", "a", "2"]);
        read(&mut r, &mut log);
        // Two clients redirecting to the same connection.
        let mut d = p.connect();
        run(
            &mut d,
            &mut log,
            &["CLIENT", "TRACKING", "ON", "REDIRECT", &rid],
        );
        run(&mut c, &mut log, &["GET", "a"]);
        run(&mut d, &mut log, &["GET", "b"]);
        w.must(&["INCR", "a"]);
        read(&mut r, &mut log);
        w.must(&["INCR", "b"]);
        read(&mut r, &mut log);
        // A flush: the null of the tracking client's protocol, on the channel.
        run(&mut d, &mut log, &["CLIENT", "TRACKING", "OFF"]);
        w.must(&["FLUSHALL"]);
        read(&mut r, &mut log);
        // The redirect client leaves: a RESP3 tracker is told once it matters.
        c.must(&["HELLO", "3"]);
        run(&mut c, &mut log, &["GET", "a"]);
        r.must(&["QUIT"]);
        w.must(&["SET", "a", "3"]);
        log.push(norm(escape(&c.read_reply().expect("redir broken")), &rid));
        log.push(norm(escape(&c.must(&["CLIENT", "TRACKINGINFO"])), &rid));
        let info = String::from_utf8_lossy(&c.must(&["CLIENT", "INFO"])).into_owned();
        log.push(
            info.split(' ')
                .filter(|f| f.starts_with("flags="))
                .collect::<Vec<_>>()
                .join(" "),
        );
        log
    });
    assert!(
        log.iter().any(|l| l.contains("__redis__:invalidate")),
        "{log:?}"
    );
}

#[test]
fn tracking_redirect_to_a_resp3_client_matches_redis() {
    run_on_both(|p| {
        let mut log = Vec::new();
        let mut r = p.connect();
        r.must(&["HELLO", "3"]);
        let rid = client_id(&mut r);
        let mut c = p.connect();
        let mut w = p.connect();
        run(
            &mut c,
            &mut log,
            &["CLIENT", "TRACKING", "ON", "REDIRECT", &rid],
        );
        run(&mut c, &mut log, &["GET", "k"]);
        // The redirect itself writes: the push precedes its reply.
        run(&mut r, &mut log, &["SET", "k", "1"]);
        read(&mut r, &mut log);
        run(&mut c, &mut log, &["GET", "k"]);
        r.send_cmd(&["CLIENT", "REPLY", "OFF"]).unwrap();
        w.must(&["SET", "k", "2"]);
        read(&mut r, &mut log);
        run(&mut r, &mut log, &["CLIENT", "REPLY", "ON"]);
        run(&mut c, &mut log, &["FLUSHDB"]);
        read(&mut r, &mut log);
        log
    });
}

#[test]
fn tracking_bcast_prefixes_match_redis() {
    let log = run_on_both(|p| {
        let mut log = Vec::new();
        let mut c = p.connect();
        let mut w = p.connect();
        c.must(&["HELLO", "3"]);
        run(
            &mut c,
            &mut log,
            &[
                "CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "a:", "PREFIX", "b:",
            ],
        );
        run(
            &mut c,
            &mut log,
            &["CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "c:"],
        );
        // One batch per prefix, keys sorted, written in one loop iteration.
        w.must(&[
            "MSET", "a:2", "1", "a:1", "1", "b:1", "1", "z", "1", "c:9", "1",
        ]);
        read(&mut c, &mut log);
        read(&mut c, &mut log);
        read(&mut c, &mut log);
        run(&mut c, &mut log, &["PING"]);
        run(&mut c, &mut log, &["CLIENT", "TRACKINGINFO"]);
        let info = String::from_utf8_lossy(&c.must(&["INFO", "stats"])).into_owned();
        log.push(
            info.lines()
                .filter(|l| l.starts_with("tracking_total_prefixes"))
                .collect(),
        );
        // The empty prefix: everything. NOLOOP: not its own writes.
        run(&mut c, &mut log, &["CLIENT", "TRACKING", "OFF"]);
        run(
            &mut c,
            &mut log,
            &["CLIENT", "TRACKING", "ON", "BCAST", "NOLOOP"],
        );
        run(&mut c, &mut log, &["SET", "mine", "1"]);
        w.must(&["SET", "theirs", "1"]);
        read(&mut c, &mut log);
        run(&mut c, &mut log, &["SET", "mine", "2"]);
        run(&mut c, &mut log, &["PING"]);
        // Both in one batch: only the other client's key.
        run(&mut c, &mut log, &["MULTI"]);
        run(&mut c, &mut log, &["SET", "mine", "3"]);
        run(&mut c, &mut log, &["EVAL", "return 1", "0"]);
        run(&mut c, &mut log, &["EXEC"]);
        w.must(&["SET", "theirs", "2"]);
        read(&mut c, &mut log);
        run(&mut c, &mut log, &["PING"]);
        log
    });
    assert!(log.iter().any(|l| l.contains("a:1")), "{log:?}");
}

#[test]
fn tracking_optin_optout_and_noloop_match_redis() {
    run_on_both(|p| {
        let mut log = Vec::new();
        let mut c = p.connect();
        let mut w = p.connect();
        c.must(&["HELLO", "3"]);
        w.must(&["MSET", "k1", "1", "k2", "1"]);
        // OPTIN: only the read after CLIENT CACHING YES is tracked.
        run(&mut c, &mut log, &["CLIENT", "TRACKING", "ON", "OPTIN"]);
        run(&mut c, &mut log, &["GET", "k1"]);
        run(&mut c, &mut log, &["CLIENT", "CACHING", "YES"]);
        run(&mut c, &mut log, &["CLIENT", "TRACKINGINFO"]);
        run(&mut c, &mut log, &["GET", "k2"]);
        run(&mut c, &mut log, &["CLIENT", "TRACKINGINFO"]);
        w.must(&["SET", "k1", "2"]);
        w.must(&["SET", "k2", "2"]);
        read(&mut c, &mut log);
        run(&mut c, &mut log, &["PING"]);
        run(&mut c, &mut log, &["CLIENT", "CACHING", "NO"]);
        run(&mut c, &mut log, &["CLIENT", "TRACKING", "OFF"]);
        // OPTOUT: every read but the one after CLIENT CACHING NO.
        run(&mut c, &mut log, &["CLIENT", "TRACKING", "ON", "OPTOUT"]);
        run(&mut c, &mut log, &["CLIENT", "CACHING", "NO"]);
        run(&mut c, &mut log, &["GET", "k1"]);
        run(&mut c, &mut log, &["GET", "k2"]);
        w.must(&["SET", "k1", "3"]);
        w.must(&["SET", "k2", "3"]);
        read(&mut c, &mut log);
        run(&mut c, &mut log, &["PING"]);
        run(&mut c, &mut log, &["CLIENT", "CACHING", "YES"]);
        run(&mut c, &mut log, &["CLIENT", "TRACKING", "OFF"]);
        // NOLOOP: the client's own writes send it nothing.
        run(&mut c, &mut log, &["CLIENT", "TRACKING", "ON", "NOLOOP"]);
        run(&mut c, &mut log, &["GET", "k1"]);
        run(&mut c, &mut log, &["SET", "k1", "4"]);
        run(&mut c, &mut log, &["PING"]);
        run(&mut c, &mut log, &["GET", "k1"]);
        run(
            &mut c,
            &mut log,
            &["EVAL", "return redis.call('set', KEYS[1], '5')", "1", "k1"],
        );
        run(&mut c, &mut log, &["PING"]);
        run(&mut c, &mut log, &["GET", "k2"]);
        w.must(&["SET", "k2", "4"]);
        read(&mut c, &mut log);
        run(&mut c, &mut log, &["CLIENT", "TRACKINGINFO"]);
        log
    });
}

#[test]
fn tracking_flush_and_expiry_match_redis() {
    run_on_both(|p| {
        let mut log = Vec::new();
        let mut c = p.connect();
        let mut w = p.connect();
        c.must(&["HELLO", "3"]);
        run(&mut c, &mut log, &["CLIENT", "TRACKING", "ON"]);
        run(&mut c, &mut log, &["GET", "a"]);
        run(&mut c, &mut log, &["GET", "b"]);
        let stats = |c: &mut Conn| {
            let info = String::from_utf8_lossy(&c.must(&["INFO", "everything"])).into_owned();
            info.lines()
                .filter(|l| l.starts_with("tracking_"))
                .collect::<Vec<_>>()
                .join(",")
        };
        log.push(stats(&mut c));
        w.must(&["FLUSHALL", "ASYNC"]);
        read(&mut c, &mut log);
        log.push(stats(&mut c));
        // Its own FLUSHDB inside MULTI: the null follows EXEC's reply.
        run(&mut c, &mut log, &["GET", "a"]);
        run(&mut c, &mut log, &["MULTI"]);
        run(&mut c, &mut log, &["FLUSHDB"]);
        run(&mut c, &mut log, &["EXEC"]);
        read(&mut c, &mut log);
        // Active expiry of a key it read.
        w.must(&["SET", "e", "1", "PX", "20"]);
        run(&mut c, &mut log, &["GET", "e"]);
        c.set_timeout(Duration::from_secs(10));
        read(&mut c, &mut log);
        // Lazy expiry by its own read: after that read's reply.
        w.must(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"]);
        w.must(&["SET", "l", "1", "PX", "20"]);
        run(&mut c, &mut log, &["GET", "l"]);
        std::thread::sleep(Duration::from_millis(60));
        run(&mut c, &mut log, &["MGET", "l", "a"]);
        read(&mut c, &mut log);
        w.must(&["DEBUG", "SET-ACTIVE-EXPIRE", "1"]);
        log
    });
}

#[test]
fn tracking_errors_match_redis() {
    run_on_both(|p| {
        let mut log = Vec::new();
        let mut c = p.connect();
        for args in [
            &["CLIENT", "TRACKING", "ON", "REDIRECT", "999999"][..],
            &["CLIENT", "TRACKING", "ON", "REDIRECT", "0"],
            &["CLIENT", "TRACKING", "ON", "REDIRECT", "x"],
            &["CLIENT", "TRACKING", "ON", "REDIRECT"],
            &["CLIENT", "TRACKING", "ON", "PREFIX", "a"],
            &["CLIENT", "TRACKING", "ON", "BCAST", "OPTIN"],
            &["CLIENT", "TRACKING", "ON", "OPTIN", "OPTOUT"],
            &["CLIENT", "TRACKING", "ON", "FOO"],
            &["CLIENT", "TRACKING", "MAYBE"],
            &["CLIENT", "TRACKING"],
            &["CLIENT", "CACHING", "YES"],
            &["CLIENT", "GETREDIR"],
            &["CLIENT", "TRACKINGINFO"],
            &["CLIENT", "TRACKING", "ON", "OPTIN"],
            &["CLIENT", "CACHING", "NO"],
            &["CLIENT", "CACHING", "MAYBE"],
            &["CLIENT", "TRACKING", "ON", "OPTOUT"],
            &["CLIENT", "TRACKING", "ON", "BCAST"],
            &["CLIENT", "TRACKING", "OFF"],
            &["CLIENT", "TRACKING", "ON", "OPTOUT"],
            &["CLIENT", "CACHING", "YES"],
            &["CLIENT", "TRACKING", "OFF"],
            &[
                "CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "FOO", "PREFIX", "BAR",
            ],
            &["CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "FO"],
            &["CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "BARB"],
            &["CLIENT", "TRACKING", "ON"],
            &["CLIENT", "TRACKING", "OFF"],
            &[
                "CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "a", "PREFIX", "ab",
            ],
            &["CLIENT", "TRACKINGINFO"],
        ] {
            run(&mut c, &mut log, args);
        }
        // Redis replies to a clash between two given prefixes after the
        // first with the error AND +OK (checkPrefixCollisionsOrReply
        // returns its loop index): both replies must be the same.
        c.send_cmd(&[
            "CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "q", "PREFIX", "r", "PREFIX", "rs",
        ])
        .unwrap();
        read(&mut c, &mut log);
        read(&mut c, &mut log);
        run(&mut c, &mut log, &["CLIENT", "TRACKINGINFO"]);
        run(
            &mut c,
            &mut log,
            &["CLIENT", "TRACKING", "ON", "REDIRECT", "1", "REDIRECT", "2"],
        );
        // RESET turns tracking off and forgets the prefixes.
        run(&mut c, &mut log, &["RESET"]);
        run(&mut c, &mut log, &["CLIENT", "TRACKINGINFO"]);
        let info = String::from_utf8_lossy(&c.must(&["INFO", "clients"])).into_owned();
        log.push(
            info.lines()
                .filter(|l| l.starts_with("tracking_clients"))
                .collect(),
        );
        log
    });
}

/// tracking-table-max-keys: over the limit, keys are dropped from the table
/// and their clients told, as if the keys changed. Which key goes is
/// random (in Redis too), so this checks the count, not the key.
#[test]
fn tracking_table_max_keys_evicts_with_invalidations() {
    let check = |p: &Process| {
        let (mut r, rid) = redirect_client(p);
        let mut c = p.connect();
        c.must(&["CLIENT", "TRACKING", "ON", "REDIRECT", &rid]);
        let mut keys = Vec::new();
        for i in 0..250 {
            keys.push(format!("key{i}"));
            c.must(&["GET", &format!("key{i}")]);
        }
        c.must(&["CONFIG", "SET", "tracking-table-max-keys", "1"]);
        let mut seen = std::collections::HashSet::new();
        for _ in 0..249 {
            let m = r.read_reply().expect("eviction invalidation");
            let s = String::from_utf8_lossy(&m).into_owned();
            let key = keys
                .iter()
                .find(|k| s.ends_with(&format!("${}\r\n{k}\r\n", k.len())))
                .unwrap_or_else(|| panic!("not a key message: {}", escape(&m)))
                .clone();
            assert!(seen.insert(key), "same key twice");
        }
        let pong = r.must(&["PING"]);
        assert_eq!(escape(&pong), escape(b"*2\r\n$4\r\npong\r\n$0\r\n\r\n"));
        let info = String::from_utf8_lossy(&c.must(&["INFO", "stats"])).into_owned();
        assert!(info.contains("tracking_total_keys:1\r\n"), "{info}");
    };
    check(&Server::start());
    if let Some(real) = RealRedis::start() {
        check(&real);
    }
}
