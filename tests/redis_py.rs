//! redis-py, the most used Python client, against redis-lite.
//!
//! redis-py's handshake differs from redis-rs (CLIENT SETINFO, HELLO 3 with
//! `protocol=3`, response callbacks that parse INFO and CONFIG GET), so it
//! catches reply-shape mistakes the Rust tests do not. Needs `python3` with
//! the `redis` package (`python3 -m pip install redis`); the usual rule
//! applies: SKIPPED locally when missing, a failure under CI=true.
//!
//! The features script (transactions, WATCH, Pub/Sub, keyspace
//! notifications, register_script, EVAL, FUNCTION/FCALL) both asserts and
//! prints a transcript; the test runs it against redis-lite and, when
//! installed, a real redis-server, and the transcripts must be identical.

mod common;

use common::{in_ci, which, RealRedis, Server};
use std::path::{Path, PathBuf};
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

/// Transactions, Pub/Sub, keyspace notifications, scripts and functions,
/// once per protocol. Asserts what it can on its own and prints a transcript
/// of everything it saw, which the test compares with a real redis-server's.
const FEATURES_SCRIPT: &str = r##"
import sys, time, redis
port = int(sys.argv[1])
def out(*a):
    print(*a, flush=True)
for proto in (2, 3):
    out("== protocol", proto)
    r = redis.Redis(host="127.0.0.1", port=port, protocol=proto, socket_timeout=10)
    other = redis.Redis(host="127.0.0.1", port=port, protocol=proto, socket_timeout=10)
    r.flushall()
    r.function_flush()  # FLUSHALL keeps libraries

    # MULTI/EXEC through a transactional pipeline.
    p = r.pipeline(transaction=True)
    p.set("tx:a", 1).incr("tx:a").get("tx:a").lpush("tx:a", "x").incrby("tx:a", 10)
    res = p.execute(raise_on_error=False)
    out("pipeline", res[:3], type(res[3]).__name__, str(res[3]), res[4])
    assert res[:3] == [True, 2, b"2"] and res[4] == 12, res
    assert isinstance(res[3], redis.ResponseError)
    p = r.pipeline(transaction=True)
    p.set("tx:b", "v").get("tx:b")
    assert p.execute() == [True, b"v"]

    # r.transaction: WATCH, a concurrent writer, one retry.
    calls = []
    def incr_watched(pipe):
        v = int(pipe.get("tx:ctr") or 0)
        calls.append(v)
        if len(calls) == 1:
            other.set("tx:ctr", 100)
        pipe.multi()
        pipe.set("tx:ctr", v + 1)
        pipe.get("tx:ctr")
    res = r.transaction(incr_watched, "tx:ctr")
    out("transaction", res, calls)
    assert res == [True, b"101"] and calls == [0, 100], (res, calls)
    # WATCH by hand: an untouched key lets EXEC through.
    with r.pipeline() as pipe:
        pipe.watch("tx:w")
        assert pipe.get("tx:w") is None
        pipe.multi()
        pipe.set("tx:w", "ok")
        assert pipe.execute() == [True]
    try:
        with r.pipeline() as pipe:
            pipe.watch("tx:w")
            other.delete("tx:w")
            pipe.multi()
            pipe.set("tx:w", "lost")
            pipe.execute()
        raise SystemExit("EXEC after a touched WATCH did not fail")
    except redis.WatchError as e:
        out("watch error", e)
    assert r.get("tx:w") is None

    # Pub/Sub: channels and patterns, messages from another connection.
    ps = r.pubsub()
    ps.subscribe("ch1", "ch2")
    ps.psubscribe("ch*")
    def drain(ps, n):
        # Exactly n messages (patiently), then nothing more.
        got = []
        for _ in range(n):
            m = ps.get_message(timeout=5.0)
            if m is None:
                raise SystemExit(f"expected {n} messages, got {got}")
            got.append((m["type"], m["pattern"], m["channel"], m["data"]))
        extra = ps.get_message(timeout=0.1)
        assert extra is None, (got, extra)
        return got
    for m in drain(ps, 3): out("sub", m)
    assert other.publish("ch1", "hello") == 2
    assert other.publish("cha", "only pattern") == 1
    assert other.publish("zzz", "nobody") == 0
    got = drain(ps, 3)
    for m in got: out("msg", m)
    assert [m[0] for m in got] == ["message", "pmessage", "pmessage"], got
    out("numsub", sorted(other.pubsub_numsub("ch1", "ch2", "nope")), other.pubsub_numpat(),
        sorted(other.pubsub_channels()))
    ps.unsubscribe()
    ps.punsubscribe("ch*")
    # UNSUBSCRIBE with no argument walks the client's channel dict, whose
    # order is Redis's hash order: compare the set, and the final count.
    got = drain(ps, 3)
    out("unsub", sorted((m[0], m[2]) for m in got), got[-1][3])
    assert other.publish("ch1", "gone") == 0
    ps.close()
    # run_in_thread with a handler.
    seen = []
    ps = r.pubsub()
    ps.subscribe(**{"thr": lambda m: seen.append(m["data"])})
    th = ps.run_in_thread(sleep_time=0.01, daemon=True)
    deadline = time.time() + 5
    while other.pubsub_numsub("thr")[0][1] == 0 and time.time() < deadline:
        time.sleep(0.01)
    for i in range(3):
        other.publish("thr", f"m{i}")
    while len(seen) < 3 and time.time() < deadline:
        time.sleep(0.01)
    th.stop()
    th.join(5)
    ps.close()
    out("thread", seen)
    assert seen == [b"m0", b"m1", b"m2"], seen

    # Keyspace notifications.
    assert r.config_set("notify-keyspace-events", "KEA") is True
    out("notify config", r.config_get("notify-keyspace-events"))
    ps = r.pubsub()
    ps.psubscribe("__keyspace@0__:*", "__keyevent@0__:*")
    for m in drain(ps, 2): out("ks sub", m)
    other.set("nk", "v")
    other.expire("nk", 100)
    other.lpush("nl", 1)
    other.rpop("nl")
    other.delete("nk")
    other.set("ne", 1, px=1)
    time.sleep(0.2)
    other.get("ne")
    other.eval("redis.call('set', KEYS[1], 'x')", 1, "nlua")
    tp = other.pipeline(transaction=True)
    tp.incr("nm")
    tp.hset("nh", "f", "v")
    tp.execute()
    got = drain(ps, 24)
    for m in got: out("ks", m)
    assert (b"__keyspace@0__:nk", b"set") in [(m[2], m[3]) for m in got], got
    assert (b"__keyevent@0__:expired", b"ne") in [(m[2], m[3]) for m in got], got
    ps.close()
    r.config_set("notify-keyspace-events", "")

    # Scripts: register_script is EVALSHA with a NOSCRIPT fallback.
    s = r.register_script("return {KEYS[1], ARGV[1], redis.call('incr', KEYS[1])}")
    r.script_flush()
    out("script", s(keys=["sk"], args=["x"]), s(keys=["sk"], args=["y"]))
    assert r.script_exists(s.sha, "0" * 40) == [True, False]
    r.script_flush()
    assert r.script_exists(s.sha) == [False]
    out("script after flush", s(keys=["sk"], args=["z"]))
    out("eval", r.eval("return {1, 'two', false, true, 3.99, {'n', {}}}", 0))
    out("eval status", r.eval("return redis.status_reply('FINE')", 0))
    out("evalsha", r.evalsha(r.script_load("return ARGV[1]"), 0, "arg"))
    for bad in ("return redis.error_reply('MY err')", "return redis.call('nosuch')", "return +"):
        try:
            r.eval(bad, 0)
            raise SystemExit(f"{bad!r} did not fail")
        except redis.ResponseError as e:
            out("eval error", e)
    try:
        r.evalsha("0" * 40, 0)
    except redis.exceptions.NoScriptError as e:
        out("noscript", e)

    # Functions.
    code = ("#!lua name=pylib\n"
            "redis.register_function('add', function(k, a) return redis.call('incrby', k[1], a[1]) end)\n"
            "redis.register_function{function_name='peek', callback=function(k, a) return redis.call('get', k[1]) end, "
            "flags={'no-writes'}, description='read only'}\n")
    assert r.function_load(code) == b"pylib"
    try:
        r.function_load(code)
    except redis.ResponseError as e:
        out("function exists", e)
    out("function replace", r.function_load(code, replace=True))
    out("fcall", r.fcall("add", 1, "fk", 3), r.fcall("add", 1, "fk", 4), r.fcall_ro("peek", 1, "fk"))
    try:
        r.fcall_ro("add", 1, "fk", 1)
    except redis.ResponseError as e:
        out("fcall_ro error", e)
    def norm(libs):
        # Functions inside a library come in dict order: sort them by name.
        res = []
        for lib in libs:
            lib = dict(lib) if isinstance(lib, dict) else dict(zip(lib[::2], lib[1::2]))
            fns = []
            for f in lib[b"functions"]:
                f = dict(f) if isinstance(f, dict) else dict(zip(f[::2], f[1::2]))
                fns.append(sorted(f.items(), key=lambda kv: kv[0]))
            lib[b"functions"] = sorted(fns, key=lambda f: dict(f)[b"name"])
            res.append(sorted(lib.items(), key=lambda kv: kv[0]))
        return res
    out("function list", norm(r.function_list()))
    out("function list code", norm(r.function_list(library="py*", withcode=True)))
    assert r.function_delete("pylib") in (True, b"OK")
    out("function list empty", r.function_list())
    r.flushall()
print("redis-py features OK")
"##;

#[test]
fn redis_py_basic_commands() {
    let Some(py) = python_with_redis() else {
        return;
    };
    let srv = Server::start();
    run_script(&py, SCRIPT, srv.port);
}

/// redis-py's MULTI/EXEC, WATCH, Pub/Sub (RESP2 and RESP3 pushes), keyspace
/// notifications, register_script, EVAL and FUNCTION/FCALL: the script's
/// transcript must be the same against redis-lite and redis-server.
#[test]
fn redis_py_transactions_pubsub_scripts_functions() {
    let Some(py) = python_with_redis() else {
        return;
    };
    let srv = Server::start();
    let lite = run_script(&py, FEATURES_SCRIPT, srv.port);
    let Some(real) = RealRedis::start() else {
        return;
    };
    let want = run_script(&py, FEATURES_SCRIPT, real.port);
    if lite != want {
        let diff: Vec<String> = lite
            .lines()
            .zip(want.lines())
            .filter(|(a, b)| a != b)
            .map(|(a, b)| format!("  redis-lite: {a}\n  redis     : {b}"))
            .collect();
        panic!(
            "redis-py transcript differs from redis-server's ({} vs {} lines):\n{}",
            lite.lines().count(),
            want.lines().count(),
            diff.join("\n")
        );
    }
}

/// `python3` when it can `import redis`; otherwise the skip/fail rule.
fn python_with_redis() -> Option<PathBuf> {
    let Some(py) = which("python3") else {
        skip_or_fail("python3 not found");
        return None;
    };
    let has_redis = Command::new(&py)
        .args(["-c", "import redis"])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !has_redis {
        skip_or_fail("redis-py not installed (python3 -m pip install redis)");
        return None;
    }
    Some(py)
}

/// Run a script with the port as its argument; its stdout, or a panic with
/// the traceback when it exits non-zero.
fn run_script(py: &Path, script: &str, port: u16) -> String {
    let out = Command::new(py)
        .args(["-c", script, &port.to_string()])
        .output()
        .expect("run python3");
    assert!(
        out.status.success(),
        "redis-py script failed (port {port}):\nstdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn skip_or_fail(why: &str) {
    if in_ci() {
        panic!("CI=true and {why}");
    }
    common::skipped(why);
}

/// redis-py's memory_stats() (its MEMORY STATS parser, nested db.N maps
/// included) in both protocols: the keys, their order and value types must
/// be redis-server's, and the numbers must make sense.
const MEMORY_STATS_SCRIPT: &str = r#"
import sys, redis
port = int(sys.argv[1])
for proto in (2, 3):
    r = redis.Redis(host="127.0.0.1", port=port, protocol=proto, socket_timeout=10)
    r.flushall()
    r.set("m:a", "1")
    r.execute_command("SELECT", "2")
    r.set("m:b", "x" * 1000)
    s = r.memory_stats()
    assert s["keys.count"] == 2, s
    assert s["total.allocated"] > 0 and s["peak.allocated"] >= s["total.allocated"], s
    assert s["overhead.total"] + s["dataset.bytes"] == s["total.allocated"], s
    assert set(s["db.0"]) == {"overhead.hashtable.main", "overhead.hashtable.expires",
                              "overhead.hashtable.slot-to-keys"}, s
    print(proto, [(k, type(v).__name__) for k, v in s.items()])
    assert r.memory_purge() is True
    r.flushall()
print("memory_stats OK")
"#;

#[test]
fn redis_py_memory_stats() {
    let Some(py) = python_with_redis() else {
        return;
    };
    let srv = Server::start();
    let lite = run_script(&py, MEMORY_STATS_SCRIPT, srv.port);
    assert!(lite.ends_with("memory_stats OK\n"), "{lite}");
    let Some(real) = RealRedis::start() else {
        return;
    };
    let want = run_script(&py, MEMORY_STATS_SCRIPT, real.port);
    assert_eq!(
        lite, want,
        "redis-py memory_stats: redis-lite vs redis-server"
    );
}
