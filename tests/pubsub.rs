//! Pub/Sub between connections (pubsub.rs): what one client publishes
//! reaches the others, in order; subscriptions end with RESET and with the
//! connection; a subscriber that stops reading is cut off at the `pubsub`
//! output buffer limit while the publisher carries on. The single-connection
//! replies (subscribed mode, PUBSUB, RESP3 pushes) are byte-compared with
//! Redis in tests/cases/pubsub.txt.

mod common;

use common::{escape, Conn, Server};
use std::time::{Duration, Instant};

/// A RESP2 `message` frame.
fn message(channel: &str, msg: &str) -> Vec<u8> {
    format!(
        "*3\r\n$7\r\nmessage\r\n${}\r\n{channel}\r\n${}\r\n{msg}\r\n",
        channel.len(),
        msg.len()
    )
    .into_bytes()
}

/// A RESP2 `pmessage` frame.
fn pmessage(pattern: &str, channel: &str, msg: &str) -> Vec<u8> {
    format!(
        "*4\r\n$8\r\npmessage\r\n${}\r\n{pattern}\r\n${}\r\n{channel}\r\n${}\r\n{msg}\r\n",
        pattern.len(),
        channel.len(),
        msg.len()
    )
    .into_bytes()
}

/// Read one reply and compare it, showing both sides escaped on mismatch.
fn expect(c: &mut Conn, want: &[u8], what: &str) {
    let got = c
        .read_reply()
        .unwrap_or_else(|e| panic!("{what}: no reply: {e}"));
    assert_eq!(escape(&got), escape(want), "{what}");
}

/// Subscribe, reading the N confirmations.
fn subscribe(c: &mut Conn, cmd: &str, names: &[&str]) {
    let mut args = vec![cmd];
    args.extend_from_slice(names);
    c.send_cmd(&args).expect("send subscribe");
    for n in names {
        let r = c.read_reply().expect("subscribe confirmation");
        assert!(
            r.windows(n.len()).any(|w| w == n.as_bytes()),
            "{cmd} {n}: {}",
            escape(&r)
        );
    }
}

/// Poll `PUBSUB NUMSUB channel` until it reports `want`.
fn wait_numsub(c: &mut Conn, channel: &str, want: usize, within: Duration) -> bool {
    let deadline = Instant::now() + within;
    let expected = format!("*2\r\n${}\r\n{channel}\r\n:{want}\r\n", channel.len());
    loop {
        if c.must(&["PUBSUB", "NUMSUB", channel]) == expected.as_bytes() {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn publish_reaches_channel_then_pattern_subscribers_in_order() {
    let srv = Server::start();
    let mut sub1 = srv.connect();
    let mut sub2 = srv.connect();
    let mut publisher = srv.connect();
    subscribe(&mut sub1, "SUBSCRIBE", &["news"]);
    subscribe(&mut sub2, "PSUBSCRIBE", &["n*", "x*"]);
    subscribe(&mut sub2, "SUBSCRIBE", &["news"]);

    // news: sub1 and sub2 by channel, sub2 again by pattern n*.
    assert_eq!(publisher.must(&["PUBLISH", "news", "m1"]), b":3\r\n");
    assert_eq!(publisher.must(&["PUBLISH", "news", "m2"]), b":3\r\n");
    assert_eq!(publisher.must(&["PUBLISH", "nope", "m3"]), b":1\r\n");
    assert_eq!(publisher.must(&["PUBLISH", "other", "m4"]), b":0\r\n");

    expect(&mut sub1, &message("news", "m1"), "sub1 first message");
    expect(&mut sub1, &message("news", "m2"), "sub1 second message");
    // Exact subscribers are served before pattern subscribers.
    expect(&mut sub2, &message("news", "m1"), "sub2 message m1");
    expect(&mut sub2, &pmessage("n*", "news", "m1"), "sub2 pmessage m1");
    expect(&mut sub2, &message("news", "m2"), "sub2 message m2");
    expect(&mut sub2, &pmessage("n*", "news", "m2"), "sub2 pmessage m2");
    expect(&mut sub2, &pmessage("n*", "nope", "m3"), "sub2 pmessage m3");

    // Binary-safe channel and payload.
    subscribe(&mut sub1, "SUBSCRIBE", &["bin"]);
    publisher
        .send_cmd(&[&b"PUBLISH"[..], &b"bin"[..], &b"a\r\n\x00b"[..]])
        .unwrap();
    expect(&mut publisher, b":1\r\n", "binary publish");
    expect(
        &mut sub1,
        b"*3\r\n$7\r\nmessage\r\n$3\r\nbin\r\n$5\r\na\r\n\x00b\r\n",
        "binary message",
    );
}

#[test]
fn sharded_publish_ignores_patterns_and_plain_channels() {
    let srv = Server::start();
    let mut sub = srv.connect();
    let mut publisher = srv.connect();
    subscribe(&mut sub, "SSUBSCRIBE", &["orders"]);
    subscribe(&mut sub, "PSUBSCRIBE", &["o*"]);
    assert_eq!(publisher.must(&["SPUBLISH", "orders", "s1"]), b":1\r\n");
    expect(
        &mut sub,
        b"*3\r\n$8\r\nsmessage\r\n$6\r\norders\r\n$2\r\ns1\r\n",
        "smessage",
    );
    // PUBLISH does not reach shard subscribers, only the pattern.
    assert_eq!(publisher.must(&["PUBLISH", "orders", "p1"]), b":1\r\n");
    expect(&mut sub, &pmessage("o*", "orders", "p1"), "pmessage only");
}

#[test]
fn reset_unsubscribes_from_everything() {
    let srv = Server::start();
    let mut sub = srv.connect();
    let mut other = srv.connect();
    subscribe(&mut sub, "SUBSCRIBE", &["a", "b"]);
    subscribe(&mut sub, "PSUBSCRIBE", &["p*"]);
    subscribe(&mut sub, "SSUBSCRIBE", &["s"]);
    let list = other.must(&["CLIENT", "LIST", "TYPE", "pubsub"]);
    let text = String::from_utf8_lossy(&list);
    assert!(
        text.contains("flags=P ") && text.contains("sub=2 psub=1 ssub=1"),
        "CLIENT LIST TYPE pubsub: {text}"
    );
    let info = String::from_utf8_lossy(&other.must(&["INFO", "stats"])).into_owned();
    for field in [
        "pubsub_channels:2\r\n",
        "pubsub_patterns:1\r\n",
        "pubsubshard_channels:1\r\n",
    ] {
        assert!(info.contains(field), "INFO stats lacks {field:?}");
    }

    assert_eq!(sub.must(&["RESET"]), b"+RESET\r\n");
    // Nothing is left, nothing is delivered, the client is normal again.
    assert_eq!(
        other.must(&["PUBSUB", "NUMSUB", "a", "b"]),
        b"*4\r\n$1\r\na\r\n:0\r\n$1\r\nb\r\n:0\r\n"
    );
    assert_eq!(other.must(&["PUBSUB", "NUMPAT"]), b":0\r\n");
    assert_eq!(other.must(&["PUBSUB", "SHARDCHANNELS"]), b"*0\r\n");
    assert_eq!(other.must(&["PUBLISH", "a", "x"]), b":0\r\n");
    assert_eq!(other.must(&["PUBLISH", "pq", "x"]), b":0\r\n");
    assert_eq!(sub.must(&["GET", "missing"]), b"$-1\r\n");
    let me = String::from_utf8_lossy(&sub.must(&["CLIENT", "INFO"])).into_owned();
    assert!(
        me.contains("flags=N ") && me.contains("sub=0 psub=0 ssub=0"),
        "{me}"
    );
    assert_eq!(
        other.must(&["CLIENT", "LIST", "TYPE", "pubsub"]),
        b"$0\r\n\r\n"
    );
}

#[test]
fn closed_subscriber_leaves_its_channels() {
    let srv = Server::start();
    let mut other = srv.connect();
    {
        let mut sub = srv.connect();
        subscribe(&mut sub, "SUBSCRIBE", &["gone"]);
        subscribe(&mut sub, "PSUBSCRIBE", &["go*"]);
        assert!(wait_numsub(&mut other, "gone", 1, Duration::from_secs(1)));
        sub.shutdown();
    }
    assert!(
        wait_numsub(&mut other, "gone", 0, Duration::from_secs(5)),
        "a closed client must leave its channels"
    );
    assert_eq!(other.must(&["PUBSUB", "NUMPAT"]), b":0\r\n");
    assert_eq!(other.must(&["PUBLISH", "gone", "x"]), b":0\r\n");
}

#[test]
fn client_kill_type_pubsub_closes_subscribers_only() {
    let srv = Server::start();
    let mut sub = srv.connect();
    let mut other = srv.connect();
    subscribe(&mut sub, "PSUBSCRIBE", &["*"]);
    assert_eq!(other.must(&["CLIENT", "KILL", "TYPE", "pubsub"]), b":1\r\n");
    assert!(
        sub.closed_within(Duration::from_secs(5)),
        "subscriber closed"
    );
    assert_eq!(other.must(&["PING"]), b"+PONG\r\n");
    assert_eq!(other.must(&["PUBSUB", "NUMPAT"]), b":0\r\n");
}

#[test]
fn slow_subscriber_is_disconnected_at_pubsub_output_buffer_limit() {
    let srv = Server::start();
    let mut sub = srv.connect();
    let mut publisher = srv.connect();
    assert_eq!(
        publisher.must(&[
            "CONFIG",
            "SET",
            "client-output-buffer-limit",
            "pubsub 1mb 512kb 0"
        ]),
        b"+OK\r\n"
    );
    subscribe(&mut sub, "SUBSCRIBE", &["firehose"]);
    // The subscriber never reads again. Once the kernel's socket buffers
    // are full, messages pile up in its output buffer until the 1 MB hard
    // limit closes it; the publisher is a normal client and unaffected.
    let payload = "x".repeat(100 * 1024);
    let mut dropped = false;
    for _batch in 0..40 {
        for _ in 0..10 {
            let r = publisher.must(&["PUBLISH", "firehose", payload.as_str()]);
            assert!(r == b":1\r\n" || r == b":0\r\n", "{}", escape(&r));
        }
        if publisher.must(&["PUBSUB", "NUMSUB", "firehose"]) == b"*2\r\n$8\r\nfirehose\r\n:0\r\n" {
            dropped = true;
            break;
        }
    }
    assert!(
        dropped,
        "the subscriber should be closed at its output buffer limit"
    );
    assert_eq!(publisher.must(&["PING"]), b"+PONG\r\n");
    assert_eq!(publisher.must(&["SET", "k", "v"]), b"+OK\r\n");
    // What the subscriber still receives ends with the server closing it.
    let (_, closed) = sub.read_until_close_or_idle(Duration::from_secs(5), Duration::from_secs(5));
    assert!(closed, "the subscriber's connection must be closed");
    assert!(
        srv.log_tail()
            .contains("scheduled to be closed ASAP for overcoming of output buffer limits"),
        "log: {}",
        srv.log_tail()
    );
}

#[test]
fn resp3_subscriber_gets_its_own_messages_before_the_reply() {
    let srv = Server::start();
    let mut c = srv.connect();
    let hello = c.must(&["HELLO", "3"]);
    assert!(hello.starts_with(b"%7\r\n"), "{}", escape(&hello));
    expect_push(&mut c, &["SUBSCRIBE", "me"]);
    // PUBLISH to ourselves: the push comes first, then the count.
    c.send_cmd(&["PUBLISH", "me", "hi"]).unwrap();
    expect(
        &mut c,
        b">3\r\n$7\r\nmessage\r\n$2\r\nme\r\n$2\r\nhi\r\n",
        "self push",
    );
    expect(&mut c, b":1\r\n", "PUBLISH count");

    // A keyspace notification raised by our own command, inside EXEC too.
    assert_eq!(
        c.must(&["CONFIG", "SET", "notify-keyspace-events", "E$"]),
        b"+OK\r\n"
    );
    expect_push(&mut c, &["SUBSCRIBE", "__keyevent@0__:set"]);
    let event = b">3\r\n$7\r\nmessage\r\n$18\r\n__keyevent@0__:set\r\n$1\r\nk\r\n";
    c.send_cmd(&["SET", "k", "v"]).unwrap();
    expect(&mut c, event, "keyevent push before SET's reply");
    expect(&mut c, b"+OK\r\n", "SET reply");
    assert_eq!(c.must(&["MULTI"]), b"+OK\r\n");
    assert_eq!(c.must(&["SET", "k", "w"]), b"+QUEUED\r\n");
    // Redis writes the push while EXEC's array is being built.
    let mut want = b"*1\r\n".to_vec();
    want.extend_from_slice(event);
    want.extend_from_slice(b"+OK\r\n");
    c.send_cmd(&["EXEC"]).unwrap();
    let mut got = Vec::new();
    while got.len() < want.len() {
        match c.read_reply() {
            Ok(r) => got.extend_from_slice(&r),
            Err(e) => panic!("EXEC: {e}; so far {}", escape(&got)),
        }
    }
    assert_eq!(escape(&got), escape(&want), "EXEC with a push inside");
    assert_eq!(
        c.must(&["CONFIG", "SET", "notify-keyspace-events", ""]),
        b"+OK\r\n"
    );
}

/// Send a (un)subscribe command with one argument; expect a push reply.
fn expect_push(c: &mut Conn, args: &[&str]) {
    let r = c.cmd(args).expect("reply");
    assert!(r.starts_with(b">3\r\n"), "{}", escape(&r));
}
