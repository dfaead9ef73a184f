//! Helpers shared by the replication tests (replication_replica.rs,
//! replication_pair.rs, replication_diskless_load.rs ...): INFO fields,
//! DEBUG DIGEST, waiting for a link and for equal digests, the write
//! workload of every type both replay, and a fake master that reads the
//! replica's handshake and sends a scripted payload.

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
