//! A real client library against redis-lite: the `redis` crate (redis-rs).
//!
//! These tests protect what applications see: the connection handshake the
//! crate performs (CLIENT SETINFO pipelined, errors ignored; HELLO 3 for
//! RESP3), typed replies, pipelines (10k commands in one write), and a frame
//! that arrives one byte per TCP segment. Each test starts its own server so
//! they run in parallel without sharing keys.
//!
//! The second half drives the crate's own helpers for the server's newer
//! features, under RESP2 and RESP3: `redis::transaction` (WATCH and a retry
//! loop forced by a concurrent writer), `pipe().atomic()` (MULTI/EXEC,
//! EXECABORT), `as_pubsub()`, `Script::invoke` (EVALSHA with the NOSCRIPT ->
//! SCRIPT LOAD fallback, counted in INFO commandstats) and RESP3 push frames
//! delivered to a `set_push_sender` channel. Every test here also passes with
//! `REDIS_LITE_BIN=/usr/bin/redis-server`, which is how the expectations were
//! checked.

mod common;

use common::{Conn, Server};
use redis::{Commands, Value};
use std::io::Write;
use std::time::Duration;

fn client(port: u16) -> redis::Connection {
    client_with(port, false)
}

/// A connection speaking RESP2, or RESP3 (`HELLO 3` in the handshake).
fn client_with(port: u16, resp3: bool) -> redis::Connection {
    let proto = if resp3 { "?protocol=resp3" } else { "" };
    let c = redis::Client::open(format!("redis://127.0.0.1:{port}/{proto}")).expect("client url");
    let con = c
        .get_connection_with_timeout(Duration::from_secs(10))
        .expect("connect with redis-rs");
    con.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("read timeout");
    con
}

/// A connection to a server emptied of keys, scripts, functions and
/// statistics, so each protocol's run of a test starts from scratch.
fn fresh_client(port: u16, resp3: bool) -> redis::Connection {
    let mut con = client_with(port, resp3);
    for cmd in [
        &["FLUSHALL"][..],
        &["FUNCTION", "FLUSH"],
        &["SCRIPT", "FLUSH"],
        &["CONFIG", "RESETSTAT"],
    ] {
        let _: () = redis::cmd(cmd[0])
            .arg(&cmd[1..])
            .query(&mut con)
            .unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    }
    con
}

#[test]
fn redis_rs_set_get_mget_incr() {
    let srv = Server::start();
    let mut con = client(srv.port);
    let pong: String = redis::cmd("PING").query(&mut con).expect("PING");
    assert_eq!(pong, "PONG");
    let _: () = con.set("k1", "v1").expect("SET");
    let _: () = con
        .set("k2", b"bin\x00\r\n".as_slice())
        .expect("SET binary");
    let v: String = con.get("k1").expect("GET");
    assert_eq!(v, "v1");
    let v: Vec<u8> = con.get("k2").expect("GET binary");
    assert_eq!(v, b"bin\x00\r\n");
    let missing: Option<String> = con.get("nope").expect("GET missing");
    assert_eq!(missing, None);
    let all: Vec<Option<String>> = con.mget(&["k1", "nope", "k1"]).expect("MGET");
    assert_eq!(all, vec![Some("v1".into()), None, Some("v1".into())]);
    let n: i64 = con.incr("ctr", 1).expect("INCR");
    assert_eq!(n, 1);
    let n: i64 = con.incr("ctr", 41).expect("INCRBY");
    assert_eq!(n, 42);
    let err = con
        .incr::<_, _, i64>("k1", 1)
        .expect_err("INCR on a non-integer must fail");
    assert!(
        err.to_string()
            .contains("value is not an integer or out of range"),
        "unexpected error text: {err}"
    );
    // The connection survives a command error.
    let v: String = con.get("k1").expect("GET after error");
    assert_eq!(v, "v1");
}

#[test]
fn redis_rs_select_isolates_dbs() {
    let srv = Server::start();
    let mut con = client(srv.port);
    let _: () = redis::cmd("SELECT")
        .arg(3)
        .query(&mut con)
        .expect("SELECT 3");
    let _: () = con.set("k", "in3").expect("SET");
    let _: () = redis::cmd("SELECT")
        .arg(0)
        .query(&mut con)
        .expect("SELECT 0");
    let v: Option<String> = con.get("k").expect("GET");
    assert_eq!(v, None, "db 0 must not see db 3's key");
    // URL with a db number: the crate sends SELECT during the handshake.
    let c = redis::Client::open(format!("redis://127.0.0.1:{}/3", srv.port)).expect("url");
    let mut con3 = c.get_connection().expect("connect to db 3");
    let v: Option<String> = con3.get("k").expect("GET in db 3");
    assert_eq!(v.as_deref(), Some("in3"));
}

#[test]
fn redis_rs_pipeline_and_atomic() {
    let srv = Server::start();
    let mut con = client(srv.port);
    let (a, b, c): (String, i64, Option<String>) = redis::pipe()
        .set("p1", "x")
        .ignore()
        .get("p1")
        .incr("p2", 5)
        .get("nope")
        .query(&mut con)
        .expect("pipeline");
    assert_eq!((a.as_str(), b, c), ("x", 5, None));
}

#[test]
fn redis_rs_pipeline_of_10k_commands() {
    let srv = Server::start();
    let mut con = client(srv.port);
    const N: usize = 10_000;
    let mut p = redis::pipe();
    for i in 0..N {
        p.set(format!("key:{i}"), i).ignore();
    }
    for i in 0..N {
        p.incr(format!("key:{i}"), 1);
    }
    let got: Vec<i64> = p.query(&mut con).expect("10k pipeline");
    assert_eq!(got.len(), N);
    for (i, v) in got.iter().enumerate() {
        assert_eq!(*v, i as i64 + 1, "reply {i} out of order or wrong");
    }
    let n: i64 = redis::cmd("DBSIZE").query(&mut con).expect("DBSIZE");
    assert_eq!(n, N as i64);
    let vals: Vec<i64> = con.mget(&["key:0", "key:9999"]).expect("MGET");
    assert_eq!(vals, vec![1, 10_000]);
}

#[test]
fn frame_split_into_one_byte_writes() {
    let srv = Server::start();
    let mut c = Conn::connect(srv.port).expect("connect");
    let frame = b"*3\r\n$3\r\nSET\r\n$5\r\nsplit\r\n$12\r\nhello\r\nworld\r\n";
    for b in frame.iter() {
        c.stream.write_all(&[*b]).expect("write 1 byte");
        c.stream.flush().expect("flush");
        // Give the server a chance to read each byte separately.
        std::thread::sleep(Duration::from_millis(2));
    }
    assert_eq!(c.read_reply().expect("SET reply"), b"+OK\r\n");
    // An inline command split the same way, then a multibulk cut mid-length.
    for chunk in [
        &b"GE"[..],
        b"T spl",
        b"it\r",
        b"\n",
        b"*2\r\n$",
        b"3\r\nGET\r\n$5\r",
        b"\nsplit\r\n",
    ] {
        c.stream.write_all(chunk).expect("write chunk");
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(
        c.read_reply().expect("GET reply"),
        b"$12\r\nhello\r\nworld\r\n"
    );
    assert_eq!(
        c.read_reply().expect("GET reply"),
        b"$12\r\nhello\r\nworld\r\n"
    );
}

#[test]
fn redis_rs_resp3_via_hello() {
    let srv = Server::start();
    let c = redis::Client::open(format!("redis://127.0.0.1:{}/?protocol=resp3", srv.port))
        .expect("url");
    let mut con = c
        .get_connection_with_timeout(Duration::from_secs(10))
        .expect("RESP3 connect (HELLO 3)");
    let _: () = con.set("r3", "v").expect("SET");
    let v: Value = redis::cmd("GET")
        .arg("nope")
        .query(&mut con)
        .expect("GET missing");
    assert_eq!(v, Value::Nil, "RESP3 null");
    let v: Value = redis::cmd("HELLO").arg(3).query(&mut con).expect("HELLO 3");
    let Value::Map(pairs) = v else {
        panic!("HELLO 3 must reply with a RESP3 map, got {v:?}")
    };
    let find = |k: &str| {
        pairs
            .iter()
            .find(|(key, _)| matches!(key, Value::BulkString(b) if b == k.as_bytes()))
            .map(|(_, v)| v.clone())
    };
    assert_eq!(find("server"), Some(Value::BulkString(b"redis".to_vec())));
    assert_eq!(find("version"), Some(Value::BulkString(b"7.0.15".to_vec())));
    assert_eq!(find("proto"), Some(Value::Int(3)));
    // Raw check of the same over TCP: the HELLO reply is a %7 map.
    let mut raw = Conn::connect(srv.port).expect("connect");
    let r = raw.cmd(&["HELLO", "3"]).expect("HELLO 3 raw");
    assert!(
        r.starts_with(b"%7\r\n"),
        "HELLO 3 raw reply: {}",
        common::escape(&r)
    );
    assert_eq!(raw.cmd(&["GET", "nope"]).expect("GET"), b"_\r\n");
}

#[test]
fn redis_rs_survives_server_errors_in_pipeline() {
    let srv = Server::start();
    let mut con = client(srv.port);
    let r: redis::RedisResult<(String, i64)> = redis::pipe()
        .set("e", "notanumber")
        .incr("e", 1)
        .query(&mut con);
    assert!(
        r.is_err(),
        "pipeline with a failing INCR must report the error"
    );
    let pong: String = redis::cmd("PING")
        .query(&mut con)
        .expect("connection still usable");
    assert_eq!(pong, "PONG");
}

// ---------------------------------------------------------------------------
// Transactions, Pub/Sub and scripting through redis-rs's own helpers
// ---------------------------------------------------------------------------

/// `calls=N` of one `cmdstat_<name>` line of INFO commandstats (0 if absent).
fn cmdstat_calls(con: &mut redis::Connection, name: &str) -> i64 {
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query(con)
        .expect("INFO commandstats");
    let prefix = format!("cmdstat_{name}:calls=");
    info.lines()
        .find_map(|l| l.strip_prefix(prefix.as_str()))
        .and_then(|rest| rest.split(',').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// `redis::transaction` is WATCH + GET + MULTI/EXEC in a loop that retries
/// while EXEC answers a null array. A second connection writes the watched key
/// between WATCH and EXEC on the first attempt, so EXEC must abort once and
/// the retry must see the other writer's value.
#[test]
fn redis_rs_transaction_retries_when_watched_key_changes() {
    let srv = Server::start();
    for resp3 in [false, true] {
        redis_rs_transaction_retries_when_watched_key_changes_with(srv.port, resp3);
    }
}

fn redis_rs_transaction_retries_when_watched_key_changes_with(port: u16, resp3: bool) {
    let mut con = fresh_client(port, resp3);
    let mut other = client_with(port, resp3);
    let _: () = con.set("balance", 10).expect("SET");
    let mut attempts = 0;
    let (new_balance,): (i64,) = redis::transaction(&mut con, &["balance"], |con, pipe| {
        attempts += 1;
        let old: i64 = con.get("balance")?;
        if attempts == 1 {
            // A concurrent writer touches the watched key: EXEC must fail.
            let _: () = other.set("balance", 100)?;
        }
        pipe.set("balance", old + 1)
            .ignore()
            .get("balance")
            .query(con)
    })
    .expect("transaction");
    assert_eq!(attempts, 2, "exactly one retry after the concurrent write");
    assert_eq!(
        new_balance, 101,
        "the retry read the concurrent writer's value"
    );
    let v: i64 = con.get("balance").expect("GET");
    assert_eq!(v, 101);
    // The helper leaves no WATCH behind: a later transaction on another key
    // is not disturbed by writes to `balance`.
    let _: () = other.set("balance", 0).expect("SET");
    let (n,): (i64,) = redis::pipe()
        .atomic()
        .incr("other", 1)
        .query(&mut con)
        .expect("MULTI/EXEC after the transaction");
    assert_eq!(n, 1);
}

/// `pipe().atomic()` wraps the commands in MULTI/EXEC: the replies come back
/// from EXEC's array; a runtime error inside EXEC does not roll back the
/// others; a command rejected while queueing aborts the whole EXEC.
#[test]
fn redis_rs_atomic_pipeline_is_multi_exec() {
    let srv = Server::start();
    for resp3 in [false, true] {
        redis_rs_atomic_pipeline_is_multi_exec_with(srv.port, resp3);
    }
}

fn redis_rs_atomic_pipeline_is_multi_exec_with(port: u16, resp3: bool) {
    let mut con = fresh_client(port, resp3);
    let (a, b, c): (String, i64, Vec<String>) = redis::pipe()
        .atomic()
        .set("t:s", "x")
        .ignore()
        .get("t:s")
        .incr("t:n", 7)
        .rpush("t:l", &["a", "b"])
        .ignore()
        .lrange("t:l", 0, -1)
        .query(&mut con)
        .expect("atomic pipeline");
    assert_eq!((a.as_str(), b, c), ("x", 7, vec!["a".into(), "b".into()]));

    // Runtime error (WRONGTYPE) inside EXEC: the error reaches the caller,
    // the INCR queued after it still ran.
    let r: redis::RedisResult<(i64, i64)> = redis::pipe()
        .atomic()
        .lpush("t:s", "boom")
        .incr("t:n", 1)
        .query(&mut con);
    let err = r.expect_err("WRONGTYPE inside EXEC must surface");
    assert!(err.to_string().contains("WRONGTYPE"), "unexpected: {err}");
    let n: i64 = con.get("t:n").expect("GET");
    assert_eq!(n, 8, "MULTI/EXEC does not roll back");

    // Queue-time error (wrong arity): EXECABORT, nothing ran.
    let r: redis::RedisResult<Value> = redis::pipe()
        .atomic()
        .incr("t:n", 1)
        .cmd("GET")
        .query(&mut con);
    let err = r.expect_err("wrong arity must abort the transaction");
    assert!(
        err.to_string()
            .contains("wrong number of arguments for 'get' command"),
        "unexpected: {err}"
    );
    let n: i64 = con.get("t:n").expect("GET");
    assert_eq!(n, 8, "EXECABORT ran nothing");
    // The connection is out of MULTI state afterwards.
    let pong: String = redis::cmd("PING").query(&mut con).expect("PING");
    assert_eq!(pong, "PONG");
}

/// `as_pubsub()`: SUBSCRIBE and PSUBSCRIBE on one connection, messages
/// published from another, UNSUBSCRIBE, and the connection back to normal
/// commands once the PubSub handle is dropped.
#[test]
fn redis_rs_pubsub_subscribe_psubscribe_unsubscribe() {
    let srv = Server::start();
    for resp3 in [false, true] {
        redis_rs_pubsub_subscribe_psubscribe_unsubscribe_with(srv.port, resp3);
    }
}

fn redis_rs_pubsub_subscribe_psubscribe_unsubscribe_with(port: u16, resp3: bool) {
    let proto = if resp3 { "?protocol=resp3" } else { "" };
    let c = redis::Client::open(format!("redis://127.0.0.1:{port}/{proto}")).expect("url");
    let mut sub_con = c.get_connection().expect("connect");
    let mut publisher = client_with(port, resp3);
    {
        let mut ps = sub_con.as_pubsub();
        ps.set_read_timeout(Some(Duration::from_secs(5)))
            .expect("read timeout");
        ps.subscribe("news").expect("SUBSCRIBE");
        ps.psubscribe("n*").expect("PSUBSCRIBE");
        // PING while subscribed: RESP2 replies [pong, ""], RESP3 a plain PONG.
        let pong: Value = ps.ping().expect("PING in subscribed state");
        let want = if resp3 {
            Value::SimpleString("PONG".into())
        } else {
            Value::Array(vec![
                Value::BulkString(b"pong".to_vec()),
                Value::BulkString(b"".to_vec()),
            ])
        };
        assert_eq!(pong, want);

        let receivers: i64 = publisher.publish("news", "hello").expect("PUBLISH");
        assert_eq!(receivers, 2, "one channel and one pattern subscriber");
        let m = ps.get_message().expect("message");
        assert_eq!(m.get_channel_name(), "news");
        assert!(!m.from_pattern());
        assert_eq!(m.get_payload::<String>().expect("payload"), "hello");
        let m = ps.get_message().expect("pmessage");
        assert!(m.from_pattern());
        assert_eq!(m.get_pattern::<String>().expect("pattern"), "n*");
        assert_eq!(m.get_channel_name(), "news");
        assert_eq!(m.get_payload_bytes(), b"hello");

        // Only the pattern matches this channel.
        let receivers: i64 = publisher
            .publish("nope", b"\x00bin".as_slice())
            .expect("PUBLISH");
        assert_eq!(receivers, 1);
        let m = ps.get_message().expect("pmessage");
        assert_eq!(
            (m.get_channel_name(), m.get_payload_bytes()),
            ("nope", &b"\x00bin"[..])
        );

        ps.unsubscribe("news").expect("UNSUBSCRIBE");
        let receivers: i64 = publisher.publish("news", "again").expect("PUBLISH");
        assert_eq!(receivers, 1, "only the pattern is left");
        let m = ps.get_message().expect("pmessage after UNSUBSCRIBE");
        assert!(m.from_pattern());
        assert_eq!(m.get_payload::<String>().expect("payload"), "again");
        ps.punsubscribe("n*").expect("PUNSUBSCRIBE");
        let receivers: i64 = publisher.publish("news", "gone").expect("PUBLISH");
        assert_eq!(receivers, 0);
    }
    // PubSub's Drop leaves subscribed mode; ordinary commands work again.
    let _: () = sub_con.set("after", "sub").expect("SET after pubsub");
    let v: String = sub_con.get("after").expect("GET after pubsub");
    assert_eq!(v, "sub");
    let n: i64 = redis::cmd("PUBSUB")
        .arg("NUMPAT")
        .query(&mut publisher)
        .expect("PUBSUB NUMPAT");
    assert_eq!(n, 0);
}

/// `Script::invoke` sends EVALSHA and, on NOSCRIPT, SCRIPT LOAD then EVALSHA
/// again. Both paths are checked through INFO commandstats, including after
/// SCRIPT FLUSH empties the cache.
#[test]
fn redis_rs_script_invoke_falls_back_on_noscript() {
    let srv = Server::start();
    for resp3 in [false, true] {
        redis_rs_script_invoke_falls_back_on_noscript_with(srv.port, resp3);
    }
}

fn redis_rs_script_invoke_falls_back_on_noscript_with(port: u16, resp3: bool) {
    let mut con = fresh_client(port, resp3);
    let script = redis::Script::new(
        "redis.call('SET', KEYS[1], ARGV[1]) \
         return {KEYS[1], redis.call('INCRBY', KEYS[2], ARGV[2]), ARGV[1]}",
    );
    let run = |con: &mut redis::Connection, by: i64| -> (String, i64, String) {
        script
            .key("s:str")
            .key("s:ctr")
            .arg("val")
            .arg(by)
            .invoke(con)
            .expect("Script::invoke")
    };
    // Cold cache: EVALSHA fails with NOSCRIPT, the crate loads and retries.
    assert_eq!(run(&mut con, 2), ("s:str".into(), 2, "val".into()));
    assert_eq!(cmdstat_calls(&mut con, "evalsha"), 2);
    assert_eq!(cmdstat_calls(&mut con, "script|load"), 1);
    let exists: Vec<bool> = redis::cmd("SCRIPT")
        .arg("EXISTS")
        .arg(script.get_hash())
        .query(&mut con)
        .expect("SCRIPT EXISTS");
    assert_eq!(exists, vec![true], "the crate's SHA1 matches the server's");
    // Warm cache: a single EVALSHA.
    assert_eq!(run(&mut con, 3), ("s:str".into(), 5, "val".into()));
    assert_eq!(cmdstat_calls(&mut con, "evalsha"), 3);
    assert_eq!(cmdstat_calls(&mut con, "script|load"), 1);
    // SCRIPT FLUSH: the fallback path again.
    let _: () = redis::cmd("SCRIPT")
        .arg("FLUSH")
        .query(&mut con)
        .expect("SCRIPT FLUSH");
    assert_eq!(run(&mut con, 4), ("s:str".into(), 9, "val".into()));
    assert_eq!(cmdstat_calls(&mut con, "evalsha"), 5);
    assert_eq!(cmdstat_calls(&mut con, "script|load"), 2);
    let v: String = con.get("s:str").expect("GET");
    assert_eq!(v, "val");

    // Script errors come back as server errors with Redis's text.
    let bad = redis::Script::new("return redis.call('INCR', KEYS[1])");
    let err = bad
        .key("s:str")
        .invoke::<i64>(&mut con)
        .expect_err("INCR on a string from Lua");
    assert!(
        err.to_string()
            .contains("value is not an integer or out of range"),
        "unexpected: {err}"
    );
    let err = redis::Script::new("return +")
        .invoke::<Value>(&mut con)
        .expect_err("syntax error");
    assert!(
        err.to_string().contains("Error compiling script"),
        "unexpected: {err}"
    );
    // FUNCTION LOAD / FCALL through plain commands.
    let lib: String = redis::cmd("FUNCTION")
        .arg("LOAD")
        .arg("#!lua name=rslib\nredis.register_function('add', function(k, a) return redis.call('INCRBY', k[1], a[1]) end)")
        .query(&mut con)
        .expect("FUNCTION LOAD");
    assert_eq!(lib, "rslib");
    let n: i64 = redis::cmd("FCALL")
        .arg("add")
        .arg(1)
        .arg("s:ctr")
        .arg(1)
        .query(&mut con)
        .expect("FCALL");
    assert_eq!(n, 10);
}

/// RESP3 push messages: with `protocol=resp3` and a push sender, redis-rs
/// routes `>` frames (subscribe confirmations and messages) to a channel while
/// ordinary commands keep working on the same connection.
#[test]
fn redis_rs_resp3_push_messages() {
    let srv = Server::start();
    let c = redis::Client::open(format!("redis://127.0.0.1:{}/?protocol=resp3", srv.port))
        .expect("url");
    let mut con = c
        .get_connection_with_timeout(Duration::from_secs(10))
        .expect("RESP3 connect");
    con.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("read timeout");
    let (tx, rx) = std::sync::mpsc::channel();
    con.set_push_sender(tx);
    con.subscribe_resp3("r3chan").expect("SUBSCRIBE");
    con.psubscribe_resp3("r3*").expect("PSUBSCRIBE");
    // In RESP3 a subscribed client may run any command.
    let _: () = con.set("r3key", "v").expect("SET while subscribed");
    let v: String = con.get("r3key").expect("GET while subscribed");
    assert_eq!(v, "v");

    let mut publisher = client(srv.port);
    let n: i64 = publisher.publish("r3chan", "hi").expect("PUBLISH");
    assert_eq!(n, 2);
    // Pushes are delivered while the connection reads; a PING drives it.
    let pong: String = redis::cmd("PING").query(&mut con).expect("PING");
    assert_eq!(pong, "PONG");

    let want = [
        (
            redis::PushKind::Subscribe,
            vec![Value::BulkString(b"r3chan".to_vec()), Value::Int(1)],
        ),
        (
            redis::PushKind::PSubscribe,
            vec![Value::BulkString(b"r3*".to_vec()), Value::Int(2)],
        ),
        (
            redis::PushKind::Message,
            vec![
                Value::BulkString(b"r3chan".to_vec()),
                Value::BulkString(b"hi".to_vec()),
            ],
        ),
        (
            redis::PushKind::PMessage,
            vec![
                Value::BulkString(b"r3*".to_vec()),
                Value::BulkString(b"r3chan".to_vec()),
                Value::BulkString(b"hi".to_vec()),
            ],
        ),
    ];
    for (kind, data) in want {
        let p = rx
            .recv_timeout(Duration::from_secs(5))
            .unwrap_or_else(|_| panic!("no {kind:?} push"));
        assert_eq!((p.kind, p.data), (kind, data));
    }
    con.unsubscribe_resp3("r3chan").expect("UNSUBSCRIBE");
    let _: String = redis::cmd("PING").query(&mut con).expect("PING");
    let p = rx
        .recv_timeout(Duration::from_secs(5))
        .expect("unsubscribe push");
    assert_eq!(
        (p.kind, p.data),
        (
            redis::PushKind::Unsubscribe,
            vec![Value::BulkString(b"r3chan".to_vec()), Value::Int(1)]
        )
    );
}

/// The `qbuf=` / `qbuf-free=` fields of one CLIENT LIST / CLIENT INFO line.
fn qbuf_fields(line: &str) -> (usize, usize) {
    let field = |name: &str| -> usize {
        let start = line
            .find(name)
            .unwrap_or_else(|| panic!("{name} in {line}"))
            + name.len();
        let digits: String = line[start..]
            .chars()
            .take_while(|c| c.is_ascii_digit())
            .collect();
        digits.parse().expect("number")
    };
    (field(" qbuf="), field(" qbuf-free="))
}

/// Redis trims the query buffer only after the whole read is processed, so
/// CLIENT INFO counts itself (26 bytes as RESP), the commands before it in the
/// same read and a partial command after it. Seen from another client, a
/// client that sent one small command keeps a read buffer of at least 16 KB
/// (unit/querybuf's first test); a 400 KB argument leaves a buffer over 32 KB
/// until the cron trims it. Checked with REDIS_LITE_BIN=redis-server too.
#[test]
fn client_info_qbuf_counts_the_commands_of_the_current_read() {
    let srv = Server::start();
    let mut c = Conn::connect(srv.port).expect("connect");
    let info = String::from_utf8(c.must(&["CLIENT", "INFO"])).expect("utf8");
    assert_eq!(qbuf_fields(&info).0, 26, "{info}");
    // PING (14 bytes) + CLIENT INFO (26) + 10 bytes of a PING still partial.
    c.send(b"*1\r\n$4\r\nPING\r\n*2\r\n$6\r\nCLIENT\r\n$4\r\nINFO\r\n*1\r\n$4\r\nPI")
        .expect("send");
    assert_eq!(c.read_reply().expect("PING"), b"+PONG\r\n");
    let info = String::from_utf8(c.read_reply().expect("CLIENT INFO")).expect("utf8");
    assert_eq!(qbuf_fields(&info).0, 50, "{info}");
    c.send(b"NG\r\n").expect("send");
    assert_eq!(c.read_reply().expect("PING"), b"+PONG\r\n");

    let mut other = Conn::connect(srv.port).expect("connect");
    other.must(&["CLIENT", "SETNAME", "watched"]);
    let size_of_watched = |c: &mut Conn| {
        let list = String::from_utf8(c.must(&["CLIENT", "LIST"])).expect("utf8");
        let line = list
            .lines()
            .find(|l| l.contains("name=watched"))
            .expect("line");
        let (qbuf, free) = qbuf_fields(line);
        qbuf + free
    };
    let small = size_of_watched(&mut c);
    assert!((16384..32768).contains(&small), "qbuf+qbuf-free {small}");
    other.must(&["SET", "x", &"A".repeat(400_000)]);
    let big = size_of_watched(&mut c);
    assert!(big > 32768, "qbuf+qbuf-free after a 400 KB argument: {big}");
}
