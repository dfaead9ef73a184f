//! A real client library against redis-lite: the `redis` crate (redis-rs).
//!
//! These tests protect what applications see: the connection handshake the
//! crate performs (CLIENT SETINFO pipelined, errors ignored; HELLO 3 for
//! RESP3), typed replies, pipelines (10k commands in one write), and a frame
//! that arrives one byte per TCP segment. Each test starts its own server so
//! they run in parallel without sharing keys.

mod common;

use common::{Conn, Server};
use redis::{Commands, Value};
use std::io::Write;
use std::time::Duration;

fn client(port: u16) -> redis::Connection {
    let c = redis::Client::open(format!("redis://127.0.0.1:{port}/")).expect("client url");
    let con = c
        .get_connection_with_timeout(Duration::from_secs(10))
        .expect("connect with redis-rs");
    con.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("read timeout");
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
