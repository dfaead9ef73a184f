//! Bad input never kills the server.
//!
//! 100k random and mutated frames (valid RESP with flipped bytes,
//! truncations, huge length headers, garbage, inline lines with quotes) go
//! to redis-lite over ~20 connections, each reopened when the server closes
//! it (protocol errors do) or after a random number of frames. Meanwhile a
//! healthy client keeps doing PING / SET / GET / INCR on its own keys and
//! must get exactly the right answers throughout. At the end the process must
//! be alive, answering, and not bloated.
//!
//! Deterministic: a fixed-seed xorshift PRNG, no extra crates. Bounded: a
//! frame count (`FUZZ_FRAMES`, default 100000) and a time budget
//! (`FUZZ_SECONDS`, default 240); hitting the time budget ends the run early
//! without failing (it is logged). Inputs are small (a frame is < 2 KB; the
//! largest valid bulk length announced is 1 MB), so neither side floods
//! memory. `FUZZ_SEED` picks another seed.

mod common;

use common::rng::Rng;
use common::{escape_trunc, Conn, Server};
use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

const CONNECTIONS: usize = 20;
/// The healthy client checks in after every this many fuzz frames.
const HEALTH_EVERY: usize = 50;
/// How many recent frames to print if the server dies.
const HISTORY: usize = 30;
/// The server's RSS must stay below this (bytes) after the run.
const MAX_RSS: u64 = 1 << 30;

/// Commands safe to fire at random: nothing that stops, pauses, blocks,
/// reconfigures or wipes the server, and no argument that sizes a big
/// allocation (no SETRANGE/SETBIT with large offsets, no DEBUG).
const CORPUS: &[&[&str]] = &[
    &["PING"],
    &["PING", "hello"],
    &["ECHO", "fuzz"],
    &["SET", "fz", "value"],
    &["SET", "fz", "1", "EX", "100"],
    &["SET", "fz2", "abc", "NX"],
    &["GET", "fz"],
    &["GETSET", "fz", "x"],
    &["INCR", "fzn"],
    &["DECRBY", "fzn", "7"],
    &["INCRBYFLOAT", "fzf", "1.5"],
    &["APPEND", "fz", "tail"],
    &["STRLEN", "fz"],
    &["GETRANGE", "fz", "0", "-1"],
    &["SETRANGE", "fz", "3", "ab"],
    &["DEL", "fz", "fz2"],
    &["UNLINK", "fzn"],
    &["EXISTS", "fz", "fzn"],
    &["MGET", "fz", "fz2", "fzn"],
    &["MSET", "fz", "1", "fz2", "2"],
    &["TYPE", "fz"],
    &["TTL", "fz"],
    &["PTTL", "fz"],
    &["EXPIRE", "fz", "100"],
    &["PERSIST", "fz"],
    &["KEYS", "fz*"],
    &["SCAN", "0", "MATCH", "fz*", "COUNT", "10"],
    &["DBSIZE"],
    &["RANDOMKEY"],
    &["OBJECT", "ENCODING", "fz"],
    &["CONFIG", "GET", "maxmemory"],
    &["CLIENT", "SETNAME", "fuzzer"],
    &["CLIENT", "ID"],
    &["COMMAND", "COUNT"],
    &["HELLO", "3"],
    &["HELLO", "2"],
    &["SELECT", "1"],
    &["TIME"],
    &["INFO", "server"],
    &["FOO", "bar", "baz"],
    &["MULTI"],
    &["EXEC"],
    &["DISCARD"],
];

/// Headers that announce absurd or borderline sizes.
const HUGE: &[&str] = &[
    "*2147483648\r\n",
    "*2147483647\r\n",
    "*9223372036854775807\r\n",
    "*-2147483649\r\n",
    "*1000000\r\n",
    "*1\r\n$2000000000\r\n",
    "*1\r\n$536870913\r\n",
    "*1\r\n$9223372036854775808\r\n",
    "*1\r\n$-5\r\n",
    "*2\r\n$3\r\nGET\r\n$1048576\r\nab",
    "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$100000\r\n",
    "$5\r\nhello\r\n",
    "*1\r\n*1\r\n$4\r\nPING\r\n",
    "*\r\n",
    "*1\r\n$\r\n",
    "*1\r\n$4\r\nPING",
    "*1\r\n$4\r\nPINGXY",
];

fn encode(args: &[&str]) -> Vec<u8> {
    common::encode_command(args)
}

/// One fuzz frame.
fn gen_frame(rng: &mut Rng) -> Vec<u8> {
    let valid = |rng: &mut Rng| encode(CORPUS[rng.below(CORPUS.len())]);
    match rng.below(100) {
        // A valid command.
        0..=24 => valid(rng),
        // A valid command with 1-4 random byte flips.
        25..=44 => {
            let mut f = valid(rng);
            for _ in 0..1 + rng.below(4) {
                let i = rng.below(f.len());
                f[i] ^= (1 + rng.below(255)) as u8;
            }
            f
        }
        // A truncated valid command (the server must wait, not fail).
        45..=54 => {
            let mut f = valid(rng);
            f.truncate(rng.below(f.len()));
            f
        }
        // Absurd length headers.
        55..=64 => rng.pick(HUGE).as_bytes().to_vec(),
        // Random garbage.
        65..=74 => (0..1 + rng.below(200)).map(|_| rng.next() as u8).collect(),
        // Inline lines with quotes, escapes and unbalanced bits.
        75..=89 => inline_garbage(rng),
        // A pipeline of valid commands, then a mutation at a random spot.
        _ => {
            let mut f = Vec::new();
            for _ in 0..2 + rng.below(8) {
                f.extend(valid(rng));
            }
            if rng.chance(50) {
                let i = rng.below(f.len());
                f[i] = *rng.pick(b"*$\r\n:-0 \"'");
            }
            f
        }
    }
}

fn inline_garbage(rng: &mut Rng) -> Vec<u8> {
    const PIECES: &[&str] = &[
        "PING", "ECHO", "GET", "SET", "fz", "\"", "'", "\\", "\\x4", "\\x41", "\\n", "\"a b\"",
        "'c\\'d'", " ", "  ", "\t", "\"\"", "''", "x\"y", "\"a\"b", "\r", "*", "$", "0", "-1",
    ];
    let mut out = Vec::new();
    for _ in 0..1 + rng.below(8) {
        out.extend_from_slice(rng.pick(PIECES).as_bytes());
        if rng.chance(60) {
            out.push(b' ');
        }
    }
    match rng.below(4) {
        0 => {}
        1 => out.push(b'\n'),
        _ => out.extend_from_slice(b"\r\n"),
    }
    out
}

/// A non-blocking fuzz connection with a budget of frames before reopening.
struct FuzzConn {
    stream: Option<TcpStream>,
    budget: usize,
}

impl FuzzConn {
    fn open(port: u16, rng: &mut Rng) -> FuzzConn {
        let stream = TcpStream::connect(("127.0.0.1", port)).ok().and_then(|s| {
            s.set_nonblocking(true).ok()?;
            s.set_nodelay(true).ok()?;
            Some(s)
        });
        FuzzConn {
            stream,
            budget: 1 + rng.below(64),
        }
    }

    /// Discard whatever the server sent; false once it has closed.
    fn drain(&mut self) -> bool {
        let Some(s) = self.stream.as_mut() else {
            return false;
        };
        let mut buf = [0u8; 16 * 1024];
        loop {
            match s.read(&mut buf) {
                Ok(0) => return false,
                Ok(_) => continue,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return false,
            }
        }
    }

    /// Send a frame, draining replies while the socket is full. False if the
    /// connection is gone or stuck.
    fn send(&mut self, frame: &[u8]) -> bool {
        let mut off = 0;
        let deadline = Instant::now() + Duration::from_secs(5);
        while off < frame.len() {
            let Some(s) = self.stream.as_mut() else {
                return false;
            };
            match s.write(&frame[off..]) {
                Ok(0) => return false,
                Ok(n) => off += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if !self.drain() || Instant::now() > deadline {
                        return false;
                    }
                    std::thread::sleep(Duration::from_millis(1));
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
        true
    }
}

/// The healthy client: exact answers or the test fails.
struct Healthy {
    conn: Conn,
    round: u64,
}

impl Healthy {
    fn check(&mut self, context: &dyn Fn() -> String) {
        self.round += 1;
        let r = self.round;
        let key = format!("healthy:{}", r % 97);
        let val = format!("value-{r}");
        let steps: [(Vec<String>, Vec<u8>); 4] = [
            (vec!["PING".into()], b"+PONG\r\n".to_vec()),
            (
                vec!["SET".into(), key.clone(), val.clone()],
                b"+OK\r\n".to_vec(),
            ),
            (
                vec!["GET".into(), key],
                format!("${}\r\n{}\r\n", val.len(), val).into_bytes(),
            ),
            (
                vec!["INCR".into(), "healthy:ctr".into()],
                format!(":{r}\r\n").into_bytes(),
            ),
        ];
        for (cmd, want) in steps {
            match self.conn.cmd(&cmd) {
                Ok(got) if got == want => {}
                Ok(got) => panic!(
                    "healthy client: {cmd:?} replied {} instead of {}\n{}",
                    escape_trunc(&got, 300),
                    escape_trunc(&want, 300),
                    context()
                ),
                Err(e) => panic!("healthy client: {cmd:?} failed: {e}\n{}", context()),
            }
        }
    }
}

fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn rss_bytes(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = s.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

#[test]
fn bad_input_never_kills_the_server() {
    let frames = env_num("FUZZ_FRAMES", 100_000) as usize;
    let budget = Duration::from_secs(env_num("FUZZ_SECONDS", 240));
    let mut rng = Rng(env_num("FUZZ_SEED", 0x9E37_79B9_7F4A_7C15).max(1));
    let mut srv = Server::start();
    let port = srv.port;
    let mut healthy = Healthy {
        conn: srv.connect(),
        round: 0,
    };
    let mut conns: Vec<FuzzConn> = (0..CONNECTIONS)
        .map(|_| FuzzConn::open(port, &mut rng))
        .collect();
    let mut history: VecDeque<(usize, usize, Vec<u8>)> = VecDeque::new();
    let (mut reopened, mut sent_bytes) = (0usize, 0usize);
    let started = Instant::now();
    let mut done = 0;
    for n in 0..frames {
        let i = rng.below(CONNECTIONS);
        let frame = gen_frame(&mut rng);
        sent_bytes += frame.len();
        if history.len() == HISTORY {
            history.pop_front();
        }
        history.push_back((n, i, frame.clone()));
        let c = &mut conns[i];
        let alive = c.stream.is_some() && c.send(&frame) && c.drain();
        c.budget = c.budget.saturating_sub(1);
        if !alive || c.budget == 0 {
            conns[i] = FuzzConn::open(port, &mut rng);
            reopened += 1;
        }
        done = n + 1;
        if done % HEALTH_EVERY == 0 {
            let ctx = || recent(&history);
            if !srv.is_alive() {
                panic!(
                    "redis-lite died after {done} frames (status {:?})\n{}",
                    srv.exit_status(),
                    ctx()
                );
            }
            healthy.check(&ctx);
        }
        if started.elapsed() > budget {
            eprintln!("fuzz: time budget {budget:?} reached after {done} of {frames} frames");
            break;
        }
    }
    // Final checks: still alive, answering on old and new connections.
    let ctx = || recent(&history);
    for c in conns.iter_mut() {
        c.drain();
    }
    drop(conns);
    assert!(
        srv.is_alive(),
        "redis-lite died at the end of the run\n{}",
        ctx()
    );
    healthy.check(&ctx);
    let mut fresh = srv.connect();
    assert_eq!(
        fresh.cmd(&["PING"]).ok().as_deref(),
        Some(&b"+PONG\r\n"[..]),
        "a new connection gets PONG"
    );
    let dbsize = fresh
        .cmd(&["DBSIZE"])
        .map(|r| common::escape(&r))
        .unwrap_or_default();
    if let Some(rss) = rss_bytes(srv.pid()) {
        assert!(
            rss < MAX_RSS,
            "redis-lite RSS {} MB after fuzzing",
            rss >> 20
        );
        println!("fuzz: server RSS {} MB, DBSIZE {dbsize}", rss >> 20);
    }
    println!(
        "fuzz: {done} frames ({} KB) over {CONNECTIONS} connections, {reopened} reopens, {} health checks, {:?}",
        sent_bytes >> 10,
        healthy.round,
        started.elapsed()
    );
}

fn recent(history: &VecDeque<(usize, usize, Vec<u8>)>) -> String {
    let mut s = String::from("last frames sent (frame#, connection, bytes):\n");
    for (n, i, f) in history {
        s.push_str(&format!("  #{n} conn {i}: \"{}\"\n", escape_trunc(f, 200)));
    }
    s
}
