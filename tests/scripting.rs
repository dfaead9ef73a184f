//! Lua scripting across connections: a busy script (other clients get BUSY,
//! SCRIPT KILL stops it, a script that wrote is UNKILLABLE and only
//! SHUTDOWN NOSAVE ends it), MONITOR's `[0 lua]` lines, INFO commandstats
//! counting commands run from Lua, and a long script (1M SADD) finishing.
//! Scenarios run on redis-lite and, when installed, on a real
//! redis-server 7.0.15, and their replies are compared. Single-connection
//! cases are in tests/cases/scripting.txt.

mod common;

use common::{Conn, Process, RealRedis, Server};
use std::time::{Duration, Instant};

const BUSY_EVAL: &str =
    "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n";

/// Wait until the server answers BUSY on `c` (the script passed
/// busy-reply-threshold and the loop serves other clients again).
fn wait_busy(c: &mut Conn) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let r = String::from_utf8_lossy(&c.cmd(&["PING"]).unwrap()).into_owned();
        if r.starts_with("-BUSY") || Instant::now() > deadline {
            return r;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The kill scenario: BUSY for others, SCRIPT KILL, the caller's error.
fn busy_and_kill(p: &Process) -> Vec<String> {
    let mut admin = p.connect();
    admin.set_timeout(Duration::from_secs(15));
    admin.must(&["CONFIG", "SET", "busy-reply-threshold", "200"]);
    let mut runner = p.connect();
    runner.set_timeout(Duration::from_secs(15));
    runner
        .send_cmd(&["EVAL", "local i = 0 while true do i = i + 1 end", "0"])
        .unwrap();
    let mut out = vec![wait_busy(&mut admin)];
    for cmd in [
        &["GET", "x"][..],
        &["SCRIPT", "LOAD", "return 1"],
        &["FUNCTION", "KILL"],
        &["SHUTDOWN"],
        &["SCRIPT", "KILL"],
    ] {
        out.push(String::from_utf8_lossy(&admin.cmd(cmd).unwrap()).into_owned());
    }
    out.push(String::from_utf8_lossy(&runner.read_reply().unwrap()).into_owned());
    out.push(String::from_utf8_lossy(&admin.cmd(&["PING"]).unwrap()).into_owned());
    out.push(String::from_utf8_lossy(&runner.cmd(&["PING"]).unwrap()).into_owned());
    out.push(String::from_utf8_lossy(&admin.cmd(&["SCRIPT", "KILL"]).unwrap()).into_owned());
    out
}

#[test]
fn busy_script_is_killed_by_script_kill() {
    let ours = common::run_on_both(busy_and_kill);
    assert_eq!(ours[0], BUSY_EVAL, "{ours:?}");
    assert_eq!(ours[5], "+OK\r\n", "{ours:?}");
    assert!(
        ours[6].starts_with("-ERR Script killed by user with SCRIPT KILL... script: "),
        "{ours:?}"
    );
    assert_eq!(ours[7], "+PONG\r\n");
    assert_eq!(ours[9], "-NOTBUSY No scripts in execution right now.\r\n");
}

/// A script that wrote cannot be killed; SHUTDOWN (without NOSAVE) is BUSY;
/// SHUTDOWN NOSAVE stops the server.
fn unkillable(p: &mut Process) -> Vec<String> {
    let mut admin = p.connect();
    admin.set_timeout(Duration::from_secs(15));
    admin.must(&["CONFIG", "SET", "busy-reply-threshold", "200"]);
    let mut runner = p.connect();
    runner
        .send_cmd(&["EVAL", "redis.call('set', 'k', 'v') while true do end", "0"])
        .unwrap();
    let mut out = vec![wait_busy(&mut admin)];
    out.push(String::from_utf8_lossy(&admin.cmd(&["SCRIPT", "KILL"]).unwrap()).into_owned());
    out.push(String::from_utf8_lossy(&admin.cmd(&["SHUTDOWN"]).unwrap()).into_owned());
    admin.send_cmd(&["SHUTDOWN", "NOSAVE"]).unwrap();
    out.push(format!(
        "closed={}",
        admin.closed_within(Duration::from_secs(10))
    ));
    let deadline = Instant::now() + Duration::from_secs(10);
    while p.is_alive() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    out.push(format!("alive={}", p.is_alive()));
    out
}

#[test]
fn script_that_wrote_is_unkillable_until_shutdown_nosave() {
    let mut lite = Server::start();
    let ours = unkillable(&mut lite);
    assert_eq!(ours[0], BUSY_EVAL);
    assert!(ours[1].starts_with("-UNKILLABLE Sorry the script already executed write commands"));
    assert_eq!(ours[2], BUSY_EVAL);
    assert_eq!(ours[4], "alive=false", "{ours:?}");
    if let Some(mut real) = RealRedis::start() {
        assert_eq!(ours, unkillable(&mut real));
    }
}

/// MONITOR lines without their timestamps.
fn monitor_lines(p: &Process) -> Vec<String> {
    let mut mon = p.connect();
    mon.must(&["MONITOR"]);
    let mut c = p.connect();
    c.must(&[
        "EVAL",
        "redis.call('set', KEYS[1], ARGV[1]) return redis.call('get', KEYS[1])",
        "1",
        "key",
        "val",
    ]);
    (0..3)
        .map(|_| {
            let line = String::from_utf8_lossy(&mon.read_reply().unwrap()).into_owned();
            // "+1700000000.123456 [0 lua] ..." -> "[0 lua] ..."
            line.split_once(' ')
                .map(|x| x.1.to_string())
                .unwrap_or(line)
        })
        .map(|l| {
            // The EVAL line shows the caller's address: keep its shape only.
            if l.contains("\"EVAL\"") {
                l.replacen(|ch: char| ch.is_ascii_digit(), "N", 64)
            } else {
                l
            }
        })
        .collect()
}

#[test]
fn monitor_shows_commands_from_lua() {
    let ours = common::run_on_both(monitor_lines);
    assert_eq!(ours[1], "[0 lua] \"set\" \"key\" \"val\"\r\n");
    assert_eq!(ours[2], "[0 lua] \"get\" \"key\"\r\n");
}

/// The commandstats lines of the commands a script ran.
fn commandstats(p: &Process) -> Vec<String> {
    let mut c = p.connect();
    c.must(&["CONFIG", "RESETSTAT"]);
    c.must(&[
        "EVAL",
        "for i = 1, 3 do redis.call('set', 'k', i) end redis.pcall('nosuch') return redis.call('get', 'k')",
        "0",
    ]);
    let info = String::from_utf8_lossy(&c.must(&["INFO", "commandstats"])).into_owned();
    info.lines()
        .filter(|l| l.starts_with("cmdstat_"))
        .map(|l| {
            // Keep calls/rejected/failed, drop the timings.
            let (name, fields) = l.split_once(':').unwrap_or((l, ""));
            let kept: Vec<&str> = fields
                .split(',')
                .filter(|f| f.starts_with("calls=") || f.contains("_calls="))
                .collect();
            format!("{name}:{}", kept.join(","))
        })
        .collect()
}

#[test]
fn commandstats_count_commands_run_from_lua() {
    let lite = Server::start();
    let ours = commandstats(&lite);
    assert!(
        ours.contains(&"cmdstat_set:calls=3,rejected_calls=0,failed_calls=0".to_string()),
        "{ours:?}"
    );
    assert!(
        ours.contains(&"cmdstat_get:calls=1,rejected_calls=0,failed_calls=0".to_string()),
        "{ours:?}"
    );
    if let Some(real) = RealRedis::start() {
        let mut theirs = commandstats(&real);
        let mut ours = ours;
        ours.sort();
        theirs.sort();
        assert_eq!(ours, theirs);
    }
}

/// EVAL's failed_calls after running `script` once on a fresh stat table.
fn eval_failed_calls(p: &Process, script: &str) -> String {
    let mut c = p.connect();
    c.must(&["SET", "s", "abc"]);
    c.must(&["CONFIG", "RESETSTAT"]);
    let _ = c.cmd(&["EVAL", script, "0"]);
    let info = String::from_utf8_lossy(&c.must(&["INFO", "commandstats"])).into_owned();
    info.lines()
        .find(|l| l.starts_with("cmdstat_eval:"))
        .and_then(|l| l.split(',').find(|f| f.starts_with("failed_calls=")))
        .unwrap_or("no eval line")
        .to_string()
}

/// A script whose reply is an error fails, also when that error came from
/// redis.call / redis.pcall and is therefore not counted in errorstats a
/// second time (afterErrorReply's NO_STATS_UPDATE branch counts the failed
/// call directly). A pcall error the script swallows does not make it fail.
#[test]
fn eval_replying_an_error_is_a_failed_call() {
    let cases = [
        ("return redis.call('incr','s')", 1),
        ("return redis.pcall('incr','s')", 1),
        ("return redis.pcall('nosuch')", 1),
        ("return redis.error_reply('x')", 1),
        ("error('boom')", 1),
        ("redis.pcall('incr','s') return 1", 0),
    ];
    let lite = Server::start();
    let real = RealRedis::start();
    for (script, failed) in cases {
        let ours = eval_failed_calls(&lite, script);
        assert_eq!(ours, format!("failed_calls={failed}"), "{script}");
        if let Some(real) = &real {
            assert_eq!(ours, eval_failed_calls(real, script), "{script}");
        }
    }
}

#[test]
fn long_sadd_loop_finishes() {
    let lite = Server::start();
    let mut c = lite.connect();
    c.set_timeout(Duration::from_secs(120));
    let start = Instant::now();
    let r = c.must(&[
        "EVAL",
        "for i = 1, 1000000 do redis.call('sadd', KEYS[1], i) end return redis.call('scard', KEYS[1])",
        "1",
        "bigset",
    ]);
    assert_eq!(r, b":1000000\r\n");
    assert_eq!(c.must(&["SCARD", "bigset"]), b":1000000\r\n");
    eprintln!("1M SADD from Lua: {:?}", start.elapsed());
}

/// CLIENT PAUSE WRITE and scripts (evalGetCommandFlags): a plain EVAL or
/// EVALSHA may write (CMD_MAY_REPLICATE) and waits, as does PUBLISH; a
/// script declaring `#!lua flags=no-writes` and EVAL_RO run at once.
fn pause_write_and_scripts(p: &Process) -> Vec<String> {
    let mut c = p.connect();
    c.must(&["SCRIPT", "LOAD", "return 1"]);
    let mut pauser = p.connect();
    let mut out = Vec::new();
    let cases: [&[&str]; 5] = [
        &["EVAL", "return 1", "0"],
        &["EVAL", "#!lua flags=no-writes\nreturn 1", "0"],
        &["EVALSHA", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "0"],
        &["EVAL_RO", "return 1", "0"],
        &["PUBLISH", "ch", "m"],
    ];
    for args in cases {
        pauser.must(&["CLIENT", "PAUSE", "500", "WRITE"]);
        let start = Instant::now();
        let reply = String::from_utf8_lossy(&c.must(args)).into_owned();
        let waited = start.elapsed() >= Duration::from_millis(300);
        out.push(format!("{}: {reply:?} waited={waited}", args[0]));
        pauser.must(&["CLIENT", "UNPAUSE"]);
    }
    out
}

#[test]
fn client_pause_write_holds_back_scripts_that_may_write() {
    let ours = common::run_on_both(pause_write_and_scripts);
    assert_eq!(
        ours,
        [
            "EVAL: \":1\\r\\n\" waited=true",
            "EVAL: \":1\\r\\n\" waited=false",
            "EVALSHA: \":1\\r\\n\" waited=true",
            "EVAL_RO: \":1\\r\\n\" waited=false",
            "PUBLISH: \":0\\r\\n\" waited=true",
        ]
    );
}

/// A command that arrives in the same loop pass as a busy script is still
/// answered with BUSY once the threshold passes, not left unread until the
/// script ends (with edge-triggered polling its event is not reported
/// again: process_events_while_blocked serves the rest of the fired batch).
#[test]
fn command_racing_a_busy_script_gets_busy() {
    let lite = Server::start();
    let mut admin = Conn::connect(lite.port).unwrap();
    admin.must(&["CONFIG", "SET", "busy-reply-threshold", "10"]);
    for _ in 0..10 {
        let mut a = Conn::connect(lite.port).unwrap();
        let mut b = Conn::connect(lite.port).unwrap();
        a.send_cmd(&["EVAL", "while true do end", "0"]).unwrap();
        b.send_cmd(&["PING"]).unwrap();
        let reply = b
            .read_reply_within(Duration::from_secs(5))
            .expect("the racing PING must be answered while the script runs");
        assert_eq!(String::from_utf8_lossy(&reply), BUSY_EVAL);
        let mut killer = Conn::connect(lite.port).unwrap();
        assert_eq!(killer.must(&["SCRIPT", "KILL"]), b"+OK\r\n");
        a.read_reply().unwrap();
    }
}

/// lua-enable-deprecated-api (immutable, hidden from CONFIG GET *): with
/// it, setfenv/getfenv/newproxy stay in the Lua globals; without it they
/// are "nonexistent global variable"s. Same replies as redis-server.
#[test]
fn lua_enable_deprecated_api_like_redis() {
    for enabled in ["no", "yes"] {
        let run = |p: &common::Process| {
            let mut c = p.connect();
            let mut out = Vec::new();
            for script in [
                "local f = function() return 1 end setfenv(f, {}) return 0",
                "local f = function() return 1 end getfenv(f) return 0",
                "getmetatable(newproxy(true)).__gc = function() return 1 end return 0",
            ] {
                out.push(c.must(&["EVAL", script, "0"]));
            }
            out.push(c.must(&["CONFIG", "SET", "lua-enable-deprecated-api", "no"]));
            out.push(c.must(&["CONFIG", "GET", "lua-enable-deprecated-api"]));
            let all = c.must(&["CONFIG", "GET", "*"]);
            out.push(vec![u8::from(
                String::from_utf8_lossy(&all).contains("deprecated"),
            )]);
            out
        };
        let args = ["--lua-enable-deprecated-api", enabled];
        let lite = run(&common::Server::start_with(&args));
        if let Some(real) = common::RealRedis::start_with(&args) {
            assert_eq!(lite, run(&real), "lua-enable-deprecated-api {enabled}");
        }
        assert_eq!(lite[0].starts_with(b":0"), enabled == "yes");
    }
}

/// A function past busy-reply-threshold pushes to a key a client BLPOPs
/// on, then waits for an allow-busy command (HELLO SETNAME) to let it
/// finish. The popper is served only after the function ends, with both
/// elements (Redis's isInsideYieldingLongCommand guard), not in its middle
/// with a BUSY error.
#[test]
fn blocked_popper_waits_for_a_timed_out_script_like_redis() {
    let replies = common::run_on_both(|p| {
        let mut c = p.connect();
        c.must(&[
            "FUNCTION",
            "LOAD",
            "#!lua name=t\nredis.register_function('test', function(KEYS, ARGV) \
             redis.call('lpush', KEYS[1], 'y') \
             while true do \
               if string.find(redis.call('client', 'list'), 'abortscript') ~= nil then break end \
             end \
             redis.call('lpush', KEYS[1], 'z') \
             return 'done' end)",
        ]);
        c.must(&["DEBUG", "SET-DISABLE-DENY-SCRIPTS", "1"]);
        c.must(&["CONFIG", "SET", "busy-reply-threshold", "10"]);
        let mut popper = p.connect();
        popper.send_cmd(&["BLPOP", "x", "0"]).unwrap();
        while !String::from_utf8_lossy(&c.must(&["INFO", "clients"])).contains("blocked_clients:1")
        {
            std::thread::sleep(Duration::from_millis(5));
        }
        let mut runner = p.connect();
        runner.send_cmd(&["FCALL", "test", "1", "x"]).unwrap();
        // Wait until the function is past the threshold (PING gets BUSY).
        while c.must(&["PING"]).starts_with(b"+PONG") {
            std::thread::sleep(Duration::from_millis(5));
        }
        let mut aborter = p.connect();
        aborter.must(&["HELLO", "2", "SETNAME", "abortscript"]);
        let done = runner.read_reply().unwrap();
        let popped = popper.read_reply().unwrap();
        c.must(&["DEBUG", "SET-DISABLE-DENY-SCRIPTS", "0"]);
        (done, popped)
    });
    assert_eq!(replies.1, b"*2\r\n$1\r\nx\r\n$1\r\nz\r\n");
}

/// A replica whose link is down with replica-serve-stale-data no: a script
/// without a shebang gets MASTERDOWN, one with flags needs allow-stale and
/// then may call only stale commands; a write script on a read-only
/// replica is refused before it runs (scriptPrepareForRun).
fn stale_and_readonly_scripts(p: &Process) -> Vec<String> {
    let mut c = p.connect();
    let mut out = Vec::new();
    let mut run = |c: &mut Conn, args: &[&str]| {
        out.push(String::from_utf8_lossy(&c.must(args)).into_owned());
    };
    run(&mut c, &["CONFIG", "SET", "replica-serve-stale-data", "no"]);
    // Port 1 on the loopback: nothing listens, the link stays down.
    run(&mut c, &["REPLICAOF", "127.0.0.1", "1"]);
    run(&mut c, &["EVAL", "return redis.call('get','x')", "1", "x"]);
    run(&mut c, &["EVAL", "#!lua flags=no-writes\nreturn 1", "0"]);
    run(&mut c, &["EVAL", "#!lua\nreturn 1", "0"]);
    run(
        &mut c,
        &["EVAL", "#!lua flags=allow-stale,no-writes\nreturn 1", "0"],
    );
    run(
        &mut c,
        &[
            "EVAL",
            "#!lua flags=allow-stale,no-writes\nreturn redis.call('get','x')",
            "1",
            "x",
        ],
    );
    run(
        &mut c,
        &[
            "EVAL",
            "#!lua flags=allow-stale,no-writes\nreturn redis.call('echo','hi')",
            "0",
        ],
    );
    run(&mut c, &["EVAL", "#!lua flags=allow-stale\nreturn 1", "0"]);
    run(
        &mut c,
        &["CONFIG", "SET", "replica-serve-stale-data", "yes"],
    );
    run(&mut c, &["EVAL", "#!lua\nreturn 1", "0"]);
    run(&mut c, &["EVAL", "#!lua flags=no-writes\nreturn 1", "0"]);
    run(&mut c, &["REPLICAOF", "NO", "ONE"]);
    run(&mut c, &["EVAL", "#!lua\nreturn 1", "0"]);
    out
}

#[test]
fn scripts_on_a_stale_or_read_only_replica_are_refused_as_in_redis() {
    let ours = common::run_on_both(stale_and_readonly_scripts);
    assert!(
        ours[2].starts_with("-MASTERDOWN Link with MASTER is down and"),
        "{ours:?}"
    );
}
