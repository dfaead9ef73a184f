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

/// CLIENT LIST's output buffer fields (rbs obl oll omem) of a client whose
/// own pipeline queued the replies before it: nothing is written while the
/// pipeline runs, so the layout is exact. `rounds` of `GET key`, then
/// CLIENT LIST ID of itself.
fn obuf_fields(c: &mut Conn, id: &str, key: &str, rounds: usize) -> Vec<(String, u64)> {
    let mut script = Vec::new();
    for _ in 0..rounds {
        script.extend(encode_command(&["GET", key]));
    }
    script.extend(encode_command(&["CLIENT", "LIST", "ID", id]));
    c.send(&script).unwrap();
    for _ in 0..rounds {
        c.read_reply().unwrap();
    }
    let line = String::from_utf8(c.read_reply().unwrap()).unwrap();
    line.split_whitespace()
        .filter_map(|kv| kv.split_once('='))
        .filter(|(k, _)| ["rbs", "obl", "oll", "omem"].contains(k))
        .map(|(k, v)| (k.to_string(), v.parse().unwrap()))
        .collect()
}

fn field(fields: &[(String, u64)], name: &str) -> u64 {
    fields.iter().find(|(k, _)| k == name).unwrap().1
}

/// Replies fill the 16 KB static buffer, then a list of blocks of at least
/// 16 KB (Redis's _addReplyProtoToList): the same rbs, obl and oll as
/// Redis's, and omem, the list's memory, no more than Redis's.
#[test]
fn pending_replies_fill_the_static_buffer_then_reply_blocks() {
    let run = |port: u16| -> Vec<Vec<(String, u64)>> {
        let mut c = Conn::connect(port).unwrap();
        // The cron must not shrink the static buffer under the test.
        c.must(&["DEBUG", "REPLYBUFFER", "RESIZING", "0"]);
        c.must(&["SET", "mid", &"m".repeat(1000)]);
        c.must(&["SET", "big", &"b".repeat(100_000)]);
        let id = String::from_utf8(c.must(&["CLIENT", "ID"])).unwrap();
        let id = id.trim_start_matches(':').trim().to_string();
        let small = obuf_fields(&mut c, &id, "mid", 10);
        let spill = obuf_fields(&mut c, &id, "mid", 20);
        let big = obuf_fields(&mut c, &id, "big", 3);
        c.must(&["DEBUG", "REPLYBUFFER", "RESIZING", "1"]);
        vec![small, spill, big]
    };
    let lite = Server::start();
    let ours = run(lite.port);
    // 10 x 1009 bytes ($1000, the value, CRLF): all in the static buffer.
    assert_eq!(field(&ours[0], "rbs"), 16384);
    assert_eq!(field(&ours[0], "obl"), 10 * 1009);
    assert_eq!(field(&ours[0], "oll"), 0);
    assert_eq!(field(&ours[0], "omem"), 0);
    // 20 x 1009: the static buffer full, the rest in one 16 KB block.
    assert_eq!(field(&ours[1], "obl"), 16384);
    assert_eq!(field(&ours[1], "oll"), 1);
    assert!(field(&ours[1], "omem") >= 16384);
    // 3 x 100 KB: a block per value, their sizes about the values'.
    assert!(field(&ours[2], "oll") >= 3);
    assert!(field(&ours[2], "omem") >= 300_000 - 16384);
    let Some(real) = RealRedis::start() else {
        return;
    };
    let theirs = run(real.port);
    for (o, t) in ours.iter().zip(&theirs) {
        for name in ["rbs", "obl", "oll"] {
            assert_eq!(
                field(o, name),
                field(t, name),
                "{name}: ours {o:?} theirs {t:?}"
            );
        }
        // The same allocations (jemalloc's classes of the same sizes); per
        // block, our list entry is 32 bytes where Redis's listNode and
        // block header take 40, 16 of them inside the allocation: a few
        // bytes per block either way, never more.
        let slack = 16 * field(o, "oll");
        assert!(
            field(o, "omem") <= field(t, "omem") + slack,
            "omem: ours {o:?} theirs {t:?}"
        );
    }
}

/// The client cron shrinks the static buffer of a client whose replies are
/// small (rbs down to about its peak, at least 1 KB) and INFO counts it in
/// reply_buffer_shrinks, as Redis's clientsCronResizeOutputBuffer.
#[test]
fn client_cron_shrinks_an_idle_reply_buffer() {
    let run = |port: u16| -> (u64, u64) {
        let mut c = Conn::connect(port).unwrap();
        c.must(&["DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "100"]);
        c.must(&["CLIENT", "SETNAME", "idle"]);
        let mut rbs = 0;
        for _ in 0..100 {
            let id = String::from_utf8(c.must(&["CLIENT", "ID"])).unwrap();
            let id = id.trim_start_matches(':').trim().to_string();
            let mine = String::from_utf8(c.must(&["CLIENT", "LIST", "ID", &id])).unwrap();
            rbs = mine
                .split_whitespace()
                .find_map(|kv| kv.strip_prefix("rbs="))
                .unwrap()
                .parse()
                .unwrap();
            if rbs < 2048 {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let info = String::from_utf8(c.must(&["INFO", "stats"])).unwrap();
        let shrinks = info
            .lines()
            .find_map(|l| l.strip_prefix("reply_buffer_shrinks:"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        c.must(&["DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "RESET"]);
        (rbs, shrinks)
    };
    let lite = Server::start();
    let (rbs, shrinks) = run(lite.port);
    assert!((1024..2048).contains(&rbs), "rbs={rbs}");
    assert!(shrinks >= 1, "reply_buffer_shrinks={shrinks}");
    if let Some(real) = RealRedis::start() {
        let (rbs_r, shrinks_r) = run(real.port);
        assert!((1024..2048).contains(&rbs_r), "redis rbs={rbs_r}");
        assert!(shrinks_r >= 1);
    }
}
