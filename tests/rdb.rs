//! Persistence against the real thing: RDB files and DUMP payloads move
//! between redis-lite and redis-server 7.0.15 both ways with the same
//! DEBUG DIGEST and OBJECT ENCODINGs; redis-check-rdb accepts our files;
//! BGSAVE forks while clients keep writing; save points, MISCONF, restart,
//! SIGTERM and FLUSHALL behave as in Redis.
//!
//! The fixture tests (tests/fixtures in the rdb crate) run without Redis;
//! the rest print SKIPPED when redis-server is missing (and fail under CI).

mod common;

use common::{Conn, Process, RealRedis, Server};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn text(r: &[u8]) -> String {
    String::from_utf8_lossy(r).into_owned()
}

/// The payload of a bulk string reply.
fn bulk(r: &[u8]) -> Vec<u8> {
    assert_eq!(r[0], b'$', "not a bulk reply: {}", text(r));
    let nl = r.iter().position(|&b| b == b'\n').unwrap();
    let n: usize = std::str::from_utf8(&r[1..nl - 1]).unwrap().parse().unwrap();
    r[nl + 1..nl + 1 + n].to_vec()
}

/// A status or bulk reply as a string (digests, encodings).
fn value(r: &[u8]) -> String {
    match r[0] {
        b'+' => text(&r[1..r.len() - 2]),
        b'$' => text(&bulk(r)),
        b':' => text(&r[1..r.len() - 2]),
        _ => panic!("unexpected reply {}", text(r)),
    }
}

fn info_field(c: &mut Conn, section: &str, name: &str) -> String {
    let info = text(&bulk(&c.must(&["INFO", section])));
    info.lines()
        .find_map(|l| l.strip_prefix(&format!("{name}:")))
        .unwrap_or_else(|| panic!("no {name} in INFO {section}"))
        .to_string()
}

/// The working directory a test server runs in (common::Process::spawn).
fn dir_of(p: &Process) -> PathBuf {
    p.log.with_extension("d")
}

fn wait_until(what: &str, timeout: Duration, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn wait_bgsave_done(c: &mut Conn) {
    wait_until("BGSAVE to finish", Duration::from_secs(30), || {
        info_field(c, "persistence", "rdb_bgsave_in_progress") == "0"
    });
}

/// Every type and encoding, expires and a function library. Returns the
/// keys with a deterministic DUMP (not dict-ordered).
fn populate(c: &mut Conn) -> Vec<&'static str> {
    let long: String = "The quick brown fox jumps over the lazy dog. ".repeat(12);
    let mut cmds: Vec<Vec<String>> = vec![
        vec!["SET".into(), "s:int".into(), "12345".into()],
        vec!["SET".into(), "s:big".into(), "12345678901234".into()],
        vec!["SET".into(), "s:emb".into(), "hello".into()],
        vec!["SET".into(), "s:raw".into(), "r".repeat(50)],
        vec!["SET".into(), "s:lzf".into(), long.clone()],
        vec!["SET".into(), "s:empty".into(), "".into()],
        vec![
            "SADD".into(),
            "set:is".into(),
            "1".into(),
            "-2".into(),
            "70000".into(),
            "5000000000".into(),
        ],
        vec![
            "SADD".into(),
            "set:ht".into(),
            "a".into(),
            "b".into(),
            "12".into(),
        ],
        vec![
            "ZADD".into(),
            "z:lp".into(),
            "1".into(),
            "a".into(),
            "2.5".into(),
            "b".into(),
            "-inf".into(),
            "c".into(),
        ],
        vec![
            "HSET".into(),
            "h:lp".into(),
            "f".into(),
            "v".into(),
            "n".into(),
            "7".into(),
        ],
        vec!["HSET".into(), "h:long".into(), "f".into(), "v".repeat(100)],
        vec!["ZADD".into(), "z:long".into(), "1".into(), "m".repeat(70)],
        vec![
            "RPUSH".into(),
            "l:small".into(),
            "a".into(),
            "1".into(),
            "-5".into(),
            long,
        ],
    ];
    let mut big_list = vec!["RPUSH".to_string(), "l:nodes".into()];
    big_list.extend((0..3000).map(|i| format!("element-{i}")));
    cmds.push(big_list);
    let mut big_set = vec!["SADD".to_string(), "set:big".into()];
    big_set.extend((0..700).map(|i| format!("{i}")));
    cmds.push(big_set);
    let mut zsl = vec!["ZADD".to_string(), "z:sl".into()];
    for i in 0..300 {
        zsl.push(format!("{}", i as f64 * 0.25 - 3.0));
        zsl.push(format!("m{i}"));
    }
    cmds.push(zsl);
    let mut hht = vec!["HSET".to_string(), "h:ht".into()];
    for i in 0..600 {
        hht.push(format!("f{i}"));
        hht.push(format!("v{i}"));
    }
    cmds.push(hht);
    for cmd in &cmds {
        let r = c.must(cmd);
        assert!(r[0] == b'+' || r[0] == b':', "{cmd:?}: {}", text(&r));
    }
    // A PLAIN quicklist node (an element over the packed threshold).
    c.must(&["DEBUG", "QUICKLIST-PACKED-THRESHOLD", "100"]);
    c.must(&["RPUSH", "l:plain", "small", &"x".repeat(200), "tail"]);
    c.must(&["DEBUG", "QUICKLIST-PACKED-THRESHOLD", "0"]);
    c.must(&["PEXPIREAT", "s:emb", "4102444800000"]);
    c.must(&["PEXPIREAT", "h:lp", "4102444800123"]);
    // Streams: nodes, tombstones, groups with PELs and consumers.
    for i in 1..=300 {
        let id = format!("{i}-1");
        let n = i.to_string();
        c.must(&["XADD", "x:s", &id, "f", &n, "g", "v"]);
    }
    c.must(&["XDEL", "x:s", "7-1", "300-1"]);
    for i in 1..=10 {
        let id = format!("{}-0", i * 10);
        c.must(&["XADD", "x:g", &id, "n", &i.to_string()]);
    }
    c.must(&["XGROUP", "CREATE", "x:g", "g1", "0"]);
    c.must(&[
        "XREADGROUP",
        "GROUP",
        "g1",
        "alice",
        "COUNT",
        "4",
        "STREAMS",
        "x:g",
        ">",
    ]);
    c.must(&["XACK", "x:g", "g1", "20-0"]);
    c.must(&["XGROUP", "CREATECONSUMER", "x:g", "g1", "bob"]);
    c.must(&["SELECT", "3"]);
    c.must(&["SET", "db3", "x"]);
    c.must(&["SELECT", "0"]);
    c.must(&[
        "FUNCTION",
        "LOAD",
        "#!lua name=plib\nredis.register_function('pf', function(keys, args) return 42 end)",
    ]);
    vec![
        "s:int", "s:big", "s:emb", "s:raw", "s:lzf", "s:empty", "set:is", "z:lp", "h:lp", "h:long",
        "z:long", "l:small", "l:nodes", "z:sl", "l:plain", "x:s",
    ]
}

const ALL_KEYS: &[&str] = &[
    "s:int", "s:big", "s:emb", "s:raw", "s:lzf", "s:empty", "set:is", "set:ht", "z:lp", "h:lp",
    "h:long", "z:long", "l:small", "l:nodes", "set:big", "z:sl", "h:ht", "l:plain", "x:s", "x:g",
];

fn encodings(c: &mut Conn) -> Vec<String> {
    ALL_KEYS
        .iter()
        .map(|k| format!("{k}={}", value(&c.must(&["OBJECT", "ENCODING", k]))))
        .collect()
}

fn digest(c: &mut Conn) -> String {
    value(&c.must(&["DEBUG", "DIGEST"]))
}

/// Copy `dump.rdb` from one server's directory to another's.
fn copy_rdb(from: &Path, to: &Path) {
    std::fs::copy(from.join("dump.rdb"), to.join("dump.rdb")).expect("copy dump.rdb");
}

#[test]
fn redis_lite_rdb_loads_into_redis_server_with_the_same_digest() {
    let lite = Server::start();
    let mut c = lite.connect();
    populate(&mut c);
    let (ours_digest, ours_enc) = (digest(&mut c), encodings(&mut c));
    assert_eq!(text(&c.must(&["SAVE"])), "+OK\r\n");
    let file = dir_of(&lite).join("dump.rdb");
    assert!(file.exists());

    if let Some(check) = common::require_tool("redis-check-rdb") {
        let out = std::process::Command::new(check)
            .arg(&file)
            .output()
            .unwrap();
        let log = text(&out.stdout);
        assert!(
            out.status.success() && log.contains("RDB looks OK"),
            "{log}"
        );
    }
    let Some(real) = RealRedis::start() else {
        return;
    };
    copy_rdb(&dir_of(&lite), &dir_of(&real));
    let mut r = real.connect();
    assert_eq!(text(&r.must(&["DEBUG", "RELOAD", "NOSAVE"])), "+OK\r\n");
    assert_eq!(digest(&mut r), ours_digest);
    assert_eq!(encodings(&mut r), ours_enc);
    assert_eq!(value(&r.must(&["FCALL", "pf", "0"])), "42");
    assert_eq!(value(&r.must(&["PEXPIRETIME", "h:lp"])), "4102444800123");
}

#[test]
fn redis_server_rdb_loads_into_redis_lite_with_the_same_digest() {
    let Some(real) = RealRedis::start() else {
        return;
    };
    let mut r = real.connect();
    populate(&mut r);
    // Redis-only shapes: LZF-compressed quicklist nodes.
    r.must(&["CONFIG", "SET", "list-compress-depth", "1"]);
    let mut push = vec!["RPUSH".to_string(), "l:compressed".into()];
    push.extend((0..4000).map(|i| format!("zz-{i}-zz-{i}")));
    r.must(&push);
    r.must(&["CONFIG", "SET", "list-compress-depth", "0"]);
    let (theirs_digest, theirs_enc) = (digest(&mut r), encodings(&mut r));
    assert_eq!(text(&r.must(&["SAVE"])), "+OK\r\n");

    let lite = Server::start();
    copy_rdb(&dir_of(&real), &dir_of(&lite));
    let mut c = lite.connect();
    assert_eq!(text(&c.must(&["DEBUG", "RELOAD", "NOSAVE"])), "+OK\r\n");
    assert_eq!(digest(&mut c), theirs_digest);
    assert_eq!(encodings(&mut c), theirs_enc);
    assert_eq!(value(&c.must(&["FCALL", "pf", "0"])), "42");
    assert_eq!(value(&c.must(&["LLEN", "l:compressed"])), "4000");
    assert_eq!(value(&c.must(&["PEXPIRETIME", "s:emb"])), "4102444800000");
    assert_eq!(
        info_field(&mut c, "persistence", "rdb_last_load_keys_loaded"),
        (ALL_KEYS.len() + 2).to_string()
    );
}

/// The fixture file SAVEd by redis-server (rdb/tests/fixtures/redis.rdb)
/// loads at start-up with the digest Redis printed for it.
#[test]
fn fixture_rdb_from_redis_loads_at_startup() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("rdb/tests/fixtures");
    let want = std::fs::read_to_string(fixtures.join("redis.rdb.digest")).unwrap();
    let dir = std::env::temp_dir().join(format!("rdb-fixture-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(fixtures.join("redis.rdb"), dir.join("dump.rdb")).unwrap();
    let lite = Server::start_with(&["--dir", dir.to_str().unwrap()]);
    let mut c = lite.connect();
    assert_eq!(digest(&mut c), want.trim());
    assert!(
        lite.log_tail().contains("DB loaded from disk: "),
        "{}",
        lite.log_tail()
    );
    assert!(lite
        .log_tail()
        .contains("Loading RDB produced by version 7.0.15"));
    drop(lite);
    let _ = std::fs::remove_dir_all(&dir);
}

/// DUMP on one side, RESTORE on the other, both ways: the same value
/// (DEBUG DIGEST-VALUE) and, where Redis's bytes are deterministic, the
/// same payload.
#[test]
fn dump_payloads_move_both_ways() {
    let Some(real) = RealRedis::start() else {
        return;
    };
    let lite = Server::start();
    let (mut r, mut c) = (real.connect(), lite.connect());
    let deterministic = populate(&mut r);
    populate(&mut c);
    for k in ALL_KEYS {
        let theirs = bulk(&r.must(&["DUMP", k]));
        let ours = bulk(&c.must(&["DUMP", k]));
        if deterministic.contains(k) {
            assert_eq!(ours, theirs, "DUMP {k} differs from redis-server's");
        }
        // redis-server -> redis-lite
        let key = format!("from-redis:{k}");
        let restore = [
            b"RESTORE".to_vec(),
            key.clone().into_bytes(),
            b"0".to_vec(),
            theirs,
        ];
        assert_eq!(text(&c.must(&restore)), "+OK\r\n");
        let key2 = format!("from-lite:{k}");
        let restore = [
            b"RESTORE".to_vec(),
            key2.clone().into_bytes(),
            b"0".to_vec(),
            ours,
        ];
        assert_eq!(text(&r.must(&restore)), "+OK\r\n");
        // Both copies (TTL-less) hold the same value.
        let dv = |conn: &mut Conn, key: &str| text(&conn.must(&["DEBUG", "DIGEST-VALUE", key]));
        assert_eq!(
            dv(&mut c, &key),
            dv(&mut r, &key2),
            "{k} restored both ways"
        );
        let (dump_c, dump_r) = (
            bulk(&c.must(&["DUMP", &key])),
            bulk(&r.must(&["DUMP", &key2])),
        );
        if deterministic.contains(k) {
            assert_eq!(dump_c, dump_r, "{k}: DUMP after RESTORE");
        }
        assert_eq!(
            value(&c.must(&["OBJECT", "ENCODING", &key])),
            value(&r.must(&["OBJECT", "ENCODING", k]))
        );
    }
}

/// Random strings of every length class: redis-lite's LZF output is
/// byte-identical to Redis's (DUMP payloads equal).
#[test]
fn lzf_payloads_are_byte_identical_to_redis() {
    let Some(real) = RealRedis::start() else {
        return;
    };
    let lite = Server::start();
    let (mut r, mut c) = (real.connect(), lite.connect());
    let mut x = 0x2545F4914F6CDD1Du64;
    for n in (21..3000).step_by(37) {
        // Compressible: a small alphabet with repeats.
        let s: Vec<u8> = (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                b"abcab"[(x % 5) as usize]
            })
            .collect();
        r.must(&[&b"SET"[..], b"k", &s]);
        c.must(&[&b"SET"[..], b"k", &s]);
        assert_eq!(c.must(&["DUMP", "k"]), r.must(&["DUMP", "k"]), "length {n}");
    }
}

/// BGSAVE forks: the parent keeps serving writes while the child writes
/// the snapshot of the moment of the fork; the file reloads.
#[test]
fn bgsave_while_clients_write_then_restart_keeps_the_snapshot() {
    let lite = Server::start();
    let mut c = lite.connect();
    c.must(&["DEBUG", "POPULATE", "20000"]);
    // Slow the child down so the writes below overlap it.
    c.must(&["CONFIG", "SET", "rdb-key-save-delay", "20"]);
    assert_eq!(text(&c.must(&["BGSAVE"])), "+Background saving started\r\n");
    assert_eq!(
        text(&c.must(&["BGSAVE"])),
        "-ERR Background save already in progress\r\n"
    );
    let mut w = lite.connect();
    let mut written_during = 0;
    for i in 0..2000 {
        w.must(&["SET", &format!("w:{i}"), "v"]);
        if info_field(&mut c, "persistence", "rdb_bgsave_in_progress") == "1" {
            written_during += 1;
        }
    }
    assert!(written_during > 0, "the child finished before any write");
    wait_bgsave_done(&mut c);
    assert_eq!(
        info_field(&mut c, "persistence", "rdb_last_bgsave_status"),
        "ok"
    );
    assert_eq!(info_field(&mut c, "persistence", "rdb_saves"), "1");
    assert!(
        info_field(&mut c, "stats", "latest_fork_usec")
            .parse::<u64>()
            .unwrap()
            > 0
    );
    assert!(lite
        .log_tail()
        .contains("Background saving terminated with success"));
    assert!(lite.log_tail().contains("Fork CoW for RDB: current"));
    // Writes after the fork are still "changes since the last save".
    let dirty: u64 = info_field(&mut c, "persistence", "rdb_changes_since_last_save")
        .parse()
        .unwrap();
    assert!(dirty >= written_during, "{dirty} < {written_during}");

    // A new server on the same directory loads the snapshot: the populated
    // keys, none of the writes that came after the fork.
    let dir = dir_of(&lite);
    c.must(&["CONFIG", "SET", "rdb-key-save-delay", "0"]);
    let _ = c.cmd(&["SHUTDOWN", "NOSAVE"]);
    drop(lite);
    let again = Server::start_with(&["--dir", dir.to_str().unwrap()]);
    let mut c = again.connect();
    assert_eq!(value(&c.must(&["DBSIZE"])), "20000");
    assert_eq!(value(&c.must(&["GET", "key:123"])), "value:123");
    assert_eq!(
        info_field(&mut c, "persistence", "rdb_last_load_keys_loaded"),
        "20000"
    );
}

/// SHUTDOWN saves when save points exist (and SAVE forces it), SIGTERM
/// too; NOSAVE does not.
#[test]
fn shutdown_and_sigterm_save_when_save_points_are_set() {
    let lite = Server::start_with(&["--save", "3600 1"]);
    let dir = dir_of(&lite);
    let mut c = lite.connect();
    c.must(&["SET", "a", "1"]);
    let _ = c.cmd(&["SHUTDOWN"]);
    drop(lite);
    let lite = Server::start_with(&["--save", "3600 1", "--dir", dir.to_str().unwrap()]);
    let mut c = lite.connect();
    assert_eq!(value(&c.must(&["GET", "a"])), "1");
    c.must(&["SET", "b", "2"]);
    // SIGTERM: the same final save.
    let pid = lite.pid() as i32;
    // SAFETY: signalling the server process this test started.
    unsafe { libc::kill(pid, libc::SIGTERM) };
    let mut lite = lite;
    wait_until("exit after SIGTERM", Duration::from_secs(10), || {
        !lite.is_alive()
    });
    assert!(lite
        .log_tail()
        .contains("Received SIGTERM scheduling shutdown..."));
    assert!(lite
        .log_tail()
        .contains("Saving the final RDB snapshot before exiting."));
    drop(lite);
    let lite = Server::start_with(&["--dir", dir.to_str().unwrap()]);
    let mut c = lite.connect();
    assert_eq!(value(&c.must(&["GET", "b"])), "2");
    c.must(&["SET", "c", "3"]);
    let _ = c.cmd(&["SHUTDOWN", "NOSAVE"]);
    drop(lite);
    let lite = Server::start_with(&["--dir", dir.to_str().unwrap()]);
    let mut c = lite.connect();
    assert_eq!(text(&c.must(&["EXISTS", "c"])), ":0\r\n");
    // Without save points plain SHUTDOWN does not save; SHUTDOWN SAVE does.
    c.must(&["SET", "d", "4"]);
    let _ = c.cmd(&["SHUTDOWN", "SAVE"]);
    drop(lite);
    let lite = Server::start_with(&["--dir", dir.to_str().unwrap()]);
    assert_eq!(value(&lite.connect().must(&["GET", "d"])), "4");
}

/// A save point fires from server_cron: `save 1 1` after one change.
#[test]
fn save_point_triggers_a_background_save() {
    let lite = Server::start_with(&["--save", "1 1"]);
    let mut c = lite.connect();
    c.must(&["SET", "k", "v"]);
    wait_until("the save point", Duration::from_secs(10), || {
        info_field(&mut c, "persistence", "rdb_saves") == "1"
    });
    wait_bgsave_done(&mut c);
    assert_eq!(
        info_field(&mut c, "persistence", "rdb_changes_since_last_save"),
        "0"
    );
    assert!(lite
        .log_tail()
        .contains("1 changes in 1 seconds. Saving..."));
    assert!(dir_of(&lite).join("dump.rdb").exists());
}

/// The failure path, on both servers: a directory that vanished makes
/// SAVE and BGSAVE fail; with save points set, writes (and PING) then get
/// MISCONF while reads work and no data is lost; a good save clears it.
#[test]
fn unwritable_dir_gives_misconf_and_keeps_the_data() {
    let run = |p: &Process| -> Vec<String> {
        let mut c = p.connect();
        let gone = dir_of(p).join("gone");
        std::fs::create_dir_all(&gone).unwrap();
        let mut out = vec![text(&c.must(&[
            "CONFIG",
            "SET",
            "dir",
            gone.to_str().unwrap(),
        ]))];
        std::fs::remove_dir_all(&gone).unwrap();
        out.push(text(&c.must(&["CONFIG", "SET", "save", "3600 1"])));
        out.push(text(&c.must(&["SET", "k", "v"])));
        out.push(text(&c.must(&["SAVE"])));
        out.push(text(&c.must(&["SET", "k2", "v2"])));
        out.push(text(&c.must(&["BGSAVE"])));
        wait_bgsave_done(&mut c);
        out.push(info_field(&mut c, "persistence", "rdb_last_bgsave_status"));
        out.push(text(&c.must(&["SET", "k3", "v3"])));
        out.push(text(&c.must(&["PING"])));
        out.push(text(&c.must(&["GET", "k"])));
        out.push(text(&c.must(&["MULTI"])));
        out.push(text(&c.must(&["SET", "k4", "v"])));
        out.push(text(&c.must(&["EXEC"])));
        // Without stop-writes-on-bgsave-error writes go through.
        c.must(&["CONFIG", "SET", "stop-writes-on-bgsave-error", "no"]);
        out.push(text(&c.must(&["SET", "k5", "v"])));
        c.must(&["CONFIG", "SET", "stop-writes-on-bgsave-error", "yes"]);
        // Back to a good directory: the next BGSAVE clears the condition.
        out.push(text(&c.must(&[
            "CONFIG",
            "SET",
            "dir",
            dir_of(p).to_str().unwrap(),
        ])));
        out.push(text(&c.must(&["BGSAVE"])));
        wait_bgsave_done(&mut c);
        out.push(info_field(&mut c, "persistence", "rdb_last_bgsave_status"));
        out.push(text(&c.must(&["SET", "k6", "v"])));
        out.push(text(&c.must(&["DBSIZE"])));
        c.must(&["CONFIG", "SET", "save", ""]);
        out
    };
    let protected = ["--enable-protected-configs", "yes"];
    let ours = run(&Server::start_with(&protected));
    assert!(
        ours[7].starts_with("-MISCONF Redis is configured to save RDB snapshots"),
        "{ours:?}"
    );
    if let Some(real) = RealRedis::start_with(&protected) {
        assert_eq!(ours, run(&real), "redis-lite vs redis-server");
    }
}

/// FLUSHALL with save points saves the empty dataset (the dirty counter
/// drops to 0); without, it counts the removed keys.
#[test]
fn flushall_resets_the_dirty_counter_like_redis() {
    let run = |p: &Process| -> Vec<String> {
        let mut c = p.connect();
        let mut out = Vec::new();
        for save in ["", "3600 1"] {
            c.must(&["CONFIG", "SET", "save", save]);
            c.must(&["MSET", "a", "1", "b", "2", "c", "3"]);
            let before: i64 = info_field(&mut c, "persistence", "rdb_changes_since_last_save")
                .parse()
                .unwrap();
            c.must(&["FLUSHALL"]);
            let after: i64 = info_field(&mut c, "persistence", "rdb_changes_since_last_save")
                .parse()
                .unwrap();
            out.push(format!("save={save:?} delta={}", after - before));
            out.push(format!("zero={}", after == 0));
        }
        c.must(&["CONFIG", "SET", "save", ""]);
        out
    };
    let ours = common::run_on_both(run);
    assert_eq!(ours[3], "zero=true");
}

/// DEBUG RELOAD and its options against redis-server: MERGE, NOFLUSH,
/// NOSAVE, bad options; TTLs, encodings and functions survive.
#[test]
fn debug_reload_options_match_redis() {
    let run = |p: &Process| -> Vec<String> {
        let mut c = p.connect();
        let mut out = Vec::new();
        c.must(&["SET", "a", "1"]);
        c.must(&["PEXPIREAT", "a", "4102444800000"]);
        c.must(&["RPUSH", "l", "x", "y"]);
        c.must(&[
            "FUNCTION",
            "LOAD",
            "#!lua name=rl\nredis.register_function('rf', function() return 7 end)",
        ]);
        out.push(text(&c.must(&["DEBUG", "RELOAD"])));
        out.push(text(&c.must(&["PEXPIRETIME", "a"])));
        out.push(text(&c.must(&["FCALL", "rf", "0"])));
        out.push(text(&c.must(&["DEBUG", "RELOAD", "BOGUS"])));
        // NOSAVE reloads the file as it is: the new key is gone.
        c.must(&["SET", "b", "2"]);
        out.push(text(&c.must(&["DEBUG", "RELOAD", "NOSAVE"])));
        out.push(text(&c.must(&["EXISTS", "b"])));
        // MERGE + NOFLUSH: the file's keys replace the ones in memory.
        c.must(&["SET", "a", "changed"]);
        c.must(&["SET", "c", "3"]);
        out.push(text(
            &c.must(&["DEBUG", "RELOAD", "MERGE", "NOFLUSH", "NOSAVE"]),
        ));
        out.push(text(&c.must(&["GET", "a"])));
        out.push(text(&c.must(&["GET", "c"])));
        out.push(text(&c.must(&["LRANGE", "l", "0", "-1"])));
        c.must(&["FUNCTION", "FLUSH"]);
        out
    };
    let ours = common::run_on_both(run);
    assert_eq!(ours[0], "+OK\r\n");
}

/// RESTORE of a corrupt payload is an error and the keyspace is intact:
/// every truncation and many bit flips of real payloads, while the server
/// stays up and keeps its data.
#[test]
fn restore_of_mangled_payloads_never_crashes() {
    let lite = Server::start();
    let mut c = lite.connect();
    populate(&mut c);
    let before = digest(&mut c);
    let mut x = 0x1234_5678_9abc_def1u64;
    for k in ALL_KEYS {
        let p = bulk(&c.must(&["DUMP", k]));
        let step = (p.len() / 60).max(1);
        for cut in (0..p.len()).step_by(step) {
            let r = c.must(&[&b"RESTORE"[..], b"victim", b"0", &p[..cut]]);
            assert_eq!(r[0], b'-', "a truncated payload restored");
        }
        // Checksum off, so the flipped bytes reach the decoder.
        c.must(&["DEBUG", "SET-SKIP-CHECKSUM-VALIDATION", "1"]);
        for _ in 0..40 {
            let mut q = p.clone();
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let i = (x as usize) % q.len();
            q[i] ^= 1 << (x % 8);
            let r = c.must(&[&b"RESTORE"[..], b"victim", b"0", &q[..], b"REPLACE"]);
            assert!(r[0] == b'-' || r == b"+OK\r\n");
            c.must(&["DEL", "victim"]);
        }
        c.must(&["DEBUG", "SET-SKIP-CHECKSUM-VALIDATION", "0"]);
    }
    assert_eq!(digest(&mut c), before);
}

/// While a BGSAVE child shares pages with the parent, the keyspace dict
/// does not grow (no rehash touching every page); once the child is gone
/// (killed here: a signal is a failed save, its temp file removed) it does.
#[test]
fn no_rehash_while_a_child_exists_and_a_killed_child_is_reaped() {
    let lite = Server::start();
    let mut c = lite.connect();
    c.must(&["DEBUG", "POPULATE", "4096"]);
    c.must(&["CONFIG", "SET", "rdb-key-save-delay", "1000000"]);
    assert_eq!(text(&c.must(&["BGSAVE"])), "+Background saving started\r\n");
    c.must(&["MSET", "k1", "v1", "k2", "v2"]);
    let stats = text(&bulk(&c.must(&["DEBUG", "HTSTATS", "0"])));
    assert!(!stats.contains("table size: 8192"), "{stats}");
    let log = lite.log_tail();
    let pid: i32 = log
        .lines()
        .find_map(|l| l.split("Background saving started by pid ").nth(1))
        .expect("child pid in the log")
        .trim()
        .parse()
        .unwrap();
    // The child opens its temp file a moment after the fork (later on a
    // loaded machine): wait for it rather than race it.
    let temp = dir_of(&lite).join(format!("temp-{pid}.rdb"));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !temp.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(temp.exists(), "the child's {temp:?}");
    // SAFETY: killing the BGSAVE child of the server this test started.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    wait_bgsave_done(&mut c);
    assert_eq!(
        info_field(&mut c, "persistence", "rdb_last_bgsave_status"),
        "err"
    );
    assert!(lite
        .log_tail()
        .contains("Background saving terminated by signal 9"));
    assert!(!dir_of(&lite).join(format!("temp-{pid}.rdb")).exists());
    std::thread::sleep(Duration::from_millis(200));
    c.must(&["SET", "k3", "v3"]);
    let stats = text(&bulk(&c.must(&["DEBUG", "HTSTATS", "0"])));
    assert!(stats.contains("table size: 8192"), "{stats}");
}

/// A 64 KB tmpfs, unmounted on drop (also when the test fails).
struct SmallDisk(PathBuf);

impl SmallDisk {
    fn mount() -> Option<SmallDisk> {
        let dir = std::env::temp_dir().join(format!("rdb-fulldisk-{}", std::process::id()));
        std::fs::create_dir_all(&dir).ok()?;
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
            .arg(&dir)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            let _ = std::fs::remove_dir(&dir);
            if common::in_ci() {
                panic!("CI=true and a 64k tmpfs cannot be mounted: CI must run this test");
            }
            common::skipped("cannot mount a tmpfs (needs root) for the full-disk test");
            return None;
        }
        Some(SmallDisk(dir))
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
        let _ = std::fs::remove_dir(&self.0);
    }
}

/// A full disk: SAVE and BGSAVE fail with Redis's replies and log lines,
/// no temp file is left behind, the data in memory is intact, and with
/// save points writes get MISCONF (on both servers).
#[test]
fn full_disk_fails_saves_and_keeps_the_data() {
    let Some(disk) = SmallDisk::mount() else {
        return;
    };
    let run = |p: &Process| -> Vec<String> {
        let mut c = p.connect();
        let mut x = 88172645463325252u64;
        for i in 0..40 {
            // 4 KB of noise per key: LZF cannot shrink it under 64 KB.
            let v: Vec<u8> = (0..4096)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect();
            c.must(&[b"SET".to_vec(), format!("k{i}").into_bytes(), v]);
        }
        let before = digest(&mut c);
        let mut out = vec![text(&c.must(&[
            "CONFIG",
            "SET",
            "dir",
            disk.0.to_str().unwrap(),
        ]))];
        out.push(text(&c.must(&["SAVE"])));
        out.push(text(&c.must(&["CONFIG", "SET", "save", "3600 1"])));
        out.push(text(&c.must(&["BGSAVE"])));
        wait_bgsave_done(&mut c);
        out.push(info_field(&mut c, "persistence", "rdb_last_bgsave_status"));
        out.push(text(&c.must(&["SET", "more", "x"])));
        out.push(format!("intact={}", digest(&mut c) == before));
        let left: Vec<_> = std::fs::read_dir(&disk.0).unwrap().flatten().collect();
        out.push(format!("files left={}", left.len()));
        c.must(&["CONFIG", "SET", "save", ""]);
        c.must(&["CONFIG", "SET", "dir", dir_of(p).to_str().unwrap()]);
        out
    };
    let protected = ["--enable-protected-configs", "yes"];
    let lite = Server::start_with(&protected);
    let ours = run(&lite);
    assert_eq!(ours[1], "-ERR\r\n");
    assert!(ours[5].starts_with("-MISCONF"), "{ours:?}");
    assert_eq!(&ours[6..], ["intact=true", "files left=0"]);
    assert!(
        lite.log_tail().contains("Write error saving DB on disk")
            && lite.log_tail().contains("No space left on device"),
        "{}",
        lite.log_tail()
    );
    if let Some(real) = RealRedis::start_with(&protected) {
        assert_eq!(ours, run(&real), "redis-lite vs redis-server");
    }
}

/// INFO stats dump_payload_sanitizations counts the encoded blobs that
/// sanitize-dump-payload deep-checked, as Redis's rdbLoadObject counts
/// them: one per quicklist node, intset, zset/hash listpack and stream
/// node, none for hashtable-encoded values or plain strings, through
/// RESTORE and through an RDB load (DEBUG RELOAD). Same numbers on both.
#[test]
fn dump_payload_sanitizations_count_like_redis() {
    let counts = common::run_on_both(|p| {
        let mut c = p.connect();
        c.must(&["CONFIG", "SET", "list-max-listpack-size", "4"]);
        c.must(&["RPUSH", "list", "1", "2", "3", "4", "5", "6", "7", "8", "9"]);
        c.must(&["SADD", "ints", "1", "2", "3"]);
        c.must(&["SADD", "strs", "a", "b"]);
        c.must(&["ZADD", "z", "1", "a", "2", "b"]);
        c.must(&["HSET", "h", "f", "v"]);
        c.must(&["XADD", "s", "1-1", "f", "v"]);
        c.must(&["SET", "str", "x"]);
        let keys = ["list", "ints", "strs", "z", "h", "s", "str"];
        let sanitizations = |c: &mut Conn| info_field(c, "stats", "dump_payload_sanitizations");
        let mut seen = vec![sanitizations(&mut c)];
        // RESTORE without deep checks counts nothing.
        for k in keys {
            let payload = bulk(&c.must(&["DUMP", k]));
            c.must(&[b"RESTORE".as_slice(), b"copy", b"0", &payload, b"REPLACE"]);
        }
        seen.push(sanitizations(&mut c));
        c.must(&["CONFIG", "SET", "sanitize-dump-payload", "yes"]);
        for k in keys {
            let payload = bulk(&c.must(&["DUMP", k]));
            c.must(&[b"RESTORE".as_slice(), b"copy", b"0", &payload, b"REPLACE"]);
            seen.push(sanitizations(&mut c));
        }
        c.must(&["DEL", "copy"]);
        c.must(&["DEBUG", "RELOAD"]);
        seen.push(sanitizations(&mut c));
        c.must(&["CONFIG", "RESETSTAT"]);
        seen.push(sanitizations(&mut c));
        seen
    });
    // 3 list nodes, the intset, nothing for the hashtable set, the zset and
    // hash listpacks, the stream node, nothing for the string; the reload
    // counts the 7 blobs again; RESETSTAT clears the counter.
    assert_eq!(
        counts,
        ["0", "0", "3", "4", "4", "5", "6", "7", "7", "14", "0"]
    );
}
