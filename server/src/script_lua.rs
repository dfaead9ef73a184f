//! The Lua side of scripting (Redis's script_lua.c): the `redis` table
//! scripts see, the conversions between Redis replies and Lua values, the
//! sandbox, and `lua_call_function`, which runs one script or function.
//!
//! # Why raw C functions
//!
//! `redis.call`, `redis.pcall`, the `pcall` replacement and the other API
//! functions are `extern "C-unwind" fn(*mut lua_State) -> c_int` working on
//! the Lua stack through `mlua::ffi`, like their C originals (and like the
//! bundled libraries in lualib/). Scripts can observe why: `redis.call`
//! raises a Lua *table* `{err="ERR ..."}` that `pcall` hands back, which
//! mlua's high-level callbacks cannot do (they raise a userdata).
//!
//! A Lua error is a `longjmp`, which must never jump over a Rust frame that
//! still owns something with a destructor. So each API function is split:
//! the Rust work happens in a helper that returns, dropping everything, and
//! only then does the thin `extern` wrapper call `lua_error`.
//!
//! # Reaching the server from Lua
//!
//! Redis keeps the server and the run context in globals. Here
//! `lua_call_function` stores `srv as *mut Server` in a thread-local for the
//! duration of one script run (and restores the previous value after);
//! `redis.call` and the instruction-count hook turn it back into
//! `&mut Server`. This is sound because the `&mut Server` the pointer was
//! made from is not used while Lua runs (`lua_call_function` only touches
//! `srv` again after `lua_pcall` returned), everything is on one thread,
//! and nothing runs Lua outside a run (the pointer is null then and the API
//! answers "can only be called inside a script invocation").
//!
//! # The sandbox (global protection)
//!
//! Redis 7.0 patches its Lua to have read-only tables. Stock Lua 5.1 (what
//! mlua vendors) has none, so `lua_set_globals_protection` gives the same
//! observable behaviour with proxies: every library table, and the globals
//! table itself, is replaced by an empty table whose metatable reads from
//! the real one (`__index`) and refuses writes (`__newindex`: "Attempt to
//! modify a readonly table"); the real globals raise "Script attempted to
//! access nonexistent global variable" for unknown names. `rawset` and
//! `setmetatable` are wrapped to refuse proxies too, and `pairs`, `next` and
//! `ipairs` iterate a proxy's real table. Differences that remain: `#`,
//! `unpack` and `table.*` functions read raw, so see an empty library table,
//! and a C function's own environment (reachable only through `getfenv`,
//! which scripts do not have) is the real table.

use std::cell::Cell;
use std::ffi::{c_char, c_int, CStr};

use bytes::{Bytes, BytesMut};
use mlua::ffi::{self, lua_State};
use mlua::{Function, Lua};
use protocol::{reply, Resp};

use crate::log::{server_log, LogLevel};
use crate::script::{self, ScriptInterrupt, ScriptRun, PROPAGATE_AOF, PROPAGATE_REPL};
use crate::server::Server;

/// LUA_HOOK_COUNT: the count hook runs every 100000 VM instructions
/// (luaCallFunction's lua_sethook), a few milliseconds of Lua.
pub const LUA_HOOK_COUNT: c_int = 100_000;

/// LUA_GC_CYCLE_PERIOD: one incremental GC step of this size every this
/// many script runs, so Lua never needs one long full collection.
pub const LUA_GC_CYCLE_PERIOD: u32 = 50;

/// Registry names: the error handler every run uses, and the real globals
/// table (scripts see a read-only proxy of it).
pub const REGISTRY_ERROR_HANDLER_NAME: &CStr = c"__redis__err__handler";
pub const REGISTRY_REAL_GLOBALS_NAME: &CStr = c"__redis__real__globals";

thread_local! {
    /// The server, during one script run (see the file comment).
    static SERVER: Cell<*mut Server> = const { Cell::new(std::ptr::null_mut()) };
    /// redisLrand48's 48-bit state (redis: rand.c), shared by all scripts.
    static RAND48: Cell<u64> = const { Cell::new(0x330E) };
    /// Script runs since the last GC step (LUA_GC_CYCLE_PERIOD).
    static GC_COUNT: Cell<u32> = const { Cell::new(0) };
}

/// The server during a script run, or None outside one.
///
/// # Safety
/// Only call from code that runs inside `lua_call_function` (Lua callbacks
/// and hooks), and do not keep the reference past the callback.
pub(crate) unsafe fn current_server<'a>() -> Option<&'a mut Server> {
    let p = SERVER.with(|s| s.get());
    if p.is_null() {
        None
    } else {
        Some(&mut *p)
    }
}

// ---------------------------------------------------------------------------
// Small stack helpers
// ---------------------------------------------------------------------------

unsafe fn push_bytes(l: *mut lua_State, s: &[u8]) {
    ffi::lua_pushlstring(l, s.as_ptr() as *const c_char, s.len());
}

// The bytes of the string (or number, converted in place) at an index.
use crate::lualib::to_bytes;

/// `t[k] = v` for a string key and the value on top of the stack, with the
/// table at `t` (negative indexes count before the value).
unsafe fn set_field(l: *mut lua_State, t: c_int, k: &CStr) {
    ffi::lua_setfield(l, t, k.as_ptr());
}

/// luaPushErrorBuff / luaPushError: push `{err="<CODE> <msg>"}`. The text
/// is "-CODE msg" (a Redis error) or just "msg" (code ERR is added);
/// CR/LF at the ends are trimmed.
///
/// # Safety
/// `l` must be a valid Lua state with room for two more stack slots.
pub unsafe fn lua_push_error(l: *mut lua_State, err: &[u8]) {
    // While stepping through a script, every error is shown in the
    // debugger too (luaPushErrorBuff's ldbLog).
    if crate::ldb::ldb_is_enabled() {
        crate::ldb::ldb_log_error(err);
    }
    let (code, msg): (&[u8], &[u8]) = match err.strip_prefix(b"-") {
        Some(rest) => match rest.iter().position(|&b| b == b' ') {
            Some(sp) => (&rest[..sp], &rest[sp + 1..]),
            None => (b"ERR", rest),
        },
        None => (b"ERR", err),
    };
    let is_nl = |b: &u8| *b == b'\r' || *b == b'\n';
    let start = msg.iter().position(|b| !is_nl(b)).unwrap_or(msg.len());
    let end = msg.iter().rposition(|b| !is_nl(b)).map_or(start, |i| i + 1);
    let mut text = Vec::with_capacity(code.len() + 1 + end - start);
    text.extend_from_slice(code);
    text.push(b' ');
    text.extend_from_slice(&msg[start..end]);
    ffi::lua_createtable(l, 0, 1);
    push_bytes(l, &text);
    set_field(l, -2, c"err");
}

/// The error table on top gets `ignore_error_stats_update = true`: the
/// error was already counted when the command replied with it.
unsafe fn mark_ignore_stats(l: *mut lua_State) {
    ffi::lua_pushboolean(l, 1);
    set_field(l, -2, c"ignore_error_stats_update");
}

/// Run `f` and turn a Rust panic into a Lua error value instead of
/// unwinding through Lua's C frames. Returns whether to raise.
fn guard(l: *mut lua_State, f: impl FnOnce() -> bool) -> bool {
    match crate::shutdown::catch_panic(f) {
        Ok(raise) => raise,
        Err(_) => {
            // SAFETY: l is the running state; pushing a table cannot raise
            // except on out-of-memory.
            unsafe { lua_push_error(l, b"internal error in redis-lite's Lua API") };
            true
        }
    }
}

// ---------------------------------------------------------------------------
// Redis reply -> Lua value (redisProtocolToLuaType)
// ---------------------------------------------------------------------------

/// One line of a reply starting at `pos` (without its CRLF) and where the
/// next one starts.
fn reply_line(buf: &[u8], pos: usize) -> (&[u8], usize) {
    let rest = buf.get(pos..).unwrap_or(&[]);
    match rest.windows(2).position(|w| w == b"\r\n") {
        Some(i) => (&rest[..i], pos + i + 2),
        None => (rest, buf.len()),
    }
}

fn parse_len(s: &[u8]) -> i64 {
    std::str::from_utf8(s)
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or(-1)
}

/// redisProtocolToLuaType: push the Lua value of the reply `buf` (our own
/// RESP2 or RESP3 bytes, so trusted in shape but never indexed blindly).
/// RESP2: integer -> number, bulk -> string, null bulk / null array ->
/// false, status -> {ok=...}, error -> {err=...}, array -> table. RESP3
/// adds: map -> {map={k=v}}, set -> {set={k=true}}, null -> nil, boolean,
/// double -> {double=n}, big number -> {big_number=s}, verbatim ->
/// {verbatim_string={format=, string=}}; attributes are skipped.
///
/// # Safety
/// `l` must be a valid Lua state (the stack is grown as needed).
pub unsafe fn redis_protocol_to_lua_type(l: *mut lua_State, buf: &[u8]) {
    parse_reply(l, buf, 0, true);
}

/// Parse one reply at `pos`, pushing it when `push`; returns the position
/// after it.
unsafe fn parse_reply(l: *mut lua_State, buf: &[u8], pos: usize, push: bool) -> usize {
    let Some(&kind) = buf.get(pos) else {
        if push {
            ffi::lua_pushnil(l);
        }
        return buf.len();
    };
    let (line, mut next) = reply_line(buf, pos + 1);
    // Room for a table, a key and a value (lua_checkstack only fails past
    // Lua's hard limit; then the rest is skipped, as nothing can be pushed).
    let push = push && ffi::lua_checkstack(l, 4) != 0;
    match kind {
        b':' => {
            if push {
                ffi::lua_pushnumber(l, parse_len(line) as f64);
            }
        }
        b'$' => {
            let len = parse_len(line);
            if len < 0 {
                if push {
                    ffi::lua_pushboolean(l, 0);
                }
            } else {
                let end = (next + len as usize).min(buf.len());
                if push {
                    push_bytes(l, &buf[next..end]);
                }
                next = (end + 2).min(buf.len());
            }
        }
        b'+' => {
            if push {
                ffi::lua_createtable(l, 0, 1);
                push_bytes(l, line);
                set_field(l, -2, c"ok");
            }
        }
        b'-' => {
            if push {
                let mut err = Vec::with_capacity(line.len() + 1);
                err.push(b'-');
                err.extend_from_slice(line);
                lua_push_error(l, &err);
                mark_ignore_stats(l);
            }
        }
        b'*' | b'>' => {
            let n = parse_len(line);
            if n < 0 {
                if push {
                    ffi::lua_pushboolean(l, 0);
                }
            } else {
                if push {
                    ffi::lua_createtable(l, (n as usize).min(1024) as c_int, 0);
                }
                for j in 0..n {
                    next = parse_reply(l, buf, next, push);
                    if push {
                        ffi::lua_rawseti(l, -2, j + 1);
                    }
                }
            }
        }
        b'%' => {
            let n = parse_len(line).max(0);
            if push {
                ffi::lua_createtable(l, 0, 1);
                ffi::lua_createtable(l, 0, 0);
            }
            for _ in 0..n {
                next = parse_reply(l, buf, next, push);
                next = parse_reply(l, buf, next, push);
                if push {
                    ffi::lua_settable(l, -3);
                }
            }
            if push {
                set_field(l, -2, c"map");
            }
        }
        b'~' => {
            let n = parse_len(line).max(0);
            if push {
                ffi::lua_createtable(l, 0, 1);
                ffi::lua_createtable(l, 0, 0);
            }
            for _ in 0..n {
                next = parse_reply(l, buf, next, push);
                if push {
                    ffi::lua_pushboolean(l, 1);
                    ffi::lua_settable(l, -3);
                }
            }
            if push {
                set_field(l, -2, c"set");
            }
        }
        b'_' => {
            if push {
                ffi::lua_pushnil(l);
            }
        }
        b'#' => {
            if push {
                ffi::lua_pushboolean(l, c_int::from(line == b"t"));
            }
        }
        b',' => {
            if push {
                let d = std::str::from_utf8(line)
                    .ok()
                    .and_then(|t| t.parse::<f64>().ok())
                    .unwrap_or(0.0);
                ffi::lua_createtable(l, 0, 1);
                ffi::lua_pushnumber(l, d);
                set_field(l, -2, c"double");
            }
        }
        b'(' => {
            if push {
                ffi::lua_createtable(l, 0, 1);
                push_bytes(l, line);
                set_field(l, -2, c"big_number");
            }
        }
        b'=' => {
            let len = parse_len(line).max(0) as usize;
            let end = (next + len).min(buf.len());
            let body = &buf[next..end];
            next = (end + 2).min(buf.len());
            if push {
                let (format, text) = if body.len() >= 4 {
                    (&body[..3], &body[4..])
                } else {
                    (&b"txt"[..], body)
                };
                ffi::lua_createtable(l, 0, 1);
                ffi::lua_createtable(l, 0, 2);
                push_bytes(l, text);
                set_field(l, -2, c"string");
                push_bytes(l, format);
                set_field(l, -2, c"format");
                set_field(l, -2, c"verbatim_string");
            }
        }
        b'|' => {
            // Attributes are not shown to scripts: skip them, parse the reply.
            let n = parse_len(line).max(0);
            for _ in 0..n {
                next = parse_reply(l, buf, next, false);
                next = parse_reply(l, buf, next, false);
            }
            next = parse_reply(l, buf, next, push);
        }
        _ => {
            if push {
                ffi::lua_pushnil(l);
            }
        }
    }
    next
}

// ---------------------------------------------------------------------------
// Lua value -> Redis reply (luaReplyToRedisReply)
// ---------------------------------------------------------------------------

/// Where a converted reply goes: the bytes in the caller's protocol, the
/// error codes for INFO errorstats, and the protocol the script speaks
/// (redis.setresp), which decides how booleans come out.
pub struct ReplyTarget<'a> {
    pub out: &'a mut BytesMut,
    pub errors: &'a mut Vec<Bytes>,
    /// Set by an error reply already counted where it arose (a redis.call
    /// error the script passed on): not in errorstats again, but the
    /// script's command still failed (afterErrorReply's
    /// ERR_REPLY_FLAG_NO_STATS_UPDATE branch).
    pub failed_without_stats: &'a mut bool,
    pub resp: Resp,
    pub script_resp: Resp,
}

/// C's `(long long)` of a double as x86-64 computes it: out of range and
/// NaN give LLONG_MIN (Rust's `as` would saturate instead).
pub fn lua_number_to_long_long(d: f64) -> i64 {
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    if d.is_nan() || !(-TWO_63..TWO_63).contains(&d) {
        i64::MIN
    } else {
        d as i64
    }
}

/// A string field of the table on top, if it is one (lua_rawget: no
/// metamethods run).
unsafe fn raw_field_type(l: *mut lua_State, name: &CStr) -> c_int {
    ffi::lua_pushstring(l, name.as_ptr());
    ffi::lua_rawget(l, -2);
    ffi::lua_type(l, -1)
}

/// An error reply built from a script's `{err=...}` (addReplyErrorFormatEx
/// with "-%s"): counted in errorstats unless the table says the command
/// that produced it was counted already.
fn add_error(t: &mut ReplyTarget, msg: &[u8], ignore_stats: bool) {
    let mut text = Vec::with_capacity(msg.len() + 1);
    text.push(b'-');
    text.extend_from_slice(msg);
    if ignore_stats {
        *t.failed_without_stats = true;
    } else {
        let body = &text[1..];
        let body = body.strip_prefix(b"-").unwrap_or(body);
        let code_end = body.iter().position(|&b| b == b' ').unwrap_or(body.len());
        t.errors.push(Bytes::copy_from_slice(&body[..code_end]));
    }
    reply::error(t.out, &text);
}

/// luaReplyToRedisReply: write the value on top of the stack as a reply and
/// pop it. Strings are bulks, numbers integers (truncated), booleans `:1` /
/// null in RESP2 scripts, tables with `err` / `ok` / `double` /
/// `big_number` / `verbatim_string` / `map` / `set` fields their RESP
/// types, other tables arrays up to the first nil; anything else is null.
///
/// # Safety
/// `l` must be a valid Lua state with a value on top of its stack.
pub unsafe fn lua_reply_to_redis_reply(l: *mut lua_State, t: &mut ReplyTarget) {
    if ffi::lua_checkstack(l, 4) == 0 {
        t.errors.push(Bytes::from_static(b"ERR"));
        reply::error(t.out, b"ERR reached lua stack limit");
        ffi::lua_pop(l, 1);
        return;
    }
    match ffi::lua_type(l, -1) {
        ffi::LUA_TSTRING => reply::bulk(t.out, to_bytes(l, -1).unwrap_or(b"")),
        ffi::LUA_TBOOLEAN => {
            let b = ffi::lua_toboolean(l, -1) != 0;
            if t.script_resp == Resp::V2 {
                if b {
                    reply::integer(t.out, 1);
                } else {
                    reply::null(t.out, t.resp);
                }
            } else {
                reply::boolean(t.out, b, t.resp);
            }
        }
        ffi::LUA_TNUMBER => {
            reply::integer(t.out, lua_number_to_long_long(ffi::lua_tonumber(l, -1)))
        }
        ffi::LUA_TTABLE => {
            table_to_redis_reply(l, t);
            return; // pops the table itself
        }
        _ => reply::null(t.out, t.resp),
    }
    ffi::lua_pop(l, 1);
}

/// A status or big number as Redis sends it: CR and LF become spaces, so the
/// reply stays one protocol line.
fn without_newlines(b: &[u8]) -> Vec<u8> {
    b.iter()
        .map(|&b| if b == b'\r' || b == b'\n' { b' ' } else { b })
        .collect()
}

/// The table case of luaReplyToRedisReply; pops the table.
unsafe fn table_to_redis_reply(l: *mut lua_State, t: &mut ReplyTarget) {
    if raw_field_type(l, c"err") == ffi::LUA_TSTRING {
        let msg = to_bytes(l, -1).unwrap_or(b"").to_vec();
        ffi::lua_pop(l, 1);
        let ignore = raw_field_type(l, c"ignore_error_stats_update") == ffi::LUA_TBOOLEAN
            && ffi::lua_toboolean(l, -1) != 0;
        ffi::lua_pop(l, 2);
        add_error(t, &msg, ignore);
        return;
    }
    ffi::lua_pop(l, 1);
    if raw_field_type(l, c"ok") == ffi::LUA_TSTRING {
        let ok = without_newlines(to_bytes(l, -1).unwrap_or(b""));
        reply::simple(t.out, &ok);
        ffi::lua_pop(l, 2);
        return;
    }
    ffi::lua_pop(l, 1);
    if raw_field_type(l, c"double") == ffi::LUA_TNUMBER {
        reply::double(t.out, ffi::lua_tonumber(l, -1), t.resp);
        ffi::lua_pop(l, 2);
        return;
    }
    ffi::lua_pop(l, 1);
    if raw_field_type(l, c"big_number") == ffi::LUA_TSTRING {
        let digits = without_newlines(to_bytes(l, -1).unwrap_or(b""));
        reply::big_number(t.out, &digits, t.resp);
        ffi::lua_pop(l, 2);
        return;
    }
    ffi::lua_pop(l, 1);
    if raw_field_type(l, c"verbatim_string") == ffi::LUA_TTABLE {
        if raw_field_type(l, c"format") == ffi::LUA_TSTRING {
            let format = to_bytes(l, -1).unwrap_or(b"").to_vec();
            ffi::lua_pop(l, 1);
            if raw_field_type(l, c"string") == ffi::LUA_TSTRING {
                let text = to_bytes(l, -1).unwrap_or(b"");
                add_reply_verbatim(t, text, &format);
                ffi::lua_pop(l, 3);
                return;
            }
        }
        ffi::lua_pop(l, 1);
    }
    ffi::lua_pop(l, 1);
    if raw_field_type(l, c"map") == ffi::LUA_TTABLE {
        let n = table_pairs(l);
        reply::map_len(t.out, n, t.resp);
        ffi::lua_pushnil(l);
        while ffi::lua_next(l, -2) != 0 {
            // Stack: table, key, value. Dup the key, write key then value.
            ffi::lua_pushvalue(l, -2);
            lua_reply_to_redis_reply(l, t);
            lua_reply_to_redis_reply(l, t);
        }
        ffi::lua_pop(l, 2);
        return;
    }
    ffi::lua_pop(l, 1);
    if raw_field_type(l, c"set") == ffi::LUA_TTABLE {
        let n = table_pairs(l);
        reply::set_len(t.out, n, t.resp);
        ffi::lua_pushnil(l);
        while ffi::lua_next(l, -2) != 0 {
            ffi::lua_pop(l, 1); // the value (true) is not sent
            ffi::lua_pushvalue(l, -1);
            lua_reply_to_redis_reply(l, t);
        }
        ffi::lua_pop(l, 2);
        return;
    }
    ffi::lua_pop(l, 1);
    // An array: elements 1, 2, ... up to the first nil.
    let mut n = 0;
    loop {
        ffi::lua_rawgeti(l, -1, n + 1);
        let is_nil = ffi::lua_type(l, -1) == ffi::LUA_TNIL;
        ffi::lua_pop(l, 1);
        if is_nil {
            break;
        }
        n += 1;
    }
    reply::array_len(t.out, n as usize);
    for j in 1..=n {
        ffi::lua_rawgeti(l, -1, j);
        lua_reply_to_redis_reply(l, t);
    }
    ffi::lua_pop(l, 1);
}

/// How many pairs the table on top has (lua_next walk).
unsafe fn table_pairs(l: *mut lua_State) -> usize {
    let mut n = 0;
    ffi::lua_pushnil(l);
    while ffi::lua_next(l, -2) != 0 {
        ffi::lua_pop(l, 1);
        n += 1;
    }
    n
}

/// addReplyVerbatim with the script's 3-letter format.
fn add_reply_verbatim(t: &mut ReplyTarget, text: &[u8], format: &[u8]) {
    if t.resp == Resp::V2 {
        reply::bulk(t.out, text);
        return;
    }
    let mut ext = [b' '; 3];
    for (d, s) in ext.iter_mut().zip(format) {
        *d = *s;
    }
    t.out
        .extend_from_slice(format!("={}\r\n", text.len() + 4).as_bytes());
    t.out.extend_from_slice(&ext);
    t.out.extend_from_slice(b":");
    t.out.extend_from_slice(text);
    t.out.extend_from_slice(b"\r\n");
}

// ---------------------------------------------------------------------------
// The redis.* API
// ---------------------------------------------------------------------------

/// luaArgsToRedisArgv: the call's arguments as command arguments. Numbers
/// are formatted with `%.17g` (Lua's own tostring loses precision). On
/// error the error table is pushed and None returned. Pops the arguments.
unsafe fn lua_args_to_redis_argv(l: *mut lua_State) -> Option<Vec<Bytes>> {
    let argc = ffi::lua_gettop(l);
    if argc == 0 {
        lua_push_error(
            l,
            b"Please specify at least one argument for this redis lib call",
        );
        return None;
    }
    let mut argv = Vec::with_capacity(argc as usize);
    for j in 1..=argc {
        if ffi::lua_type(l, j) == ffi::LUA_TNUMBER {
            let mut text = Vec::with_capacity(24);
            reply::fmt_double_g17(ffi::lua_tonumber(l, j), &mut text);
            argv.push(Bytes::from(text));
        } else {
            match to_bytes(l, j) {
                Some(s) => argv.push(Bytes::copy_from_slice(s)),
                None => break,
            }
        }
    }
    ffi::lua_pop(l, argc);
    if argv.len() != argc as usize {
        lua_push_error(
            l,
            b"Lua redis lib command arguments must be strings or integers",
        );
        return None;
    }
    Some(argv)
}

/// luaRedisGenericCommand: run a command for redis.call / redis.pcall and
/// push its reply as a Lua value (or an error table). Returns whether the
/// caller must raise the value on top (redis.call and an error).
unsafe fn lua_redis_generic_command(l: *mut lua_State, raise_error: bool) -> bool {
    let Some(srv) = current_server() else {
        lua_push_error(
            l,
            b"redis.call/pcall can only be called inside a script invocation",
        );
        return true;
    };
    let Some(argv) = lua_args_to_redis_argv(l) else {
        return raise_error;
    };
    let Some(mut sc) = srv.script_run_ctx.as_mut().and_then(|ctx| ctx.c.take()) else {
        lua_push_error(
            l,
            b"redis.call/pcall can only be called inside a script invocation",
        );
        return true;
    };
    // Stepping in the debugger: show the command, then its reply.
    let debugging = crate::ldb::ldb_is_enabled();
    if debugging {
        crate::ldb::ldb_log_redis_command(&argv);
    }
    let raise = match script::script_call(srv, &mut sc, argv) {
        Err(msg) => {
            lua_push_error(l, msg.as_bytes());
            mark_ignore_stats(l);
            raise_error
        }
        Ok(reply) => {
            redis_protocol_to_lua_type(l, reply);
            if debugging {
                crate::ldb::ldb_log_redis_reply(reply);
            }
            raise_error && reply.first() == Some(&b'-')
        }
    };
    sc.reply.clear();
    if let Some(ctx) = srv.script_run_ctx.as_mut() {
        ctx.c = Some(sc);
    }
    raise
}

/// redis.call(command, arg, ...)
// redis: script_lua.c luaRedisCallCommand
unsafe extern "C-unwind" fn lua_redis_call_command(l: *mut lua_State) -> c_int {
    if guard(l, || lua_redis_generic_command(l, true)) {
        ffi::lua_error(l);
    }
    1
}

/// redis.pcall(command, arg, ...): errors come back as {err=...}.
// redis: script_lua.c luaRedisPCallCommand
unsafe extern "C-unwind" fn lua_redis_pcall_command(l: *mut lua_State) -> c_int {
    if guard(l, || lua_redis_generic_command(l, false)) {
        ffi::lua_error(l);
    }
    1
}

/// pcall(f, ...), replacing Lua's: an error table `{err=...}` (what
/// redis.call raises) comes back as its message, as scripts written for
/// Redis 6 expect.
// redis: script_lua.c luaRedisPcall
unsafe extern "C-unwind" fn lua_redis_pcall(l: *mut lua_State) -> c_int {
    let argc = ffi::lua_gettop(l);
    if argc == 0 {
        // Redis's version calls lua_pcall with -1 arguments here, which
        // fails: the script sees (false, message).
        ffi::lua_pushboolean(l, 0);
        ffi::lua_pushstring(l, c"attempt to call a nil value".as_ptr());
        return 2;
    }
    ffi::lua_pushboolean(l, 1); // result placeholder
    ffi::lua_insert(l, 1);
    if ffi::lua_pcall(l, argc - 1, ffi::LUA_MULTRET, 0) != 0 {
        ffi::lua_remove(l, 1);
        if ffi::lua_istable(l, -1) != 0 {
            ffi::lua_getfield(l, -1, c"err".as_ptr());
            if ffi::lua_isstring(l, -1) != 0 {
                ffi::lua_replace(l, -2);
            }
        }
        ffi::lua_pushboolean(l, 0);
        ffi::lua_insert(l, 1);
    }
    ffi::lua_gettop(l)
}

/// redis.sha1hex(string)
// redis: script_lua.c luaRedisSha1hexCommand
unsafe extern "C-unwind" fn lua_redis_sha1hex_command(l: *mut lua_State) -> c_int {
    if ffi::lua_gettop(l) != 1 {
        lua_push_error(l, b"wrong number of arguments");
        ffi::lua_error(l);
    }
    let digest = crate::eval::sha1hex(to_bytes(l, 1).unwrap_or(b""));
    push_bytes(l, digest.as_bytes());
    1
}

/// redis.error_reply(msg): {err=msg}, with ERR added when msg has no
/// "-CODE " of its own.
// redis: script_lua.c luaRedisErrorReplyCommand
unsafe extern "C-unwind" fn lua_redis_error_reply_command(l: *mut lua_State) -> c_int {
    if ffi::lua_gettop(l) != 1 || ffi::lua_type(l, -1) != ffi::LUA_TSTRING {
        lua_push_error(l, b"wrong number or type of arguments");
        return 1;
    }
    let err = to_bytes(l, -1).unwrap_or(b"");
    if err.first() == Some(&b'-') {
        lua_push_error(l, err);
    } else {
        let mut e = Vec::with_capacity(err.len() + 1);
        e.push(b'-');
        e.extend_from_slice(err);
        lua_push_error(l, &e);
    }
    1
}

/// redis.status_reply(msg): {ok=msg}.
// redis: script_lua.c luaRedisStatusReplyCommand
unsafe extern "C-unwind" fn lua_redis_status_reply_command(l: *mut lua_State) -> c_int {
    if ffi::lua_gettop(l) != 1 || ffi::lua_type(l, -1) != ffi::LUA_TSTRING {
        lua_push_error(l, b"wrong number or type of arguments");
        return 1;
    }
    ffi::lua_createtable(l, 0, 1);
    ffi::lua_pushvalue(l, -2);
    set_field(l, -2, c"ok");
    1
}

/// redis.set_repl(flags): where the following redis.call()s propagate
/// (script.rs scriptCall strips the other targets from each call).
// redis: script_lua.c luaRedisSetReplCommand
unsafe extern "C-unwind" fn lua_redis_set_repl_command(l: *mut lua_State) -> c_int {
    let err: Option<&[u8]> = match current_server().and_then(|s| s.script_run_ctx.as_mut()) {
        None => Some(b"redis.set_repl can only be called inside a script invocation"),
        Some(_) if ffi::lua_gettop(l) != 1 => Some(b"redis.set_repl() requires two arguments."),
        Some(ctx) => {
            let flags = ffi::lua_tonumber(l, -1) as i32;
            if flags & !(PROPAGATE_AOF | PROPAGATE_REPL) != 0 {
                Some(b"Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.")
            } else {
                ctx.repl_flags = flags;
                None
            }
        }
    };
    if let Some(e) = err {
        lua_push_error(l, e);
        ffi::lua_error(l);
    }
    0
}

/// redis.setresp(2|3): the protocol commands reply in to the script.
// redis: script_lua.c luaSetResp
unsafe extern "C-unwind" fn lua_set_resp(l: *mut lua_State) -> c_int {
    let err: Option<&[u8]> = match current_server().and_then(|s| s.script_run_ctx.as_mut()) {
        None => Some(b"redis.setresp can only be called inside a script invocation"),
        Some(_) if ffi::lua_gettop(l) != 1 => Some(b"redis.setresp() requires one argument."),
        Some(ctx) => {
            let resp = ffi::lua_tonumber(l, -1) as i32;
            match (resp, ctx.c.as_mut()) {
                (2, Some(sc)) => {
                    sc.resp = Resp::V2;
                    None
                }
                (3, Some(sc)) => {
                    sc.resp = Resp::V3;
                    None
                }
                _ => Some(b"RESP version must be 2 or 3."),
            }
        }
    };
    if let Some(e) = err {
        lua_push_error(l, e);
        ffi::lua_error(l);
    }
    0
}

/// redis.log(level, message, ...): the arguments joined by spaces, in the
/// server log at that level.
// redis: script_lua.c luaLogCommand
unsafe extern "C-unwind" fn lua_log_command(l: *mut lua_State) -> c_int {
    let argc = ffi::lua_gettop(l);
    let err: Option<&[u8]> = if argc < 2 {
        Some(b"redis.log() requires two arguments or more.")
    } else if ffi::lua_isnumber(l, 1) == 0 {
        Some(b"First argument must be a number (log level).")
    } else {
        let level = match ffi::lua_tonumber(l, 1) as i32 {
            0 => Some(LogLevel::Debug),
            1 => Some(LogLevel::Verbose),
            2 => Some(LogLevel::Notice),
            3 => Some(LogLevel::Warning),
            _ => None,
        };
        match level {
            None => Some(b"Invalid debug level."),
            Some(level) => {
                let mut msg: Vec<u8> = Vec::new();
                for j in 2..=argc {
                    if let Some(s) = to_bytes(l, j) {
                        if j != 2 {
                            msg.push(b' ');
                        }
                        msg.extend_from_slice(s);
                    }
                }
                server_log(level, &String::from_utf8_lossy(&msg));
                None
            }
        }
    };
    if let Some(e) = err {
        lua_push_error(l, e);
        ffi::lua_error(l);
    }
    0
}

/// redis.acl_check_cmd(command, ...): whether the script's caller's ACL
/// user may run it with these arguments (acl.rs).
// redis: script_lua.c luaRedisAclCheckCmdPermissionsCommand
unsafe extern "C-unwind" fn lua_redis_acl_check_cmd(l: *mut lua_State) -> c_int {
    let raise = guard(l, || {
        let Some(srv) = current_server() else {
            lua_push_error(
                l,
                b"redis.acl_check_cmd can only be called inside a script invocation",
            );
            return true;
        };
        let Some(argv) = lua_args_to_redis_argv(l) else {
            return true;
        };
        match srv.commands.lookup_argv(&argv) {
            Ok(Some(id)) => {
                let user = srv
                    .script_run_ctx
                    .as_ref()
                    .and_then(|ctx| ctx.c.as_ref())
                    .map(|c| c.user.clone())
                    .unwrap_or_else(|| bytes::Bytes::from_static(crate::acl::DEFAULT_USER));
                let ok = srv
                    .acl
                    .check_all_user_command_perm(&srv.commands, &user, id, &argv)
                    .is_ok();
                ffi::lua_pushboolean(l, c_int::from(ok));
                false
            }
            _ => {
                lua_push_error(l, b"Invalid command passed to redis.acl_check_cmd()");
                true
            }
        }
    });
    if raise {
        ffi::lua_error(l);
    }
    1
}

/// redis.replicate_commands(): deprecated, always true.
unsafe extern "C-unwind" fn lua_redis_replicate_commands(l: *mut lua_State) -> c_int {
    ffi::lua_pushboolean(l, 1);
    1
}

// ---- math.random / math.randomseed (Redis's rand.c PRNG) ----

/// RAND48_MULT / RAND48_ADD: the drand48 family's linear congruential
/// generator, which Redis reimplements (rand.c) so that every platform
/// gives scripts the same sequence.
const RAND48_MULT: u64 = 0x5_DEEC_E66D;
const RAND48_ADD: u64 = 0xB;
/// REDIS_LRAND48_MAX: INT32_MAX.
const REDIS_LRAND48_MAX: i64 = i32::MAX as i64;

/// redisLrand48: the next 31-bit value.
pub fn redis_lrand48() -> i64 {
    RAND48.with(|x| {
        let next = (x.get().wrapping_mul(RAND48_MULT).wrapping_add(RAND48_ADD)) & ((1 << 48) - 1);
        x.set(next);
        (next >> 17) as i64
    })
}

/// redisSrand48.
pub fn redis_srand48(seed: i32) {
    RAND48.with(|x| x.set((u64::from(seed as u32) << 16) | 0x330E));
}

/// math.random([m [, n]]), Lua 5.1's with Redis's PRNG.
// redis: script_lua.c redis_math_random
unsafe extern "C-unwind" fn redis_math_random(l: *mut lua_State) -> c_int {
    let r = (redis_lrand48() % REDIS_LRAND48_MAX) as f64 / REDIS_LRAND48_MAX as f64;
    match ffi::lua_gettop(l) {
        0 => ffi::lua_pushnumber(l, r),
        1 => {
            let u = ffi::luaL_checkinteger(l, 1) as i32 as f64;
            if u < 1.0 {
                ffi::luaL_argerror(l, 1, c"interval is empty".as_ptr());
            }
            ffi::lua_pushnumber(l, (r * u).floor() + 1.0);
        }
        2 => {
            let lo = ffi::luaL_checkinteger(l, 1) as i32 as f64;
            let u = ffi::luaL_checkinteger(l, 2) as i32 as f64;
            if lo > u {
                ffi::luaL_argerror(l, 2, c"interval is empty".as_ptr());
            }
            ffi::lua_pushnumber(l, (r * (u - lo + 1.0)).floor() + lo);
        }
        _ => {
            ffi::luaL_error(l, c"wrong number of arguments".as_ptr());
        }
    }
    1
}

/// math.randomseed(n)
// redis: script_lua.c redis_math_randomseed
unsafe extern "C-unwind" fn redis_math_randomseed(l: *mut lua_State) -> c_int {
    redis_srand48(ffi::luaL_checkinteger(l, 1) as i32);
    0
}

/// A C function as an mlua value, to put in a table.
fn cfn(lua: &Lua, f: ffi::lua_CFunction) -> mlua::Result<Function> {
    // SAFETY: every function registered here follows the Lua C API rules
    // (see the file comment on errors).
    unsafe { lua.create_c_function(f) }
}

/// A Lua state whose heap is the C library's `malloc`, not jemalloc
/// (Redis's `lua_open()` in eval.c and function_lua.c).
///
/// Redis links jemalloc with the `je_` prefix, so its own `zmalloc` goes
/// to jemalloc while the Lua it bundles calls plain `realloc`/`free`: the
/// Lua heap is outside `used_memory` (and outside jemalloc's allocated,
/// active and resident) and appears only in RSS, with its size reported
/// apart as `used_memory_lua` / `used_memory_vm_*` (lua_gc LUA_GCCOUNT).
/// maxmemory therefore never refuses a write or evicts a key because a
/// script left garbage behind. Here the global allocator is jemalloc
/// (prefixed too), so the same split comes from giving Lua an allocator
/// function over `libc::realloc`/`libc::free`, as Lua's own `l_alloc`.
///
/// mlua then sees a state it did not create ("module mode"): it wraps it
/// but does not close it, so `Drop` drops our handle first and then calls
/// `lua_close`, which also frees mlua's bookkeeping kept in the registry.
/// It derefs to `mlua::Lua`, so the rest of the scripting code is unchanged.
pub struct LuaVm {
    lua: std::mem::ManuallyDrop<Lua>,
    state: *mut lua_State,
}

impl std::ops::Deref for LuaVm {
    type Target = Lua;
    fn deref(&self) -> &Lua {
        &self.lua
    }
}

impl Drop for LuaVm {
    fn drop(&mut self) {
        // SAFETY: the handle goes first (mlua keeps its own reference to
        // the state in the registry, released by lua_close); then the state
        // is closed exactly once, with the allocator it was created with.
        unsafe {
            std::mem::ManuallyDrop::drop(&mut self.lua);
            ffi::lua_close(self.state);
        }
    }
}

/// l_alloc (lauxlib.c): Lua's allocator function over the C library's
/// heap. `nsize == 0` frees; otherwise realloc (a null `ptr` allocates).
/// Returning null on failure lets Lua raise its "not enough memory" error.
unsafe extern "C" fn lua_libc_alloc(
    _ud: *mut std::ffi::c_void,
    ptr: *mut std::ffi::c_void,
    _osize: usize,
    nsize: usize,
) -> *mut std::ffi::c_void {
    if nsize == 0 {
        // SAFETY: `ptr` is null or came from this function's realloc.
        unsafe { libc::free(ptr) };
        std::ptr::null_mut()
    } else {
        // SAFETY: as above; realloc(NULL, n) allocates.
        unsafe { libc::realloc(ptr, nsize) }
    }
}

/// lua_open + luaLoadLibraries: a state on the C heap (see `LuaVm`) with
/// the base library (and its `coroutine`, as Lua 5.1's luaopen_base) and
/// `libs` opened.
///
/// # Safety
/// `libs` may hold unsafe libraries (debug): the caller hides them from
/// scripts, as Redis's sandbox does.
pub unsafe fn lua_open(libs: mlua::StdLib) -> mlua::Result<LuaVm> {
    // SAFETY: a fresh state; lua_newstate returns null only when the
    // allocator fails, which becomes an error here.
    unsafe {
        let state = ffi::lua_newstate(lua_libc_alloc, std::ptr::null_mut());
        if state.is_null() {
            return Err(mlua::Error::MemoryError("cannot create a Lua state".into()));
        }
        ffi::luaL_requiref(state, c"_G".as_ptr(), ffi::luaopen_base, 1);
        ffi::lua_pop(state, 1);
        let lua = Lua::get_or_init_from_ptr(state).clone();
        let vm = LuaVm {
            lua: std::mem::ManuallyDrop::new(lua),
            state,
        };
        vm.load_std_libs(libs)?;
        Ok(vm)
    }
}

/// The VM's memory as Redis reports it: `lua_gc(L, LUA_GCCOUNT, 0) * 1024`,
/// whole kilobytes of what Lua itself counts.
pub fn lua_gc_count_bytes(lua: &Lua) -> usize {
    // SAFETY: LUA_GCCOUNT only reads a counter; it cannot raise.
    let kb = unsafe {
        lua.exec_raw::<i64>((), |l| {
            let kb = ffi::lua_gc(l, ffi::LUA_GCCOUNT, 0);
            ffi::lua_pushinteger(l, kb as ffi::lua_Integer);
        })
    };
    kb.map_or(0, |kb| kb.max(0) as usize * 1024)
}

/// lua-enable-deprecated-api (immutable): newproxy, setfenv and getfenv
/// stay in the Lua globals. Set once from the configuration at start-up.
pub static LUA_ENABLE_DEPRECATED_API: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// luaRegisterRedisAPI: the `redis` table (call, pcall, log and LOG_*,
/// setresp, sha1hex, error_reply, status_reply, set_repl and REPL_*,
/// acl_check_cmd, REDIS_VERSION[_NUM]), Redis's math.random and
/// math.randomseed, the `pcall` replacement, and the bundled libraries
/// (cjson, cmsgpack, struct, bit). Call before `lua_set_globals_protection`.
pub fn lua_register_redis_api(lua: &Lua) -> mlua::Result<()> {
    let g = lua.globals();
    // luaLoadLibraries: what Redis does not load is removed (deny list and
    // what 7.0.15 leaves out of the sandbox).
    for name in [
        "print", "dofile", "loadfile", "module", "require", "package", "io", "os",
    ] {
        g.raw_set(name, mlua::Nil)?;
    }
    // lua_builtins_deprecated: kept only with lua-enable-deprecated-api.
    if !LUA_ENABLE_DEPRECATED_API.load(std::sync::atomic::Ordering::Relaxed) {
        for name in ["newproxy", "setfenv", "getfenv"] {
            g.raw_set(name, mlua::Nil)?;
        }
    }
    // unpack, loadstring and load as Redis's patched Lua has them (no
    // integer overflow, no bytecode), then cjson, cmsgpack, struct and bit
    // (server/src/lualib/).
    crate::lualib::lbase::patch_base_lib(lua)?;
    crate::lualib::open_libs(lua)?;

    let redis = lua.create_table()?;
    redis.raw_set("call", cfn(lua, lua_redis_call_command)?)?;
    redis.raw_set("pcall", cfn(lua, lua_redis_pcall_command)?)?;
    redis.raw_set("log", cfn(lua, lua_log_command)?)?;
    redis.raw_set("LOG_DEBUG", LogLevel::Debug as i32)?;
    redis.raw_set("LOG_VERBOSE", LogLevel::Verbose as i32)?;
    redis.raw_set("LOG_NOTICE", LogLevel::Notice as i32)?;
    redis.raw_set("LOG_WARNING", LogLevel::Warning as i32)?;
    redis.raw_set("REDIS_VERSION_NUM", redis_version_num())?;
    redis.raw_set("REDIS_VERSION", crate::server::REDIS_VERSION)?;
    redis.raw_set("setresp", cfn(lua, lua_set_resp)?)?;
    redis.raw_set("sha1hex", cfn(lua, lua_redis_sha1hex_command)?)?;
    redis.raw_set("error_reply", cfn(lua, lua_redis_error_reply_command)?)?;
    redis.raw_set("status_reply", cfn(lua, lua_redis_status_reply_command)?)?;
    redis.raw_set("set_repl", cfn(lua, lua_redis_set_repl_command)?)?;
    redis.raw_set("REPL_NONE", 0)?;
    redis.raw_set("REPL_AOF", PROPAGATE_AOF)?;
    redis.raw_set("REPL_SLAVE", PROPAGATE_REPL)?;
    redis.raw_set("REPL_REPLICA", PROPAGATE_REPL)?;
    redis.raw_set("REPL_ALL", PROPAGATE_AOF | PROPAGATE_REPL)?;
    redis.raw_set("acl_check_cmd", cfn(lua, lua_redis_acl_check_cmd)?)?;
    g.raw_set("redis", redis)?;

    let math: mlua::Table = g.raw_get("math")?;
    math.raw_set("random", cfn(lua, redis_math_random)?)?;
    math.raw_set("randomseed", cfn(lua, redis_math_randomseed)?)?;
    g.raw_set("pcall", cfn(lua, lua_redis_pcall)?)?;
    Ok(())
}

/// The EVAL-only part of the API (eval.c scriptingInit): redis.breakpoint
/// and redis.debug (the debugger's, ldb.rs) and redis.replicate_commands.
pub fn lua_register_eval_only_api(lua: &Lua) -> mlua::Result<()> {
    let redis: mlua::Table = lua.globals().raw_get("redis")?;
    redis.raw_set(
        "breakpoint",
        cfn(lua, crate::ldb::lua_redis_breakpoint_command)?,
    )?;
    redis.raw_set("debug", cfn(lua, crate::ldb::lua_redis_debug_command)?)?;
    redis.raw_set(
        "replicate_commands",
        cfn(lua, lua_redis_replicate_commands)?,
    )?;
    Ok(())
}

/// REDIS_VERSION_NUM: 0x00MMmmpp.
fn redis_version_num() -> i64 {
    let mut parts = crate::server::REDIS_VERSION
        .split('.')
        .map(|p| p.parse::<i64>().unwrap_or(0));
    let major = parts.next().unwrap_or(0);
    let minor = parts.next().unwrap_or(0);
    let patch = parts.next().unwrap_or(0);
    (major << 16) | (minor << 8) | patch
}

/// The Lua half of the sandbox and the error handler, run once per state
/// with the real globals table as argument. The chunk is named
/// "=redis-lite" so the error handler can skip its frames.
const GLOBALS_PROTECTION_LUA: &str = r#"
local G = ...
local dbg = G.debug
local rawset, setmetatable, type, tostring, error, next =
      G.rawset, G.setmetatable, G.type, G.tostring, G.error, G.next

-- __redis__err__handler: turn any error into {err=, source=, line=},
-- pointing at the script's line (not at a C function or at our helpers).
local function err_handler(err)
  local level = 2
  local i = dbg.getinfo(level, 'nSl')
  while i and (i.what == 'C' or i.source == '=redis-lite') do
    level = level + 1
    i = dbg.getinfo(level, 'nSl')
  end
  if type(err) ~= 'table' then
    err = {err = 'ERR ' .. tostring(err)}
  end
  if i then
    rawset(err, 'source', i.source)
    rawset(err, 'line', i.currentline)
  end
  return err
end

local function readonly_error()
  error('Attempt to modify a readonly table', 2)
end

local proxies = {}      -- real table -> its read-only proxy
local is_proxy = {}     -- proxy -> true
local locked_mt = {}    -- what getmetatable() shows for a proxy

local function protect(t)
  local p = proxies[t]
  if p then return p end
  p = {}
  proxies[t] = p
  is_proxy[p] = true
  for k, v in next, t do
    if type(v) == 'table' then rawset(t, k, protect(v)) end
  end
  setmetatable(p, {__index = t, __newindex = readonly_error, __metatable = locked_mt,
                   __redis_lite_readonly = true})
  return p
end

-- rawset / setmetatable refuse read-only tables, as in Redis.
rawset(G, 'rawset', function(t, k, v)
  if is_proxy[t] then error('Attempt to modify a readonly table', 0) end
  return rawset(t, k, v)
end)
rawset(G, 'setmetatable', function(t, mt)
  if is_proxy[t] then error('Attempt to modify a readonly table', 0) end
  return setmetatable(t, mt)
end)
rawset(G, 'debug', nil)

local proxy_G = protect(G)
rawset(G, '_G', proxy_G)
-- luaSetTableProtectionForBasicTypes: of the basic types only strings have
-- a metatable in Lua 5.1. Its __metatable field makes getmetatable('')
-- return a read-only view; string methods still use the real one directly.
local string_mt = dbg.getmetatable('')
if string_mt then
  local view = {}
  is_proxy[view] = true
  setmetatable(view, {__index = function(_, k)
                        local v = string_mt[k]
                        if type(v) == 'table' then return protect(v) end
                        return v
                      end,
                      __newindex = readonly_error, __metatable = locked_mt})
  rawset(string_mt, '__metatable', view)
end
setmetatable(locked_mt, {__newindex = readonly_error, __metatable = locked_mt})
is_proxy[locked_mt] = true
-- Reading an unknown global is an error (luaSetErrorMetatable).
setmetatable(G, {__index = function(_, k)
  error("Script attempted to access nonexistent global variable '" .. tostring(k) .. "'", 2)
end})
return proxy_G, err_handler
"#;

/// If argument 1 is a read-only proxy (its metatable carries the
/// `__redis_lite_readonly` mark), replace it by the real table.
unsafe fn unproxy_first_arg(l: *mut lua_State) {
    if ffi::lua_type(l, 1) != ffi::LUA_TTABLE || ffi::lua_getmetatable(l, 1) == 0 {
        return;
    }
    ffi::lua_pushstring(l, c"__redis_lite_readonly".as_ptr());
    ffi::lua_rawget(l, -2);
    let is_proxy = ffi::lua_toboolean(l, -1) != 0;
    ffi::lua_pop(l, 1);
    if is_proxy {
        ffi::lua_pushstring(l, c"__index".as_ptr());
        ffi::lua_rawget(l, -2);
        ffi::lua_replace(l, 1);
    }
    ffi::lua_pop(l, 1);
}

/// pairs(t) (Lua 5.1's luaB_pairs) seeing through read-only proxies.
unsafe extern "C-unwind" fn lua_readonly_aware_pairs(l: *mut lua_State) -> c_int {
    unproxy_first_arg(l);
    ffi::luaL_checktype(l, 1, ffi::LUA_TTABLE);
    ffi::lua_pushvalue(l, ffi::lua_upvalueindex(1)); // next
    ffi::lua_pushvalue(l, 1);
    ffi::lua_pushnil(l);
    3
}

/// next(t [, k]) (luaB_next) seeing through read-only proxies.
unsafe extern "C-unwind" fn lua_readonly_aware_next(l: *mut lua_State) -> c_int {
    unproxy_first_arg(l);
    ffi::luaL_checktype(l, 1, ffi::LUA_TTABLE);
    ffi::lua_settop(l, 2);
    if ffi::lua_next(l, 1) != 0 {
        2
    } else {
        ffi::lua_pushnil(l);
        1
    }
}

/// ipairs(t) seeing through read-only proxies (then Lua's own ipairs).
unsafe extern "C-unwind" fn lua_readonly_aware_ipairs(l: *mut lua_State) -> c_int {
    unproxy_first_arg(l);
    ffi::luaL_checktype(l, 1, ffi::LUA_TTABLE);
    ffi::lua_pushvalue(l, ffi::lua_upvalueindex(1));
    ffi::lua_pushvalue(l, 1);
    ffi::lua_call(l, 1, 3);
    3
}

/// luaSetErrorMetatable + luaSetTableProtectionRecursively, and the
/// __redis__err__handler: make the globals and every table reachable from
/// them read-only, make unknown globals an error, and keep the error
/// handler and the real globals in the registry (see the file comment).
/// Call last, after everything was registered.
pub fn lua_set_globals_protection(lua: &Lua) -> mlua::Result<()> {
    // pairs, next and ipairs that iterate a read-only proxy's real table.
    // SAFETY: balanced stack work inside exec_raw's protected call.
    unsafe {
        lua.exec_raw::<()>((), |l| {
            ffi::lua_getglobal(l, c"next".as_ptr());
            ffi::lua_pushcclosure(l, lua_readonly_aware_pairs, 1);
            ffi::lua_setglobal(l, c"pairs".as_ptr());
            ffi::lua_pushcfunction(l, lua_readonly_aware_next);
            ffi::lua_setglobal(l, c"next".as_ptr());
            ffi::lua_getglobal(l, c"ipairs".as_ptr());
            ffi::lua_pushcclosure(l, lua_readonly_aware_ipairs, 1);
            ffi::lua_setglobal(l, c"ipairs".as_ptr());
        })?;
    }
    let real_g = lua.globals();
    let (proxy_g, errh): (mlua::Table, Function) = lua
        .load(GLOBALS_PROTECTION_LUA)
        .set_name("=redis-lite")
        .call(real_g.clone())?;
    lua.set_named_registry_value(
        REGISTRY_ERROR_HANDLER_NAME.to_str().unwrap_or_default(),
        errh,
    )?;
    lua.set_named_registry_value(
        REGISTRY_REAL_GLOBALS_NAME.to_str().unwrap_or_default(),
        real_g,
    )?;
    lua.set_globals(proxy_g)?;
    Ok(())
}

// ---------------------------------------------------------------------------
// Running a script
// ---------------------------------------------------------------------------

/// luaMaskCountHook: every LUA_HOOK_COUNT instructions, let the server
/// check the time and serve other clients (script_interrupt); stop the
/// script when SCRIPT KILL / FUNCTION KILL asked for it.
// redis: script_lua.c luaMaskCountHook
unsafe extern "C-unwind" fn lua_mask_count_hook(l: *mut lua_State, _ar: *mut ffi::lua_Debug) {
    let kill = guard(l, || match current_server() {
        Some(srv) => script::script_interrupt(srv) == ScriptInterrupt::Kill,
        None => false,
    });
    if kill {
        server_log(
            LogLevel::Warning,
            "Lua script killed by user with SCRIPT KILL.",
        );
        // From now on the hook runs on every line, so a pcall in the script
        // cannot catch the error and carry on.
        ffi::lua_sethook(l, Some(lua_mask_count_hook), ffi::LUA_MASKLINE, 0);
        lua_push_error(l, b"Script killed by user with SCRIPT KILL...");
        ffi::lua_error(l);
    }
}

/// A Lua array of the strings (luaCreateArray).
unsafe fn lua_create_array(l: *mut lua_State, elems: &[Bytes]) {
    ffi::lua_createtable(l, elems.len().min(1 << 16) as c_int, 0);
    for (j, e) in elems.iter().enumerate() {
        push_bytes(l, e);
        ffi::lua_rawseti(l, -2, j as i64 + 1);
    }
}

/// The core of luaCallFunction. The stack holds the error handler and the
/// function on top of it. EVAL (`keys_args_as_params` false) sets the KEYS
/// and ARGV globals and calls with no arguments; functions get (keys, args).
/// The reply (or error) is written into the run context for
/// `script_reset_run` to hand to the caller.
unsafe fn lua_call_function_raw(
    srv: &mut Server,
    l: *mut lua_State,
    keys: &[Bytes],
    args: &[Bytes],
    keys_args_as_params: bool,
) {
    let Some(ctx) = srv.script_run_ctx.as_ref() else {
        return;
    };
    let funcname = ctx.funcname.clone();
    let caller_resp = ctx.original_client_resp;

    // An EVAL in a debugging session gets the debugger's line hook instead
    // of the busy-script one (ldb.rs).
    let debug_enabled = !keys_args_as_params && crate::ldb::ldb_is_active();
    let delhook = srv.config.busy_reply_threshold > 0 || debug_enabled;
    if debug_enabled {
        ffi::lua_sethook(
            l,
            Some(crate::ldb::lua_ldb_line_hook),
            ffi::LUA_MASKLINE | ffi::LUA_MASKCOUNT,
            crate::ldb::LDB_HOOK_COUNT,
        );
    } else if delhook {
        ffi::lua_sethook(
            l,
            Some(lua_mask_count_hook),
            ffi::LUA_MASKCOUNT,
            LUA_HOOK_COUNT,
        );
    }
    // EVAL: the KEYS and ARGV globals; functions: the two parameters.
    for (name, values) in [(c"KEYS", keys), (c"ARGV", args)] {
        lua_create_array(l, values);
        if !keys_args_as_params {
            ffi::lua_getfield(
                l,
                ffi::LUA_REGISTRYINDEX,
                REGISTRY_REAL_GLOBALS_NAME.as_ptr(),
            );
            ffi::lua_insert(l, -2);
            set_field(l, -2, name);
            ffi::lua_pop(l, 1);
        }
    }

    // Lua may call back into the server from here on (see the file comment).
    let srv_ptr: *mut Server = srv;
    let prev = SERVER.with(|s| s.replace(srv_ptr));
    let err = if keys_args_as_params {
        ffi::lua_pcall(l, 2, 1, -4)
    } else {
        ffi::lua_pcall(l, 0, 1, -2)
    };
    SERVER.with(|s| s.set(prev));
    // `srv` is ours again.

    let gc_due = GC_COUNT.with(|g| {
        let n = g.get() + 1;
        g.set(if n == LUA_GC_CYCLE_PERIOD { 0 } else { n });
        n == LUA_GC_CYCLE_PERIOD
    });
    if gc_due {
        ffi::lua_gc(l, ffi::LUA_GCSTEP, LUA_GC_CYCLE_PERIOD as c_int);
    }

    let Some(ctx) = srv.script_run_ctx.as_mut() else {
        ffi::lua_pop(l, 1);
        return;
    };
    let script_resp = ctx.c.as_ref().map_or(Resp::V2, |sc| sc.resp);
    let mut t = ReplyTarget {
        out: &mut ctx.reply,
        errors: &mut ctx.reply_errors,
        failed_without_stats: &mut ctx.reply_failed_without_stats,
        resp: caller_resp,
        script_resp,
    };
    if err != 0 {
        add_reply_lua_error(l, &mut t, &funcname);
        ffi::lua_pop(l, 1);
    } else {
        lua_reply_to_redis_reply(l, &mut t);
    }
    if delhook {
        ffi::lua_sethook(l, None, 0, 0);
    }
}

/// The error reply of a failed run: `-<err> script: <name>, on
/// <source>:<line>.` from the handler's table (luaExtractErrorInformation),
/// or "Error running script" when the handler itself failed.
unsafe fn add_reply_lua_error(l: *mut lua_State, t: &mut ReplyTarget, funcname: &[u8]) {
    if ffi::lua_istable(l, -1) == 0 {
        let msg = to_bytes(l, -1).unwrap_or(b"execution failure");
        let msg = &msg[..msg.len().min(100)];
        let text = format!(
            "ERR Error running script {}, {}",
            String::from_utf8_lossy(funcname),
            String::from_utf8_lossy(msg)
        );
        t.errors.push(Bytes::from_static(b"ERR"));
        reply::error(t.out, text.as_bytes());
        return;
    }
    let field = |name: &CStr| -> Option<Vec<u8>> {
        ffi::lua_getfield(l, -1, name.as_ptr());
        let v = if ffi::lua_isstring(l, -1) != 0 {
            to_bytes(l, -1).map(|s| s.to_vec())
        } else {
            None
        };
        ffi::lua_pop(l, 1);
        v
    };
    let msg = field(c"err").unwrap_or_else(|| b"ERR unknown error".to_vec());
    let source = field(c"source");
    let line = field(c"line");
    ffi::lua_getfield(l, -1, c"ignore_error_stats_update".as_ptr());
    let ignore = ffi::lua_toboolean(l, -1) != 0;
    ffi::lua_pop(l, 1);
    let mut text = msg;
    if let (Some(source), Some(line)) = (source, line) {
        text.extend_from_slice(b" script: ");
        text.extend_from_slice(funcname);
        text.extend_from_slice(b", on ");
        text.extend_from_slice(&source);
        text.push(b':');
        text.extend_from_slice(&line);
        text.push(b'.');
    }
    add_error(t, &text, ignore);
}

/// luaCallFunction: run `func` as the script of the current run (prepared
/// by `script::script_prepare_for_run`). EVAL passes `keys_args_as_params`
/// false (KEYS and ARGV become globals); functions pass true and receive
/// (keys, args). The reply is collected for `script_reset_run`.
pub fn lua_call_function(
    srv: &mut Server,
    _run: &ScriptRun,
    lua: &Lua,
    func: &Function,
    keys: &[Bytes],
    args: &[Bytes],
    keys_args_as_params: bool,
) {
    // SAFETY: the closure keeps the stack balanced (exec_raw restores it
    // anyway) and only raw-calls Lua inside lua_pcall.
    let res = unsafe {
        lua.exec_raw::<()>(func.clone(), |l| {
            // Stack: func. Put the error handler under it.
            ffi::lua_getfield(
                l,
                ffi::LUA_REGISTRYINDEX,
                REGISTRY_ERROR_HANDLER_NAME.as_ptr(),
            );
            ffi::lua_insert(l, -2);
            lua_call_function_raw(srv, l, keys, args, keys_args_as_params);
            ffi::lua_settop(l, 0);
        })
    };
    if let Err(e) = res {
        report_engine_error(srv, &e);
    }
}

/// EVAL's variant: the function is the registry entry `f_<sha>`.
pub fn lua_call_registry_function(
    srv: &mut Server,
    lua: &Lua,
    funcname: &CStr,
    keys: &[Bytes],
    args: &[Bytes],
) {
    // SAFETY: as lua_call_function.
    let res = unsafe {
        lua.exec_raw::<()>((), |l| {
            ffi::lua_getfield(
                l,
                ffi::LUA_REGISTRYINDEX,
                REGISTRY_ERROR_HANDLER_NAME.as_ptr(),
            );
            ffi::lua_getfield(l, ffi::LUA_REGISTRYINDEX, funcname.as_ptr());
            lua_call_function_raw(srv, l, keys, args, false);
            ffi::lua_settop(l, 0);
        })
    };
    if let Err(e) = res {
        report_engine_error(srv, &e);
    }
}

/// Lua failed outside the script's own pcall (out of memory): an error
/// reply for the caller.
fn report_engine_error(srv: &mut Server, e: &mlua::Error) {
    if let Some(ctx) = srv.script_run_ctx.as_mut() {
        ctx.reply_errors.push(Bytes::from_static(b"ERR"));
        reply::error(&mut ctx.reply, format!("ERR {e}").as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lua_number_to_long_long_matches_x86() {
        assert_eq!(lua_number_to_long_long(3.99), 3);
        assert_eq!(lua_number_to_long_long(-3.99), -3);
        assert_eq!(lua_number_to_long_long(1e20), i64::MIN);
        assert_eq!(lua_number_to_long_long(f64::NAN), i64::MIN);
    }

    #[test]
    fn rand48_first_value_after_seed_zero() {
        redis_srand48(0);
        let r = (redis_lrand48() % REDIS_LRAND48_MAX) as f64 / REDIS_LRAND48_MAX as f64;
        assert_eq!(format!("{r:.15}"), "0.170828036112165");
    }
}
