//! MIGRATE, RESTORE-ASKING, LOLWUT and MODULE, with redis-server 7.0.15 as
//! the reference.
//!
//! MIGRATE speaks Redis's own protocol to its target, so it is tested in
//! every direction: redis-lite -> redis-lite, redis-lite -> redis-server and
//! redis-server -> redis-lite. Keys of every type (small and large
//! encodings, a stream with a consumer group, TTLs) must arrive equal. The
//! option forms (COPY, REPLACE, KEYS, AUTH, AUTH2, another db, NOKEY,
//! BUSYKEY, a target error in the middle of KEYS, a cached connection the
//! target closed) are one script whose transcript, run with redis-lite as
//! the source, must equal the transcript with redis-server as the source
//! against the same kind of target. Connect and read failures (IOERR),
//! argument errors and the AOF stream (MIGRATE propagates as DEL of the
//! moved keys) are byte-compared with redis-server.
//!
//! LOLWUT's art is random below its top two rows of squares (Redis seeds
//! rand() from the clock): the deterministic drawings are byte-compared,
//! the random ones compared in shape (lines, cells, the closing text).

mod common;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{free_port, run_on_both, split_aggregate, Conn, Process, RealRedis, Server};

fn text(r: &[u8]) -> String {
    String::from_utf8_lossy(r).into_owned()
}

/// The payload of a bulk (or verbatim) string reply.
fn bulk(r: &[u8]) -> Vec<u8> {
    let nl = r.iter().position(|&b| b == b'\n').expect("a bulk reply");
    r[nl + 1..r.len() - 2].to_vec()
}

fn info_field(c: &mut Conn, name: &str) -> String {
    let info = text(&bulk(&c.must(&["INFO", "stats"])));
    info.lines()
        .find_map(|l| l.strip_prefix(&format!("{name}:")))
        .unwrap_or_else(|| panic!("no {name} in INFO"))
        .to_string()
}

fn port_arg(p: &Process) -> String {
    p.port.to_string()
}

// ---------------------------------------------------------------------------
// Keys of every type arrive equal
// ---------------------------------------------------------------------------

/// Keys of every type and encoding; the `*_ttl` ones with a 100 s TTL.
fn fill_all_types(c: &mut Conn) -> Vec<String> {
    let big: String = "x".repeat(5000); // LZF-compressed in the payload
    let mut cmds: Vec<Vec<String>> = vec![
        vec!["SET".into(), "str".into(), "hello".into()],
        vec!["SET".into(), "int".into(), "12345".into()],
        vec!["SET".into(), "big".into(), big],
        vec![
            "RPUSH".into(),
            "list".into(),
            "a".into(),
            "b".into(),
            "c".into(),
        ],
        vec![
            "SADD".into(),
            "iset".into(),
            "1".into(),
            "2".into(),
            "3".into(),
        ],
        vec![
            "SADD".into(),
            "set".into(),
            "a".into(),
            "b".into(),
            "c".into(),
        ],
        vec![
            "HSET".into(),
            "hash".into(),
            "f1".into(),
            "v1".into(),
            "f2".into(),
            "v2".into(),
        ],
        vec![
            "ZADD".into(),
            "zset".into(),
            "1".into(),
            "a".into(),
            "2.5".into(),
            "b".into(),
        ],
        vec![
            "PFADD".into(),
            "hll".into(),
            "a".into(),
            "b".into(),
            "c".into(),
        ],
        vec![
            "XADD".into(),
            "stream".into(),
            "1-1".into(),
            "f".into(),
            "v".into(),
        ],
        vec![
            "XADD".into(),
            "stream".into(),
            "2-1".into(),
            "g".into(),
            "w".into(),
        ],
        vec![
            "XGROUP".into(),
            "CREATE".into(),
            "stream".into(),
            "grp".into(),
            "0".into(),
        ],
        vec![
            "XREADGROUP".into(),
            "GROUP".into(),
            "grp".into(),
            "alice".into(),
            "COUNT".into(),
            "1".into(),
            "STREAMS".into(),
            "stream".into(),
            ">".into(),
        ],
        vec![
            "SET".into(),
            "str_ttl".into(),
            "v".into(),
            "PX".into(),
            "100000".into(),
        ],
    ];
    // Big encodings: quicklist, hashtable, skiplist.
    let mut list = vec!["RPUSH".to_string(), "list_ttl".into()];
    let mut hash = vec!["HSET".to_string(), "hash_ttl".into()];
    let mut zset = vec!["ZADD".to_string(), "zset_ttl".into()];
    let mut set = vec!["SADD".to_string(), "set_ttl".into()];
    for i in 0..300 {
        list.push(format!("element-{i}"));
        hash.extend([format!("field-{i}"), format!("value-{i}")]);
        zset.extend([format!("{i}"), format!("member-{i}")]);
        set.push(format!("member-{i}"));
    }
    cmds.extend([list, hash, zset, set]);
    for k in ["list_ttl", "hash_ttl", "zset_ttl", "set_ttl"] {
        cmds.push(vec!["PEXPIRE".into(), k.into(), "100000".into()]);
    }
    for cmd in &cmds {
        let r = c.must(cmd);
        assert_ne!(r[0], b'-', "{cmd:?}: {}", text(&r));
    }
    let mut keys: Vec<String> = [
        "str", "int", "big", "list", "iset", "set", "hash", "zset", "hll", "stream", "str_ttl",
        "list_ttl", "hash_ttl", "zset_ttl", "set_ttl",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    keys.sort();
    keys
}

/// The elements of an aggregate reply, sorted (sets and hashes have no
/// order a client may rely on).
fn sorted_elements(r: &[u8]) -> Vec<Vec<u8>> {
    let (_, mut elems) = split_aggregate(r).expect("an aggregate");
    elems.sort();
    elems
}

/// What a key holds, read back with commands (independent of encodings).
fn contents(c: &mut Conn, key: &str) -> String {
    let t = text(&c.must(&["TYPE", key]));
    let body = match t.trim_end() {
        "+string" => text(&c.must(&["GET", key])),
        "+list" => text(&c.must(&["LRANGE", key, "0", "-1"])),
        "+set" => format!("{:?}", sorted_elements(&c.must(&["SMEMBERS", key]))),
        "+hash" => {
            let (_, e) = split_aggregate(&c.must(&["HGETALL", key])).unwrap();
            let mut pairs: Vec<_> = e.chunks(2).map(|p| p.to_vec()).collect();
            pairs.sort();
            format!("{pairs:?}")
        }
        "+zset" => text(&c.must(&["ZRANGE", key, "0", "-1", "WITHSCORES"])),
        "+stream" => {
            // Entries, the group with its last id and its pending entry.
            let entries = text(&c.must(&["XRANGE", key, "-", "+"]));
            let groups = text(&c.must(&["XINFO", "GROUPS", key]));
            let pending = text(&c.must(&["XPENDING", key, "grp"]));
            format!("{entries}|{groups}|{pending}")
        }
        other => panic!("{key}: unexpected type {other}"),
    };
    format!("{t}{body}")
}

/// The remaining TTL class: -1 (none) or "set, at most the 100 s given".
fn ttl_class(c: &mut Conn, key: &str) -> &'static str {
    let r = text(&c.must(&["PTTL", key]));
    let ms: i64 = r[1..].trim_end().parse().unwrap();
    match ms {
        -1 => "persistent",
        1..=100_000 => "ttl<=100s",
        _ => panic!("{key}: PTTL {ms}"),
    }
}

/// Move every key of `fill_all_types` from `src` to `dst`: half with the
/// one-key form, half with KEYS; check contents, TTLs and the source.
fn migrate_all_types(src: &Process, dst: &Process) {
    let (mut s, mut d) = (src.connect(), dst.connect());
    let keys = fill_all_types(&mut s);
    let before: Vec<(String, &str)> = keys
        .iter()
        .map(|k| (contents(&mut s, k), ttl_class(&mut s, k)))
        .collect();
    let port = port_arg(dst);
    let (one, many) = keys.split_at(keys.len() / 2);
    for k in one {
        let r = s.must(&["MIGRATE", "127.0.0.1", &port, k, "0", "5000"]);
        assert_eq!(text(&r), "+OK\r\n", "{} -> {}: {k}", src.name, dst.name);
    }
    let mut cmd: Vec<&str> = vec!["MIGRATE", "127.0.0.1", &port, "", "0", "5000", "KEYS"];
    cmd.extend(many.iter().map(|k| k.as_str()));
    assert_eq!(
        text(&s.must(&cmd)),
        "+OK\r\n",
        "{} -> {}",
        src.name,
        dst.name
    );

    assert_eq!(text(&s.must(&["DBSIZE"])), ":0\r\n", "source keeps nothing");
    for (k, (content, ttl)) in keys.iter().zip(&before) {
        assert_eq!(
            &contents(&mut d, k),
            content,
            "{} -> {}: {k}",
            src.name,
            dst.name
        );
        assert_eq!(
            ttl_class(&mut d, k),
            *ttl,
            "{} -> {}: {k}",
            src.name,
            dst.name
        );
    }
}

#[test]
fn every_type_moves_lite_to_lite() {
    let (src, dst) = (Server::start(), Server::start());
    migrate_all_types(&src, &dst);
}

#[test]
fn every_type_moves_lite_to_redis_server() {
    let Some(dst) = RealRedis::start() else {
        return;
    };
    migrate_all_types(&Server::start(), &dst);
}

#[test]
fn every_type_moves_redis_server_to_lite() {
    let Some(src) = RealRedis::start() else {
        return;
    };
    migrate_all_types(&src, &Server::start());
}

// ---------------------------------------------------------------------------
// The option forms: one script, the same transcript from both sources
// ---------------------------------------------------------------------------

/// Run `steps` of (which server, command) and record each reply.
/// (The target's port differs between runs: it is shown as `<port>`.)
struct Transcript {
    lines: Vec<String>,
    port: String,
}

impl Transcript {
    fn run(&mut self, c: &mut Conn, who: &str, cmd: &[&str]) -> Vec<u8> {
        let r = c.must(cmd);
        let shown: Vec<&str> = cmd
            .iter()
            .map(|a| if *a == self.port { "<port>" } else { a })
            .collect();
        self.lines.push(format!("{who} {shown:?} => {}", text(&r)));
        r
    }
}

/// COPY, REPLACE, BUSYKEY, NOKEY, KEYS (with a missing key, with a
/// target error in the middle), another db, a db the target refuses, the
/// socket cache, a cached connection killed by the target (MIGRATE retries
/// once on a new one), NOAUTH, AUTH and AUTH2 right and wrong, TTLs.
/// A SELECT the target refuses does not stop the RESTORE after it: Redis
/// pipelines both, so the key lands in the target's current db while the
/// source reports the error and keeps it (the next MIGRATE sees BUSYKEY).
fn forms_transcript(src: &Process, dst: &Process) -> Vec<String> {
    let (mut s, mut d) = (src.connect(), dst.connect());
    let port = port_arg(dst);
    let h = "127.0.0.1";
    let mut t = Transcript {
        lines: Vec::new(),
        port: port.clone(),
    };
    let mig = |t: &mut Transcript, s: &mut Conn, rest: &[&str]| {
        let mut cmd = vec!["MIGRATE", h, &port];
        cmd.extend_from_slice(rest);
        t.run(s, "src", &cmd)
    };

    t.run(&mut s, "src", &["SET", "k1", "v1"]);
    mig(&mut t, &mut s, &["k1", "0", "5000", "COPY"]);
    t.lines.push(format!(
        "migrate_cached_sockets:{}",
        info_field(&mut s, "migrate_cached_sockets")
    ));
    t.run(&mut s, "src", &["EXISTS", "k1"]);
    t.run(&mut d, "dst", &["GET", "k1"]);
    // Already there: BUSYKEY, the key stays.
    mig(&mut t, &mut s, &["k1", "0", "5000"]);
    t.run(&mut s, "src", &["EXISTS", "k1"]);
    t.run(&mut s, "src", &["SET", "k1", "v2"]);
    mig(&mut t, &mut s, &["k1", "0", "5000", "REPLACE"]);
    t.run(&mut s, "src", &["EXISTS", "k1"]);
    t.run(&mut d, "dst", &["GET", "k1"]);
    mig(&mut t, &mut s, &["k1", "0", "5000"]);

    // KEYS: missing keys are skipped; all missing is NOKEY.
    t.run(&mut s, "src", &["MSET", "a", "1", "b", "2"]);
    mig(
        &mut t,
        &mut s,
        &["", "0", "5000", "KEYS", "a", "nokey", "b"],
    );
    t.run(&mut s, "src", &["EXISTS", "a", "b"]);
    t.run(&mut d, "dst", &["MGET", "a", "b"]);
    mig(&mut t, &mut s, &["", "0", "5000", "KEYS", "x", "y"]);
    // A target error for one key: the others still move.
    t.run(&mut s, "src", &["MSET", "a", "3", "c", "4"]);
    mig(&mut t, &mut s, &["", "0", "5000", "KEYS", "a", "c"]);
    t.run(&mut s, "src", &["EXISTS", "a"]);
    t.run(&mut s, "src", &["EXISTS", "c"]);
    t.run(&mut d, "dst", &["MGET", "a", "c"]);

    // Another db, back to 0, and a db the target does not have.
    t.run(&mut s, "src", &["MSET", "e", "1", "f", "2", "g", "3"]);
    mig(&mut t, &mut s, &["e", "5", "5000"]);
    t.run(&mut d, "dst", &["SELECT", "5"]);
    t.run(&mut d, "dst", &["GET", "e"]);
    t.run(&mut d, "dst", &["SELECT", "0"]);
    mig(&mut t, &mut s, &["f", "0", "5000"]);
    t.run(&mut d, "dst", &["GET", "f"]);
    mig(&mut t, &mut s, &["g", "99", "5000"]);
    t.run(&mut s, "src", &["EXISTS", "g"]);
    mig(&mut t, &mut s, &["g", "0", "5000"]);

    // TTL travels as the remaining time.
    t.run(&mut s, "src", &["SET", "ttl", "v", "PX", "50000"]);
    mig(&mut t, &mut s, &["ttl", "0", "5000"]);
    let pttl = text(&d.must(&["PTTL", "ttl"]));
    let ms: i64 = pttl[1..].trim_end().parse().unwrap();
    t.lines
        .push(format!("ttl arrived: {}", (1..=50_000).contains(&ms)));

    // The target kills the cached connection and wants a password: the
    // first attempt finds the socket closed, the retry gets NOAUTH.
    t.run(&mut d, "dst", &["CONFIG", "SET", "requirepass", "pw"]);
    t.run(
        &mut d,
        "dst",
        &["CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"],
    );
    t.run(&mut s, "src", &["SET", "p", "1"]);
    mig(&mut t, &mut s, &["p", "0", "5000"]);
    mig(&mut t, &mut s, &["p", "0", "5000", "AUTH", "wrong"]);
    mig(&mut t, &mut s, &["p", "0", "5000", "AUTH", "pw"]);
    t.run(&mut d, "dst", &["GET", "p"]);
    t.run(
        &mut d,
        "dst",
        &["ACL", "SETUSER", "mover", "on", ">mpw", "~*", "+@all"],
    );
    t.run(&mut s, "src", &["SET", "q", "1"]);
    mig(&mut t, &mut s, &["q", "0", "5000", "AUTH2", "mover", "bad"]);
    mig(&mut t, &mut s, &["q", "0", "5000", "AUTH2", "mover", "mpw"]);
    t.run(&mut s, "src", &["EXISTS", "q"]);
    // The passwords never show in SLOWLOG.
    t.run(
        &mut s,
        "src",
        &["CONFIG", "SET", "slowlog-log-slower-than", "0"],
    );
    t.run(&mut s, "src", &["SET", "r", "1"]);
    mig(&mut t, &mut s, &["r", "0", "5000", "AUTH2", "mover", "mpw"]);
    let slow = text(&s.must(&["SLOWLOG", "GET", "2"]));
    t.lines.push(format!(
        "slowlog redacted: {} leaked: {}",
        slow.contains("(redacted)"),
        slow.contains("mpw")
    ));
    t.lines
}

fn compare_forms(dst_lite: bool) {
    let target = || {
        if dst_lite {
            Some(Server::start())
        } else {
            RealRedis::start()
        }
    };
    let Some(dst) = target() else { return };
    let ours = forms_transcript(&Server::start(), &dst);
    // Spot checks that hold without redis-server too.
    let all = ours.join("\n");
    for want in [
        "-ERR Target instance replied with error: BUSYKEY Target key name already exists.\r\n",
        "+NOKEY\r\n",
        "-ERR Target instance replied with error: NOAUTH Authentication required.\r\n",
        "-ERR Target instance replied with error: ERR DB index is out of range\r\n",
        "migrate_cached_sockets:1",
        "ttl arrived: true",
        "slowlog redacted: true leaked: false",
    ] {
        assert!(all.contains(want), "{want:?} missing from:\n{all}");
    }
    let Some(real) = RealRedis::start() else {
        return;
    };
    let Some(dst) = target() else { return };
    let theirs = forms_transcript(&real, &dst);
    assert_eq!(ours, theirs, "source redis-lite vs source redis-server");
}

#[test]
fn option_forms_match_redis_server_against_a_lite_target() {
    compare_forms(true);
}

#[test]
fn option_forms_match_redis_server_against_a_redis_server_target() {
    compare_forms(false);
}

// ---------------------------------------------------------------------------
// Failures: IOERR, argument errors
// ---------------------------------------------------------------------------

#[test]
fn ioerr_on_a_closed_port_and_a_silent_target() {
    // Nothing listens on `closed`; `silent` accepts (in the kernel's
    // backlog) but never answers, so the read times out. An unresolvable
    // host is the only way to get Redis's "connecting" IOERR.
    let closed = free_port().to_string();
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_port = silent.local_addr().unwrap().port().to_string();
    let out = run_on_both(|p| {
        let mut c = p.connect();
        c.must(&["SET", "k", "v"]);
        let mut out = Vec::new();
        for cmd in [
            // A host that does not resolve (the empty name fails in
            // getaddrinfo without asking DNS): connecting fails at once.
            vec!["MIGRATE", "", &closed, "k", "0", "1000"],
            // A refused handshake shows at the first write (Redis does not
            // check its connect's outcome).
            vec!["MIGRATE", "127.0.0.1", &closed, "k", "0", "1000"],
            vec!["MIGRATE", "127.0.0.1", "notaport", "k", "0", "1000"],
            vec!["MIGRATE", "127.0.0.1", &silent_port, "k", "0", "200"],
            vec![
                "MIGRATE",
                "127.0.0.1",
                &silent_port,
                "",
                "0",
                "200",
                "COPY",
                "KEYS",
                "k",
            ],
            vec!["EXISTS", "k"],
            vec!["INFO", "stats"],
        ] {
            let r = c.must(&cmd);
            out.push(if cmd[0] == "INFO" {
                let info = text(&bulk(&r));
                info.lines()
                    .find(|l| l.starts_with("migrate_cached_sockets:"))
                    .unwrap()
                    .to_string()
            } else {
                text(&r)
            });
        }
        out
    });
    assert_eq!(
        out,
        [
            "-IOERR error or timeout connecting to the client\r\n",
            "-IOERR error or timeout writing to target instance\r\n",
            "-IOERR error or timeout writing to target instance\r\n",
            "-IOERR error or timeout reading to target instance\r\n",
            "-IOERR error or timeout reading to target instance\r\n",
            ":1\r\n",
            "migrate_cached_sockets:0",
        ]
    );
}

#[test]
fn argument_errors_match_redis_server() {
    let payload_holder = Server::start();
    let dump = {
        let mut c = payload_holder.connect();
        c.must(&["RPUSH", "l", "a", "b"]);
        bulk(&c.must(&["DUMP", "l"]))
    };
    let out = run_on_both(|p| {
        let mut c = p.connect();
        c.must(&["SET", "k", "v"]);
        let w = |args: &[&str]| {
            args.iter()
                .map(|a| a.as_bytes().to_vec())
                .collect::<Vec<_>>()
        };
        let with_dump = |args: &[&str], rest: &[&str]| {
            let mut v = w(args);
            v.push(dump.clone());
            v.extend(w(rest));
            v
        };
        let cmds: Vec<Vec<Vec<u8>>> = vec![
            w(&["MIGRATE", "h", "1", "k", "0"]),
            w(&["MIGRATE", "h", "1", "k", "0", "1000", "AUTH"]),
            w(&["MIGRATE", "h", "1", "k", "0", "1000", "AUTH2", "u"]),
            w(&["MIGRATE", "h", "1", "k", "0", "1000", "FOO"]),
            w(&[
                "MIGRATE", "h", "1", "k", "0", "1000", "COPY", "REPLACE", "BAR",
            ]),
            w(&["MIGRATE", "h", "1", "k", "x", "1000"]),
            w(&["MIGRATE", "h", "1", "k", "0", "x"]),
            w(&["MIGRATE", "h", "1", "k", "0", "1000", "KEYS", "a"]),
            w(&["MIGRATE", "h", "1", "", "0", "1000"]),
            w(&["MIGRATE", "h", "1", "missing", "0", "1000"]),
            w(&["MIGRATE", "h", "1", "", "0", "1000", "KEYS", "m1", "m2"]),
            w(&["RESTORE-ASKING", "r", "0"]),
            with_dump(&["RESTORE-ASKING", "r", "0"], &[]),
            w(&["LRANGE", "r", "0", "-1"]),
            with_dump(&["RESTORE-ASKING", "r", "0"], &[]),
            with_dump(&["RESTORE-ASKING", "r", "0"], &["REPLACE", "FOO"]),
            w(&["RESTORE-ASKING", "r", "0", "garbage", "REPLACE"]),
        ];
        cmds.iter()
            .map(|cmd| text(&c.must(cmd)))
            .collect::<Vec<_>>()
    });
    assert_eq!(
        out[0],
        "-ERR wrong number of arguments for 'migrate' command\r\n"
    );
    assert_eq!(out[1], "-ERR syntax error\r\n");
    assert_eq!(out[9], "+NOKEY\r\n");
    assert_eq!(out[12], "+OK\r\n");
}

// ---------------------------------------------------------------------------
// Propagation: MIGRATE reaches the AOF as DEL of the moved keys
// ---------------------------------------------------------------------------

fn fresh_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("migrate-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The incr AOF after MIGRATE KEYS (two moved, one missing), MIGRATE COPY
/// (nothing to propagate), a BUSYKEY refusal and a one-key MIGRATE.
fn migrate_aof(src: Process, dst: &Process, dir: &Path) -> String {
    let port = port_arg(dst);
    let mut s = src.connect();
    let mut d = dst.connect();
    d.must(&["FLUSHALL"]);
    d.must(&["SET", "busy", "x"]);
    for cmd in [
        vec!["MSET", "a", "1", "b", "2", "c", "3", "busy", "y"],
        vec![
            "MIGRATE",
            "127.0.0.1",
            &port,
            "",
            "0",
            "5000",
            "KEYS",
            "a",
            "nokey",
            "b",
        ],
        vec!["MIGRATE", "127.0.0.1", &port, "c", "0", "5000", "COPY"],
        vec!["MIGRATE", "127.0.0.1", &port, "busy", "0", "5000"],
        vec!["MIGRATE", "127.0.0.1", &port, "c", "0", "5000", "REPLACE"],
    ] {
        s.must(&cmd);
    }
    let _ = s.send_cmd(&["SHUTDOWN", "NOSAVE"]);
    let _ = s.read_reply();
    let mut src = src;
    while src.is_alive() {
        std::thread::sleep(Duration::from_millis(20));
    }
    let data = std::fs::read(dir.join("appendonlydir/appendonly.aof.1.incr.aof")).unwrap();
    text(&data)
}

#[test]
fn migrate_propagates_as_del_like_redis_server() {
    let dst = Server::start();
    let dir = fresh_dir("lite");
    let d = dir.to_str().unwrap();
    let lite = Server::start_with(&["--dir", d, "--appendonly", "yes"]);
    let ours = migrate_aof(lite, &dst, &dir);
    assert!(
        ours.contains("*3\r\n$3\r\nDEL\r\n$1\r\na\r\n$1\r\nb\r\n"),
        "{ours}"
    );
    assert!(ours.contains("*2\r\n$3\r\nDEL\r\n$1\r\nc\r\n"), "{ours}");
    assert!(!ours.contains("MIGRATE"), "{ours}");
    let _ = std::fs::remove_dir_all(&dir);

    let dir = fresh_dir("real");
    let d = dir.to_str().unwrap();
    let Some(real) = RealRedis::start_with(&["--dir", d, "--appendonly", "yes"]) else {
        return;
    };
    let theirs = migrate_aof(real, &dst, &dir);
    assert_eq!(ours, theirs);
    let _ = std::fs::remove_dir_all(&dir);
}

// ---------------------------------------------------------------------------
// COMMAND metadata
// ---------------------------------------------------------------------------

#[test]
fn command_info_docs_and_getkeys_match_redis_server() {
    let names = [
        "migrate",
        "restore-asking",
        "lolwut",
        "module|help",
        "module|list",
        "module|load",
        "module|loadex",
        "module|unload",
    ];
    run_on_both(|p| {
        let mut c = p.connect();
        let mut out = Vec::new();
        for n in names {
            out.push(text(&c.must(&["COMMAND", "INFO", n])));
            out.push(text(&c.must(&["COMMAND", "DOCS", n])));
        }
        for args in [
            vec!["migrate", "h", "p", "k", "0", "0"],
            vec![
                "migrate", "h", "p", "", "0", "0", "AUTH2", "u", "keys", "KEYS", "a", "b",
            ],
            vec![
                "migrate", "h", "p", "", "0", "0", "auth", "keys", "copy", "keys", "x",
            ],
            vec!["migrate", "h", "p", "k", "0", "0", "keys", "a"],
            vec!["restore-asking", "k", "0", "x"],
            vec!["lolwut"],
        ] {
            let mut cmd = vec!["COMMAND", "GETKEYSANDFLAGS"];
            cmd.extend(args);
            out.push(text(&c.must(&cmd)));
        }
        out
    });
}

/// Top-level commands redis-lite does not have yet (replication, and
/// FAILOVER with it); everything else of Redis's COMMAND LIST must exist.
const NOT_YET: &[&str] = &[
    "client|tracking",
    "failover",
    "psync",
    "replconf",
    "replicaof",
    "role",
    "slaveof",
    "sync",
    "wait",
];

#[test]
fn command_count_is_redis_servers_less_the_missing_replication_commands() {
    let Some(real) = RealRedis::start() else {
        return;
    };
    let list = |p: &Process| {
        let r = p.connect().must(&["COMMAND", "LIST"]);
        let (_, e) = split_aggregate(&r).unwrap();
        e.iter().map(|b| text(&bulk(b))).collect::<Vec<_>>()
    };
    let count = |p: &Process| text(&p.connect().must(&["COMMAND", "COUNT"]));
    let lite = Server::start();
    let (ours, theirs) = (list(&lite), list(&real));
    let missing: Vec<&String> = theirs.iter().filter(|n| !ours.contains(n)).collect();
    for m in &missing {
        assert!(NOT_YET.contains(&m.as_str()), "redis-lite lacks {m}");
    }
    let extra: Vec<&String> = ours.iter().filter(|n| !theirs.contains(n)).collect();
    assert!(extra.is_empty(), "unknown to Redis: {extra:?}");
    let mut sorted = ours.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), ours.len(), "COMMAND LIST has duplicates");
    // COMMAND COUNT counts top-level commands only.
    let missing_top = missing.iter().filter(|m| !m.contains('|')).count();
    let real_count: usize = count(&real)[1..].trim_end().parse().unwrap();
    assert_eq!(count(&lite), format!(":{}\r\n", real_count - missing_top));
}

// ---------------------------------------------------------------------------
// LOLWUT
// ---------------------------------------------------------------------------

#[test]
fn lolwut_deterministic_output_is_byte_identical() {
    let out = run_on_both(|p| {
        let mut c = p.connect();
        let mut out = Vec::new();
        for cmd in [
            vec!["LOLWUT"],
            vec!["LOLWUT", "10", "20"],
            vec!["LOLWUT", "VERSION"],
            vec!["LOLWUT", "VERSION", "7"],
            vec!["LOLWUT", "VERSION", "4"],
            vec!["LOLWUT", "VERSION", "-1"],
            vec!["LOLWUT", "VERSION", "x"],
            vec!["LOLWUT", "VERSION", "5", "a"],
            vec!["LOLWUT", "VERSION", "5", "66", "b"],
            vec!["LOLWUT", "VERSION", "6", "1", "c"],
            // Two rows of squares or fewer: no randomness.
            vec!["LOLWUT", "VERSION", "5", "66", "8", "2"],
            vec!["LOLWUT", "VERSION", "5", "66", "8", "1"],
            vec!["LOLWUT", "VERSION", "5", "1", "1", "1"],
            vec!["LOLWUT", "VERSION", "5", "2", "3", "2"],
            vec!["LOLWUT", "VERSION", "5", "33", "7", "2"],
            vec!["LOLWUT", "VERSION", "5", "100", "13", "2"],
            vec!["LOLWUT", "VERSION", "5", "-5", "0", "-3"],
            vec!["LOLWUT", "VERSION", "5", "5000", "500", "1"],
            // (unsigned int) of 2^32 + 5 is 5.
            vec!["LOLWUT", "VERSION", "4294967301", "20", "3", "2"],
        ] {
            out.push(c.must(&cmd));
        }
        // RESP3: a verbatim string.
        c.must(&["HELLO", "3"]);
        out.push(c.must(&["LOLWUT", "VERSION", "5", "20", "2", "2"]));
        out
    });
    assert_eq!(text(&out[0]), "$18\r\nRedis ver. 7.0.15\n\r\n");
    assert!(text(&out[19]).starts_with("="), "{}", text(&out[19]));
}

/// The shape of a random drawing: per line, how many cells (Braille
/// characters for version 5, escape-coloured spaces for version 6); and
/// the closing text.
fn shape(reply: &[u8], version: u8) -> (Vec<usize>, String) {
    let body = text(&bulk(reply));
    let (art, tail) = match version {
        5 => body.split_once("\nGeorg").unwrap(),
        _ => body.split_once("\nDedicated").unwrap(),
    };
    let cells = art
        .split('\n')
        .map(|l| match version {
            5 => l
                .chars()
                .filter(|ch| ('\u{2800}'..='\u{28FF}').contains(ch))
                .count(),
            _ => l.matches("\x1b[0m").count(),
        })
        .collect();
    (cells, tail.to_string())
}

#[test]
fn lolwut_random_art_has_redis_servers_shape() {
    run_on_both(|p| {
        let mut c = p.connect();
        let mut out = Vec::new();
        for (version, cmd) in [
            (5, vec!["LOLWUT", "VERSION", "5"]),
            (5, vec!["LOLWUT", "VERSION", "5", "40", "5", "9"]),
            (6, vec!["LOLWUT", "VERSION", "6"]),
            (6, vec!["LOLWUT", "VERSION", "6", "33", "7"]),
            (6, vec!["LOLWUT", "VERSION", "6", "0", "2000"]),
        ] {
            out.push(shape(&c.must(&cmd), version));
        }
        out
    });
}

// ---------------------------------------------------------------------------
// MODULE
// ---------------------------------------------------------------------------

fn module_script(c: &mut Conn) -> Vec<String> {
    [
        vec!["MODULE", "HELP"],
        vec!["MODULE", "LIST"],
        vec!["MODULE", "LIST", "x"],
        vec!["MODULE"],
        vec!["MODULE", "FOO"],
        vec!["MODULE", "LOAD"],
        vec!["MODULE", "LOAD", "/nonexistent/mod.so"],
        vec!["MODULE", "LOAD", "/nonexistent/mod.so", "a", "b"],
        vec!["MODULE", "LOADEX", "/nonexistent/mod.so", "CONFIG", "a"],
        vec![
            "MODULE",
            "LOADEX",
            "/nonexistent/mod.so",
            "CONFIG",
            "a",
            "1",
            "ARGS",
            "x",
        ],
        vec!["MODULE", "LOADEX", "/nonexistent/mod.so", "BOGUS"],
        vec!["MODULE", "UNLOAD", "foo"],
        vec!["MODULE", "UNLOAD"],
    ]
    .iter()
    .map(|cmd| text(&c.must(cmd)))
    .collect()
}

#[test]
fn module_commands_match_redis_server() {
    // enable-module-command no (the default): LOAD/LOADEX/UNLOAD refused.
    let refused = run_on_both(|p| module_script(&mut p.connect()));
    assert!(
        refused[6].starts_with("-ERR MODULE command not allowed."),
        "{}",
        refused[6]
    );
    assert_eq!(refused[1], "*0\r\n");

    // Allowed: nothing can be loaded, nothing unloaded; the reason is logged.
    let args = ["--enable-module-command", "yes"];
    let lite = Server::start_with(&args);
    let ours = module_script(&mut lite.connect());
    assert_eq!(
        ours[6],
        "-ERR Error loading the extension. Please check the server logs.\r\n"
    );
    assert_eq!(
        ours[11],
        "-ERR Error unloading module: no such module with that name\r\n"
    );
    assert!(
        lite.log_tail()
            .contains("Module /nonexistent/mod.so failed to load"),
        "{}",
        lite.log_tail()
    );
    let Some(real) = RealRedis::start_with(&args) else {
        return;
    };
    assert_eq!(ours, module_script(&mut real.connect()));
    assert!(real
        .log_tail()
        .contains("Module /nonexistent/mod.so failed to load"));
}

// ---------------------------------------------------------------------------
// The socket cache's idle sweep
// ---------------------------------------------------------------------------

/// Seconds from a MIGRATE until the source's cron closed its cached
/// connection (migrate_cached_sockets back to 0), polled every 100 ms.
fn seconds_until_cache_empty(src: &Process, dst: &Process) -> f64 {
    let mut s = src.connect();
    s.must(&["SET", "k", "v"]);
    let port = port_arg(dst);
    let r = s.must(&["MIGRATE", "127.0.0.1", &port, "k", "0", "5000", "COPY"]);
    assert_eq!(text(&r), "+OK\r\n");
    let start = std::time::Instant::now();
    assert_eq!(info_field(&mut s, "migrate_cached_sockets"), "1");
    while info_field(&mut s, "migrate_cached_sockets") != "0" {
        assert!(start.elapsed() < Duration::from_secs(60), "never closed");
        std::thread::sleep(Duration::from_millis(100));
    }
    start.elapsed().as_secs_f64()
}

/// MIGRATE_SOCKET_CACHE_TTL: a connection idle for more than 10 s is
/// closed by the cron, never before (the sweep compares whole seconds, so
/// "more than 10" is at least 10 s of real time). redis-server's sweep is
/// run alongside as the reference for the same rule.
#[test]
fn cached_connection_is_closed_after_ten_idle_seconds() {
    let dst = Server::start();
    // redis-server's run (its own target) goes on in parallel.
    let real = std::thread::spawn(|| {
        let src = RealRedis::start()?;
        Some(seconds_until_cache_empty(&src, &Server::start()))
    });
    let ours = seconds_until_cache_empty(&Server::start(), &dst);
    assert!(ours >= 10.0, "closed after {ours:.1} s");
    if let Some(theirs) = real.join().unwrap() {
        assert!(theirs >= 10.0, "redis-server closed after {theirs:.1} s");
    }
}

/// The cache key is the host and port *as written*: "0<port>" is the same
/// target (atoi) but another entry. 70 spellings fill the cache to
/// MIGRATE_SOCKET_CACHE_ITEMS (64) and no further: each new connection past
/// it closes a random cached one.
fn cache_sizes(src: &Process, dst: &Process) -> Vec<String> {
    let mut s = src.connect();
    s.must(&["SET", "k", "v"]);
    (0..70)
        .map(|i| {
            let port = format!("{}{}", "0".repeat(i), dst.port);
            let cmd = [
                "MIGRATE",
                "127.0.0.1",
                &port,
                "k",
                "0",
                "5000",
                "COPY",
                "REPLACE",
            ];
            let r = text(&s.must(&cmd));
            format!("{r} {}", info_field(&mut s, "migrate_cached_sockets"))
        })
        .collect()
}

#[test]
fn socket_cache_holds_at_most_64_connections() {
    let dst = Server::start();
    let ours = cache_sizes(&Server::start(), &dst);
    assert_eq!(ours[0], "+OK\r\n 1");
    assert_eq!(ours[63], "+OK\r\n 64");
    assert_eq!(ours[69], "+OK\r\n 64");
    if let Some(real) = RealRedis::start() {
        assert_eq!(ours, cache_sizes(&real, &dst));
    }
}
