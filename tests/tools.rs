//! Redis's own tools against redis-lite: redis-benchmark and redis-cli.
//!
//! They are demanding, unforgiving clients: redis-benchmark pipelines and
//! checks every reply type, redis-cli's `--scan` drives a SCAN loop to the
//! end, and its output formatting (`(nil)`, `(error) ...`, `"quoted"`) is a
//! quick check of the reply types. Missing tools follow the harness rule:
//! SKIPPED locally, a failure under CI=true.
//!
//! For transactions, scripting, functions and Pub/Sub the same redis-cli
//! invocations (`--eval file keys , args`, `FUNCTION LOAD "$(cat lib.lua)"`,
//! MULTI/EXEC typed on stdin, subscribe mode) run against both servers and
//! must print the same text; redis-benchmark drives EVAL 20000 times.

mod common;

use common::{require_tool, RealRedis, Server};
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Run a tool with optional stdin and a hard timeout; returns stdout, and
/// panics with stderr on a non-zero exit or a timeout.
fn run(tool: &Path, args: &[&str], stdin: Option<&[u8]>, timeout: Duration) -> String {
    let mut child = Command::new(tool)
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {}: {e}", tool.display()));
    if let Some(input) = stdin {
        let mut si = child.stdin.take().expect("stdin");
        si.write_all(input).expect("write stdin");
    }
    // Read stdout/stderr on threads so a chatty tool cannot block on a full pipe.
    let mut so = child.stdout.take().expect("stdout");
    let mut se = child.stderr.take().expect("stderr");
    let out_t = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = so.read_to_end(&mut s);
        s
    });
    let err_t = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = se.read_to_end(&mut s);
        s
    });
    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Some(st) = child.try_wait().expect("try_wait") {
            break st;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            let out = out_t.join().unwrap_or_default();
            panic!(
                "{} {:?} timed out after {timeout:?}; output so far:\n{}",
                tool.display(),
                args,
                String::from_utf8_lossy(&out)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = String::from_utf8_lossy(&out_t.join().unwrap_or_default()).to_string();
    let err = String::from_utf8_lossy(&err_t.join().unwrap_or_default()).to_string();
    assert!(
        status.success(),
        "{} {:?} failed ({status}):\nstdout:\n{out}\nstderr:\n{err}",
        tool.display(),
        args
    );
    out
}

#[test]
fn redis_benchmark_completes_every_test() {
    let Some(bench) = require_tool("redis-benchmark") else {
        return;
    };
    let srv = Server::start();
    let port = srv.port.to_string();
    let out = run(
        &bench,
        &[
            "-p",
            &port,
            "-q",
            "-n",
            "20000",
            "-P",
            "16",
            "-t",
            "ping,set,get,incr,mset",
        ],
        None,
        Duration::from_secs(300),
    );
    // -q prints progress lines ending in '\r' and one final line per test.
    let finals: Vec<&str> = out
        .split(['\r', '\n'])
        .map(str::trim)
        .filter(|l| l.contains("requests per second"))
        .collect();
    for test in [
        "PING_INLINE",
        "PING_MBULK",
        "SET",
        "GET",
        "INCR",
        "MSET (10 keys)",
    ] {
        let line = finals
            .iter()
            .find(|l| l.starts_with(&format!("{test}:")))
            .unwrap_or_else(|| panic!("redis-benchmark did not finish {test}; output:\n{out}"));
        let rps: f64 = line
            .split(':')
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .and_then(|r| r.parse().ok())
            .unwrap_or(0.0);
        assert!(rps > 0.0, "{test}: no throughput in {line:?}");
    }
    assert!(
        !out.contains("Error"),
        "redis-benchmark reported errors:\n{out}"
    );
    drop(srv);
}

#[test]
fn redis_cli_scan_sees_populated_keys() {
    let Some(cli) = require_tool("redis-cli") else {
        return;
    };
    let srv = Server::start();
    let port = srv.port.to_string();
    let out = run(
        &cli,
        &["-p", &port, "DEBUG", "POPULATE", "100"],
        None,
        Duration::from_secs(30),
    );
    assert_eq!(out.trim(), "OK", "DEBUG POPULATE 100");
    let out = run(
        &cli,
        &["-p", &port, "--scan"],
        None,
        Duration::from_secs(30),
    );
    let mut keys: Vec<&str> = out.lines().filter(|l| !l.is_empty()).collect();
    keys.sort();
    keys.dedup();
    assert_eq!(
        keys.len(),
        100,
        "--scan returned {} distinct keys:\n{out}",
        keys.len()
    );
    assert!(
        keys.iter().all(|k| k.starts_with("key:")),
        "unexpected key names: {keys:?}"
    );
    let out = run(
        &cli,
        &["-p", &port, "--scan", "--pattern", "key:1*"],
        None,
        Duration::from_secs(30),
    );
    assert_eq!(
        out.lines().count(),
        11,
        "--scan --pattern key:1* (key:1, key:10..19):\n{out}"
    );
    let out = run(
        &cli,
        &["-p", &port, "DBSIZE"],
        None,
        Duration::from_secs(30),
    );
    assert_eq!(out.trim(), "100");
}

#[test]
fn redis_cli_info_server() {
    let Some(cli) = require_tool("redis-cli") else {
        return;
    };
    let srv = Server::start();
    let port = srv.port.to_string();
    let out = run(
        &cli,
        &["-p", &port, "INFO", "server"],
        None,
        Duration::from_secs(30),
    );
    assert!(out.contains("# Server"), "INFO server output:\n{out}");
    assert!(
        out.contains("redis_version:7.0.15"),
        "INFO server output:\n{out}"
    );
    assert!(
        out.contains(&format!("tcp_port:{port}")),
        "INFO server output:\n{out}"
    );
}

#[test]
fn redis_cli_reads_commands_from_stdin() {
    let Some(cli) = require_tool("redis-cli") else {
        return;
    };
    let srv = Server::start();
    let port = srv.port.to_string();
    let out = run(
        &cli,
        &["-p", &port],
        Some(b"SET a b\nGET a\nINCR n\nINCR n\n"),
        Duration::from_secs(30),
    );
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        vec!["OK", "b", "1", "2"],
        "stdin mode output:\n{out}"
    );
    let out = run(
        &cli,
        &["-p", &port, "--no-raw", "GET", "a"],
        None,
        Duration::from_secs(30),
    );
    assert_eq!(out.trim_end(), "\"b\"");
}

/// The same redis-cli invocations against both servers print the same text:
/// a cheap check of reply types as redis-cli renders them.
#[test]
fn redis_cli_output_matches_real_redis() {
    let Some(cli) = require_tool("redis-cli") else {
        return;
    };
    let Some(real) = RealRedis::start() else {
        return;
    };
    let lite = Server::start();
    let script: &[&[&str]] = &[
        &["SET", "s", "hello world"],
        &["GET", "s"],
        &["GET", "missing"],
        &["INCR", "s"],
        &["INCR", "n"],
        &["MGET", "s", "missing", "n"],
        &["EXISTS", "s", "n", "missing"],
        &["DEL", "s"],
        &["PING"],
        &["ECHO", "a\nb"],
        &["FOO", "bar"],
        &["TTL", "n"],
        &["TYPE", "n"],
        &["STRLEN", "n"],
        &["APPEND", "n", "0"],
        &["GETRANGE", "n", "0", "-1"],
    ];
    let mut diffs = Vec::new();
    for mode in ["--no-raw", "--raw"] {
        for args in script {
            let mut outs = Vec::new();
            for port in [lite.port, real.port] {
                let p = port.to_string();
                let mut a = vec!["-p", p.as_str(), mode];
                a.extend_from_slice(args);
                outs.push(run(&cli, &a, None, Duration::from_secs(30)));
            }
            if outs[0] != outs[1] {
                diffs.push(format!(
                    "redis-cli {mode} {args:?}\n  redis-lite: {:?}\n  redis     : {:?}",
                    outs[0], outs[1]
                ));
            }
        }
    }
    assert!(
        diffs.is_empty(),
        "redis-cli output differs:\n{}",
        diffs.join("\n")
    );
}

// ---------------------------------------------------------------------------
// Transactions, scripting, functions and Pub/Sub through the tools
// ---------------------------------------------------------------------------

/// Run redis-cli with the same arguments (and stdin) against both servers;
/// a description of the difference, if any.
fn cli_diff(
    cli: &Path,
    lite: u16,
    real: u16,
    args: &[&str],
    stdin: Option<&[u8]>,
) -> Option<String> {
    let mut outs = Vec::new();
    for port in [lite, real] {
        let p = port.to_string();
        let mut a = vec!["-p", p.as_str()];
        a.extend_from_slice(args);
        outs.push(run(cli, &a, stdin, Duration::from_secs(30)));
    }
    (outs[0] != outs[1]).then(|| {
        format!(
            "redis-cli {args:?} stdin={:?}\n  redis-lite: {:?}\n  redis     : {:?}",
            stdin.map(String::from_utf8_lossy),
            outs[0],
            outs[1]
        )
    })
}

/// `redis-cli --eval file key , arg` (EVAL with the file's text and the keys
/// before the comma) prints what it prints against redis-server, for every
/// reply type a script can return and for script errors.
#[test]
fn redis_cli_eval_matches_real_redis() {
    let Some(cli) = require_tool("redis-cli") else {
        return;
    };
    let Some(real) = RealRedis::start() else {
        return;
    };
    let lite = Server::start();
    let scripts = [
        (
            "mixed",
            "redis.call('SET', KEYS[1], ARGV[1])\n\
             return {KEYS[1], ARGV[1], redis.call('GET', KEYS[1]), 3, 2.9, \
             {1, 'nested', {}}, false, true, redis.status_reply('FINE')}\n",
        ),
        ("counter", "return redis.call('INCRBY', KEYS[1], ARGV[1])\n"),
        ("nil", "return redis.call('GET', 'no such key')\n"),
        (
            "error",
            "return redis.error_reply('MYERR custom failure')\n",
        ),
        ("raise", "return redis.call('INCR', KEYS[1])\n"),
        ("syntax", "return +\n"),
        ("unknown", "return redis.call('NOSUCHCMD')\n"),
    ];
    let mut diffs = Vec::new();
    for (name, body) in scripts {
        let path = common::temp_path(&format!("{name}.lua"));
        std::fs::write(&path, body).expect("write script file");
        let file = path.to_str().expect("utf-8 temp path");
        for mode in ["--no-raw", "--raw"] {
            for tail in [&["k1", ",", "5"][..], &["k1", "k2", ",", "a1", "a2"], &[]] {
                let mut args = vec![mode, "--eval", file];
                args.extend_from_slice(tail);
                diffs.extend(cli_diff(&cli, lite.port, real.port, &args, None));
            }
        }
        let _ = std::fs::remove_file(&path);
    }
    assert!(
        diffs.is_empty(),
        "redis-cli --eval output differs:\n{}",
        diffs.join("\n")
    );
}

/// `redis-cli FUNCTION LOAD "$(cat lib.lua)"`: the library text is one
/// argument; then FCALL/FCALL_RO, the duplicate-library error, FUNCTION LIST
/// WITHCODE and FUNCTION DELETE print as they do against redis-server.
#[test]
fn redis_cli_function_load_from_file_matches_real_redis() {
    let Some(cli) = require_tool("redis-cli") else {
        return;
    };
    let Some(real) = RealRedis::start() else {
        return;
    };
    let lite = Server::start();
    // One function per library: FUNCTION LIST orders a library's functions
    // by Redis's dict order, which redis-lite does not try to reproduce.
    let path = common::temp_path("lib.lua");
    std::fs::write(
        &path,
        "#!lua name=clilib\n\
         -- a comment line, then the function\n\
         redis.register_function{\n  function_name = 'bump',\n  \
         callback = function(keys, args)\n    \
         return redis.call('INCRBY', keys[1], args[1])\n  end,\n  \
         description = 'add to a counter'\n}\n",
    )
    .expect("write lib.lua");
    let code = std::fs::read_to_string(&path).expect("read lib.lua");
    let _ = std::fs::remove_file(&path);
    let script: &[&[&str]] = &[
        &["FUNCTION", "LOAD", &code],
        &["FUNCTION", "LOAD", &code],
        &["FCALL", "bump", "1", "ctr", "5"],
        &["FCALL", "bump", "1", "ctr", "-2"],
        &["FCALL_RO", "bump", "1", "ctr", "1"],
        &["FCALL", "nosuch", "0"],
        &["FUNCTION", "LIST"],
        &["FUNCTION", "LIST", "WITHCODE", "LIBRARYNAME", "cli*"],
        &["FUNCTION", "DELETE", "clilib"],
        &["FUNCTION", "DELETE", "clilib"],
        &["FUNCTION", "LIST"],
    ];
    let mut diffs = Vec::new();
    for mode in ["--no-raw", "--raw"] {
        for args in script {
            let mut a = vec![mode];
            a.extend_from_slice(args);
            diffs.extend(cli_diff(&cli, lite.port, real.port, &a, None));
        }
    }
    assert!(
        diffs.is_empty(),
        "redis-cli FUNCTION output differs:\n{}",
        diffs.join("\n")
    );
}

/// MULTI/EXEC typed into redis-cli's stdin (non-tty): QUEUED lines, EXEC's
/// array with an error element inside, EXECABORT, DISCARD, WATCH leading to
/// a nil EXEC, in both output modes.
#[test]
fn redis_cli_multi_exec_output_matches_real_redis() {
    let Some(cli) = require_tool("redis-cli") else {
        return;
    };
    let Some(real) = RealRedis::start() else {
        return;
    };
    let lite = Server::start();
    let sessions: &[&[u8]] = &[
        b"MULTI\nSET a 1\nINCR a\nGET a\nLPUSH a x\nEXEC\n",
        b"MULTI\nEXEC\n",
        b"EXEC\nDISCARD\nMULTI\nMULTI\nDISCARD\n",
        b"MULTI\nSET b 1\nGET\nEXEC\nGET b\n",
        b"MULTI\nSET b 1\nNOSUCHCMD\nEXEC\n",
        b"WATCH a\nSET a changed\nMULTI\nGET a\nEXEC\n",
        b"MULTI\nWATCH a\nEXEC\n",
        b"MULTI\nEVAL \"return {1,'x'}\" 0\nPING\nEXEC\n",
    ];
    let mut diffs = Vec::new();
    for mode in ["--no-raw", "--raw"] {
        for input in sessions {
            diffs.extend(cli_diff(&cli, lite.port, real.port, &[mode], Some(input)));
        }
    }
    assert!(
        diffs.is_empty(),
        "redis-cli MULTI/EXEC output differs:\n{}",
        diffs.join("\n")
    );
}

/// A redis-cli left running in subscribe mode, killed after it printed the
/// published message; returns everything it printed.
fn cli_subscribe_transcript(cli: &Path, port: u16, mode: &str, sub: &[&str]) -> String {
    let p = port.to_string();
    let mut child = Command::new(cli)
        .args(["-p", &p, mode])
        .args(sub)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn redis-cli SUBSCRIBE");
    let mut so = child.stdout.take().expect("stdout");
    let (tx, rx) = std::sync::mpsc::channel::<Vec<u8>>();
    let reader = std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = so.read(&mut buf) {
            if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    // Publish once the subscription is registered on the server.
    let mut c = common::Conn::connect(port).expect("connect publisher");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if c.must(&["PUBSUB", "NUMPAT"]) != b":0\r\n"
            || c.must(&["PUBSUB", "NUMSUB", "news"]) != b"*2\r\n$4\r\nnews\r\n:0\r\n"
        {
            break;
        }
        assert!(Instant::now() < deadline, "redis-cli never subscribed");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(c.must(&["PUBLISH", "news", "hello world"]), b":1\r\n");
    let mut out = Vec::new();
    while !String::from_utf8_lossy(&out).contains("hello world") {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(chunk) => out.extend(chunk),
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "redis-cli {sub:?} did not print the message; output:\n{}",
                    String::from_utf8_lossy(&out)
                );
            }
        }
    }
    // redis-cli exits only on a signal; give it a moment to print anything
    // else (it should not), then stop it.
    while let Ok(chunk) = rx.recv_timeout(Duration::from_millis(100)) {
        out.extend(chunk);
    }
    let _ = child.kill();
    let _ = child.wait();
    let _ = reader.join();
    String::from_utf8_lossy(&out).into_owned()
}

/// redis-cli in subscribe mode (SUBSCRIBE and PSUBSCRIBE) receives a message
/// published from another connection and prints the same as against
/// redis-server.
#[test]
fn redis_cli_subscribe_mode_receives_messages() {
    let Some(cli) = require_tool("redis-cli") else {
        return;
    };
    let lite = Server::start();
    let real = RealRedis::start();
    let cases: [(&str, &[&str]); 4] = [
        ("--no-raw", &["SUBSCRIBE", "news"]),
        ("--raw", &["SUBSCRIBE", "news"]),
        ("--no-raw", &["PSUBSCRIBE", "n*"]),
        ("--raw", &["PSUBSCRIBE", "n*"]),
    ];
    let mut diffs = Vec::new();
    for (mode, sub) in cases {
        let got = cli_subscribe_transcript(&cli, lite.port, mode, sub);
        assert!(got.contains("hello world"), "{mode} {sub:?}: {got}");
        if let Some(real) = &real {
            let want = cli_subscribe_transcript(&cli, real.port, mode, sub);
            if got != want {
                diffs.push(format!(
                    "redis-cli {mode} {sub:?}\n  redis-lite: {got:?}\n  redis     : {want:?}"
                ));
            }
        }
    }
    assert!(
        diffs.is_empty(),
        "redis-cli subscribe output differs:\n{}",
        diffs.join("\n")
    );
}

/// redis-benchmark running EVAL with a script that calls GET: 20000
/// requests, every reply a bulk string, no errors.
#[test]
fn redis_benchmark_eval_completes() {
    let Some(bench) = require_tool("redis-benchmark") else {
        return;
    };
    let srv = Server::start();
    let mut c = srv.connect();
    assert_eq!(c.must(&["SET", "k", "value"]), b"+OK\r\n");
    let port = srv.port.to_string();
    let out = run(
        &bench,
        &[
            "-p",
            &port,
            "-q",
            "-n",
            "20000",
            "eval",
            "return redis.call('get','k')",
            "0",
        ],
        None,
        Duration::from_secs(300),
    );
    assert!(
        !out.contains("Error") && !out.contains("ERR"),
        "redis-benchmark reported errors:\n{out}"
    );
    let done = out
        .split(['\r', '\n'])
        .map(str::trim)
        .find(|l| l.contains("requests per second") && !l.contains("rps="))
        .unwrap_or_else(|| panic!("redis-benchmark eval did not finish:\n{out}"));
    assert!(
        done.starts_with("eval return redis.call('get','k') 0:"),
        "{done}"
    );
    // The script ran once per request (plus nothing else).
    let stats = c.must(&["INFO", "commandstats"]);
    let stats = String::from_utf8_lossy(&stats);
    assert!(
        stats.contains("cmdstat_eval:calls=20000,"),
        "INFO commandstats after the benchmark:\n{stats}"
    );
}
