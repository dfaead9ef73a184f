//! The Lua engine of Redis Functions (Redis's function_lua.c).
//!
//! Functions get their own Lua state, separate from EVAL's, built once at
//! start-up (and again after FUNCTION FLUSH) by `lua_engine_init_engine`:
//! the standard libraries and the `redis` API of script_lua.rs, then two
//! global views of that state:
//!
//! * the **library API**, what the top level of a library sees while
//!   FUNCTION LOAD runs it: a global `redis` holding only
//!   `register_function`, `log`, the `LOG_*` levels and the version fields.
//!   Nothing else (no `string`, no `redis.call`): loading may only register
//!   functions, so it cannot touch the dataset nor depend on it;
//! * the **globals API**, what a function sees when FCALL runs it: the full
//!   state (standard libraries, `redis.call`, `redis.pcall`, ...).
//!
//! Every library is compiled with one shared environment table `env`. It
//! stays empty and refuses writes ("Attempt to modify a readonly table"), and
//! its metatable's `__index` points at the library API during a load and at
//! the globals API otherwise. A callback defined at the top level keeps
//! `env` as its environment, so the same closure sees the load view while
//! loading and the full view when it runs: the trick Redis plays by swapping
//! the `__index` of its globals' metatable (luaEngineCreate).
//!
//! `redis.register_function` records each function into the library being
//! loaded (the `LoadCtx` kept as Lua app data). A hook every 100000
//! instructions aborts a load that runs past `timeout` (LOAD_TIMEOUT_MS).

use std::ffi::c_int;
use std::time::{Duration, Instant};

use bytes::Bytes;

use mlua::{ffi, Function, HookTriggers, Lua, MultiValue, Table, Value, VmState};

use crate::function::{FunctionInfo, FunctionLibInfo, INVALID_NAME_ERR};
use crate::script::{self, ScriptRun};
use crate::script_lua;
use crate::server::Server;

/// Instructions between two checks of the load time limit (Redis's
/// lua_sethook count for luaEngineLoadHook).
const LOAD_HOOK_INSTRUCTIONS: u32 = 100_000;

/// The chunk name of library code: errors read `user_function:<line>:`
/// and `on @user_function:<line>`.
const LIBRARY_CHUNK_NAME: &str = "@user_function";

/// The functions' Lua state (Redis's luaEngineCtx) and the tables that
/// switch its global view between loading and running.
pub struct LuaEngineCtx {
    /// The environment every library is compiled with (always empty).
    env: Table,
    /// `env`'s metatable: `__index` is `library_api` or `globals_api`.
    env_meta: Table,
    /// What a library sees while it loads (LIBRARY_API_NAME).
    library_api: Table,
    /// The full globals (GLOBALS_API_NAME).
    globals_api: Table,
    /// `pcall(f)` from trusted code (LOAD_SUPPORT_CODE).
    runner: Function,
    /// The state itself, last: fields drop in order, so the references
    /// above are released before the state closes.
    pub lua: script_lua::LuaVm,
}

/// The library being loaded (Redis's loadCtx), kept in the Lua state's
/// app data while FUNCTION LOAD runs the library code.
struct LoadCtx {
    functions: Vec<FunctionInfo>,
    start: Instant,
    timeout: Duration,
}

/// An error raised from Rust with Redis's exact text ("ERR ..."), as
/// luaPushError + luaError raise an error table in Redis: no position.
#[derive(Debug)]
struct RedisLuaError(String);

impl std::fmt::Display for RedisLuaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RedisLuaError {}

fn raise<T>(msg: &str) -> mlua::Result<T> {
    Err(mlua::Error::external(RedisLuaError(format!("ERR {msg}"))))
}

/// Trusted Lua: the protection metamethods, and a runner that calls the
/// library code under `pcall` so the error comes back as the Lua value it
/// is (a string, or a table `{err=...}` from the redis API). Errors are
/// raised at level 2: the position is the library line that did the access,
/// as luaL_error reports it in Redis. The chunk name "=redis-lite" is the
/// one the error handler of script_lua.rs skips when it looks for the
/// script's line.
const LOAD_SUPPORT_CODE: &str = r#"
local error, tostring, pcall = error, tostring, pcall
local function nonexistent(t, k)
  error("Script attempted to access nonexistent global variable '" .. tostring(k) .. "'", 2)
end
local function readonly(t, k, v)
  error("Attempt to modify a readonly table", 2)
end
local function run(f)
  return pcall(f)
end
return nonexistent, readonly, run
"#;

/// createLuaState + luaLoadLibraries: the standard libraries Redis opens
/// (base, table, string, math and debug, which the error handler needs and
/// the sandbox then hides); script_lua.rs adds the rest.
fn create_lua_state() -> mlua::Result<script_lua::LuaVm> {
    use mlua::StdLib;
    let libs = StdLib::TABLE | StdLib::STRING | StdLib::MATH | StdLib::DEBUG;
    // SAFETY: the debug library is unsafe only for untrusted code that can
    // reach it; lua_set_globals_protection removes it from the globals and
    // keeps it only inside the error handler. The heap is outside
    // used_memory, as Redis's (script_lua::LuaVm).
    unsafe { script_lua::lua_open(libs) }
}

/// luaEngineInitEngine: build the functions' Lua state.
// redis: function_lua.c luaEngineInitEngine
pub fn lua_engine_init_engine() -> LuaEngineCtx {
    build_engine().expect("creating the functions' Lua state")
}

fn build_engine() -> mlua::Result<LuaEngineCtx> {
    let lua = create_lua_state()?;
    // Before the API replaces `pcall`: the runner keeps the original.
    let (nonexistent, readonly, runner): (Function, Function, Function) = lua
        .load(LOAD_SUPPORT_CODE)
        .set_name("=redis-lite")
        .call(())?;
    script_lua::lua_register_redis_api(&lua)?;
    let protect = |t: &Table| -> mlua::Result<()> {
        let meta = lua.create_table()?;
        meta.raw_set("__index", nonexistent.clone())?;
        meta.raw_set("__newindex", readonly.clone())?;
        t.set_metatable(Some(meta))
    };

    // The library API: `redis` with register_function, log and the
    // constants, copied from the full `redis` table.
    let full_redis: Table = lua.globals().raw_get("redis")?;
    let load_redis = lua.create_table()?;
    let register = lua.create_function(|lua, args: MultiValue| {
        redis_error_as_table(lua, lua_register_function(lua, args))
    })?;
    // SAFETY: pushcclosure pops the one value exec_raw pushed (the Rust
    // function, as the closure's upvalue) and leaves the closure.
    let register: Function = unsafe {
        lua.exec_raw(register, |l| {
            ffi::lua_pushcclosure(l, raise_returned_error, 1);
        })
    }?;
    load_redis.raw_set("register_function", register)?;
    for name in [
        "log",
        "LOG_DEBUG",
        "LOG_VERBOSE",
        "LOG_NOTICE",
        "LOG_WARNING",
        "REDIS_VERSION",
        "REDIS_VERSION_NUM",
    ] {
        load_redis.raw_set(name, full_redis.raw_get::<Value>(name)?)?;
    }
    protect(&load_redis)?;
    let library_api = lua.create_table()?;
    library_api.raw_set("redis", load_redis)?;
    protect(&library_api)?;

    // The globals themselves: reading an unknown global or assigning one
    // is an error, as for EVAL scripts. From here on `lua.globals()` is the
    // read-only view of them.
    script_lua::lua_set_globals_protection(&lua)?;
    let globals_api = lua.globals();

    // The shared environment of all libraries.
    let env = lua.create_table()?;
    let env_meta = lua.create_table()?;
    env_meta.raw_set("__index", globals_api.clone())?;
    env_meta.raw_set("__newindex", readonly)?;
    env.set_metatable(Some(env_meta.clone()))?;
    Ok(LuaEngineCtx {
        env,
        env_meta,
        library_api,
        globals_api,
        runner,
        lua,
    })
}

/// luaEngineCreate: compile `code` (the library without its shebang line)
/// and run it so it registers its functions into `li`. Errors come back
/// as Redis's text without the leading "ERR ".
// redis: function_lua.c luaEngineCreate
pub fn lua_engine_create(
    engine: &LuaEngineCtx,
    li: &mut FunctionLibInfo,
    code: &Bytes,
    timeout: Duration,
) -> Result<(), String> {
    let lua = &engine.lua;
    let chunk = lua
        .load(&code[..])
        .set_name(LIBRARY_CHUNK_NAME)
        .set_mode(mlua::chunk::ChunkMode::Text)
        .set_environment(engine.env.clone())
        .into_function();
    let chunk = match chunk {
        Ok(f) => f,
        Err(e) => return Err(format!("Error compiling function: {}", lua_error_text(&e))),
    };

    // Switch the view to the library API, run, and switch back.
    let _ = engine
        .env_meta
        .raw_set("__index", engine.library_api.clone());
    lua.set_app_data(LoadCtx {
        functions: Vec::new(),
        start: Instant::now(),
        timeout,
    });
    let _ = lua.set_hook(
        HookTriggers::new().every_nth_instruction(LOAD_HOOK_INSTRUCTIONS),
        lua_engine_load_hook,
    );
    let result = engine.runner.call::<(bool, Value)>(chunk);
    lua.remove_hook();
    let load_ctx = lua.remove_app_data::<LoadCtx>();
    let _ = engine
        .env_meta
        .raw_set("__index", engine.globals_api.clone());

    let err = match result {
        Ok((true, _)) => {
            li.functions = load_ctx.map(|l| l.functions).unwrap_or_default();
            return Ok(());
        }
        Ok((false, value)) => lua_error_value_text(&value),
        Err(e) => redis_error_text(&e),
    };
    Err(format!("Error registering functions: {err}"))
}

/// luaEngineLoadHook: abort a load that runs for too long.
// redis: function_lua.c luaEngineLoadHook
fn lua_engine_load_hook(lua: &Lua, _debug: &mlua::debug::Debug) -> mlua::Result<VmState> {
    let expired = lua
        .app_data_ref::<LoadCtx>()
        .is_some_and(|l| !l.timeout.is_zero() && l.start.elapsed() > l.timeout);
    if expired {
        return raise("FUNCTION LOAD timeout");
    }
    Ok(VmState::Continue)
}

/// luaEngineCall: run a function with (KEYS, ARGV) as its two parameters,
/// through the scripting core (which replies to the caller).
// redis: function_lua.c luaEngineCall
pub fn lua_engine_call(
    srv: &mut Server,
    run: &mut ScriptRun,
    lua: &Lua,
    function: &Function,
    keys: &[Bytes],
    args: &[Bytes],
) {
    script_lua::lua_call_function(srv, run, lua, function, keys, args, true);
}

// ---- redis.register_function ----

/// What one register_function call asked for (registerFunctionArgs).
struct RegisterFunctionArgs {
    name: Bytes,
    desc: Option<Bytes>,
    callback: Function,
    flags: u64,
}

/// redis.register_function(name, callback) or
/// redis.register_function{function_name=..., callback=..., flags={...},
/// description=...}: add a function to the library being loaded.
// redis: function_lua.c luaRegisterFunction
fn lua_register_function(lua: &Lua, args: MultiValue) -> mlua::Result<()> {
    if lua.app_data_ref::<LoadCtx>().is_none() {
        return raise("redis.register_function can only be called on FUNCTION LOAD command");
    }
    let f = match args.len() {
        1 => lua_register_function_read_named_args(lua, args.into_iter().next())?,
        2 => {
            let mut it = args.into_iter();
            lua_register_function_read_positional_args(lua, it.next(), it.next())?
        }
        _ => return raise("wrong number of arguments to redis.register_function"),
    };
    // functionLibCreateFunction: a valid name, unique in this library.
    if !crate::function::functions_verify_name(&f.name) {
        return raise(INVALID_NAME_ERR);
    }
    let Some(mut load_ctx) = lua.app_data_mut::<LoadCtx>() else {
        return raise("redis.register_function can only be called on FUNCTION LOAD command");
    };
    if load_ctx.functions.iter().any(|g| g.name == f.name) {
        return raise("Function already exists in the library");
    }
    load_ctx.functions.push(FunctionInfo {
        name: f.name,
        desc: f.desc,
        flags: f.flags,
        function: f.callback,
    });
    Ok(())
}

/// A Lua string, or a number turned into one as Lua does (lua_isstring +
/// lua_tostring); None for any other type.
fn lua_string_arg(lua: &Lua, v: &Value) -> Option<Bytes> {
    match v {
        Value::String(_) | Value::Integer(_) | Value::Number(_) => lua
            .coerce_string(v.clone())
            .ok()
            .flatten()
            .map(|s| Bytes::copy_from_slice(&s.as_bytes())),
        _ => None,
    }
}

// redis: function_lua.c luaRegisterFunctionReadPositionalArgs
fn lua_register_function_read_positional_args(
    lua: &Lua,
    name: Option<Value>,
    callback: Option<Value>,
) -> mlua::Result<RegisterFunctionArgs> {
    let Some(name) = name.as_ref().and_then(|v| lua_string_arg(lua, v)) else {
        return raise("first argument to redis.register_function must be a string");
    };
    let Some(Value::Function(callback)) = callback else {
        return raise("second argument to redis.register_function must be a function");
    };
    Ok(RegisterFunctionArgs {
        name,
        desc: None,
        callback,
        flags: 0,
    })
}

// redis: function_lua.c luaRegisterFunctionReadNamedArgs
fn lua_register_function_read_named_args(
    lua: &Lua,
    arg: Option<Value>,
) -> mlua::Result<RegisterFunctionArgs> {
    let Some(Value::Table(t)) = arg else {
        return raise("calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments).");
    };
    let (mut name, mut desc, mut callback, mut flags) = (None, None, None, 0);
    for pair in t.pairs::<Value, Value>() {
        let (k, v) = pair?;
        let Some(key) = lua_string_arg(lua, &k) else {
            return raise("named argument key given to redis.register_function is not a string");
        };
        if key.eq_ignore_ascii_case(b"function_name") {
            let Some(n) = lua_string_arg(lua, &v) else {
                return raise(
                    "function_name argument given to redis.register_function must be a string",
                );
            };
            name = Some(n);
        } else if key.eq_ignore_ascii_case(b"description") {
            let Some(d) = lua_string_arg(lua, &v) else {
                return raise(
                    "description argument given to redis.register_function must be a string",
                );
            };
            desc = Some(d);
        } else if key.eq_ignore_ascii_case(b"callback") {
            let Value::Function(f) = v else {
                return raise(
                    "callback argument given to redis.register_function must be a function",
                );
            };
            callback = Some(f);
        } else if key.eq_ignore_ascii_case(b"flags") {
            let Value::Table(ft) = v else {
                return raise("flags argument to redis.register_function must be a table representing function flags");
            };
            let Some(f) = lua_register_function_read_flags(lua, &ft)? else {
                return raise("unknown flag given");
            };
            flags = f;
        } else {
            return raise("unknown argument given to redis.register_function");
        }
    }
    let Some(name) = name else {
        return raise("redis.register_function must get a function name argument");
    };
    let Some(callback) = callback else {
        return raise("redis.register_function must get a callback argument");
    };
    Ok(RegisterFunctionArgs {
        name,
        desc,
        callback,
        flags,
    })
}

/// luaRegisterFunctionReadFlags: the array part `flags[1], flags[2], ...`
/// up to the first nil; None when an entry is not a known flag name.
// redis: function_lua.c luaRegisterFunctionReadFlags
fn lua_register_function_read_flags(lua: &Lua, t: &Table) -> mlua::Result<Option<u64>> {
    let mut flags = 0;
    for j in 1.. {
        let v: Value = t.get(j)?;
        if v.is_nil() {
            break;
        }
        let Some(name) = lua_string_arg(lua, &v) else {
            return Ok(None);
        };
        match script::SCRIPTS_FLAGS_DEF
            .iter()
            .find(|(_, n)| n.as_bytes().eq_ignore_ascii_case(&name))
        {
            Some((flag, _)) => flags |= flag,
            None => return Ok(None),
        }
    }
    Ok(Some(flags))
}

// ---- error texts ----

/// The C function scripts call as `redis.register_function`: it calls the
/// Rust function in its upvalue with the same arguments and raises the
/// error table that function returns, if any. Being a C function (as in
/// Redis) it leaves the caller's frame in place even for `return f(...)`,
/// so errors point at the library line.
unsafe extern "C-unwind" fn raise_returned_error(l: *mut ffi::lua_State) -> c_int {
    // Nothing here owns Rust values: lua_error's longjmp skips no drop.
    let nargs = ffi::lua_gettop(l);
    ffi::lua_pushvalue(l, ffi::lua_upvalueindex(1));
    ffi::lua_insert(l, 1);
    ffi::lua_call(l, nargs, 1);
    if ffi::lua_isnil(l, -1) == 0 {
        ffi::lua_error(l);
    }
    0
}

/// luaPushError for a Rust API function: a Redis error (RedisLuaError)
/// becomes the table `{err="ERR ..."}` that the `raising` wrapper raises;
/// any other error is raised as it is.
fn redis_error_as_table(lua: &Lua, result: mlua::Result<()>) -> mlua::Result<Option<Table>> {
    match result {
        Ok(()) => Ok(None),
        Err(mlua::Error::ExternalError(inner)) => match inner.downcast_ref::<RedisLuaError>() {
            Some(RedisLuaError(msg)) => {
                let t = lua.create_table()?;
                t.raw_set("err", msg.as_str())?;
                Ok(Some(t))
            }
            None => Err(mlua::Error::ExternalError(inner)),
        },
        Err(e) => Err(e),
    }
}

/// The text of a compile error: Lua's own message.
fn lua_error_text(e: &mlua::Error) -> String {
    match e {
        mlua::Error::SyntaxError { message, .. } => message.clone(),
        mlua::Error::RuntimeError(m) => m.clone(),
        other => other.to_string(),
    }
}

/// luaExtractErrorInformation: the message of an error value. A string is
/// a plain Lua error ("ERR " in front); a table is a Redis error `{err=}`;
/// an mlua error value comes from a Rust callback (register_function, the
/// load hook).
fn lua_error_value_text(v: &Value) -> String {
    match v {
        Value::String(s) => format!("ERR {}", String::from_utf8_lossy(&s.as_bytes())),
        Value::Table(t) => match t.raw_get::<Value>("err") {
            Ok(Value::String(s)) => String::from_utf8_lossy(&s.as_bytes()).into_owned(),
            _ => "ERR unknown error".to_string(),
        },
        Value::Error(e) => redis_error_text(e),
        Value::Integer(i) => format!("ERR {i}"),
        Value::Number(n) => format!("ERR {n}"),
        _ => "ERR unknown error".to_string(),
    }
}

/// The message of a Rust-side error: errors raised from Rust
/// carry Redis's full text; Lua's own (string) errors get "ERR " in front.
fn redis_error_text(e: &mlua::Error) -> String {
    match e {
        mlua::Error::CallbackError { cause, .. } => redis_error_text(cause),
        mlua::Error::ExternalError(inner) => match inner.downcast_ref::<RedisLuaError>() {
            Some(RedisLuaError(msg)) => msg.clone(),
            None => format!("ERR {inner}"),
        },
        mlua::Error::RuntimeError(m) => format!("ERR {m}"),
        other => format!("ERR {other}"),
    }
}
