//! Redis's own tools against redis-lite: redis-benchmark and redis-cli.
//!
//! They are demanding, unforgiving clients: redis-benchmark pipelines and
//! checks every reply type, redis-cli's `--scan` drives a SCAN loop to the
//! end, and its output formatting (`(nil)`, `(error) ...`, `"quoted"`) is a
//! quick check of the reply types. Missing tools follow the harness rule:
//! SKIPPED locally, a failure under CI=true.

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
