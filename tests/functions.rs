//! Redis Functions beyond what one connection can show (the rest is in
//! tests/cases/functions.txt): a busy function killed with FUNCTION KILL from
//! another connection, FUNCTION STATS while it runs, FUNCTION FLUSH ASYNC,
//! and FUNCTION HELP (DUMP/RESTORE are tested in tests/rdb.rs). Scenarios that real Redis
//! answers the same way also run against a real redis-server 7.0.15 when one
//! is installed.

mod common;

use common::{Process, RealRedis, Server};
use std::time::Duration;

/// A library with a read-only function that never returns (killable) and a
/// function that writes, then spins (not killable).
const SPIN_LIB: &str = "#!lua name=spin\n\
redis.register_function{function_name='spin', callback=function() local i = 0 while true do i = i + 1 end end, flags={'no-writes'}}\n\
redis.register_function('spinw', function(keys) redis.call('set', keys[1], 'x') while true do end end)";

fn text(reply: &[u8]) -> String {
    String::from_utf8_lossy(reply).into_owned()
}

/// The busy-function scenario on one server; returns what each step saw.
fn busy_function_killed(p: &Process) -> Vec<String> {
    let mut admin = p.connect();
    admin.must(&["FUNCTION", "FLUSH"]);
    admin.must(&["FUNCTION", "LOAD", SPIN_LIB]);
    admin.must(&["CONFIG", "SET", "busy-reply-threshold", "100"]);

    let mut runner = p.connect();
    runner.send_cmd(&["FCALL", "spin", "0"]).unwrap();
    std::thread::sleep(Duration::from_millis(400));

    let mut out = Vec::new();
    let mut other = p.connect();
    other.set_timeout(Duration::from_secs(5));
    out.push(text(&other.cmd(&["PING"]).unwrap()));
    // FUNCTION STATS names the running function and its caller's command;
    // the duration varies, so only its presence is checked.
    let stats = text(&other.cmd(&["FUNCTION", "STATS"]).unwrap());
    assert!(
        stats.contains("$4\r\nname\r\n$4\r\nspin\r\n$7\r\ncommand\r\n*3\r\n$5\r\nFCALL\r\n$4\r\nspin\r\n$1\r\n0\r\n$11\r\nduration_ms\r\n:"),
        "FUNCTION STATS while busy: {stats:?}"
    );
    out.push(text(&other.cmd(&["FUNCTION", "KILL"]).unwrap()));
    runner.set_timeout(Duration::from_secs(5));
    out.push(text(&runner.read_reply().unwrap()));
    out.push(text(&other.cmd(&["PING"]).unwrap()));
    out.push(text(&other.cmd(&["FUNCTION", "KILL"]).unwrap()));
    admin.must(&["CONFIG", "SET", "busy-reply-threshold", "5000"]);
    out
}

#[test]
fn busy_function_is_killed_by_function_kill_from_another_connection() {
    let lite = Server::start();
    let ours = busy_function_killed(&lite);
    assert_eq!(
        ours,
        [
            "-BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.\r\n",
            "+OK\r\n",
            "-ERR Script killed by user with SCRIPT KILL... script: spin, on @user_function:2.\r\n",
            "+PONG\r\n",
            "-NOTBUSY No scripts in execution right now.\r\n",
        ]
    );
    if let Some(real) = RealRedis::start() {
        assert_eq!(
            ours,
            busy_function_killed(&real),
            "redis-lite vs redis-server"
        );
    }
}

#[test]
fn function_flush_async_empties_the_registry_and_allows_reloading() {
    let run = |p: &Process| -> Vec<String> {
        let mut c = p.connect();
        let lib = "#!lua name=lib\nredis.register_function('f', function() return 'v1' end)";
        let mut out = vec![
            text(&c.must(&["FUNCTION", "FLUSH"])),
            text(&c.must(&["FUNCTION", "LOAD", lib])),
            text(&c.must(&["FCALL", "f", "0"])),
            text(&c.must(&["FUNCTION", "FLUSH", "ASYNC"])),
            text(&c.must(&["FUNCTION", "LIST"])),
            text(&c.must(&["FCALL", "f", "0"])),
            text(&c.must(&["FUNCTION", "LOAD", lib])),
            text(&c.must(&["FCALL", "f", "0"])),
        ];
        // Without an argument, lazyfree-lazy-user-flush picks the mode.
        c.must(&["CONFIG", "SET", "lazyfree-lazy-user-flush", "yes"]);
        out.push(text(&c.must(&["FUNCTION", "FLUSH"])));
        out.push(text(&c.must(&["FUNCTION", "STATS"])));
        c.must(&["CONFIG", "SET", "lazyfree-lazy-user-flush", "no"]);
        out
    };
    let ours = common::run_on_both(run);
    assert_eq!(ours[3], "+OK\r\n");
    assert_eq!(ours[4], "*0\r\n");
    assert_eq!(ours[5], "-ERR Function not found\r\n");
    assert_eq!(ours[7], "$2\r\nv1\r\n");
}

#[test]
fn function_help_is_redis_text() {
    let lite = Server::start();
    let ours = text(&lite.connect().must(&["FUNCTION", "HELP"]));
    assert!(ours.starts_with("*40\r\n+FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n+LOAD [REPLACE] <FUNCTION CODE>\r\n"));
    assert!(
        ours.contains("+DUMP\r\n")
            && ours.contains("+RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]\r\n")
    );
    if let Some(real) = RealRedis::start() {
        assert_eq!(ours, text(&real.connect().must(&["FUNCTION", "HELP"])));
    }
}

#[test]
fn unkillable_function_after_a_write_until_shutdown_nosave() {
    let run = |p: &mut Process| -> Vec<String> {
        let mut admin = p.connect();
        admin.must(&["FUNCTION", "LOAD", SPIN_LIB]);
        admin.must(&["CONFIG", "SET", "busy-reply-threshold", "100"]);
        let mut runner = p.connect();
        runner.send_cmd(&["FCALL", "spinw", "1", "k"]).unwrap();
        std::thread::sleep(Duration::from_millis(400));
        let mut other = p.connect();
        other.set_timeout(Duration::from_secs(5));
        let out = vec![
            text(&other.cmd(&["FUNCTION", "KILL"]).unwrap()),
            text(&other.cmd(&["GET", "k"]).unwrap()),
        ];
        // Only SHUTDOWN NOSAVE ends it; the server exits.
        let _ = other.send_cmd(&["SHUTDOWN", "NOSAVE"]);
        let _ = other.closed_within(Duration::from_secs(5));
        let mut gone = false;
        for _ in 0..50 {
            if !p.is_alive() {
                gone = true;
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        assert!(gone, "server still running after SHUTDOWN NOSAVE");
        out
    };
    let mut lite = Server::start();
    let ours = run(&mut lite);
    assert_eq!(
        ours,
        [
            "-UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.\r\n",
            "-BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.\r\n",
        ]
    );
    if let Some(mut real) = RealRedis::start() {
        assert_eq!(ours, run(&mut real), "redis-lite vs redis-server");
    }
}

#[test]
fn function_stats_and_kill_refuse_a_busy_eval() {
    // While an EVAL script (not a function) is busy, FUNCTION STATS and
    // FUNCTION KILL answer with EVAL's BUSY text; SCRIPT KILL stops it.
    let run = |p: &Process| -> Vec<String> {
        let mut admin = p.connect();
        admin.must(&["CONFIG", "SET", "busy-reply-threshold", "100"]);
        let mut runner = p.connect();
        runner
            .send_cmd(&["EVAL", "while true do end", "0"])
            .unwrap();
        std::thread::sleep(Duration::from_millis(400));
        let mut other = p.connect();
        other.set_timeout(Duration::from_secs(5));
        let mut out = vec![
            text(&other.cmd(&["FUNCTION", "STATS"]).unwrap()),
            text(&other.cmd(&["FUNCTION", "KILL"]).unwrap()),
            text(&other.cmd(&["SCRIPT", "KILL"]).unwrap()),
        ];
        runner.set_timeout(Duration::from_secs(5));
        let killed = text(&runner.read_reply().unwrap());
        out.push(killed.split(" script: ").next().unwrap_or("").to_string());
        admin.must(&["CONFIG", "SET", "busy-reply-threshold", "5000"]);
        out
    };
    let ours = common::run_on_both(run);
    assert_eq!(
        ours,
        [
            "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n",
            "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n",
            "+OK\r\n",
            "-ERR Script killed by user with SCRIPT KILL...",
        ]
    );
}

#[test]
fn client_pause_write_holds_back_fcall_of_a_writing_function_only() {
    // FCALL's write flag comes from the function (fcallGetCommandFlags):
    // a no-writes function runs during CLIENT PAUSE WRITE, another waits.
    let run = |p: &Process| -> Vec<String> {
        let mut c = p.connect();
        c.must(&[
            "FUNCTION",
            "LOAD",
            "REPLACE",
            "#!lua name=pause\nredis.register_function{function_name='ro', callback=function() return 'ro' end, flags={'no-writes'}}\nredis.register_function('rw', function() return 'rw' end)",
        ]);
        let mut pauser = p.connect();
        pauser.must(&["CLIENT", "PAUSE", "700", "WRITE"]);
        let mut out = Vec::new();
        for f in ["ro", "rw"] {
            let start = std::time::Instant::now();
            let reply = text(&c.must(&["FCALL", f, "0"]));
            let waited = start.elapsed() >= Duration::from_millis(400);
            out.push(format!("{f}: {reply:?} waited={waited}"));
        }
        out
    };
    let ours = common::run_on_both(run);
    assert_eq!(
        ours,
        [
            "ro: \"$2\\r\\nro\\r\\n\" waited=false",
            "rw: \"$2\\r\\nrw\\r\\n\" waited=true",
        ]
    );
}

#[test]
fn monitor_shows_fcall_before_the_commands_it_runs() {
    // FCALL feeds MONITOR itself, before running (call() skips it:
    // CMD_SKIP_MONITOR); the function's commands follow as `[0 lua]`.
    let run = |p: &Process| -> Vec<String> {
        let mut c = p.connect();
        c.must(&[
            "FUNCTION",
            "LOAD",
            "REPLACE",
            "#!lua name=mon\nredis.register_function('setter', function(keys, args) return redis.call('set', keys[1], args[1]) end)",
        ]);
        let mut mon = p.connect();
        mon.must(&["MONITOR"]);
        c.must(&["FCALL", "setter", "1", "k", "v"]);
        c.must(&["FCALL", "nosuch", "0"]);
        (0..3)
            .map(|_| {
                // Drop the timestamp and the client's port.
                let line = text(&mon.read_reply().unwrap());
                let rest = line.split_once(" [").map_or("", |(_, r)| r);
                match rest.split_once("] ") {
                    Some((who, cmd)) if who.contains("lua") => format!("[{who}] {cmd}"),
                    Some((_, cmd)) => format!("[client] {cmd}"),
                    None => line,
                }
            })
            .collect()
    };
    let ours = common::run_on_both(run);
    assert_eq!(
        ours,
        [
            "[client] \"FCALL\" \"setter\" \"1\" \"k\" \"v\"\r\n",
            "[0 lua] \"set\" \"k\" \"v\"\r\n",
            "[client] \"FCALL\" \"nosuch\" \"0\"\r\n",
        ]
    );
}

/// allow-stale functions on a replica whose link is down with
/// replica-serve-stale-data no: a function without the flag gets
/// MASTERDOWN, one with it runs, but only `stale` commands inside it (GET
/// is refused, INFO runs). Same replies as redis-server.
#[test]
fn allow_stale_functions_on_a_stale_replica_like_redis() {
    let replies = common::run_on_both(|p| {
        let mut c = p.connect();
        c.must(&[
            "FUNCTION",
            "LOAD",
            "#!lua name=test\n\
             redis.register_function{function_name='f1', callback=function() return 'hello' end, flags={'no-writes'}}\n\
             redis.register_function{function_name='f2', callback=function() return 'hello' end, flags={'allow-stale', 'no-writes'}}\n\
             redis.register_function{function_name='f3', callback=function() return redis.call('get', 'x') end, flags={'allow-stale', 'no-writes'}}\n\
             redis.register_function{function_name='f4', callback=function() return redis.call('dbsize') end, flags={'allow-stale', 'no-writes'}}",
        ]);
        c.must(&["CONFIG", "SET", "replica-serve-stale-data", "no"]);
        c.must(&["REPLICAOF", "127.0.0.1", "1"]);
        let out: Vec<Vec<u8>> = ["f1", "f2", "f3", "f4"]
            .iter()
            .map(|f| c.must(&["FCALL", f, "0"]))
            .collect();
        c.must(&["REPLICAOF", "NO", "ONE"]);
        out
    });
    let f3 = String::from_utf8_lossy(&replies[2]).into_owned();
    assert!(
        f3.contains("Can not execute the command on a stale replica"),
        "{f3}"
    );
}
