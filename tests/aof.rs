//! The append only file against the real thing: an AOF directory written
//! by redis-lite loads into redis-server 7.0.15 with the same DEBUG DIGEST
//! (and redis-check-aof accepts it), and the other way round; the incr
//! file holds the same bytes as redis-server's after the same commands
//! (the one propagation path: PEXPIREAT, SET PXAT, MULTI/EXEC, DEL for
//! expired keys..., consumer-group reads and claims as XCLAIM/XGROUP); a
//! truncated tail is handled as `aof-load-truncated`
//! says; with `appendfsync always` a write that was acknowledged survives
//! SIGKILL.
//!
//! Tests that need redis-server print SKIPPED when it is missing (and
//! fail under CI).

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

fn info_field(c: &mut Conn, section: &str, name: &str) -> String {
    let info = text(&bulk(&c.must(&["INFO", section])));
    info.lines()
        .find_map(|l| l.strip_prefix(&format!("{name}:")))
        .unwrap_or_else(|| panic!("no {name} in INFO {section}"))
        .to_string()
}

fn digest(c: &mut Conn) -> String {
    let r = c.must(&["DEBUG", "DIGEST"]);
    text(&r[1..r.len() - 2])
}

fn wait_until(what: &str, timeout: Duration, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn wait_rewrite_done(c: &mut Conn) {
    wait_until("the AOF rewrite to finish", Duration::from_secs(30), || {
        info_field(c, "persistence", "aof_rewrite_in_progress") == "0"
            && info_field(c, "persistence", "aof_rewrite_scheduled") == "0"
    });
}

/// A fresh directory for one test.
fn fresh_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "aof-{tag}-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `--dir <dir> --appendonly yes` plus `extra`.
fn aof_args<'a>(dir: &'a Path, extra: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec!["--dir", dir.to_str().unwrap(), "--appendonly", "yes"];
    v.extend_from_slice(extra);
    v
}

/// SHUTDOWN NOSAVE: the AOF is flushed and fsynced, no RDB written.
fn shutdown(p: Process) {
    let mut c = p.connect();
    let _ = c.send_cmd(&["SHUTDOWN", "NOSAVE"]);
    let mut p = p;
    wait_until("the server to exit", Duration::from_secs(10), || {
        !p.is_alive()
    });
}

/// Writes of every type, with expires, a transaction, a script and a
/// function, spread over two dbs.
fn write_dataset(c: &mut Conn, round: &str) {
    let cmds: Vec<Vec<String>> = vec![
        vec!["SET".into(), format!("{round}:s"), "hello".into()],
        vec!["SET".into(), format!("{round}:int"), "12345".into()],
        vec![
            "SET".into(),
            format!("{round}:ex"),
            "v".into(),
            "EX".into(),
            "1000".into(),
        ],
        vec![
            "RPUSH".into(),
            format!("{round}:l"),
            "a".into(),
            "b".into(),
            "c".into(),
        ],
        vec!["LPOP".into(), format!("{round}:l")],
        vec![
            "SADD".into(),
            format!("{round}:set"),
            "1".into(),
            "2".into(),
            "x".into(),
        ],
        vec![
            "ZADD".into(),
            format!("{round}:z"),
            "1.5".into(),
            "a".into(),
            "-2".into(),
            "b".into(),
        ],
        vec![
            "HSET".into(),
            format!("{round}:h"),
            "f".into(),
            "v".into(),
            "n".into(),
            "1".into(),
        ],
        vec![
            "HINCRBYFLOAT".into(),
            format!("{round}:h"),
            "n".into(),
            "0.1".into(),
        ],
        vec!["INCRBYFLOAT".into(), format!("{round}:f"), "3.0e3".into()],
        vec!["EXPIRE".into(), format!("{round}:s"), "5000".into()],
        vec![
            "XADD".into(),
            format!("{round}:x"),
            "*".into(),
            "f".into(),
            "v".into(),
        ],
        vec!["SELECT".into(), "3".into()],
        vec!["SET".into(), format!("{round}:db3"), "x".into()],
        vec!["SELECT".into(), "0".into()],
        vec!["MULTI".into()],
        vec!["INCR".into(), format!("{round}:ctr")],
        vec!["INCR".into(), format!("{round}:ctr")],
        vec!["EXEC".into()],
        vec![
            "EVAL".into(),
            "redis.call('set', KEYS[1], 'a'); redis.call('rpush', KEYS[2], 'b')".into(),
            "2".into(),
            format!("{round}:e1"),
            format!("{round}:e2"),
        ],
    ];
    for cmd in &cmds {
        let r = c.must(cmd);
        assert!(r[0] != b'-', "{cmd:?}: {}", text(&r));
    }
    let mut big = vec!["RPUSH".to_string(), format!("{round}:big")];
    big.extend((0..500).map(|i| format!("element-{i}")));
    c.must(&big);
}

/// redis-check-aof accepts the directory's manifest.
fn check_aof(dir: &Path) {
    let Some(tool) = common::require_tool("redis-check-aof") else {
        return;
    };
    let manifest = dir.join("appendonlydir/appendonly.aof.manifest");
    let out = std::process::Command::new(tool)
        .arg(&manifest)
        .output()
        .expect("run redis-check-aof");
    let stdout = text(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("is valid"),
        "redis-check-aof: {stdout}{}",
        text(&out.stderr)
    );
}

/// Write through redis-lite (base + incr after a rewrite, then more incr),
/// restart it, then hand the directory to redis-server: same digest.
#[test]
fn aof_dir_from_redis_lite_loads_into_redis_server() {
    if common::require_tool("redis-server").is_none() {
        return;
    }
    let dir = fresh_dir("lite2real");
    let lite = Server::start_with(&aof_args(&dir, &[]));
    let mut c = lite.connect();
    write_dataset(&mut c, "r1");
    c.must(&[
        "FUNCTION",
        "LOAD",
        "#!lua name=mylib\nredis.register_function('f1', function() return 1 end)",
    ]);
    assert_eq!(
        text(&c.must(&["BGREWRITEAOF"])),
        "+Background append only file rewriting started\r\n"
    );
    wait_rewrite_done(&mut c);
    write_dataset(&mut c, "r2");
    let want = digest(&mut c);
    shutdown(lite);
    check_aof(&dir);

    // redis-lite reads its own directory back.
    let again = Server::start_with(&aof_args(&dir, &[]));
    assert_eq!(digest(&mut again.connect()), want, "{}", again.log_tail());
    shutdown(again);

    let real = RealRedis::start_with(&aof_args(&dir, &[])).unwrap();
    let mut r = real.connect();
    assert_eq!(digest(&mut r), want, "{}", real.log_tail());
    assert!(text(&r.must(&["FUNCTION", "LIST"])).contains("mylib"));
    drop(real);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The other way: redis-server writes, redis-lite loads the same data,
/// and goes on appending to redis-server's incr file.
#[test]
fn aof_dir_from_redis_server_loads_into_redis_lite() {
    let dir = fresh_dir("real2lite");
    let Some(real) = RealRedis::start_with(&aof_args(&dir, &[])) else {
        return;
    };
    let mut r = real.connect();
    write_dataset(&mut r, "r1");
    r.must(&["BGREWRITEAOF"]);
    wait_rewrite_done(&mut r);
    write_dataset(&mut r, "r2");
    let want = digest(&mut r);
    shutdown(real);

    let lite = Server::start_with(&aof_args(&dir, &[]));
    let mut c = lite.connect();
    assert_eq!(digest(&mut c), want, "{}", lite.log_tail());
    let log = lite.log_tail();
    assert!(log.contains("DB loaded from append only file"), "{log}");
    assert!(
        log.contains("Opening AOF incr file appendonly.aof.2.incr.aof on server start"),
        "{log}"
    );
    c.must(&["SET", "appended", "by-lite"]);
    let want = digest(&mut c);
    shutdown(lite);
    check_aof(&dir);

    let real = RealRedis::start_with(&aof_args(&dir, &[])).unwrap();
    assert_eq!(digest(&mut real.connect()), want, "{}", real.log_tail());
    drop(real);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The commands whose propagated form is not what the client sent, in
/// the order Redis 7.0 writes them.
const PROPAGATION_SCRIPT: &[&[&str]] = &[
    &["SET", "a", "1"],
    &["SET", "b", "2", "EX", "100"],
    &["SET", "c", "3", "PX", "100000", "GET"],
    &["SET", "d", "4", "GET"],
    &["SETEX", "e", "100", "v"],
    &["PSETEX", "f", "100000", "v"],
    &["EXPIRE", "a", "100"],
    &["EXPIRE", "a", "200", "GT"],
    &["PEXPIRE", "b", "100000"],
    &["EXPIREAT", "d", "1"],
    &["GETEX", "c", "EX", "100"],
    &["GETEX", "c", "PERSIST"],
    &["GETEX", "f", "PXAT", "1"],
    &["GETDEL", "e"],
    &["GETSET", "a", "9"],
    &["INCRBYFLOAT", "fl", "1.1"],
    &["INCRBYFLOAT", "fl", "2.0e2"],
    &["HINCRBYFLOAT", "h", "f", "1.5"],
    &["SADD", "s", "1"],
    &["SPOP", "s"],
    &["SADD", "s2", "a", "b"],
    &["SPOP", "s2", "5"],
    &["RPUSH", "l", "a", "b", "c", "d"],
    &["BLPOP", "l", "0"],
    &["BRPOP", "l", "0"],
    &["LMPOP", "1", "l", "LEFT", "COUNT", "5"],
    &["RPUSH", "l2", "x", "y"],
    &["BLMOVE", "l2", "l3", "LEFT", "RIGHT", "0"],
    &["BRPOPLPUSH", "l2", "l3", "0"],
    &["ZADD", "z", "1", "a", "2", "b", "3", "c"],
    &["BZPOPMIN", "z", "0"],
    &["ZMPOP", "1", "z", "MAX", "COUNT", "10"],
    &["XADD", "x", "1-1", "f", "v"],
    &["XADD", "x", "MAXLEN", "=", "1", "1-*", "f", "v"],
    &["SELECT", "3"],
    &["SET", "x", "y"],
    &["MULTI"],
    &["SET", "m1", "1"],
    &["SET", "m2", "2"],
    &["EXEC"],
    &["MULTI"],
    &["SET", "m3", "1"],
    &["EXEC"],
    &["SELECT", "0"],
    &[
        "EVAL",
        "redis.call('set','e1','1'); redis.call('set','e2','2')",
        "0",
    ],
    &["EVAL", "redis.call('set','e3','1')", "0"],
    // A key stored already expired: the lookup deletes it (a DEL), and a
    // write on it comes wrapped with that DEL in MULTI/EXEC.
    &["SET", "k", "v", "PXAT", "1"],
    &["GET", "k"],
    &["SET", "k2", "v", "PXAT", "1"],
    &["SET", "k2", "w"],
    &["CONFIG", "SET", "lazyfree-lazy-expire", "yes"],
    &["SET", "k3", "v", "PXAT", "1"],
    &["EXISTS", "k3"],
    &["FLUSHDB"],
    &["FLUSHALL"],
];

/// The incr file of a server that ran PROPAGATION_SCRIPT, absolute times
/// blanked out.
fn propagated_stream(p: Process, dir: &Path) -> Vec<u8> {
    let mut c = p.connect();
    for cmd in PROPAGATION_SCRIPT {
        let r = c.must(cmd);
        assert!(r[0] != b'-', "{cmd:?}: {}", text(&r));
    }
    shutdown(p);
    incr_file_with_times_masked(dir)
}

/// The server's incr AOF file with each absolute time (a 13-digit ms
/// value: PEXPIREAT's, SET PXAT's, XCLAIM's TIME) blanked out as `<ms>`.
fn incr_file_with_times_masked(dir: &Path) -> Vec<u8> {
    let data = std::fs::read(dir.join("appendonlydir/appendonly.aof.1.incr.aof")).unwrap();
    let mut out = Vec::new();
    for line in data.split_inclusive(|&b| b == b'\n') {
        let is_time =
            line.len() == 15 && line[0] == b'1' && line[..13].iter().all(u8::is_ascii_digit);
        out.extend_from_slice(if is_time { b"<ms>\r\n" } else { line });
    }
    out
}

#[test]
fn incr_aof_holds_what_redis_server_writes() {
    let dir = fresh_dir("prop-lite");
    let lite = Server::start_with(&aof_args(&dir, &[]));
    let ours = propagated_stream(lite, &dir);
    let text_ours = text(&ours);
    // Spot checks that hold without redis-server too.
    assert!(
        text_ours.contains("$9\r\nPEXPIREAT\r\n$1\r\na\r\n"),
        "{text_ours}"
    );
    assert!(
        text_ours.contains("$4\r\nPXAT\r\n$13\r\n<ms>\r\n"),
        "{text_ours}"
    );
    assert!(text_ours.contains("*1\r\n$5\r\nMULTI\r\n"), "{text_ours}");
    assert!(!text_ours.to_lowercase().contains("eval"), "{text_ours}");
    assert!(
        text_ours.contains("$6\r\nUNLINK\r\n$2\r\nk3\r\n"),
        "{text_ours}"
    );
    let _ = std::fs::remove_dir_all(&dir);

    let dir = fresh_dir("prop-real");
    let Some(real) = RealRedis::start_with(&aof_args(&dir, &[])) else {
        return;
    };
    let theirs = propagated_stream(real, &dir);
    assert_eq!(text_ours, text(&theirs));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A crash mid-write leaves half a command at the end of the incr file.
fn truncated_dir() -> (PathBuf, PathBuf) {
    let dir = fresh_dir("trunc");
    let lite = Server::start_with(&aof_args(&dir, &[]));
    let mut c = lite.connect();
    c.must(&["SET", "kept", "1"]);
    shutdown(lite);
    let incr = dir.join("appendonlydir/appendonly.aof.1.incr.aof");
    let mut data = std::fs::read(&incr).unwrap();
    data.extend_from_slice(b"*3\r\n$3\r\nSET\r\n$4\r\nlost\r\n$1");
    std::fs::write(&incr, &data).unwrap();
    (dir, incr)
}

#[test]
fn truncated_tail_is_cut_with_aof_load_truncated_yes() {
    let (dir, incr) = truncated_dir();
    let before = std::fs::metadata(&incr).unwrap().len();
    let lite = Server::start_with(&aof_args(&dir, &["--aof-load-truncated", "yes"]));
    let mut c = lite.connect();
    assert_eq!(c.must(&["GET", "kept"]), b"$1\r\n1\r\n");
    assert_eq!(c.must(&["EXISTS", "lost"]), b":0\r\n");
    let log = lite.log_tail();
    assert!(
        log.contains(
            "!!! Warning: short read while loading the AOF file appendonly.aof.1.incr.aof!!!"
        ),
        "{log}"
    );
    assert!(
        log.contains(
            "AOF appendonly.aof.1.incr.aof loaded anyway because aof-load-truncated is enabled"
        ),
        "{log}"
    );
    // Cut back to the last whole command, and appended to after it.
    let after = std::fs::metadata(&incr).unwrap().len();
    assert!(after < before);
    c.must(&["SET", "next", "2"]);
    shutdown(lite);
    check_aof(&dir);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn truncated_tail_is_fatal_with_aof_load_truncated_no() {
    let (dir, _) = truncated_dir();
    let bin = env!("CARGO_BIN_EXE_redis-lite");
    let out = std::process::Command::new(bin)
        .args(["--port", &common::free_port().to_string(), "--save", ""])
        .args(aof_args(&dir, &["--aof-load-truncated", "no"]))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let log = text(&out.stdout);
    assert!(log.contains("Unexpected end of file reading the append only file appendonly.aof.1.incr.aof. You can: 1) Make a backup of your AOF file, then use ./redis-check-aof --fix <filename.manifest>."), "{log}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// appendfsync always: every write that got its +OK is in the AOF, even
/// when the server is SIGKILLed at a random moment of a write loop.
#[test]
fn acknowledged_writes_survive_sigkill_with_appendfsync_always() {
    use rand::RngExt;
    let dir = fresh_dir("kill9");
    let args = aof_args(&dir, &["--appendfsync", "always"]);
    let mut rng = rand::rng();
    let mut all_acked: Vec<u64> = Vec::new();
    let mut next = 0u64;
    for _trial in 0..5 {
        let p = Server::start_with(&args);
        let mut c = p.connect();
        // Every write acknowledged before any earlier kill is there.
        for k in &all_acked {
            let key = format!("k:{k}");
            assert_eq!(
                c.must(&["EXISTS", key.as_str()]),
                b":1\r\n",
                "lost {key}\n{}",
                p.log_tail()
            );
        }
        let pid = p.pid() as i32;
        let kill_after = Duration::from_millis(rng.random_range(20..200));
        let killer = std::thread::spawn(move || {
            std::thread::sleep(kill_after);
            // SAFETY: signalling the server process this test started.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        });
        loop {
            let key = format!("k:{next}");
            let acked = matches!(c.cmd(&["SET", key.as_str(), "v"]), Ok(r) if r == b"+OK\r\n");
            if !acked {
                break;
            }
            all_acked.push(next);
            next += 1;
        }
        // The write in flight at the kill may or may not have made it.
        next += 1;
        killer.join().unwrap();
        drop(p);
    }
    let p = Server::start_with(&args);
    let mut c = p.connect();
    for k in &all_acked {
        let key = format!("k:{k}");
        assert_eq!(c.must(&["EXISTS", key.as_str()]), b":1\r\n", "lost {key}");
    }
    assert!(!all_acked.is_empty());
    drop(p);
    let _ = std::fs::remove_dir_all(&dir);
}

/// CONFIG SET appendonly yes starts a rewrite; the dataset in memory is
/// then what a restart loads.
#[test]
fn config_set_appendonly_yes_writes_the_base_by_rewrite() {
    let dir = fresh_dir("cfgset");
    let lite = Server::start_with(&["--dir", dir.to_str().unwrap()]);
    let mut c = lite.connect();
    c.must(&["DEBUG", "POPULATE", "1000"]);
    assert_eq!(c.must(&["CONFIG", "SET", "appendonly", "yes"]), b"+OK\r\n");
    wait_rewrite_done(&mut c);
    assert_eq!(info_field(&mut c, "persistence", "aof_enabled"), "1");
    c.must(&["SET", "after", "1"]);
    let want = digest(&mut c);
    let manifest =
        std::fs::read_to_string(dir.join("appendonlydir/appendonly.aof.manifest")).unwrap();
    assert_eq!(
        manifest,
        "file appendonly.aof.1.base.rdb seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n"
    );
    shutdown(lite);
    let lite = Server::start_with(&aof_args(&dir, &[]));
    assert_eq!(digest(&mut lite.connect()), want);
    shutdown(lite);
    let _ = std::fs::remove_dir_all(&dir);
}

/// INFO persistence lists the same fields as redis-server's with
/// appendonly yes, and the bio threads carry Redis's names.
#[test]
fn info_persistence_fields_and_bio_threads_match_redis() {
    let dir = fresh_dir("info-lite");
    let lite = Server::start_with(&aof_args(&dir, &[]));
    let mut c = lite.connect();
    let names = |c: &mut Conn| -> Vec<String> {
        text(&bulk(&c.must(&["INFO", "persistence"])))
            .lines()
            .filter_map(|l| l.split(':').next().map(str::to_string))
            .filter(|n| !n.is_empty() && !n.starts_with('#'))
            .collect()
    };
    let ours = names(&mut c);
    let comms: Vec<String> = std::fs::read_dir(format!("/proc/{}/task", lite.pid()))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter_map(|e| std::fs::read_to_string(e.path().join("comm")).ok())
        .map(|s| s.trim().to_string())
        .collect();
    for t in ["bio_close_file", "bio_aof_fsync", "bio_lazy_free"] {
        assert!(comms.iter().any(|n| n == t), "{t} not in {comms:?}");
    }
    drop(lite);
    let _ = std::fs::remove_dir_all(&dir);
    let dir = fresh_dir("info-real");
    let Some(real) = RealRedis::start_with(&aof_args(&dir, &[])) else {
        return;
    };
    assert_eq!(ours, names(&mut real.connect()));
    drop(real);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Consumer-group commands as t_stream.c propagates them: XREADGROUP as
/// one XCLAIM ... FORCE JUSTID LASTID per delivered entry, NOACK as XGROUP
/// CREATECONSUMER + XGROUP SETID ... ENTRIESREAD, XCLAIM as XCLAIMs (also
/// for a deleted entry it drops from the PEL), LASTID alone as XGROUP
/// SETID, and a blocked XREADGROUP served by a later XADD.
const STREAM_GROUP_SCRIPT: &[&[&str]] = &[
    &["XADD", "s", "1-1", "f", "v"],
    &["XADD", "s", "2-1", "f", "v"],
    &["XADD", "s", "3-1", "f", "v"],
    &["XGROUP", "CREATE", "s", "g", "0"],
    &[
        "XREADGROUP",
        "GROUP",
        "g",
        "alice",
        "COUNT",
        "2",
        "STREAMS",
        "s",
        ">",
    ],
    &["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "0"],
    &[
        "XREADGROUP",
        "GROUP",
        "g",
        "bob",
        "NOACK",
        "STREAMS",
        "s",
        ">",
    ],
    &[
        "XREADGROUP",
        "GROUP",
        "g",
        "carol",
        "NOACK",
        "STREAMS",
        "s",
        ">",
    ],
    &["XCLAIM", "s", "g", "bob", "0", "1-1", "RETRYCOUNT", "7"],
    &["XDEL", "s", "2-1"],
    &["XCLAIM", "s", "g", "bob", "0", "2", "JUSTID"],
    &["XCLAIM", "s", "g", "bob", "0", "9-9", "LASTID", "5-0"],
    &["XCLAIM", "s", "g", "dave", "0", "3-1", "FORCE", "JUSTID"],
];

fn propagated_group_stream(p: Process, dir: &Path) -> Vec<u8> {
    let mut c = p.connect();
    for cmd in STREAM_GROUP_SCRIPT {
        let r = c.must(cmd);
        assert!(r[0] != b'-', "{cmd:?}: {}", text(&r));
    }
    // A reader parks, then an XADD serves it.
    let mut blocked = p.connect();
    blocked
        .send_cmd(&[
            "XREADGROUP",
            "GROUP",
            "g",
            "erin",
            "BLOCK",
            "0",
            "STREAMS",
            "s",
            ">",
        ])
        .unwrap();
    wait_until("the reader to block", Duration::from_secs(10), || {
        info_field(&mut c, "clients", "blocked_clients") == "1"
    });
    c.must(&["XADD", "s", "10-1", "f", "v"]);
    let r = blocked.read_reply().unwrap();
    assert!(text(&r).contains("10-1"), "{}", text(&r));
    c.must(&["PING"]);
    drop(blocked);
    shutdown(p);
    incr_file_with_times_masked(dir)
}

#[test]
fn incr_aof_holds_stream_group_propagation_like_redis_server() {
    let dir = fresh_dir("xprop-lite");
    let lite = Server::start_with(&aof_args(&dir, &[]));
    let ours = text(&propagated_group_stream(lite, &dir));
    // Spot checks that hold without redis-server too.
    assert!(!ours.contains("XREADGROUP"), "{ours}");
    assert!(
        ours.contains("$5\r\nalice\r\n$1\r\n0\r\n$3\r\n1-1\r\n$4\r\nTIME\r\n$13\r\n<ms>\r\n"),
        "{ours}"
    );
    assert!(
        ours.contains("CREATECONSUMER\r\n$1\r\ns\r\n$1\r\ng\r\n$3\r\nbob"),
        "{ours}"
    );
    assert!(ours.contains("$11\r\nENTRIESREAD\r\n"), "{ours}");
    let _ = std::fs::remove_dir_all(&dir);

    let dir = fresh_dir("xprop-real");
    let Some(real) = RealRedis::start_with(&aof_args(&dir, &[])) else {
        return;
    };
    let theirs = text(&propagated_group_stream(real, &dir));
    assert_eq!(ours, theirs);
    let _ = std::fs::remove_dir_all(&dir);
}

/// An old single-file `appendonly.aof` (Redis < 7.0) whose commands fail
/// when replayed: the file is migrated into appendonlydir, each error the
/// AOF-loading client gets is logged as `== CRITICAL ==` and counted in
/// unexpected_error_replies and errorstats (not in commandstats), and the
/// data that did load stays. Same log lines and counters as redis-server.
#[test]
fn old_aof_is_migrated_and_its_failing_commands_are_logged_like_redis() {
    let old_aof = "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\nabc\r\n\
                   *2\r\n$4\r\nINCR\r\n$1\r\nk\r\n\
                   *3\r\n$5\r\nLPUSH\r\n$1\r\nk\r\n$1\r\nx\r\n\
                   *3\r\n$3\r\nSET\r\n$1\r\nj\r\n$1\r\n2\r\n";
    let run = |real: bool| -> Option<(Vec<String>, Vec<String>)> {
        let dir = fresh_dir(if real { "old-real" } else { "old-lite" });
        std::fs::write(dir.join("appendonly.aof"), old_aof).unwrap();
        let args = aof_args(&dir, &[]);
        let p = if real {
            RealRedis::start_with(&args)?
        } else {
            Server::start_with(&args)
        };
        let mut c = p.connect();
        let mut state = vec![
            text(&c.must(&["GET", "k"])),
            text(&c.must(&["GET", "j"])),
            info_field(&mut c, "stats", "unexpected_error_replies"),
            info_field(&mut c, "stats", "total_error_replies"),
        ];
        let errorstats = String::from_utf8_lossy(&c.must(&["INFO", "errorstats"])).into_owned();
        // The harness's readiness PING may have met -LOADING while the AOF
        // loaded (on a loaded machine): that error is the probe's, not the
        // AOF's, so it is taken out of the total and the list on both sides.
        let mut probe_loading = 0;
        for l in errorstats.lines().filter(|l| l.starts_with("errorstat_")) {
            match l.strip_prefix("errorstat_LOADING:count=") {
                Some(n) => probe_loading = n.trim().parse::<u64>().unwrap(),
                None => state.push(l.to_string()),
            }
        }
        let total: u64 = state[3].parse().unwrap();
        state[3] = (total - probe_loading).to_string();
        let commandstats = String::from_utf8_lossy(&c.must(&["INFO", "commandstats"])).into_owned();
        state.push(format!(
            "failed incr/lpush stats: {}",
            commandstats.contains("cmdstat_incr")
        ));
        state.push(format!(
            "manifest: {}",
            dir.join("appendonlydir/appendonly.aof.manifest").exists()
        ));
        let log: Vec<String> = p
            .log_tail()
            .lines()
            .filter(|l| l.contains("== CRITICAL ==") || l.contains("old-style AOF"))
            .map(|l| {
                l.split_once(['#', '*'])
                    .map_or(l, |x| x.1)
                    .trim()
                    .to_string()
            })
            .collect();
        shutdown(p);
        let _ = std::fs::remove_dir_all(&dir);
        Some((state, log))
    };
    let lite = run(false).unwrap();
    assert_eq!(lite.1.len(), 3, "{:?}", lite.1);
    assert!(lite.1[1]
        .contains("'value is not an integer or out of range' after processing the command 'incr'"));
    match run(true) {
        Some(real) => assert_eq!(lite, real),
        None => common::skipped("redis-server not on PATH: lite-only checks ran"),
    }
}

/// XADD MAXLEN ~ n LIMIT l propagates as `MAXLEN = <exact length> LIMIT l`;
/// replayed from the AOF (mustObeyClient) the LIMIT no longer applies, so
/// the reloaded stream has the same length even with another node size.
#[test]
fn approx_trim_with_limit_replays_from_the_aof_like_redis() {
    let run = |real: bool| -> Option<Vec<String>> {
        let dir = fresh_dir(if real { "xlimit-real" } else { "xlimit-lite" });
        let args = aof_args(&dir, &["--stream-node-max-entries", "10"]);
        let p = if real {
            RealRedis::start_with(&args)?
        } else {
            Server::start_with(&args)
        };
        let mut c = p.connect();
        for _ in 0..100 {
            c.must(&["XADD", "mystream", "*", "xitem", "v"]);
        }
        c.must(&[
            "XADD", "mystream", "MAXLEN", "~", "55", "LIMIT", "30", "*", "xitem", "v",
        ]);
        let mut out = vec![text(&c.must(&["XLEN", "mystream"]))];
        c.must(&["CONFIG", "SET", "stream-node-max-entries", "1"]);
        c.must(&["DEBUG", "LOADAOF"]);
        out.push(text(&c.must(&["XLEN", "mystream"])));
        shutdown(p);
        let _ = std::fs::remove_dir_all(&dir);
        Some(out)
    };
    let lite = run(false).unwrap();
    assert_eq!(lite, [":71\r\n", ":71\r\n"]);
    match run(true) {
        Some(real) => assert_eq!(lite, real),
        None => common::skipped("redis-server not on PATH: lite-only checks ran"),
    }
}
