//! redis-lite on both ends of replication: a lite master with a lite
//! replica (full sync diskless and disk, the command stream of every type
//! with EXPIRE/EVAL/MULTI/two dbs checked with DEBUG DIGEST, partial resync
//! after the link is killed from either side, WAIT), a chain lite -> lite
//! -> lite (and a real redis-server in the middle), the middle link killed
//! and resumed with +CONTINUE, REPLICAOF NO ONE on the middle node with the
//! sub-replica continuing through replid2, and a restarted replica.
//!
//! Every wait polls a condition with a generous bound; nothing asserts how
//! long anything took.

mod common;

use common::replication::*;
use common::{Conn, Process, RealRedis, Server};

fn lite_master(diskless: bool) -> Process {
    Server::start_with(&[
        "--repl-diskless-sync",
        if diskless { "yes" } else { "no" },
        "--repl-diskless-sync-delay",
        "0",
    ])
}

fn lite_replica_of(master: &Process, extra: &[&str]) -> Process {
    let port = master.port.to_string();
    let mut args = vec!["--replicaof", "127.0.0.1", &port];
    args.extend_from_slice(extra);
    Server::start_with(&args)
}

fn stat(p: &Process, name: &str) -> u64 {
    let mut c = p.connect();
    info_field(&mut c, "stats", name).parse().unwrap()
}

/// The replica log says it continued with +CONTINUE this many times.
fn partial_resyncs_logged(replica: &Process) -> usize {
    log_text(replica)
        .matches("MASTER <-> REPLICA sync: Master accepted a Partial Resynchronization.")
        .count()
}

/// Wait until the replica has applied everything the master produced.
fn wait_offsets_equal(master: &Process, replica: &Process) {
    let mut m = master.connect();
    let mut r = replica.connect();
    wait_until("equal offsets", || {
        info_field(&mut m, "replication", "master_repl_offset")
            == info_field(&mut r, "replication", "slave_repl_offset")
    });
}

fn pair(diskless: bool) {
    let master = lite_master(diskless);
    let mut m = master.connect();
    // Data before the replica exists goes through the RDB.
    workload(&mut m, "rdb");
    let replica = lite_replica_of(&master, &[]);
    wait_link_up(&replica);
    let rlog = log_text(&replica);
    if diskless {
        assert!(
            rlog.contains("receiving streamed RDB from master with EOF"),
            "{rlog}"
        );
    } else {
        assert!(rlog.contains("bytes from master to"), "{rlog}");
    }
    assert_eq!(stat(&master, "sync_full"), 1);
    wait_digests_equal(&master, &replica);
    let mut r = replica.connect();
    assert_eq!(
        r.cmd(&["SET", "k", "v"]).unwrap(),
        b"-READONLY You can't write against a read only replica.\r\n"
    );

    // The stream.
    workload(&mut m, "stream");
    wait_digests_equal(&master, &replica);

    // Kill the link from the master's side: the replica resumes with +CONTINUE.
    let before = stat(&master, "sync_partial_ok");
    m.must(&["CLIENT", "KILL", "TYPE", "replica"]);
    workload(&mut m, "after-master-kill");
    wait_until("a partial resync (master side kill)", || {
        stat(&master, "sync_partial_ok") == before + 1 && partial_resyncs_logged(&replica) == 1
    });
    wait_link_up(&replica);
    wait_digests_equal(&master, &replica);

    // And from the replica's side.
    r.must(&["CLIENT", "KILL", "TYPE", "master"]);
    workload(&mut m, "after-replica-kill");
    wait_until("a partial resync (replica side kill)", || {
        stat(&master, "sync_partial_ok") == before + 2 && partial_resyncs_logged(&replica) == 2
    });
    wait_link_up(&replica);
    wait_digests_equal(&master, &replica);
    assert_eq!(stat(&master, "sync_full"), 1, "no second full sync");
    wait_offsets_equal(&master, &replica);
    assert_eq!(
        info_field(&mut m, "replication", "master_replid"),
        info_field(&mut r, "replication", "master_replid")
    );

    // Expired keys: the master's DEL took the short-lived key away.
    assert_eq!(r.must(&["EXISTS", "stream:short"]), b":0\r\n");
    assert_eq!(r.must(&["GET", "stream:evalstr"]), b"$8\r\nfrom-lua\r\n");
    assert_eq!(r.must(&["TTL", "stream:ttl"])[0], b':');

    // WAIT: 1 with the replica up, 0 once it is gone.
    m.must(&["SET", "wait-for-me", "1"]);
    assert_eq!(m.must(&["WAIT", "1", "1000"]), b":1\r\n");
    r.shutdown();
    drop(replica);
    wait_until("the replica gone from the master", || {
        info_field(&mut m, "replication", "connected_slaves") == "0"
    });
    m.must(&["SET", "wait-for-nobody", "1"]);
    assert_eq!(m.must(&["WAIT", "1", "1000"]), b":0\r\n");
}

#[test]
fn lite_pair_diskless_full_sync_stream_partial_resync_and_wait() {
    pair(true);
}

#[test]
fn lite_pair_disk_full_sync_stream_partial_resync_and_wait() {
    pair(false);
}

/// master -> middle -> sub. `real_middle` / `real_sub` put a real
/// redis-server there (skipped when it is not installed).
fn chain(real_middle: bool, real_sub: bool) {
    let master = lite_master(true);
    let mut m = master.connect();
    workload(&mut m, "rdb");
    let mport = master.port.to_string();
    let middle_args = [
        "--replicaof",
        "127.0.0.1",
        &mport,
        "--repl-diskless-sync",
        "yes",
        "--repl-diskless-sync-delay",
        "0",
    ];
    let middle = if real_middle {
        match RealRedis::start_with(&middle_args) {
            Some(p) => p,
            None => return common::skipped("redis-server not installed"),
        }
    } else {
        Server::start_with(&middle_args)
    };
    wait_link_up(&middle);
    let sub = if real_sub {
        let port = middle.port.to_string();
        match RealRedis::start_with(&["--replicaof", "127.0.0.1", &port]) {
            Some(p) => p,
            None => return common::skipped("redis-server not installed"),
        }
    } else {
        lite_replica_of(&middle, &[])
    };
    wait_link_up(&sub);
    wait_digests_equal(&master, &middle);
    wait_digests_equal(&middle, &sub);

    workload(&mut m, "stream");
    wait_digests_equal(&master, &middle);
    wait_digests_equal(&master, &sub);
    wait_offsets_equal(&master, &middle);
    wait_offsets_equal(&middle, &sub);
    let mut mid = middle.connect();
    let mut s = sub.connect();
    // One history along the chain.
    let replid = info_field(&mut m, "replication", "master_replid");
    assert_eq!(info_field(&mut mid, "replication", "master_replid"), replid);
    assert_eq!(info_field(&mut s, "replication", "master_replid"), replid);

    // Kill the middle <-> sub link: the sub resumes with +CONTINUE.
    let before = stat(&middle, "sync_partial_ok");
    mid.must(&["CLIENT", "KILL", "TYPE", "replica"]);
    workload(&mut m, "after-sub-kill");
    wait_until("the sub's partial resync", || {
        stat(&middle, "sync_partial_ok") == before + 1 && partial_resyncs_logged(&sub) == 1
    });
    wait_digests_equal(&master, &sub);

    // Kill the master <-> middle link: the middle resumes, the sub keeps
    // its link and sees the writes.
    let before_m = stat(&master, "sync_partial_ok");
    mid.must(&["CLIENT", "KILL", "TYPE", "master"]);
    workload(&mut m, "after-middle-kill");
    wait_until("the middle's partial resync", || {
        stat(&master, "sync_partial_ok") == before_m + 1
    });
    wait_digests_equal(&master, &middle);
    wait_digests_equal(&master, &sub);
    assert_eq!(stat(&master, "sync_full"), 1);
    assert_eq!(stat(&middle, "sync_full"), 1);

    // Promote the middle: the sub reconnects and continues with a partial
    // resync of the old history (replid2), then follows the new one.
    let before = stat(&middle, "sync_partial_ok");
    let resyncs = partial_resyncs_logged(&sub);
    mid.must(&["REPLICAOF", "NO", "ONE"]);
    wait_until("the middle promoted", || {
        info_field(&mut mid, "replication", "role") == "master"
    });
    let new_id = info_field(&mut mid, "replication", "master_replid");
    assert_ne!(new_id, replid);
    assert_eq!(
        info_field(&mut mid, "replication", "master_replid2"),
        replid
    );
    wait_until("the sub's partial resync with the new master", || {
        stat(&middle, "sync_partial_ok") == before + 1
            && partial_resyncs_logged(&sub) == resyncs + 1
    });
    wait_link_up(&sub);
    assert_eq!(stat(&middle, "sync_full"), 1, "the sub needed no full sync");
    wait_until("the sub on the new history", || {
        info_field(&mut s, "replication", "master_replid") == new_id
    });
    workload(&mut mid, "new-master");
    wait_digests_equal(&middle, &sub);
    wait_offsets_equal(&middle, &sub);
    assert_eq!(
        s.must(&["GET", "new-master:evalstr"]),
        b"$8\r\nfrom-lua\r\n"
    );
    // The old master's later writes no longer reach them.
    m.must(&["SET", "old-master-only", "1"]);
    mid.must(&["SET", "fence", "1"]);
    wait_until("the fence on the sub", || {
        s.must(&["EXISTS", "fence"]) == b":1\r\n"
    });
    assert_eq!(s.must(&["EXISTS", "old-master-only"]), b":0\r\n");
}

#[test]
fn lite_chain_partial_resyncs_and_promoted_middle() {
    chain(false, false);
}

#[test]
fn lite_chain_with_real_redis_at_the_end() {
    chain(false, true);
}

#[test]
fn lite_chain_with_real_redis_in_the_middle() {
    chain(true, false);
}

#[test]
fn restarted_replica_gets_a_full_sync() {
    let master = lite_master(true);
    let mut m = master.connect();
    workload(&mut m, "rdb");
    let replica = lite_replica_of(&master, &[]);
    wait_link_up(&replica);
    wait_digests_equal(&master, &replica);
    drop(replica);
    wait_until("the replica gone from the master", || {
        info_field(&mut m, "replication", "connected_slaves") == "0"
    });
    workload(&mut m, "while-down");
    let replica = lite_replica_of(&master, &[]);
    wait_link_up(&replica);
    wait_digests_equal(&master, &replica);
    assert_eq!(stat(&master, "sync_full"), 2);
    workload(&mut m, "after-restart");
    wait_digests_equal(&master, &replica);
    wait_offsets_equal(&master, &replica);
}

/// A replica shut down with a save and started again from its own RDB
/// continues with a partial resync: the RDB carries repl-id/repl-offset
/// (rdbPopulateSaveInfo) and the restarted replica makes a cached master
/// of them (loadDataFromDisk).
#[test]
fn replica_restarted_from_its_rdb_continues_with_a_partial_resync() {
    let master = lite_master(true);
    let mut m = master.connect();
    workload(&mut m, "rdb");
    let dir = common::temp_path("pair-replica-dir");
    std::fs::create_dir_all(&dir).unwrap();
    let dir = dir.to_str().unwrap().to_string();
    let mut replica = lite_replica_of(&master, &["--dir", &dir]);
    wait_link_up(&replica);
    workload(&mut m, "stream");
    wait_digests_equal(&master, &replica);
    wait_offsets_equal(&master, &replica);
    let mut r = replica.connect();
    let _ = r.send_cmd(&["SHUTDOWN", "SAVE"]);
    wait_until("the replica exits", || !replica.is_alive());
    drop(replica);
    let full = stat(&master, "sync_full");
    let partial = stat(&master, "sync_partial_ok");
    workload(&mut m, "while-down");
    let replica = lite_replica_of(&master, &["--dir", &dir]);
    wait_link_up(&replica);
    let log = log_text(&replica);
    assert!(
        log.contains("using my own master parameters to synthesize a cached master"),
        "{log}"
    );
    wait_until("the partial resync", || {
        stat(&master, "sync_partial_ok") == partial + 1
    });
    assert_eq!(stat(&master, "sync_full"), full, "no full sync");
    assert_eq!(partial_resyncs_logged(&replica), 1);
    wait_digests_equal(&master, &replica);
    workload(&mut m, "after-restart");
    wait_digests_equal(&master, &replica);
    wait_offsets_equal(&master, &replica);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Replication traffic is counted apart from client traffic, as Redis 7.0
/// counts it: the master's total_net_repl_output_bytes grows by exactly the
/// stream it sent (the growth of master_repl_offset), the replica's
/// total_net_repl_input_bytes by the same, and the totals include both.
/// The same assertions run on a real redis-server pair.
fn repl_traffic(real: bool) {
    let margs = [
        "--repl-diskless-sync",
        "yes",
        "--repl-diskless-sync-delay",
        "0",
    ];
    let start = |args: &[&str]| -> Option<Process> {
        if real {
            RealRedis::start_with(args)
        } else {
            Some(Server::start_with(args))
        }
    };
    let Some(master) = start(&margs) else {
        return common::skipped("redis-server not installed");
    };
    let mport = master.port.to_string();
    // A long ping period: no PING lands in the stream while we count.
    let rargs = [
        "--replicaof",
        "127.0.0.1",
        &mport,
        "--repl-ping-replica-period",
        "60",
    ];
    let Some(replica) = start(&rargs) else {
        return common::skipped("redis-server not installed");
    };
    let mut m = master.connect();
    m.must(&["CONFIG", "SET", "repl-ping-replica-period", "60"]);
    wait_link_up(&replica);
    wait_offsets_equal(&master, &replica);
    let mut r = replica.connect();
    let n = |c: &mut Conn, f: &str| -> u64 { info_field(c, "stats", f).parse().unwrap() };
    // The full sync already went through the repl counters on both sides.
    assert!(n(&mut r, "total_net_repl_input_bytes") > 0);
    assert!(n(&mut m, "total_net_repl_output_bytes") > 0);

    let off0: u64 = info_field(&mut m, "replication", "master_repl_offset")
        .parse()
        .unwrap();
    let mout0 = n(&mut m, "total_net_repl_output_bytes");
    let rin0 = n(&mut r, "total_net_repl_input_bytes");
    let value = "x".repeat(1000);
    for i in 0..200 {
        m.must(&["SET", &format!("k{i}"), &value]);
    }
    wait_offsets_equal(&master, &replica);
    let off1: u64 = info_field(&mut m, "replication", "master_repl_offset")
        .parse()
        .unwrap();
    let stream = off1 - off0;
    assert!(stream > 200 * 1000, "{stream}");
    assert_eq!(n(&mut m, "total_net_repl_output_bytes") - mout0, stream);
    assert_eq!(n(&mut r, "total_net_repl_input_bytes") - rin0, stream);
    // The totals hold both kinds.
    assert!(n(&mut m, "total_net_output_bytes") >= n(&mut m, "total_net_repl_output_bytes"));
    assert!(n(&mut r, "total_net_input_bytes") >= n(&mut r, "total_net_repl_input_bytes"));
}

#[test]
fn replication_traffic_is_counted_apart_on_lite() {
    repl_traffic(false);
}

#[test]
fn replication_traffic_is_counted_apart_on_redis_server() {
    repl_traffic(true);
}

/// A master restarted from its own RDB keeps the history the file was
/// saved at as its secondary id (loadDataFromDisk, 7.0): its replica
/// continues with +CONTINUE instead of a full sync, and the DEL of a key
/// that expired while the master was down reaches the replica through the
/// backlog (RDBFLAGS_FEED_REPL). The restarted master has a new port, so
/// the replica is pointed at it with REPLICAOF, which keeps its cached
/// master. The same scenario runs on a real redis-server pair.
fn master_restart(real: bool) {
    let start = |args: &[&str]| -> Option<Process> {
        if real {
            RealRedis::start_with(args)
        } else {
            Some(Server::start_with(args))
        }
    };
    let dir = common::temp_path(if real { "restart-real" } else { "restart-lite" });
    std::fs::create_dir_all(&dir).unwrap();
    let dir = dir.to_str().unwrap().to_string();
    let margs = ["--dir", &dir, "--repl-diskless-sync-delay", "0"];
    let Some(mut master) = start(&margs) else {
        return common::skipped("redis-server not installed");
    };
    let mport = master.port.to_string();
    let replica = start(&["--replicaof", "127.0.0.1", &mport]).unwrap();
    wait_link_up(&replica);
    let mut m = master.connect();
    workload(&mut m, "before");
    m.must(&["SET", "dies-on-disk", "v", "PX", "1500"]);
    wait_offsets_equal(&master, &replica);
    let old_id = info_field(&mut m, "replication", "master_replid");
    let old_off: i64 = info_field(&mut m, "replication", "master_repl_offset")
        .parse()
        .unwrap();
    let _ = m.send_cmd(&["SHUTDOWN", "SAVE"]);
    wait_until("the master exits", || !master.is_alive());
    drop(master);
    // The key expires while the file sits on disk.
    std::thread::sleep(std::time::Duration::from_millis(1600));

    let master = start(&margs).unwrap();
    let mut m = master.connect();
    assert_eq!(info_field(&mut m, "replication", "master_replid2"), old_id);
    // Valid up to the offset saved in the file: ours at the SHUTDOWN, or
    // a little more when Redis sent REPLCONF GETACK while it waited for
    // the replica to acknowledge.
    let second: i64 = info_field(&mut m, "replication", "second_repl_offset")
        .parse()
        .unwrap();
    assert!(
        second > old_off && second <= old_off + 1 + 64,
        "{second} vs {old_off}"
    );
    assert_eq!(
        info_field(&mut m, "replication", "repl_backlog_active"),
        "1"
    );
    // The DEL of the expired key is the backlog's only content.
    let off: i64 = info_field(&mut m, "replication", "master_repl_offset")
        .parse()
        .unwrap();
    assert!(off > old_off, "{off} vs {old_off}");
    let mut r = replica.connect();
    r.must(&["REPLICAOF", "127.0.0.1", &master.port.to_string()]);
    wait_link_up(&replica);
    wait_offsets_equal(&master, &replica);
    assert_eq!(stat(&master, "sync_full"), 0, "no full sync");
    assert_eq!(stat(&master, "sync_partial_ok"), 1);
    assert_eq!(r.must(&["DBSIZE"]), m.must(&["DBSIZE"]));
    wait_digests_equal(&master, &replica);
    workload(&mut m, "after");
    wait_digests_equal(&master, &replica);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn master_restarted_from_its_rdb_continues_its_replicas_on_lite() {
    master_restart(false);
}

#[test]
fn master_restarted_from_its_rdb_continues_its_replicas_on_redis_server() {
    master_restart(true);
}
