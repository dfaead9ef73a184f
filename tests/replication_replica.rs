//! The replica side of replication against a real redis-server 7.0.15
//! master: full sync (EOF-marked diskless and `$<len>` disk transfers),
//! the command stream (every type, EXPIRE, EVAL, MULTI, two dbs) checked
//! with DEBUG DIGEST, partial resync after the link is killed from either
//! side, REPLICAOF NO ONE, READONLY / MASTERDOWN, INFO replication field
//! names against a real replica, an unreachable master, and a fake master
//! that sends a garbage or truncated RDB.
//!
//! Every wait polls a condition with a generous bound; nothing asserts how
//! long anything took.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::time::{Duration, Instant};

use common::{Conn, Process, RealRedis, Server};

/// How long a condition may take to become true (sync, reconnects).
const WAIT: Duration = Duration::from_secs(60);

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn bulk(r: &[u8]) -> Vec<u8> {
    assert_eq!(r[0], b'$', "not a bulk reply: {}", text(r));
    let nl = r.iter().position(|&b| b == b'\n').unwrap();
    let n: usize = std::str::from_utf8(&r[1..nl - 1]).unwrap().parse().unwrap();
    r[nl + 1..nl + 1 + n].to_vec()
}

fn info(c: &mut Conn, section: &str) -> String {
    text(&bulk(&c.must(&["INFO", section])))
}

fn info_field(c: &mut Conn, section: &str, name: &str) -> String {
    info(c, section)
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{name}:")))
        .unwrap_or_else(|| panic!("no {name} in INFO {section}"))
        .to_string()
}

/// The field names of INFO replication, in order.
fn info_names(c: &mut Conn) -> Vec<String> {
    info(c, "replication")
        .lines()
        .filter_map(|l| l.split_once(':').map(|(k, _)| k.to_string()))
        .collect()
}

fn digest(c: &mut Conn) -> String {
    let r = c.must(&["DEBUG", "DIGEST"]);
    text(&r[1..r.len() - 2])
}

fn wait_until(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + WAIT;
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn log_text(p: &Process) -> String {
    std::fs::read_to_string(&p.log).unwrap_or_default()
}

fn wait_link_up(replica: &Process) {
    let mut c = replica.connect();
    wait_until("master_link_status:up", || {
        info_field(&mut c, "replication", "master_link_status") == "up"
    });
}

/// Poll until both datasets digest the same (the stream is asynchronous).
fn wait_digests_equal(master: &Process, replica: &Process) {
    let mut m = master.connect();
    let mut r = replica.connect();
    let deadline = Instant::now() + WAIT;
    let last = loop {
        let last = (digest(&mut m), digest(&mut r));
        if last.0 == last.1 {
            return;
        }
        if Instant::now() > deadline {
            break last;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    panic!(
        "digests differ: master {} replica {}\n--- replica log ---\n{}",
        last.0,
        last.1,
        replica.log_tail()
    );
}

/// A write workload touching every type, expiries (long and already
/// passing), a script, a transaction, and two databases. `tag` keeps the
/// keys of successive rounds apart.
fn workload(c: &mut Conn, tag: &str) {
    let k = |s: &str| format!("{tag}:{s}");
    c.must(&["SELECT", "0"]);
    c.must(&["SET", &k("str"), "hello"]);
    c.must(&["APPEND", &k("str"), " world"]);
    c.must(&["INCRBY", &k("n"), "41"]);
    c.must(&["INCRBYFLOAT", &k("f"), "1.5"]);
    c.must(&["SETRANGE", &k("str2"), "5", "x"]);
    c.must(&["SETBIT", &k("bits"), "100", "1"]);
    c.must(&["PFADD", &k("hll"), "a", "b", "c"]);
    c.must(&["RPUSH", &k("list"), "a", "b", "c", "d"]);
    c.must(&["LPOP", &k("list")]);
    c.must(&["LINSERT", &k("list"), "BEFORE", "c", "bb"]);
    c.must(&["HSET", &k("hash"), "f1", "v1", "f2", "v2", "f3", "3"]);
    c.must(&["HINCRBY", &k("hash"), "f3", "4"]);
    c.must(&["HDEL", &k("hash"), "f1"]);
    c.must(&["SADD", &k("set"), "x", "y", "z", "1", "2"]);
    c.must(&["SREM", &k("set"), "y"]);
    c.must(&["SADD", &k("iset"), "1", "2", "3"]);
    c.must(&["ZADD", &k("zset"), "1", "a", "2", "b", "3.5", "c"]);
    c.must(&["ZINCRBY", &k("zset"), "10", "a"]);
    c.must(&["ZREM", &k("zset"), "b"]);
    c.must(&["XADD", &k("stream"), "*", "field", "value"]);
    c.must(&["XADD", &k("stream"), "*", "field", "value2"]);
    c.must(&["XGROUP", "CREATE", &k("stream"), "g1", "0"]);
    c.must(&[
        "XREADGROUP",
        "GROUP",
        "g1",
        "consumer",
        "COUNT",
        "1",
        "STREAMS",
        &k("stream"),
        ">",
    ]);
    // Expiries: a long one (stays), one that passes at once (the master's
    // DEL removes it on the replica), EXPIRE turned into PEXPIREAT.
    c.must(&["SET", &k("ttl"), "v", "EX", "1000"]);
    c.must(&["SET", &k("short"), "v", "PX", "1"]);
    c.must(&["SET", &k("exp"), "v"]);
    c.must(&["EXPIRE", &k("exp"), "500"]);
    c.must(&["SET", &k("persist"), "v", "EX", "100"]);
    c.must(&["PERSIST", &k("persist")]);
    // A script: its effects reach the replica.
    c.must(&[
        "EVAL",
        "redis.call('set', KEYS[1], ARGV[1]); redis.call('rpush', KEYS[2], ARGV[1]); return 1",
        "2",
        &k("evalstr"),
        &k("evallist"),
        "from-lua",
    ]);
    // A transaction.
    c.must(&["MULTI"]);
    c.must(&["INCR", &k("multi-n")]);
    c.must(&["SADD", &k("multi-set"), "m1", "m2"]);
    c.must(&["DEL", &k("str2")]);
    c.must(&["EXEC"]);
    // A second database.
    c.must(&["SELECT", "9"]);
    c.must(&["SET", &k("db9"), "nine"]);
    c.must(&["HSET", &k("db9hash"), "a", "1"]);
    c.must(&["EXPIRE", &k("db9hash"), "800"]);
    c.must(&["SELECT", "0"]);
    // Large values (not listpack/intset encoded).
    let big = "v".repeat(5000);
    c.must(&["SET", &k("big"), &big]);
    c.must(&["HSET", &k("bighash"), "f", &big]);
}

fn real_master(diskless: bool) -> Option<Process> {
    RealRedis::start_with(&[
        "--repl-diskless-sync",
        if diskless { "yes" } else { "no" },
        "--repl-diskless-sync-delay",
        "0",
    ])
}

fn sync_partial_ok(master: &Process) -> u64 {
    let mut c = master.connect();
    info_field(&mut c, "stats", "sync_partial_ok")
        .parse()
        .unwrap()
}

/// The replica log says it continued with +CONTINUE `n` times.
fn partial_resyncs_logged(replica: &Process) -> usize {
    log_text(replica)
        .matches("MASTER <-> REPLICA sync: Master accepted a Partial Resynchronization.")
        .count()
}

#[test]
fn diskless_full_sync_stream_and_partial_resync_after_link_kills() {
    let Some(master) = real_master(true) else {
        return common::skipped("redis-server not installed");
    };
    let mut m = master.connect();
    // Data before the replica exists goes through the RDB.
    workload(&mut m, "rdb");
    let port = master.port.to_string();
    let replica = Server::start_with(&["--replicaof", "127.0.0.1", &port]);
    wait_link_up(&replica);
    assert!(log_text(&replica).contains("receiving streamed RDB from master with EOF"));
    wait_digests_equal(&master, &replica);

    // The stream.
    workload(&mut m, "stream");
    wait_digests_equal(&master, &replica);

    // Kill the link from the replica's side: it resumes with +CONTINUE.
    let before = sync_partial_ok(&master);
    let mut r = replica.connect();
    r.must(&["CLIENT", "KILL", "TYPE", "master"]);
    workload(&mut m, "after-kill");
    wait_until("a partial resync (replica side kill)", || {
        sync_partial_ok(&master) == before + 1 && partial_resyncs_logged(&replica) == 1
    });
    wait_link_up(&replica);
    wait_digests_equal(&master, &replica);

    // And from the master's side.
    m.must(&["CLIENT", "KILL", "TYPE", "replica"]);
    workload(&mut m, "after-master-kill");
    wait_until("a partial resync (master side kill)", || {
        sync_partial_ok(&master) == before + 2 && partial_resyncs_logged(&replica) == 2
    });
    wait_digests_equal(&master, &replica);
    let log = log_text(&replica);
    assert!(
        log.contains("Caching the disconnected master state."),
        "{log}"
    );
    assert!(
        log.contains("Trying a partial resynchronization (request "),
        "{log}"
    );

    // The offsets agree once the stream is applied.
    wait_until("equal offsets", || {
        info_field(&mut m, "replication", "master_repl_offset")
            == info_field(&mut r, "replication", "slave_repl_offset")
    });
    // The master hears our offset: REPLCONF ACK each second, and the
    // answer to REPLCONF GETACK that WAIT sends.
    wait_until("the master's view of our offset", || {
        let off = info_field(&mut m, "replication", "master_repl_offset");
        info(&mut m, "replication").contains(&format!(",offset={off},"))
    });
    m.must(&["SET", "wait-for-me", "1"]);
    assert_eq!(m.must(&["WAIT", "1", "0"]), b":1\r\n");
    // Expired keys: the master's DEL took the short-lived key away.
    assert_eq!(r.must(&["EXISTS", "stream:short"]), b":0\r\n");
    assert_eq!(r.must(&["GET", "stream:evalstr"]), b"$8\r\nfrom-lua\r\n");
}

#[test]
fn disk_full_sync_with_swapdb_load() {
    let Some(master) = real_master(false) else {
        return common::skipped("redis-server not installed");
    };
    let mut m = master.connect();
    workload(&mut m, "rdb");
    let port = master.port.to_string();
    let replica = Server::start_with(&[
        "--replicaof",
        "127.0.0.1",
        &port,
        "--repl-diskless-load",
        "swapdb",
    ]);
    wait_link_up(&replica);
    let log = log_text(&replica);
    assert!(log.contains("bytes from master to parser"), "{log}");
    assert!(
        log.contains("MASTER <-> REPLICA sync: Swapping active DB with loaded DB"),
        "{log}"
    );
    wait_digests_equal(&master, &replica);
    workload(&mut m, "stream");
    wait_digests_equal(&master, &replica);
}

#[test]
fn readonly_role_and_replicaof_no_one_promotes() {
    let Some(master) = real_master(true) else {
        return common::skipped("redis-server not installed");
    };
    let mut m = master.connect();
    m.must(&["SET", "k", "v"]);
    let port = master.port.to_string();
    let replica = Server::start_with(&["--replicaof", "127.0.0.1", &port]);
    wait_link_up(&replica);
    wait_digests_equal(&master, &replica);
    let mut r = replica.connect();

    // Writes from clients are refused, reads served.
    assert_eq!(
        r.cmd(&["SET", "k", "other"]).unwrap(),
        b"-READONLY You can't write against a read only replica.\r\n"
    );
    assert_eq!(r.must(&["GET", "k"]), b"$1\r\nv\r\n");
    let config = r.must(&["CONFIG", "GET", "replicaof"]);
    assert_eq!(
        config,
        format!(
            "*2\r\n$9\r\nreplicaof\r\n${}\r\n127.0.0.1 {port}\r\n",
            10 + port.len()
        )
        .into_bytes()
    );

    // ROLE: ["slave", host, port, "connected", offset].
    wait_until("equal offsets", || {
        info_field(&mut m, "replication", "master_repl_offset")
            == info_field(&mut r, "replication", "slave_repl_offset")
    });
    let off = info_field(&mut r, "replication", "slave_repl_offset");
    assert_eq!(
        r.must(&["ROLE"]),
        format!("*5\r\n$5\r\nslave\r\n$9\r\n127.0.0.1\r\n:{port}\r\n$9\r\nconnected\r\n:{off}\r\n")
            .into_bytes()
    );
    assert_eq!(
        r.must(&["REPLICAOF", "127.0.0.1", &port]),
        b"+OK Already connected to specified master\r\n"
    );
    assert_eq!(
        r.cmd(&["REPLICAOF", "127.0.0.1", "port"]).unwrap(),
        b"-ERR Invalid master port\r\n"
    );

    // Promotion: a new replid, the master's becomes replid2 valid up to
    // offset+1, and writes work.
    let master_replid = info_field(&mut m, "replication", "master_replid");
    let offset: i64 = info_field(&mut r, "replication", "master_repl_offset")
        .parse()
        .unwrap();
    assert_eq!(r.must(&["REPLICAOF", "NO", "ONE"]), b"+OK\r\n");
    assert_eq!(info_field(&mut r, "replication", "role"), "master");
    assert_eq!(
        info_field(&mut r, "replication", "master_replid2"),
        master_replid
    );
    assert_ne!(
        info_field(&mut r, "replication", "master_replid"),
        master_replid
    );
    assert_eq!(
        info_field(&mut r, "replication", "second_repl_offset"),
        (offset + 1).to_string()
    );
    assert_eq!(r.must(&["SET", "k", "mine"]), b"+OK\r\n");
    assert_eq!(r.must(&["GET", "k"]), b"$4\r\nmine\r\n");
    assert_eq!(
        r.must(&["CONFIG", "GET", "replicaof"]),
        b"*2\r\n$9\r\nreplicaof\r\n$0\r\n\r\n"
    );
    // The master's later writes do not arrive any more.
    m.must(&["SET", "k", "master-again"]);
    assert_eq!(r.must(&["REPLICAOF", "NO", "ONE"]), b"+OK\r\n");
    assert_eq!(r.must(&["GET", "k"]), b"$4\r\nmine\r\n");
}

#[test]
fn info_replication_field_names_match_a_real_replica() {
    let Some(master) = real_master(true) else {
        return common::skipped("redis-server not installed");
    };
    let port = master.port.to_string();
    let Some(real) = RealRedis::start_with(&["--replicaof", "127.0.0.1", &port]) else {
        return;
    };
    let lite = Server::start_with(&["--replicaof", "127.0.0.1", &port]);
    wait_link_up(&real);
    wait_link_up(&lite);
    let (mut a, mut b) = (real.connect(), lite.connect());
    assert_eq!(info_names(&mut b), info_names(&mut a), "linked replica");

    // Link down (the master is gone): master_link_down_since_seconds.
    drop(master);
    wait_until("both links down", || {
        info_field(&mut a, "replication", "master_link_status") == "down"
            && info_field(&mut b, "replication", "master_link_status") == "down"
    });
    assert_eq!(
        info_names(&mut b),
        info_names(&mut a),
        "replica with its link down"
    );
}

#[test]
fn unreachable_master_retries_with_redis_log_lines() {
    // A port nobody listens on.
    let dead = common::free_port().to_string();
    // (replica-serve-stale-data no is set later: it refuses the PING the
    // harness starts with, as Redis does.)
    let lite = Server::start_with(&["--replicaof", "127.0.0.1", &dead]);
    let connecting = format!("Connecting to MASTER 127.0.0.1:{dead}");
    wait_until("two connection attempts in the log", || {
        let log = log_text(&lite);
        log.matches(&connecting).count() >= 2
            && log
                .matches("Error condition on socket for SYNC: Connection refused")
                .count()
                >= 2
    });
    let mut c = lite.connect();
    assert_eq!(
        info_field(&mut c, "replication", "master_link_status"),
        "down"
    );
    c.must(&["CONFIG", "SET", "replica-serve-stale-data", "no"]);
    assert_eq!(
        info_field(&mut c, "replication", "master_sync_in_progress"),
        "0"
    );
    let stale =
        b"-MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.\r\n";
    assert_eq!(c.cmd(&["GET", "k"]).unwrap(), stale);
    // `stale` commands still run.
    assert!(c.must(&["INFO", "server"]).starts_with(b"$"));
    // The same answers as a real replica of the same dead master.
    assert_eq!(c.cmd(&["PING"]).unwrap(), stale);
    if let Some(real) = RealRedis::start_with(&["--replicaof", "127.0.0.1", &dead]) {
        let mut rc = real.connect();
        rc.must(&["CONFIG", "SET", "replica-serve-stale-data", "no"]);
        assert_eq!(rc.cmd(&["PING"]).unwrap(), stale);
        assert_eq!(rc.cmd(&["GET", "k"]).unwrap(), stale);
        assert_eq!(info_names(&mut c), info_names(&mut rc));
    }
}

/// One command from the replica, read as a master would (multibulk).
fn read_command(r: &mut BufReader<std::net::TcpStream>) -> Option<Vec<String>> {
    let mut line = String::new();
    if r.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let n: usize = line.trim().strip_prefix('*')?.parse().ok()?;
    let mut args = Vec::new();
    for _ in 0..n {
        line.clear();
        r.read_line(&mut line).ok()?;
        let len: usize = line.trim().strip_prefix('$')?.parse().ok()?;
        let mut buf = vec![0u8; len + 2];
        r.read_exact(&mut buf).ok()?;
        buf.truncate(len);
        args.push(text(&buf));
    }
    Some(args)
}

/// A fake master: answers the handshake, then sends `payload` after
/// +FULLRESYNC and closes, once per script.
fn fake_master(listener: TcpListener, scripts: Vec<Vec<u8>>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        for payload in scripts {
            let Ok((stream, _)) = listener.accept() else {
                return;
            };
            let mut w = stream.try_clone().unwrap();
            let mut r = BufReader::new(stream);
            while let Some(cmd) = read_command(&mut r) {
                match cmd[0].to_ascii_uppercase().as_str() {
                    "PING" => w.write_all(b"+PONG\r\n").unwrap(),
                    "PSYNC" => {
                        let id = "f".repeat(40);
                        w.write_all(format!("+FULLRESYNC {id} 0\r\n").as_bytes())
                            .unwrap();
                        let _ = w.write_all(&payload);
                        break;
                    }
                    _ => w.write_all(b"+OK\r\n").unwrap(),
                }
            }
            // Closing ends this transfer.
        }
    })
}

#[test]
fn garbage_or_truncated_rdb_keeps_old_data_with_swapdb() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let mut garbage = b"$64\r\n".to_vec();
    garbage.extend_from_slice(&[0x5a; 64]);
    let mut truncated = b"$100000\r\nREDIS0010".to_vec();
    truncated.extend_from_slice(&[0xfa; 20]);
    let mut bad_mark = format!("$EOF:{}\r\n", "m".repeat(40)).into_bytes();
    bad_mark.extend_from_slice(b"REDIS0010\xff garbage");
    bad_mark.extend_from_slice("m".repeat(40).as_bytes());
    let fake = fake_master(listener, vec![garbage, truncated, bad_mark]);

    let lite = Server::start_with(&["--repl-diskless-load", "swapdb"]);
    let mut c = lite.connect();
    c.must(&["SET", "old", "data"]);
    c.must(&["RPUSH", "oldlist", "a", "b"]);
    assert_eq!(c.must(&["REPLICAOF", "127.0.0.1", &port]), b"+OK\r\n");
    fake.join().unwrap();
    wait_until("three failed loads in the log", || {
        let log = log_text(&lite);
        log.matches("Failed trying to load the MASTER synchronization DB from socket")
            .count()
            >= 2
            && log.contains("I/O error trying to sync with MASTER: connection lost")
    });
    let log = log_text(&lite);
    assert!(
        log.contains("MASTER <-> REPLICA sync: Discarding temporary DB in background"),
        "{log}"
    );
    assert!(log.contains("Reconnecting to MASTER 127.0.0.1:"), "{log}");
    // Alive, and the old data is still there.
    assert_eq!(c.must(&["PING"]), b"+PONG\r\n");
    assert_eq!(c.must(&["GET", "old"]), b"$4\r\ndata\r\n");
    assert_eq!(c.must(&["LLEN", "oldlist"]), b":2\r\n");
    assert_eq!(
        info_field(&mut c, "replication", "master_link_status"),
        "down"
    );
    assert_eq!(c.must(&["REPLICAOF", "NO", "ONE"]), b"+OK\r\n");
    assert_eq!(c.must(&["SET", "new", "1"]), b"+OK\r\n");
}

#[test]
fn masterauth_and_masteruser_authenticate_the_link() {
    let Some(master) = real_master(true) else {
        return common::skipped("redis-server not installed");
    };
    let mut m = master.connect();
    // Set after start-up (the harness's first PING has no password).
    m.must(&["CONFIG", "SET", "requirepass", "secret"]);
    m.must(&["ACL", "SETUSER", "repl", "on", ">replpass", "+@all", "~*"]);
    m.must(&["SET", "k", "v"]);
    let port = master.port.to_string();

    // A wrong password: the handshake stops at AUTH and is retried.
    let wrong = Server::start_with(&["--replicaof", "127.0.0.1", &port, "--masterauth", "nope"]);
    wait_until("the AUTH failure in the log", || {
        log_text(&wrong).contains("Unable to AUTH to MASTER: -WRONGPASS")
    });
    let mut w = wrong.connect();
    assert_eq!(
        info_field(&mut w, "replication", "master_link_status"),
        "down"
    );

    // masterauth alone (the default user), then masteruser + masterauth.
    let plain = Server::start_with(&["--replicaof", "127.0.0.1", &port, "--masterauth", "secret"]);
    let user = Server::start_with(&[
        "--replicaof",
        "127.0.0.1",
        &port,
        "--masteruser",
        "repl",
        "--masterauth",
        "replpass",
    ]);
    wait_link_up(&plain);
    wait_link_up(&user);
    for r in [&plain, &user] {
        let mut c = r.connect();
        wait_until("the key on the replica", || {
            c.must(&["GET", "k"]) == b"$1\r\nv\r\n"
        });
    }
}

/// A fake master that answers the handshake, sends `payload` after
/// +FULLRESYNC, then keeps the connection open and says nothing more,
/// until `hold` is dropped... or the replica gives up on it.
fn silent_master(listener: TcpListener, payload: Vec<u8>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let Ok((stream, _)) = listener.accept() else {
            return;
        };
        let mut w = stream.try_clone().unwrap();
        let mut r = BufReader::new(stream);
        while let Some(cmd) = read_command(&mut r) {
            match cmd[0].to_ascii_uppercase().as_str() {
                "PING" => w.write_all(b"+PONG\r\n").unwrap(),
                "PSYNC" => {
                    let id = "e".repeat(40);
                    w.write_all(format!("+FULLRESYNC {id} 0\r\n").as_bytes())
                        .unwrap();
                    w.write_all(&payload).unwrap();
                }
                // REPLCONF ACKs after the sync get no answer; the handshake's do.
                "REPLCONF" if cmd.get(1).is_some_and(|a| a.eq_ignore_ascii_case("ack")) => {}
                _ => w.write_all(b"+OK\r\n").unwrap(),
            }
        }
        // The replica closed the link: done.
    })
}

#[test]
fn repl_timeout_drops_a_silent_master_in_transfer_and_when_linked() {
    // A real RDB file to send, from a real redis-server.
    let Some(real) = RealRedis::start() else {
        return common::skipped("redis-server not installed");
    };
    let mut rc = real.connect();
    rc.must(&["SET", "from-rdb", "1"]);
    rc.must(&["SAVE"]);
    let dir = text(&rc.must(&["CONFIG", "GET", "dir"]));
    let dir = dir.lines().nth(4).unwrap().to_string();
    let rdb = std::fs::read(std::path::Path::new(&dir).join("dump.rdb")).unwrap();

    // 1. Silent in the middle of the transfer.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let mut partial = format!("${}\r\n", rdb.len()).into_bytes();
    partial.extend_from_slice(&rdb[..rdb.len() / 2]);
    let fake = silent_master(listener, partial);
    let lite = Server::start_with(&["--repl-timeout", "1"]);
    let mut c = lite.connect();
    c.must(&["REPLICAOF", "127.0.0.1", &port]);
    wait_until("the transfer time-out", || {
        log_text(&lite).contains("Timeout receiving bulk data from MASTER... If the problem persists try to set the 'repl-timeout' parameter in redis.conf to a larger value.")
    });
    fake.join().unwrap();

    // 2. A whole RDB, then silence: linked, then dropped after repl-timeout.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let mut whole = format!("${}\r\n", rdb.len()).into_bytes();
    whole.extend_from_slice(&rdb);
    let fake = silent_master(listener, whole);
    c.must(&["REPLICAOF", "127.0.0.1", &port]);
    wait_until("the silent master timed out", || {
        log_text(&lite).contains("MASTER timeout: no data nor PING received...")
    });
    fake.join().unwrap();
    let log = log_text(&lite);
    assert!(
        log.contains("MASTER <-> REPLICA sync: Finished with success"),
        "{log}"
    );
    assert!(log.contains("Connection with master lost."), "{log}");
    // The data of the one good transfer stays; the server lives.
    assert_eq!(c.must(&["GET", "from-rdb"]), b"$1\r\n1\r\n");
    assert_eq!(c.must(&["REPLICAOF", "NO", "ONE"]), b"+OK\r\n");
}
