//! Blocking list pops that never block the loop (BLPOP, BRPOP, BLMOVE,
//! BRPOPLPUSH), over TCP with several clients: who is served first, what a
//! time-out replies, that a parked client leaves cleanly when it
//! disconnects or is unblocked, and that everybody else is served while
//! some clients wait.

mod common;

use common::{encode_command, Conn, Server};
use std::time::{Duration, Instant};

fn info_blocked_clients(c: &mut Conn) -> String {
    let reply = c.must(&["INFO", "clients"]);
    let text = String::from_utf8_lossy(&reply).into_owned();
    text.lines()
        .find_map(|l| l.strip_prefix("blocked_clients:").map(str::to_string))
        .expect("blocked_clients in INFO clients")
}

/// Wait (bounded) until `n` clients are blocked, so the order of blocking
/// is the order of the test, not of thread scheduling.
fn wait_blocked(c: &mut Conn, n: usize) {
    let start = Instant::now();
    while info_blocked_clients(c) != n.to_string() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "clients never blocked"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn first_blocked_is_first_served() {
    let srv = Server::start();
    let mut a = Conn::connect(srv.port).unwrap();
    let mut b = Conn::connect(srv.port).unwrap();
    let mut pusher = Conn::connect(srv.port).unwrap();
    a.send_cmd(&["BLPOP", "q", "0"]).unwrap();
    wait_blocked(&mut pusher, 1);
    b.send_cmd(&["BLPOP", "q", "0"]).unwrap();
    wait_blocked(&mut pusher, 2);
    assert_eq!(pusher.must(&["RPUSH", "q", "1", "2"]), b":2\r\n");
    assert_eq!(a.read_reply().unwrap(), b"*2\r\n$1\r\nq\r\n$1\r\n1\r\n");
    assert_eq!(b.read_reply().unwrap(), b"*2\r\n$1\r\nq\r\n$1\r\n2\r\n");
    assert_eq!(pusher.must(&["EXISTS", "q"]), b":0\r\n");
    assert_eq!(info_blocked_clients(&mut pusher), "0");
}

#[test]
fn a_timeout_replies_null_and_others_are_served_meanwhile() {
    let srv = Server::start();
    let mut a = Conn::connect(srv.port).unwrap();
    let mut other = Conn::connect(srv.port).unwrap();
    let start = Instant::now();
    a.send_cmd(&["BRPOP", "nothing", "0.3"]).unwrap();
    wait_blocked(&mut other, 1);
    // The loop is not blocked: another client is answered at once.
    assert_eq!(other.must(&["PING"]), b"+PONG\r\n");
    assert_eq!(a.read_reply().unwrap(), b"*-1\r\n");
    // Deadlines are whole milliseconds (as in Redis), so the reply may come
    // up to a millisecond before 300 ms have passed by this clock.
    assert!(start.elapsed() >= Duration::from_millis(295));
    assert_eq!(info_blocked_clients(&mut other), "0");
}

#[test]
fn commands_pipelined_after_a_blocked_one_wait_for_it() {
    let srv = Server::start();
    let mut a = Conn::connect(srv.port).unwrap();
    let mut b = Conn::connect(srv.port).unwrap();
    let mut pipeline = encode_command(&["BLPOP", "q", "0"]);
    pipeline.extend(encode_command(&["PING"]));
    a.send(&pipeline).unwrap();
    wait_blocked(&mut b, 1);
    assert!(
        a.read_reply_within(Duration::from_millis(100)).is_err(),
        "PING ran early"
    );
    b.must(&["LPUSH", "q", "x"]);
    assert_eq!(a.read_reply().unwrap(), b"*2\r\n$1\r\nq\r\n$1\r\nx\r\n");
    assert_eq!(a.read_reply().unwrap(), b"+PONG\r\n");
}

#[test]
fn a_client_that_disconnects_while_blocked_is_forgotten() {
    let srv = Server::start();
    let mut a = Conn::connect(srv.port).unwrap();
    let mut b = Conn::connect(srv.port).unwrap();
    a.send_cmd(&["BLPOP", "q", "0"]).unwrap();
    wait_blocked(&mut b, 1);
    a.shutdown();
    drop(a);
    wait_blocked(&mut b, 0);
    b.must(&["RPUSH", "q", "kept"]);
    assert_eq!(b.must(&["LRANGE", "q", "0", "-1"]), b"*1\r\n$4\r\nkept\r\n");
}

#[test]
fn client_unblock_with_timeout_or_error() {
    let srv = Server::start();
    let mut a = Conn::connect(srv.port).unwrap();
    let mut b = Conn::connect(srv.port).unwrap();
    let id_reply = a.must(&["CLIENT", "ID"]);
    let id = String::from_utf8_lossy(&id_reply[1..id_reply.len() - 2]).into_owned();
    a.send_cmd(&["BLPOP", "q", "0"]).unwrap();
    wait_blocked(&mut b, 1);
    assert_eq!(b.must(&["CLIENT", "UNBLOCK", &id]), b":1\r\n");
    assert_eq!(a.read_reply().unwrap(), b"*-1\r\n");
    a.send_cmd(&["BRPOPLPUSH", "q", "d", "0"]).unwrap();
    wait_blocked(&mut b, 1);
    assert_eq!(b.must(&["CLIENT", "UNBLOCK", &id, "ERROR"]), b":1\r\n");
    assert_eq!(
        a.read_reply().unwrap(),
        b"-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n"
    );
    // Not blocked any more: nothing to unblock.
    assert_eq!(b.must(&["CLIENT", "UNBLOCK", &id]), b":0\r\n");
    assert_eq!(a.must(&["PING"]), b"+PONG\r\n");
}

#[test]
fn blmove_wakes_up_and_moves() {
    let srv = Server::start();
    let mut a = Conn::connect(srv.port).unwrap();
    let mut b = Conn::connect(srv.port).unwrap();
    a.send_cmd(&["BLMOVE", "src", "dst", "LEFT", "RIGHT", "0"])
        .unwrap();
    wait_blocked(&mut b, 1);
    b.must(&["RPUSH", "src", "v"]);
    assert_eq!(a.read_reply().unwrap(), b"$1\r\nv\r\n");
    assert_eq!(b.must(&["LRANGE", "dst", "0", "-1"]), b"*1\r\n$1\r\nv\r\n");
    assert_eq!(b.must(&["EXISTS", "src"]), b":0\r\n");
}

#[test]
fn blmpop_wakes_up_with_the_key_and_its_elements() {
    let srv = Server::start();
    let mut a = Conn::connect(srv.port).unwrap();
    let mut b = Conn::connect(srv.port).unwrap();
    a.send_cmd(&["BLMPOP", "0", "2", "x", "y", "RIGHT", "COUNT", "2"])
        .unwrap();
    wait_blocked(&mut b, 1);
    b.must(&["RPUSH", "y", "1", "2", "3"]);
    assert_eq!(
        a.read_reply().unwrap(),
        b"*2\r\n$1\r\ny\r\n*2\r\n$1\r\n3\r\n$1\r\n2\r\n"
    );
    assert_eq!(b.must(&["LRANGE", "y", "0", "-1"]), b"*1\r\n$1\r\n1\r\n");
}

#[test]
fn bzpopmin_wakes_on_zadd_and_a_list_push_does_not_wake_it() {
    let srv = Server::start();
    let mut a = Conn::connect(srv.port).unwrap();
    let mut b = Conn::connect(srv.port).unwrap();
    a.send_cmd(&["BZPOPMIN", "k", "0"]).unwrap();
    wait_blocked(&mut b, 1);
    // A list under the waited-for key is not what a zset pop waits for.
    b.must(&["RPUSH", "k", "x"]);
    assert!(a.read_reply_within(Duration::from_millis(100)).is_err());
    b.must(&["DEL", "k"]);
    b.must(&["ZADD", "k", "2", "two", "1", "one"]);
    assert_eq!(
        a.read_reply().unwrap(),
        b"*3\r\n$1\r\nk\r\n$3\r\none\r\n$1\r\n1\r\n"
    );
    assert_eq!(info_blocked_clients(&mut b), "0");
}

/// Redis 7.0 counts a blocked command once, when it is served or times out
/// (updateStatsOnUnblock), and MONITOR shows it once, when it blocks.
#[test]
fn blocked_command_counted_once() {
    let srv = Server::start();
    let mut a = Conn::connect(srv.port).unwrap();
    let mut pusher = Conn::connect(srv.port).unwrap();
    let mut mon = Conn::connect(srv.port).unwrap();
    mon.must(&["MONITOR"]);
    pusher.must(&["CONFIG", "RESETSTAT"]);
    // One time-out...
    assert_eq!(a.must(&["BLPOP", "q", "0.05"]), b"*-1\r\n");
    // ...and one served.
    a.send_cmd(&["BLPOP", "q", "0"]).unwrap();
    wait_blocked(&mut pusher, 1);
    pusher.must(&["RPUSH", "q", "x"]);
    assert_eq!(a.read_reply().unwrap(), b"*2\r\n$1\r\nq\r\n$1\r\nx\r\n");
    let stats = String::from_utf8_lossy(&pusher.must(&["INFO", "commandstats"])).into_owned();
    assert!(
        stats.contains("cmdstat_blpop:calls=2,"),
        "each BLPOP counted once: {stats}"
    );
    let mut fed = 0;
    while let Ok(line) = mon.read_reply_within(Duration::from_millis(200)) {
        fed += usize::from(String::from_utf8_lossy(&line).contains("\"BLPOP\""));
    }
    assert_eq!(fed, 2, "MONITOR shows each BLPOP once");
}

/// SWAPDB makes a waited-for key appear in the blocked client's db: it is
/// served at once (scanDatabaseForReadyKeys), as in Redis.
#[test]
fn swapdb_serves_clients_blocked_in_either_db() {
    let srv = Server::start();
    let mut a = Conn::connect(srv.port).unwrap();
    let mut other = Conn::connect(srv.port).unwrap();
    a.must(&["SELECT", "9"]);
    a.send_cmd(&["BRPOP", "k", "5"]).unwrap();
    wait_blocked(&mut other, 1);
    other.must(&["SELECT", "1"]);
    other.must(&["RPUSH", "k", "hello"]);
    other.must(&["SWAPDB", "1", "9"]);
    let reply = a.read_reply_within(Duration::from_secs(2)).unwrap();
    assert_eq!(reply, b"*2\r\n$1\r\nk\r\n$5\r\nhello\r\n");
}

/// CLIENT UNBLOCK ... ERROR is an error reply of the blocked command:
/// errorstats, failed_calls and total_error_replies count it.
#[test]
fn client_unblock_error_counts_as_failed_call() {
    let srv = Server::start();
    let mut a = Conn::connect(srv.port).unwrap();
    let mut other = Conn::connect(srv.port).unwrap();
    other.must(&["CONFIG", "RESETSTAT"]);
    let id = String::from_utf8_lossy(&a.must(&["CLIENT", "ID"]))
        .trim_start_matches(':')
        .trim()
        .to_string();
    a.send_cmd(&["BLPOP", "q", "0"]).unwrap();
    wait_blocked(&mut other, 1);
    assert_eq!(other.must(&["CLIENT", "UNBLOCK", &id, "ERROR"]), b":1\r\n");
    assert_eq!(
        a.read_reply().unwrap(),
        b"-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n"
    );
    let stats = String::from_utf8_lossy(&other.must(&["INFO", "all"])).into_owned();
    assert!(stats.contains("errorstat_UNBLOCKED:count=1"), "{stats}");
    assert!(stats.contains("total_error_replies:1\r\n"), "{stats}");
    assert!(stats.contains("rejected_calls=0,failed_calls=1"), "{stats}");
}

/// INFO's `clients_in_timeout_table` counts the blocked clients that have a
/// deadline (a BLPOP with timeout 0 is not in the table), and
/// `number_of_libraries` the loaded function libraries: both as
/// redis-server reports them for the same state.
#[test]
fn info_counts_timeout_table_and_function_libraries_like_redis() {
    let fields = common::run_on_both(|srv| {
        let mut ctl = srv.connect();
        let mut waiters: Vec<Conn> = (0..4).map(|_| srv.connect()).collect();
        for (i, w) in waiters.iter_mut().enumerate() {
            let timeout = if i == 3 { "0" } else { "100" };
            w.send_cmd(&["BLPOP", "q", timeout]).unwrap();
            wait_blocked(&mut ctl, i + 1);
        }
        for lib in ["a", "b"] {
            let code = format!(
                "#!lua name={lib}\nredis.register_function('{lib}f', function() return 1 end)"
            );
            ctl.must(&["FUNCTION", "LOAD", &code]);
        }
        let field = |c: &mut Conn, section: &str, name: &str| {
            let text = String::from_utf8_lossy(&c.must(&["INFO", section])).into_owned();
            text.lines()
                .find_map(|l| l.strip_prefix(&format!("{name}:")).map(str::to_string))
                .unwrap_or_else(|| panic!("{name} in INFO {section}"))
        };
        let got = (
            field(&mut ctl, "clients", "clients_in_timeout_table"),
            field(&mut ctl, "memory", "number_of_libraries"),
        );
        ctl.must(&["RPUSH", "q", "1", "2", "3", "4"]);
        got
    });
    assert_eq!(fields, ("3".to_string(), "2".to_string()));
}

/// A client held by CLIENT PAUSE is a blocked client in Redis
/// (BLOCKED_POSTPONE): it counts in blocked_clients and CLIENT LIST shows
/// it with flag b and the command it waits in, as a BLPOP waiter shows
/// blpop. An unknown command leaves cmd=NULL. Checked on both servers.
#[test]
fn paused_clients_count_as_blocked_and_list_their_command_like_redis() {
    let seen = common::run_on_both(|srv| {
        let mut ctl = srv.connect();
        let mut bad = srv.connect();
        assert!(bad.cmd(&["NOSUCHCMD"]).is_ok());
        let mut popper = srv.connect();
        popper.send_cmd(&["BLPOP", "l", "0"]).unwrap();
        wait_blocked(&mut ctl, 1);
        ctl.must(&["CLIENT", "PAUSE", "20000", "WRITE"]);
        let mut writer = srv.connect();
        writer.send_cmd(&["SET", "a", "1"]).unwrap();
        wait_blocked(&mut ctl, 2);
        let list = String::from_utf8_lossy(&ctl.must(&["CLIENT", "LIST"])).into_owned();
        let mut rows: Vec<String> = list
            .lines()
            .filter(|l| l.starts_with("id="))
            .map(|l| {
                let f = |name: &str| {
                    l.split(' ')
                        .find_map(|w| w.strip_prefix(name))
                        .unwrap_or("?")
                        .to_string()
                };
                format!("{} {}", f("flags="), f("cmd="))
            })
            .collect();
        rows.sort();
        ctl.must(&["CLIENT", "UNPAUSE"]);
        assert_eq!(writer.read_reply().unwrap(), b"+OK\r\n");
        wait_blocked(&mut ctl, 1);
        ctl.must(&["RPUSH", "l", "x"]);
        wait_blocked(&mut ctl, 0);
        rows
    });
    assert_eq!(seen, ["N NULL", "N client|list", "b blpop", "b set"]);
}
