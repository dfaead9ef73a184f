//! Streams beyond replies: how a stream is freed (lazyfree.c's effort for a
//! stream: its rax nodes, plus groups x the first group's PEL), compared
//! with redis-server, and hostile arguments to every stream command, which
//! must get error replies and never take the server down.

mod common;

use common::{encode_command, run_on_both, Conn, Process};
use std::time::{Duration, Instant};

/// `lazyfreed_objects` from INFO memory.
fn lazyfreed(c: &mut Conn) -> u64 {
    let reply = c.must(&["INFO", "memory"]);
    String::from_utf8_lossy(&reply)
        .lines()
        .find_map(|l| l.strip_prefix("lazyfreed_objects:"))
        .and_then(|v| v.trim().parse().ok())
        .expect("lazyfreed_objects in INFO memory")
}

/// Wait (bounded) for the lazy-free thread to reach `n` freed objects.
fn wait_lazyfreed(c: &mut Conn, n: u64) -> u64 {
    let start = Instant::now();
    loop {
        let v = lazyfreed(c);
        if v >= n || start.elapsed() > Duration::from_secs(5) {
            return v;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// XADD `n` entries with explicit IDs in one pipeline.
fn fill(c: &mut Conn, key: &str, n: usize) {
    let mut frames = Vec::new();
    for i in 1..=n {
        frames.extend(encode_command(&["XADD", key, &format!("{i}-0"), "f", "v"]));
    }
    c.send(&frames).unwrap();
    for _ in 0..n {
        c.read_reply().unwrap();
    }
}

#[test]
fn unlink_frees_streams_by_their_effort() {
    run_on_both(|srv: &Process| {
        let mut c = srv.connect();
        let mut out = Vec::new();
        c.must(&["CONFIG", "RESETSTAT"]);
        // 10000 entries: 100 nodes, well over LAZYFREE_THRESHOLD (64).
        fill(&mut c, "big", 10_000);
        out.push(String::from_utf8_lossy(&c.must(&["UNLINK", "big"])).into_owned());
        out.push(wait_lazyfreed(&mut c, 1).to_string());
        // 300 entries: 3 nodes, a handful of rax nodes: freed inline.
        fill(&mut c, "small", 300);
        c.must(&["UNLINK", "small"]);
        std::thread::sleep(Duration::from_millis(50));
        out.push(lazyfreed(&mut c).to_string());
        // One node, but a group with 100 pending entries: 2 + 1 x (1 + 100).
        fill(&mut c, "pel", 100);
        c.must(&["XGROUP", "CREATE", "pel", "g", "0"]);
        c.must(&["XREADGROUP", "GROUP", "g", "c", "STREAMS", "pel", ">"]);
        c.must(&["UNLINK", "pel"]);
        out.push(wait_lazyfreed(&mut c, 2).to_string());
        // The same with the PEL acknowledged: small again.
        fill(&mut c, "acked", 100);
        c.must(&["XGROUP", "CREATE", "acked", "g", "0"]);
        c.must(&[
            "XREADGROUP",
            "GROUP",
            "g",
            "c",
            "NOACK",
            "STREAMS",
            "acked",
            ">",
        ]);
        c.must(&["UNLINK", "acked"]);
        std::thread::sleep(Duration::from_millis(50));
        out.push(lazyfreed(&mut c).to_string());
        out
    });
}

/// xorshift64*, for the hostile argument lists.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[(self.next() % xs.len() as u64) as usize]
    }
}

#[test]
fn hostile_stream_arguments_get_replies() {
    let srv = common::Server::start();
    let mut c = srv.connect();
    let mut other = srv.connect();
    let cmds = [
        "XADD",
        "XRANGE",
        "XREVRANGE",
        "XLEN",
        "XDEL",
        "XTRIM",
        "XREAD",
        "XREADGROUP",
        "XACK",
        "XPENDING",
        "XCLAIM",
        "XAUTOCLAIM",
        "XSETID",
        "XGROUP",
        "XINFO",
    ];
    let words = [
        "s",
        "g",
        "c",
        "*",
        "$",
        ">",
        "-",
        "+",
        "(",
        "(0",
        "0",
        "1-1",
        "0-*",
        "9999999999999999999",
        "18446744073709551615-18446744073709551615",
        "-1",
        "-9223372036854775808",
        "9223372036854775807",
        "COUNT",
        "BLOCK",
        "STREAMS",
        "GROUP",
        "NOACK",
        "MAXLEN",
        "MINID",
        "~",
        "=",
        "LIMIT",
        "NOMKSTREAM",
        "IDLE",
        "TIME",
        "RETRYCOUNT",
        "FORCE",
        "JUSTID",
        "LASTID",
        "MKSTREAM",
        "ENTRIESREAD",
        "ENTRIESADDED",
        "MAXDELETEDID",
        "CREATE",
        "SETID",
        "DESTROY",
        "CREATECONSUMER",
        "DELCONSUMER",
        "STREAM",
        "GROUPS",
        "CONSUMERS",
        "FULL",
        "HELP",
        "",
        "\u{0}",
        "x\r\ny",
    ];
    c.must(&["XADD", "s", "1-0", "f", "v"]);
    c.must(&["XGROUP", "CREATE", "s", "g", "0"]);
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for _ in 0..5000 {
        let mut args = vec![rng.pick(&cmds).to_string()];
        let n = rng.next() % 9;
        for _ in 0..n {
            args.push(rng.pick(&words).to_string());
        }
        // BLOCK with a time could park us: keep the timeouts tiny.
        for i in 1..args.len() {
            if args[i - 1].eq_ignore_ascii_case("block") {
                args[i] = "1".into();
            }
        }
        match c.cmd(&args) {
            Ok(_) => {}
            Err(e) => panic!("{args:?}: {e}"),
        }
    }
    assert_eq!(other.must(&["PING"]), b"+PONG\r\n");
}
