//! FAILOVER (replication/failover.rs): its argument checks and error texts
//! against a real redis-server; the coordinated failover itself on a lite
//! pair, on a real master with a lite replica and on a lite master with a
//! real replica (the target side's `PSYNC replid offset FAILOVER` must be
//! understood across implementations); the write pause while it waits for
//! sync (CLIENT UNPAUSE does not end it, FAILOVER ABORT does).
//!
//! Every wait polls a condition with a generous bound; nothing asserts how
//! long anything took.

mod common;

use common::replication::*;
use common::{Conn, Process, RealRedis, Server};

/// Both ends may become masters: no diskless delay anywhere.
const NO_DELAY: [&str; 2] = ["--repl-diskless-sync-delay", "0"];

fn start(real: bool, extra: &[&str]) -> Option<Process> {
    let mut args: Vec<&str> = NO_DELAY.to_vec();
    args.extend_from_slice(extra);
    if real {
        RealRedis::start_with(&args)
    } else {
        Some(Server::start_with(&args))
    }
}

fn replica_of(real: bool, master: &Process) -> Option<Process> {
    let port = master.port.to_string();
    start(real, &["--replicaof", "127.0.0.1", &port])
}

fn role(p: &Process) -> String {
    let mut c = p.connect();
    info_field(&mut c, "replication", "role")
}

fn failover_state(c: &mut Conn) -> String {
    info_field(c, "replication", "master_failover_state")
}

fn stat(p: &Process, name: &str) -> u64 {
    let mut c = p.connect();
    info_field(&mut c, "stats", name).parse().unwrap()
}

/// The master lists its replica as online (its first ACK arrived): the
/// replica's own "link up" comes a moment earlier, and FAILOVER needs an
/// online replica.
fn wait_replica_online(master: &Process) {
    let mut m = master.connect();
    wait_until("the replica online on the master", || {
        info(&mut m, "replication").contains("state=online")
    });
}

fn signal(p: &Process, sig: &str) {
    let ok = std::process::Command::new("kill")
        .args([sig, &p.pid().to_string()])
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "kill {sig} {}", p.pid());
}

#[test]
fn failover_arguments_and_errors_match_redis() {
    common::run_on_both(|p| {
        let mut c = p.connect();
        let mut out = Vec::new();
        for args in [
            vec!["FAILOVER"],
            vec!["FAILOVER", "ABORT"],
            vec!["FAILOVER", "TO", "127.0.0.1", "6379"],
            vec!["FAILOVER", "TO", "127.0.0.1", "notaport"],
            vec!["FAILOVER", "TIMEOUT", "0"],
            vec!["FAILOVER", "TIMEOUT", "-5"],
            vec!["FAILOVER", "TIMEOUT", "x"],
            vec!["FAILOVER", "TIMEOUT", "10", "TIMEOUT", "10"],
            vec!["FAILOVER", "FORCE", "FORCE"],
            vec!["FAILOVER", "FORCE", "TIMEOUT", "100"],
            vec!["FAILOVER", "TO", "127.0.0.1"],
            vec!["FAILOVER", "ABORT", "TIMEOUT", "5"],
            vec!["FAILOVER", "bogus"],
            vec![
                "PSYNC",
                "0123456789012345678901234567890123456789",
                "1",
                "FAILOVER",
            ],
        ] {
            out.push((args.join(" "), text(&c.must(&args))));
        }
        out.push(("state".into(), failover_state(&mut c)));
        out.push(("count".into(), text(&c.must(&["COMMAND", "COUNT"]))));
        out.push((
            "info".into(),
            text(&c.must(&["COMMAND", "INFO", "failover"])),
        ));
        out
    });
}

/// The errors that need a replica: an unknown target, FORCE without a
/// timeout, FAILOVER on the replica, a second FAILOVER, REPLICAOF during
/// one, a PSYNC FAILOVER with another replid.
fn errors_with_a_replica(real: bool) -> Option<Vec<(String, String)>> {
    let master = start(real, &[])?;
    let replica = replica_of(real, &master)?;
    wait_link_up(&replica);
    wait_replica_online(&master);
    let mut m = master.connect();
    let mut r = replica.connect();
    let rport = replica.port.to_string();
    let mut out = Vec::new();
    let run = |out: &mut Vec<(String, String)>, c: &mut Conn, args: &[&str]| {
        let shown = args.join(" ").replace(&rport, "RPORT");
        out.push((shown, text(&c.must(args))));
    };
    run(&mut out, &mut m, &["FAILOVER", "TO", "127.0.0.1", "1"]);
    run(&mut out, &mut m, &["FAILOVER", "TO", "10.0.0.1", &rport]);
    run(
        &mut out,
        &mut m,
        &["FAILOVER", "TO", "127.0.0.1", &rport, "FORCE"],
    );
    run(&mut out, &mut r, &["FAILOVER"]);
    run(&mut out, &mut r, &["FAILOVER", "TO", "127.0.0.1", &rport]);
    run(
        &mut out,
        &mut r,
        &[
            "PSYNC",
            "0123456789012345678901234567890123456789",
            "1",
            "FAILOVER",
        ],
    );
    // Stop the replica so the failover waits; then the in-progress errors.
    signal(&replica, "-STOP");
    run(
        &mut out,
        &mut m,
        &["FAILOVER", "TO", "127.0.0.1", &rport, "TIMEOUT", "60000"],
    );
    out.push(("state".into(), failover_state(&mut m)));
    run(&mut out, &mut m, &["FAILOVER"]);
    run(&mut out, &mut m, &["REPLICAOF", "127.0.0.1", "1"]);
    run(&mut out, &mut m, &["REPLICAOF", "NO", "ONE"]);
    run(&mut out, &mut m, &["FAILOVER", "ABORT"]);
    out.push(("state".into(), failover_state(&mut m)));
    run(&mut out, &mut m, &["FAILOVER", "ABORT"]);
    signal(&replica, "-CONT");
    Some(out)
}

#[test]
fn failover_errors_with_a_replica_match_redis() {
    let ours = errors_with_a_replica(false).unwrap();
    if let Some(real) = errors_with_a_replica(true) {
        assert_eq!(ours, real, "redis-lite vs redis-server");
    }
}

/// While FAILOVER waits for the replica, writes are paused (the client is
/// blocked, CLIENT UNPAUSE does not release it) and reads are served;
/// FAILOVER ABORT releases the write.
fn pause_during_failover(real: bool) -> Option<Vec<String>> {
    let master = start(real, &[])?;
    let replica = replica_of(real, &master)?;
    wait_link_up(&replica);
    wait_replica_online(&master);
    let mut m = master.connect();
    m.must(&["SET", "k", "before"]);
    signal(&replica, "-STOP");
    let rport = replica.port.to_string();
    let mut out = vec![text(&m.must(&[
        "FAILOVER",
        "TO",
        "127.0.0.1",
        &rport,
        "TIMEOUT",
        "60000",
    ]))];
    let mut w = master.connect();
    w.send_cmd(&["SET", "k", "during"]).unwrap();
    wait_until("the write postponed", || {
        info_field(&mut m, "clients", "blocked_clients") == "1"
    });
    out.push(text(&m.must(&["GET", "k"])));
    out.push(text(&m.must(&["CLIENT", "UNPAUSE"])));
    out.push(info_field(&mut m, "clients", "blocked_clients"));
    out.push(failover_state(&mut m));
    out.push(text(&m.must(&["FAILOVER", "ABORT"])));
    out.push(text(&w.read_reply().unwrap()));
    out.push(text(&m.must(&["GET", "k"])));
    out.push(failover_state(&mut m));
    out.push(role(&master));
    signal(&replica, "-CONT");
    Some(out)
}

#[test]
fn writes_wait_during_failover_and_abort_releases_them() {
    let ours = pause_during_failover(false).unwrap();
    assert_eq!(
        ours,
        [
            "+OK\r\n",
            "$6\r\nbefore\r\n",
            "+OK\r\n",
            "1",
            "waiting-for-sync",
            "+OK\r\n",
            "+OK\r\n",
            "$6\r\nduring\r\n",
            "no-failover",
            "master",
        ]
    );
    if let Some(real) = pause_during_failover(true) {
        assert_eq!(ours, real, "redis-lite vs redis-server");
    }
}

/// The happy path: master (of kind `real_master`) fails over to its
/// replica; the roles swap with a partial resync only (no data copied), the
/// datasets stay equal, and the write that waited gets READONLY.
fn failover_swaps_roles(real_master: bool, real_replica: bool) {
    let Some(master) = start(real_master, &[]) else {
        return common::skipped("redis-server not installed");
    };
    let Some(replica) = replica_of(real_replica, &master) else {
        return common::skipped("redis-server not installed");
    };
    wait_link_up(&replica);
    wait_replica_online(&master);
    let mut m = master.connect();
    workload(&mut m, "before");
    wait_digests_equal(&master, &replica);
    let full_before = stat(&replica, "sync_full");
    let partial_before = stat(&replica, "sync_partial_ok");

    let rport = replica.port.to_string();
    assert_eq!(m.must(&["FAILOVER", "TO", "127.0.0.1", &rport]), b"+OK\r\n");
    wait_until("the failover to end", || {
        failover_state(&mut m) == "no-failover" && role(&master) == "slave"
    });
    assert_eq!(role(&replica), "master");
    wait_link_up(&master);
    // The old master continued the stream: one partial resync, no full one.
    assert_eq!(stat(&replica, "sync_partial_ok"), partial_before + 1);
    assert_eq!(stat(&replica, "sync_full"), full_before);
    assert_eq!(
        info_field(&mut m, "replication", "master_port"),
        replica.port.to_string()
    );
    assert_eq!(
        text(&m.must(&["SET", "k", "v"])),
        "-READONLY You can't write against a read only replica.\r\n"
    );
    // The new master's writes reach the old one.
    let mut r = replica.connect();
    workload(&mut r, "after");
    wait_digests_equal(&replica, &master);
    let log = log_text(&master);
    assert!(log.contains("is synced, failing over."), "{log}");
}

#[test]
fn failover_lite_master_to_lite_replica() {
    failover_swaps_roles(false, false);
}

#[test]
fn failover_real_master_to_lite_replica() {
    failover_swaps_roles(true, false);
}

#[test]
fn failover_lite_master_to_real_replica() {
    failover_swaps_roles(false, true);
}

/// FORCE with a TIMEOUT: the target is stopped, so it never acknowledges;
/// at the timeout the master fails over anyway (failover-in-progress until
/// the target answers its PSYNC FAILOVER).
#[test]
fn failover_force_after_timeout() {
    let master = start(false, &[]).unwrap();
    let replica = replica_of(false, &master).unwrap();
    wait_link_up(&replica);
    wait_replica_online(&master);
    let mut m = master.connect();
    m.must(&["SET", "k", "1"]);
    wait_digests_equal(&master, &replica);
    signal(&replica, "-STOP");
    m.must(&["SET", "k", "2"]);
    let rport = replica.port.to_string();
    assert_eq!(
        m.must(&[
            "FAILOVER",
            "TO",
            "127.0.0.1",
            &rport,
            "TIMEOUT",
            "100",
            "FORCE"
        ]),
        b"+OK\r\n"
    );
    wait_until("failover-in-progress", || {
        failover_state(&mut m) == "failover-in-progress"
    });
    assert_eq!(role(&master), "slave");
    signal(&replica, "-CONT");
    wait_until("the failover to end", || {
        failover_state(&mut m) == "no-failover"
    });
    assert_eq!(role(&replica), "master");
    wait_digests_equal(&replica, &master);
    let log = log_text(&master);
    assert_eq!(log.matches("time out exceeded, failing over.").count(), 1);
}

/// A target that refuses PSYNC (ACL -psync): the failover is aborted and
/// the master is a master again, its replica back with a partial resync.
#[test]
fn failover_aborts_when_the_target_rejects_psync() {
    let master = start(false, &[]).unwrap();
    let replica = replica_of(false, &master).unwrap();
    wait_link_up(&replica);
    wait_replica_online(&master);
    let mut r = replica.connect();
    r.must(&["ACL", "SETUSER", "default", "-psync"]);
    let mut m = master.connect();
    let rport = replica.port.to_string();
    assert_eq!(m.must(&["FAILOVER", "TO", "127.0.0.1", &rport]), b"+OK\r\n");
    wait_until("the failover to end", || {
        failover_state(&mut m) == "no-failover" && role(&master) == "master"
    });
    r.must(&["ACL", "SETUSER", "default", "+psync"]);
    wait_link_up(&replica);
    wait_replica_online(&master);
    m.must(&["SET", "after", "abort"]);
    wait_digests_equal(&master, &replica);
    let log = log_text(&master);
    assert_eq!(
        log.matches("Failover target rejected psync request")
            .count(),
        1,
        "{log}"
    );
}
