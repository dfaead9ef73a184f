//! The lazy-free log and the encoding-transition log (DEBUG LAZYFREE-LOG,
//! DEBUG ENCODING-LOG; lazyfree/src/log.rs, storage/src/encoding_log.rs).
//! Structure and counts are asserted, never timings.

mod common;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use common::Server;
use redis::Value;

/// One log entry as field -> value (integers as strings, nil as "nil").
type Entry = HashMap<String, String>;

fn connect(srv: &common::Process) -> redis::Connection {
    redis::Client::open(format!("redis://127.0.0.1:{}/", srv.port))
        .unwrap()
        .get_connection()
        .unwrap()
}

fn text(v: &Value) -> String {
    match v {
        Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
        Value::SimpleString(s) => s.clone(),
        Value::Int(i) => i.to_string(),
        Value::Nil => "nil".into(),
        other => format!("{other:?}"),
    }
}

/// DEBUG <which> as a list of entries, newest first.
fn log_entries(con: &mut redis::Connection, which: &str) -> Vec<Entry> {
    let v: Value = redis::cmd("DEBUG").arg(which).query(con).unwrap();
    let Value::Array(entries) = v else {
        panic!("DEBUG {which}: not an array: {v:?}")
    };
    entries
        .iter()
        .map(|e| {
            let Value::Array(f) = e else {
                panic!("entry not an array: {e:?}")
            };
            assert_eq!(f.len() % 2, 0, "field/value pairs: {f:?}");
            f.chunks(2).map(|p| (text(&p[0]), text(&p[1]))).collect()
        })
        .collect()
}

fn ok(con: &mut redis::Connection, args: &[&str]) {
    let mut cmd = redis::cmd(args[0]);
    for a in &args[1..] {
        cmd.arg(*a);
    }
    let _: Value = cmd.query(con).unwrap();
}

/// A hashtable set of `n` distinct strings (free effort n), in batches.
fn big_set(con: &mut redis::Connection, key: &str, n: usize) {
    let mut i = 0;
    while i < n {
        let mut cmd = redis::cmd("SADD");
        cmd.arg(key);
        for j in i..(i + 10_000).min(n) {
            cmd.arg(format!("member:{j}"));
        }
        i = (i + 10_000).min(n);
        let _: i64 = cmd.query(con).unwrap();
    }
}

/// The newest entry for `key`, waiting (bounded) for a bio job to finish.
fn wait_finished(con: &mut redis::Connection, key: &str) -> Entry {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let e = log_entries(con, "LAZYFREE-LOG")
            .into_iter()
            .find(|e| e["key"] == key)
            .unwrap_or_else(|| panic!("no lazy-free log entry for {key}"));
        if e["duration_us"] != "nil" || Instant::now() > deadline {
            return e;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn unlink_of_a_big_set_is_a_bio_job_and_del_frees_on_the_main_thread() {
    let srv = Server::start();
    let mut con = connect(&srv);
    ok(&mut con, &["DEBUG", "LAZYFREE-LOG", "ON"]);
    const N: usize = 1_000_000;
    big_set(&mut con, "big", N);
    ok(&mut con, &["UNLINK", "big"]);
    let e = wait_finished(&mut con, "big");
    assert_eq!(e["freed_in"], "bio_lazy_free", "{e:?}");
    assert_eq!(e["command"], "unlink", "{e:?}");
    assert_eq!(e["cause"], "del", "{e:?}");
    assert_eq!(e["type"], "set");
    assert_eq!(e["encoding"], "hashtable");
    assert_eq!(e["effort"], N.to_string());
    assert!(e["why"].contains("> LAZYFREE_THRESHOLD 64"), "{e:?}");
    // The worker filled in its own duration and queue wait.
    assert!(e["duration_us"].parse::<u64>().is_ok(), "{e:?}");
    assert!(e["queue_wait_us"].parse::<u64>().is_ok(), "{e:?}");

    big_set(&mut con, "big", N);
    ok(&mut con, &["DEL", "big"]);
    let e = log_entries(&mut con, "LAZYFREE-LOG").remove(0);
    assert_eq!(e["key"], "big");
    assert_eq!(e["freed_in"], "main", "{e:?}");
    assert_eq!(e["command"], "del");
    assert_eq!(e["effort"], N.to_string());
    assert_eq!(e["why"], "lazy free off (lazyfree-lazy-user-del no)");
    assert!(e["duration_us"].parse::<u64>().is_ok(), "{e:?}");
    assert_eq!(e["queue_wait_us"], "nil");

    // UNLINK of a small value is freed inline: its effort is 1.
    ok(&mut con, &["SET", "small", "v"]);
    ok(&mut con, &["UNLINK", "small"]);
    let e = log_entries(&mut con, "LAZYFREE-LOG").remove(0);
    assert_eq!(
        (e["key"].as_str(), e["freed_in"].as_str()),
        ("small", "main")
    );
    assert_eq!(e["why"], "effort 1 <= LAZYFREE_THRESHOLD 64");

    // Overwrite, expiry and FLUSHALL are logged with their cause.
    ok(&mut con, &["SET", "small", "a"]);
    ok(&mut con, &["SET", "small", "b"]);
    // The GET finds it expired (the active cycle is off, so it is the GET).
    ok(&mut con, &["DEBUG", "SET-ACTIVE-EXPIRE", "0"]);
    ok(&mut con, &["SET", "gone", "x", "PX", "1"]);
    std::thread::sleep(Duration::from_millis(5));
    let _: Option<String> = redis::cmd("GET").arg("gone").query(&mut con).unwrap();
    ok(&mut con, &["FLUSHALL", "ASYNC"]);
    let entries = log_entries(&mut con, "LAZYFREE-LOG");
    let causes: Vec<(&str, &str, &str)> = entries
        .iter()
        .take(3)
        .map(|e| {
            (
                e["key"].as_str(),
                e["cause"].as_str(),
                e["command"].as_str(),
            )
        })
        .collect();
    assert_eq!(
        causes,
        [
            ("(db 0)", "flush", "flushall"),
            ("gone", "expire", "get"),
            ("small", "overwrite", "set"),
        ]
    );
    assert_eq!(entries[0]["freed_in"], "bio_lazy_free");
    assert_eq!(entries[0]["effort"], "1", "one key left in the db");

    ok(&mut con, &["DEBUG", "LAZYFREE-LOG", "RESET"]);
    assert!(log_entries(&mut con, "LAZYFREE-LOG").is_empty());
    // Off: nothing is logged.
    ok(&mut con, &["DEBUG", "LAZYFREE-LOG", "OFF"]);
    ok(&mut con, &["SET", "k", "v"]);
    ok(&mut con, &["DEL", "k"]);
    assert!(log_entries(&mut con, "LAZYFREE-LOG").is_empty());
}

#[test]
fn sadd_past_512_integers_logs_intset_to_hashtable() {
    let srv = Server::start();
    let mut con = connect(&srv);
    // Off by default: nothing logged.
    let mut cmd = redis::cmd("SADD");
    cmd.arg("quiet");
    for i in 0..600 {
        cmd.arg(i);
    }
    let _: i64 = cmd.query(&mut con).unwrap();
    assert!(log_entries(&mut con, "ENCODING-LOG").is_empty());

    ok(&mut con, &["DEBUG", "ENCODING-LOG", "ON"]);
    for i in 0..512 {
        let _: i64 = redis::cmd("SADD")
            .arg("ints")
            .arg(i)
            .query(&mut con)
            .unwrap();
    }
    assert!(
        log_entries(&mut con, "ENCODING-LOG").is_empty(),
        "512 integers still fit an intset"
    );
    let _: i64 = redis::cmd("SADD")
        .arg("ints")
        .arg(512)
        .query(&mut con)
        .unwrap();
    let log = log_entries(&mut con, "ENCODING-LOG");
    assert_eq!(log.len(), 1, "{log:?}");
    let e = &log[0];
    assert_eq!(e["key"], "ints");
    assert_eq!(e["type"], "set");
    assert_eq!(
        (e["from"].as_str(), e["to"].as_str()),
        ("intset", "hashtable")
    );
    assert_eq!(e["command"], "sadd");
    assert_eq!(e["size"], "513");
    assert_eq!(e["trigger"], "513 entries > set-max-intset-entries 512");

    // A non-integer converts at once; SMOVE names its destination.
    ok(&mut con, &["SADD", "src", "1", "abc"]);
    ok(&mut con, &["SADD", "dst", "7"]);
    ok(&mut con, &["SMOVE", "src", "dst", "abc"]);
    let log = log_entries(&mut con, "ENCODING-LOG");
    let e = &log[0];
    assert_eq!((e["key"].as_str(), e["command"].as_str()), ("dst", "smove"));
    assert_eq!(e["trigger"], "a member that is not an integer");
    assert_eq!(log[1]["key"], "src");

    // A hash with a long value, a zset past its entries, by HSET / ZADD.
    let long = "x".repeat(65);
    ok(&mut con, &["HSET", "h", "f", &long]);
    let mut zadd = redis::cmd("ZADD");
    zadd.arg("z");
    for i in 0..129 {
        zadd.arg(i).arg(format!("m{i}"));
    }
    let _: i64 = zadd.query(&mut con).unwrap();
    let log = log_entries(&mut con, "ENCODING-LOG");
    let (z, h) = (&log[0], &log[1]);
    assert_eq!(
        (z["key"].as_str(), z["from"].as_str(), z["to"].as_str()),
        ("z", "listpack", "skiplist")
    );
    assert_eq!(z["command"], "zadd");
    assert_eq!(z["trigger"], "129 members > zset-max-listpack-entries 128");
    assert_eq!(
        (h["key"].as_str(), h["command"].as_str(), h["to"].as_str()),
        ("h", "hset", "hashtable")
    );
    assert_eq!(h["size"], "65");

    ok(&mut con, &["DEBUG", "ENCODING-LOG", "RESET"]);
    assert!(log_entries(&mut con, "ENCODING-LOG").is_empty());
}

#[test]
fn log_subcommands_reject_bad_arguments() {
    let srv = Server::start();
    let mut con = connect(&srv);
    for args in [
        &["DEBUG", "LAZYFREE-LOG", "nope"][..],
        &["DEBUG", "ENCODING-LOG", "ON", "extra"],
    ] {
        let mut cmd = redis::cmd(args[0]);
        for a in &args[1..] {
            cmd.arg(*a);
        }
        let err = cmd.query::<Value>(&mut con).unwrap_err();
        assert!(
            err.to_string()
                .contains("unknown subcommand or wrong number of arguments"),
            "{err}"
        );
    }
}
