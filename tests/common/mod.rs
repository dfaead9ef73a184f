//! Shared harness for the integration tests: start servers, talk raw RESP.
//!
//! Every integration test file does `mod common;` and uses:
//!
//! * [`Server::start`]: the redis-lite binary built by cargo for this test
//!   run (`CARGO_BIN_EXE_redis-lite`), on a free port, logging to a temp
//!   file. Ready once it answers PING; killed on drop. If the test panics
//!   while the server is alive, the last lines of its log are printed.
//! * [`RealRedis::start`]: a real `redis-server` started the same way, for
//!   differential tests. Returns `None` ("SKIPPED") on a machine without
//!   Redis, unless `CI=true`, where a missing tool is a failure: CI must never
//!   go green by skipping the tests that matter.
//! * [`Conn`]: a blocking TCP connection with timeouts that sends raw bytes
//!   and reads back exactly one complete RESP2/RESP3 reply as raw bytes.
//!
//! The reply reader ([`reply_len`]) is deliberately our own small framer
//! rather than the server's `protocol` crate: the tests are the oracle, and an
//! oracle that shares the parser under test would hide that parser's bugs. It
//! only needs to find where one reply ends; the bytes are compared verbatim.

#![allow(dead_code)] // each test file uses a different subset

pub mod cluster;
pub mod replication;
pub mod rng;
use std::fs::File;
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How long a server may take to answer its first PING. Generous: a debug
/// build on a loaded 2-core machine can be slow to start.
pub const STARTUP_TIMEOUT: Duration = Duration::from_secs(20);

/// Default time to wait for one reply before declaring the server hung.
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(10);

/// Lines of server log printed when a test fails.
const LOG_TAIL_LINES: usize = 40;

// ---------------------------------------------------------------------------
// Tools and the skip/fail rule
// ---------------------------------------------------------------------------

/// True when running under CI (`CI=true`): missing tools fail the test.
pub fn in_ci() -> bool {
    std::env::var("CI").map(|v| v == "true").unwrap_or(false)
}

/// Find an executable on PATH, like `command -v`.
pub fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    for dir in std::env::split_paths(&path) {
        let p = dir.join(name);
        if is_executable(&p) {
            return Some(p);
        }
    }
    None
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// The skip/fail rule for an external tool (redis-server, redis-cli,
/// redis-benchmark): its path when installed; otherwise panic under CI, or
/// print a SKIPPED line and return `None` so `cargo test` passes on a fresh
/// machine with only Rust installed.
pub fn require_tool(name: &str) -> Option<PathBuf> {
    if let Some(p) = which(name) {
        return Some(p);
    }
    let msg =
        format!("{name} not found (install redis-server redis-tools to run differential tests)");
    if in_ci() {
        panic!("CI=true and {msg}: CI must run these tests, not skip them");
    }
    skipped(&msg);
    None
}

/// Print a SKIPPED line that is visible even though the test harness
/// captures `println!`: written straight to the process's stderr.
pub fn skipped(why: &str) {
    let _ = writeln!(io::stderr(), "SKIPPED: {why}");
}

/// A port that was free a moment ago: bind 127.0.0.1:0, read the port, close.
/// A port is handed out once per test process, so two tests running in
/// parallel never get the same one; a race with another process is still
/// possible but rare, and `start` notices it and retries.
pub fn free_port() -> u16 {
    static HANDED_OUT: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());
    loop {
        let l = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let port = l.local_addr().expect("local_addr").port();
        let mut handed = HANDED_OUT.lock().unwrap_or_else(|e| e.into_inner());
        if !handed.contains(&port) {
            handed.push(port);
            return port;
        }
    }
}

/// A fresh temp file path, unique per process and call.
pub fn temp_path(tag: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!(
        "redis-lite-test-{}-{}-{}.log",
        std::process::id(),
        n,
        tag
    ))
}

/// Last `n` lines of a file (lossy UTF-8), for failure reports.
pub fn tail(path: &Path, n: usize) -> String {
    let data = std::fs::read(path).unwrap_or_default();
    let text = String::from_utf8_lossy(&data);
    let lines: Vec<&str> = text.lines().collect();
    let from = lines.len().saturating_sub(n);
    lines[from..].join("\n")
}

// ---------------------------------------------------------------------------
// Server processes
// ---------------------------------------------------------------------------

/// One server process (redis-lite or redis-server) on 127.0.0.1:`port`.
pub struct Process {
    pub name: &'static str,
    pub port: u16,
    pub log: PathBuf,
    child: Child,
}

impl Process {
    /// Spawn `program args... --port N` (args must not contain the port) and
    /// wait until it answers PING. Retries with a new port if it dies early
    /// (the chosen port was taken in the meantime).
    fn spawn(name: &'static str, program: &Path, args: &[&str]) -> Process {
        Self::spawn_ready(name, program, args, false)
    }

    /// `spawn`, where `loading` also takes a `-LOADING` answer to PING as
    /// "up" (a server still reading its dataset at start-up).
    fn spawn_ready(name: &'static str, program: &Path, args: &[&str], loading: bool) -> Process {
        let mut last_err = String::new();
        for _attempt in 0..3 {
            let port = free_port();
            let log = temp_path(name);
            let out = File::create(&log).expect("create server log file");
            let err = out.try_clone().expect("clone log file handle");
            let mut cmd = Command::new(program);
            cmd.arg("--port").arg(port.to_string()).args(args);
            // An empty working directory of its own: a redis-server must not
            // load a stray dump.rdb lying in the checkout.
            let dir = log.with_extension("d");
            std::fs::create_dir_all(&dir).expect("create server working dir");
            cmd.current_dir(&dir);
            cmd.stdin(Stdio::null()).stdout(out).stderr(err);
            // SAFETY: prctl is async-signal-safe; it only asks the kernel to
            // SIGKILL the child when the spawning thread dies, so an aborted
            // test run (Ctrl-C, timeout) does not leak servers.
            unsafe {
                cmd.pre_exec(|| {
                    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                    Ok(())
                });
            }
            let child = cmd
                .spawn()
                .unwrap_or_else(|e| panic!("cannot start {}: {e}", program.display()));
            let mut p = Process {
                name,
                port,
                log,
                child,
            };
            match p.wait_ready(loading) {
                Ok(()) => return p,
                Err(e) => {
                    last_err = format!(
                        "{e}\n--- {} log tail ---\n{}",
                        name,
                        tail(&p.log, LOG_TAIL_LINES)
                    );
                    // Drop kills it; keep the log for the message above.
                }
            }
        }
        panic!("{name} did not start: {last_err}");
    }

    fn wait_ready(&mut self, loading: bool) -> Result<(), String> {
        let deadline = Instant::now() + STARTUP_TIMEOUT;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!("{} exited during start-up: {status}", self.name));
            }
            if let Ok(mut c) = Conn::connect_timeout(self.port, Duration::from_millis(200)) {
                c.set_timeout(Duration::from_secs(2));
                if let Ok(r) = c.cmd(&["PING"]) {
                    if r == b"+PONG\r\n" || (loading && r.starts_with(b"-LOADING ")) {
                        return self.check_answering_process(&mut c);
                    }
                    // Still loading its dataset (served between chunks):
                    // not up yet, ask again.
                    if !r.starts_with(b"-LOADING ") {
                        return Err(format!("PING answered {}", escape(&r)));
                    }
                }
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "{} not answering PING after {:?}",
                    self.name, STARTUP_TIMEOUT
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The server that answered PING on our port must be this process:
    /// free_port's port can be handed to two tests at once, and then the
    /// loser's PING reaches the winner's server before the loser's process
    /// has failed to bind and exited (a test once ran against another
    /// test's data that way). INFO's process_id tells them apart; Err makes
    /// spawn_ready start over on a new port.
    fn check_answering_process(&mut self, c: &mut Conn) -> Result<(), String> {
        let reply = c.cmd(&["INFO", "server"]).map_err(|e| e.to_string())?;
        let text = String::from_utf8_lossy(&reply);
        let pid = text
            .lines()
            .find_map(|l| l.strip_prefix("process_id:"))
            .and_then(|v| v.trim().parse::<u32>().ok());
        match pid {
            Some(pid) if pid != self.child.id() => Err(format!(
                "port {} is answered by process {pid}, not by {} (pid {})",
                self.port,
                self.name,
                self.child.id()
            )),
            _ => Ok(()),
        }
    }

    /// True while the process has not exited.
    pub fn is_alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Exit status if the process has exited.
    pub fn exit_status(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// A new connection to this server (panics on failure).
    pub fn connect(&self) -> Conn {
        Conn::connect(self.port)
            .unwrap_or_else(|e| panic!("connect to {} :{}: {e}", self.name, self.port))
    }

    /// The last lines of the server's log.
    pub fn log_tail(&self) -> String {
        tail(&self.log, LOG_TAIL_LINES)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let died = !self.is_alive();
        let _ = self.child.kill();
        let _ = self.child.wait();
        // On failure show redis-lite's log; the real server's only if it died.
        if died || (std::thread::panicking() && self.name != "redis-server") {
            eprintln!(
                "--- {} (port {}) log tail{} ({}) ---\n{}\n--- end of log ---",
                self.name,
                self.port,
                if died { ", process had exited" } else { "" },
                self.log.display(),
                self.log_tail()
            );
        } else {
            let _ = std::fs::remove_file(&self.log);
        }
    }
}

/// The redis-lite binary under test.
pub struct Server;

impl Server {
    /// Start redis-lite on a free port with persistence off.
    pub fn start() -> Process {
        Self::start_with(&[])
    }

    /// Start redis-lite with extra `--name value` arguments.
    ///
    /// `REDIS_LITE_BIN=/usr/bin/redis-server cargo test --test differential`
    /// runs the tests against another binary instead: with redis-server on
    /// both sides it checks that case files are deterministic.
    pub fn start_with(extra: &[&str]) -> Process {
        Self::start_ready(extra, false)
    }

    fn start_ready(extra: &[&str], loading: bool) -> Process {
        let bin = match std::env::var_os("REDIS_LITE_BIN") {
            Some(b) if !b.is_empty() => PathBuf::from(b),
            _ => PathBuf::from(env!("CARGO_BIN_EXE_redis-lite")),
        };
        let mut args: Vec<&str> = vec!["--save", "", "--appendonly", "no"];
        if bin.file_name().is_some_and(|n| n == "redis-server") {
            args.extend_from_slice(&["--enable-debug-command", "yes", "--bind", "127.0.0.1"]);
        }
        args.extend_from_slice(extra);
        Process::spawn_ready("redis-lite", &bin, &args, loading)
    }

    /// Like `start_with`, for a server that may still be loading its
    /// dataset when it first answers (PING gets -LOADING).
    pub fn start_loading_with(extra: &[&str]) -> Process {
        Self::start_ready(extra, true)
    }
}

/// Run a scenario on a fresh redis-lite and, when redis-server is
/// installed, on a fresh redis-server too; the two results must be equal.
/// Returns redis-lite's result for the caller's own assertions.
pub fn run_on_both<T: PartialEq + std::fmt::Debug>(run: impl Fn(&Process) -> T) -> T {
    let lite = Server::start();
    let ours = run(&lite);
    if let Some(real) = RealRedis::start() {
        assert_eq!(ours, run(&real), "redis-lite vs redis-server");
    }
    ours
}

/// A real redis-server, for differential tests.
pub struct RealRedis;

impl RealRedis {
    /// Start redis-server on a free port (no persistence, DEBUG enabled), or
    /// `None` under the skip rule when it is not installed.
    pub fn start() -> Option<Process> {
        Self::start_with(&[])
    }

    /// Like `start`, with extra `--name value` arguments.
    pub fn start_with(extra: &[&str]) -> Option<Process> {
        Self::start_ready(extra, false)
    }

    fn start_ready(extra: &[&str], loading: bool) -> Option<Process> {
        let bin = require_tool("redis-server")?;
        let mut args = vec![
            "--save",
            "",
            "--appendonly",
            "no",
            "--daemonize",
            "no",
            "--enable-debug-command",
            "yes",
            "--bind",
            "127.0.0.1",
        ];
        args.extend_from_slice(extra);
        Some(Process::spawn_ready("redis-server", &bin, &args, loading))
    }

    /// Like `start_with`, for a server that may still be loading its
    /// dataset when it first answers (PING gets -LOADING).
    pub fn start_loading_with(extra: &[&str]) -> Option<Process> {
        Self::start_ready(extra, true)
    }
}

// ---------------------------------------------------------------------------
// Raw RESP connections
// ---------------------------------------------------------------------------

/// Why a read did not produce a reply.
#[derive(Debug)]
pub enum ReadError {
    /// The server closed the connection (EOF or reset); `partial` holds any
    /// bytes of an incomplete reply received before that.
    Closed {
        partial: Vec<u8>,
    },
    /// Nothing complete arrived within the timeout.
    Timeout {
        partial: Vec<u8>,
    },
    /// The bytes are not RESP.
    Malformed {
        data: Vec<u8>,
        why: String,
    },
    Io(io::Error),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Closed { partial } if partial.is_empty() => write!(f, "<connection closed>"),
            ReadError::Closed { partial } => write!(
                f,
                "<connection closed after partial reply {}>",
                escape(partial)
            ),
            ReadError::Timeout { partial } if partial.is_empty() => {
                write!(f, "<timeout: no reply>")
            }
            ReadError::Timeout { partial } => {
                write!(f, "<timeout after partial reply {}>", escape(partial))
            }
            ReadError::Malformed { data, why } => {
                write!(f, "<malformed reply ({why}): {}>", escape(data))
            }
            ReadError::Io(e) => write!(f, "<io error: {e}>"),
        }
    }
}

impl std::error::Error for ReadError {}

/// A blocking connection with read/write timeouts and a reply buffer.
pub struct Conn {
    pub stream: TcpStream,
    buf: Vec<u8>,
    timeout: Duration,
}

impl Conn {
    pub fn connect(port: u16) -> io::Result<Conn> {
        Self::connect_timeout(port, Duration::from_secs(5))
    }

    pub fn connect_timeout(port: u16, t: Duration) -> io::Result<Conn> {
        let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
        let stream = TcpStream::connect_timeout(&addr, t)?;
        stream.set_nodelay(true)?;
        let mut c = Conn {
            stream,
            buf: Vec::new(),
            timeout: REPLY_TIMEOUT,
        };
        c.set_timeout(REPLY_TIMEOUT);
        Ok(c)
    }

    /// Timeout for each reply read and each write.
    pub fn set_timeout(&mut self, t: Duration) {
        self.timeout = t;
        let _ = self
            .stream
            .set_write_timeout(Some(t.max(Duration::from_millis(1))));
    }

    pub fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.stream.write_all(bytes)?;
        self.stream.flush()
    }

    /// Send a command as a RESP multibulk.
    pub fn send_cmd<A: AsRef<[u8]>>(&mut self, args: &[A]) -> io::Result<()> {
        let frame = encode_command(args);
        self.send(&frame)
    }

    /// Send a command and read one reply.
    pub fn cmd<A: AsRef<[u8]>>(&mut self, args: &[A]) -> Result<Vec<u8>, ReadError> {
        self.send_cmd(args).map_err(ReadError::Io)?;
        self.read_reply()
    }

    /// Like `cmd`, panicking with context on any failure; for test setup.
    pub fn must<A: AsRef<[u8]>>(&mut self, args: &[A]) -> Vec<u8> {
        match self.cmd(args) {
            Ok(r) => r,
            Err(e) => panic!("{}: {e}", describe_cmd(args)),
        }
    }

    /// Read exactly one complete reply (RESP2 or RESP3), as raw bytes.
    /// Bytes after it stay buffered for the next call.
    pub fn read_reply(&mut self) -> Result<Vec<u8>, ReadError> {
        self.read_reply_within(self.timeout)
    }

    pub fn read_reply_within(&mut self, timeout: Duration) -> Result<Vec<u8>, ReadError> {
        let deadline = Instant::now() + timeout;
        loop {
            match reply_len(&self.buf) {
                Ok(Some(n)) => return Ok(self.buf.drain(..n).collect()),
                Ok(None) => {}
                Err(why) => {
                    return Err(ReadError::Malformed {
                        data: std::mem::take(&mut self.buf),
                        why,
                    })
                }
            }
            match self.fill(deadline)? {
                0 => {
                    return Err(ReadError::Closed {
                        partial: std::mem::take(&mut self.buf),
                    })
                }
                _ => continue,
            }
        }
    }

    /// Read more bytes into the buffer before `deadline`; Ok(0) means EOF.
    fn fill(&mut self, deadline: Instant) -> Result<usize, ReadError> {
        let now = Instant::now();
        if now >= deadline {
            return Err(ReadError::Timeout {
                partial: std::mem::take(&mut self.buf),
            });
        }
        let _ = self
            .stream
            .set_read_timeout(Some((deadline - now).max(Duration::from_millis(1))));
        let mut tmp = [0u8; 16 * 1024];
        loop {
            match self.stream.read(&mut tmp) {
                Ok(0) => return Ok(0),
                Ok(n) => {
                    self.buf.extend_from_slice(&tmp[..n]);
                    return Ok(n);
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    return Err(ReadError::Timeout {
                        partial: std::mem::take(&mut self.buf),
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if is_reset(&e) => return Ok(0),
                Err(e) => return Err(ReadError::Io(e)),
            }
        }
    }

    /// Everything the server sends until it closes the connection or stays
    /// silent for `idle` (after at least `first` for the first byte).
    /// Returns (bytes, closed).
    pub fn read_until_close_or_idle(&mut self, first: Duration, idle: Duration) -> (Vec<u8>, bool) {
        let mut out = std::mem::take(&mut self.buf);
        let mut wait = if out.is_empty() { first } else { idle };
        let mut tmp = [0u8; 16 * 1024];
        loop {
            let _ = self.stream.set_read_timeout(Some(wait));
            match self.stream.read(&mut tmp) {
                Ok(0) => return (out, true),
                Ok(n) => {
                    out.extend_from_slice(&tmp[..n]);
                    wait = idle;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if is_reset(&e) => return (out, true),
                Err(_) => return (out, false),
            }
        }
    }

    /// True if the server has closed this connection (EOF or reset) within
    /// `wait`; data that arrives meanwhile is kept in the buffer.
    pub fn closed_within(&mut self, wait: Duration) -> bool {
        let deadline = Instant::now() + wait;
        loop {
            match self.fill(deadline) {
                Ok(0) => return true,
                Ok(_) => continue,
                Err(ReadError::Timeout { partial }) => {
                    self.buf = partial;
                    return false;
                }
                Err(_) => return true,
            }
        }
    }

    pub fn shutdown(&self) {
        let _ = self.stream.shutdown(Shutdown::Both);
    }
}

fn is_reset(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::BrokenPipe
    )
}

/// `*<n>\r\n` then `$<len>\r\n<arg>\r\n` for each argument.
pub fn encode_command<A: AsRef<[u8]>>(args: &[A]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        let a = a.as_ref();
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
    out
}

/// `SET "k" "v"` style rendering of a command for messages.
pub fn describe_cmd<A: AsRef<[u8]>>(args: &[A]) -> String {
    let parts: Vec<String> = args
        .iter()
        .map(|a| format!("\"{}\"", escape(a.as_ref())))
        .collect();
    parts.join(" ")
}

/// Printable rendering of bytes: `\r`, `\n`, `\t`, `\\`, `\"` and `\xHH`.
pub fn escape(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len());
    for &c in b {
        match c {
            b'\r' => s.push_str("\\r"),
            b'\n' => s.push_str("\\n"),
            b'\t' => s.push_str("\\t"),
            b'\\' => s.push_str("\\\\"),
            b'"' => s.push_str("\\\""),
            0x20..=0x7e => s.push(c as char),
            _ => s.push_str(&format!("\\x{c:02x}")),
        }
    }
    s
}

/// Shorten an escaped rendering for reports.
pub fn escape_trunc(b: &[u8], max: usize) -> String {
    if b.len() <= max {
        escape(b)
    } else {
        format!("{}... ({} bytes total)", escape(&b[..max]), b.len())
    }
}

// ---------------------------------------------------------------------------
// Reply framing
// ---------------------------------------------------------------------------

/// Maximum nesting the framer follows (replies are never this deep).
const MAX_DEPTH: usize = 64;

/// Length of the first complete reply in `buf`: `Ok(Some(n))`, `Ok(None)` if
/// more bytes are needed, `Err` if the bytes are not RESP2/RESP3.
pub fn reply_len(buf: &[u8]) -> Result<Option<usize>, String> {
    reply_end(buf, 0, 0)
}

/// The line starting at `pos` (without CRLF) and the position after it.
fn line_at(buf: &[u8], pos: usize) -> Option<(&[u8], usize)> {
    let rest = buf.get(pos..)?;
    let i = rest.windows(2).position(|w| w == b"\r\n")?;
    Some((&rest[..i], pos + i + 2))
}

fn parse_len(s: &[u8]) -> Result<i64, String> {
    std::str::from_utf8(s)
        .ok()
        .and_then(|t| t.parse::<i64>().ok())
        .ok_or_else(|| format!("bad length {:?}", String::from_utf8_lossy(s)))
}

fn reply_end(buf: &[u8], pos: usize, depth: usize) -> Result<Option<usize>, String> {
    if depth > MAX_DEPTH {
        return Err("nesting too deep".into());
    }
    let Some(&kind) = buf.get(pos) else {
        return Ok(None);
    };
    let Some((line, after)) = line_at(buf, pos + 1) else {
        return Ok(None);
    };
    match kind {
        // Single-line types: simple string, error, integer, null, double,
        // boolean, big number.
        b'+' | b'-' | b':' | b'_' | b',' | b'#' | b'(' => Ok(Some(after)),
        // Length-prefixed blobs: bulk, blob error, verbatim.
        b'$' | b'!' | b'=' => {
            let n = parse_len(line)?;
            if n < 0 {
                return Ok(Some(after)); // $-1
            }
            let end = after + n as usize + 2;
            if buf.len() < end {
                return Ok(None);
            }
            if &buf[end - 2..end] != b"\r\n" {
                return Err("blob not followed by CRLF".into());
            }
            Ok(Some(end))
        }
        // Aggregates: array, set, push; map and attribute hold pairs.
        b'*' | b'~' | b'>' | b'%' | b'|' => {
            let n = parse_len(line)?;
            if n < 0 {
                return Ok(Some(after)); // *-1
            }
            let count = if kind == b'%' || kind == b'|' {
                n * 2
            } else {
                n
            };
            let mut p = after;
            for _ in 0..count {
                match reply_end(buf, p, depth + 1)? {
                    Some(next) => p = next,
                    None => return Ok(None),
                }
            }
            if kind == b'|' {
                // An attribute precedes the actual reply.
                return reply_end(buf, p, depth + 1);
            }
            Ok(Some(p))
        }
        other => Err(format!("unknown reply type byte {:?}", other as char)),
    }
}

/// Split an aggregate reply into (header line incl. CRLF, raw elements).
/// `None` for non-aggregates. Maps yield their keys and values alternately.
pub fn split_aggregate(reply: &[u8]) -> Option<(Vec<u8>, Vec<Vec<u8>>)> {
    let kind = *reply.first()?;
    if !matches!(kind, b'*' | b'~' | b'%' | b'>') {
        return None;
    }
    let (line, after) = line_at(reply, 1)?;
    let n = parse_len(line).ok()?;
    if n < 0 {
        return None;
    }
    let count = if kind == b'%' { n * 2 } else { n };
    let mut elems = Vec::new();
    let mut p = after;
    for _ in 0..count {
        let next = reply_end(reply, p, 1).ok()??;
        elems.push(reply[p..next].to_vec());
        p = next;
    }
    Some((reply[..after].to_vec(), elems))
}
