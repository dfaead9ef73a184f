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

use std::net::TcpListener;

use common::replication::*;
use common::{Conn, Process, RealRedis, Server};

/// The field names of INFO replication, in order.
fn info_names(c: &mut Conn) -> Vec<String> {
    info(c, "replication")
        .lines()
        .filter_map(|l| l.split_once(':').map(|(k, _)| k.to_string()))
        .collect()
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

#[test]
fn garbage_or_truncated_rdb_keeps_old_data_with_swapdb() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let mut garbage = b"$64\r\n".to_vec();
    garbage.extend_from_slice(&[0x5a; 64]);
    // An AUX field cut off by the master closing: a short read.
    let mut truncated = b"$100000\r\nREDIS0010".to_vec();
    truncated.extend_from_slice(b"\xfa\x09redis-ver\x067.0");
    let mut bad_mark = format!("$EOF:{}\r\n", "m".repeat(40)).into_bytes();
    // A whole (empty, checksum-less) RDB, then the wrong mark.
    bad_mark.extend_from_slice(b"REDIS0010\xff\0\0\0\0\0\0\0\0");
    bad_mark.extend_from_slice("x".repeat(40).as_bytes());
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
            && log.contains("Replication stream EOF marker is broken")
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

/// A paused replica parks its master's writes (CLIENT PAUSE WRITE): the
/// key does not appear and the offset stays until the pause ends, on
/// redis-lite as on a real redis-server replica.
#[test]
fn a_paused_replica_parks_the_master_stream_until_unpause() {
    let Some(master) = real_master(true) else {
        return common::skipped("redis-server not installed");
    };
    let port = master.port.to_string();
    let run = |replica: &Process| {
        let mut m = master.connect();
        // The master serves both runs: each starts from nothing.
        m.must(&["FLUSHALL"]);
        let mut r = replica.connect();
        r.must(&["REPLICAOF", "127.0.0.1", &port]);
        wait_link_up(replica);
        m.must(&["SET", "before", "1"]);
        wait_until("the first write on the replica", || {
            r.must(&["GET", "before"]) == b"$1\r\n1\r\n"
        });
        let offset = info_field(&mut r, "replication", "slave_repl_offset");
        r.must(&["CLIENT", "PAUSE", "100000", "WRITE"]);
        m.must(&["SET", "paused", "1"]);
        // The stream arrives (read offset grows) but is not applied.
        wait_until("the write read by the replica", || {
            info_field(&mut r, "replication", "slave_read_repl_offset") != offset
        });
        let during = (
            r.must(&["GET", "paused"]),
            info_field(&mut r, "replication", "slave_repl_offset") == offset,
        );
        r.must(&["CLIENT", "UNPAUSE"]);
        wait_until("the parked write applied", || {
            r.must(&["GET", "paused"]) == b"$1\r\n1\r\n"
        });
        r.must(&["REPLICAOF", "NO", "ONE"]);
        during
    };
    let lite = Server::start();
    let ours = run(&lite);
    assert_eq!(ours, (b"$-1\r\n".to_vec(), true));
    if let Some(real) = RealRedis::start() {
        assert_eq!(run(&real), ours, "redis-lite vs redis-server");
    }
}

/// REPLICAOF turns away the clients blocked while we were a master:
/// Redis's -UNBLOCKED error, then the connection closes.
#[test]
fn replicaof_unblocks_blocked_clients_with_redis_error() {
    let Some(master) = real_master(true) else {
        return common::skipped("redis-server not installed");
    };
    let port = master.port.to_string();
    let run = |p: &Process| {
        let mut blocked = p.connect();
        blocked.send_cmd(&["BLPOP", "nolist", "0"]).unwrap();
        let mut c = p.connect();
        wait_until("the client blocked", || {
            info_field(&mut c, "clients", "blocked_clients") == "1"
        });
        c.must(&["REPLICAOF", "127.0.0.1", &port]);
        let reply = text(&blocked.read_reply().unwrap());
        let closed = blocked.closed_within(std::time::Duration::from_secs(10));
        let stats = info(&mut c, "errorstats");
        c.must(&["REPLICAOF", "NO", "ONE"]);
        (
            reply,
            closed,
            stats.contains("errorstat_UNBLOCKED:count=1"),
            info_field(&mut c, "clients", "blocked_clients"),
        )
    };
    let ours = common::run_on_both(run);
    assert_eq!(
        ours.0,
        "-UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)\r\n"
    );
    assert!(ours.1 && ours.2);
}
