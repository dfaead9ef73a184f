//! redis-lite as a process, as redis-server 7.0.15 is one: the shutdown
//! signals (SIGTERM, SIGINT, the impatient second SIGINT), the final save,
//! the pid file, `daemonize yes`, the unix socket, the start-up log line by
//! line against a real redis-server, and the standalone answers to the
//! cluster-only commands.

mod common;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use common::Server;

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
