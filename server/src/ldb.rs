//! LDB, the Lua debugger (Redis's eval.c "LDB" part): `SCRIPT DEBUG
//! YES|SYNC|NO` and what `redis-cli --ldb --eval` talks to.
//!
//! # How a debugging session works
//!
//! `SCRIPT DEBUG YES` (or `SYNC`) only sets a flag on the client. Its next
//! EVAL goes through `eval_generic_command_with_debugging`:
//!
//! 1. `ldb_start_session`. With YES the server **forks**: the parent closes
//!    its copy of the connection and goes back to serving everyone else;
//!    the child runs the script for this one client and exits when it is
//!    done, so whatever the script wrote dies with the child ("dataset
//!    changes rolled back"). With SYNC there is no fork: the script runs on
//!    the main thread, and while you sit at the `lua debugger>` prompt the
//!    event loop is not running — every other client waits. That stall is
//!    the point of the SYNC lesson, and its writes stay.
//! 2. The script runs with a Lua *line hook* (`lua_ldb_line_hook`) instead of
//!    the busy-script count hook. On each new line of the script it decides
//!    whether to stop (stepping, a breakpoint, `redis.breakpoint()`, or a
//!    script running past the time limit). To stop, it sends the log lines
//!    to the client and then reads debugger commands from the client's
//!    socket itself, with blocking reads (`ldb_repl`): the event loop is not
//!    involved at all, which is why the socket is switched to blocking mode
//!    for the session.
//! 3. `ldb_end_session` sends what is left of the log and `<endsession>`.
//!    The forked child then writes the EVAL reply itself and `_exit`s; in
//!    SYNC mode the reply goes out through the loop and the connection is
//!    closed after it (redis-cli reconnects for the next session).
//!
//! # The protocol
//!
//! Every answer of the debugger is a RESP array of simple strings, the
//! log lines (`* Stopped at 2, stop reason = step over`, `-> 2   local x`,
//! `<redis> get k`, `<reply> "v"`, `<value> 1`, `<error> ...`). redis-cli
//! colours them by their prefix and ends the session when it sees
//! `<endsession>`. Commands come in as RESP arrays, parsed by a small
//! parser of their own (`ldb_repl_parse_command`, as lenient as Redis's).
//!
//! # Fork safety
//!
//! Only the forking thread exists in the child. The `bio_lazy_free` thread
//! is gone, and a lock it held at the instant of the fork would stay held
//! for ever; so the child frees everything inline (`lazyfree::set_in_fork_child`)
//! and never touches the worker's queue. jemalloc takes and re-initialises
//! its own locks around fork (its pthread_atfork handlers). The child never
//! polls: the epoll instance is shared with the parent, and closing or
//! deregistering a socket there would change the parent's. It leaves with
//! `_exit`, so no destructor and no atexit handler runs.
//!
//! The debugger state is one thread-local `LdbState` (Redis's global
//! `ldb`): the Lua hooks and `redis.call` reach it without the server.

use std::cell::RefCell;
use std::ffi::{c_char, c_int, CStr};
use std::time::Instant;

use bytes::Bytes;
use mlua::ffi::{self, lua_Debug, lua_State};

use crate::log::{server_log, LogLevel};
use crate::lualib::to_bytes;
use crate::networking::{Client, CLIENT_CLOSE_AFTER_REPLY, CLIENT_CLOSE_ASAP};
use crate::script_lua::{current_server, lua_push_error};
use crate::server::Server;

/// CLIENT_LUA_DEBUG: the client's EVALs run in a debugging session.
/// High bits, clear of the flags at the top of networking.rs.
pub const CLIENT_LUA_DEBUG: u32 = 1 << 25;
/// CLIENT_LUA_DEBUG_SYNC: ... on the main thread, not in a forked child.
pub const CLIENT_LUA_DEBUG_SYNC: u32 = 1 << 26;

/// LDB_BREAKPOINTS_MAX: breakpoints one session can hold.
pub const LDB_BREAKPOINTS_MAX: usize = 64;
/// LDB_MAX_LEN_DEFAULT: logged replies and values are cut at this many
/// bytes unless `maxlen` says otherwise.
pub const LDB_MAX_LEN_DEFAULT: usize = 256;
/// LDB_MAX_VALUES_DEPTH (LUA_MINSTACK/2): how deep `print` follows nested
/// tables before giving up (a table may contain itself).
const LDB_MAX_VALUES_DEPTH: usize = (ffi::LUA_MINSTACK / 2) as usize;
/// A debugger command longer than this (1 MB unparsed) ends the script:
/// the client cannot make the server buffer without bound.
const LDB_MAX_CBUF: usize = 1 << 20;
/// Debugger commands have at most this many arguments of at most this
/// many bytes each (ldbReplParseCommand's limits).
const LDB_MAX_ARGS: usize = 1024;
const LDB_MAX_ARG_LEN: usize = 1024;
/// connSendTimeout(ldb.conn, 5000): a debugger that stops reading its
/// replies cannot hang the server on a write for more than 5 seconds.
const LDB_SEND_TIMEOUT_MS: i64 = 5000;
/// Without busy-reply-threshold, a script stops with "timeout reached"
/// after this long without a stop.
const LDB_DEFAULT_TIMELIMIT_MS: i64 = 5000;
/// The count hook's period while debugging (as luaCallFunction sets it).
pub const LDB_HOOK_COUNT: c_int = 100_000;

/// struct ldbState: the debugger's state, one per process.
pub struct LdbState {
    /// The debugging client's socket.
    pub fd: i32,
    /// A session runs (the script is being debugged).
    pub active: bool,
    /// The session runs in a forked child (SCRIPT DEBUG YES).
    pub forked: bool,
    /// Log lines not yet sent to the client.
    pub logs: Vec<Vec<u8>>,
    /// Parent side: the pids of the forked sessions not yet reaped.
    pub children: Vec<libc::pid_t>,
    /// Breakpoint line numbers.
    pub bp: Vec<i32>,
    /// Stop at the next line whatever the breakpoints say.
    pub step: bool,
    /// Stop at the next line because the script called redis.breakpoint().
    pub luabp: bool,
    /// The script's source, one entry per line.
    pub src: Vec<Vec<u8>>,
    pub currentline: i32,
    /// Bytes read from the client, not yet a whole command.
    pub cbuf: Vec<u8>,
    /// Logged values and replies are cut at this many bytes (0 = never).
    pub maxlen: usize,
    /// The "use maxlen 0" hint was given (or the user used maxlen).
    pub maxlen_hint_sent: bool,
}

thread_local! {
    static LDB: RefCell<LdbState> = const {
        RefCell::new(LdbState {
            fd: -1,
            active: false,
            forked: false,
            logs: Vec::new(),
            children: Vec::new(),
            bp: Vec::new(),
            step: false,
            luabp: false,
            src: Vec::new(),
            currentline: 0,
            cbuf: Vec::new(),
            maxlen: LDB_MAX_LEN_DEFAULT,
            maxlen_hint_sent: false,
        })
    };
}

/// Run `f` on the debugger state. Never call Lua inside `f`: Lua code may
/// log (redis.call, redis.debug), which needs the state again.
fn with_ldb<R>(f: impl FnOnce(&mut LdbState) -> R) -> R {
    LDB.with(|l| f(&mut l.borrow_mut()))
}

/// ldbIsEnabled: a session runs and is stepping, so redis.call logs the
/// commands it runs and their replies.
pub fn ldb_is_enabled() -> bool {
    with_ldb(|l| l.active && l.step)
}

/// Whether a debugging session runs (EVAL then uses the line hook).
pub fn ldb_is_active() -> bool {
    with_ldb(|l| l.active)
}

/// ldbEnable: the client's next EVALs are debugged. Resets the session
/// settings (breakpoints, maxlen) as Redis does.
pub fn ldb_enable(c: &mut Client) {
    c.flags |= CLIENT_LUA_DEBUG;
    with_ldb(|l| {
        l.logs.clear();
        l.fd = c.fd;
        l.step = true;
        l.bp.clear();
        l.luabp = false;
        l.cbuf.clear();
        l.maxlen = LDB_MAX_LEN_DEFAULT;
        l.maxlen_hint_sent = false;
    });
}

/// ldbDisable: this client's EVALs run normally again.
pub fn ldb_disable(c: &mut Client) {
    c.flags &= !(CLIENT_LUA_DEBUG | CLIENT_LUA_DEBUG_SYNC);
}

// ---------------------------------------------------------------------------
// The log: what the client is sent at the next stop
// ---------------------------------------------------------------------------

/// ldbLog: queue one log line.
pub fn ldb_log(entry: impl Into<Vec<u8>>) {
    let entry = entry.into();
    with_ldb(|l| l.logs.push(entry));
}

/// ldbLogWithMaxLen: queue a line cut at `maxlen` bytes (plus " ..."),
/// hinting once how to turn the cutting off.
fn ldb_log_with_max_len(mut entry: Vec<u8>) {
    with_ldb(|l| {
        let mut trimmed = false;
        if l.maxlen != 0 && entry.len() > l.maxlen {
            entry.truncate(l.maxlen);
            entry.extend_from_slice(b" ...");
            trimmed = true;
        }
        l.logs.push(entry);
        if trimmed && !l.maxlen_hint_sent {
            l.maxlen_hint_sent = true;
            l.logs.push(
                b"<hint> The above reply was trimmed. Use 'maxlen 0' to disable trimming.".to_vec(),
            );
        }
    });
}

/// ldbSendLogs: send the queued lines as one array of simple strings
/// (CR and LF inside a line become spaces) and empty the queue.
fn ldb_send_logs() {
    let (fd, proto) = with_ldb(|l| {
        let mut proto = format!("*{}\r\n", l.logs.len()).into_bytes();
        for entry in l.logs.drain(..) {
            proto.push(b'+');
            proto.extend(
                entry
                    .iter()
                    .map(|&b| if b == b'\r' || b == b'\n' { b' ' } else { b }),
            );
            proto.extend_from_slice(b"\r\n");
        }
        (l.fd, proto)
    });
    // A failed write is not checked: the next read sees the closed
    // connection and ends the interaction.
    let _ = write_all_fd(fd, &proto);
}

/// Write all of `buf` to the (blocking) socket; stops at the first error.
fn write_all_fd(fd: i32, mut buf: &[u8]) -> std::io::Result<()> {
    while !buf.is_empty() {
        // SAFETY: writing from a live slice to a descriptor we were given;
        // MSG_NOSIGNAL: a closed peer is an error, not SIGPIPE.
        let n = unsafe { libc::send(fd, buf.as_ptr().cast(), buf.len(), libc::MSG_NOSIGNAL) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        buf = &buf[n as usize..];
    }
    Ok(())
}

/// connBlock / connNonBlock and connSendTimeout on the debugging socket.
fn set_socket_blocking(fd: i32, blocking: bool, send_timeout_ms: i64) {
    // SAFETY: fcntl and setsockopt on a descriptor we were given; a failure
    // only leaves the socket as it was.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags >= 0 {
            let flags = if blocking {
                flags & !libc::O_NONBLOCK
            } else {
                flags | libc::O_NONBLOCK
            };
            libc::fcntl(fd, libc::F_SETFL, flags);
        }
        let tv = libc::timeval {
            tv_sec: (send_timeout_ms / 1000) as libc::time_t,
            tv_usec: ((send_timeout_ms % 1000) * 1000) as libc::suseconds_t,
        };
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_SNDTIMEO,
            (&tv as *const libc::timeval).cast(),
            std::mem::size_of::<libc::timeval>() as libc::socklen_t,
        );
    }
}

// ---------------------------------------------------------------------------
// Starting and ending a session
// ---------------------------------------------------------------------------

/// ldbStartSession: fork (YES) or not (SYNC), then make the socket
/// blocking and load the source lines. Returns whether the caller should
/// run the script: false in the parent of a fork (the child runs it) and
/// when fork failed (the error is in the reply).
pub fn ldb_start_session(srv: &mut Server, c: &mut Client) -> bool {
    let forked = c.flags & CLIENT_LUA_DEBUG_SYNC == 0;
    if forked {
        let pid = match crate::server::redis_fork(srv, crate::server::ChildType::Ldb) {
            Ok(pid) => pid,
            Err(e) => {
                c.add_reply_error(&format!(
                    "ERR Fork() failed: can't run EVAL in debugging mode: {}",
                    strerror(&e)
                ));
                return false;
            }
        };
        if pid == 0 {
            server_log(LogLevel::Warning, "Redis forked for debugging eval");
        } else {
            // Parent: the child serves this client now.
            with_ldb(|l| l.children.push(pid));
            c.flags |= CLIENT_CLOSE_ASAP;
            return false;
        }
    } else {
        server_log(
            LogLevel::Warning,
            "Redis synchronous debugging eval session started",
        );
    }

    let fd = c.fd;
    set_socket_blocking(fd, true, LDB_SEND_TIMEOUT_MS);
    // The source, split into lines, without trailing newlines.
    let body = c.argv.get(1).cloned().unwrap_or_default();
    let mut end = body.len();
    while end > 0 && (body[end - 1] == b'\n' || body[end - 1] == b'\r') {
        end -= 1;
    }
    let src: Vec<Vec<u8>> = if end == 0 {
        Vec::new()
    } else {
        body[..end]
            .split(|&b| b == b'\n')
            .map(|s| s.to_vec())
            .collect()
    };
    with_ldb(|l| {
        l.fd = fd;
        l.forked = forked;
        l.active = true;
        l.src = src;
    });
    true
}

/// strerror(errno): the C library's text, without Rust's "(os error N)".
fn strerror(e: &std::io::Error) -> String {
    let code = e.raw_os_error().unwrap_or(0);
    // SAFETY: strerror returns a static, NUL-terminated string.
    unsafe { CStr::from_ptr(libc::strerror(code)) }
        .to_string_lossy()
        .into_owned()
}

/// ldbEndSession: send the rest of the log and `<endsession>`. A forked
/// child then writes the EVAL reply and exits; in SYNC mode the socket is
/// made non-blocking again and closed once the reply is written.
pub fn ldb_end_session(c: &mut Client) {
    ldb_log("<endsession>");
    ldb_send_logs();
    if with_ldb(|l| l.forked) {
        let _ = write_all_fd(c.fd, &c.reply.to_vec());
        server_log(LogLevel::Warning, "Lua debugging session child exiting");
        // exitFromChild: no destructors, no atexit handlers, nothing of
        // the parent's state touched on the way out.
        // SAFETY: _exit has no preconditions.
        unsafe { libc::_exit(0) };
    }
    server_log(
        LogLevel::Warning,
        "Redis synchronous debugging eval session ended",
    );
    set_socket_blocking(c.fd, false, 0);
    // Closing the connection after the EVAL reply tells redis-cli the
    // session is over.
    c.flags |= CLIENT_CLOSE_AFTER_REPLY;
    with_ldb(|l| {
        l.src.clear();
        l.active = false;
    });
}

/// evalGenericCommandWithDebugging: EVAL inside a session, which is ended
/// whatever happened to the script.
pub fn eval_generic_command_with_debugging(srv: &mut Server, c: &mut Client, ro: bool) {
    if ldb_start_session(srv, c) {
        crate::eval::eval_generic_command_body(srv, c, false, ro);
        ldb_end_session(c);
    } else {
        ldb_disable(c);
    }
}

/// ldbRemoveChild: a child reaped by server::check_children_done; true
/// when it was one of our debugging sessions.
pub fn ldb_remove_child(pid: libc::pid_t) -> bool {
    with_ldb(|l| {
        let before = l.children.len();
        l.children.retain(|&p| p != pid);
        l.children.len() != before
    })
}

/// ldbKillForkedSessions: at shutdown, end every forked session.
pub fn ldb_kill_forked_sessions() {
    let children = with_ldb(|l| std::mem::take(&mut l.children));
    for pid in children {
        server_log(
            LogLevel::Warning,
            &format!("Killing debugging session {pid}"),
        );
        // SAFETY: signalling our own child.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
}

/// SCRIPT DEBUG YES|SYNC|NO
// redis: eval.c scriptCommand (debug)
pub fn script_debug_command(_srv: &mut Server, c: &mut Client) {
    // The session talks to the socket directly: replies still queued
    // would arrive after the debugger's (clientHasPendingReplies).
    if !c.reply.is_empty() {
        return c.add_reply_error("ERR SCRIPT DEBUG must be called outside a pipeline");
    }
    let mode = c.arg(2);
    if mode.eq_ignore_ascii_case(b"no") {
        ldb_disable(c);
        c.add_reply_ok();
    } else if mode.eq_ignore_ascii_case(b"yes") {
        ldb_enable(c);
        c.add_reply_ok();
    } else if mode.eq_ignore_ascii_case(b"sync") {
        ldb_enable(c);
        c.add_reply_ok();
        c.flags |= CLIENT_LUA_DEBUG_SYNC;
    } else {
        c.add_reply_error("ERR Use SCRIPT DEBUG YES/SYNC/NO");
    }
}

// ---------------------------------------------------------------------------
// Source lines and breakpoints
// ---------------------------------------------------------------------------

/// ldbGetSourceLine: line `line` (1-based) of the script.
fn ldb_get_source_line(l: &LdbState, line: i32) -> Vec<u8> {
    match usize::try_from(line - 1).ok().and_then(|i| l.src.get(i)) {
        Some(s) => s.clone(),
        None => b"<out of range source code line>".to_vec(),
    }
}

fn ldb_is_breakpoint(l: &LdbState, line: i32) -> bool {
    l.bp.contains(&line)
}

/// ldbAddBreakpoint: false for a line outside the script, a breakpoint
/// already there, or no room left.
fn ldb_add_breakpoint(l: &mut LdbState, line: i32) -> bool {
    if line <= 0 || line as usize > l.src.len() {
        return false;
    }
    if !ldb_is_breakpoint(l, line) && l.bp.len() != LDB_BREAKPOINTS_MAX {
        l.bp.push(line);
        return true;
    }
    false
}

/// ldbDelBreakpoint.
///
/// Note: Redis 7.0.15 closes the gap with `memmove(bp+j, bp+j+1,
/// bpcount-j)`, a count of *bytes* where ints were meant, so removing any
/// breakpoint but the last leaves the list garbled (with 1, 3 and 4 set,
/// `b -1` leaves 3 and 3). redis-cli sessions are compared line by line
/// with Redis's, so the same byte move is done here.
fn ldb_del_breakpoint(l: &mut LdbState, line: i32) -> bool {
    let Some(j) = l.bp.iter().position(|&b| b == line) else {
        return false;
    };
    let count = l.bp.len() - 1;
    let mut raw: Vec<u8> = l.bp.iter().flat_map(|b| b.to_ne_bytes()).collect();
    let nbytes = count - j;
    raw.copy_within((j + 1) * 4..(j + 1) * 4 + nbytes, j * 4);
    l.bp = raw
        .chunks_exact(4)
        .take(count)
        .map(|c| i32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    true
}

/// ldbLogSourceLine: `-> 3   code` for the current line, `  #` marks a
/// breakpoint, `->#` both.
fn ldb_log_source_line(l: &mut LdbState, lnum: i32) {
    let line = ldb_get_source_line(l, lnum);
    let bp = ldb_is_breakpoint(l, lnum);
    let current = l.currentline == lnum;
    let prefix = match (current, bp) {
        (true, true) => "->#",
        (true, false) => "-> ",
        (false, true) => "  #",
        (false, false) => "   ",
    };
    let mut entry = format!("{prefix}{lnum:<3} ").into_bytes();
    entry.extend_from_slice(&line);
    l.logs.push(entry);
}

/// ldbList: the whole source (`around` 0), or `context` lines either side
/// of `around`.
fn ldb_list(l: &mut LdbState, around: i32, context: i32) {
    for j in 1..=l.src.len() as i32 {
        if around != 0 && (around - j).abs() > context {
            continue;
        }
        ldb_log_source_line(l, j);
    }
}

// ---------------------------------------------------------------------------
// Showing values
// ---------------------------------------------------------------------------

/// C's `printf("%g", d)` (ldbCatStackValue prints numbers with it).
fn fmt_g(d: f64) -> String {
    let mut buf = [0u8; 64];
    // SAFETY: a bounded snprintf into a local buffer, with a literal
    // format taking one double.
    let n = unsafe {
        libc::snprintf(
            buf.as_mut_ptr().cast::<c_char>(),
            buf.len(),
            c"%g".as_ptr(),
            d,
        )
    };
    let n = (n.max(0) as usize).min(buf.len() - 1);
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

/// sdscatrepr: `"text"` with C escapes.
fn cat_repr(out: &mut Vec<u8>, s: &[u8]) {
    let mut b = bytes::BytesMut::new();
    crate::monitor::cat_repr(&mut b, s);
    out.extend_from_slice(&b);
}

/// ldbCatStackValueRec: a readable form of the Lua value at `idx`:
/// strings quoted, numbers as %g, tables as `{1; 2}` when they are
/// arrays and `{[k]=v; ...}` otherwise, functions and other references
/// as `"function@0x..."`. The stack is left as it was.
unsafe fn ldb_cat_stack_value_rec(out: &mut Vec<u8>, l: *mut lua_State, idx: c_int, level: usize) {
    if level == LDB_MAX_VALUES_DEPTH {
        out.extend_from_slice(b"<max recursion level reached! Nested table?>");
        return;
    }
    let level = level + 1;
    // An absolute index, so pushing the iteration key does not move it.
    let idx = if idx < 0 && idx > ffi::LUA_REGISTRYINDEX {
        ffi::lua_gettop(l) + idx + 1
    } else {
        idx
    };
    let t = ffi::lua_type(l, idx);
    match t {
        ffi::LUA_TSTRING => cat_repr(out, to_bytes(l, idx).unwrap_or(b"")),
        ffi::LUA_TBOOLEAN => out.extend_from_slice(if ffi::lua_toboolean(l, idx) != 0 {
            b"true"
        } else {
            b"false"
        }),
        ffi::LUA_TNUMBER => out.extend_from_slice(fmt_g(ffi::lua_tonumber(l, idx)).as_bytes()),
        ffi::LUA_TNIL => out.extend_from_slice(b"nil"),
        ffi::LUA_TTABLE => {
            if ffi::lua_checkstack(l, 3) == 0 {
                out.extend_from_slice(b"<max recursion level reached! Nested table?>");
                return;
            }
            // Both forms are built; which one is right is known at the end.
            let mut expected_index = 1.0;
            let mut is_array = true;
            let mut as_array = Vec::new();
            let mut as_map = Vec::new();
            ffi::lua_pushnil(l);
            while ffi::lua_next(l, idx) != 0 {
                // Stack: ..., key, value.
                if is_array
                    && (ffi::lua_type(l, -2) != ffi::LUA_TNUMBER
                        || ffi::lua_tonumber(l, -2) != expected_index)
                {
                    is_array = false;
                }
                ldb_cat_stack_value_rec(&mut as_array, l, -1, level);
                as_array.extend_from_slice(b"; ");
                as_map.push(b'[');
                ldb_cat_stack_value_rec(&mut as_map, l, -2, level);
                as_map.extend_from_slice(b"]=");
                ldb_cat_stack_value_rec(&mut as_map, l, -1, level);
                as_map.extend_from_slice(b"; ");
                ffi::lua_pop(l, 1);
                expected_index += 1.0;
            }
            // Without the last "; ".
            as_array.truncate(as_array.len().saturating_sub(2));
            as_map.truncate(as_map.len().saturating_sub(2));
            out.push(b'{');
            out.extend_from_slice(if is_array { &as_array } else { &as_map });
            out.push(b'}');
        }
        ffi::LUA_TFUNCTION | ffi::LUA_TUSERDATA | ffi::LUA_TTHREAD | ffi::LUA_TLIGHTUSERDATA => {
            let p = ffi::lua_topointer(l, idx);
            let typename = match t {
                ffi::LUA_TFUNCTION => "function",
                ffi::LUA_TUSERDATA => "userdata",
                ffi::LUA_TTHREAD => "thread",
                _ => "light-userdata",
            };
            let addr = if p.is_null() {
                "(nil)".to_string()
            } else {
                format!("{:#x}", p as usize)
            };
            out.extend_from_slice(format!("\"{typename}@{addr}\"").as_bytes());
        }
        _ => out.extend_from_slice(b"\"<unknown-lua-type>\""),
    }
}

/// ldbLogStackValue: log `prefix` and the value on top of the stack
/// (cut at maxlen).
unsafe fn ldb_log_stack_value(l: *mut lua_State, prefix: &[u8]) {
    let mut s = prefix.to_vec();
    ldb_cat_stack_value_rec(&mut s, l, -1, 0);
    ldb_log_with_max_len(s);
}

/// ldbRedisProtocolToHuman: the reply at `pos` of `reply` (RESP2 or
/// RESP3, as the script's client received it) in the debugger's notation:
/// `"bulk"`, `NULL`, `"+OK"`, `[1,2]`, `~(a,b)`, `{k => v}`, `(null)`,
/// `#true`, `(double) 1.5`. Returns the position after it. A type the
/// debugger does not know (big number, verbatim, attribute) adds nothing
/// and does not advance, as in Redis.
pub fn ldb_redis_protocol_to_human(out: &mut Vec<u8>, reply: &[u8], pos: usize) -> usize {
    let Some(&kind) = reply.get(pos) else {
        return pos;
    };
    // The first line's text after the type byte, and where the next starts.
    let line_end = reply[pos..]
        .windows(2)
        .position(|w| w == b"\r\n")
        .map_or(reply.len(), |i| pos + i);
    let line = &reply[(pos + 1).min(line_end)..line_end];
    let next = (line_end + 2).min(reply.len());
    let len = || -> i64 {
        std::str::from_utf8(line)
            .ok()
            .and_then(|t| t.parse().ok())
            .unwrap_or(0)
    };
    match kind {
        b':' => {
            out.extend_from_slice(line);
            next
        }
        b'$' => {
            let n = len();
            if n == -1 {
                out.extend_from_slice(b"NULL");
                return next;
            }
            let end = (next + n.max(0) as usize).min(reply.len());
            cat_repr(out, &reply[next..end]);
            (end + 2).min(reply.len())
        }
        // Status and error lines keep their '+' / '-'.
        b'+' | b'-' => {
            cat_repr(out, &reply[pos..line_end]);
            next
        }
        b'*' => {
            let n = len();
            if n == -1 {
                out.extend_from_slice(b"NULL");
                return next;
            }
            out.push(b'[');
            let mut p = next;
            for j in 0..n {
                p = ldb_redis_protocol_to_human(out, reply, p);
                if j != n - 1 {
                    out.push(b',');
                }
            }
            out.push(b']');
            p
        }
        b'~' => {
            let n = len();
            out.extend_from_slice(b"~(");
            let mut p = next;
            for j in 0..n {
                p = ldb_redis_protocol_to_human(out, reply, p);
                if j != n - 1 {
                    out.push(b',');
                }
            }
            out.push(b')');
            p
        }
        b'%' => {
            let n = len();
            out.push(b'{');
            let mut p = next;
            for j in 0..n {
                p = ldb_redis_protocol_to_human(out, reply, p);
                out.extend_from_slice(b" => ");
                p = ldb_redis_protocol_to_human(out, reply, p);
                if j != n - 1 {
                    out.push(b',');
                }
            }
            out.push(b'}');
            p
        }
        b'_' => {
            out.extend_from_slice(b"(null)");
            next
        }
        b'#' => {
            out.extend_from_slice(if line.first() == Some(&b't') {
                b"#true"
            } else {
                b"#false"
            });
            next
        }
        b',' => {
            out.extend_from_slice(b"(double) ");
            out.extend_from_slice(line);
            next
        }
        _ => pos,
    }
}

/// ldbLogRedisReply: `<reply> ` and the reply in human form (cut at maxlen).
pub fn ldb_log_redis_reply(reply: &[u8]) {
    let mut s = b"<reply> ".to_vec();
    ldb_redis_protocol_to_human(&mut s, reply, 0);
    ldb_log_with_max_len(s);
}

/// The `<redis> cmd arg ...` line redis.call logs while stepping (at most
/// 10 arguments, then "... (N more)").
pub fn ldb_log_redis_command(argv: &[Bytes]) {
    let mut s = b"<redis>".to_vec();
    for (j, a) in argv.iter().enumerate() {
        if j == 10 {
            s.extend_from_slice(format!(" ... ({} more)", argv.len() - j - 1).as_bytes());
            break;
        }
        s.push(b' ');
        s.extend_from_slice(a);
    }
    ldb_log(s);
}

/// The `<error> ...` line of luaPushErrorBuff while stepping.
pub fn ldb_log_error(err: &[u8]) {
    let mut s = b"<error> ".to_vec();
    s.extend_from_slice(err);
    ldb_log(s);
}

// ---------------------------------------------------------------------------
// The debugger commands
// ---------------------------------------------------------------------------

/// ldbPrint: the first local called `varname`, from the current frame
/// outwards; then the KEYS and ARGV globals.
unsafe fn ldb_print(l: *mut lua_State, varname: &[u8]) {
    let mut ar: lua_Debug = std::mem::zeroed();
    let mut level = 0;
    while ffi::lua_getstack(l, level, &mut ar) != 0 {
        level += 1;
        let mut i = 1;
        loop {
            let name = ffi::lua_getlocal(l, &ar, i);
            if name.is_null() {
                break;
            }
            i += 1;
            let found = CStr::from_ptr(name).to_bytes() == varname;
            if found {
                ldb_log_stack_value(l, b"<value> ");
            }
            ffi::lua_pop(l, 1);
            if found {
                return;
            }
        }
    }
    if varname == b"ARGV" || varname == b"KEYS" {
        let name = if varname == b"ARGV" { c"ARGV" } else { c"KEYS" };
        ffi::lua_getglobal(l, name.as_ptr());
        ldb_log_stack_value(l, b"<value> ");
        ffi::lua_pop(l, 1);
    } else {
        ldb_log("No such variable.");
    }
}

/// ldbPrintAll: every local of the current frame.
unsafe fn ldb_print_all(l: *mut lua_State) {
    let mut ar: lua_Debug = std::mem::zeroed();
    let mut vars = 0;
    if ffi::lua_getstack(l, 0, &mut ar) != 0 {
        let mut i = 1;
        loop {
            let name = ffi::lua_getlocal(l, &ar, i);
            if name.is_null() {
                break;
            }
            i += 1;
            let name = CStr::from_ptr(name).to_bytes();
            if !contains(name, b"(*temporary)") {
                let mut prefix = b"<value> ".to_vec();
                prefix.extend_from_slice(name);
                prefix.extend_from_slice(b" = ");
                ldb_log_stack_value(l, &prefix);
                vars += 1;
            }
            ffi::lua_pop(l, 1);
        }
    }
    if vars == 0 {
        ldb_log("No local variables in the current context.");
    }
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// ldbBreak: list, add (`b 5`), remove (`b -5`) or clear (`b 0`).
fn ldb_break(argv: &[Vec<u8>]) {
    with_ldb(|l| {
        if argv.len() == 1 {
            if l.bp.is_empty() {
                l.logs
                    .push(b"No breakpoints set. Use 'b <line>' to add one.".to_vec());
            } else {
                l.logs
                    .push(format!("{} breakpoints set:", l.bp.len()).into_bytes());
                for bp in l.bp.clone() {
                    ldb_log_source_line(l, bp);
                }
            }
            return;
        }
        for arg in &argv[1..] {
            let Some(line) = storage::util::string2ll(arg) else {
                let mut s = b"Invalid argument:'".to_vec();
                s.extend_from_slice(arg);
                s.push(b'\'');
                l.logs.push(s);
                continue;
            };
            let line = line.clamp(i64::from(i32::MIN) + 1, i64::from(i32::MAX)) as i32;
            if line == 0 {
                l.bp.clear();
                l.logs.push(b"All breakpoints removed.".to_vec());
            } else if line > 0 {
                if l.bp.len() == LDB_BREAKPOINTS_MAX {
                    l.logs.push(b"Too many breakpoints set.".to_vec());
                } else if ldb_add_breakpoint(l, line) {
                    ldb_list(l, line, 1);
                } else {
                    l.logs.push(b"Wrong line number.".to_vec());
                }
            } else if ldb_del_breakpoint(l, -line) {
                l.logs.push(b"Breakpoint removed.".to_vec());
            } else {
                l.logs
                    .push(b"No breakpoint in the specified line.".to_vec());
            }
        }
    });
}

/// ldbEval: compile the arguments as an expression (`return <code>`) or,
/// failing that, as a statement; run it in its own frame and show what
/// it returned.
unsafe fn ldb_eval(l: *mut lua_State, argv: &[Vec<u8>]) {
    let code = argv[1..].join(&b' ');
    let mut expr = b"return ".to_vec();
    expr.extend_from_slice(&code);
    let chunkname = c"@ldb_eval".as_ptr();
    if ffi::luaL_loadbuffer(l, expr.as_ptr().cast(), expr.len(), chunkname) != 0 {
        ffi::lua_pop(l, 1);
        if ffi::luaL_loadbuffer(l, code.as_ptr().cast(), code.len(), chunkname) != 0 {
            log_error_on_top(l);
            ffi::lua_pop(l, 1);
            return;
        }
    }
    if ffi::lua_pcall(l, 0, 1, 0) != 0 {
        log_error_on_top(l);
        ffi::lua_pop(l, 1);
        return;
    }
    ldb_log_stack_value(l, b"<retval> ");
    ffi::lua_pop(l, 1);
}

/// `<error> <message>` for the error value on top of the stack.
unsafe fn log_error_on_top(l: *mut lua_State) {
    let msg = if ffi::lua_isstring(l, -1) != 0 {
        to_bytes(l, -1).unwrap_or(b"").to_vec()
    } else {
        b"(null)".to_vec()
    };
    ldb_log_error(&msg);
}

/// ldbRedis: run a command through redis.call with stepping forced on, so
/// redis.call itself logs the command and its reply.
unsafe fn ldb_redis(l: *mut lua_State, argv: &[Vec<u8>]) {
    if ffi::lua_checkstack(l, argv.len() as c_int + 1) == 0 {
        // redis.call and the redis table need room besides the arguments.
        ldb_log_redis_reply(b"max lua stack reached");
        return;
    }
    ffi::lua_getglobal(l, c"redis".as_ptr());
    ffi::lua_pushstring(l, c"call".as_ptr());
    ffi::lua_gettable(l, -2); // Stack: redis, redis.call
    for a in &argv[1..] {
        ffi::lua_pushlstring(l, a.as_ptr().cast(), a.len());
    }
    with_ldb(|s| s.step = true); // redis.call logs while stepping
    ffi::lua_pcall(l, argv.len() as c_int - 1, 1, 0);
    with_ldb(|s| s.step = false);
    ffi::lua_pop(l, 2); // the result (or error) and the redis table
}

/// ldbTrace: `In <function>:` / `From <caller>:` and the line, for each
/// frame of the script.
unsafe fn ldb_trace(l: *mut lua_State) {
    let mut ar: lua_Debug = std::mem::zeroed();
    let mut level = 0;
    while ffi::lua_getstack(l, level, &mut ar) != 0 {
        ffi::lua_getinfo(l, c"Snl".as_ptr(), &mut ar);
        let short_src = CStr::from_ptr(ar.short_src.as_ptr()).to_bytes();
        if contains(short_src, b"user_script") {
            let name = if ar.name.is_null() {
                "top level".to_string()
            } else {
                CStr::from_ptr(ar.name).to_string_lossy().into_owned()
            };
            let head = if level == 0 { "In" } else { "From" };
            with_ldb(|s| {
                s.logs.push(format!("{head} {name}:").into_bytes());
                ldb_log_source_line(s, ar.currentline);
            });
        }
        level += 1;
    }
    if level == 0 {
        ldb_log("<error> Can't retrieve Lua stack.");
    }
}

/// ldbMaxlen: show or set the cut length (below 60 means 60; 0 = none).
fn ldb_maxlen(argv: &[Vec<u8>]) {
    with_ldb(|l| {
        if argv.len() == 2 {
            let mut newval = atoi(&argv[1]);
            l.maxlen_hint_sent = true; // the user knows about maxlen
            if newval != 0 && newval <= 60 {
                newval = 60;
            }
            l.maxlen = newval as usize;
        }
        let line = if l.maxlen != 0 {
            format!(
                "<value> replies are truncated at {} bytes.",
                l.maxlen as i32
            )
        } else {
            "<value> replies are unlimited.".to_string()
        };
        l.logs.push(line.into_bytes());
    });
}

/// C's atoi (util.c's one home), narrowed to the `int` it returns.
fn atoi(s: &[u8]) -> i64 {
    util::atoi(s).clamp(i64::from(i32::MIN), i64::from(i32::MAX))
}

/// What parsing the debugger's input buffer gave.
#[derive(Debug, PartialEq, Eq)]
pub enum ParsedCommand {
    /// A whole command.
    Command(Vec<Vec<u8>>),
    /// Not complete yet: read more.
    NeedMore,
    /// Not a command at all: the script is stopped with "protocol error".
    ProtocolError,
}

/// ldbReplParseCommand: one RESP array of bulk strings from `cbuf`. As in
/// Redis it is lenient (it looks for the first `*`) but strict on size:
/// 1..=1024 arguments of 1..=1024 bytes.
pub fn ldb_repl_parse_command(cbuf: &[u8]) -> ParsedCommand {
    use ParsedCommand::*;
    if cbuf.is_empty() {
        return NeedMore;
    }
    let find_crlf = |from: usize| {
        cbuf.get(from..)
            .and_then(|rest| rest.windows(2).position(|w| w == b"\r\n"))
            .map(|i| from + i)
    };
    let Some(star) = cbuf.iter().position(|&b| b == b'*') else {
        return ProtocolError;
    };
    let Some(crlf) = find_crlf(star) else {
        return NeedMore;
    };
    let argc = atoi(&cbuf[star + 1..crlf]);
    if argc <= 0 || argc as usize > LDB_MAX_ARGS {
        return ProtocolError;
    }
    let mut p = crlf + 2;
    let mut argv = Vec::with_capacity(argc as usize);
    while argv.len() < argc as usize {
        let Some(&b) = cbuf.get(p) else {
            return NeedMore;
        };
        if b != b'$' {
            return ProtocolError;
        }
        let Some(crlf) = find_crlf(p) else {
            return NeedMore;
        };
        let slen = atoi(&cbuf[p + 1..crlf]);
        if slen <= 0 || slen as usize > LDB_MAX_ARG_LEN {
            return ProtocolError;
        }
        let slen = slen as usize;
        p = crlf + 2;
        if p + slen + 2 > cbuf.len() {
            return NeedMore;
        }
        argv.push(cbuf[p..p + slen].to_vec());
        p += slen;
        if &cbuf[p..p + 2] != b"\r\n" {
            return ProtocolError;
        }
        p += 2;
    }
    Command(argv)
}

/// How an interaction at the prompt ended.
enum ReplOutcome {
    /// step / next / continue: back to the script.
    Resume,
    /// The client closed the connection: the script runs on unattended.
    ClientGone,
    /// Stop the script with this error (abort, protocol error...).
    Raise(&'static [u8]),
}

/// The help text of the `help` command, line by line.
const LDB_HELP: &[&str] = &[
    "Redis Lua debugger help:",
    "[h]elp               Show this help.",
    "[s]tep               Run current line and stop again.",
    "[n]ext               Alias for step.",
    "[c]ontinue           Run till next breakpoint.",
    "[l]ist               List source code around current line.",
    "[l]ist [line]        List source code around [line].",
    "                     line = 0 means: current position.",
    "[l]ist [line] [ctx]  In this form [ctx] specifies how many lines",
    "                     to show before/after [line].",
    "[w]hole              List all source code. Alias for 'list 1 1000000'.",
    "[p]rint              Show all the local variables.",
    "[p]rint <var>        Show the value of the specified variable.",
    "                     Can also show global vars KEYS and ARGV.",
    "[b]reak              Show all breakpoints.",
    "[b]reak <line>       Add a breakpoint to the specified line.",
    "[b]reak -<line>      Remove breakpoint from the specified line.",
    "[b]reak 0            Remove all breakpoints.",
    "[t]race              Show a backtrace.",
    "[e]val <code>        Execute some Lua code (in a different callframe).",
    "[r]edis <cmd>        Execute a Redis command.",
    "[m]axlen [len]       Trim logged Redis replies and Lua var dumps to len.",
    "                     Specifying zero as <len> means unlimited.",
    "[a]bort              Stop the execution of the script. In sync",
    "                     mode dataset changes will be retained.",
    "",
    "Debugger functions you can call from Lua scripts:",
    "redis.debug()        Produce logs in the debugger console.",
    "redis.breakpoint()   Stop execution like if there was a breakpoint in the",
    "                     next line of code.",
];

/// Read the next whole command from the client (blocking).
fn ldb_read_command() -> Result<Vec<Vec<u8>>, ReplOutcome> {
    loop {
        let parsed = with_ldb(|l| ldb_repl_parse_command(&l.cbuf));
        match parsed {
            ParsedCommand::Command(argv) => {
                // The whole buffer goes, as in Redis (one command per read).
                with_ldb(|l| l.cbuf.clear());
                return Ok(argv);
            }
            ParsedCommand::ProtocolError => return Err(ReplOutcome::Raise(b"protocol error")),
            ParsedCommand::NeedMore => {}
        }
        let fd = with_ldb(|l| l.fd);
        let mut buf = [0u8; 1024];
        // SAFETY: reading into a local buffer from the blocking socket.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        if n <= 0 {
            // The client is gone: let the script run to its end unattended.
            with_ldb(|l| {
                l.step = false;
                l.bp.clear();
            });
            return Err(ReplOutcome::ClientGone);
        }
        let too_big = with_ldb(|l| {
            l.cbuf.extend_from_slice(&buf[..n as usize]);
            if l.cbuf.len() > LDB_MAX_CBUF {
                l.cbuf.clear();
                true
            } else {
                false
            }
        });
        if too_big {
            return Err(ReplOutcome::Raise(b"max client buffer reached"));
        }
    }
}

/// ldbRepl: serve debugger commands until one returns to the script.
unsafe fn ldb_repl(l: *mut lua_State) -> ReplOutcome {
    loop {
        let argv = match ldb_read_command() {
            Ok(argv) => argv,
            Err(outcome) => return outcome,
        };
        let cmd = argv[0].to_ascii_lowercase();
        let is = |names: &[&[u8]]| names.contains(&cmd.as_slice());
        if is(&[b"h", b"help"]) {
            for line in LDB_HELP {
                ldb_log(*line);
            }
        } else if is(&[b"s", b"step", b"n", b"next"]) {
            with_ldb(|s| s.step = true);
            return ReplOutcome::Resume;
        } else if is(&[b"c", b"continue"]) {
            return ReplOutcome::Resume;
        } else if is(&[b"t", b"trace"]) {
            ldb_trace(l);
        } else if is(&[b"m", b"maxlen"]) {
            ldb_maxlen(&argv);
        } else if is(&[b"b", b"break"]) {
            ldb_break(&argv);
        } else if is(&[b"e", b"eval"]) {
            ldb_eval(l, &argv);
        } else if is(&[b"a", b"abort"]) {
            return ReplOutcome::Raise(b"script aborted for user request");
        } else if argv.len() > 1 && is(&[b"r", b"redis"]) {
            ldb_redis(l, &argv);
        } else if is(&[b"p", b"print"]) {
            if argv.len() == 2 {
                ldb_print(l, &argv[1]);
            } else {
                ldb_print_all(l);
            }
        } else if is(&[b"l", b"list"]) {
            with_ldb(|s| {
                let mut around = s.currentline;
                let mut ctx = 5;
                if argv.len() > 1 {
                    let num = atoi(&argv[1]) as i32;
                    if num > 0 {
                        around = num;
                    }
                }
                if argv.len() > 2 {
                    ctx = atoi(&argv[2]) as i32;
                }
                ldb_list(s, around, ctx);
            });
        } else if is(&[b"w", b"whole"]) {
            with_ldb(|s| ldb_list(s, 1, 1_000_000));
        } else {
            ldb_log("<error> Unknown Redis Lua debugger command or wrong number of arguments.");
        }
        ldb_send_logs();
    }
}

/// Why the hook stops, or None to let the script run on.
fn stop_reason(event: c_int, elapsed_ms: i64, timelimit_ms: i64) -> Option<&'static str> {
    with_ldb(|l| {
        let bp = ldb_is_breakpoint(l, l.currentline) || l.luabp;
        let mut timeout = false;
        if event == ffi::LUA_HOOKCOUNT && !l.step && !bp {
            if elapsed_ms < timelimit_ms {
                return None; // a count event with no reason to stop
            }
            timeout = true;
            l.step = true;
        }
        if !(l.step || bp) {
            return None;
        }
        let reason = if bp {
            if l.luabp {
                "redis.breakpoint() called"
            } else {
                "break point"
            }
        } else if timeout {
            "timeout reached, infinite loop?"
        } else {
            "step over"
        };
        l.step = false;
        l.luabp = false;
        l.logs
            .push(format!("* Stopped at {}, stop reason = {reason}", l.currentline).into_bytes());
        let line = l.currentline;
        ldb_log_source_line(l, line);
        Some(reason)
    })
}

/// The work of luaLdbLineHook; returns an error to raise in the script.
unsafe fn ldb_line_hook_body(l: *mut lua_State, ar: *mut lua_Debug) -> Option<&'static [u8]> {
    let event = (*ar).event;
    ffi::lua_getstack(l, 0, ar);
    ffi::lua_getinfo(l, c"Sl".as_ptr(), ar);
    // Lines outside the script (redis-lite's own Lua helpers) are not
    // interesting.
    let short_src = CStr::from_ptr((*ar).short_src.as_ptr()).to_bytes();
    if !contains(short_src, b"user_script") {
        return None;
    }
    let currentline = (*ar).currentline;
    with_ldb(|s| s.currentline = currentline);

    let srv = current_server()?;
    let elapsed_ms = srv
        .script_run_ctx
        .as_ref()
        .map_or(0, |ctx| ctx.start_time.elapsed().as_millis() as i64);
    let timelimit_ms = if srv.config.busy_reply_threshold > 0 {
        srv.config.busy_reply_threshold
    } else {
        LDB_DEFAULT_TIMELIMIT_MS
    };
    let reason = stop_reason(event, elapsed_ms, timelimit_ms)?;
    ldb_send_logs();
    let outcome = ldb_repl(l);
    // The time at the prompt does not count against the script.
    if let Some(srv) = current_server() {
        if let Some(ctx) = srv.script_run_ctx.as_mut() {
            ctx.start_time = Instant::now();
        }
    }
    match outcome {
        ReplOutcome::Raise(msg) => Some(msg),
        // Nobody left to debug a script that looks stuck: stop it, or the
        // server would stay blocked for ever.
        ReplOutcome::ClientGone if reason == "timeout reached, infinite loop?" => {
            Some(b"timeout during Lua debugging with client closing connection")
        }
        _ => None,
    }
}

/// luaLdbLineHook: called by Lua before each new line (and every
/// LDB_HOOK_COUNT instructions) while a script is debugged.
// redis: eval.c luaLdbLineHook
pub(crate) unsafe extern "C-unwind" fn lua_ldb_line_hook(l: *mut lua_State, ar: *mut lua_Debug) {
    // The Rust work returns (dropping what it owns) before Lua longjmps.
    let raise = crate::shutdown::catch_panic(|| ldb_line_hook_body(l, ar))
        .unwrap_or(Some(b"internal error in redis-lite's Lua debugger"));
    if let Some(msg) = raise {
        lua_push_error(l, msg);
        ffi::lua_error(l);
    }
}

/// redis.breakpoint(): stop at the next line, as if a breakpoint were
/// there; true inside a session, false (and nothing) outside.
// redis: eval.c luaRedisBreakpointCommand
pub(crate) unsafe extern "C-unwind" fn lua_redis_breakpoint_command(l: *mut lua_State) -> c_int {
    let active = with_ldb(|s| {
        if s.active {
            s.luabp = true;
        }
        s.active
    });
    ffi::lua_pushboolean(l, c_int::from(active));
    1
}

/// redis.debug(...): log `<debug> line N: ` and the arguments, separated
/// by ", ", in the debugger console; nothing outside a session.
// redis: eval.c luaRedisDebugCommand
pub(crate) unsafe extern "C-unwind" fn lua_redis_debug_command(l: *mut lua_State) -> c_int {
    let Some(line) = with_ldb(|s| s.active.then_some(s.currentline)) else {
        return 0;
    };
    let mut s = format!("<debug> line {line}: ").into_bytes();
    let argc = ffi::lua_gettop(l);
    for j in 1..=argc {
        ldb_cat_stack_value_rec(&mut s, l, j, 0);
        if j != argc {
            s.extend_from_slice(b", ");
        }
    }
    ldb_log(s);
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn human(reply: &[u8]) -> String {
        let mut out = Vec::new();
        ldb_redis_protocol_to_human(&mut out, reply, 0);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn protocol_to_human_as_redis_shows_replies() {
        assert_eq!(human(b":42\r\n"), "42");
        assert_eq!(human(b"$3\r\nbar\r\n"), "\"bar\"");
        assert_eq!(human(b"$-1\r\n"), "NULL");
        assert_eq!(human(b"+OK\r\n"), "\"+OK\"");
        assert_eq!(human(b"-ERR bad\r\n"), "\"-ERR bad\"");
        assert_eq!(human(b"*2\r\n:1\r\n$1\r\na\r\n"), "[1,\"a\"]");
        assert_eq!(human(b"*-1\r\n"), "NULL");
        assert_eq!(human(b"*0\r\n"), "[]");
        assert_eq!(human(b"~2\r\n:1\r\n:2\r\n"), "~(1,2)");
        assert_eq!(human(b"%1\r\n$1\r\nk\r\n:1\r\n"), "{\"k\" => 1}");
        assert_eq!(human(b"_\r\n"), "(null)");
        assert_eq!(human(b"#t\r\n"), "#true");
        assert_eq!(human(b",1.5\r\n"), "(double) 1.5");
        // Unknown to the debugger: nothing, as in Redis.
        assert_eq!(human(b"(123\r\n"), "");
    }

    #[test]
    fn parse_command_is_lenient_but_bounded() {
        use ParsedCommand::*;
        assert_eq!(ldb_repl_parse_command(b""), NeedMore);
        assert_eq!(ldb_repl_parse_command(b"*1\r\n$1\r\n"), NeedMore);
        assert_eq!(
            ldb_repl_parse_command(b"*2\r\n$1\r\np\r\n$3\r\nabc\r\n"),
            Command(vec![b"p".to_vec(), b"abc".to_vec()])
        );
        assert_eq!(ldb_repl_parse_command(b"junk"), ProtocolError);
        assert_eq!(ldb_repl_parse_command(b"*0\r\n"), ProtocolError);
        // Empty arguments are refused (slen <= 0).
        assert_eq!(ldb_repl_parse_command(b"*1\r\n$0\r\n\r\n"), ProtocolError);
        assert_eq!(ldb_repl_parse_command(b"*1\r\n$2000\r\n"), ProtocolError);
        assert_eq!(ldb_repl_parse_command(b"*1\r\n:1\r\n"), ProtocolError);
    }

    #[test]
    fn atoi_as_c() {
        assert_eq!(atoi(b"12abc"), 12);
        assert_eq!(atoi(b"  -7"), -7);
        assert_eq!(atoi(b"x"), 0);
        assert_eq!(atoi(b"99999999999"), i64::from(i32::MAX));
    }

    #[test]
    fn fmt_g_matches_printf() {
        assert_eq!(fmt_g(1.0), "1");
        assert_eq!(fmt_g(0.1), "0.1");
        assert_eq!(fmt_g(1e20), "1e+20");
        assert_eq!(fmt_g(123456789.0), "1.23457e+08");
    }

    #[test]
    fn source_lines_and_breakpoints() {
        let mut l = LdbState {
            fd: -1,
            active: true,
            forked: false,
            logs: Vec::new(),
            children: Vec::new(),
            bp: Vec::new(),
            step: false,
            luabp: false,
            src: vec![b"local a = 1".to_vec(), b"return a".to_vec()],
            currentline: 1,
            cbuf: Vec::new(),
            maxlen: LDB_MAX_LEN_DEFAULT,
            maxlen_hint_sent: false,
        };
        assert!(ldb_add_breakpoint(&mut l, 2));
        assert!(!ldb_add_breakpoint(&mut l, 2));
        assert!(!ldb_add_breakpoint(&mut l, 3));
        ldb_list(&mut l, 0, 0);
        assert_eq!(l.logs[0], b"-> 1   local a = 1");
        assert_eq!(l.logs[1], b"  #2   return a");
        assert!(ldb_del_breakpoint(&mut l, 2));
        assert!(!ldb_del_breakpoint(&mut l, 2));
    }

    #[test]
    fn deleting_a_breakpoint_moves_bytes_as_redis_does() {
        let mut l = LDB.with(|s| std::mem::replace(&mut *s.borrow_mut(), empty_state()));
        l.bp = vec![1, 3, 4];
        assert!(ldb_del_breakpoint(&mut l, 1));
        assert_eq!(l.bp, vec![3, 3]); // Redis 7.0.15 shows "#3" twice
        l.bp = vec![1, 3];
        assert!(ldb_del_breakpoint(&mut l, 1));
        assert_eq!(l.bp, vec![3]);
        l.bp = vec![1, 3, 4];
        assert!(ldb_del_breakpoint(&mut l, 4)); // the last one: clean
        assert_eq!(l.bp, vec![1, 3]);
    }

    fn empty_state() -> LdbState {
        LdbState {
            fd: -1,
            active: false,
            forked: false,
            logs: Vec::new(),
            children: Vec::new(),
            bp: Vec::new(),
            step: false,
            luabp: false,
            src: Vec::new(),
            currentline: 0,
            cbuf: Vec::new(),
            maxlen: LDB_MAX_LEN_DEFAULT,
            maxlen_hint_sent: false,
        }
    }
}
