//! A small harness for the cluster crate's tests against a real
//! `redis-server`: start a cluster-enabled node on free ports, send it RESP
//! commands, and the skip/fail rule of the root package's tests/common
//! (which this crate cannot share: that harness is built around the
//! redis-lite binary): without `redis-server` a test prints `SKIPPED: ...`
//! and passes, except under `CI=true`, where it fails.

#![allow(dead_code)] // each test file uses a different subset

use std::io::{self, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// True when running under CI (`CI=true`): missing tools fail the test.
pub fn in_ci() -> bool {
    std::env::var("CI").map(|v| v == "true").unwrap_or(false)
}

/// `name` on PATH; otherwise panic under CI, or print SKIPPED and `None`.
pub fn require_tool(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    for dir in std::env::split_paths(&path) {
        let p = dir.join(name);
        if p.is_file() {
            return Some(p);
        }
    }
    let msg = format!("{name} not found (install redis-server to run the cluster interop tests)");
    if in_ci() {
        panic!("CI=true and {msg}: CI must run these tests, not skip them");
    }
    let _ = writeln!(io::stderr(), "SKIPPED: {msg}");
    None
}

/// A port that was free a moment ago.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("bind 127.0.0.1:0")
        .port()
}

/// A reply, as much of RESP2 as these tests need.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    Status(String),
    Error(String),
    Int(i64),
    Bulk(Option<Vec<u8>>),
    Array(Vec<Reply>),
}

impl Reply {
    pub fn text(&self) -> String {
        match self {
            Reply::Status(s) | Reply::Error(s) => s.clone(),
            Reply::Bulk(Some(b)) => String::from_utf8_lossy(b).into_owned(),
            other => format!("{other:?}"),
        }
    }

    pub fn int(&self) -> i64 {
        match self {
            Reply::Int(n) => *n,
            other => panic!("expected an integer, got {other:?}"),
        }
    }
}

/// The RESP encoding of one command.
pub fn command(args: &[&[u8]]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
    out
}

/// Read one reply from a buffered stream.
pub fn read_reply(r: &mut impl io::BufRead) -> io::Result<Reply> {
    let mut line = Vec::new();
    r.read_until(b'\n', &mut line)?;
    if line.len() < 3 {
        return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "short reply"));
    }
    let body = String::from_utf8_lossy(&line[1..line.len() - 2]).into_owned();
    let num = || {
        body.parse::<i64>()
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
    };
    Ok(match line[0] {
        b'+' => Reply::Status(body),
        b'-' => Reply::Error(body),
        b':' => Reply::Int(num()?),
        b'$' => {
            let n = num()?;
            if n < 0 {
                Reply::Bulk(None)
            } else {
                let mut data = vec![0; n as usize + 2];
                r.read_exact(&mut data)?;
                data.truncate(n as usize);
                Reply::Bulk(Some(data))
            }
        }
        b'*' => {
            let n = num()?;
            let mut items = Vec::new();
            for _ in 0..n.max(0) {
                items.push(read_reply(r)?);
            }
            Reply::Array(items)
        }
        other => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("bad reply type {other}"),
            ))
        }
    })
}

/// A real `redis-server` with `cluster-enabled yes` on a free client port
/// and a free bus port (`cluster-port`), in a directory of its own; killed
/// and removed on drop (its log is printed first if the test is failing).
pub struct RedisNode {
    pub port: u16,
    pub bus_port: u16,
    dir: PathBuf,
    child: Child,
}

impl RedisNode {
    pub fn start(program: &Path, extra: &[&str]) -> RedisNode {
        let mut last_err = String::new();
        for attempt in 0..3 {
            let (port, bus_port) = (free_port(), free_port());
            let dir = std::env::temp_dir().join(format!(
                "redis-lite-cluster-test-{}-{port}-{attempt}",
                std::process::id()
            ));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).expect("create node dir");
            let child = Command::new(program)
                .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
                .args([
                    "--cluster-enabled",
                    "yes",
                    "--cluster-port",
                    &bus_port.to_string(),
                ])
                .args(["--cluster-config-file", "nodes.conf", "--dir"])
                .arg(&dir)
                .args(["--save", "", "--appendonly", "no", "--logfile", "redis.log"])
                .args(extra)
                .current_dir(&dir)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("spawn redis-server");
            let mut node = RedisNode {
                port,
                bus_port,
                dir,
                child,
            };
            match node.wait_ready() {
                Ok(()) => return node,
                Err(e) => last_err = format!("{e}\n{}", node.log_tail()),
            }
        }
        panic!("redis-server did not start: {last_err}");
    }

    fn wait_ready(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!("redis-server exited: {status}"));
            }
            if let Ok(Reply::Status(s)) = self.try_cmd(&[b"PING"]) {
                if s == "PONG" {
                    return Ok(());
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Err("redis-server not answering PING".into())
    }

    fn try_cmd(&self, args: &[&[u8]]) -> io::Result<Reply> {
        let mut s = TcpStream::connect(("127.0.0.1", self.port))?;
        s.set_read_timeout(Some(Duration::from_secs(10)))?;
        s.write_all(&command(args))?;
        read_reply(&mut io::BufReader::new(s))
    }

    /// One command on a fresh connection.
    pub fn cmd(&self, args: &[&str]) -> Reply {
        let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        self.try_cmd(&args)
            .unwrap_or_else(|e| panic!("redis-server :{}: {e}", self.port))
    }

    /// Many commands pipelined on one connection, replies in order.
    pub fn pipeline(&self, commands: &[Vec<Vec<u8>>]) -> Vec<Reply> {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut out = Vec::new();
        for c in commands {
            let args: Vec<&[u8]> = c.iter().map(Vec::as_slice).collect();
            out.extend_from_slice(&command(&args));
        }
        s.write_all(&out).expect("write pipeline");
        let mut r = io::BufReader::new(s);
        commands
            .iter()
            .map(|_| read_reply(&mut r).expect("reply"))
            .collect()
    }

    /// A field of CLUSTER INFO.
    pub fn cluster_info(&self, field: &str) -> Option<String> {
        let info = self.cmd(&["CLUSTER", "INFO"]).text();
        info.lines()
            .find_map(|l| l.strip_prefix(&format!("{field}:")))
            .map(str::to_string)
    }

    pub fn log_tail(&self) -> String {
        let log = std::fs::read(self.dir.join("redis.log")).unwrap_or_default();
        let text = String::from_utf8_lossy(&log);
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }
}

impl Drop for RedisNode {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!(
                "--- redis-server :{} log tail ---\n{}\n---",
                self.port,
                self.log_tail()
            );
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Poll `cond` every 50 ms until it holds or `timeout` passes.
pub fn wait_until(timeout: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if cond() {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
