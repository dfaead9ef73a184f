//! redis-lite as a process, as redis-server 7.0.15 is one: the shutdown
//! signals (SIGTERM, SIGINT, the impatient second SIGINT), the final save,
//! the pid file, `daemonize yes`, the unix socket, the start-up log line by
//! line against a real redis-server, and the standalone answers to the
//! cluster-only commands.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{RealRedis, Server};

/// Wait (bounded, for a loaded machine) until `cond` holds.
fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The working directory common::Process gave the server.
fn dir_of(p: &common::Process) -> PathBuf {
    p.log.with_extension("d")
}

fn log_text(p: &common::Process) -> String {
    String::from_utf8_lossy(&std::fs::read(&p.log).unwrap_or_default()).into_owned()
}

fn signal(pid: u32, sig: i32) {
    // SAFETY: signalling a server process this test started.
    unsafe { libc::kill(pid as i32, sig) };
}

/// The messages of a log (what follows the level mark), in order.
fn messages(log: &str) -> Vec<String> {
    log.lines()
        .map(|l| {
            // `pid:R dd Mon yyyy hh:mm:ss.mmm C message`, or the handler's
            // `pid:signal-handler (secs) message`.
            if let Some(rest) = l.split_once(":signal-handler (") {
                let msg = rest.1.split_once(") ").map(|x| x.1).unwrap_or("");
                return format!("signal-handler {msg}");
            }
            let mut parts = l.splitn(7, ' ');
            let role = parts.next().unwrap_or("").rsplit(':').next().unwrap_or("");
            let _date: Vec<_> = (0..4).filter_map(|_| parts.next()).collect();
            let mark = parts.next().unwrap_or("");
            let msg = parts.next().unwrap_or("");
            format!("{role} {mark} {msg}")
        })
        .collect()
}

fn exit_code_after(p: &mut common::Process) -> Option<i32> {
    wait_until("the server to exit", || !p.is_alive());
    p.exit_status().and_then(|s| s.code())
}

/// SIGTERM and SIGINT: Redis's lines in Redis's order, exit 0, pid file gone.
#[test]
fn sigterm_and_sigint_shut_down_cleanly_and_remove_the_pidfile() {
    for (sig, name) in [(libc::SIGTERM, "SIGTERM"), (libc::SIGINT, "SIGINT")] {
        let pidfile = common::temp_path("pid");
        let mut lite = Server::start_with(&["--pidfile", pidfile.to_str().unwrap()]);
        let pid: u32 = std::fs::read_to_string(&pidfile)
            .expect("pid file written")
            .trim()
            .parse()
            .unwrap();
        assert_eq!(pid, lite.pid());
        signal(lite.pid(), sig);
        assert_eq!(exit_code_after(&mut lite), Some(0), "{name}");
        let log = messages(&log_text(&lite));
        let at = log
            .iter()
            .position(|l| l == &format!("signal-handler Received {name} scheduling shutdown..."))
            .unwrap_or_else(|| panic!("no {name} line in {log:#?}"));
        assert_eq!(
            &log[at + 1..],
            [
                "M # User requested shutdown...",
                "M * Removing the pid file.",
                "M # Redis is now ready to exit, bye bye...",
            ],
            "{name}"
        );
        assert!(!pidfile.exists(), "pid file removed after {name}");
    }
}

/// A shell starts `cmd &` with SIGINT ignored: the handler is installed
/// anyway, as Redis's sigaction does.
#[test]
fn sigint_works_even_when_inherited_as_ignored() {
    // SAFETY: SIG_IGN for SIGINT in this test process only while spawning;
    // children inherit it, as from a shell's `&`.
    let old = unsafe { libc::signal(libc::SIGINT, libc::SIG_IGN) };
    let mut lite = Server::start();
    // SAFETY: restoring the previous disposition.
    unsafe { libc::signal(libc::SIGINT, old) };
    signal(lite.pid(), libc::SIGINT);
    assert_eq!(exit_code_after(&mut lite), Some(0));
    assert!(log_text(&lite).contains("Received SIGINT scheduling shutdown..."));
}

/// A save point set: SIGTERM saves dump.rdb before exiting.
#[test]
fn sigterm_with_a_save_point_writes_the_final_rdb() {
    let mut lite = Server::start_with(&["--save", "3600 1"]);
    lite.connect().must(&["SET", "k", "v"]);
    let dump = dir_of(&lite).join("dump.rdb");
    let _ = std::fs::remove_file(&dump);
    signal(lite.pid(), libc::SIGTERM);
    assert_eq!(exit_code_after(&mut lite), Some(0));
    let log = messages(&log_text(&lite));
    let at = log
        .iter()
        .position(|l| l == "M # User requested shutdown...")
        .expect("shutdown line");
    assert_eq!(
        &log[at + 1..],
        [
            "M * Saving the final RDB snapshot before exiting.",
            "M * DB saved on disk",
            "M # Redis is now ready to exit, bye bye...",
        ]
    );
    assert!(dump.exists(), "dump.rdb written by the final save");
}

/// A second SIGINT while the first one's shutdown waits (here: behind a
/// busy script, cron does not run) exits at once with status 1.
#[test]
fn second_sigint_exits_now() {
    let mut lite = Server::start_with(&["--busy-reply-threshold", "100"]);
    let mut busy = lite.connect();
    busy.send_cmd(&["EVAL", "while true do end", "0"]).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    signal(lite.pid(), libc::SIGINT);
    wait_until("the first SIGINT line", || {
        log_text(&lite).contains("Received SIGINT scheduling shutdown...")
    });
    assert!(lite.is_alive(), "the busy script holds the shutdown back");
    signal(lite.pid(), libc::SIGINT);
    assert_eq!(exit_code_after(&mut lite), Some(1));
    assert!(log_text(&lite).contains(":signal-handler ("));
    assert!(log_text(&lite).contains("You insist... exiting now."));
}

/// SHUTDOWN ABORT / option checks answer as Redis's.
#[test]
fn shutdown_option_errors_match_redis() {
    let run = |p: &common::Process| {
        let mut c = p.connect();
        let mut out = Vec::new();
        for args in [
            &["SHUTDOWN", "ABORT"][..],
            &["SHUTDOWN", "ABORT", "NOSAVE"],
            &["SHUTDOWN", "SAVE", "NOSAVE"],
            &["SHUTDOWN", "BOGUS"],
        ] {
            out.push(String::from_utf8_lossy(&c.cmd(args).unwrap()).into_owned());
        }
        out
    };
    common::run_on_both(run);
}

fn lite_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_redis-lite"))
}

/// `daemonize yes`: the command returns at once (exit 0, the parent), the
/// daemon writes its pid file and answers; SIGTERM ends it and the file.
#[test]
fn daemonize_returns_at_once_and_the_pidfile_holds_the_daemon() {
    let port = common::free_port();
    let dir = common::temp_path("daemon").with_extension("d");
    std::fs::create_dir_all(&dir).unwrap();
    let pidfile = dir.join("redis.pid");
    let logfile = dir.join("redis.log");
    let status = Command::new(lite_bin())
        .args([
            "--port",
            &port.to_string(),
            "--daemonize",
            "yes",
            "--save",
            "",
        ])
        .args(["--pidfile", pidfile.to_str().unwrap()])
        .args(["--logfile", logfile.to_str().unwrap()])
        .current_dir(&dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .expect("run redis-lite");
    assert!(status.success(), "the parent exits 0: {status}");
    wait_until("the pid file", || {
        std::fs::read_to_string(&pidfile).is_ok_and(|s| s.ends_with('\n'))
    });
    let pid: u32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    wait_until("the daemon to answer", || {
        common::Conn::connect(port).is_ok_and(|mut c| c.cmd(&["PING"]).is_ok())
    });
    let mut c = common::Conn::connect(port).unwrap();
    let info = String::from_utf8_lossy(&c.cmd(&["INFO", "server"]).unwrap()).into_owned();
    assert!(info.contains(&format!("process_id:{pid}\r\n")), "{info}");
    signal(pid, libc::SIGTERM);
    wait_until("the pid file to go", || !pidfile.exists());
    let log = std::fs::read_to_string(&logfile).unwrap();
    assert!(
        log.contains("Redis is now ready to exit, bye bye..."),
        "{log}"
    );
}

/// `supervised systemd`: READY=1 and Redis's STATUS lines on NOTIFY_SOCKET,
/// and `daemonize yes` is then ignored (the supervisor wants a foreground
/// process).
#[test]
fn supervised_systemd_notifies_readiness() {
    use std::os::unix::net::UnixDatagram;
    let dir = common::temp_path("notify").with_extension("d");
    std::fs::create_dir_all(&dir).unwrap();
    let sock_path = dir.join("notify.sock");
    let sock = UnixDatagram::bind(&sock_path).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let port = common::free_port();
    let mut child = Command::new(lite_bin())
        .args(["--port", &port.to_string(), "--save", ""])
        .args(["--supervised", "systemd", "--daemonize", "yes"])
        .env("NOTIFY_SOCKET", &sock_path)
        .current_dir(&dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 512];
    while !got.iter().any(|m| m == "READY=1\n") {
        let n = sock.recv(&mut buf).expect("a notification");
        got.push(String::from_utf8_lossy(&buf[..n]).into_owned());
    }
    assert_eq!(
        got,
        [
            "STATUS=Redis is loading...\n",
            "STATUS=Ready to accept connections\n",
            "READY=1\n"
        ]
    );
    assert!(
        child.try_wait().unwrap().is_none(),
        "still in the foreground"
    );
    signal(child.id(), libc::SIGTERM);
    let n = sock.recv(&mut buf).unwrap();
    assert_eq!(&buf[..n], b"STOPPING=1\n");
    assert!(child.wait().unwrap().success());
}

/// `--check-system`, `--test-memory` without a size, and `--sentinel`.
#[test]
fn check_system_test_memory_and_sentinel_flags() {
    let run = |bin: &Path, args: &[&str]| {
        let out = Command::new(bin).args(args).output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let lite = lite_bin();
    let sentinel = run(&lite, &["--sentinel"]);
    assert_eq!(sentinel.0, Some(1));
    assert!(sentinel.2.contains("not supported"), "{sentinel:?}");
    let ours_check = run(&lite, &["--check-system"]);
    assert!(ours_check.1.starts_with("[slow-clocksource]..."));
    let ours_mem = run(&lite, &["--test-memory"]);
    assert_eq!(ours_mem.0, Some(1));
    if let Some(real) = common::require_tool("redis-server") {
        // The clock check measures this run (on a loaded machine either
        // server may find the clock slow and print its advice line):
        // compare the other checks.
        let strip = |s: &str| {
            s.lines()
                .filter(|l| {
                    !l.starts_with("[slow-clocksource]")
                        && !l.starts_with("Slow system clocksource detected.")
                })
                .map(String::from)
                .collect::<Vec<_>>()
        };
        let theirs_check = run(&real, &["--check-system"]);
        assert_eq!(strip(&ours_check.1), strip(&theirs_check.1));
        assert_eq!(ours_check.0, theirs_check.0);
        assert_eq!(ours_mem, run(&real, &["--test-memory"]));
    }
}

/// A log as comparable lines: pid and time gone (`messages`), and what
/// legitimately differs between two runs masked: the version banner,
/// client ids, ports, ages, sizes and memory figures.
fn comparable(log: &str) -> (Vec<String>, Vec<String>) {
    let mask_numbers = |l: &str, keys: &[&str]| -> String {
        let mut out = Vec::new();
        for word in l.split(' ') {
            let masked = keys.iter().find_map(|k| {
                word.strip_prefix(k)
                    .and_then(|rest| rest.strip_prefix('='))
                    .map(|_| format!("{k}=N"))
            });
            out.push(masked.unwrap_or_else(|| word.to_string()));
        }
        out.join(" ")
    };
    const VARYING: &[&str] = &[
        "id",
        "addr",
        "laddr",
        "fd",
        "age",
        "idle",
        "qbuf-free",
        "tot-mem",
        "rbs",
        "rbp",
        "port",
    ];
    let (mut lines, mut clients) = (Vec::new(), Vec::new());
    for l in messages(log) {
        if l.contains("Redis version=") {
            continue;
        }
        // serverCron's every-5-seconds lines land wherever the first tick
        // falls among the start-up lines.
        if l.contains(" clients connected (") || l.contains(" keys (") {
            continue;
        }
        let l = mask_numbers(&l, VARYING);
        let l = match l.split_once(" bytes in use") {
            Some(_) => "bytes in use".to_string(),
            None => l,
        };
        if let Some((head, _)) = l.split_once(" loaded from disk: ") {
            // "DB loaded from disk: 0.000 seconds": the load's duration is a
            // timing (0.000 or 0.001 on either server), not a line to match.
            lines.push(format!("{head} loaded from disk: (time) seconds"));
        } else if l.contains("RDB age ") || l.contains("RDB memory usage when created") {
            lines.push(l.split(" RDB ").next().unwrap_or("").to_string() + " RDB (figure)");
        } else if l.contains("- Accepted ") || l.contains("- Client closed connection") {
            // Accept/close of two connections may be seen in one poll pass
            // in either order: compared as a set, below.
            clients.push(
                l.split(" 127.0.0.1").next().unwrap_or("").to_string()
                    + " "
                    + l.split_once("connection").map(|x| x.1).unwrap_or(""),
            );
        } else {
            lines.push(l);
        }
    }
    clients.sort();
    (lines, clients)
}

/// The same configuration, the same session (start, one SET, SIGTERM with
/// a save point, then a restart that loads the file), on redis-lite and
/// on redis-server 7.0.15, at each loglevel: the same lines, in order.
#[test]
fn startup_and_shutdown_log_match_redis_at_each_loglevel() {
    if common::require_tool("redis-server").is_none() {
        return;
    }
    let session = |start: &dyn Fn(&[&str]) -> common::Process, level: &str| {
        let mut p = start(&["--loglevel", level, "--save", "3600 1"]);
        p.connect().must(&["SET", "a", "b"]);
        signal(p.pid(), libc::SIGTERM);
        wait_until("exit", || !p.is_alive());
        let first = comparable(&log_text(&p));
        let dir = dir_of(&p);
        let mut again = start(&[
            "--loglevel",
            level,
            "--save",
            "3600 1",
            "--dir",
            dir.to_str().unwrap(),
        ]);
        signal(again.pid(), libc::SIGTERM);
        wait_until("exit", || !again.is_alive());
        (first, comparable(&log_text(&again)))
    };
    for level in ["debug", "verbose", "notice", "warning"] {
        let ours = session(&|a| Server::start_with(a), level);
        let theirs = session(&|a| RealRedis::start_with(a).expect("redis-server"), level);
        assert_eq!(ours.0 .0, theirs.0 .0, "first run, loglevel {level}");
        assert_eq!(
            ours.0 .1, theirs.0 .1,
            "first run's client lines, loglevel {level}"
        );
        assert_eq!(ours.1 .0, theirs.1 .0, "restart, loglevel {level}");
        assert_eq!(
            ours.1 .1, theirs.1 .1,
            "restart's client lines, loglevel {level}"
        );
    }
}

/// CLUSTER (any subcommand), READONLY, READWRITE, ASKING: a standalone
/// server's answers, arity errors included, byte for byte.
#[test]
fn cluster_only_commands_answer_as_a_standalone_redis() {
    common::run_on_both(|p| {
        let mut c = p.connect();
        let mut out = Vec::new();
        for args in [
            &["CLUSTER", "INFO"][..],
            &["CLUSTER", "NODES"],
            &["CLUSTER", "SLOTS"],
            &["CLUSTER", "SHARDS"],
            &["CLUSTER", "HELP"],
            &["CLUSTER", "KEYSLOT", "foo"],
            &["CLUSTER", "MYID"],
            &["CLUSTER"],
            &["CLUSTER", "BOGUS"],
            &["CLUSTER", "SLOTS", "extra"],
            &["READONLY"],
            &["READWRITE"],
            &["ASKING"],
            &["READONLY", "x"],
            &[
                "COMMAND",
                "INFO",
                "readonly",
                "readwrite",
                "asking",
                "cluster|slots",
            ],
            &["COMMAND", "DOCS", "asking"],
        ] {
            out.push(String::from_utf8_lossy(&c.cmd(args).unwrap()).into_owned());
        }
        out
    });
}

/// `unixsocket`: redis-cli -s works, the client is local and flagged `U`
/// with Redis's addr, the permissions are applied, the file goes at
/// shutdown.
#[test]
fn unixsocket_serves_redis_cli_and_is_removed_at_shutdown() {
    let dir = common::temp_path("unix").with_extension("d");
    std::fs::create_dir_all(&dir).unwrap();
    let sock = dir.join("redis.sock");
    let sock_s = sock.to_str().unwrap().to_string();
    let mut lite = Server::start_with(&["--unixsocket", &sock_s, "--unixsocketperm", "700"]);
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&sock).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700);
    assert!(log_text(&lite).contains(&format!(
        "The server is now ready to accept connections at {sock_s}"
    )));
    if let Some(cli) = common::require_tool("redis-cli") {
        let out = Command::new(&cli)
            .args(["-s", &sock_s, "ping"])
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "PONG\n");
        let out = Command::new(&cli)
            .args(["-s", &sock_s, "client", "info"])
            .output()
            .unwrap();
        let info = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            info.contains(&format!("addr={sock_s}:0 laddr={sock_s}:0 ")),
            "{info}"
        );
        assert!(info.contains(" flags=U "), "{info}");
        // Local like the loopback: DEBUG is allowed (enable-debug-command local).
        let out = Command::new(&cli)
            .args(["-s", &sock_s, "debug", "sleep", "0"])
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "OK\n");
    }
    signal(lite.pid(), libc::SIGTERM);
    assert_eq!(exit_code_after(&mut lite), Some(0));
    assert!(log_text(&lite).contains("Removing the unix socket file."));
    assert!(!sock.exists(), "socket file removed");
}

/// `tcp-backlog` reaches listen(2) on every listener (`ss` shows a
/// listening socket's backlog as its Send-Q).
#[test]
fn tcp_backlog_applies_to_every_listener() {
    let Some(ss) = common::which("ss") else {
        common::skipped("ss (iproute2) not installed");
        return;
    };
    let lite = Server::start_with(&["--tcp-backlog", "77", "--bind", "127.0.0.1 -::1"]);
    let out = Command::new(ss)
        .args(["-ltnH", &format!("sport = :{}", lite.port)])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let backlogs: Vec<&str> = text
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .collect();
    assert!(!backlogs.is_empty(), "{text}");
    assert!(backlogs.iter().all(|b| *b == "77"), "{text}");
}

/// A panic (DEBUG PANIC is one on purpose) writes Redis's bug report with
/// the backtrace to the log, then aborts as serverPanic does.
#[test]
fn a_panic_logs_a_redis_style_bug_report() {
    let mut lite = Server::start();
    let _ = lite.connect().cmd(&["DEBUG", "PANIC"]);
    wait_until("the crash", || !lite.is_alive());
    use std::os::unix::process::ExitStatusExt;
    let status = lite.exit_status().unwrap();
    assert_eq!(status.signal(), Some(libc::SIGABRT), "{status}");
    let log = log_text(&lite);
    let start = log
        .find("\n\n=== REDIS BUG REPORT START: Cut & paste starting from here ===\n")
        .expect("bug report banner");
    let report = &log[start..];
    assert!(report.contains("# Guru Meditation: DEBUG PANIC called at Unix time "));
    assert!(report.contains("\n------ STACK TRACE ------\n\nBacktrace:\n"));
    assert!(
        report.contains("debug_command"),
        "the backtrace names the handler"
    );
    assert!(
        report.contains("=== REDIS BUG REPORT END. Make sure to include from START to END. ===")
    );
}

/// rename-command in the config file: the old name is unknown, the new one
/// runs the command, "" removes it (COMMAND COUNT drops by one, COMMAND LIST
/// and COMMAND INFO no longer know it), CONFIG
/// REWRITE keeps the lines and a restart honours them; an unknown command
/// is a fatal config error. The same on redis-server.
#[test]
fn rename_command_like_redis() {
    let run = |bin: &str| -> Vec<String> {
        let dir = common::temp_path("rename-command");
        std::fs::create_dir_all(&dir).unwrap();
        let conf = dir.join("r.conf");
        std::fs::write(
            &conf,
            "rename-command flushdb badger\nrename-command debug \"\"\n",
        )
        .unwrap();
        let conf_s = conf.to_str().unwrap().to_string();
        let mut out = Vec::new();
        for round in 0..2 {
            // The config file must come first: a local start, not Process.
            let port = common::free_port();
            let mut child = std::process::Command::new(bin)
                .args([&conf_s, "--port", &port.to_string(), "--save", ""])
                .current_dir(&dir)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap();
            let mut c = (0..200)
                .find_map(|_| {
                    std::thread::sleep(std::time::Duration::from_millis(25));
                    common::Conn::connect(port).ok()
                })
                .expect("server up");
            for cmd in [
                &["FLUSHDB"][..],
                &["BADGER"],
                &["DEBUG", "SLEEP", "0"],
                &["COMMAND", "COUNT"],
                // Gone from COMMAND LIST (and COMMAND) once renamed to "";
                // a renamed one is listed by its own name.
                &["COMMAND", "LIST", "FILTERBY", "PATTERN", "debug"],
                &["COMMAND", "LIST", "FILTERBY", "PATTERN", "flushdb"],
                &["COMMAND", "INFO", "debug"],
            ] {
                out.push(format!(
                    "{round} {}",
                    String::from_utf8_lossy(&c.cmd(cmd).unwrap())
                ));
            }
            if round == 0 {
                c.must(&["CONFIG", "REWRITE"]);
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        let text = std::fs::read_to_string(&conf).unwrap();
        out.push(
            text.lines()
                .filter(|l| l.starts_with("rename-command"))
                .collect::<Vec<_>>()
                .join("|"),
        );
        std::fs::write(&conf, "rename-command nosuch x\n").unwrap();
        let o = std::process::Command::new(bin)
            .arg(&conf_s)
            .output()
            .unwrap();
        out.push(
            String::from_utf8_lossy(&o.stderr)
                .lines()
                .chain(String::from_utf8_lossy(&o.stdout).lines())
                .filter(|l| l.contains("rename-command") || l.contains("No such"))
                .collect::<Vec<_>>()
                .join("|"),
        );
        let _ = std::fs::remove_dir_all(&dir);
        out
    };
    let ours = run(env!("CARGO_BIN_EXE_redis-lite"));
    assert!(
        ours[0].starts_with("0 -ERR unknown command 'FLUSHDB'"),
        "{ours:?}"
    );
    assert_eq!(ours[1], "0 +OK\r\n");
    match common::require_tool("redis-server") {
        Some(real) => assert_eq!(
            ours,
            run(real.to_str().unwrap()),
            "redis-lite vs redis-server"
        ),
        None => common::skipped("redis-server not installed: ran on redis-lite only"),
    }
}
