//! EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT (Redis's eval.c).
//!
//! One Lua state serves every EVAL (`LuaCtx`, Redis's `lctx`), created the
//! first time a script is needed. A script body is compiled once, stored
//! in the Lua registry as `f_<sha1 of the body>` and remembered in the
//! script cache (sha -> flags and body); EVAL of the same body, EVALSHA and
//! SCRIPT LOAD all find it there, so the common path of a cached script is:
//! hash the body, one map lookup, one registry lookup, run.
//!
//! Running goes through the scripting core (script.rs): prepare the run
//! context (flags checks), `script_lua::lua_call_registry_function`, reset.
//!
//! A body may start with a shebang, `#!lua flags=no-writes,allow-oom`:
//! then it declares its flags and the 7.0 rules apply (e.g. EVAL_RO refuses
//! a script without `no-writes`); without one it runs in the compatibility
//! mode of Redis 6 scripts.
//!
//! A client that ran SCRIPT DEBUG YES|SYNC has its EVALs run in a
//! debugging session instead: see ldb.rs.

use std::collections::HashMap;
use std::ffi::{c_char, CString};

use bytes::Bytes;
use mlua::ffi;
use mlua::StdLib;

use crate::networking::Client;
use crate::script::{self, SCRIPTS_FLAGS_DEF, SCRIPT_EVAL_MODE, SCRIPT_FLAG_EVAL_COMPAT_MODE};
use crate::script_lua;
use crate::server::Server;
use crate::shared;

/// A cached script (luaScript): its flags (from the shebang) and body.
pub struct LuaScript {
    pub flags: u64,
    pub body: Bytes,
}

/// lctx: the Lua state for EVAL and the script cache.
pub struct LuaCtx {
    pub lua: script_lua::LuaVm,
    /// Lower-case sha1 hex -> script.
    pub scripts: HashMap<String, LuaScript>,
    /// lua_scripts_mem: what the cache holds, as Redis counts it (the sha
    /// sds and the body string of each script), for INFO memory.
    pub scripts_mem: usize,
}

impl LuaCtx {
    /// used_memory_lua: the Lua VM's heap.
    pub fn used_memory(&self) -> usize {
        script_lua::lua_gc_count_bytes(&self.lua)
    }

    /// evalScriptsMemory (used_memory_scripts_eval): the cached bodies and
    /// shas, plus Redis's dict of them (a 24-byte entry per script, an
    /// 8-byte slot per bucket, at least 4 buckets, doubling) and a 16-byte
    /// luaScript per script.
    pub fn scripts_memory(&self) -> usize {
        let n = self.scripts.len();
        let slots = if n == 0 {
            0
        } else {
            n.next_power_of_two().max(4)
        };
        self.scripts_mem + n * 24 + slots * 8 + n * 16
    }
}

/// The INFO memory cost of one cached script: sdsZmallocSize of its 40-char
/// sha plus getStringObjectSdsUsedMemory of its body (an embstr up to 44
/// bytes, a raw sds beyond).
fn cached_script_mem(body: &[u8]) -> usize {
    use crate::object::{jemalloc_size_class, sds_zmalloc_size};
    let body_mem = if body.len() <= 44 {
        jemalloc_size_class(16 + 3 + body.len() + 1) - 16
    } else {
        sds_zmalloc_size(body.len(), body.len())
    };
    sds_zmalloc_size(40, 40) + body_mem
}

/// sha1hex: the lower-case hex SHA1 of `data` (script names, redis.sha1hex).
pub fn sha1hex(data: &[u8]) -> String {
    use sha1::{Digest, Sha1};
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digest = Sha1::digest(data);
    let mut out = String::with_capacity(40);
    for b in digest.iter() {
        out.push(char::from(HEX[usize::from(b >> 4)]));
        out.push(char::from(HEX[usize::from(b & 0xf)]));
    }
    out
}

/// scriptingInit: a Lua state with the libraries Redis loads (base, table,
/// string, math, debug for the error handler, then cjson, struct,
/// cmsgpack, bit), the `redis` API, and the globals locked.
pub fn scripting_init() -> mlua::Result<LuaCtx> {
    // SAFETY: the debug library is needed to build the error handler; the
    // protection code removes it from the globals before any script runs.
    // Its heap is outside used_memory, as Redis's (script_lua::LuaVm).
    let lua = unsafe {
        script_lua::lua_open(StdLib::TABLE | StdLib::STRING | StdLib::MATH | StdLib::DEBUG)?
    };
    script_lua::lua_register_redis_api(&lua)?;
    script_lua::lua_register_eval_only_api(&lua)?;
    script_lua::lua_set_globals_protection(&lua)?;
    Ok(LuaCtx {
        lua,
        scripts: HashMap::new(),
        scripts_mem: 0,
    })
}

/// The EVAL Lua state, created on first use. None (after logging) only if
/// Lua itself could not be set up.
fn lctx(srv: &mut Server) -> Option<&mut LuaCtx> {
    if srv.lctx.is_none() {
        match scripting_init() {
            Ok(ctx) => srv.lctx = Some(Box::new(ctx)),
            Err(e) => {
                crate::log::server_log(
                    crate::log::LogLevel::Warning,
                    &format!("Failed initializing the Lua scripting engine: {e}"),
                );
                return None;
            }
        }
    }
    srv.lctx.as_deref_mut()
}

/// evalGetCommandFlags: EVAL/EVALSHA carry CMD_MAY_REPLICATE (a plain
/// script may write), but a script that declares its flags in a shebang
/// says whether it writes: `#!lua flags=no-writes` runs under CLIENT PAUSE
/// WRITE. Read off the cached script (EVALSHA) or the body (EVAL).
pub fn eval_get_command_flags(srv: &Server, argv: &[Bytes], evalsha: bool, cmd_flags: u64) -> u64 {
    let Some(arg) = argv.get(1) else {
        return cmd_flags;
    };
    let script_flags = if evalsha {
        if arg.len() != 40 {
            return cmd_flags;
        }
        let sha = String::from_utf8_lossy(arg).to_ascii_lowercase();
        match srv.lctx.as_ref().and_then(|l| l.scripts.get(&sha)) {
            Some(script) => script.flags,
            None => return cmd_flags,
        }
    } else {
        match eval_extract_shebang_flags(arg) {
            Ok((flags, _)) => flags,
            Err(_) => return cmd_flags,
        }
    };
    if script_flags & SCRIPT_FLAG_EVAL_COMPAT_MODE != 0 {
        return cmd_flags;
    }
    script::script_flags_to_cmd_flags(cmd_flags, script_flags)
}

/// evalExtractShebangFlags: the flags of a `#!lua ...` first line and its
/// length (0 without a shebang, which means SCRIPT_FLAG_EVAL_COMPAT_MODE).
/// Err is the error text (without "ERR ").
pub fn eval_extract_shebang_flags(body: &[u8]) -> Result<(u64, usize), String> {
    if !body.starts_with(b"#!") {
        return Ok((SCRIPT_FLAG_EVAL_COMPAT_MODE, 0));
    }
    let Some(shebang_len) = body.iter().position(|&b| b == b'\n') else {
        return Err("Invalid script shebang".into());
    };
    let shebang = Bytes::copy_from_slice(&body[..shebang_len]);
    let parts = match protocol::request::sdssplitargs(&shebang) {
        Some(p) if !p.is_empty() => p,
        _ => return Err("Invalid engine in script shebang".into()),
    };
    if &parts[0][..] != b"#!lua" {
        return Err(format!(
            "Unexpected engine in script shebang: {}",
            String::from_utf8_lossy(&parts[0])
        ));
    }
    let mut flags = 0;
    for part in &parts[1..] {
        let Some(list) = part.strip_prefix(b"flags=") else {
            return Err(format!(
                "Unknown lua shebang option: {}",
                String::from_utf8_lossy(part)
            ));
        };
        if list.is_empty() {
            continue;
        }
        for name in list.split(|&b| b == b',') {
            match SCRIPTS_FLAGS_DEF.iter().find(|(_, n)| n.as_bytes() == name) {
                Some((f, _)) => flags |= f,
                None => {
                    return Err(format!(
                        "Unexpected flag in script shebang: {}",
                        String::from_utf8_lossy(name)
                    ))
                }
            }
        }
    }
    Ok((flags, shebang_len))
}

/// luaCreateFunction: compile `body` as the function `f_<sha>` unless it
/// is cached already; returns its sha. On error the reply is sent to `c`.
pub fn lua_create_function(srv: &mut Server, c: &mut Client, body: &Bytes) -> Option<String> {
    let sha = sha1hex(body);
    let ctx = match lctx(srv) {
        Some(ctx) => ctx,
        None => {
            c.add_reply_error("ERR Lua scripting engine unavailable");
            return None;
        }
    };
    if ctx.scripts.contains_key(&sha) {
        return Some(sha);
    }
    let (flags, shebang_len) = match eval_extract_shebang_flags(body) {
        Ok(x) => x,
        Err(e) => {
            c.add_reply_error(&format!("ERR {e}"));
            return None;
        }
    };
    // The shebang line is left out but its newline kept, so line numbers in
    // errors match the script as sent.
    let code = &body[shebang_len..];
    let funcname = CString::new(format!("f_{sha}")).unwrap_or_default();
    // SAFETY: raw stack work inside exec_raw's protected call; balanced.
    let compiled: mlua::Result<Option<String>> = unsafe {
        ctx.lua.exec_raw::<Option<String>>((), |l| {
            let status = ffi::luaL_loadbuffer(
                l,
                code.as_ptr() as *const c_char,
                code.len(),
                c"@user_script".as_ptr(),
            );
            if status != 0 {
                // Leave the message as the result.
                return;
            }
            ffi::lua_setfield(l, ffi::LUA_REGISTRYINDEX, funcname.as_ptr());
        })
    };
    match compiled {
        Ok(None) => {}
        Ok(Some(msg)) => {
            c.add_reply_error(&format!("ERR Error compiling script (new function): {msg}"));
            return None;
        }
        Err(e) => {
            c.add_reply_error(&format!("ERR Error compiling script (new function): {e}"));
            return None;
        }
    }
    ctx.scripts_mem += cached_script_mem(body);
    ctx.scripts.insert(
        sha.clone(),
        LuaScript {
            flags,
            body: body.clone(),
        },
    );
    Some(sha)
}

/// EVAL has CMD_SKIP_MONITOR: it feeds MONITOR itself, before the
/// commands the script runs.
fn eval_feed_monitors(srv: &mut Server, c: &mut Client) {
    let argv = std::mem::take(&mut c.argv);
    crate::monitor::replication_feed_monitors(srv, c, c.db, &argv);
    c.argv = argv;
}

/// evalGenericCommand: numkeys, find or compile the script, run it.
/// MONITOR was fed by the caller (eval_command / evalsha_generic).
pub fn eval_generic_command_body(srv: &mut Server, c: &mut Client, evalsha: bool, ro: bool) {
    let Some(numkeys) = protocol::util::string2ll(c.arg(2)) else {
        return c.add_reply_error(shared::NOT_INTEGER_ERR);
    };
    if numkeys > (c.argc() - 3) as i64 {
        return c.add_reply_error("ERR Number of keys can't be greater than number of args");
    } else if numkeys < 0 {
        return c.add_reply_error("ERR Number of keys can't be negative");
    }
    let numkeys = numkeys as usize;

    let sha = if evalsha {
        c.arg(1).to_ascii_lowercase()
    } else {
        sha1hex(c.arg(1)).into_bytes()
    };
    let sha = String::from_utf8_lossy(&sha).into_owned();
    let cached = srv
        .lctx
        .as_ref()
        .and_then(|ctx| ctx.scripts.get(&sha))
        .map(|s| s.flags);
    let flags = match cached {
        Some(flags) => flags,
        None if evalsha => {
            return c.add_reply_error("NOSCRIPT No matching script. Please use EVAL.");
        }
        None => {
            let body = c.argv[1].clone();
            if lua_create_function(srv, c, &body).is_none() {
                return;
            }
            srv.lctx
                .as_ref()
                .and_then(|ctx| ctx.scripts.get(&sha))
                .map_or(SCRIPT_FLAG_EVAL_COMPAT_MODE, |s| s.flags)
        }
    };
    let Some(lua) = srv.lctx.as_ref().map(|ctx| ctx.lua.clone()) else {
        return;
    };

    let Some(run) = script::script_prepare_for_run(srv, c, sha.as_bytes(), flags, ro) else {
        return;
    };
    if let Some(ctx) = srv.script_run_ctx.as_mut() {
        ctx.flags |= SCRIPT_EVAL_MODE;
    }
    let funcname = CString::new(format!("f_{sha}")).unwrap_or_default();
    let keys = &c.argv[3..3 + numkeys];
    let args = &c.argv[3 + numkeys..];
    script_lua::lua_call_registry_function(srv, &lua, &funcname, keys, args);
    script::script_reset_run(srv, c, run);
}

/// EVAL script numkeys [key [key ...]] [arg [arg ...]]
// redis: eval.c evalCommand
pub fn eval_command(srv: &mut Server, c: &mut Client) {
    eval_with_debug_check(srv, c, false);
}

/// evalCommand: a client in SCRIPT DEBUG mode debugs its EVAL (ldb.rs).
fn eval_with_debug_check(srv: &mut Server, c: &mut Client, ro: bool) {
    eval_feed_monitors(srv, c);
    if c.has_flag(crate::ldb::CLIENT_LUA_DEBUG) {
        crate::ldb::eval_generic_command_with_debugging(srv, c, ro);
    } else {
        eval_generic_command_body(srv, c, false, ro);
    }
}

/// EVAL_RO script numkeys [key [key ...]] [arg [arg ...]]
// redis: eval.c evalRoCommand
pub fn eval_ro_command(srv: &mut Server, c: &mut Client) {
    eval_with_debug_check(srv, c, true);
}

/// EVALSHA sha1 numkeys [key [key ...]] [arg [arg ...]]
// redis: eval.c evalShaCommand
pub fn evalsha_command(srv: &mut Server, c: &mut Client) {
    evalsha_generic(srv, c, false);
}

/// EVALSHA_RO sha1 numkeys [key [key ...]] [arg [arg ...]]
// redis: eval.c evalShaRoCommand
pub fn evalsha_ro_command(srv: &mut Server, c: &mut Client) {
    evalsha_generic(srv, c, true);
}

/// A sha that is not 40 characters cannot name a script.
fn evalsha_generic(srv: &mut Server, c: &mut Client, ro: bool) {
    eval_feed_monitors(srv, c);
    if c.arg(1).len() != 40 {
        return c.add_reply_error("NOSCRIPT No matching script. Please use EVAL.");
    }
    if c.has_flag(crate::ldb::CLIENT_LUA_DEBUG) {
        return c.add_reply_error("ERR Please use EVAL instead of EVALSHA for debugging");
    }
    eval_generic_command_body(srv, c, true, ro);
}

// ---- SCRIPT (eval.c scriptCommand) ----

/// SCRIPT LOAD script
// redis: eval.c scriptCommand (load)
pub fn script_load_command(srv: &mut Server, c: &mut Client) {
    let body = c.argv[2].clone();
    if let Some(sha) = lua_create_function(srv, c, &body) {
        c.add_reply_bulk(sha.as_bytes());
    }
}

/// SCRIPT EXISTS sha1 [sha1 ...]
// redis: eval.c scriptCommand (exists)
pub fn script_exists_command(srv: &mut Server, c: &mut Client) {
    c.add_reply_array_len(c.argc() - 2);
    for j in 2..c.argc() {
        let sha = String::from_utf8_lossy(&c.arg(j).to_ascii_lowercase()).into_owned();
        let found = srv
            .lctx
            .as_ref()
            .is_some_and(|ctx| ctx.scripts.contains_key(&sha));
        c.add_reply_integer(i64::from(found));
    }
}

/// SCRIPT FLUSH [ASYNC|SYNC]
// redis: eval.c scriptCommand (flush) -> scriptingReset
pub fn script_flush_command(srv: &mut Server, c: &mut Client) {
    let valid = c.argc() == 2
        || (c.argc() == 3
            && (c.arg(2).eq_ignore_ascii_case(b"sync") || c.arg(2).eq_ignore_ascii_case(b"async")));
    if !valid {
        return c.add_reply_error("ERR SCRIPT FLUSH only support SYNC|ASYNC option");
    }
    // scriptingReset: a new Lua state, an empty cache. The old state is
    // dropped here in both modes (a Lua state cannot move to the lazy-free
    // thread: mlua's Lua is not Send).
    srv.lctx = None;
    c.add_reply_ok();
}

/// SCRIPT KILL
// redis: eval.c scriptCommand (kill) -> scriptKill
pub fn script_kill_command(srv: &mut Server, c: &mut Client) {
    script::script_kill(srv, c, true);
}

/// SCRIPT DEBUG YES|SYNC|NO
// redis: eval.c scriptCommand (debug): the debugger itself is ldb.rs.
pub fn script_debug_command(srv: &mut Server, c: &mut Client) {
    crate::ldb::script_debug_command(srv, c);
}

/// SCRIPT HELP
// redis: eval.c scriptCommand (help)
pub fn script_help_command(_srv: &mut Server, c: &mut Client) {
    c.add_reply_help(
        "SCRIPT",
        &[
            "DEBUG (YES|SYNC|NO)",
            "    Set the debug mode for subsequent scripts executed.",
            "EXISTS <sha1> [<sha1> ...]",
            "    Return information about the existence of the scripts in the script cache.",
            "FLUSH [ASYNC|SYNC]",
            "    Flush the Lua scripts cache. Very dangerous on replicas.",
            "    When called without the optional mode argument, the behavior is determined by the",
            "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
            "    * ASYNC: Asynchronously flush the scripts cache.",
            "    * SYNC: Synchronously flush the scripts cache.",
            "KILL",
            "    Kill the currently executing Lua script.",
            "LOAD <script>",
            "    Load a script into the scripts cache without executing it.",
        ],
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha1hex_of_empty_string() {
        assert_eq!(sha1hex(b""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
    }

    #[test]
    fn shebang_flags() {
        assert_eq!(
            eval_extract_shebang_flags(b"return 1"),
            Ok((SCRIPT_FLAG_EVAL_COMPAT_MODE, 0))
        );
        assert_eq!(
            eval_extract_shebang_flags(b"#!lua flags=no-writes,allow-oom\nreturn 1"),
            Ok((
                script::SCRIPT_FLAG_NO_WRITES | script::SCRIPT_FLAG_ALLOW_OOM,
                31
            ))
        );
        assert_eq!(
            eval_extract_shebang_flags(b"#!lua flags=bad\n"),
            Err("Unexpected flag in script shebang: bad".to_string())
        );
        assert_eq!(
            eval_extract_shebang_flags(b"#!lua"),
            Err("Invalid script shebang".to_string())
        );
    }
}
