//! MODULE: the module subcommands of a server that has no module API
//! (Redis's module.c moduleCommand).
//!
//! redis-lite cannot load Redis modules: a module is a shared object
//! written against `RedisModule_*` functions that only Redis provides. The
//! commands still exist with Redis's arity, flags and replies, answering as
//! a Redis with no module loaded would: MODULE LIST is empty, UNLOAD finds
//! no such module, and LOAD / LOADEX fail with Redis's reply after logging
//! why (as Redis logs its dlopen error), so clients and tools probing for
//! modules see a Redis without any.
//!
//! LOAD, LOADEX and UNLOAD are protected commands: `enable-module-command`
//! (default `no`) must allow them first (server.rs processCommand).

use crate::log::{server_log, LogLevel};
use crate::networking::Client;
use crate::server::Server;

/// The reply of a failed LOAD or LOADEX.
const MODULE_LOAD_ERR: &str = "ERR Error loading the extension. Please check the server logs.";

/// MODULE HELP
// redis: module.c moduleCommand
pub fn module_help_command(_srv: &mut Server, c: &mut Client) {
    c.add_reply_help(
        "MODULE",
        &[
            "LIST",
            "    Return a list of loaded modules.",
            "LOAD <path> [<arg> ...]",
            "    Load a module library from <path>, passing to it any optional arguments.",
            "LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
            "    Load a module library from <path>, while passing it module configurations and optional arguments.",
            "UNLOAD <name>",
            "    Unload a module.",
        ],
    );
}

/// MODULE LIST
// redis: module.c addReplyLoadedModules
pub fn module_list_command(_srv: &mut Server, c: &mut Client) {
    // No module is ever loaded.
    c.add_reply_array_len(0);
}

/// moduleLoad, up to where a real module would be opened: Redis's
/// execute-permission check, then the log line dlopen's failure would
/// give. Always fails.
fn module_load(path: &[u8]) {
    let shown = String::from_utf8_lossy(path);
    let why = match std::fs::metadata(
        <std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(path),
    ) {
        Err(_) => format!("{shown}: cannot open shared object file: No such file or directory"),
        Ok(m) if !is_executable(&m) => "It does not have execute permissions.".to_string(),
        Ok(_) => "redis-lite has no module API (RedisModule_*)".to_string(),
    };
    server_log(
        LogLevel::Warning,
        &format!("Module {shown} failed to load: {why}"),
    );
}

fn is_executable(m: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    m.permissions().mode() & 0o111 != 0
}

/// MODULE LOAD path [arg [arg ...]]
// redis: module.c moduleCommand
pub fn module_load_command(_srv: &mut Server, c: &mut Client) {
    module_load(c.arg(2));
    c.add_reply_error(MODULE_LOAD_ERR);
}

/// parseLoadexArguments: CONFIG name value pairs, then an optional ARGS
/// followed by the module's arguments. Anything else is an error that is
/// only logged (the client sees the load error).
fn parse_loadex_arguments(args: &[bytes::Bytes]) -> bool {
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if a.eq_ignore_ascii_case(b"config") {
            if i + 2 >= args.len() {
                server_log(LogLevel::Notice, "CONFIG specified without name value pair");
                return false;
            }
            i += 3;
        } else if a.eq_ignore_ascii_case(b"args") {
            return true;
        } else {
            server_log(
                LogLevel::Notice,
                &format!(
                    "Syntax Error from arguments to loadex around {}.",
                    String::from_utf8_lossy(a)
                ),
            );
            return false;
        }
    }
    true
}

/// MODULE LOADEX path [CONFIG name value [CONFIG name value ...]] [ARGS args [args ...]]
// redis: module.c moduleCommand
pub fn module_loadex_command(_srv: &mut Server, c: &mut Client) {
    if parse_loadex_arguments(&c.argv[3..]) {
        module_load(c.arg(2));
    }
    c.add_reply_error(MODULE_LOAD_ERR);
}

/// MODULE UNLOAD name
// redis: module.c moduleCommand
pub fn module_unload_command(_srv: &mut Server, c: &mut Client) {
    // moduleUnload's ENOENT: there are no modules to unload.
    c.add_reply_error("ERR Error unloading module: no such module with that name");
}
