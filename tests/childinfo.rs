//! The child info pipe: a BGSAVE child and a BGREWRITEAOF child report
//! their progress and copy-on-write cost to the parent, and INFO
//! persistence shows it while they run (`current_save_keys_processed`,
//! `current_save_keys_total`, `current_fork_perc`) and after
//! (`rdb_last_cow_size`, `aof_last_cow_size`), as Redis 7.0's childinfo.c.
//!
//! The same scenario runs on redis-lite and, when it is installed, on a
//! real redis-server: `rdb-key-save-delay` makes the child slow (1 ms per
//! key), so the first report (at the first key) and the next (at key 1025,
//! a second later) are seen while it runs. Nothing asserts how long
//! anything took; every wait polls with a generous bound.

mod common;

use common::{Conn, Process, RealRedis, Server};
use std::time::{Duration, Instant};

const KEYS: u64 = 2500;

fn field(c: &mut Conn, name: &str) -> String {
    let info = c.must(&["INFO", "persistence"]);
    let text = String::from_utf8_lossy(&info).into_owned();
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{name}:")))
        .unwrap_or_else(|| panic!("no {name} in {text}"))
        .trim()
        .to_string()
}

fn num(c: &mut Conn, name: &str) -> u64 {
    field(c, name).parse().unwrap()
}

fn wait_for(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// One slow child of the given kind: its progress reports while it runs,
/// then the kind's last CoW figure once it is done.
fn slow_child(p: &Process, start: &[&str], running: &str, cow_field: &str) {
    let mut c = p.connect();
    c.must(&["CONFIG", "SET", "rdb-key-save-delay", "1000"]);
    c.must(start);
    wait_for("the child running", || num(&mut c, running) == 1);
    assert_eq!(num(&mut c, "current_save_keys_total"), KEYS);
    // The first report comes at the first key, the next a second later
    // at key 1025.
    wait_for("the second progress report", || {
        num(&mut c, "current_save_keys_processed") >= 1025
    });
    let processed = num(&mut c, "current_save_keys_processed");
    assert_eq!(
        (processed - 1) % 1024,
        0,
        "reports come every 1024 keys: {processed}"
    );
    let perc: f64 = field(&mut c, "current_fork_perc").parse().unwrap();
    let expect = processed as f64 * 100.0 / KEYS as f64;
    assert!((perc - expect).abs() < 0.01, "{perc} vs {expect}");
    c.must(&["CONFIG", "SET", "rdb-key-save-delay", "0"]);
    wait_for("the child done", || num(&mut c, running) == 0);
    // Reaped: the current figures are gone, the last CoW is kept.
    assert_eq!(num(&mut c, "current_save_keys_total"), 0);
    assert_eq!(num(&mut c, "current_save_keys_processed"), 0);
    assert_eq!(field(&mut c, "current_fork_perc"), "0.00");
    assert!(num(&mut c, cow_field) > 0, "{cow_field}");
}

fn scenario(p: &Process) {
    let mut c = p.connect();
    c.must(&["DEBUG", "POPULATE", &KEYS.to_string()]);
    slow_child(
        p,
        &["BGSAVE"],
        "rdb_bgsave_in_progress",
        "rdb_last_cow_size",
    );
    // With appendonly yes (and its first rewrite done), a BGREWRITEAOF
    // child reports the same way.
    c.must(&["CONFIG", "SET", "appendonly", "yes"]);
    wait_for("the first rewrite", || {
        num(&mut c, "aof_rewrite_in_progress") == 0 && field(&mut c, "aof_rewrite_scheduled") == "0"
    });
    slow_child(
        p,
        &["BGREWRITEAOF"],
        "aof_rewrite_in_progress",
        "aof_last_cow_size",
    );
}

#[test]
fn fork_children_report_progress_and_cow_like_redis() {
    scenario(&Server::start());
    match RealRedis::start_with(&[]) {
        Some(real) => scenario(&real),
        None => common::skipped("redis-server not installed: ran on redis-lite only"),
    }
}

/// A failed BGSAVE (its child killed) stops writes with MISCONF
/// (stop-writes-on-bgsave-error), from scripts too: a script's first write
/// gets the same error through redis.call, a shebang script without
/// no-writes is refused before it runs, reads go on (integration/rdb's
/// "failed bgsave prevents writes"). Compared with redis-server.
#[test]
fn failed_bgsave_stops_writes_from_scripts_like_redis() {
    let run = |p: &Process| -> Vec<String> {
        let mut c = p.connect();
        c.must(&["DEBUG", "POPULATE", "1000"]);
        c.must(&["SET", "x", "x"]);
        c.must(&["CONFIG", "SET", "rdb-key-save-delay", "10000000"]);
        c.must(&["BGSAVE"]);
        let children = format!("/proc/{0}/task/{0}/children", p.pid());
        let mut child = String::new();
        wait_for("the BGSAVE child", || {
            child = std::fs::read_to_string(&children).unwrap_or_default();
            !child.trim().is_empty()
        });
        let pid: i32 = child.split_whitespace().next().unwrap().parse().unwrap();
        // SAFETY: killing the server's own BGSAVE child.
        unsafe { libc::kill(pid, libc::SIGKILL) };
        wait_for("the failed BGSAVE reaped", || {
            num(&mut c, "rdb_bgsave_in_progress") == 0
        });
        let t = |r: Vec<u8>| String::from_utf8_lossy(&r).into_owned();
        let out = vec![
            field(&mut c, "rdb_last_bgsave_status"),
            t(c.must(&["GET", "x"])),
            t(c.must(&["SET", "x", "y"])),
            t(c.must(&["EVAL", "return redis.call('set','x',1)", "1", "x"])),
            t(c.must(&["EVAL", "return redis.call('get','x')", "1", "x"])),
            t(c.must(&["EVAL", "#!lua\nreturn redis.call('set','x',1)", "1", "x"])),
            t(c.must(&[
                "EVAL",
                "#!lua flags=no-writes\nreturn redis.call('get','x')",
                "1",
                "x",
            ])),
        ];
        c.must(&["CONFIG", "SET", "rdb-key-save-delay", "0"]);
        out
    };
    // MISCONF needs save points (saveparamslen > 0).
    let ours = run(&Server::start_with(&["--save", "3600 1"]));
    assert!(ours[2].starts_with("-MISCONF"), "{ours:?}");
    assert!(ours[3].starts_with("-MISCONF"), "{ours:?}");
    match RealRedis::start_with(&["--save", "3600 1"]) {
        Some(real) => assert_eq!(ours, run(&real), "redis-lite vs redis-server"),
        None => common::skipped("redis-server not installed: ran on redis-lite only"),
    }
}
