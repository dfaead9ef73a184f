//! Client limits: what keeps one client (or 10,000 of them) from taking the
//! server down, each checked over TCP against the real binary.
//!
//! * `maxclients`: 10,000 connections are accepted and served, the 10,001st
//!   gets `-ERR max number of clients reached` and is closed.
//! * `client-output-buffer-limit`: a subscriber and a MONITOR that stop
//!   reading are cut at their class's hard limit, and the server's RSS stays
//!   bounded while a publisher goes on.
//! * `client-query-buffer-limit`, the pre-authentication limits (more than
//!   10 arguments, a bulk over 16 KB), protected mode's `-DENIED`, and the
//!   idle `timeout` (which spares blocked and subscribed clients).
//!
//! Where Redis is the reference the same scenario runs on a real
//! `redis-server` too (`run_on_both`). No test measures time: waits are
//! generous upper bounds for something that must happen.

mod common;

use common::{Conn, RealRedis, Server};
use std::time::Duration;

/// Raise this process's RLIMIT_NOFILE to its hard limit, so the test can
/// hold 10,000 sockets (the servers it starts inherit it). Returns the new
/// soft limit.
fn raise_nofile_limit() -> u64 {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit read and write a struct we own.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return 0;
        }
        lim.rlim_cur = lim.rlim_max;
        libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim);
    }
    lim.rlim_cur
}

/// The server's resident set size in KB (VmRSS of /proc/PID/status).
fn rss_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// `name:value` from INFO.
fn info_field(c: &mut Conn, section: &str, name: &str) -> String {
    let r = c.must(&["INFO", section]);
    let text = String::from_utf8_lossy(&r).into_owned();
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{name}:")))
        .unwrap_or("")
        .trim()
        .to_string()
}

#[test]
fn maxclients_10000_are_served_and_the_10001st_is_refused() {
    const N: usize = 10_000;
    if raise_nofile_limit() < N as u64 + 200 {
        common::skipped("RLIMIT_NOFILE hard limit too low for 10,000 client sockets");
        return;
    }
    let srv = Server::start_with(&["--maxclients", "10000"]);
    let mut conns = Vec::with_capacity(N);
    for i in 0..N {
        let c = Conn::connect(srv.port).unwrap_or_else(|e| panic!("connection {i}: {e}"));
        conns.push(c);
    }
    // Every one of them is served, pipelined in waves of 1,000.
    for wave in conns.chunks_mut(1000) {
        for c in wave.iter_mut() {
            c.send(b"PING\r\n").expect("send PING");
        }
        for c in wave.iter_mut() {
            assert_eq!(c.read_reply().expect("PONG"), b"+PONG\r\n");
        }
    }
    // One more: Redis's error, then the connection closes.
    let mut extra = Conn::connect(srv.port).expect("connect #10001");
    let (bytes, closed) =
        extra.read_until_close_or_idle(Duration::from_secs(10), Duration::from_secs(10));
    assert_eq!(bytes, b"-ERR max number of clients reached\r\n");
    assert!(closed, "the refused connection is closed");
    // Once one leaves, a newcomer gets in.
    drop(conns.pop());
    let mut ok = None;
    for _ in 0..200 {
        let mut c = Conn::connect(srv.port).expect("connect");
        if let Ok(r) = c.cmd(&["PING"]) {
            if r == b"+PONG\r\n" {
                ok = Some(c);
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut c = ok.expect("a slot freed by a closed client is reused");
    assert_eq!(info_field(&mut c, "clients", "maxclients"), "10000");
    assert!(
        info_field(&mut c, "stats", "rejected_connections")
            .parse::<u64>()
            .unwrap()
            >= 1
    );
}

/// CONFIG SET maxclients past what the system allows: the descriptor
/// limit cannot be raised that far (2,000,032 descriptors: even root stops
/// at fs.nr_open, 1,048,576 by default), so
/// updateMaxclients fails with the number that would work, and maxclients
/// keeps its old value. Compared with redis-server on the same machine,
/// where the number is the same.
#[test]
fn config_set_maxclients_past_the_fd_limit_is_refused_with_the_number_that_fits() {
    let outcome = common::run_on_both(|p| {
        let mut c = p.connect();
        let err = c.must(&["CONFIG", "SET", "maxclients", "2000000"]);
        (err, c.must(&["CONFIG", "GET", "maxclients"]))
    });
    let err = String::from_utf8_lossy(&outcome.0).into_owned();
    assert!(
        err.starts_with(
            "-ERR CONFIG SET failed (possibly related to argument 'maxclients') - The operating system is not able to handle the specified number of clients, try with "
        ),
        "{err}"
    );
    assert_eq!(
        outcome.1,
        b"*2\r\n$10\r\nmaxclients\r\n$5\r\n10000\r\n".to_vec()
    );
}

#[test]
fn subscriber_that_stops_reading_is_cut_at_the_pubsub_hard_limit() {
    let srv = Server::start_with(&["--client-output-buffer-limit", "pubsub 1mb 0 0"]);
    let mut sub = srv.connect();
    sub.must(&["SUBSCRIBE", "ch"]);
    // From here on the subscriber reads nothing.
    let mut publisher = srv.connect();
    let payload = vec![b'x'; 64 * 1024];
    let before = rss_kb(srv.pid());
    let mut receivers = Vec::new();
    // 64 MB published in all: 64x the limit.
    for _ in 0..1024 {
        let r = publisher.must(&[&b"PUBLISH"[..], b"ch", &payload]);
        receivers.push(r);
    }
    // The first messages reached it; once its buffer passed 1 MB it was
    // closed and later messages had no receiver.
    assert_eq!(receivers[0], b":1\r\n");
    assert_eq!(receivers.last().unwrap(), b":0\r\n");
    let after = rss_kb(srv.pid());
    assert!(
        after < before + 32 * 1024,
        "RSS grew from {before} KB to {after} KB while the slow subscriber was cut at 1 MB"
    );
    assert!(sub.closed_within(Duration::from_secs(10)));
    let log = std::fs::read_to_string(&srv.log).unwrap_or_default();
    assert!(log.contains("scheduled to be closed ASAP for overcoming of output buffer limits."));
}

#[test]
fn monitor_that_stops_reading_is_cut_at_its_class_limit() {
    // MONITOR clients are in the `normal` class for output limits.
    let srv = Server::start_with(&["--client-output-buffer-limit", "normal 1mb 0 0"]);
    let mut mon = srv.connect();
    assert_eq!(mon.must(&["MONITOR"]), b"+OK\r\n");
    let mut writer = srv.connect();
    let value = vec![b'v'; 32 * 1024];
    for i in 0..512 {
        let key = format!("k{i}");
        writer.must(&[&b"SET"[..], key.as_bytes(), &value]);
        if i % 64 == 0 {
            // The monitor is still in CLIENT LIST until it passes 1 MB.
            let _ = writer.must(&["CLIENT", "LIST"]);
        }
    }
    assert!(mon.closed_within(Duration::from_secs(10)), "MONITOR cut");
    let list = writer.must(&["CLIENT", "LIST"]);
    assert!(!String::from_utf8_lossy(&list).contains("flags=O"));
}

#[test]
fn client_query_buffer_limit_closes_the_client() {
    let srv = Server::start_with(&["--client-query-buffer-limit", "1mb"]);
    let mut c = srv.connect();
    // A big argument announced past the limit: closed without a reply.
    c.send(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2000000\r\n")
        .unwrap();
    c.send(&vec![b'a'; 64 * 1024]).unwrap();
    let (bytes, closed) =
        c.read_until_close_or_idle(Duration::from_secs(10), Duration::from_secs(10));
    assert!(closed);
    assert!(bytes.is_empty(), "no reply: {}", common::escape(&bytes));
    // An inline request that never ends: the buffer passes 1 MB (the
    // inline limit of 64 KB answers first, as in Redis).
    let mut other = srv.connect();
    assert_eq!(other.must(&["PING"]), b"+PONG\r\n");
    let log = std::fs::read_to_string(&srv.log).unwrap_or_default();
    assert!(log.contains("Closing client that reached max query buffer length: id="));
}

#[test]
fn unauthenticated_clients_get_the_small_protocol_limits() {
    let replies = common::run_on_both(|srv| {
        let mut out = Vec::new();
        let mut a = srv.connect();
        a.must(&["CONFIG", "SET", "requirepass", "secret"]);
        // More than 10 arguments before AUTH.
        let mut c = srv.connect();
        c.send(b"*11\r\n").unwrap();
        out.push(c.read_until_close_or_idle(Duration::from_secs(10), Duration::from_secs(10)));
        // A bulk over 16 KB before AUTH.
        let mut c = srv.connect();
        c.send(b"*1\r\n$16385\r\n").unwrap();
        out.push(c.read_until_close_or_idle(Duration::from_secs(10), Duration::from_secs(10)));
        // Ten arguments and a 16 KB bulk are fine (NOAUTH, connection lives).
        let mut c = srv.connect();
        let big = vec![b'b'; 16 * 1024];
        let mut args: Vec<&[u8]> = vec![b"SET", b"k", &big];
        args.extend(std::iter::repeat_n(&b"x"[..], 7));
        out.push((c.cmd(&args).unwrap(), false));
        a.must(&["AUTH", "secret"]);
        a.must(&["CONFIG", "SET", "requirepass", ""]);
        out
    });
    assert_eq!(
        replies[0],
        (
            b"-ERR Protocol error: unauthenticated multibulk length\r\n".to_vec(),
            true
        )
    );
    assert_eq!(
        replies[1],
        (
            b"-ERR Protocol error: unauthenticated bulk length\r\n".to_vec(),
            true
        )
    );
}

/// A non-loopback address of this machine, if it has one (the source of
/// a UDP "connection" to a documentation address; nothing is sent).
fn non_loopback_ip() -> Option<std::net::IpAddr> {
    let s = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    s.connect("192.0.2.1:9").ok()?;
    let ip = s.local_addr().ok()?.ip();
    (!ip.is_loopback() && !ip.is_unspecified()).then_some(ip)
}

#[test]
fn protected_mode_denies_non_loopback_clients() {
    let Some(ip) = non_loopback_ip() else {
        common::skipped("no non-loopback address on this machine");
        return;
    };
    let read_from = |port: u16| {
        let addr = std::net::SocketAddr::new(ip, port);
        let mut s = std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(5))
            .expect("connect via the non-loopback address");
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut out = Vec::new();
        let _ = std::io::Read::read_to_end(&mut s, &mut out);
        out
    };
    let args = ["--bind", "0.0.0.0", "--protected-mode", "yes"];
    let lite = Server::start_with(&args);
    let ours = read_from(lite.port);
    assert!(
        ours.starts_with(b"-DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user."),
        "{}",
        common::escape(&ours)
    );
    assert!(ours.ends_with(b"the server to start accepting connections from the outside.\r\n"));
    // Loopback clients are served as usual, and counted the refusal.
    let mut local = lite.connect();
    assert_eq!(info_field(&mut local, "stats", "rejected_connections"), "1");
    // With a password on the default user the same client gets in.
    local.must(&["CONFIG", "SET", "requirepass", "pw"]);
    let again = {
        let addr = std::net::SocketAddr::new(ip, lite.port);
        let mut s = Conn::connect(lite.port).unwrap();
        drop(s.cmd(&["AUTH", "pw"]));
        let mut t = std::net::TcpStream::connect(addr).unwrap();
        std::io::Write::write_all(&mut t, b"PING\r\n").unwrap();
        t.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut buf = [0u8; 256];
        let n = std::io::Read::read(&mut t, &mut buf).unwrap_or(0);
        buf[..n].to_vec()
    };
    assert!(again.starts_with(b"-NOAUTH"), "{}", common::escape(&again));
    if let Some(real) = RealRedis::start_with(&args) {
        assert_eq!(ours, read_from(real.port), "redis-lite vs redis-server");
    }
}

#[test]
fn idle_timeout_closes_idle_clients_but_not_blocked_or_subscribed_ones() {
    let srv = Server::start_with(&["--timeout", "1"]);
    let mut idle = srv.connect();
    assert_eq!(idle.must(&["PING"]), b"+PONG\r\n");
    let mut blocked = srv.connect();
    blocked.send_cmd(&["BLPOP", "nothing", "0"]).unwrap();
    let mut sub = srv.connect();
    sub.must(&["SUBSCRIBE", "ch"]);
    assert!(
        idle.closed_within(Duration::from_secs(15)),
        "idle client closed"
    );
    // The blocked client and the subscriber outlived it and still work.
    let mut pusher = srv.connect();
    pusher.must(&["RPUSH", "nothing", "v"]);
    assert_eq!(
        blocked.read_reply().unwrap(),
        b"*2\r\n$7\r\nnothing\r\n$1\r\nv\r\n"
    );
    assert_eq!(pusher.must(&["PUBLISH", "ch", "m"]), b":1\r\n");
}

#[test]
fn bind_takes_several_addresses_and_optional_ones() {
    // `-` marks an address that may fail to bind (here 192.0.2.1, which
    // this machine does not have): the server starts on the others.
    let srv = Server::start_with(&["--bind", "127.0.0.1 -192.0.2.1"]);
    let mut c = srv.connect();
    assert_eq!(c.must(&["PING"]), b"+PONG\r\n");
    let bind = c.must(&["CONFIG", "GET", "bind"]);
    assert!(String::from_utf8_lossy(&bind).contains("127.0.0.1 -192.0.2.1"));
}

/// The replica's side of a link (`slaveN:ip=...` on the master) when the
/// replica binds its connection to `source` first (`bind-source-addr`).
/// The master runs without protected mode: Redis counts only 127.0.0.1
/// and ::1 as local, and the replica may come from elsewhere in 127/8.
fn replica_ip_seen_by_master(
    start: &dyn Fn(&[&str]) -> Option<common::Process>,
    source: &str,
) -> Option<String> {
    let master = start(&["--protected-mode", "no"])?;
    let master_port = master.port.to_string();
    let replica = start(&[
        "--bind-source-addr",
        source,
        "--replicaof",
        "127.0.0.1",
        &master_port,
    ])?;
    let mut m = master.connect();
    let mut r = replica.connect();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while info_field(&mut r, "replication", "master_link_status") != "up" {
        assert!(std::time::Instant::now() < deadline, "link never came up");
        std::thread::sleep(Duration::from_millis(50));
    }
    let slave0 = info_field(&mut m, "replication", "slave0");
    Some(
        slave0
            .split(',')
            .find_map(|kv| kv.strip_prefix("ip="))
            .unwrap_or("")
            .to_string(),
    )
}

#[test]
fn bind_source_addr_is_the_replicas_address_on_its_link() {
    // On Linux the whole of 127/8 is the loopback interface.
    let ours = replica_ip_seen_by_master(&|a| Some(Server::start_with(a)), "127.0.0.2").unwrap();
    assert_eq!(ours, "127.0.0.2");
    if let Some(theirs) = replica_ip_seen_by_master(&|a| RealRedis::start_with(a), "127.0.0.2") {
        assert_eq!(ours, theirs, "redis-lite vs redis-server");
    }
}

#[test]
fn bind_source_addr_that_cannot_bind_is_dropped_for_the_connect() {
    // 192.0.2.1 (a documentation address) is not on this host: Redis's
    // best-effort binding connects from the default address instead.
    let ours = replica_ip_seen_by_master(&|a| Some(Server::start_with(a)), "192.0.2.1").unwrap();
    assert_eq!(ours, "127.0.0.1");
    if let Some(theirs) = replica_ip_seen_by_master(&|a| RealRedis::start_with(a), "192.0.2.1") {
        assert_eq!(ours, theirs, "redis-lite vs redis-server");
    }
}

/// Start `bin` with `bind ""` and the extra arguments, without waiting for
/// a TCP PING (there is no TCP listener).
fn spawn_unbound(bin: &std::path::Path, port: u16, extra: &[&str]) -> std::process::Child {
    let dir = common::temp_path("unbound");
    std::fs::create_dir_all(&dir).unwrap();
    std::process::Command::new(bin)
        .current_dir(&dir)
        .args(["--port", &port.to_string(), "--save", "", "--bind", ""])
        .args(extra)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn server")
}

/// `bind ""` and no unix socket: the server refuses to start. With a unix
/// socket it serves there and nothing listens on the TCP port.
fn unbound_behaviour(bin: &std::path::Path) -> (String, Vec<u8>, bool) {
    let port = common::free_port();
    let out = spawn_unbound(bin, port, &[]).wait_with_output().unwrap();
    let log = String::from_utf8_lossy(&out.stdout).into_owned();
    let fatal = log
        .lines()
        .find(|l| l.contains("listen anywhere"))
        .map(|l| l[l.find("Configured").unwrap()..].to_string())
        .unwrap_or_else(|| format!("no such line in:\n{log}"));
    assert!(!out.status.success());
    let sock = common::temp_path("unbound-sock").with_extension("sock");
    let mut child = spawn_unbound(bin, port, &["--unixsocket", sock.to_str().unwrap()]);
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let mut unix = loop {
        if let Ok(s) = std::os::unix::net::UnixStream::connect(&sock) {
            break s;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "unix socket never served"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    std::io::Write::write_all(&mut unix, b"PING\r\n").unwrap();
    unix.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut buf = [0u8; 64];
    let n = std::io::Read::read(&mut unix, &mut buf).unwrap();
    let tcp_refused = std::net::TcpStream::connect(("127.0.0.1", port)).is_err();
    let _ = child.kill();
    let _ = child.wait();
    (fatal, buf[..n].to_vec(), tcp_refused)
}

#[test]
fn empty_bind_listens_on_no_tcp_socket() {
    let ours = unbound_behaviour(std::path::Path::new(env!("CARGO_BIN_EXE_redis-lite")));
    assert_eq!(
        ours,
        (
            "Configured to not listen anywhere, exiting.".to_string(),
            b"+PONG\r\n".to_vec(),
            true
        )
    );
    if let Some(bin) = common::require_tool("redis-server") {
        assert_eq!(ours, unbound_behaviour(&bin), "redis-lite vs redis-server");
    }
}

/// 1000 keys of ~100 bytes: KEYS * replies with ~107 KB.
fn populate_long_keys(c: &mut Conn, n: usize) {
    let prefix = format!("long-key-name-prefix-of-100-chars{}", "-".repeat(67));
    for chunk in (0..n).collect::<Vec<_>>().chunks(100) {
        let mut args = vec!["MSET".to_string()];
        for i in chunk {
            args.push(format!("{prefix}{i}"));
            args.push(i.to_string());
        }
        assert_eq!(c.must(&args), b"+OK\r\n");
    }
}

/// What a client running KEYS * sees under `normal 100000 0 0`: whether the
/// server closed it, and how many keys a complete reply listed (0 if cut).
fn keys_under_a_100kb_limit(p: &common::Process, n: usize) -> (bool, usize) {
    let mut c = p.connect();
    c.must(&["FLUSHALL"]);
    c.must(&[
        "CONFIG",
        "SET",
        "client-output-buffer-limit",
        "normal 100000 0 0",
    ]);
    populate_long_keys(&mut c, n);
    c.send_cmd(&["KEYS", "*"]).unwrap();
    let (bytes, closed) =
        c.read_until_close_or_idle(Duration::from_secs(10), Duration::from_secs(2));
    let listed = if closed {
        0
    } else {
        let (_, items) = common::split_aggregate(&bytes).expect("a complete array");
        items.len()
    };
    (closed, listed)
}

/// Redis's unit/obuf-limits "KEYS stopped mid-run": KEYS adds each key to the
/// reply list as it goes (a deferred length, 16 KB blocks), so a reply that
/// grows past the hard limit closes the client during the walk. Built aside
/// and appended as one block, the same ~107 KB sat in a 96 KB allocation,
/// under the limit, and was sent whole.
#[test]
fn keys_reply_past_the_hard_limit_closes_the_client_mid_run() {
    let cut = common::run_on_both(|p| keys_under_a_100kb_limit(p, 1000));
    assert_eq!(cut, (true, 0));
    // Half as many keys stay under the limit: the whole reply, every key.
    let whole = common::run_on_both(|p| keys_under_a_100kb_limit(p, 500));
    assert_eq!(whole, (false, 500));
}
