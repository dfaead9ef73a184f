//! SCAN, SSCAN, HSCAN and ZSCAN do the same work per call as Redis 7.0.15.
//!
//! COUNT is a hint about work: each call takes whole dict buckets until
//! COUNT elements were collected, and while a dict is being rehashed one
//! cursor step covers a small-table bucket plus all its expansions in the
//! big table (dictScan). So the number of calls a full scan needs is a
//! property of the algorithm, and it is what a reader of the COUNT lesson
//! sees. Both servers get the same state: the same 20,000 elements added
//! one command at a time (so each collection ends mid-rehash, 16384 ->
//! 32768 buckets, in both) and, for SCAN, `activerehashing no` so that cron
//! does not finish the keyspace's rehash behind the test's back.
//!
//! Redis seeds its hash function at random, so which element lands in which
//! bucket differs between the two servers and between runs: the call counts
//! are compared within 3%, which is far tighter than the halving a wrong
//! COUNT rule gives (HSCAN COUNT 10 once needed ~3,560 calls here against
//! Redis's ~1,880).

mod common;

use common::{encode_command, split_aggregate, Conn, Process, RealRedis, Server};

const N: usize = 20_000;

/// Send `cmds` pipelined and read every reply.
fn pipeline(c: &mut Conn, cmds: &[Vec<String>]) {
    for chunk in cmds.chunks(1000) {
        let mut buf = Vec::new();
        for cmd in chunk {
            buf.extend_from_slice(&encode_command(cmd));
        }
        c.send(&buf).unwrap();
        for _ in chunk {
            c.read_reply().unwrap();
        }
    }
}

/// The bulk string's payload.
fn bulk_text(b: &[u8]) -> String {
    let s = String::from_utf8_lossy(b);
    s.split("\r\n").nth(1).unwrap_or("").to_string()
}

/// Run a full scan (`prefix` is e.g. ["HSCAN", "h"]) with COUNT `count`;
/// returns (calls, items returned).
fn full_scan(c: &mut Conn, prefix: &[&str], count: usize) -> (usize, usize) {
    let mut cursor = "0".to_string();
    let (mut calls, mut items) = (0, 0);
    loop {
        let mut args: Vec<String> = prefix.iter().map(|s| s.to_string()).collect();
        args.push(cursor.clone());
        args.push("COUNT".into());
        args.push(count.to_string());
        let reply = c.must(&args);
        let (_, parts) = split_aggregate(&reply).expect("scan reply is an array");
        cursor = bulk_text(&parts[0]);
        items += split_aggregate(&parts[1]).expect("elements array").1.len();
        calls += 1;
        if cursor == "0" {
            return (calls, items);
        }
    }
}

/// Build the same state on a server: a hash, a set, a sorted set and N
/// top-level keys, each of N elements added one command at a time.
fn build(p: &Process) -> Conn {
    let mut c = p.connect();
    c.must(&["CONFIG", "SET", "activerehashing", "no"]);
    let mut cmds: Vec<Vec<String>> = Vec::new();
    for i in 0..N {
        cmds.push(vec![
            "HSET".into(),
            "h".into(),
            format!("f{i}"),
            i.to_string(),
        ]);
        cmds.push(vec!["SADD".into(), "s".into(), format!("m{i}")]);
        cmds.push(vec![
            "ZADD".into(),
            "z".into(),
            i.to_string(),
            format!("m{i}"),
        ]);
        cmds.push(vec!["SET".into(), format!("key:{i}"), "v".into()]);
    }
    pipeline(&mut c, &cmds);
    c
}

fn close_enough(lite: usize, real: usize) -> bool {
    lite.abs_diff(real) * 100 <= real * 3
}

#[test]
fn full_scan_call_counts_match_redis_during_rehash() {
    let Some(real) = RealRedis::start() else {
        return;
    };
    let lite = Server::start();
    let mut rc = build(&real);
    let mut lc = build(&lite);
    let cases: [(&[&str], usize, usize); 7] = [
        (&["HSCAN", "h"], 10, 2 * N),
        (&["HSCAN", "h"], 100, 2 * N),
        (&["SSCAN", "s"], 10, N),
        (&["SSCAN", "s"], 100, N),
        (&["ZSCAN", "z"], 10, 2 * N),
        (&["ZSCAN", "z"], 100, 2 * N),
        (&["SCAN"], 10, N + 3),
    ];
    for (prefix, count, items) in cases {
        let (real_calls, real_items) = full_scan(&mut rc, prefix, count);
        let (lite_calls, lite_items) = full_scan(&mut lc, prefix, count);
        // Nothing changes during the scans: every element exactly once.
        assert_eq!(
            real_items, items,
            "{prefix:?} COUNT {count} on redis-server"
        );
        assert_eq!(lite_items, items, "{prefix:?} COUNT {count} on redis-lite");
        assert!(
            close_enough(lite_calls, real_calls),
            "{prefix:?} COUNT {count}: redis-lite needed {lite_calls} calls, \
             redis-server {real_calls}"
        );
    }
    // SCAN COUNT 100 too, last (SCAN of the keyspace walks h, s and z too).
    let (real_calls, _) = full_scan(&mut rc, &["SCAN"], 100);
    let (lite_calls, _) = full_scan(&mut lc, &["SCAN"], 100);
    assert!(
        close_enough(lite_calls, real_calls),
        "SCAN COUNT 100: redis-lite {lite_calls} calls, redis-server {real_calls}"
    );
}

#[test]
fn compact_encodings_come_back_whole_in_one_call() {
    let lite = Server::start();
    let mut c = lite.connect();
    c.must(&["HSET", "h", "a", "1", "b", "2", "c", "3"]);
    c.must(&["SADD", "s", "1", "2", "3"]);
    c.must(&["ZADD", "z", "1", "a", "2", "b"]);
    for (prefix, n) in [
        (&["HSCAN", "h"][..], 6),
        (&["SSCAN", "s"][..], 3),
        (&["ZSCAN", "z"][..], 4),
    ] {
        assert_eq!(full_scan(&mut c, prefix, 1), (1, n), "{prefix:?}");
    }
}
