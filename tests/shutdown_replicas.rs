//! SHUTDOWN with a lagging replica waits for it (Redis 7.0's
//! prepareForShutdown / isReadyToShutdown): the caller is blocked, writes
//! are paused, INFO shows `shutdown_in_milliseconds`, SHUTDOWN ABORT
//! cancels it (the blocked caller gets an error, writes go on), and once
//! the replica caught up a SHUTDOWN finishes and logs that it was in sync.
//! The same scenario runs on a real redis-server pair. The replica is made
//! to lag with SIGSTOP; every wait polls with a generous bound.

mod common;

use common::replication::*;
use common::{Process, RealRedis, Server};
use std::time::Duration;

fn kill(p: &Process, sig: i32) {
    // SAFETY: signalling a child process of this test.
    unsafe { libc::kill(p.pid() as i32, sig) };
}

fn scenario(real: bool) -> Option<Vec<String>> {
    let start = |args: &[&str]| -> Option<Process> {
        if real {
            RealRedis::start_with(args)
        } else {
            Some(Server::start_with(args))
        }
    };
    let mut master = start(&[
        "--repl-diskless-sync-delay",
        "0",
        "--shutdown-timeout",
        "30",
    ])?;
    let mport = master.port.to_string();
    let replica = start(&["--replicaof", "127.0.0.1", &mport])?;
    wait_link_up(&replica);
    let mut m = master.connect();
    m.must(&["SET", "before", "1"]);
    wait_until("the replica acknowledged", || {
        let info = info(&mut m, "replication");
        let off = info_field(&mut m, "replication", "master_repl_offset");
        info.contains(&format!("offset={off},"))
    });
    let mut seen = Vec::new();

    // The replica stops reading: the next write leaves it behind.
    kill(&replica, libc::SIGSTOP);
    m.must(&["SET", "lagging", "1"]);
    let mut caller = master.connect();
    caller.send_cmd(&["SHUTDOWN"]).unwrap();
    wait_until("the shutdown waiting", || {
        info(&mut m, "server").contains("shutdown_in_milliseconds:")
    });
    seen.push(info_field(&mut m, "clients", "blocked_clients"));
    // Two clients; the replica is not counted as one.
    seen.push(info_field(&mut m, "clients", "connected_clients"));
    // Writes are paused: a SET does not answer while the shutdown waits.
    let mut writer = master.connect();
    writer.send_cmd(&["SET", "paused", "1"]).unwrap();
    let answered = writer.read_reply_within(Duration::from_millis(400)).is_ok();
    seen.push(format!("write answered: {answered}"));
    // Reads still work.
    seen.push(text(&m.must(&["GET", "before"])));
    seen.push(text(&m.must(&["SHUTDOWN", "ABORT"])));
    seen.push(text(&caller.read_reply().unwrap()));
    seen.push(text(&writer.read_reply().unwrap()));
    seen.push(text(&m.must(&["SHUTDOWN", "ABORT"])));
    assert!(!info(&mut m, "server").contains("shutdown_in_milliseconds:"));

    // Caught up again, a SHUTDOWN goes through and says so.
    kill(&replica, libc::SIGCONT);
    wait_until("the replica caught up", || {
        let info = info(&mut m, "replication");
        let off = info_field(&mut m, "replication", "master_repl_offset");
        info.contains(&format!("offset={off},"))
    });
    let _ = m.send_cmd(&["SHUTDOWN", "NOSAVE"]);
    wait_until("the master exits", || !master.is_alive());
    let log = log_text(&master);
    for line in [
        "Waiting for replicas before shutting down.",
        "Shutdown manually aborted.",
        "1 of 1 replicas are in sync when shutting down.",
    ] {
        assert!(log.contains(line), "{line} not in {log}");
    }
    Some(seen)
}

#[test]
fn shutdown_waits_for_a_lagging_replica_and_can_be_aborted_like_redis() {
    let ours = scenario(false).unwrap();
    assert_eq!(
        ours,
        [
            "1",
            "2",
            "write answered: false",
            "$1\r\n1\r\n",
            "+OK\r\n",
            "-ERR Errors trying to SHUTDOWN. Check logs.\r\n",
            "+OK\r\n",
            "-ERR No shutdown in progress.\r\n"
        ]
    );
    match scenario(true) {
        Some(real) => assert_eq!(ours, real, "redis-lite vs redis-server"),
        None => common::skipped("redis-server not installed: ran on redis-lite only"),
    }
}
