//! Transactions across connections: a WATCHed key touched by another client,
//! by active expiry, by FLUSHALL or SWAPDB; EXEC's atomicity; a client that
//! disconnects in the middle of MULTI. Each scenario runs on redis-lite and,
//! when installed, on a real redis-server 7.0.15, and the replies must be
//! byte-identical (single-connection cases are in tests/cases/multi.txt).

mod common;

use common::{Conn, Process, RealRedis, Server};
use std::time::Duration;

/// One step of a scenario: which connection sends what.
type Step<'a> = (usize, &'a [&'a str]);

/// Run `steps` over `conns` connections on one server; return every reply.
fn run(port: u16, conns: usize, steps: &[Step]) -> Vec<String> {
    let mut cs: Vec<Conn> = (0..conns).map(|_| Conn::connect(port).unwrap()).collect();
    let mut out = Vec::new();
    for (who, args) in steps {
        if args[0] == "SLEEP" {
            let ms: u64 = args[1].parse().unwrap();
            std::thread::sleep(Duration::from_millis(ms));
            continue;
        }
        let reply = cs[*who].cmd(args).unwrap();
        out.push(format!(
            "{who}> {} -> {}",
            args.join(" "),
            String::from_utf8_lossy(&reply)
        ));
    }
    out
}

/// Run the scenario on redis-lite, assert its replies are `expected` where
/// given, and compare with a real redis-server when one is installed.
fn scenario(conns: usize, steps: &[Step]) -> Vec<String> {
    let lite = Server::start();
    let ours = run(lite.port, conns, steps);
    if let Some(real) = RealRedis::start() {
        flush(&real);
        let theirs = run(real.port, conns, steps);
        assert_eq!(ours, theirs, "redis-lite vs redis-server");
    }
    ours
}

fn flush(p: &Process) {
    p.connect().must(&["FLUSHALL"]);
}

fn last(replies: &[String]) -> &str {
    replies.last().unwrap().split(" -> ").nth(1).unwrap()
}

#[test]
fn watched_key_touched_by_another_client_fails_exec() {
    let r = scenario(
        2,
        &[
            (0, &["SET", "k", "1"]),
            (0, &["WATCH", "k"]),
            (1, &["SET", "k", "2"]),
            (0, &["MULTI"]),
            (0, &["SET", "k", "3"]),
            (0, &["EXEC"]),
            (0, &["GET", "k"]),
        ],
    );
    assert_eq!(r[5], "0> EXEC -> *-1\r\n");
    assert_eq!(last(&r), "$1\r\n2\r\n");
}

#[test]
fn untouched_watch_lets_exec_run() {
    let r = scenario(
        2,
        &[
            (0, &["WATCH", "k", "other"]),
            (1, &["SET", "unrelated", "x"]),
            (1, &["GET", "k"]),
            (0, &["MULTI"]),
            (0, &["INCR", "k"]),
            (0, &["EXEC"]),
        ],
    );
    assert_eq!(last(&r), "*1\r\n:1\r\n");
}

#[test]
fn touches_from_every_kind_of_write_fail_exec() {
    // Each (setup, touch) pair: client 0 watches "k", client 1 touches it.
    let touches: &[&[&str]] = &[
        &["DEL", "k"],
        &["RENAME", "src", "k"],
        &["SETRANGE", "k", "0", "x"],
        &["EXPIRE", "k", "100"],
        &["FLUSHALL"],
        &["FLUSHDB"],
        &["SWAPDB", "0", "1"],
        &["MOVE", "k", "5"],
        &["COPY", "src", "k", "REPLACE"],
        &["APPEND", "k", "x"],
    ];
    for touch in touches {
        let steps: Vec<Step> = vec![
            (0, &["SET", "k", "v"]),
            (0, &["SET", "src", "s"]),
            (0, &["WATCH", "k"]),
            (1, touch),
            (0, &["MULTI"]),
            (0, &["PING"]),
            (0, &["EXEC"]),
        ];
        let r = scenario(2, &steps);
        assert_eq!(last(&r), "*-1\r\n", "{touch:?} must fail the EXEC");
    }
}

#[test]
fn watched_key_expired_by_the_active_cycle_fails_exec() {
    let r = scenario(
        1,
        &[
            (0, &["SET", "k", "v", "PX", "50"]),
            (0, &["WATCH", "k"]),
            (0, &["SLEEP", "400"]),
            (0, &["EXISTS", "k"]),
            (0, &["MULTI"]),
            (0, &["PING"]),
            (0, &["EXEC"]),
        ],
    );
    assert_eq!(last(&r), "*-1\r\n");
}

#[test]
fn key_expired_before_watch_then_flushed_is_no_change() {
    let r = scenario(
        2,
        &[
            (0, &["DEBUG", "SET-ACTIVE-EXPIRE", "0"]),
            (0, &["SET", "k", "v", "PX", "30"]),
            (0, &["SLEEP", "80"]),
            (0, &["WATCH", "k"]),
            (1, &["FLUSHALL"]),
            (0, &["MULTI"]),
            (0, &["PING"]),
            (0, &["EXEC"]),
            (0, &["DEBUG", "SET-ACTIVE-EXPIRE", "1"]),
        ],
    );
    assert_eq!(r[6], "0> EXEC -> *1\r\n+PONG\r\n");
}

#[test]
fn exec_runs_with_no_other_command_in_between() {
    // Client 1's INCRs are pipelined while client 0's EXEC holds 1000
    // INCRs: the EXEC reply must count 1..1000 without a gap, because
    // nothing runs in the middle of a transaction.
    let lite = Server::start();
    let mut a = Conn::connect(lite.port).unwrap();
    let mut b = Conn::connect(lite.port).unwrap();
    a.must(&["MULTI"]);
    for _ in 0..1000 {
        a.must(&["INCR", "n"]);
    }
    let mut pipeline = Vec::new();
    for _ in 0..1000 {
        pipeline.extend(common::encode_command(&["INCR", "n"]));
    }
    b.send(&pipeline).unwrap();
    let reply = a.must(&["EXEC"]);
    let text = String::from_utf8_lossy(&reply);
    let values: Vec<i64> = text
        .split("\r\n")
        .filter_map(|l| l.strip_prefix(':'))
        .map(|v| v.parse().unwrap())
        .collect();
    assert_eq!(values.len(), 1000);
    for w in values.windows(2) {
        assert_eq!(w[1], w[0] + 1, "another command ran inside EXEC");
    }
    for _ in 0..1000 {
        b.read_reply().unwrap();
    }
    assert_eq!(a.must(&["GET", "n"]), b"$4\r\n2000\r\n");
}

#[test]
fn client_leaving_mid_transaction_forgets_its_watches() {
    let lite = Server::start();
    {
        let mut a = Conn::connect(lite.port).unwrap();
        a.must(&["WATCH", "k"]);
        a.must(&["MULTI"]);
        a.must(&["SET", "k", "from-a"]);
    }
    let mut b = Conn::connect(lite.port).unwrap();
    // Let the server notice the disconnect, then touch the key: nothing
    // may crash and the queued SET never ran.
    std::thread::sleep(Duration::from_millis(100));
    b.must(&["SET", "k", "from-b"]);
    assert_eq!(b.must(&["GET", "k"]), b"$6\r\nfrom-b\r\n");
    let list = b.must(&["CLIENT", "LIST"]);
    assert!(!String::from_utf8_lossy(&list).contains("flags=x"));
}

#[test]
fn client_list_shows_multi_state() {
    let lite = Server::start();
    let mut a = Conn::connect(lite.port).unwrap();
    let mut b = Conn::connect(lite.port).unwrap();
    a.must(&["WATCH", "k"]);
    b.must(&["SET", "k", "1"]);
    a.must(&["MULTI"]);
    a.must(&["GET", "k"]);
    a.must(&["GET", "k"]);
    // (CLIENT LIST from the other connection: inside MULTI it would queue.)
    let list = String::from_utf8_lossy(&b.must(&["CLIENT", "LIST"])).into_owned();
    assert!(list.contains(" flags=xd "), "{list}");
    // A doomed transaction does not even keep its queue (queueMultiCommand).
    assert!(list.contains(" multi=0 "), "{list}");
    assert!(list.contains(" cmd=get "), "{list}");
}

/// EXEC is judged by its queued commands: on a replica whose link is down
/// with replica-serve-stale-data no, a transaction queued while the server
/// was a master is refused at EXEC if any command in it is not `stale`
/// (EXECABORT ... MASTERDOWN), and runs once the server is a master again.
/// CONFIG SET appendonly yes inside EXEC only schedules the rewrite.
#[test]
fn exec_on_a_stale_replica_and_appendonly_in_exec_like_redis() {
    let replies = common::run_on_both(|p| {
        let mut c = p.connect();
        let mut admin = p.connect();
        let mut out = Vec::new();
        c.must(&["CONFIG", "SET", "replica-serve-stale-data", "no"]);
        c.must(&["SET", "xx", "1"]);
        for queued in [vec!["GET", "xx"], vec!["PING"]] {
            c.must(&["MULTI"]);
            out.push(c.must(&queued));
            admin.must(&["REPLICAOF", "localhost", "0"]);
            out.push(c.must(&["EXEC"]));
            admin.must(&["REPLICAOF", "NO", "ONE"]);
        }
        c.must(&["MULTI"]);
        admin.must(&["REPLICAOF", "localhost", "0"]);
        out.push(c.must(&["GET", "xx"]));
        admin.must(&["REPLICAOF", "NO", "ONE"]);
        out.push(c.must(&["EXEC"]));
        c.must(&["MULTI"]);
        c.must(&["SET", "foo", "bar"]);
        c.must(&["CONFIG", "SET", "appendonly", "yes"]);
        out.push(c.must(&["EXEC"]));
        let log = p.log_tail();
        assert!(
            log.contains("AOF was enabled during a transaction. An AOF background was scheduled to start when possible."),
            "{log}"
        );
        out
    });
    assert!(
        String::from_utf8_lossy(&replies[1]).contains("EXECABORT")
            && String::from_utf8_lossy(&replies[1]).contains("MASTERDOWN"),
        "{:?}",
        String::from_utf8_lossy(&replies[1])
    );
}
