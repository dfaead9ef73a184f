//! Helpers shared by the replication tests (replication_replica.rs,
//! replication_pair.rs, replication_diskless_load.rs ...): INFO fields,
//! DEBUG DIGEST, waiting for a link and for equal digests, the write
//! workload of every type both replay, and a fake master that reads the
//! replica's handshake and sends a scripted payload, and a SYNC client that
//! reads the replication stream (ReplStream) to compare it with Redis's.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::time::{Duration, Instant};

use super::{Conn, Process};

/// A generous bound for replication to catch up (never a timing assertion:
/// the tests poll until the state is reached or this passes).
pub const WAIT: Duration = Duration::from_secs(60);

pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

pub fn bulk(r: &[u8]) -> Vec<u8> {
    assert_eq!(r[0], b'$', "not a bulk reply: {}", text(r));
    let nl = r.iter().position(|&b| b == b'\n').unwrap();
    let n: usize = std::str::from_utf8(&r[1..nl - 1]).unwrap().parse().unwrap();
    r[nl + 1..nl + 1 + n].to_vec()
}

pub fn info(c: &mut Conn, section: &str) -> String {
    text(&bulk(&c.must(&["INFO", section])))
}

pub fn info_field(c: &mut Conn, section: &str, name: &str) -> String {
    info(c, section)
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{name}:")))
        .unwrap_or_else(|| panic!("no {name} in INFO {section}"))
        .to_string()
}

pub fn digest(c: &mut Conn) -> String {
    let r = c.must(&["DEBUG", "DIGEST"]);
    text(&r[1..r.len() - 2])
}

pub fn wait_until(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + WAIT;
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

pub fn log_text(p: &Process) -> String {
    std::fs::read_to_string(&p.log).unwrap_or_default()
}

pub fn wait_link_up(replica: &Process) {
    let mut c = replica.connect();
    wait_until("master_link_status:up", || {
        info_field(&mut c, "replication", "master_link_status") == "up"
    });
}

/// Poll until both datasets digest the same (the stream is asynchronous).
pub fn wait_digests_equal(master: &Process, replica: &Process) {
    let mut m = master.connect();
    let mut r = replica.connect();
    let deadline = Instant::now() + WAIT;
    let last = loop {
        let last = (digest(&mut m), digest(&mut r));
        if last.0 == last.1 {
            return;
        }
        if Instant::now() > deadline {
            break last;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    panic!(
        "digests differ: master {} replica {}\n--- replica log ---\n{}",
        last.0,
        last.1,
        replica.log_tail()
    );
}

/// A write workload touching every type, expiries (long and already
/// passing), a script, a transaction, and two databases. `tag` keeps the
/// keys of successive rounds apart.
pub fn workload(c: &mut Conn, tag: &str) {
    let k = |s: &str| format!("{tag}:{s}");
    c.must(&["SELECT", "0"]);
    c.must(&["SET", &k("str"), "hello"]);
    c.must(&["APPEND", &k("str"), " world"]);
    c.must(&["INCRBY", &k("n"), "41"]);
    c.must(&["INCRBYFLOAT", &k("f"), "1.5"]);
    c.must(&["SETRANGE", &k("str2"), "5", "x"]);
    c.must(&["SETBIT", &k("bits"), "100", "1"]);
    c.must(&["PFADD", &k("hll"), "a", "b", "c"]);
    c.must(&["RPUSH", &k("list"), "a", "b", "c", "d"]);
    c.must(&["LPOP", &k("list")]);
    c.must(&["LINSERT", &k("list"), "BEFORE", "c", "bb"]);
    c.must(&["HSET", &k("hash"), "f1", "v1", "f2", "v2", "f3", "3"]);
    c.must(&["HINCRBY", &k("hash"), "f3", "4"]);
    c.must(&["HDEL", &k("hash"), "f1"]);
    c.must(&["SADD", &k("set"), "x", "y", "z", "1", "2"]);
    c.must(&["SREM", &k("set"), "y"]);
    c.must(&["SADD", &k("iset"), "1", "2", "3"]);
    c.must(&["ZADD", &k("zset"), "1", "a", "2", "b", "3.5", "c"]);
    c.must(&["ZINCRBY", &k("zset"), "10", "a"]);
    c.must(&["ZREM", &k("zset"), "b"]);
    c.must(&["XADD", &k("stream"), "*", "field", "value"]);
    c.must(&["XADD", &k("stream"), "*", "field", "value2"]);
    c.must(&["XGROUP", "CREATE", &k("stream"), "g1", "0"]);
    c.must(&[
        "XREADGROUP",
        "GROUP",
        "g1",
        "consumer",
        "COUNT",
        "1",
        "STREAMS",
        &k("stream"),
        ">",
    ]);
    // Expiries: a long one (stays), one that passes at once (the master's
    // DEL removes it on the replica), EXPIRE turned into PEXPIREAT.
    c.must(&["SET", &k("ttl"), "v", "EX", "1000"]);
    c.must(&["SET", &k("short"), "v", "PX", "1"]);
    c.must(&["SET", &k("exp"), "v"]);
    c.must(&["EXPIRE", &k("exp"), "500"]);
    c.must(&["SET", &k("persist"), "v", "EX", "100"]);
    c.must(&["PERSIST", &k("persist")]);
    // A script: its effects reach the replica.
    c.must(&[
        "EVAL",
        "redis.call('set', KEYS[1], ARGV[1]); redis.call('rpush', KEYS[2], ARGV[1]); return 1",
        "2",
        &k("evalstr"),
        &k("evallist"),
        "from-lua",
    ]);
    // A transaction.
    c.must(&["MULTI"]);
    c.must(&["INCR", &k("multi-n")]);
    c.must(&["SADD", &k("multi-set"), "m1", "m2"]);
    c.must(&["DEL", &k("str2")]);
    c.must(&["EXEC"]);
    // A second database.
    c.must(&["SELECT", "9"]);
    c.must(&["SET", &k("db9"), "nine"]);
    c.must(&["HSET", &k("db9hash"), "a", "1"]);
    c.must(&["EXPIRE", &k("db9hash"), "800"]);
    c.must(&["SELECT", "0"]);
    // Large values (not listpack/intset encoded).
    let big = "v".repeat(5000);
    c.must(&["SET", &k("big"), &big]);
    c.must(&["HSET", &k("bighash"), "f", &big]);
}

/// One command from the replica, read as a master would (multibulk).
pub fn read_command(r: &mut BufReader<std::net::TcpStream>) -> Option<Vec<String>> {
    let mut line = String::new();
    if r.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let n: usize = line.trim().strip_prefix('*')?.parse().ok()?;
    let mut args = Vec::new();
    for _ in 0..n {
        line.clear();
        r.read_line(&mut line).ok()?;
        let len: usize = line.trim().strip_prefix('$')?.parse().ok()?;
        let mut buf = vec![0u8; len + 2];
        r.read_exact(&mut buf).ok()?;
        buf.truncate(len);
        args.push(text(&buf));
    }
    Some(args)
}

/// The master's side of one replica link: PING gets +PONG, PSYNC gets
/// `+FULLRESYNC <replid> 0` and `payload`, REPLCONF ACKs after the sync
/// get nothing (the handshake's REPLCONFs and everything else get +OK).
/// With `hold` it keeps the link and reads on until the replica closes it;
/// otherwise it returns right after the payload, which closes the link.
fn serve_replica_link(stream: std::net::TcpStream, replid: char, payload: &[u8], hold: bool) {
    let mut w = stream.try_clone().unwrap();
    let mut r = BufReader::new(stream);
    while let Some(cmd) = read_command(&mut r) {
        match cmd[0].to_ascii_uppercase().as_str() {
            "PING" => w.write_all(b"+PONG\r\n").unwrap(),
            "PSYNC" => {
                let id = replid.to_string().repeat(40);
                w.write_all(format!("+FULLRESYNC {id} 0\r\n").as_bytes())
                    .unwrap();
                let _ = w.write_all(payload);
                if !hold {
                    return;
                }
            }
            "REPLCONF" if cmd.get(1).is_some_and(|a| a.eq_ignore_ascii_case("ack")) => {}
            _ => w.write_all(b"+OK\r\n").unwrap(),
        }
    }
}

/// A fake master for the failure cases: for each payload in `scripts` it
/// accepts one link from the replica, answers the handshake, sends the
/// payload after +FULLRESYNC and closes the link.
pub fn fake_master(listener: TcpListener, scripts: Vec<Vec<u8>>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        for payload in scripts {
            let Ok((stream, _)) = listener.accept() else {
                return;
            };
            serve_replica_link(stream, 'f', &payload, false);
        }
    })
}

/// A fake master that answers the handshake, sends `payload` after
/// +FULLRESYNC, then keeps the connection open and says nothing more,
/// until the replica gives up on it and closes the link.
pub fn silent_master(listener: TcpListener, payload: Vec<u8>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let Ok((stream, _)) = listener.accept() else {
            return;
        };
        serve_replica_link(stream, 'e', &payload, true);
    })
}

// ---------------------------------------------------------------------------
// The replication stream as a replica reads it
// ---------------------------------------------------------------------------

/// The key of the write that ends every stream read (`until_marker`): once
/// it arrives, everything the commands before it propagated has arrived.
pub const STREAM_MARKER: &str = "repl-stream-marker";

/// attach_to_replication_stream (Redis's tests/test_helper.tcl): a raw
/// client that sends SYNC, skips the RDB payload, and then reads the
/// commands the master propagates, exactly as a replica receives them.
pub struct ReplStream {
    sock: std::net::TcpStream,
    buf: Vec<u8>,
    port: u16,
}

impl ReplStream {
    /// SYNC to the server on `port` and skip its `$<len>` RDB. The cron's
    /// keep-alive PINGs are pushed an hour away first, as the Tcl helper
    /// does (repl-ping-replica-period 3600).
    pub fn attach(port: u16) -> ReplStream {
        use std::io::Write;
        let mut admin = Conn::connect(port).expect("connect");
        admin.must(&["CONFIG", "SET", "repl-ping-replica-period", "3600"]);
        let mut sock = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
        sock.set_read_timeout(Some(WAIT)).unwrap();
        sock.write_all(b"SYNC\r\n").unwrap();
        let mut s = ReplStream {
            sock,
            buf: Vec::new(),
            port,
        };
        // Newlines before the count are the master's keep-alives while it
        // prepares the RDB.
        let (len, start) = loop {
            while s.buf.first() == Some(&b'\n') {
                s.buf.remove(0);
            }
            if let Some(nl) = s.buf.iter().position(|&b| b == b'\n') {
                assert_eq!(s.buf[0], b'$', "not a bulk: {}", text(&s.buf));
                let len: usize = text(&s.buf[1..nl - 1]).parse().expect("RDB length");
                break (len, nl + 1);
            }
            s.fill("the RDB length");
        };
        while s.buf.len() < start + len {
            s.fill("the RDB");
        }
        s.buf.drain(..start + len);
        s
    }

    fn fill(&mut self, what: &str) {
        use std::io::Read;
        let mut tmp = [0u8; 16 * 1024];
        let n = self
            .sock
            .read(&mut tmp)
            .unwrap_or_else(|e| panic!("reading {what}: {e}; so far: {}", text(&self.buf)));
        assert!(n > 0, "closed while reading {what}: {}", text(&self.buf));
        self.buf.extend_from_slice(&tmp[..n]);
    }

    /// The next command of the stream as raw RESP (a PING included).
    pub fn next_raw(&mut self) -> Vec<u8> {
        loop {
            match super::reply_len(&self.buf) {
                Ok(Some(n)) => return self.buf.drain(..n).collect(),
                Ok(None) => self.fill("the stream"),
                Err(why) => panic!("bad stream ({why}): {}", text(&self.buf)),
            }
        }
    }

    /// Write `SET repl-stream-marker 1` on the server and return the raw
    /// stream up to and including it, without the cron's PINGs.
    pub fn raw_until_marker(&mut self) -> Vec<u8> {
        let mut c = Conn::connect(self.port).expect("connect");
        c.must(&["SET", STREAM_MARKER, "1"]);
        let end = super::encode_command(&["SET", STREAM_MARKER, "1"]);
        let ping = super::encode_command(&["PING"]);
        let mut out = Vec::new();
        loop {
            let cmd = self.next_raw();
            if cmd == ping {
                continue;
            }
            out.extend_from_slice(&cmd);
            if cmd == end {
                return out;
            }
        }
    }

    /// Everything the stream holds until the server closes it (REPLICAOF
    /// NO ONE disconnects the replicas), without the cron's PINGs.
    pub fn raw_until_close(&mut self) -> Vec<u8> {
        use std::io::Read;
        let mut tmp = [0u8; 16 * 1024];
        loop {
            match self.sock.read(&mut tmp) {
                Ok(0) => break,
                Ok(n) => self.buf.extend_from_slice(&tmp[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break,
                Err(e) => panic!("reading the stream: {e}; so far: {}", text(&self.buf)),
            }
        }
        let ping = super::encode_command(&["PING"]);
        let mut out = Vec::new();
        while !self.buf.is_empty() {
            let cmd = self.next_raw();
            if cmd != ping {
                out.extend_from_slice(&cmd);
            }
        }
        out
    }

    /// The commands propagated before the marker (`raw_until_marker`), each
    /// as its arguments (`parse_stream`, names as sent). A SELECT right before the marker
    /// (the marker is written in db 0) is left out with it.
    pub fn until_marker(&mut self) -> Vec<Vec<String>> {
        let mut cmds = parse_stream(&self.raw_until_marker());
        cmds.pop(); // the marker
        if cmds
            .last()
            .is_some_and(|c| c[0].eq_ignore_ascii_case("select") && c[1] == "0")
        {
            cmds.pop();
        }
        cmds
    }

    /// The commands propagated until the server closes the stream.
    pub fn until_close(&mut self) -> Vec<Vec<String>> {
        parse_stream(&self.raw_until_close())
    }
}

/// Split raw stream bytes into commands, each as its arguments, as sent
/// (RESP bulks are canonical: equal arguments are equal bytes).
pub fn parse_stream(raw: &[u8]) -> Vec<Vec<String>> {
    let mut cmds = Vec::new();
    let mut p = 0;
    while p < raw.len() {
        let n = super::reply_len(&raw[p..]).unwrap().unwrap();
        let (_, elems) = super::split_aggregate(&raw[p..p + n]).expect("a command");
        cmds.push(elems.iter().map(|e| text(&bulk(e))).collect());
        p += n;
    }
    cmds
}

/// Arguments that differ between two runs only because the clock moved:
/// absolute unix times in milliseconds (PXAT, PEXPIREAT, RESTORE ABSTTL)
/// and the time part of stream IDs become `<ms>`.
pub fn mask_times(cmds: &[Vec<String>]) -> Vec<Vec<String>> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    // Within a day before and a year after now: a time, not a count.
    let is_time = |s: &str| {
        s.len() >= 12
            && s.bytes().all(|b| b.is_ascii_digit())
            && s.parse::<u64>()
                .is_ok_and(|v| v + 86_400_000 > now && v < now + 365 * 86_400_000)
    };
    cmds.iter()
        .map(|c| {
            c.iter()
                .map(|a| match a.split_once('-') {
                    Some((ms, seq)) if is_time(ms) && seq.bytes().all(|b| b.is_ascii_digit()) => {
                        format!("<ms>-{seq}")
                    }
                    _ if is_time(a) => "<ms>".to_string(),
                    _ => a.clone(),
                })
                .collect()
        })
        .collect()
}

/// One command per line, for assertion messages.
pub fn show_stream(cmds: &[Vec<String>]) -> String {
    cmds.iter()
        .map(|c| c.join(" "))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Run `scenario` on a fresh redis-lite and on a fresh redis-server (both
/// started with `extra`), each with a replication stream attached first,
/// and assert both propagate the same commands (times masked) up to the
/// marker. Returns redis-lite's stream for further checks, or None
/// (SKIPPED; a failure under CI=true) without redis-server.
pub fn same_stream_on_both(
    extra: &[&str],
    scenario: impl Fn(&Process),
) -> Option<Vec<Vec<String>>> {
    compare_streams(extra, scenario, ReplStream::until_marker, |s| s)
}

/// Like `same_stream_on_both`, for a scenario after which the server
/// closes its replicas' links: the stream is read until it closes.
pub fn same_stream_on_both_until_close(
    extra: &[&str],
    scenario: impl Fn(&Process),
) -> Option<Vec<Vec<String>>> {
    compare_streams(extra, scenario, ReplStream::until_close, |s| s)
}

/// The general form: `read` takes the stream after the scenario, and
/// `normalize` blanks what is random on both servers (which member SPOP
/// picks) before the comparison.
pub fn compare_streams(
    extra: &[&str],
    scenario: impl Fn(&Process),
    read: fn(&mut ReplStream) -> Vec<Vec<String>>,
    normalize: fn(Vec<Vec<String>>) -> Vec<Vec<String>>,
) -> Option<Vec<Vec<String>>> {
    let real = super::RealRedis::start_with(extra)?;
    let lite = super::Server::start_with(extra);
    let run = |p: &Process| {
        let mut s = ReplStream::attach(p.port);
        scenario(p);
        normalize(mask_times(&read(&mut s)))
    };
    let ours = run(&lite);
    let theirs = run(&real);
    // Compared as sent (the command names' case included) ...
    assert_eq!(
        show_stream(&ours),
        show_stream(&theirs),
        "replication stream: redis-lite (left) vs redis-server (right)"
    );
    // ... and returned as the Tcl helper reads them, names lowercased.
    Some(lowercase_names(ours))
}

/// The command names lowercased, as read_from_replication_stream reads
/// them (the patterns of Redis's tests are written that way).
pub fn lowercase_names(mut cmds: Vec<Vec<String>>) -> Vec<Vec<String>> {
    for c in &mut cmds {
        c[0] = c[0].to_lowercase();
    }
    cmds
}
