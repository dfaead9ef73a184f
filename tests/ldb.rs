//! The Lua debugger (server/src/ldb.rs): `redis-cli --ldb` and
//! `--ldb-sync-mode` sessions driven through redis-cli's standard input
//! (in debugging mode redis-cli reads one command per line from a pipe as
//! it would from a terminal), and SCRIPT DEBUG's replies over raw RESP.
//!
//! Every transcript is compared with a real redis-server 7.0.15 running
//! the same script with the same keystrokes: the debugger's lines are
//! deterministic as long as no Lua function address is printed, which the
//! scripts here avoid. Without redis-cli the tests follow the usual rule
//! (SKIPPED locally, a failure under CI=true).

mod common;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{require_tool, temp_path, Conn, Process, RealRedis, Server};

/// A script with locals, a table, a helper function, writes and
/// redis.debug / redis.breakpoint: what the sessions below step through.
const SCRIPT: &str = "\
local key = KEYS[1]
local val = ARGV[1]
local t = {1, 2, {x = 'y'}}
redis.call('set', key, val)
local function double(n)
  redis.breakpoint()
  return n * 2
end
redis.debug('t is', t, #t)
local r = double(21)
redis.call('incr', key .. ':n')
return {redis.call('get', key), r}
";

/// Write the script to a fresh file and run one `redis-cli --eval` session
/// with `keystrokes` on its standard input. TERM=dumb: no colours.
fn ldb_session(port: u16, script: &str, sync: bool, keystrokes: &str) -> String {
    let cli = require_tool("redis-cli").expect("redis-cli checked by the caller");
    let path = temp_path("ldb").with_extension("lua");
    std::fs::write(&path, script).expect("write the script");
    let mode = if sync { "--ldb-sync-mode" } else { "--ldb" };
    let mut child = Command::new(cli)
        .args(["-p", &port.to_string(), mode, "--eval"])
        .arg(&path)
        .args(["ldb:key", ",", "hello"])
        .env("TERM", "dumb")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start redis-cli");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(keystrokes.as_bytes())
        .expect("write keystrokes");
    let out = child.wait_with_output().expect("redis-cli output");
    let _ = std::fs::remove_file(Path::new(&path));
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    text
}

/// Run the same session on redis-lite and, when installed, on a real
/// redis-server: the transcripts must be equal. Returns redis-lite's
/// transcript and server (for checks of what is left in the dataset).
fn session_on_both(script: &str, sync: bool, keystrokes: &str) -> Option<(String, Process)> {
    require_tool("redis-cli")?;
    let lite = Server::start();
    let ours = ldb_session(lite.port, script, sync, keystrokes);
    if let Some(real) = RealRedis::start() {
        let theirs = ldb_session(real.port, script, sync, keystrokes);
        assert_eq!(
            ours, theirs,
            "redis-cli transcript: redis-lite (left) vs redis-server (right)"
        );
    }
    Some((ours, lite))
}

fn get(p: &Process, key: &str) -> Vec<u8> {
    // The forked child may still be writing its last bytes: the parent's
    // view is what matters and it never changes.
    p.connect().must(&["GET", key])
}

#[test]
fn ldb_forked_session_steps_prints_runs_redis_and_rolls_back() {
    // The last `s` runs line 4 while stepping, so its command is logged.
    let keys = "s\ns\np val\np\nr set ldb:other 1\nr get ldb:key\ns\ns\nc\nc\n";
    let Some((out, lite)) = session_on_both(SCRIPT, false, keys) else {
        return;
    };
    for want in [
        "* Stopped at 1, stop reason = step over",
        "-> 1   local key = KEYS[1]",
        "* Stopped at 3, stop reason = step over",
        "<value> \"hello\"",
        "<value> key = \"ldb:key\"",
        "<value> val = \"hello\"",
        "<redis> set ldb:other 1",
        "<reply> \"+OK\"",
        "<redis> get ldb:key",
        "<reply> NULL",
        "<redis> set ldb:key hello",
        "<debug> line 9: \"t is\", {1; 2; {[\"x\"]=\"y\"}}, 3",
        "* Stopped at 7, stop reason = redis.breakpoint() called",
        "1) \"hello\"",
        "2) (integer) 42",
        "(Lua debugging session ended -- dataset changes rolled back)",
    ] {
        assert!(out.contains(want), "missing {want:?} in:\n{out}");
    }
    // The script's writes, and the debugger's own, died with the child.
    assert_eq!(get(&lite, "ldb:key"), b"$-1\r\n");
    assert_eq!(get(&lite, "ldb:other"), b"$-1\r\n");
    assert_eq!(get(&lite, "ldb:key:n"), b"$-1\r\n");
    let info = lite.connect().must(&["INFO", "stats"]);
    assert!(
        String::from_utf8_lossy(&info).contains("total_forks:1\r\n"),
        "one fork counted"
    );
}

#[test]
fn ldb_sync_session_keeps_the_writes() {
    let keys = "n\nn\nn\nn\np key\nc\nc\n";
    let Some((out, lite)) = session_on_both(SCRIPT, true, keys) else {
        return;
    };
    assert!(out.contains("<redis> set ldb:key hello"), "{out}");
    assert!(out.contains("(Lua debugging session ended)"), "{out}");
    assert!(!out.contains("rolled back"), "{out}");
    assert_eq!(get(&lite, "ldb:key"), b"$5\r\nhello\r\n");
    assert_eq!(get(&lite, "ldb:key:n"), b"$1\r\n1\r\n");
}

/// Everything else the debugger says: help, list/whole with their markers,
/// breakpoints (added, listed, removed, refused), trace, maxlen and the
/// trimming hint, eval (expression, statement, errors), an unknown word,
/// redis errors, then abort.
#[test]
fn ldb_commands_transcript_matches_redis() {
    let keys = "h\nl\nl 5 1\nw\nb 10\nb 3 99 x\nb\nb -3\nb -3\nb 0\nb\nt\nm\nm 10\n\
                e string.rep('z', 100)\ne 1 +\ne error('boom')\ne undefined_var\n\
                m 0\nfoo bar\nr incr ldb:key\nr nosuch\nb 11\nc\nt\np\np n\ne n * 3\na\n";
    let Some((out, _lite)) = session_on_both(SCRIPT, true, keys) else {
        return;
    };
    for want in [
        "Redis Lua debugger help:",
        "[a]bort              Stop the execution of the script. In sync",
        "   4   redis.call('set', key, val)",
        "  #10  local r = double(21)",
        "Wrong line number.",
        "Invalid argument:'x'",
        "2 breakpoints set:",
        "Breakpoint removed.",
        "No breakpoint in the specified line.",
        "All breakpoints removed.",
        "No breakpoints set. Use 'b <line>' to add one.",
        "In top level:",
        "<value> replies are truncated at 256 bytes.",
        "<value> replies are truncated at 60 bytes.",
        // Cut at 60 bytes.
        "<retval> \"zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz ...\n",
        "<error> ldb_eval:1: unexpected symbol near '1'",
        "<error> ldb_eval:1: boom",
        "<value> replies are unlimited.",
        "<error> Unknown Redis Lua debugger command or wrong number of arguments.",
        "<error> Unknown Redis command called from script",
        "* Stopped at 7, stop reason = redis.breakpoint() called",
        "In double:",
        "From top level:",
        "<value> n = 21",
        // eval runs in a frame of its own: the script's locals are not seen.
        "<error> ldb_eval:1: Script attempted to access nonexistent global variable 'n'",
        "ERR script aborted for user request script:",
    ] {
        assert!(out.contains(want), "missing {want:?} in:\n{out}");
    }
}

/// A script that loops for ever stops with "timeout reached" after
/// busy-reply-threshold (lowered here so the test is quick).
#[test]
fn ldb_infinite_loop_stops_with_timeout_reason() {
    let Some(_) = require_tool("redis-cli") else {
        return;
    };
    let script = "local i = 0\nwhile true do i = i + 1 end\n";
    let run = |p: &Process| {
        p.connect()
            .must(&["CONFIG", "SET", "busy-reply-threshold", "200"]);
        let out = ldb_session(p.port, script, true, "c\na\n");
        out.replace(char::is_numeric, "N")
    };
    let lite = Server::start();
    let ours = run(&lite);
    assert!(
        ours.contains("stop reason = timeout reached, infinite loop?"),
        "{ours}"
    );
    if let Some(real) = RealRedis::start() {
        assert_eq!(ours, run(&real));
    }
}

/// A compile error ends the session before it starts: `<endsession>`,
/// then the error, as redis-cli shows it.
#[test]
fn ldb_compile_error_cannot_start_a_session() {
    let Some((out, _lite)) = session_on_both("return 1 +\n", false, "s\n") else {
        return;
    };
    assert!(out.contains("Eval debugging session can't start:"), "{out}");
    assert!(
        out.contains("ERR Error compiling script (new function): user_script:2:"),
        "{out}"
    );
}

// ---- raw RESP ----

fn enc(args: &[&str]) -> Vec<u8> {
    common::encode_command(args)
}

/// SCRIPT DEBUG's replies and errors, the same as redis-server's.
#[test]
fn script_debug_replies_and_errors() {
    let run = |p: &Process| {
        let mut c = p.connect();
        let mut out = Vec::new();
        for cmd in [
            vec!["SCRIPT", "DEBUG", "maybe"],
            vec!["SCRIPT", "DEBUG"],
            vec!["SCRIPT", "DEBUG", "no"],
            vec!["EVAL", "return redis.call('script','debug','yes')", "0"],
            vec!["EVAL", "return redis.pcall('script','debug','no')", "0"],
            vec!["EVAL", "return redis.breakpoint()", "0"],
            vec!["EVAL", "redis.debug('ignored') return 1", "0"],
            vec!["MULTI"],
            vec!["SCRIPT", "DEBUG", "yes"],
            vec!["EXEC"],
            vec!["SCRIPT", "DEBUG", "yes"],
            vec!["EVALSHA", "0123456789012345678901234567890123456789", "0"],
            vec!["EVALSHA", "abc", "0"],
            vec!["SCRIPT", "DEBUG", "no"],
        ] {
            out.push(common::escape(&c.must(&cmd)));
        }
        // A reply still queued: "outside a pipeline".
        let mut pipe = enc(&["PING"]);
        pipe.extend(enc(&["SCRIPT", "DEBUG", "sync"]));
        c.send(&pipe).unwrap();
        out.push(common::escape(&c.read_reply().unwrap()));
        out.push(common::escape(&c.read_reply().unwrap()));
        out
    };
    let ours = common::run_on_both(run);
    assert_eq!(ours[0], "-ERR Use SCRIPT DEBUG YES/SYNC/NO\\r\\n");
    assert_eq!(
        ours[9],
        "*1\\r\\n-ERR SCRIPT DEBUG must be called outside a pipeline\\r\\n"
    );
    assert_eq!(
        ours[11],
        "-ERR Please use EVAL instead of EVALSHA for debugging\\r\\n"
    );
}

/// The protocol of a SYNC session over raw RESP: the stop, a step, a
/// print, then continue: the logs end with `<endsession>`, then the EVAL
/// reply, then the server closes the connection. Numkeys errors come after
/// `<endsession>` too; a malformed debugger command stops the script.
#[test]
fn ldb_sync_protocol_over_raw_resp() {
    let run = |p: &Process| {
        let mut out = Vec::new();
        let mut c = p.connect();
        c.must(&["SCRIPT", "DEBUG", "sync"]);
        out.push(c.must(&["EVAL", "local a = 'x'\nreturn {a, 1}", "0"]));
        out.push(c.must(&["s"]));
        out.push(c.must(&["p", "a"]));
        c.send(&enc(&["c"])).unwrap();
        let (rest, closed) =
            c.read_until_close_or_idle(Duration::from_secs(5), Duration::from_secs(2));
        out.push(rest);
        assert!(closed, "the session's connection is closed after the reply");

        let mut c = p.connect();
        c.must(&["SCRIPT", "DEBUG", "sync"]);
        c.send(&enc(&["EVAL", "return 1", "3"])).unwrap();
        let (rest, closed) =
            c.read_until_close_or_idle(Duration::from_secs(5), Duration::from_secs(2));
        out.push(rest);
        assert!(closed);

        let mut c = p.connect();
        c.must(&["SCRIPT", "DEBUG", "sync"]);
        out.push(c.must(&["EVAL", "return 1", "0"]));
        c.send(b"this is not RESP\r\n").unwrap();
        let (rest, _) = c.read_until_close_or_idle(Duration::from_secs(5), Duration::from_secs(2));
        out.push(rest);
        out.into_iter()
            .map(|b| common::escape(&b))
            .collect::<Vec<_>>()
    };
    let ours = common::run_on_both(run);
    assert_eq!(
        ours[0],
        "*2\\r\\n+* Stopped at 1, stop reason = step over\\r\\n+-> 1   local a = 'x'\\r\\n"
    );
    assert_eq!(ours[2], "*1\\r\\n+<value> \\\"x\\\"\\r\\n");
    assert_eq!(
        ours[3],
        "*1\\r\\n+<endsession>\\r\\n*2\\r\\n$1\\r\\nx\\r\\n:1\\r\\n"
    );
    assert!(ours[6].contains("ERR protocol error"), "{}", ours[6]);
}

/// SYNC mode blocks every other client while the script is stopped at the
/// prompt; a forked session does not.
#[test]
fn ldb_sync_blocks_other_clients_fork_does_not() {
    let p = Server::start();
    for sync in [true, false] {
        let mut dbg = p.connect();
        dbg.must(&["SCRIPT", "DEBUG", if sync { "sync" } else { "yes" }]);
        let stop = dbg.must(&["EVAL", "return redis.call('set', 'k', 'v')", "0"]);
        assert!(String::from_utf8_lossy(&stop).contains("Stopped at 1"));
        let mut other = Conn::connect(p.port).unwrap();
        other.send(&enc(&["PING"])).unwrap();
        let waited = other.read_reply_within(Duration::from_millis(500));
        if sync {
            // The main thread sits in the debugger's blocking read.
            assert!(waited.is_err(), "PING answered during a SYNC session");
        } else {
            assert_eq!(waited.unwrap(), b"+PONG\r\n");
        }
        dbg.send(&enc(&["c"])).unwrap();
        let (rest, _) =
            dbg.read_until_close_or_idle(Duration::from_secs(5), Duration::from_millis(500));
        assert!(String::from_utf8_lossy(&rest).contains("<endsession>"));
        if sync {
            // Served as soon as the session ends.
            assert_eq!(
                other.read_reply_within(Duration::from_secs(5)).unwrap(),
                b"+PONG\r\n"
            );
            assert_eq!(other.must(&["GET", "k"]), b"$1\r\nv\r\n");
            other.must(&["DEL", "k"]);
        } else {
            assert_eq!(other.must(&["GET", "k"]), b"$-1\r\n");
        }
    }
}

/// A debugging client that disconnects at the prompt: the script runs on
/// to its end unattended (SYNC: its writes are there), and the server
/// serves others again.
#[test]
fn ldb_client_gone_script_runs_to_the_end() {
    let p = Server::start();
    let mut dbg = p.connect();
    dbg.must(&["SCRIPT", "DEBUG", "sync"]);
    dbg.must(&[
        "EVAL",
        "redis.call('set','a','1')\nredis.call('set','b','2')\nreturn 1",
        "0",
    ]);
    drop(dbg);
    let mut c = p.connect();
    c.set_timeout(Duration::from_secs(5));
    assert_eq!(c.must(&["MGET", "a", "b"]), b"*2\r\n$1\r\n1\r\n$1\r\n2\r\n");
}

/// Lazy freeing inside a forked session: the child has no bio_lazy_free
/// thread, so UNLINK and FLUSHALL ASYNC of big values are freed inline
/// there (and the parent's data is untouched).
#[test]
fn ldb_forked_session_frees_inline_without_the_lazyfree_thread() {
    let p = Server::start();
    let mut c = p.connect();
    c.must(&["DEBUG", "POPULATE", "1000"]);
    c.must(&[
        "EVAL",
        "for i=1,2000 do redis.call('sadd','big',i) end return 1",
        "0",
    ]);
    let mut dbg = p.connect();
    dbg.must(&["SCRIPT", "DEBUG", "yes"]);
    dbg.must(&[
        "EVAL",
        "redis.call('unlink','big')\nredis.call('flushall','async')\nreturn redis.call('dbsize')",
        "0",
    ]);
    dbg.send(&enc(&["c"])).unwrap();
    let (rest, closed) =
        dbg.read_until_close_or_idle(Duration::from_secs(10), Duration::from_secs(2));
    assert!(closed, "the child exited");
    assert!(
        common::escape(&rest).ends_with("+<endsession>\\r\\n:0\\r\\n"),
        "{}",
        common::escape(&rest)
    );
    assert_eq!(c.must(&["SCARD", "big"]), b":2000\r\n");
    assert_eq!(c.must(&["DBSIZE"]), b":1001\r\n");
}
