//! redis-py, the most used Python client, against redis-lite.
//!
//! redis-py's handshake differs from redis-rs (CLIENT SETINFO, HELLO 3 with
//! `protocol=3`, response callbacks that parse INFO and CONFIG GET), so it
//! catches reply-shape mistakes the Rust tests do not. Needs `python3` with
//! the `redis` package (`python3 -m pip install redis`); the usual rule
//! applies: SKIPPED locally when missing, a failure under CI=true.

mod common;

use common::{in_ci, which, Server};
use std::process::Command;

/// The script exits non-zero (with a traceback) on the first wrong answer.
const SCRIPT: &str = r#"
import sys, redis
port = int(sys.argv[1])
for proto in (2, 3):
    r = redis.Redis(host="127.0.0.1", port=port, protocol=proto, socket_timeout=10)
    assert r.ping() is True
    assert r.set("py:a", "1") is True
    assert r.get("py:a") == b"1"
    assert r.get("py:missing") is None
    assert r.incr("py:a") == 2
    assert r.incrby("py:a", 40) == 42
    assert r.mget(["py:a", "py:missing"]) == [b"42", None]
    assert r.exists("py:a", "py:missing") == 1
    assert r.set("py:t", "v", ex=100) is True
    assert 0 < r.ttl("py:t") <= 100
    assert r.delete("py:a", "py:t", "py:missing") == 2
    p = r.pipeline(transaction=False)
    for i in range(1000):
        p.set(f"py:k{i}", i)
    for i in range(1000):
        p.get(f"py:k{i}")
    res = p.execute()
    assert res[:1000] == [True] * 1000
    assert res[1000:] == [str(i).encode() for i in range(1000)]
    try:
        r.set("py:s", "x")
        r.incr("py:s")
        raise SystemExit("INCR on a non-integer did not fail")
    except redis.ResponseError as e:
        assert "value is not an integer" in str(e), str(e)
    info = r.info("server")
    assert info["redis_version"] == "7.0.15", info
    r.flushall()
print("redis-py OK")
"#;

#[test]
fn redis_py_basic_commands() {
    let Some(py) = which("python3") else {
        return skip_or_fail("python3 not found");
    };
    let has_redis = Command::new(&py)
        .args(["-c", "import redis"])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !has_redis {
        return skip_or_fail("redis-py not installed (python3 -m pip install redis)");
    }
    let srv = Server::start();
    let out = Command::new(&py)
        .args(["-c", SCRIPT, &srv.port.to_string()])
        .output()
        .expect("run python3");
    assert!(
        out.status.success(),
        "redis-py script failed:\nstdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn skip_or_fail(why: &str) {
    if in_ci() {
        panic!("CI=true and {why}");
    }
    common::skipped(why);
}
