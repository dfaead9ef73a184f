//! Replication, the master side: redis-lite as the master of a real
//! redis-server 7.0.15 replica (`--replicaof`), and of raw SYNC clients
//! (Redis's own tests' attach_to_replication_stream, redis-cli --rdb).
//!
//! - every data type, expiries, scripts, MULTI and two dbs reach the real
//!   replica: DEBUG DIGEST equal on both sides;
//! - the link killed (CLIENT KILL TYPE replica) and re-made continues with
//!   a partial resync (sync_partial_ok), digests equal again;
//! - the stream after SYNC is byte-identical to real Redis's for the same
//!   commands;
//! - redis-cli --rdb gets a dump redis-check-rdb accepts;
//! - WAIT counts the replica, and 0 once it is gone;
//! - ROLE and INFO replication read as a real Redis master's;
//! - a replica that stops reading is dropped at its output buffer limit.
//!
//! All print SKIPPED without redis-server (and fail under CI).

mod common;

use common::replication::ReplStream;
use common::{require_tool, skipped, Conn, Process, RealRedis, Server};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Generous bound for anything that polls (a full sync forks and writes
/// a file): not a timing threshold, a hang guard.
const POLL_BOUND: Duration = Duration::from_secs(30);

fn text(r: &[u8]) -> String {
    String::from_utf8_lossy(r).into_owned()
}

/// One field of an INFO section.
fn info_field(c: &mut Conn, section: &str, field: &str) -> Option<String> {
    let r = text(&c.must(&["INFO", section]));
    r.lines().find_map(|l| {
        l.strip_prefix(&format!("{field}:"))
            .map(|v| v.trim().to_string())
    })
}

/// Poll `f` until it returns true, or panic with `what` after POLL_BOUND.
fn wait_for(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + POLL_BOUND;
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The lite master: the full sync starts at once (no diskless delay).
fn lite_master() -> Process {
    Server::start_with(&["--repl-diskless-sync-delay", "0"])
}

/// A real replica of `master`, with its link up.
fn real_replica_of(master: &Process) -> Option<Process> {
    let port = master.port.to_string();
    let r = RealRedis::start_with(&["--replicaof", "127.0.0.1", &port])?;
    let mut rc = r.connect();
    wait_for("the replica's link to come up", || {
        info_field(&mut rc, "replication", "master_link_status").as_deref() == Some("up")
    });
    Some(r)
}

fn digest(c: &mut Conn) -> Vec<u8> {
    c.must(&["DEBUG", "DIGEST"])
}

fn wait_digests_equal(m: &mut Conn, r: &mut Conn) {
    let deadline = Instant::now() + POLL_BOUND;
    loop {
        let (a, b) = (digest(m), digest(r));
        if a == b {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "digests differ: master {} replica {}",
            text(&a),
            text(&b)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Writes of every type, with expiries, a script, a transaction and two dbs.
fn workload(c: &mut Conn, round: &str) {
    let k = |n: &str| format!("{round}:{n}");
    c.must(&["SET", &k("str"), "hello"]);
    c.must(&["APPEND", &k("str"), " world"]);
    c.must(&["INCRBY", &k("counter"), "41"]);
    c.must(&["INCRBYFLOAT", &k("float"), "1.5"]);
    c.must(&["SET", &k("ttl"), "v", "EX", "1000"]);
    c.must(&["SET", &k("short"), "gone soon", "PX", "1"]);
    c.must(&["RPUSH", &k("list"), "a", "b", "c", "d"]);
    c.must(&["LPOP", &k("list")]);
    c.must(&["SADD", &k("set"), "x", "y", "z"]);
    c.must(&["SPOP", &k("set")]);
    c.must(&["SADD", &k("intset"), "1", "2", "3"]);
    c.must(&["ZADD", &k("zset"), "1", "one", "2", "two", "3", "three"]);
    c.must(&["ZINCRBY", &k("zset"), "10", "one"]);
    c.must(&["HSET", &k("hash"), "f1", "v1", "f2", "v2"]);
    c.must(&["HINCRBY", &k("hash"), "n", "7"]);
    c.must(&["XADD", &k("stream"), "*", "field", "value"]);
    c.must(&["PFADD", &k("hll"), "a", "b", "c"]);
    c.must(&["SETBIT", &k("bits"), "100", "1"]);
    c.must(&["EXPIRE", &k("hash"), "5000"]);
    c.must(&["PEXPIRE", &k("list"), "9000000"]);
    c.must(&[
        "EVAL",
        "redis.call('set', KEYS[1], ARGV[1]); redis.call('lpush', KEYS[2], ARGV[1]); return 1",
        "2",
        &k("evalstr"),
        &k("evallist"),
        "from-lua",
    ]);
    c.must(&["MULTI"]);
    c.must(&["INCR", &k("multi")]);
    c.must(&["RPUSH", &k("multilist"), "m"]);
    c.must(&["EXEC"]);
    c.must(&["SELECT", "9"]);
    c.must(&["SET", &k("db9"), "nine"]);
    c.must(&["ZADD", &k("db9z"), "5", "five"]);
    c.must(&["SELECT", "0"]);
    c.must(&["DEL", &k("counter")]);
}

#[test]
fn real_replica_follows_every_type_and_resumes_with_a_partial_resync_diskless() {
    // repl-diskless-sync yes is the default: the RDB goes through a pipe.
    follow_and_resume(&[], "target: replicas sockets");
}

#[test]
fn real_replica_follows_every_type_and_resumes_with_a_partial_resync_disk() {
    follow_and_resume(&["--repl-diskless-sync", "no"], "target: disk");
}

fn follow_and_resume(extra: &[&str], target_line: &str) {
    if require_tool("redis-server").is_none() {
        return skipped("redis-server not installed");
    }
    let mut args = vec!["--repl-diskless-sync-delay", "0"];
    args.extend_from_slice(extra);
    let master = Server::start_with(&args);
    let Some(replica) = real_replica_of(&master) else {
        return;
    };
    let mut m = master.connect();
    let mut r = replica.connect();
    workload(&mut m, "one");
    wait_digests_equal(&mut m, &mut r);
    let empty = format!("+{}\r\n", "0".repeat(40));
    assert_ne!(
        text(&digest(&mut m)),
        empty,
        "an empty dataset proves nothing"
    );
    assert_eq!(
        info_field(&mut m, "stats", "sync_full").as_deref(),
        Some("1")
    );
    assert_eq!(
        info_field(&mut m, "stats", "sync_partial_ok").as_deref(),
        Some("0")
    );

    // Break the link from the master's side; the replica reconnects and
    // continues from the backlog.
    let killed = m.must(&["CLIENT", "KILL", "TYPE", "replica"]);
    assert_eq!(killed, b":1\r\n");
    workload(&mut m, "two");
    wait_for("a partial resync", || {
        info_field(&mut m, "stats", "sync_partial_ok").as_deref() == Some("1")
    });
    wait_for("the replica online again", || {
        info_field(&mut m, "replication", "slave0").is_some_and(|v| v.contains("state=online"))
    });
    workload(&mut m, "three");
    wait_digests_equal(&mut m, &mut r);
    // No second full sync happened.
    assert_eq!(
        info_field(&mut m, "stats", "sync_full").as_deref(),
        Some("1")
    );
    let log = std::fs::read_to_string(&replica.log).unwrap_or_default();
    assert!(
        log.contains("Successful partial resynchronization with master"),
        "replica log: {log}"
    );
    let ours = std::fs::read_to_string(&master.log).unwrap_or_default();
    assert!(ours.contains(target_line), "master log: {ours}");
}

/// The stream a SYNC client reads for `cmds` (common::replication's
/// ReplStream, Redis's attach_to_replication_stream), up to the marker.
fn sync_stream(port: u16, cmds: &[Vec<&str>]) -> Vec<u8> {
    let mut s = ReplStream::attach(port);
    let mut c = Conn::connect(port).expect("connect");
    for cmd in cmds {
        c.must(cmd);
    }
    s.raw_until_marker()
}

#[test]
fn sync_streams_what_redis_streams_for_the_same_commands() {
    let cmds: Vec<Vec<&str>> = vec![
        vec!["SET", "a", "1"],
        vec!["INCR", "n"],
        vec!["SELECT", "3"],
        vec!["RPUSH", "l", "x", "y"],
        vec!["MULTI"],
        vec!["INCR", "c"],
        vec!["LPOP", "l"],
        vec!["EXEC"],
        vec![
            "EVAL",
            "redis.call('set','s','1'); redis.call('del','s')",
            "0",
        ],
        vec!["SELECT", "0"],
        vec!["DEL", "a", "missing"],
        vec!["GET", "n"],
        vec!["SADD", "s", "m"],
        // PUBLISH reaches replicas (forceCommandPropagation REPL), alone,
        // in MULTI and from a script.
        vec!["PUBLISH", "ch", "hello"],
        vec!["MULTI"],
        vec!["PUBLISH", "ch", "in-multi"],
        vec!["EXEC"],
        vec!["EVAL", "redis.call('publish','ch','from-lua')", "0"],
        vec!["SPUBLISH", "sch", "shard"],
    ];
    let Some(real) = RealRedis::start() else {
        return;
    };
    let lite = Server::start();
    let ours = sync_stream(lite.port, &cmds);
    let theirs = sync_stream(real.port, &cmds);
    assert_eq!(text(&ours), text(&theirs));
    assert!(
        ours.starts_with(b"*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n"),
        "{}",
        text(&ours)
    );
}

/// redis.set_repl(): only the commands a script left REPL_ALL or
/// REPL_REPLICA for reach the stream (eval and function alike).
#[test]
fn set_repl_selects_what_a_script_sends_to_replicas() {
    let script = "redis.call('set','a','1'); redis.set_repl(redis.REPL_NONE); \
                  redis.call('set','b','2'); redis.set_repl(redis.REPL_AOF); \
                  redis.call('set','c','3'); redis.set_repl(redis.REPL_REPLICA); \
                  redis.call('set','d','4'); redis.set_repl(redis.REPL_ALL); \
                  redis.call('set','e','5')";
    let lib = format!("#!lua name=repl\nredis.register_function('f', function() {script} end)");
    let cmds: Vec<Vec<&str>> = vec![
        vec!["EVAL", script, "0"],
        vec!["FUNCTION", "LOAD", &lib],
        vec!["FCALL", "f", "0"],
    ];
    let lite = Server::start();
    let ours = sync_stream(lite.port, &cmds);
    let t = text(&ours);
    assert!(
        !t.contains("$1\r\nb\r\n") && !t.contains("$1\r\nc\r\n"),
        "{t}"
    );
    assert!(
        t.contains("$1\r\nd\r\n") && t.contains("$1\r\ne\r\n"),
        "{t}"
    );
    let Some(real) = RealRedis::start() else {
        return;
    };
    let theirs = sync_stream(real.port, &cmds);
    assert_eq!(t, text(&theirs));
}

#[test]
fn redis_cli_rdb_gets_a_dump_redis_check_rdb_accepts() {
    let (Some(cli), Some(check)) = (require_tool("redis-cli"), require_tool("redis-check-rdb"))
    else {
        return skipped("redis-cli / redis-check-rdb not installed");
    };
    let lite = Server::start();
    let mut c = lite.connect();
    workload(&mut c, "rdb");
    let file = common::temp_path("cli-rdb").with_extension("rdb");
    let out = std::process::Command::new(cli)
        .args(["-p", &lite.port.to_string(), "--rdb"])
        .arg(&file)
        .output()
        .expect("run redis-cli");
    assert!(out.status.success(), "redis-cli: {}", text(&out.stderr));
    let check = std::process::Command::new(check)
        .arg(&file)
        .output()
        .expect("run redis-check-rdb");
    let report = text(&check.stdout);
    assert!(check.status.success(), "redis-check-rdb: {report}");
    assert!(report.contains("RDB looks OK"), "{report}");
    // The dump a master writes for replication names its stream.
    let bytes = std::fs::read(&file).unwrap();
    assert!(
        bytes.windows(7).any(|w| w == b"repl-id"),
        "no repl-id aux field"
    );
    // rdb-only: the client is gone after its file, nobody is left attached.
    wait_for("the rdb-only client to be dropped", || {
        info_field(&mut c, "replication", "connected_slaves").as_deref() == Some("0")
    });
    let _ = std::fs::remove_file(&file);
}

#[test]
fn wait_counts_the_replica_then_zero_once_it_is_stopped() {
    if require_tool("redis-server").is_none() {
        return skipped("redis-server not installed");
    }
    let master = lite_master();
    let Some(replica) = real_replica_of(&master) else {
        return;
    };
    let mut m = master.connect();
    m.must(&["SET", "k", "v"]);
    assert_eq!(m.must(&["WAIT", "1", "1000"]), b":1\r\n");
    // Without a write since, the replica already acknowledged everything.
    assert_eq!(m.must(&["WAIT", "1", "0"]), b":1\r\n");
    drop(replica);
    wait_for("the master to notice", || {
        info_field(&mut m, "replication", "connected_slaves").as_deref() == Some("0")
    });
    m.must(&["SET", "k", "v2"]);
    assert_eq!(m.must(&["WAIT", "1", "1000"]), b":0\r\n");
    // Errors as Redis words them.
    assert_eq!(
        text(&m.must(&["WAIT", "x", "0"])),
        "-ERR value is not an integer or out of range\r\n"
    );
    assert_eq!(
        text(&m.must(&["WAIT", "1", "-1"])),
        "-ERR timeout is negative\r\n"
    );
}

#[test]
fn min_replicas_to_write_refuses_writes_without_enough_replicas() {
    let lite = Server::start();
    let mut c = lite.connect();
    c.must(&["CONFIG", "SET", "min-replicas-to-write", "1"]);
    assert_eq!(
        text(&c.must(&["SET", "k", "v"])),
        "-NOREPLICAS Not enough good replicas to write.\r\n"
    );
    assert_eq!(c.must(&["GET", "k"]), b"$-1\r\n");
    c.must(&["CONFIG", "SET", "min-replicas-to-write", "0"]);
    assert_eq!(c.must(&["SET", "k", "v"]), b"+OK\r\n");
}

/// INFO replication's field names in order, with slaveN's own keys.
fn replication_shape(c: &mut Conn) -> Vec<String> {
    let r = text(&c.must(&["INFO", "replication"]));
    r.lines()
        .filter(|l| l.contains(':'))
        .map(|l| {
            let (k, v) = l.split_once(':').unwrap();
            if k.starts_with("slave") {
                let keys: Vec<&str> = v
                    .split(',')
                    .map(|kv| kv.split('=').next().unwrap())
                    .collect();
                format!("{k}:{}", keys.join(","))
            } else {
                k.to_string()
            }
        })
        .collect()
}

/// ROLE with the numbers replaced by their kind.
fn role_shape(c: &mut Conn) -> String {
    let r = text(&c.must(&["ROLE"]));
    r.split("\r\n")
        .map(|l| {
            if l.starts_with(':') {
                ":N".to_string()
            } else if l.chars().all(|ch| ch.is_ascii_digit()) && !l.is_empty() {
                "digits".to_string()
            } else if l.starts_with('$') {
                "$".to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("|")
}

#[test]
fn role_and_info_replication_read_as_a_real_master() {
    let Some(real_master) = RealRedis::start() else {
        return;
    };
    let Some(real_replica) = real_replica_of(&real_master) else {
        return;
    };
    let lite = lite_master();
    let Some(lite_replica) = real_replica_of(&lite) else {
        return;
    };
    let (mut rm, mut lm) = (real_master.connect(), lite.connect());
    for c in [&mut rm, &mut lm] {
        c.must(&["SET", "k", "v"]);
        assert_eq!(c.must(&["WAIT", "1", "0"]), b":1\r\n");
    }
    assert_eq!(replication_shape(&mut lm), replication_shape(&mut rm));
    assert_eq!(role_shape(&mut lm), role_shape(&mut rm));
    // ROLE's replica row names the replica's listening port.
    let role = text(&lm.must(&["ROLE"]));
    assert!(role.contains(&lite_replica.port.to_string()), "{role}");
    // CLIENT LIST flags the replica with S, as Redis does.
    for c in [&mut rm, &mut lm] {
        let list = text(&c.must(&["CLIENT", "LIST", "TYPE", "replica"]));
        assert!(list.contains("flags=S "), "{list}");
    }
    drop(real_replica);
}

#[test]
fn a_replica_that_stops_reading_is_dropped_at_its_output_buffer_limit() {
    let lite = Server::start_with(&["--client-output-buffer-limit", "replica 1mb 0 0"]);
    let mut c = lite.connect();
    // A replica that syncs and then never reads again.
    let s = raw_replica(lite.port);
    wait_for("the replica online", || {
        info_field(&mut c, "replication", "slave0").is_some_and(|v| v.contains("state=online"))
    });
    let big = "x".repeat(64 * 1024);
    let mut n = 0;
    wait_for("the replica to be dropped", || {
        for _ in 0..32 {
            c.must(&["SET", &format!("k{n}"), &big]);
            n += 1;
        }
        info_field(&mut c, "replication", "connected_slaves").as_deref() == Some("0")
    });
    // The master's own clients were never held up.
    assert_eq!(c.must(&["PING"]), b"+PONG\r\n");
    let log = std::fs::read_to_string(&lite.log).unwrap_or_default();
    assert!(log.contains("overcoming of output buffer limits"), "{log}");
    drop(s);
}

#[test]
fn two_replicas_share_one_diskless_transfer() {
    if require_tool("redis-server").is_none() {
        return skipped("redis-server not installed");
    }
    // The transfer starts when the second replica waits (max-replicas),
    // long before the delay: both are fed from the same child's pipe.
    let master = Server::start_with(&[
        "--repl-diskless-sync-delay",
        "600",
        "--repl-diskless-sync-max-replicas",
        "2",
    ]);
    let mut m = master.connect();
    m.must(&["DEBUG", "POPULATE", "100000", "key", "100"]);
    workload(&mut m, "pair");
    let port = master.port.to_string();
    let (Some(a), Some(b)) = (
        RealRedis::start_with(&["--replicaof", "127.0.0.1", &port]),
        RealRedis::start_with(&["--replicaof", "127.0.0.1", &port]),
    ) else {
        return;
    };
    let (mut ra, mut rb) = (a.connect(), b.connect());
    for r in [&mut ra, &mut rb] {
        wait_for("a replica's link to come up", || {
            info_field(r, "replication", "master_link_status").as_deref() == Some("up")
        });
    }
    workload(&mut m, "after");
    wait_digests_equal(&mut m, &mut ra);
    wait_digests_equal(&mut m, &mut rb);
    let log = std::fs::read_to_string(&master.log).unwrap_or_default();
    assert_eq!(
        log.matches("Starting BGSAVE for SYNC with target: replicas sockets")
            .count(),
        1,
        "{log}"
    );
    assert_eq!(
        info_field(&mut m, "stats", "sync_full").as_deref(),
        Some("2")
    );
}

/// A raw replica: REPLCONF listening-port, PSYNC ? -1, then silence.
fn raw_replica(port: u16) -> TcpStream {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.write_all(b"REPLCONF listening-port 1\r\n").unwrap();
    let mut ok = [0u8; 5];
    s.read_exact(&mut ok).unwrap();
    assert_eq!(&ok, b"+OK\r\n");
    s.write_all(b"PSYNC ? -1\r\n").unwrap();
    s
}

#[test]
fn config_set_repl_backlog_size_resizes_the_backlog() {
    let lite = Server::start_with(&["--repl-diskless-sync", "no"]);
    let mut c = lite.connect();
    let _s = raw_replica(lite.port);
    wait_for("the backlog", || {
        info_field(&mut c, "replication", "repl_backlog_active").as_deref() == Some("1")
    });
    c.must(&["CONFIG", "SET", "repl-backlog-size", "20000"]);
    let v = "y".repeat(1000);
    for i in 0..100 {
        c.must(&["SET", &format!("k{i}"), &v]);
    }
    let field = |c: &mut Conn, f: &str| -> i64 {
        info_field(c, "replication", f).unwrap().parse().unwrap()
    };
    assert_eq!(field(&mut c, "repl_backlog_size"), 20000);
    assert_eq!(field(&mut c, "repl_backlog_histlen"), 20000);
    let offset = field(&mut c, "master_repl_offset");
    assert_eq!(
        field(&mut c, "repl_backlog_first_byte_offset"),
        offset - 20000 + 1
    );
}

#[test]
fn the_backlog_is_freed_after_repl_backlog_ttl_without_replicas() {
    let lite = Server::start_with(&["--repl-backlog-ttl", "1"]);
    let mut c = lite.connect();
    let s = raw_replica(lite.port);
    wait_for("the backlog", || {
        info_field(&mut c, "replication", "repl_backlog_active").as_deref() == Some("1")
    });
    let id = info_field(&mut c, "replication", "master_replid");
    drop(s);
    wait_for("the backlog to be freed", || {
        info_field(&mut c, "replication", "repl_backlog_active").as_deref() == Some("0")
    });
    // A new history: nobody may continue the old one.
    assert_ne!(info_field(&mut c, "replication", "master_replid"), id);
    let log = std::fs::read_to_string(&lite.log).unwrap_or_default();
    assert!(
        log.contains("Replication backlog freed after 1 seconds without connected replicas."),
        "{log}"
    );
}

#[test]
fn a_replica_that_stops_acking_is_dropped_after_repl_timeout() {
    let lite = Server::start_with(&["--repl-timeout", "1", "--repl-diskless-sync", "no"]);
    let mut c = lite.connect();
    let _s = raw_replica(lite.port);
    wait_for("the replica online", || {
        info_field(&mut c, "replication", "slave0").is_some_and(|v| v.contains("state=online"))
    });
    wait_for("the replica to be dropped", || {
        info_field(&mut c, "replication", "connected_slaves").as_deref() == Some("0")
    });
    let log = std::fs::read_to_string(&lite.log).unwrap_or_default();
    assert!(
        log.contains("Disconnecting timedout replica (streaming sync): 127.0.0.1:1"),
        "{log}"
    );
}

#[test]
fn a_diskless_replica_that_stops_reading_is_dropped_and_the_child_stopped() {
    let lite = Server::start_with(&["--repl-timeout", "1", "--repl-diskless-sync-delay", "0"]);
    let mut c = lite.connect();
    // An RDB far bigger than the socket buffers.
    c.must(&["DEBUG", "POPULATE", "300000", "key", "100"]);
    let mut s = TcpStream::connect(("127.0.0.1", lite.port)).unwrap();
    s.write_all(b"REPLCONF capa eof\r\n").unwrap();
    let mut ok = [0u8; 5];
    s.read_exact(&mut ok).unwrap();
    assert_eq!(&ok, b"+OK\r\n");
    s.write_all(b"PSYNC ? -1\r\n").unwrap();
    wait_for("the stuck replica to be dropped", || {
        info_field(&mut c, "replication", "connected_slaves").as_deref() == Some("0")
    });
    wait_for("the child to be gone", || {
        info_field(&mut c, "persistence", "rdb_bgsave_in_progress").as_deref() == Some("0")
    });
    let log = std::fs::read_to_string(&lite.log).unwrap_or_default();
    assert!(
        log.contains("Disconnecting timedout replica (full sync)"),
        "{log}"
    );
    // The loop was never held up.
    assert_eq!(c.must(&["PING"]), b"+PONG\r\n");
    drop(s);
}

#[test]
fn a_blocked_wait_reads_and_unblocks_as_in_redis() {
    let run = |p: &Process| -> Vec<String> {
        let mut w = p.connect();
        let mut c = p.connect();
        let id = text(&w.must(&["CLIENT", "ID"]));
        let id = id.trim_start_matches(':').trim().to_string();
        w.send_cmd(&["WAIT", "1", "0"]).unwrap();
        let mut line = String::new();
        wait_for("WAIT to block", || {
            let list = text(&c.must(&["CLIENT", "LIST", "ID", &id]));
            line = list
                .split(' ')
                .filter(|f| f.starts_with("flags=") || f.starts_with("cmd="))
                .collect::<Vec<_>>()
                .join(" ");
            list.contains("flags=b")
        });
        let unblocked = text(&c.must(&["CLIENT", "UNBLOCK", &id]));
        let reply = text(&w.read_reply().unwrap());
        vec![line, unblocked, reply]
    };
    let ours = common::run_on_both(run);
    assert_eq!(ours, vec!["flags=b cmd=wait", ":1\r\n", ":0\r\n"]);
}

#[test]
fn replconf_and_psync_errors_read_as_redis() {
    let run = |p: &Process| -> Vec<String> {
        let mut c = p.connect();
        [
            vec!["REPLCONF", "listening-port"],
            vec!["REPLCONF", "listening-port", "x"],
            vec!["REPLCONF", "rdb-only", "2"],
            vec!["REPLCONF", "rdb-only", "x"],
            vec!["REPLCONF", "bogus", "1"],
            vec!["REPLCONF", "capa", "unknown-capa"],
            vec!["REPLCONF", "ack", "10"],
            vec!["REPLCONF", "listening-port", "6380", "capa", "eof"],
            vec!["WAIT", "0", "x"],
            vec!["WAIT", "0", "0"],
            vec!["PSYNC", "?"],
            vec!["ROLE", "x"],
        ]
        .iter()
        .map(|cmd| {
            c.send_cmd(cmd).unwrap();
            // REPLCONF ACK from a non-replica gets no reply at all.
            if cmd[1] == "ack" {
                return String::from("(none)");
            }
            text(&c.read_reply().unwrap())
        })
        .collect()
    };
    let ours = common::run_on_both(run);
    assert_eq!(ours[4], "-ERR Unrecognized REPLCONF option: bogus\r\n");
}

/// A disk BGSAVE started for replicas is killed once the last replica
/// waiting for it is gone, but not while another waits, nor when save
/// points make the file worth finishing (freeClient's killRDBChild), as
/// a real Redis master does.
#[test]
fn a_disk_bgsave_nobody_waits_for_is_killed_unless_save_points_want_it() {
    let run = |p: &Process| {
        let mut c = p.connect();
        for i in 0..10 {
            c.must(&["SET", &i.to_string(), "v"]);
        }
        c.must(&["CONFIG", "SET", "repl-diskless-sync", "no"]);
        // 1s per key: the child outlives the test's steps.
        c.must(&["CONFIG", "SET", "rdb-key-save-delay", "1000000"]);
        let mut seen = Vec::new();
        for save in ["", "900 1"] {
            c.must(&["CONFIG", "SET", "save", save]);
            let sync = || {
                let mut s = TcpStream::connect(("127.0.0.1", p.port)).unwrap();
                s.write_all(b"SYNC\r\n").unwrap();
                s
            };
            let (a, b) = (sync(), sync());
            wait_for("the BGSAVE for both replicas", || {
                let info = text(&c.must(&["INFO", "replication"]));
                info_field(&mut c, "persistence", "rdb_bgsave_in_progress").as_deref() == Some("1")
                    && info.matches("state=wait_bgsave").count() == 2
            });
            drop(a);
            wait_for("one replica gone", || {
                info_field(&mut c, "replication", "connected_slaves").as_deref() == Some("1")
            });
            seen.push(info_field(&mut c, "persistence", "rdb_bgsave_in_progress"));
            drop(b);
            wait_for("both replicas gone", || {
                info_field(&mut c, "replication", "connected_slaves").as_deref() == Some("0")
            });
            if save.is_empty() {
                wait_for("the child killed", || {
                    info_field(&mut c, "persistence", "rdb_bgsave_in_progress").as_deref()
                        == Some("0")
                });
            } else {
                seen.push(info_field(&mut c, "persistence", "rdb_bgsave_in_progress"));
            }
        }
        seen
    };
    let ours = common::run_on_both(run);
    let one = Some("1".to_string());
    assert_eq!(ours, vec![one.clone(), one.clone(), one]);
}

/// A replica's link carries the stream only: a command that replies (PING
/// after SYNC) closes it with Redis's log line, and no reply goes out.
#[test]
fn a_replica_whose_command_replies_is_disconnected_with_redis_log_line() {
    let run = |p: &Process| {
        let mut s = TcpStream::connect(("127.0.0.1", p.port)).unwrap();
        s.write_all(b"SYNC\r\nPING\r\n").unwrap();
        wait_for("the log line", || {
            std::fs::read_to_string(&p.log)
                .unwrap_or_default()
                .contains("Replica generated a reply to command 'ping', disconnecting it: ")
        });
        // The link closes; whatever came is the RDB transfer, not +PONG.
        s.set_read_timeout(Some(POLL_BOUND)).unwrap();
        let mut got = Vec::new();
        let _ = s.read_to_end(&mut got);
        text(&got).contains("+PONG")
    };
    assert!(!common::run_on_both(run));
}
