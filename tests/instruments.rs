//! The instruments the seed experiments read, over TCP: SLOWLOG, LATENCY,
//! MONITOR, CLIENT PAUSE and output buffer limits. Each test starts its own
//! server. Durations are asserted only as lower bounds that the command
//! itself guarantees (DEBUG SLEEP sleeps at least that long), never as
//! "fast enough" thresholds.

mod common;

use common::{split_aggregate, Conn, Server};
use std::time::{Duration, Instant};

/// The integer of a `:n` reply.
fn int(reply: &[u8]) -> i64 {
    assert_eq!(
        reply[0],
        b':',
        "not an integer: {:?}",
        String::from_utf8_lossy(reply)
    );
    std::str::from_utf8(&reply[1..reply.len() - 2])
        .unwrap()
        .parse()
        .unwrap()
}

/// The payload of a `$n` bulk reply.
fn bulk(reply: &[u8]) -> Vec<u8> {
    assert_eq!(
        reply[0],
        b'$',
        "not a bulk: {:?}",
        String::from_utf8_lossy(reply)
    );
    let nl = reply.iter().position(|&b| b == b'\n').unwrap();
    reply[nl + 1..reply.len() - 2].to_vec()
}

#[test]
fn debug_sleep_lands_in_slowlog_with_its_duration() {
    let srv = Server::start();
    let mut c = Conn::connect(srv.port).unwrap();
    c.must(&["SLOWLOG", "RESET"]);
    c.must(&["DEBUG", "SLEEP", "0.05"]);
    let reply = c.must(&["SLOWLOG", "GET", "1"]);
    let (_, entries) = split_aggregate(&reply).expect("array");
    assert_eq!(entries.len(), 1);
    let (_, fields) = split_aggregate(&entries[0]).expect("entry");
    assert_eq!(fields.len(), 6, "id, time, duration, args, addr, name");
    let duration = int(&fields[2]);
    assert!(duration >= 50_000, "DEBUG SLEEP 0.05 logged {duration} us");
    let (_, args) = split_aggregate(&fields[3]).unwrap();
    let args: Vec<Vec<u8>> = args.iter().map(|a| bulk(a)).collect();
    assert_eq!(
        args,
        vec![b"DEBUG".to_vec(), b"SLEEP".to_vec(), b"0.05".to_vec()]
    );
    assert!(bulk(&fields[4]).starts_with(b"127.0.0.1:"));
    assert_eq!(int(&c.must(&["SLOWLOG", "LEN"])), 1);
}

#[test]
fn slowlog_threshold_zero_logs_everything_and_negative_nothing() {
    let srv = Server::start();
    let mut c = Conn::connect(srv.port).unwrap();
    c.must(&["CONFIG", "SET", "slowlog-log-slower-than", "0"]);
    c.must(&["SLOWLOG", "RESET"]);
    c.must(&["SET", "a", "1"]);
    c.must(&["GET", "a"]);
    // SLOWLOG RESET itself is logged after it ran, then SET and GET; LEN
    // is logged only after it has replied (as in Redis 7.0.15: 3).
    assert_eq!(int(&c.must(&["SLOWLOG", "LEN"])), 3);
    c.must(&["CONFIG", "SET", "slowlog-log-slower-than", "-1"]);
    c.must(&["SLOWLOG", "RESET"]);
    c.must(&["DEBUG", "SLEEP", "0.02"]);
    assert_eq!(int(&c.must(&["SLOWLOG", "LEN"])), 0);
}

#[test]
fn latency_monitor_records_a_command_event_for_a_slow_command() {
    let srv = Server::start();
    let mut c = Conn::connect(srv.port).unwrap();
    c.must(&["CONFIG", "SET", "latency-monitor-threshold", "10"]);
    c.must(&["LATENCY", "RESET"]);
    c.must(&["DEBUG", "SLEEP", "0.05"]);
    let reply = c.must(&["LATENCY", "LATEST"]);
    let (_, events) = split_aggregate(&reply).unwrap();
    let mut found = false;
    for e in events {
        let (_, f) = split_aggregate(&e).unwrap();
        if bulk(&f[0]) == b"command" {
            found = true;
            assert!(int(&f[2]) >= 50, "latest ms {}", int(&f[2]));
            assert!(int(&f[3]) >= 50, "max ms {}", int(&f[3]));
        }
    }
    assert!(
        found,
        "no `command` event in {}",
        String::from_utf8_lossy(&reply)
    );
    // Fast commands never make the `command` event move.
    let history = c.must(&["LATENCY", "HISTORY", "command"]);
    let (_, samples) = split_aggregate(&history).unwrap();
    assert_eq!(samples.len(), 1);
}

#[test]
fn monitor_lines_have_redis_format_and_escaping() {
    let srv = Server::start();
    let mut m = Conn::connect(srv.port).unwrap();
    assert_eq!(m.must(&["MONITOR"]), b"+OK\r\n");
    let mut c = Conn::connect(srv.port).unwrap();
    c.must(&[&b"SET"[..], b"k\x00", b"\xff\n\"q\\"]);
    c.must(&["CONFIG", "GET", "hz"]); // admin: never shown
    c.must(&["AUTH", "secret"]); // redacted (and an error: no password set)
    c.must(&["GET", "k"]);
    let lines: Vec<Vec<u8>> = (0..3).map(|_| m.read_reply().unwrap()).collect();
    let first = String::from_utf8(lines[0].clone()).unwrap();
    // +<sec>.<usec> [0 127.0.0.1:port] "SET" "k\x00" "\xff\n\"q\\"
    let (stamp, rest) = first[1..].split_once(' ').unwrap();
    let (secs, usecs) = stamp.split_once('.').unwrap();
    assert!(secs.parse::<u64>().is_ok() && usecs.len() == 6, "{first:?}");
    assert!(rest.starts_with("[0 127.0.0.1:"), "{first:?}");
    assert!(
        rest.ends_with("] \"SET\" \"k\\x00\" \"\\xff\\n\\\"q\\\\\"\r\n"),
        "{first:?}"
    );
    assert!(String::from_utf8_lossy(&lines[1]).ends_with("\"AUTH\" \"(redacted)\"\r\n"));
    assert!(String::from_utf8_lossy(&lines[2]).ends_with("\"GET\" \"k\"\r\n"));
}

#[test]
fn a_monitor_that_stops_reading_is_disconnected_at_its_output_limit() {
    let srv = Server::start();
    let mut admin = Conn::connect(srv.port).unwrap();
    admin.must(&[
        "CONFIG",
        "SET",
        "client-output-buffer-limit",
        "normal 256kb 0 0",
    ]);
    let mut m = Conn::connect(srv.port).unwrap();
    m.must(&["MONITOR"]);
    // The monitor never reads again. Another client keeps working, and the
    // monitor feed (a ~1 KB line per command) passes the 256 KB hard limit.
    let big = "x".repeat(1000);
    let mut c = Conn::connect(srv.port).unwrap();
    let start = Instant::now();
    let mut closed = false;
    for i in 0..20_000 {
        assert_eq!(c.must(&["SET", "k", big.as_str()]), b"+OK\r\n", "write {i}");
        if i % 500 == 499 {
            let list = String::from_utf8(bulk(&admin.must(&["CLIENT", "LIST"]))).unwrap();
            if !list.contains("cmd=monitor") {
                closed = true;
                break;
            }
        }
        assert!(start.elapsed() < Duration::from_secs(60), "bounded test");
    }
    assert!(closed, "the monitor was never disconnected");
    assert_eq!(c.must(&["GET", "k"]).len(), big.len() + 9); // $1000\r\n...\r\n
    assert!(srv
        .log_tail()
        .contains("scheduled to be closed ASAP for overcoming of output buffer limits"));
}

#[test]
fn client_pause_write_holds_writes_but_not_reads() {
    let srv = Server::start();
    let mut a = Conn::connect(srv.port).unwrap();
    a.must(&["SET", "k", "1"]);
    a.must(&["CLIENT", "PAUSE", "300", "WRITE"]);
    let mut b = Conn::connect(srv.port).unwrap();
    let t = Instant::now();
    assert_eq!(b.must(&["GET", "k"]), b"$1\r\n1\r\n");
    let read_wait = t.elapsed();
    let t = Instant::now();
    assert_eq!(b.must(&["SET", "k", "2"]), b"+OK\r\n");
    let write_wait = t.elapsed();
    // The write waited for the pause; the read did not have to.
    assert!(
        write_wait >= Duration::from_millis(200),
        "write waited {write_wait:?}"
    );
    assert!(read_wait < write_wait);
    assert_eq!(b.must(&["GET", "k"]), b"$1\r\n2\r\n");
}

#[test]
fn client_unpause_releases_postponed_commands_in_order() {
    let srv = Server::start();
    let mut a = Conn::connect(srv.port).unwrap();
    a.must(&["CLIENT", "PAUSE", "100000", "WRITE"]);
    let mut b = Conn::connect(srv.port).unwrap();
    // A pipeline: the first write is postponed, and so is all that follows.
    b.send(&common::encode_command(&["INCR", "n"])).unwrap();
    b.send(&common::encode_command(&["INCR", "n"])).unwrap();
    assert!(b.read_reply_within(Duration::from_millis(200)).is_err());
    a.must(&["CLIENT", "UNPAUSE"]);
    assert_eq!(b.read_reply().unwrap(), b":1\r\n");
    assert_eq!(b.read_reply().unwrap(), b":2\r\n");
}

#[test]
fn a_monitor_client_may_not_touch_the_keyspace() {
    let srv = Server::start();
    let mut m = Conn::connect(srv.port).unwrap();
    m.must(&["MONITOR"]);
    assert_eq!(
        m.must(&["GET", "a"]),
        b"-ERR Replica can't interact with the keyspace\r\n"
    );
    // PING is allowed; its own line follows the reply, as in Redis.
    assert_eq!(m.must(&["PING"]), b"+PONG\r\n");
    let line = m.read_reply().unwrap();
    assert!(String::from_utf8_lossy(&line).ends_with("\"PING\"\r\n"));
}

/// RESET turns a monitor back into a normal client: no more feed.
#[test]
fn reset_ends_monitor() {
    let srv = Server::start();
    let mut mon = Conn::connect(srv.port).unwrap();
    let mut other = Conn::connect(srv.port).unwrap();
    mon.must(&["MONITOR"]);
    assert_eq!(mon.must(&["RESET"]), b"+RESET\r\n");
    other.must(&["SET", "k", "v"]);
    let info = String::from_utf8_lossy(&mon.must(&["CLIENT", "INFO"])).into_owned();
    assert!(info.contains(" flags=N "), "{info}");
}
