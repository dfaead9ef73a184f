//! Redis Functions (Redis's functions.c): libraries of named functions that
//! live in the server, loaded with FUNCTION LOAD and called with FCALL.
//!
//! The picture, top to bottom:
//!
//! * A **library** is one piece of code with a name, sent by the client as
//!   `#!lua name=mylib\n<code>`. Loading runs the code once; the only thing
//!   it may do is call `redis.register_function(...)` to register the
//!   library's **functions** (name, callback, optional description, flags).
//! * The registry (`FunctionsLibCtx`, Redis's `functionsLibCtx`) holds the
//!   libraries by name and, beside them, every function by name: function
//!   names are unique across ALL libraries (and case-insensitive, like
//!   Redis's `functionDictType`), so FCALL finds one with a single lookup.
//! * The **engine** compiles and runs the code. Redis has an engine table
//!   with one entry, "LUA"; with a single engine we call function_lua.rs
//!   directly. Functions run in their OWN Lua state, separate from EVAL's
//!   (function_lua.rs creates it), so EVAL scripts and functions never see
//!   each other's globals.
//!
//! Loading is atomic (functionsCreateWithLibraryCtx): the new library is
//! built aside, checked (at least one function, no name clash with other
//! libraries), and only then linked in. With REPLACE the old library is
//! unlinked first and linked back if anything fails, so an error never
//! changes what FCALL sees.
//!
//! Running (fcallCommandGeneric) goes through the scripting core in
//! script.rs, shared with EVAL: `script_prepare_for_run` checks the
//! function's flags against the caller (FCALL_RO, no-writes, OOM...),
//! `function_lua::lua_engine_call` runs the callback with (KEYS, ARGV) as
//! its two parameters, `script_reset_run` cleans up. While a function runs
//! past busy-reply-threshold, other clients get BUSY and may send FUNCTION
//! KILL / FUNCTION STATS.
//!
//! Not implemented: FUNCTION DUMP and FUNCTION RESTORE (they serialize
//! libraries in RDB format, which redis-lite does not have). They have no
//! table rows, so they answer as unknown subcommands, and FUNCTION HELP does
//! not list them.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use bytes::Bytes;
use storage::util::string_match;

use crate::function_lua::{self, LuaEngineCtx};
use crate::monitor;
use crate::networking::Client;
use crate::script;
use crate::server::Server;

/// LOAD_TIMEOUT_MS: FUNCTION LOAD may only register functions, which takes
/// microseconds; code that runs longer than this while loading (a loop at
/// the top level of the library) is aborted with "FUNCTION LOAD timeout"
/// instead of blocking the server.
pub const LOAD_TIMEOUT_MS: u64 = 500;

/// LUA_ENGINE_NAME: the engine name in `#!lua` and in FUNCTION LIST/STATS.
pub const LUA_ENGINE_NAME: &str = "LUA";

/// What Redis 7.0.15 reports as used_memory_functions with no library: its
/// dicts, the registry struct and the LUA engine's bookkeeping.
const FUNCTIONS_MEMORY_BASE: usize = 200;

/// Bookkeeping per library and per function on top of their strings: a
/// struct and a dict entry, roughly, in Redis's accounting.
const FUNCTIONS_MEMORY_PER_ITEM: usize = 64;

/// One registered function (Redis's functionInfo).
pub struct FunctionInfo {
    /// The name as registered (FCALL matches it case-insensitively).
    pub name: Bytes,
    /// `description=` of the table form of register_function.
    pub desc: Option<Bytes>,
    /// SCRIPT_FLAG_* bits (no-writes, allow-oom, ...).
    pub flags: u64,
    /// The compiled callback, owned by the engine's Lua state.
    pub function: mlua::Function,
}

/// One library (Redis's functionLibInfo).
pub struct FunctionLibInfo {
    pub name: Bytes,
    /// The whole code as the client sent it, shebang line included
    /// (FUNCTION LIST WITHCODE shows it).
    pub code: Bytes,
    /// Functions in registration order.
    pub functions: Vec<FunctionInfo>,
}

/// functionsLibCtx: the libraries and the function index over them.
#[derive(Default)]
pub struct FunctionsLibCtx {
    /// Library name -> library. Redis's dict order depends on its hash
    /// seed; a BTreeMap lists them in name order, as valid and stable.
    pub libraries: BTreeMap<Bytes, FunctionLibInfo>,
    /// Lower-cased function name -> name of the library holding it.
    pub functions: HashMap<Vec<u8>, Bytes>,
}

/// Everything the server keeps for functions: the registry and the engine.
pub struct Functions {
    pub lib_ctx: FunctionsLibCtx,
    pub engine: LuaEngineCtx,
}

impl Functions {
    /// functionsInit: an empty registry and a fresh Lua engine.
    pub fn new() -> Functions {
        Functions {
            lib_ctx: FunctionsLibCtx::default(),
            engine: function_lua::lua_engine_init_engine(),
        }
    }

    /// Looks a function up by name (case-insensitive), across libraries.
    pub fn find(&self, name: &[u8]) -> Option<&FunctionInfo> {
        let lib = self.lib_ctx.functions.get(&name.to_ascii_lowercase())?;
        let li = self.lib_ctx.libraries.get(lib)?;
        li.functions
            .iter()
            .find(|f| f.name.eq_ignore_ascii_case(name))
    }

    /// functionsNum (INFO number_of_functions): the names FCALL can find.
    pub fn functions_num(&self) -> usize {
        self.lib_ctx.functions.len()
    }

    /// FUNCTION STATS functions_count: the engine's count, the sum of its
    /// libraries' functions.
    pub fn engine_functions_count(&self) -> usize {
        self.lib_ctx
            .libraries
            .values()
            .map(|li| li.functions.len())
            .sum()
    }

    /// functionsLibNum (FUNCTION STATS libraries_count).
    pub fn libraries_num(&self) -> usize {
        self.lib_ctx.libraries.len()
    }

    /// functionsMemoryEngine (INFO used_memory_functions): the registry's
    /// own memory, estimated as Redis counts it: a fixed part for the
    /// empty registry (FUNCTIONS_MEMORY_BASE) plus, per library and per
    /// function, its strings and a struct.
    pub fn memory_engine(&self) -> usize {
        let mut total = FUNCTIONS_MEMORY_BASE;
        for li in self.lib_ctx.libraries.values() {
            total += FUNCTIONS_MEMORY_PER_ITEM + li.name.len() + li.code.len();
            for f in &li.functions {
                total += FUNCTIONS_MEMORY_PER_ITEM
                    + f.name.len()
                    + f.desc.as_ref().map_or(0, |d| d.len());
            }
        }
        total
    }

    /// functionsMemoryVM: bytes held by the functions' Lua state.
    pub fn memory_vm(&self) -> usize {
        crate::script_lua::lua_gc_count_bytes(&self.engine.lua)
    }
}

impl Default for Functions {
    fn default() -> Self {
        Self::new()
    }
}

// ---- the registry (functions.c libraryLink / libraryUnlink) ----

/// libraryLink: add a library and index its functions.
fn library_link(ctx: &mut FunctionsLibCtx, li: FunctionLibInfo) {
    for f in &li.functions {
        // A library may register both "f" and "F" (its own dict is
        // case-sensitive); the index keeps the first, as Redis's dictAdd.
        ctx.functions
            .entry(f.name.to_ascii_lowercase())
            .or_insert_with(|| li.name.clone());
    }
    ctx.libraries.insert(li.name.clone(), li);
}

/// libraryUnlink: remove a library and its functions from the index,
/// handing the library back to the caller.
fn library_unlink(ctx: &mut FunctionsLibCtx, name: &[u8]) -> Option<FunctionLibInfo> {
    let li = ctx.libraries.remove(name)?;
    for f in &li.functions {
        let key = f.name.to_ascii_lowercase();
        if ctx.functions.get(&key) == Some(&li.name) {
            ctx.functions.remove(&key);
        }
    }
    Some(li)
}

/// functionsVerifyName: `[a-zA-Z0-9_]+`, for library and function names.
pub fn functions_verify_name(name: &[u8]) -> bool {
    !name.is_empty() && name.iter().all(|&b| b.is_ascii_alphanumeric() || b == b'_')
}

/// The one error text for a bad library or function name.
pub const INVALID_NAME_ERR: &str = "Library names can only contain letters, numbers, or underscores(_) and must be at least one character long";

/// What the `#!<engine> name=<lib>` line says (functionsLibMataData).
#[derive(Debug, PartialEq, Eq)]
pub struct LibMetaData {
    pub engine: Bytes,
    pub name: Bytes,
    /// The code after the shebang, starting with its newline: line numbers
    /// in errors count the shebang as line 1.
    pub code: Bytes,
}

/// functionExtractLibMetaData: split the shebang line into words (the
/// quoting rules of redis-cli, sdssplitargs), the first is `#!<engine>`,
/// the others must be `name=<library>` exactly once. Errors are returned
/// without the "ERR " prefix.
pub fn function_extract_lib_meta_data(payload: &Bytes) -> Result<LibMetaData, Vec<u8>> {
    if !payload.starts_with(b"#!") {
        return Err("Missing library metadata".into());
    }
    // strchr(payload, '\n'): a C string, so a NUL ends the search.
    let c_len = payload
        .iter()
        .position(|&b| b == 0)
        .unwrap_or(payload.len());
    let Some(shebang_end) = payload[..c_len].iter().position(|&b| b == b'\n') else {
        return Err("Invalid library metadata".into());
    };
    let parts = match protocol::request::sdssplitargs(&payload.slice(..shebang_end)) {
        Some(p) if !p.is_empty() => p,
        _ => return Err("Invalid library metadata".into()),
    };
    let engine = parts[0].slice(2.min(parts[0].len())..);
    let mut name: Option<Bytes> = None;
    for part in &parts[1..] {
        if part.len() >= 5 && part[..5].eq_ignore_ascii_case(b"name=") {
            if name.is_some() {
                return Err(
                    "Invalid metadata value, name argument was given multiple times".into(),
                );
            }
            name = Some(Bytes::copy_from_slice(&part[5..]));
            continue;
        }
        return Err(err_with(b"Invalid metadata value given: ", part, b""));
    }
    let Some(name) = name else {
        return Err("Library name was not given".into());
    };
    Ok(LibMetaData {
        engine,
        name,
        code: payload.slice(shebang_end..),
    })
}

/// An error text around a client's bytes, `%s` style: the bytes as they
/// are (not necessarily UTF-8), up to a NUL.
fn err_with(before: &[u8], arg: &[u8], after: &[u8]) -> Vec<u8> {
    let arg = crate::server::c_str_prefix(arg, arg.len());
    [before, arg, after].concat()
}

/// functionsCreateWithLibraryCtx: compile `code` and link the library it
/// registers. Returns the library name, or the error text (no "ERR ").
/// Atomic: on any error the registry is as it was.
pub fn functions_create_with_library_ctx(
    functions: &mut Functions,
    code: &Bytes,
    replace: bool,
    timeout: Duration,
) -> Result<Bytes, Vec<u8>> {
    let md = function_extract_lib_meta_data(code)?;
    if !functions_verify_name(&md.name) {
        return Err(INVALID_NAME_ERR.into());
    }
    if !md.engine.eq_ignore_ascii_case(LUA_ENGINE_NAME.as_bytes()) {
        return Err(err_with(b"Engine '", &md.engine, b"' not found"));
    }
    let ctx = &mut functions.lib_ctx;
    if ctx.libraries.contains_key(&md.name) && !replace {
        return Err(err_with(b"Library '", &md.name, b"' already exists"));
    }
    // Unlink the old library now: its functions must not count as clashes.
    let old = library_unlink(ctx, &md.name);

    let mut new_li = FunctionLibInfo {
        name: md.name.clone(),
        code: code.clone(),
        functions: Vec::new(),
    };
    let mut result: Result<(), Vec<u8>> =
        function_lua::lua_engine_create(&functions.engine, &mut new_li, &md.code, timeout)
            .map_err(String::into_bytes);
    if result.is_ok() && new_li.functions.is_empty() {
        result = Err("No functions registered".into());
    }
    if result.is_ok() {
        let ctx = &functions.lib_ctx;
        if let Some(f) = new_li
            .functions
            .iter()
            .find(|f| ctx.functions.contains_key(&f.name.to_ascii_lowercase()))
        {
            result = Err(err_with(b"Function ", &f.name, b" already exists"));
        }
    }
    match result {
        Ok(()) => {
            library_link(&mut functions.lib_ctx, new_li);
            Ok(md.name)
        }
        Err(e) => {
            if let Some(old) = old {
                library_link(&mut functions.lib_ctx, old);
            }
            Err(e)
        }
    }
}

// ---- FUNCTION subcommands ----

/// FUNCTION LOAD [REPLACE] function-code
// redis: functions.c functionLoadCommand
pub fn function_load_command(srv: &mut Server, c: &mut Client) {
    let mut replace = false;
    let mut pos = 2;
    // Every argument but the last is an option.
    while pos < c.argc() - 1 {
        if c.arg(pos).eq_ignore_ascii_case(b"replace") {
            replace = true;
            pos += 1;
            continue;
        }
        let msg = err_with(b"ERR Unknown option given: ", c.arg(pos), b"");
        return c.add_reply_error_bytes(&msg);
    }
    if pos >= c.argc() {
        return c.add_reply_error("ERR Function code is missing");
    }
    let code = c.argv[pos].clone();
    let timeout = Duration::from_millis(LOAD_TIMEOUT_MS);
    match functions_create_with_library_ctx(&mut srv.functions, &code, replace, timeout) {
        Ok(name) => {
            srv.dirty += 1;
            c.add_reply_bulk(&name);
        }
        Err(e) => c.add_reply_error_bytes(&[b"ERR ", &e[..]].concat()),
    }
}

/// FUNCTION LIST [LIBRARYNAME library-name-pattern] [WITHCODE]
// redis: functions.c functionListCommand
pub fn function_list_command(srv: &mut Server, c: &mut Client) {
    let mut with_code = false;
    let mut pattern: Option<Bytes> = None;
    let mut i = 2;
    while i < c.argc() {
        let arg = c.arg(i);
        if !with_code && arg.eq_ignore_ascii_case(b"withcode") {
            with_code = true;
        } else if pattern.is_none() && arg.eq_ignore_ascii_case(b"libraryname") {
            if i >= c.argc() - 1 {
                return c.add_reply_error("ERR library name argument was not given");
            }
            i += 1;
            pattern = Some(c.argv[i].clone());
        } else {
            let msg = err_with(b"ERR Unknown argument ", arg, b"");
            return c.add_reply_error_bytes(&msg);
        }
        i += 1;
    }
    // LIBRARYNAME matches like KEYS, but case-insensitively.
    let libs: Vec<&FunctionLibInfo> = srv
        .functions
        .lib_ctx
        .libraries
        .values()
        .filter(|li| {
            pattern
                .as_ref()
                .is_none_or(|p| string_match(p, &li.name, true))
        })
        .collect();
    c.add_reply_array_len(libs.len());
    for li in libs {
        c.add_reply_map_len(if with_code { 4 } else { 3 });
        c.add_reply_bulk(b"library_name");
        c.add_reply_bulk(&li.name);
        c.add_reply_bulk(b"engine");
        c.add_reply_bulk(LUA_ENGINE_NAME.as_bytes());
        c.add_reply_bulk(b"functions");
        c.add_reply_array_len(li.functions.len());
        for f in &li.functions {
            add_reply_function_info(c, f);
        }
        if with_code {
            c.add_reply_bulk(b"library_code");
            c.add_reply_bulk(&li.code);
        }
    }
}

/// One function of FUNCTION LIST: name, description (or null), flags.
fn add_reply_function_info(c: &mut Client, f: &FunctionInfo) {
    c.add_reply_map_len(3);
    c.add_reply_bulk(b"name");
    c.add_reply_bulk(&f.name);
    c.add_reply_bulk(b"description");
    match &f.desc {
        Some(d) => c.add_reply_bulk(d),
        None => c.add_reply_null(),
    }
    c.add_reply_bulk(b"flags");
    // functionListReplyFlags: in the order of the flags table.
    let names: Vec<&str> = script::SCRIPTS_FLAGS_DEF
        .iter()
        .filter(|(flag, _)| f.flags & flag != 0)
        .map(|(_, name)| *name)
        .collect();
    c.add_reply_set_len(names.len());
    for n in names {
        c.add_reply_status(n.as_bytes());
    }
}

/// FUNCTION DELETE library-name
// redis: functions.c functionDeleteCommand
pub fn function_delete_command(srv: &mut Server, c: &mut Client) {
    match library_unlink(&mut srv.functions.lib_ctx, c.arg(2)) {
        // The library and its Lua callbacks are freed here.
        Some(_li) => {
            srv.dirty += 1;
            c.add_reply_ok();
        }
        None => c.add_reply_error("ERR Library not found"),
    }
}

/// FUNCTION FLUSH [ASYNC|SYNC]
// redis: functions.c functionFlushCommand
pub fn function_flush_command(srv: &mut Server, c: &mut Client) {
    if c.argc() > 3 {
        return c.add_reply_subcommand_syntax_error();
    }
    let _async = if c.argc() == 3 && c.arg(2).eq_ignore_ascii_case(b"sync") {
        false
    } else if c.argc() == 3 && c.arg(2).eq_ignore_ascii_case(b"async") {
        true
    } else if c.argc() == 2 {
        srv.config.lazyfree_lazy_user_flush
    } else {
        return c.add_reply_error("ERR FUNCTION FLUSH only supports SYNC|ASYNC option");
    };
    // functionsLibCtxClearCurrent: drop every library AND the Lua state,
    // then start over with a fresh one, so nothing a library left in Lua
    // survives. Redis hands the old state to its lazy-free thread with
    // ASYNC; a Lua state cannot move to another thread here (mlua's Lua is
    // not Send), so both modes free it now.
    srv.functions = Functions::new();
    srv.dirty += 1;
    c.add_reply_ok();
}

/// FUNCTION DUMP
// redis: functions.c functionDumpCommand
pub fn function_dump_command(srv: &mut Server, c: &mut Client) {
    // FUNCTION2 <code> per library, then the RDB version and the CRC64,
    // like a key's DUMP payload.
    let mut w = rdb::RdbWriter::new(Vec::new(), crate::rdb::rdb_compression(srv), false);
    for lib in srv.functions.lib_ctx.libraries.values() {
        let _ = w.save_function(&lib.code);
    }
    let Ok((mut payload, _)) = w.into_inner() else {
        return c.add_reply_error("ERR");
    };
    payload.extend_from_slice(&rdb::RDB_VERSION.to_le_bytes());
    let crc = rdb::crc64(&payload);
    payload.extend_from_slice(&crc.to_le_bytes());
    c.add_reply_bulk(&payload);
}

/// The library codes of a FUNCTION DUMP payload (the footer already
/// verified), or the error FUNCTION RESTORE replies with.
fn function_restore_codes(data: &[u8]) -> Result<Vec<Bytes>, Vec<u8>> {
    let body = &data[..data.len() - 10];
    let mut r = rdb::RdbReader::new(body, Some(body.len() as u64), false, Default::default());
    let mut codes = Vec::new();
    while (r.processed() as usize) < body.len() {
        let Ok(t) = r.load_type() else {
            return Err(b"can not read data type".to_vec());
        };
        if t != rdb::RDB_OPCODE_FUNCTION2 {
            return Err(b"given type is not a function".to_vec());
        }
        match r.load_string() {
            Ok(code) => codes.push(Bytes::from(code)),
            Err(_) => return Err(b"Failed loading library payload".to_vec()),
        }
    }
    Ok(codes)
}

/// FUNCTION RESTORE serialized-value [FLUSH|APPEND|REPLACE]
// redis: functions.c functionRestoreCommand
pub fn function_restore_command(srv: &mut Server, c: &mut Client) {
    if c.argc() > 4 {
        return c.add_reply_subcommand_syntax_error();
    }
    let policy = if c.argc() == 4 {
        c.arg(3).to_ascii_lowercase()
    } else {
        b"append".to_vec()
    };
    if !matches!(&policy[..], b"append" | b"replace" | b"flush") {
        return c.add_reply_error(
            "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.",
        );
    }
    if rdb::dump::verify_dump_payload(c.arg(2), srv.rdb.skip_checksum_validation).is_none() {
        return c.add_reply_error("ERR DUMP payload version or checksum are wrong");
    }
    let codes = match function_restore_codes(c.arg(2)) {
        Ok(codes) => codes,
        Err(e) => return c.add_reply_error_bytes(&[b"ERR ", &e[..]].concat()),
    };
    // Compile everything into a fresh registry first (functionsLibCtxCreate):
    // nothing changes unless the whole payload loads.
    let timeout = Duration::from_millis(LOAD_TIMEOUT_MS);
    let mut fresh = Functions::new();
    for code in &codes {
        if let Err(e) = functions_create_with_library_ctx(&mut fresh, code, false, timeout) {
            return c.add_reply_error_bytes(&[b"ERR ", &e[..]].concat());
        }
    }
    if policy == b"flush" {
        // functionsLibCtxSwapWithCurrent.
        srv.functions = fresh;
    } else if let Err(e) = library_join(&mut srv.functions, &fresh, policy == b"replace", timeout) {
        return c.add_reply_error_bytes(&[b"ERR ", &e[..]].concat());
    }
    srv.dirty += 1;
    c.add_reply_ok();
}

/// libraryJoin: add the libraries of `src` to `dst`. Without `replace` a
/// library that exists is an error; a function name held by a library
/// that stays is always one. Checked before anything is linked.
fn library_join(
    dst: &mut Functions,
    src: &Functions,
    replace: bool,
    timeout: Duration,
) -> Result<(), Vec<u8>> {
    let dst_ctx = &dst.lib_ctx;
    for name in src.lib_ctx.libraries.keys() {
        if dst_ctx.libraries.contains_key(name) && !replace {
            return Err(err_with(b"Library ", name, b" already exists"));
        }
    }
    for li in src.lib_ctx.libraries.values() {
        for f in &li.functions {
            let owner = dst_ctx.functions.get(&f.name.to_ascii_lowercase());
            // A function of a library being replaced does not clash.
            if owner.is_some_and(|lib| !src.lib_ctx.libraries.contains_key(lib)) {
                return Err(err_with(b"Function ", &f.name, b" already exists"));
            }
        }
    }
    for li in src.lib_ctx.libraries.values() {
        // Compiled once already: it links the same way into dst's engine.
        functions_create_with_library_ctx(dst, &li.code, true, timeout)?;
    }
    Ok(())
}

/// FUNCTION STATS
// redis: functions.c functionStatsCommand
pub fn function_stats_command(srv: &mut Server, c: &mut Client) {
    if script::script_is_running(srv) && script::script_is_eval(srv) {
        return c.add_reply_error(script::SLOW_EVAL_ERR);
    }
    c.add_reply_map_len(2);
    c.add_reply_bulk(b"running_script");
    match script::script_running_info(srv) {
        None => c.add_reply_null(),
        Some((name, argv, duration_ms)) => {
            c.add_reply_map_len(3);
            c.add_reply_bulk(b"name");
            c.add_reply_bulk(&name);
            c.add_reply_bulk(b"command");
            c.add_reply_array_len(argv.len());
            for a in &argv {
                c.add_reply_bulk(a);
            }
            c.add_reply_bulk(b"duration_ms");
            c.add_reply_integer(duration_ms);
        }
    }
    // One engine, LUA, with its library and function counts.
    c.add_reply_bulk(b"engines");
    c.add_reply_map_len(1);
    c.add_reply_bulk(LUA_ENGINE_NAME.as_bytes());
    c.add_reply_map_len(2);
    c.add_reply_bulk(b"libraries_count");
    c.add_reply_integer(srv.functions.libraries_num() as i64);
    c.add_reply_bulk(b"functions_count");
    c.add_reply_integer(srv.functions.engine_functions_count() as i64);
}

/// FUNCTION KILL
// redis: functions.c functionKillCommand (scriptKill with is_eval = 0)
pub fn function_kill_command(srv: &mut Server, c: &mut Client) {
    script::script_kill(srv, c, false);
}

/// FUNCTION HELP
// redis: functions.c functionHelpCommand (without DUMP and RESTORE)
pub fn function_help_command(_srv: &mut Server, c: &mut Client) {
    c.add_reply_help("FUNCTION", FUNCTION_HELP);
}

const FUNCTION_HELP: &[&str] = &[
    "LOAD [REPLACE] <FUNCTION CODE>",
    "    Create a new library with the given library name and code.",
    "DELETE <LIBRARY NAME>",
    "    Delete the given library.",
    "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
    "    Return general information on all the libraries:",
    "    * Library name",
    "    * The engine used to run the Library",
    "    * Library description",
    "    * Functions list",
    "    * Library code (if WITHCODE is given)",
    "    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
    "STATS",
    "    Return information about the current function running:",
    "    * Function name",
    "    * Command used to run the function",
    "    * Duration in MS that the function is running",
    "    If no function is running, return nil",
    "    In addition, returns a list of available engines.",
    "KILL",
    "    Kill the current running function.",
    "FLUSH [ASYNC|SYNC]",
    "    Delete all the libraries.",
    "    When called without the optional mode argument, the behavior is determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the libraries.",
    "    * SYNC: Synchronously flush the libraries.",
    "DUMP",
    "    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
    "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
    "    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
    "    control how to handle existing libraries (default APPEND):",
    "    * FLUSH: delete all existing libraries.",
    "    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
    "    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
    "      libraries with the new libraries (notice that even on this option there is a chance of failure",
    "      in case of functions name collision with another library).",
];

// ---- FCALL / FCALL_RO ----

/// FCALL function numkeys [key [key ...]] [arg [arg ...]]
// redis: functions.c fcallCommand
pub fn fcall_command(srv: &mut Server, c: &mut Client) {
    fcall_command_generic(srv, c, false);
}

/// FCALL_RO function numkeys [key [key ...]] [arg [arg ...]]
// redis: functions.c fcallroCommand
pub fn fcallro_command(srv: &mut Server, c: &mut Client) {
    fcall_command_generic(srv, c, true);
}

/// fcallGetCommandFlags: FCALL's command flags as the function declares
/// them, for the checks processCommand makes before running it (CLIENT
/// PAUSE WRITE holds back FCALL of a function that may write, not of a
/// `no-writes` one). `cmd_flags` when the function does not exist.
// redis: functions.c fcallGetCommandFlags
pub fn fcall_get_command_flags(srv: &Server, argv: &[Bytes], cmd_flags: u64) -> u64 {
    match argv.get(1).and_then(|name| srv.functions.find(name)) {
        Some(f) => script::script_flags_to_cmd_flags(cmd_flags, f.flags),
        None => cmd_flags,
    }
}

/// fcallCommandGeneric: find the function, check numkeys, then run it
/// through the scripting core with the function's flags.
fn fcall_command_generic(srv: &mut Server, c: &mut Client, ro: bool) {
    // Functions feed MONITOR before the commands they run (FCALL has
    // CMD_SKIP_MONITOR so call() does not feed it a second time).
    if !srv.monitors.is_empty() {
        let argv = c.argv.clone();
        monitor::replication_feed_monitors(srv, c, c.db, &argv);
    }

    let Some(f) = srv.functions.find(c.arg(1)) else {
        return c.add_reply_error("ERR Function not found");
    };
    let (name, flags, function) = (f.name.clone(), f.flags, f.function.clone());
    let Some(numkeys) = storage::util::string2ll(c.arg(2)) else {
        return c.add_reply_error("ERR Bad number of keys provided");
    };
    if numkeys > (c.argc() - 3) as i64 {
        return c.add_reply_error("ERR Number of keys can't be greater than number of args");
    } else if numkeys < 0 {
        return c.add_reply_error("ERR Number of keys can't be negative");
    }
    let numkeys = numkeys as usize;
    let keys: Vec<Bytes> = c.argv[3..3 + numkeys].to_vec();
    let args: Vec<Bytes> = c.argv[3 + numkeys..].to_vec();

    let lua = srv.functions.engine.lua.clone();
    let Some(mut run) = script::script_prepare_for_run(srv, c, &name, flags, ro) else {
        return;
    };
    function_lua::lua_engine_call(srv, &mut run, &lua, &function, &keys, &args);
    script::script_reset_run(srv, c, run);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn md(payload: &str) -> Result<LibMetaData, String> {
        function_extract_lib_meta_data(&Bytes::copy_from_slice(payload.as_bytes()))
            .map_err(|e| String::from_utf8_lossy(&e).into_owned())
    }

    #[test]
    fn shebang_gives_engine_name_and_code_from_its_newline() {
        let m = md("#!lua name=mylib\nreturn 1").unwrap();
        assert_eq!(&m.engine[..], b"lua");
        assert_eq!(&m.name[..], b"mylib");
        // The code keeps the newline: errors count the shebang as line 1.
        assert_eq!(&m.code[..], b"\nreturn 1");
        assert_eq!(&md("#!LUA NAME=\"quoted\"\n").unwrap().name[..], b"quoted");
    }

    #[test]
    fn shebang_errors() {
        assert_eq!(md("return 1").unwrap_err(), "Missing library metadata");
        assert_eq!(md("#!lua name=x").unwrap_err(), "Invalid library metadata");
        assert_eq!(
            md("#!lua name=\"x\n").unwrap_err(),
            "Invalid library metadata"
        );
        assert_eq!(md("#!lua\n").unwrap_err(), "Library name was not given");
        assert_eq!(
            md("#!lua name=a name=b\n").unwrap_err(),
            "Invalid metadata value, name argument was given multiple times"
        );
        assert_eq!(
            md("#!lua x=1\n").unwrap_err(),
            "Invalid metadata value given: x=1"
        );
    }

    #[test]
    fn names_are_letters_digits_and_underscores() {
        assert!(functions_verify_name(b"my_lib_2"));
        assert!(!functions_verify_name(b""));
        assert!(!functions_verify_name(b"my-lib"));
        assert!(!functions_verify_name(b"caf\xc3\xa9"));
    }

    #[test]
    fn declared_flags_replace_fcalls_write_flag() {
        use crate::commands::{CMD_DENYOOM, CMD_NOSCRIPT, CMD_WRITE};
        let base = CMD_NOSCRIPT;
        assert_eq!(
            script::script_flags_to_cmd_flags(base, 0),
            base | CMD_WRITE | CMD_DENYOOM
        );
        assert_eq!(
            script::script_flags_to_cmd_flags(base, script::SCRIPT_FLAG_NO_WRITES),
            base
        );
    }

    #[test]
    fn load_registers_and_replace_is_atomic() {
        let mut f = Functions::new();
        let t = Duration::from_millis(LOAD_TIMEOUT_MS);
        let code = |s: &str| Bytes::copy_from_slice(s.as_bytes());
        let lib = code("#!lua name=l\nredis.register_function('f', function() return 1 end)");
        assert_eq!(
            &functions_create_with_library_ctx(&mut f, &lib, false, t).unwrap()[..],
            b"l"
        );
        assert!(f.find(b"F").is_some());
        let bad = code("#!lua name=l\nredis.register_function('g', function() end)\nx()");
        assert!(functions_create_with_library_ctx(&mut f, &bad, true, t).is_err());
        assert!(f.find(b"f").is_some() && f.find(b"g").is_none());
        assert_eq!((f.libraries_num(), f.functions_num()), (1, 1));
    }
}
