//! Lazy freeing and active expiry, over TCP (issue: "Active expiry at hz and
//! the lazy-free thread behind UNLINK"). What these protect:
//! - UNLINK of a big value hands it to the `bio_lazy_free` thread (the
//!   counters in INFO memory move), DEL frees inline, and
//!   `lazyfree-lazy-user-del yes` turns DEL into UNLINK;
//! - FLUSHALL ASYNC hands whole tables over and counts their keys;
//! - keys expire without anybody touching them (the active cycle);
//! - the worker thread carries Redis's name.

mod common;

use common::{Conn, Server};
use std::time::{Duration, Instant};

/// One field of INFO (any section) as a number.
fn info_field(c: &mut Conn, field: &str) -> i64 {
    info_fields(c, &[field])[0]
}

/// Several INFO fields read from ONE reply (so they are consistent with
/// each other even while the lazy-free thread works).
fn info_fields(c: &mut Conn, fields: &[&str]) -> Vec<i64> {
    let reply = c.must(&["INFO", "everything"]);
    let text = String::from_utf8_lossy(&reply).into_owned();
    fields
        .iter()
        .map(|field| {
            for line in text.lines() {
                if let Some(v) = line.strip_prefix(&format!("{field}:")) {
                    return v.trim().parse().unwrap_or_else(|_| panic!("{field}: {v}"));
                }
            }
            panic!("no {field} in INFO");
        })
        .collect()
}

/// Poll `f` until it returns true, at most `limit` (bounded, never a timing
/// assertion: a slow machine only waits longer).
fn eventually(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// A hashtable-encoded set of `n` members `member:<i>`, built with SADD
/// batches of 1000 members.
fn build_set(c: &mut Conn, key: &str, n: usize) {
    for start in (0..n).step_by(1000) {
        let mut args = vec!["SADD".to_string(), key.to_string()];
        for i in start..(start + 1000).min(n) {
            args.push(format!("member:{i}"));
        }
        c.must(&args);
    }
    assert_eq!(c.must(&["OBJECT", "ENCODING", key]), b"$9\r\nhashtable\r\n");
}

#[test]
fn unlink_of_a_big_set_goes_to_the_lazyfree_thread_and_del_does_not() {
    let srv = Server::start();
    let mut c = Conn::connect(srv.port).unwrap();
    build_set(&mut c, "big", 100_000);
    assert_eq!(c.must(&["DEL", "big"]), b":1\r\n");
    assert_eq!(
        info_field(&mut c, "lazyfreed_objects"),
        0,
        "DEL frees inline"
    );

    build_set(&mut c, "big", 100_000);
    assert_eq!(c.must(&["UNLINK", "big"]), b":1\r\n");
    let counters = info_fields(&mut c, &["lazyfree_pending_objects", "lazyfreed_objects"]);
    // At most one object in flight (the worker may be between its two
    // counter updates), and eventually exactly one freed by the thread.
    assert!(counters[0] + counters[1] <= 1, "counters {counters:?}");
    assert!(eventually(Duration::from_secs(30), || info_field(
        &mut c,
        "lazyfreed_objects"
    ) == 1));
    assert_eq!(info_field(&mut c, "lazyfree_pending_objects"), 0);

    // A small value is freed inline even by UNLINK (effort 1 <= 64).
    c.must(&["SET", "small", "v"]);
    c.must(&["UNLINK", "small"]);
    assert_eq!(info_field(&mut c, "lazyfreed_objects"), 1);

    // lazyfree-lazy-user-del yes: DEL behaves as UNLINK.
    c.must(&["CONFIG", "SET", "lazyfree-lazy-user-del", "yes"]);
    build_set(&mut c, "big", 10_000);
    c.must(&["DEL", "big"]);
    assert!(eventually(Duration::from_secs(30), || info_field(
        &mut c,
        "lazyfreed_objects"
    ) == 2));

    // CONFIG RESETSTAT clears the freed counter.
    c.must(&["CONFIG", "RESETSTAT"]);
    assert_eq!(info_field(&mut c, "lazyfreed_objects"), 0);
}

#[test]
fn flushall_async_hands_every_key_to_the_thread() {
    let srv = Server::start();
    let mut c = Conn::connect(srv.port).unwrap();
    c.must(&["DEBUG", "POPULATE", "5000"]);
    c.must(&["SELECT", "1"]);
    c.must(&["DEBUG", "POPULATE", "3000"]);
    assert_eq!(c.must(&["FLUSHALL", "ASYNC"]), b"+OK\r\n");
    assert_eq!(c.must(&["DBSIZE"]), b":0\r\n");
    assert!(eventually(Duration::from_secs(30), || info_field(
        &mut c,
        "lazyfreed_objects"
    ) == 8000));
    // FLUSHDB SYNC frees inline: the counter stays.
    c.must(&["DEBUG", "POPULATE", "100"]);
    c.must(&["FLUSHDB", "SYNC"]);
    assert_eq!(info_field(&mut c, "lazyfreed_objects"), 8000);
    // lazyfree-lazy-user-flush makes the plain form asynchronous.
    c.must(&["CONFIG", "SET", "lazyfree-lazy-user-flush", "yes"]);
    c.must(&["DEBUG", "POPULATE", "100"]);
    c.must(&["FLUSHDB"]);
    assert!(eventually(Duration::from_secs(30), || info_field(
        &mut c,
        "lazyfreed_objects"
    ) == 8100));
}

#[test]
fn keys_with_a_ttl_expire_without_being_touched() {
    let srv = Server::start();
    let mut c = Conn::connect(srv.port).unwrap();
    // 10k keys with a 100 ms TTL, set in one pipeline.
    let mut pipeline = Vec::new();
    for i in 0..10_000 {
        pipeline.extend(common::encode_command(&[
            "SET",
            &format!("k:{i}"),
            "v",
            "PX",
            "100",
        ]));
    }
    c.send(&pipeline).unwrap();
    for _ in 0..10_000 {
        assert_eq!(c.read_reply().unwrap(), b"+OK\r\n");
    }
    // DBSIZE counts keys that expired but were not deleted, so reaching 0
    // proves the active cycle deleted them: nobody read them.
    assert!(
        eventually(Duration::from_secs(20), || c.must(&["DBSIZE"]) == b":0\r\n"),
        "keys left: {}",
        String::from_utf8_lossy(&c.must(&["DBSIZE"]))
    );
    assert_eq!(info_field(&mut c, "expired_keys"), 10_000);
    assert_eq!(
        info_field(&mut c, "keyspace_hits") + info_field(&mut c, "keyspace_misses"),
        0
    );
}

#[test]
fn debug_set_active_expire_0_stops_the_cycle() {
    let srv = Server::start();
    let mut c = Conn::connect(srv.port).unwrap();
    c.must(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"]);
    c.must(&["SET", "k", "v", "PX", "50"]);
    std::thread::sleep(Duration::from_millis(400));
    // Still in the keyspace (DBSIZE counts it), though GET hides it.
    assert_eq!(c.must(&["DBSIZE"]), b":1\r\n");
    assert_eq!(c.must(&["GET", "k"]), b"$-1\r\n");
    assert_eq!(c.must(&["DBSIZE"]), b":0\r\n");
}

#[test]
fn the_lazyfree_thread_is_named_like_redis() {
    let srv = Server::start();
    let dir = format!("/proc/{}/task", srv.pid());
    let Ok(tasks) = std::fs::read_dir(&dir) else {
        common::skipped("no /proc on this system");
        return;
    };
    let names: Vec<String> = tasks
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .map(|s| s.trim().to_string())
        .collect();
    assert!(
        names.iter().any(|n| n == "bio_lazy_free"),
        "threads: {names:?}"
    );
}
