//! The LOADING state against the real thing: while a dataset loads (the
//! RDB or AOF at start-up, DEBUG RELOAD, DEBUG LOADAOF) the server serves
//! other clients between chunks, answers `-LOADING ...` to every command
//! without the `loading` flag, shows the progress in INFO persistence, and
//! can be shut down. Each scenario runs on redis-lite and on redis-server
//! 7.0.15 and the observations must be equal.
//!
//! The loads are made slow with the hidden `key-load-delay` (microseconds
//! per key) and a small `loading-process-events-interval-bytes`; a test
//! ends a load early with `CONFIG SET key-load-delay 0` (CONFIG runs while
//! loading), so nothing here depends on how fast the machine is. The
//! scenarios needing redis-server print SKIPPED when it is missing (and
//! fail under CI).

mod common;

use common::{escape, Conn, Process, RealRedis, Server};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// shared.loadingerr, byte for byte.
const LOADING: &[u8] = b"-LOADING Redis is loading the dataset in memory\r\n";

/// How many keys the slow loads hold (DEBUG POPULATE).
const KEYS: &str = "20000";

fn text(r: &[u8]) -> String {
    String::from_utf8_lossy(r).into_owned()
}

fn info(c: &mut Conn, section: &str) -> String {
    text(&c.must(&["INFO", section]))
}

fn field(info: &str, name: &str) -> Option<String> {
    info.lines()
        .find_map(|l| l.strip_prefix(&format!("{name}:")))
        .map(|v| v.trim_end().to_string())
}

/// The names of the `loading*` fields of INFO persistence, in order.
fn loading_field_names(info: &str) -> Vec<String> {
    info.lines()
        .filter_map(|l| l.split_once(':').map(|(k, _)| k.to_string()))
        .filter(|k| k.starts_with("loading") || k == "async_loading")
        .collect()
}

/// The working directory a test server runs in (common::Process::spawn).
fn dir_of(p: &Process) -> PathBuf {
    p.log.with_extension("d")
}

fn wait_until(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Which server a scenario runs on.
#[derive(Clone, Copy)]
enum Which {
    Lite,
    Real,
}

fn start(which: Which, extra: &[&str], loading: bool) -> Option<Process> {
    match (which, loading) {
        (Which::Lite, false) => Some(Server::start_with(extra)),
        (Which::Lite, true) => Some(Server::start_loading_with(extra)),
        (Which::Real, false) => RealRedis::start_with(extra),
        (Which::Real, true) => RealRedis::start_loading_with(extra),
    }
}

/// Run `scenario` on redis-lite, then on redis-server when installed; the
/// observations must be equal.
fn on_both<T: PartialEq + std::fmt::Debug>(scenario: impl Fn(Which) -> Option<T>) -> T {
    let ours = scenario(Which::Lite).expect("redis-lite always runs");
    if let Some(theirs) = scenario(Which::Real) {
        assert_eq!(ours, theirs, "redis-lite vs redis-server");
    }
    ours
}

/// What a client sees of a loading server.
#[derive(Debug, PartialEq)]
struct WhileLoading {
    ping: String,
    get: String,
    dbsize: String,
    unknown: String,
    loading: Option<String>,
    async_loading: Option<String>,
    names: Vec<String>,
    total_bytes_is_file_size: bool,
    used_mem_set: bool,
    perc_has_two_decimals: bool,
}

/// INFO persistence and a few commands on a loading server (`file_size`:
/// the bytes being loaded).
fn observe_loading(c: &mut Conn, file_size: u64) -> WhileLoading {
    let ping = text(&c.cmd(&["PING"]).unwrap());
    let get = text(&c.cmd(&["GET", "key:1"]).unwrap());
    let dbsize = text(&c.cmd(&["DBSIZE"]).unwrap());
    let unknown = text(&c.cmd(&["NOSUCHCOMMAND", "x"]).unwrap());
    let info = info(c, "persistence");
    let perc = field(&info, "loading_loaded_perc").unwrap_or_default();
    WhileLoading {
        ping,
        get,
        dbsize,
        unknown,
        loading: field(&info, "loading"),
        async_loading: field(&info, "async_loading"),
        names: loading_field_names(&info),
        total_bytes_is_file_size: field(&info, "loading_total_bytes")
            == Some(file_size.to_string()),
        used_mem_set: field(&info, "loading_rdb_used_mem").is_some_and(|v| v != "0"),
        perc_has_two_decimals: perc.split_once('.').is_some_and(|(_, d)| d.len() == 2),
    }
}

/// Let the load finish (CONFIG SET runs while loading) and wait for it.
fn finish_load(c: &mut Conn) -> String {
    assert_eq!(
        c.must(&["CONFIG", "SET", "key-load-delay", "0"]),
        b"+OK\r\n"
    );
    wait_until("the load to end", || {
        c.cmd(&["PING"]).unwrap() == b"+PONG\r\n"
    });
    info(c, "persistence")
}

fn file_len(p: &Path) -> u64 {
    std::fs::metadata(p).map(|m| m.len()).unwrap_or(0)
}

/// Start-up RDB load: a second client that connects during it gets
/// exactly Redis's LOADING error for PING/GET/DBSIZE (an unknown command
/// still gets the unknown-command error: that check comes first), INFO
/// shows loading:1 with the loading_* fields; after it, loading:0 and no
/// loading_* fields, and every key is there.
#[test]
fn startup_rdb_load_answers_loading_like_redis() {
    let seen = on_both(|which| {
        let first = start(which, &[], false)?;
        let dir = dir_of(&first);
        let mut c = first.connect();
        c.must(&["DEBUG", "POPULATE", KEYS, "key", "100"]);
        assert_eq!(c.must(&["SAVE"]), b"+OK\r\n");
        drop(c);
        drop(first);
        let size = file_len(&dir.join("dump.rdb"));
        let d = dir.to_str().unwrap();
        let srv = start(
            which,
            &[
                "--dir",
                d,
                "--key-load-delay",
                "100",
                "--loading-process-events-interval-bytes",
                "1024",
            ],
            true,
        )?;
        let mut c = srv.connect();
        let during = observe_loading(&mut c, size);
        let after = finish_load(&mut c);
        let dbsize = text(&c.must(&["DBSIZE"]));
        let _ = std::fs::remove_dir_all(&dir);
        Some((
            during,
            field(&after, "loading"),
            loading_field_names(&after),
            dbsize,
        ))
    });
    let (during, after_loading, after_names, dbsize) = seen;
    assert_eq!(during.ping.as_bytes(), LOADING);
    assert_eq!(during.get.as_bytes(), LOADING);
    assert_eq!(during.dbsize.as_bytes(), LOADING);
    assert!(
        during.unknown.starts_with("-ERR unknown command"),
        "{}",
        during.unknown
    );
    assert_eq!(during.loading.as_deref(), Some("1"));
    assert_eq!(
        during.names,
        [
            "loading",
            "async_loading",
            "loading_start_time",
            "loading_total_bytes",
            "loading_rdb_used_mem",
            "loading_loaded_bytes",
            "loading_loaded_perc",
            "loading_eta_seconds"
        ]
    );
    assert!(during.total_bytes_is_file_size && during.used_mem_set && during.perc_has_two_decimals);
    assert_eq!(after_loading.as_deref(), Some("0"));
    assert_eq!(after_names, ["loading", "async_loading"]);
    assert_eq!(dbsize, format!(":{KEYS}\r\n"));
}

/// Start-up AOF load (commands, no RDB preamble): the same LOADING
/// replies, and loading_total_bytes is the size of the AOF files.
#[test]
fn startup_aof_load_answers_loading_like_redis() {
    let seen = on_both(|which| {
        let aof = ["--appendonly", "yes", "--aof-use-rdb-preamble", "no"];
        let first = start(which, &aof, false)?;
        let dir = dir_of(&first);
        let mut c = first.connect();
        c.must(&["DEBUG", "POPULATE", KEYS, "key", "100"]);
        c.must(&["BGREWRITEAOF"]);
        wait_until("the AOF rewrite", || {
            let i = info(&mut c, "persistence");
            field(&i, "aof_rewrite_in_progress").as_deref() == Some("0")
                && field(&i, "aof_rewrite_scheduled").as_deref() == Some("0")
        });
        drop(c);
        drop(first);
        let size: u64 = std::fs::read_dir(dir.join("appendonlydir"))
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| !e.file_name().to_string_lossy().ends_with(".manifest"))
            .map(|e| file_len(&e.path()))
            .sum();
        let d = dir.to_str().unwrap();
        let mut args = vec!["--dir", d, "--key-load-delay", "200"];
        args.extend_from_slice(&aof);
        let srv = start(which, &args, true)?;
        let mut c = srv.connect();
        let mut during = observe_loading(&mut c, size);
        // No used-mem AUX field in an AOF of commands.
        assert!(!during.used_mem_set);
        during.used_mem_set = true;
        finish_load(&mut c);
        let dbsize = text(&c.must(&["DBSIZE"]));
        let _ = std::fs::remove_dir_all(&dir);
        Some((during, dbsize))
    });
    let (during, dbsize) = seen;
    assert_eq!(during.ping.as_bytes(), LOADING);
    assert_eq!(during.get.as_bytes(), LOADING);
    assert_eq!(during.loading.as_deref(), Some("1"));
    assert!(during.total_bytes_is_file_size, "{during:?}");
    assert_eq!(dbsize, format!(":{KEYS}\r\n"));
}

/// DEBUG RELOAD with key-load-delay: another client's GET gets LOADING
/// while it runs (DEBUG itself has the `loading` flag, INFO too), then the
/// value once DEBUG RELOAD answered +OK.
#[test]
fn debug_reload_serves_other_clients_with_loading() {
    let seen = on_both(|which| {
        let srv = start(which, &[], false)?;
        let mut a = srv.connect();
        let mut b = srv.connect();
        a.must(&["DEBUG", "POPULATE", KEYS, "key", "100"]);
        a.must(&[
            "CONFIG",
            "SET",
            "loading-process-events-interval-bytes",
            "1024",
        ]);
        a.must(&["CONFIG", "SET", "key-load-delay", "100"]);
        a.send_cmd(&["DEBUG", "RELOAD"]).unwrap();
        // Until the reload starts, GET may still see the key.
        let mut get = Vec::new();
        wait_until("DEBUG RELOAD to start loading", || {
            get = b.cmd(&["GET", "key:1"]).unwrap();
            get.starts_with(b"-LOADING")
        });
        let loading = field(&info(&mut b, "persistence"), "loading");
        let log = text(&b.must(&["DEBUG", "LOG", "still loading"]));
        // Most configs may change during a load; `appendonly` and
        // `repl-diskless-load` (DENY_LOADING_CONFIG, as `dir`) get LOADING,
        // which takes precedence over a later argument's error.
        let configs = [
            text(&b.must(&["CONFIG", "SET", "loglevel", "notice"])),
            text(&b.must(&["CONFIG", "SET", "dir", "/nonexistent"])),
            text(&b.must(&["CONFIG", "SET", "appendonly", "yes"])),
            text(&b.must(&[
                "CONFIG",
                "SET",
                "repl-diskless-load",
                "swapdb",
                "maxmemory",
                "x",
            ])),
        ];
        b.must(&["CONFIG", "SET", "key-load-delay", "0"]);
        let reload = text(&a.read_reply_within(Duration::from_secs(120)).unwrap());
        let after = text(&b.must(&["GET", "key:1"]));
        Some((text(&get), loading, log, reload, after, configs))
    });
    let loading_err = format!("-{}\r\n", "LOADING Redis is loading the dataset in memory");
    // (`dir` is also protected, which is checked first.)
    let protected = "-ERR CONFIG SET failed (possibly related to argument 'dir') - can't set protected config\r\n";
    assert_eq!(seen.5, ["+OK\r\n", protected, &loading_err, &loading_err]);
    assert_eq!(seen.0.as_bytes(), LOADING);
    assert_eq!(seen.1.as_deref(), Some("1"));
    assert_eq!(seen.2, "+OK\r\n");
    assert_eq!(seen.3, "+OK\r\n");
    // DEBUG POPULATE pads the values to the size asked for (100).
    assert!(seen.4.starts_with("$100\r\nvalue:1\0"), "{}", seen.4);
}

/// Transactions during a load: MULTI and EXEC have the `loading` flag, a
/// queued command without it is refused as it arrives (and the EXEC then
/// aborts); a transaction queued before the load is judged at EXEC by its
/// commands (EXECABORT with the LOADING error, or run when all of them
/// may run while loading).
#[test]
fn transactions_while_loading_are_judged_by_their_commands() {
    let seen = on_both(|which| {
        let srv = start(which, &[], false)?;
        let mut a = srv.connect();
        a.must(&["DEBUG", "POPULATE", KEYS, "key", "100"]);
        a.must(&[
            "CONFIG",
            "SET",
            "loading-process-events-interval-bytes",
            "1024",
        ]);
        a.must(&["CONFIG", "SET", "key-load-delay", "100"]);
        // Queued before the reload: one with GET, one with only INFO.
        let mut with_get = srv.connect();
        with_get.must(&["MULTI"]);
        with_get.must(&["GET", "key:1"]);
        let mut with_info = srv.connect();
        with_info.must(&["MULTI"]);
        with_info.must(&["INFO", "keyspace"]);
        a.send_cmd(&["DEBUG", "RELOAD"]).unwrap();
        let mut c = srv.connect();
        wait_until("DEBUG RELOAD to start loading", || {
            c.cmd(&["PING"]).unwrap().starts_with(b"-LOADING")
        });
        let during = vec![
            text(&c.must(&["MULTI"])),
            text(&c.cmd(&["GET", "key:1"]).unwrap()),
            text(&c.cmd(&["EXEC"]).unwrap()),
            text(&with_get.cmd(&["EXEC"]).unwrap()),
            text(&with_info.cmd(&["EXEC"]).unwrap())[..4].to_string(),
        ];
        c.must(&["CONFIG", "SET", "key-load-delay", "0"]);
        a.read_reply_within(Duration::from_secs(120)).unwrap();
        Some(during)
    });
    assert_eq!(seen[0], "+OK\r\n");
    assert_eq!(seen[1].as_bytes(), LOADING);
    assert!(seen[2].starts_with("-EXECABORT"), "{}", seen[2]);
    assert_eq!(
        seen[3],
        "-EXECABORT Transaction discarded because of: LOADING Redis is loading the dataset in memory\r\n"
    );
    assert_eq!(seen[4], "*1\r\n");
}

/// SHUTDOWN during a start-up load: the server exits without saving (the
/// half-loaded data must not overwrite the file), and so does SIGTERM.
#[test]
fn shutdown_and_sigterm_during_loading_exit_without_saving() {
    let seen = on_both(|which| {
        let first = start(which, &[], false)?;
        let dir = dir_of(&first);
        let mut c = first.connect();
        c.must(&["DEBUG", "POPULATE", KEYS, "key", "100"]);
        assert_eq!(c.must(&["SAVE"]), b"+OK\r\n");
        drop(c);
        drop(first);
        let rdb = dir.join("dump.rdb");
        let before = std::fs::read(&rdb).unwrap();
        let d = dir.to_str().unwrap();
        let slow = [
            "--dir",
            d,
            "--save",
            "3600 1",
            "--key-load-delay",
            "100",
            "--loading-process-events-interval-bytes",
            "1024",
        ];
        // SHUTDOWN (the `loading` flag): the connection closes, no reply.
        let mut srv = start(which, &slow, true)?;
        let mut c = srv.connect();
        c.send_cmd(&["SHUTDOWN"]).unwrap();
        let closed = c.closed_within(Duration::from_secs(60));
        wait_until("the server to exit", || !srv.is_alive());
        let shutdown_status = srv.exit_status().and_then(|s| s.code());
        // SIGTERM: the signal is acted on from inside the load.
        let mut srv = start(which, &slow, true)?;
        // SAFETY: kill(2) on the pid of a child we spawned.
        unsafe { libc::kill(srv.pid() as i32, libc::SIGTERM) };
        wait_until("the server to exit", || !srv.is_alive());
        let sigterm_status = srv.exit_status().and_then(|s| s.code());
        let log = std::fs::read_to_string(&srv.log).unwrap_or_default();
        let unchanged = std::fs::read(&rdb).unwrap() == before;
        let _ = std::fs::remove_dir_all(&dir);
        assert!(
            log.contains("Received shutdown signal during loading, scheduling shutdown."),
            "{}",
            escape(log.as_bytes())
        );
        Some((closed, shutdown_status, sigterm_status, unchanged))
    });
    assert_eq!(seen, (true, Some(0), Some(0), true));
}
