//! CLIENT REPLY ON|OFF|SKIP: which replies a client gets, byte for byte
//! against a real redis-server. Pub/sub messages and subscribe
//! confirmations still go out while replies are off (Redis's
//! CLIENT_PUSHING).

mod common;

use common::{encode_command, Conn, RealRedis, Server};
use std::time::Duration;

/// Send the whole script at once, then collect everything until quiet.
fn session(port: u16, script: &[&[&str]]) -> Vec<u8> {
    let mut c = Conn::connect(port).unwrap();
    let mut bytes = Vec::new();
    for args in script {
        bytes.extend(encode_command(args));
    }
    c.send(&bytes).unwrap();
    let (out, _closed) =
        c.read_until_close_or_idle(Duration::from_millis(500), Duration::from_millis(300));
    out
}

fn compare(script: &[&[&str]], expected: &[u8]) {
    let lite = Server::start();
    let ours = session(lite.port, script);
    assert_eq!(
        String::from_utf8_lossy(&ours),
        String::from_utf8_lossy(expected)
    );
    if let Some(real) = RealRedis::start() {
        let theirs = session(real.port, script);
        assert_eq!(ours, theirs, "redis-lite vs redis-server");
    }
}

#[test]
fn off_on_and_skip() {
    compare(
        &[
            &["CLIENT", "REPLY", "OFF"],
            &["PING", "a"],
            &["SET", "k", "v"],
            &["NOSUCHCOMMAND"],
            &["CLIENT", "REPLY", "ON"],
            &["PING", "b"],
            &["CLIENT", "REPLY", "SKIP"],
            &["PING", "c"],
            &["PING", "d"],
            &["CLIENT", "REPLY", "SKIP"],
            &["CLIENT", "REPLY", "ON"],
            &["PING", "e"],
            &["CLIENT", "REPLY", "MAYBE"],
            &["GET", "k"],
        ],
        b"+OK\r\n$1\r\nb\r\n$1\r\nd\r\n+OK\r\n$1\r\ne\r\n-ERR syntax error\r\n$1\r\nv\r\n",
    );
}

#[test]
fn resp3_subscriber_with_replies_off_still_gets_messages() {
    let lite = Server::start();
    let run = |port: u16| -> Vec<u8> {
        let mut sub = Conn::connect(port).unwrap();
        sub.must(&["HELLO", "3"]);
        let mut subscribe = Vec::new();
        for args in [
            &["CLIENT", "REPLY", "OFF"][..],
            &["SUBSCRIBE", "ch"],
            &["PING"],
        ] {
            subscribe.extend(encode_command(args));
        }
        sub.send(&subscribe).unwrap();
        std::thread::sleep(Duration::from_millis(100));
        let mut publisher = Conn::connect(port).unwrap();
        publisher.must(&["PUBLISH", "ch", "hello"]);
        let (out, _) =
            sub.read_until_close_or_idle(Duration::from_millis(500), Duration::from_millis(300));
        out
    };
    let ours = run(lite.port);
    assert_eq!(
        String::from_utf8_lossy(&ours),
        ">3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n>3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$5\r\nhello\r\n"
    );
    if let Some(real) = RealRedis::start() {
        assert_eq!(ours, run(real.port), "redis-lite vs redis-server");
    }
}

/// A blocked command's late reply (time-out, or served by a push) obeys
/// CLIENT REPLY too, and SKIP is spent on it, not on the next command.
#[test]
fn blocked_commands_obey_client_reply() {
    let run = |port: u16| -> Vec<u8> {
        let mut c = Conn::connect(port).unwrap();
        let mut pusher = Conn::connect(port).unwrap();
        let mut script = Vec::new();
        for args in [
            &["CLIENT", "REPLY", "SKIP"][..],
            &["BLPOP", "q", "0.05"],
            &["PING", "after-timeout"],
            &["CLIENT", "REPLY", "OFF"],
            &["BLPOP", "q", "0"],
        ] {
            script.extend(encode_command(args));
        }
        c.send(&script).unwrap();
        std::thread::sleep(Duration::from_millis(300));
        pusher.must(&["RPUSH", "q", "x"]);
        c.send(&encode_command(&["CLIENT", "REPLY", "ON"])).unwrap();
        c.send(&encode_command(&["LLEN", "q"])).unwrap();
        let (out, _) =
            c.read_until_close_or_idle(Duration::from_millis(500), Duration::from_millis(300));
        out
    };
    let lite = Server::start();
    let ours = run(lite.port);
    assert_eq!(
        String::from_utf8_lossy(&ours),
        "$13\r\nafter-timeout\r\n+OK\r\n:0\r\n"
    );
    if let Some(real) = RealRedis::start() {
        assert_eq!(ours, run(real.port), "redis-lite vs redis-server");
    }
}
