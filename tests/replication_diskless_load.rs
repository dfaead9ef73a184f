//! A replica's diskless load (`repl-diskless-load swapdb` / `on-empty-db`)
//! against a real redis-server 7.0.15 master, and against fake masters
//! for the failures: the RDB is parsed straight off the master socket
//! (`$EOF:<mark>` and `$<len>` transfers, no temp file), swapdb loads
//! into temporary databases and functions that replace the old ones only
//! once the whole payload loaded, `async_loading` serves the old data
//! while a sync of the same history loads, a broken transfer leaves the
//! old data in place, and a corrupt payload stops the replica as it stops
//! a real one.
//!
//! Every wait polls a condition with a generous bound; nothing asserts how
//! long anything took.

mod common;

use std::net::TcpListener;

use common::replication::*;
use common::{Conn, Process, RealRedis, Server};

fn real_master(diskless: bool) -> Option<Process> {
    RealRedis::start_with(&[
        "--repl-diskless-sync",
        if diskless { "yes" } else { "no" },
        "--repl-diskless-sync-delay",
        "0",
    ])
}

fn fcall_test(c: &mut Conn) -> Vec<u8> {
    c.must(&["FCALL", "test", "0"])
}

fn load_function(c: &mut Conn, reply: &str) {
    // no-writes: a read-only replica runs it too.
    let code = format!(
        "#!lua name=test\nredis.register_function{{function_name='test', callback=function() return '{reply}' end, flags={{'no-writes'}}}}"
    );
    c.must(&["FUNCTION", "LOAD", &code]);
}

/// No `temp-*.rdb` left or made in the replica's directory.
fn temp_files(c: &mut Conn) -> Vec<String> {
    let dir = text(&c.must(&["CONFIG", "GET", "dir"]));
    let dir = dir.lines().nth(4).unwrap().to_string();
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("temp-") && n.ends_with(".rdb"))
        .collect()
}

#[test]
fn swapdb_parses_an_eof_marked_rdb_off_the_socket_and_swaps_data_and_functions() {
    let Some(master) = real_master(true) else {
        return common::skipped("redis-server not installed");
    };
    let mut m = master.connect();
    workload(&mut m, "rdb");
    load_function(&mut m, "from-master");
    let replica = Server::start_with(&["--repl-diskless-load", "swapdb"]);
    let mut r = replica.connect();
    r.must(&["SET", "old", "data"]);
    load_function(&mut r, "old");
    r.must(&["REPLICAOF", "127.0.0.1", &master.port.to_string()]);
    wait_link_up(&replica);
    wait_digests_equal(&master, &replica);
    assert_eq!(r.must(&["GET", "old"]), b"$-1\r\n");
    assert_eq!(fcall_test(&mut r), b"$11\r\nfrom-master\r\n");
    let log = log_text(&replica);
    for line in [
        "MASTER <-> REPLICA sync: receiving streamed RDB from master with EOF to parser",
        "MASTER <-> REPLICA sync: Loading DB in memory",
        "MASTER <-> REPLICA sync: Swapping active DB with loaded DB",
        "MASTER <-> REPLICA sync: Discarding old DB in background",
        "MASTER <-> REPLICA sync: Finished with success",
    ] {
        assert!(log.contains(line), "no '{line}' in\n{log}");
    }
    assert!(!log.contains("Flushing old data"), "{log}");
    assert!(temp_files(&mut r).is_empty());
    // The stream goes on after the swap.
    workload(&mut m, "stream");
    wait_digests_equal(&master, &replica);
}

#[test]
fn swapdb_reads_a_len_transfer_without_taking_the_stream_after_it() {
    let Some(master) = real_master(false) else {
        return common::skipped("redis-server not installed");
    };
    let mut m = master.connect();
    workload(&mut m, "rdb");
    // Slow the BGSAVE so that writes land in the stream that follows the
    // payload on the same socket.
    m.must(&["DEBUG", "POPULATE", "2000", "pop", "10"]);
    m.must(&["CONFIG", "SET", "rdb-key-save-delay", "200"]);
    let replica = Server::start_with(&["--repl-diskless-load", "swapdb"]);
    let mut r = replica.connect();
    r.must(&["REPLICAOF", "127.0.0.1", &master.port.to_string()]);
    wait_until("the BGSAVE for the replica", || {
        info_field(&mut m, "persistence", "rdb_bgsave_in_progress") == "1"
    });
    for i in 0..200 {
        m.must(&["SET", &format!("during:{i}"), "x"]);
    }
    m.must(&["CONFIG", "SET", "rdb-key-save-delay", "0"]);
    wait_link_up(&replica);
    let log = log_text(&replica);
    assert!(log.contains("bytes from master to parser"), "{log}");
    wait_digests_equal(&master, &replica);
    assert_eq!(r.must(&["GET", "during:199"]), b"$1\r\nx\r\n");
    assert!(temp_files(&mut r).is_empty());
}

#[test]
fn on_empty_db_parses_the_socket_only_when_the_replica_is_empty() {
    let Some(master) = real_master(true) else {
        return common::skipped("redis-server not installed");
    };
    let mut m = master.connect();
    workload(&mut m, "rdb");
    let port = master.port.to_string();
    // Empty: to the parser, flushing first (nothing to keep).
    let empty = Server::start_with(&["--repl-diskless-load", "on-empty-db"]);
    let mut e = empty.connect();
    e.must(&["REPLICAOF", "127.0.0.1", &port]);
    wait_link_up(&empty);
    let log = log_text(&empty);
    assert!(log.contains("with EOF to parser"), "{log}");
    assert!(
        log.contains("MASTER <-> REPLICA sync: Flushing old data"),
        "{log}"
    );
    wait_digests_equal(&master, &empty);
    // With data: through the disk.
    let full = Server::start_with(&["--repl-diskless-load", "on-empty-db"]);
    let mut f = full.connect();
    f.must(&["SET", "mine", "1"]);
    f.must(&["REPLICAOF", "127.0.0.1", &port]);
    wait_link_up(&full);
    let log = log_text(&full);
    assert!(log.contains("with EOF to disk"), "{log}");
    wait_digests_equal(&master, &full);
}

/// The master replica-side INFO fields Redis shows while loading.
fn loading_flags(c: &mut Conn) -> (String, String) {
    (
        info_field(c, "persistence", "loading"),
        info_field(c, "persistence", "async_loading"),
    )
}

/// A real master with `keys` big keys whose diskless RDB takes 10ms a
/// key to produce, and a swapdb replica of it with data of its own.
fn slow_pair(keys: &str) -> Option<(Process, Process)> {
    let master = real_master(true)?;
    let mut m = master.connect();
    m.must(&["CONFIG", "SET", "rdbcompression", "no"]);
    m.must(&["DEBUG", "POPULATE", keys, "master", "1000"]);
    let replica = Server::start_with(&[
        "--repl-diskless-load",
        "swapdb",
        "--replica-read-only",
        "no",
        "--loading-process-events-interval-bytes",
        "1024",
    ]);
    Some((master, replica))
}

#[test]
fn a_sync_of_another_history_loads_with_loading_and_keeps_old_data_on_abort() {
    let Some((master, replica)) = slow_pair("1000") else {
        return common::skipped("redis-server not installed");
    };
    let mut m = master.connect();
    let mut r = replica.connect();
    r.must(&["DEBUG", "POPULATE", "200", "slave", "10"]);
    r.must(&["SET", "mykey", "myvalue"]);
    m.must(&["CONFIG", "SET", "rdb-key-save-delay", "10000"]);
    r.must(&["REPLICAOF", "127.0.0.1", &master.port.to_string()]);
    wait_until("loading:1", || {
        loading_flags(&mut r) == ("1".into(), "0".into())
    });
    assert!(r.cmd(&["GET", "mykey"]).unwrap().starts_with(b"-LOADING"));
    // Break the transfer: the old data comes back.
    m.must(&["CONFIG", "SET", "repl-diskless-sync-delay", "5"]);
    m.must(&["CLIENT", "KILL", "TYPE", "replica"]);
    wait_until("loading:0", || loading_flags(&mut r).0 == "0");
    assert_eq!(r.must(&["GET", "mykey"]), b"$7\r\nmyvalue\r\n");
    assert_eq!(r.must(&["DBSIZE"]), b":201\r\n");
    let log = log_text(&replica);
    assert!(
        log.contains("MASTER <-> REPLICA sync: Discarding temporary DB in background"),
        "{log}"
    );
    assert!(
        log.contains("Failure loading rdb format from socket, assuming connection error, resuming operation."),
        "{log}"
    );
    m.must(&["CONFIG", "SET", "rdb-key-save-delay", "0"]);
}

#[test]
fn a_sync_of_the_same_history_async_loads_and_serves_the_old_data() {
    let Some((master, replica)) = slow_pair("2000") else {
        return common::skipped("redis-server not installed");
    };
    let mut m = master.connect();
    let mut r = replica.connect();
    r.must(&["REPLICAOF", "127.0.0.1", &master.port.to_string()]);
    wait_link_up(&replica);
    r.must(&["SET", "mykey", "myvalue"]);
    load_function(&mut r, "hello1");
    // Replicated, it fails on the replica (the library exists there).
    load_function(&mut m, "hello2");
    // Force a full sync of the same replid: drop the replica and push the
    // backlog past its offset.
    m.must(&["CONFIG", "SET", "rdb-key-save-delay", "10000"]);
    m.must(&["MULTI"]);
    m.must(&["CLIENT", "KILL", "TYPE", "replica"]);
    m.must(&["CONFIG", "SET", "repl-backlog-size", "16384"]);
    let big = "A".repeat(16384);
    for i in 0..10 {
        m.must(&["SET", &format!("{i} string"), &big]);
    }
    m.must(&["EXEC"]);
    wait_until("async_loading:1", || {
        loading_flags(&mut r) == ("0".into(), "1".into())
    });
    // The old data and functions serve reads; no-async-loading commands wait.
    assert_eq!(r.must(&["GET", "mykey"]), b"$7\r\nmyvalue\r\n");
    assert_eq!(fcall_test(&mut r), b"$6\r\nhello1\r\n");
    assert!(r
        .cmd(&["REPLICAOF", "NO", "ONE"])
        .unwrap()
        .starts_with(b"-LOADING"));
    assert!(r
        .cmd(&["CONFIG", "SET", "appendonly", "no"])
        .unwrap()
        .starts_with(b"-LOADING"));
    assert_eq!(info_field(&mut r, "persistence", "async_loading"), "1");
    // Let it finish: the new data and functions replace the old.
    m.must(&["CONFIG", "SET", "rdb-key-save-delay", "0"]);
    wait_until("async_loading:0 and the link up", || {
        loading_flags(&mut r).1 == "0"
            && info_field(&mut r, "replication", "master_link_status") == "up"
    });
    wait_digests_equal(&master, &replica);
    assert_eq!(r.must(&["GET", "mykey"]), b"$-1\r\n");
    assert_eq!(fcall_test(&mut r), b"$6\r\nhello2\r\n");
}

/// A real RDB (from a real redis-server) holding a few keys.
fn real_rdb() -> Option<Vec<u8>> {
    let real = RealRedis::start()?;
    let mut c = real.connect();
    for i in 0..50 {
        c.must(&["RPUSH", &format!("list:{i}"), "a", "b", "c"]);
    }
    c.must(&["SAVE"]);
    let dir = text(&c.must(&["CONFIG", "GET", "dir"]));
    let dir = dir.lines().nth(4).unwrap().to_string();
    std::fs::read(std::path::Path::new(&dir).join("dump.rdb")).ok()
}

/// The replica's fate (alive?) and log after `payload` from a fake master.
fn replica_after(start: impl Fn() -> Option<Process>, payload: &[u8]) -> Option<(bool, String)> {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let fake = fake_master(listener, vec![payload.to_vec()]);
    let mut p = start()?;
    let mut c = p.connect();
    c.must(&["SET", "old", "data"]);
    c.must(&["REPLICAOF", "127.0.0.1", &port]);
    fake.join().unwrap();
    wait_until("the load to end", || {
        let log = log_text(&p);
        !p.is_alive() || log.contains("Reconnecting to MASTER")
    });
    let alive = p.is_alive();
    if alive {
        let mut c = p.connect();
        assert_eq!(c.must(&["GET", "old"]), b"$4\r\ndata\r\n");
    }
    Some((alive, log_text(&p)))
}

#[test]
fn a_corrupt_payload_stops_the_replica_and_a_broken_mark_does_not_as_on_redis() {
    let Some(rdb) = real_rdb() else {
        return common::skipped("redis-server not installed");
    };
    let mark = "m".repeat(40);
    // A corrupt payload: the stored CRC64 (the last 8 bytes) is wrong.
    let mut corrupt_body = rdb.clone();
    let end = corrupt_body.len();
    for b in &mut corrupt_body[end - 8..] {
        *b ^= 0x5a;
    }
    let mut corrupt = format!("$EOF:{mark}\r\n").into_bytes();
    corrupt.extend_from_slice(&corrupt_body);
    corrupt.extend_from_slice(mark.as_bytes());
    // A whole RDB followed by the wrong mark.
    let mut bad_mark = format!("$EOF:{mark}\r\n").into_bytes();
    bad_mark.extend_from_slice(&rdb);
    bad_mark.extend_from_slice("x".repeat(40).as_bytes());
    // A `$<len>` transfer cut short by the master closing.
    let mut short = format!("${}\r\n", rdb.len()).into_bytes();
    short.extend_from_slice(&rdb[..rdb.len() - 30]);

    let lite = || Some(Server::start_with(&["--repl-diskless-load", "swapdb"]));
    let real = || RealRedis::start_with(&["--repl-diskless-load", "swapdb"]);
    for (name, payload, survives, line) in [
        (
            "corrupt",
            &corrupt,
            false,
            "Terminating server after rdb file reading failure.",
        ),
        (
            "bad mark",
            &bad_mark,
            true,
            "Replication stream EOF marker is broken",
        ),
        (
            "short",
            &short,
            true,
            "Failure loading rdb format from socket, assuming connection error, resuming operation.",
        ),
    ] {
        let (alive, log) = replica_after(lite, payload).unwrap();
        assert_eq!(alive, survives, "{name}: redis-lite\n{log}");
        assert!(log.contains(line), "{name}: no '{line}' in\n{log}");
        if survives {
            assert!(
                log.contains("MASTER <-> REPLICA sync: Discarding temporary DB in background"),
                "{name}\n{log}"
            );
        }
        let Some((alive, log)) = replica_after(real, payload) else {
            return common::skipped("redis-server not installed");
        };
        assert_eq!(alive, survives, "{name}: redis-server\n{log}");
        assert!(log.contains(line), "{name}: redis-server has no '{line}'");
    }
}
