//! The scripting core shared by EVAL and FCALL (Redis's script.c).
//!
//! Whatever language a script is written in, running it looks the same from
//! the server's side, and this file holds that part:
//!
//! * `script_prepare_for_run` checks the script's flags against the caller
//!   (EVAL_RO / FCALL_RO, `no-writes`...), fills in the run context and
//!   installs it as THE running script (`srv.script_run_ctx`, Redis's
//!   `curr_run_ctx`). `script_reset_run` hands the reply to the caller and
//!   uninstalls it. Between the two, the engine (script_lua.rs) runs code.
//! * `script_call` is what `redis.call` does once the arguments are bytes:
//!   look the command up, check arity and the script rules (no `noscript`
//!   commands, no writes from a read-only script), then `server::call` on
//!   the script's fake client, so MONITOR, SLOWLOG and commandstats see the
//!   command like any other.
//! * `script_interrupt` is the busy-script machinery, called from the Lua
//!   instruction-count hook: past `busy-reply-threshold` the script is
//!   marked timed out and, from then on, every hook call lets the event loop
//!   serve OTHER clients (who mostly get `-BUSY`, but may send SCRIPT KILL,
//!   FUNCTION KILL or SHUTDOWN NOSAVE). `script_kill` answers those.
//!
//! The running script's caller is out of `srv.clients` while its command runs
//! (see networking.rs handle_client_readable), so the run context cannot point at it: the script's reply is
//! collected in the context (`reply`) and copied to the caller by
//! `script_reset_run`, which receives the caller again.

use std::time::Instant;

use bytes::{Bytes, BytesMut};
use mio::Token;
use protocol::Resp;

use crate::commands::{CMD_MAY_REPLICATE, CMD_NOSCRIPT, CMD_WRITE};
use crate::log::{server_log, LogLevel};
use crate::networking::{Client, CLIENT_DENY_BLOCKING, CLIENT_MULTI, CLIENT_SCRIPT};
use crate::server::{self, Server};

// Run-context flags (script.h SCRIPT_*).
/// The script already ran a write command: it can no longer be killed.
pub const SCRIPT_WRITE_DIRTY: u32 = 1 << 0;
/// SCRIPT KILL / FUNCTION KILL asked for it to stop.
pub const SCRIPT_KILLED: u32 = 1 << 3;
/// Ran past busy-reply-threshold: other clients are served (with BUSY).
pub const SCRIPT_TIMEDOUT: u32 = 1 << 4;
/// The script may exceed maxmemory (`allow-oom`).
pub const SCRIPT_ALLOW_OOM: u32 = 1 << 5;
/// Write commands are refused (`no-writes`, EVAL_RO, FCALL_RO).
pub const SCRIPT_READ_ONLY: u32 = 1 << 6;
/// Running EVAL/EVALSHA (not FCALL): picks the BUSY / KILL wording.
pub const SCRIPT_EVAL_MODE: u32 = 1 << 8;

// Script flags, declared with `#!lua flags=...` or by register_function
// (script.h SCRIPT_FLAG_*).
pub const SCRIPT_FLAG_NO_WRITES: u64 = 1 << 0;
pub const SCRIPT_FLAG_ALLOW_OOM: u64 = 1 << 1;
pub const SCRIPT_FLAG_ALLOW_STALE: u64 = 1 << 2;
pub const SCRIPT_FLAG_NO_CLUSTER: u64 = 1 << 3;
/// An EVAL script without a shebang: the pre-7.0 rules apply (no flags are
/// checked before it runs).
pub const SCRIPT_FLAG_EVAL_COMPAT_MODE: u64 = 1 << 4;
pub const SCRIPT_FLAG_ALLOW_CROSS_SLOT: u64 = 1 << 5;

/// scripts_flags_def: the flag names, in Redis's order (FUNCTION LIST shows
/// them in this order).
pub const SCRIPTS_FLAGS_DEF: &[(u64, &str)] = &[
    (SCRIPT_FLAG_NO_WRITES, "no-writes"),
    (SCRIPT_FLAG_ALLOW_OOM, "allow-oom"),
    (SCRIPT_FLAG_ALLOW_STALE, "allow-stale"),
    (SCRIPT_FLAG_NO_CLUSTER, "no-cluster"),
    (SCRIPT_FLAG_ALLOW_CROSS_SLOT, "allow-cross-slot-keys"),
];

/// shared.slowevalerr / shared.slowscripterr: what other clients get while
/// a timed-out EVAL / function runs.
pub const SLOW_EVAL_ERR: &str =
    "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";
pub const SLOW_SCRIPT_ERR: &str =
    "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.";

/// The poller token of the scripts' fake client. It never connects, but
/// MONITOR compares tokens, so it gets one no connection can have.
pub const SCRIPT_CLIENT_TOKEN: Token = Token(usize::MAX - 1);

/// scriptInterrupt's answer.
#[derive(Debug, PartialEq, Eq)]
pub enum ScriptInterrupt {
    Continue,
    Kill,
}

/// scriptRunCtx: everything about the script that runs right now.
pub struct ScriptRunCtx {
    /// Shown in errors ("script: <name>") and logs: the sha for EVAL, the
    /// function name for FCALL.
    pub funcname: Bytes,
    /// The fake client the script's commands run through (CLIENT_SCRIPT,
    /// CLIENT_DENY_BLOCKING). `None` only while one of them runs.
    pub c: Option<Box<Client>>,
    /// The caller: id, protocol and the command it sent (FUNCTION STATS).
    pub original_client_id: u64,
    pub original_client_resp: Resp,
    pub original_argv: Vec<Bytes>,
    /// SCRIPT_* flags above.
    pub flags: u32,
    /// redis.set_repl(): where the script's next commands propagate
    /// (PROPAGATE_AOF | PROPAGATE_REPL by default; scriptCall applies it).
    pub repl_flags: i32,
    pub start_time: Instant,
    /// The script's reply, in the caller's protocol, and the error codes it
    /// holds; copied to the caller by `script_reset_run`.
    pub reply: BytesMut,
    pub reply_errors: Vec<Bytes>,
    /// The reply is an error counted in errorstats already (see
    /// `ReplyTarget::failed_without_stats`).
    pub reply_failed_without_stats: bool,
    /// The caller's CLIENT INFO line, for ACL LOG entries of denied
    /// redis.call()s (Redis logs the script's caller). Only taken when the
    /// caller's user could be denied anything.
    pub caller_info: Option<Vec<u8>>,
}

/// Proof that `script_prepare_for_run` succeeded: pass it to the engine's
/// call and give it back to `script_reset_run`. The state itself lives in
/// `srv.script_run_ctx`, where SCRIPT KILL (run by another client from
/// inside the busy hook) can reach it.
pub struct ScriptRun {
    _private: (),
}

/// The fake client scripts use, created once and kept (Redis creates
/// lctx.lua_client at start-up).
fn take_script_client(srv: &mut Server) -> Box<Client> {
    if let Some(c) = srv.script_client.take() {
        return c;
    }
    let id = srv.next_client_id;
    srv.next_client_id += 1;
    let mut c = Box::new(Client::new_fake(id, SCRIPT_CLIENT_TOKEN));
    c.flags |= CLIENT_SCRIPT | CLIENT_DENY_BLOCKING;
    // MONITOR shows script commands as `[<db> lua]`.
    c.addr = "lua".to_string();
    c
}

/// scriptPrepareForRun: check the script's flags against the caller, then
/// install the run context. On refusal the error is already in the
/// caller's reply and None is returned.
pub fn script_prepare_for_run(
    srv: &mut Server,
    caller: &mut Client,
    funcname: &[u8],
    script_flags: u64,
    ro: bool,
) -> Option<ScriptRun> {
    if srv.script_run_ctx.is_some() {
        // Cannot happen: scripts cannot call EVAL/FCALL (noscript), and
        // while one runs other clients only get BUSY.
        caller.add_reply_error("ERR a script is already running");
        return None;
    }
    // A replica whose link is down, with replica-serve-stale-data no: a
    // script runs only when it declared allow-stale (a script without a
    // shebang gets the plain MASTERDOWN, as any command would).
    let running_stale = srv.repl.masterhost.is_some()
        && srv.repl.repl_state != crate::replication::ReplState::Connected
        && srv.config.get_string("replica-serve-stale-data").as_deref() == Some("no");
    let obey_client = crate::networking::must_obey_client(caller);
    if script_flags & SCRIPT_FLAG_EVAL_COMPAT_MODE != 0 {
        if running_stale {
            caller.add_reply_error(crate::replication::replica::MASTERDOWN_ERR);
            return None;
        }
    } else {
        if running_stale && script_flags & SCRIPT_FLAG_ALLOW_STALE == 0 {
            caller.add_reply_error(
                "MASTERDOWN Link with MASTER is down, replica-serve-stale-data is set to 'no' and 'allow-stale' flag is not set on the script.",
            );
            return None;
        }
        if script_flags & SCRIPT_FLAG_NO_WRITES == 0 {
            // A script that may write: not on a read-only replica, not
            // while the disk fails, not through *_ro, not without enough
            // good replicas.
            if srv.repl.masterhost.is_some()
                && srv.config.get_string("replica-read-only").as_deref() == Some("yes")
                && !obey_client
            {
                caller.add_reply_error(
                    "READONLY Can not run script with write flag on readonly replica",
                );
                return None;
            }
            if !obey_client {
                if crate::rdb::write_commands_denied_by_disk_error(srv) {
                    caller.add_reply_error(
                        "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. Writable scripts are blocked. Use 'no-writes' flag for read only scripts.",
                    );
                    return None;
                }
                if crate::aof::write_commands_denied_by_disk_error(srv).is_some() {
                    let e = crate::aof::strerror_code(srv.aof.last_write_errno);
                    caller.add_reply_error(&format!(
                        "MISCONF Redis is configured to persist data to AOF, but it's currently unable to persist to disk. Writable scripts are blocked. Use 'no-writes' flag for read only scripts. AOF error: {e}"
                    ));
                    return None;
                }
            }
            if ro {
                caller.add_reply_error(
                    "ERR Can not execute a script with write flag using *_ro command.",
                );
                return None;
            }
            if !crate::replication::master::check_good_replicas_status(srv) {
                caller.add_reply_error(crate::replication::master::NOREPLICAS_ERR);
                return None;
            }
        }
    }
    // OOM at command start: a script must declare allow-oom (no-writes
    // implies it) to run at all (evict.rs).
    if script_flags & SCRIPT_FLAG_EVAL_COMPAT_MODE == 0
        && srv.pre_command_oom_state
        && srv.config.maxmemory != 0
        && script_flags & (SCRIPT_FLAG_ALLOW_OOM | SCRIPT_FLAG_NO_WRITES) == 0
    {
        caller.add_reply_error(
            "OOM allow-oom flag is not set on the script, can not run it when used memory > 'maxmemory'",
        );
        return None;
    }

    // The script is propagated by its effects (its write commands, wrapped
    // in MULTI/EXEC when there are several), never as EVAL/FCALL itself.
    crate::propagate::prevent_command_propagation(srv);
    let mut sc = take_script_client(srv);
    sc.db = caller.db;
    sc.resp = Resp::V2; // scripts start in RESP2; redis.setresp changes it
    sc.reply.clear();
    sc.errors.clear();
    // The script's commands run as the caller's ACL user.
    sc.user = caller.user.clone();
    let caller_info = (!crate::acl::user_is_unrestricted(srv, &caller.user))
        .then(|| crate::networking::client_info_string(caller));
    if caller.has_flag(CLIENT_MULTI) {
        sc.flags |= CLIENT_MULTI;
    }

    let mut flags = 0;
    if ro
        || (script_flags & SCRIPT_FLAG_EVAL_COMPAT_MODE == 0
            && script_flags & SCRIPT_FLAG_NO_WRITES != 0)
    {
        flags |= SCRIPT_READ_ONLY;
    }
    if script_flags & SCRIPT_FLAG_EVAL_COMPAT_MODE == 0 && script_flags & SCRIPT_FLAG_ALLOW_OOM != 0
    {
        flags |= SCRIPT_ALLOW_OOM;
    }
    srv.script_run_ctx = Some(Box::new(ScriptRunCtx {
        funcname: Bytes::copy_from_slice(funcname),
        c: Some(sc),
        original_client_id: caller.id,
        original_client_resp: caller.resp,
        original_argv: caller.argv.clone(),
        flags,
        repl_flags: PROPAGATE_AOF | PROPAGATE_REPL,
        start_time: Instant::now(),
        reply: BytesMut::new(),
        reply_errors: Vec::new(),
        reply_failed_without_stats: false,
        caller_info,
    }));
    Some(ScriptRun { _private: () })
}

/// PROPAGATE_AOF / PROPAGATE_REPL: redis.set_repl's flags (REPL_AOF,
/// REPL_REPLICA; REPL_ALL is both).
pub const PROPAGATE_AOF: i32 = 1;
pub const PROPAGATE_REPL: i32 = 2;

/// scriptResetRun: give the script's reply to its caller, keep the fake
/// client for the next script and uninstall the run context.
pub fn script_reset_run(srv: &mut Server, caller: &mut Client, run: ScriptRun) {
    let ScriptRun { _private: () } = run;
    let Some(mut ctx) = srv.script_run_ctx.take() else {
        return;
    };
    if ctx.flags & SCRIPT_TIMEDOUT != 0 {
        server_log(
            LogLevel::Warning,
            "Slow script finished: the server serves all clients again.",
        );
    }
    caller.reply.extend_from_slice(&ctx.reply);
    caller.errors.append(&mut ctx.reply_errors);
    // afterErrorReply with ERR_REPLY_FLAG_NO_STATS_UPDATE: no errorstats
    // entry, but EVAL / FCALL itself counts as a failed call.
    if ctx.reply_failed_without_stats {
        if let Ok(Some(id)) = srv.commands.lookup_argv(&caller.argv) {
            srv.commands.get_mut(id).stats.failed_calls += 1;
        }
    }
    if let Some(mut sc) = ctx.c.take() {
        sc.flags &= !CLIENT_MULTI;
        sc.reply.clear();
        sc.argv.clear();
        srv.script_client = Some(sc);
    }
}

/// scriptIsRunning.
pub fn script_is_running(srv: &Server) -> bool {
    srv.script_run_ctx.is_some()
}

/// scriptIsTimedout: a script runs past busy-reply-threshold, so the loop
/// serves other clients from inside it (and rejects most commands).
pub fn script_is_timedout(srv: &Server) -> bool {
    srv.script_run_ctx
        .as_ref()
        .is_some_and(|ctx| ctx.flags & SCRIPT_TIMEDOUT != 0)
}

/// scriptIsEval: the running script is an EVAL (not a function).
pub fn script_is_eval(srv: &Server) -> bool {
    srv.script_run_ctx
        .as_ref()
        .is_some_and(|ctx| ctx.flags & SCRIPT_EVAL_MODE != 0)
}

/// The BUSY error for the running script's kind (processCommand's
/// rejection of commands without allow-busy).
pub fn script_busy_error(srv: &Server) -> &'static str {
    if script_is_eval(srv) {
        SLOW_EVAL_ERR
    } else {
        SLOW_SCRIPT_ERR
    }
}

/// FUNCTION STATS' running_script: name, the caller's command, and how
/// long it has run in milliseconds.
pub fn script_running_info(srv: &Server) -> Option<(Bytes, Vec<Bytes>, i64)> {
    let ctx = srv.script_run_ctx.as_ref()?;
    Some((
        ctx.funcname.clone(),
        ctx.original_argv.clone(),
        ctx.start_time.elapsed().as_millis() as i64,
    ))
}

/// scriptInterrupt: called by the engine's hook every so many instructions.
/// Past busy-reply-threshold the script is marked timed out (logged once);
/// from then on every call serves the other clients' events. Returns Kill
/// once SCRIPT KILL / FUNCTION KILL asked for it.
pub fn script_interrupt(srv: &mut Server) -> ScriptInterrupt {
    let Some(ctx) = srv.script_run_ctx.as_mut() else {
        return ScriptInterrupt::Continue;
    };
    if ctx.flags & SCRIPT_TIMEDOUT == 0 {
        let elapsed = ctx.start_time.elapsed().as_millis() as i64;
        if elapsed < srv.config.busy_reply_threshold {
            return ScriptInterrupt::Continue;
        }
        server_log(
            LogLevel::Warning,
            &format!(
                "Slow script detected: still in execution after {} milliseconds. You can try killing the script using the {} command. Script name is: {}.",
                elapsed,
                if ctx.flags & SCRIPT_EVAL_MODE != 0 { "SCRIPT KILL" } else { "FUNCTION KILL" },
                String::from_utf8_lossy(&ctx.funcname)
            ),
        );
        // enterScriptTimedoutMode. The caller is out of srv.clients while
        // its command runs, so the loop cannot touch it (protectClient).
        ctx.flags |= SCRIPT_TIMEDOUT;
    }
    crate::networking::process_events_while_blocked(srv);
    match srv.script_run_ctx.as_ref() {
        Some(ctx) if ctx.flags & SCRIPT_KILLED != 0 => ScriptInterrupt::Kill,
        _ => ScriptInterrupt::Continue,
    }
}

/// scriptKill: SCRIPT KILL (`is_eval`) or FUNCTION KILL.
pub fn script_kill(srv: &mut Server, c: &mut Client, is_eval: bool) {
    let Some(ctx) = srv.script_run_ctx.as_mut() else {
        return c.add_reply_error("NOTBUSY No scripts in execution right now.");
    };
    if ctx.flags & SCRIPT_WRITE_DIRTY != 0 {
        return c.add_reply_error(
            "UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.",
        );
    }
    let eval_mode = ctx.flags & SCRIPT_EVAL_MODE != 0;
    if is_eval && !eval_mode {
        return c.add_reply_error(SLOW_SCRIPT_ERR); // SCRIPT KILL on a function
    }
    if !is_eval && eval_mode {
        return c.add_reply_error(SLOW_EVAL_ERR); // FUNCTION KILL on an EVAL
    }
    ctx.flags |= SCRIPT_KILLED;
    c.add_reply_ok();
}

/// scriptCall: run one command for the script (redis.call / redis.pcall),
/// through the fake client. Ok(reply bytes, in the fake client's protocol)
/// or Err(error text without the leading '-', e.g. "This Redis command is
/// not allowed from script") when the script rules refuse the command. The
/// reply bytes are only valid until the next call (the buffer is reused).
pub fn script_call<'a>(
    srv: &mut Server,
    sc: &'a mut Client,
    argv: Vec<Bytes>,
) -> Result<&'a [u8], String> {
    sc.reply.clear();
    sc.argv = argv;
    let Some(ctx_flags) = srv.script_run_ctx.as_ref().map(|ctx| ctx.flags) else {
        return Err("redis.call/pcall can only be called inside a script invocation".into());
    };
    // lookupCommand: a container's unknown subcommand is unknown too.
    let id = match srv.commands.lookup_argv(&sc.argv) {
        Ok(Some(id)) => Some(id),
        _ => None,
    };
    // scriptVerifyCommandArity
    let Some(id) = id else {
        return reject(srv, None, "Unknown Redis command called from script");
    };
    let (arity, flags) = {
        let spec = srv.commands.get(id).spec;
        (spec.arity, spec.flags)
    };
    let argc = sc.argc() as i32;
    if (arity > 0 && arity != argc) || argc < -arity {
        return reject(
            srv,
            Some(id),
            "Wrong number of args calling Redis command from script",
        );
    }
    if !srv.script_disable_deny_script && flags & CMD_NOSCRIPT != 0 {
        return reject(
            srv,
            Some(id),
            "This Redis command is not allowed from script",
        );
    }
    // scriptVerifyAllowStale: an allow-stale script on a replica whose link
    // is down (replica-serve-stale-data no) may only run `stale` commands.
    if crate::replication::replica::replica_denies_stale(srv, flags) {
        return reject(
            srv,
            Some(id),
            "Can not execute the command on a stale replica",
        );
    }
    // scriptVerifyACL: the caller's user must be allowed the command, its
    // keys and channels; a denial is logged with the `lua` context.
    if let Err((why, pos)) = crate::acl::acl_check_all_perm(srv, sc, id) {
        let fullname = srv.commands.get(id).fullname;
        crate::acl::add_acl_log_entry_at(srv, sc, why, crate::acl::AclLogCtx::Lua, pos, fullname);
        let msg = format!(
            "The user executing the script {}",
            crate::acl::get_acl_error_message(why)
        );
        return reject(srv, Some(id), &msg);
    }
    // scriptVerifyWriteCommandAllow: may-replicate commands count as writes.
    if ctx_flags & SCRIPT_READ_ONLY != 0 && flags & (CMD_WRITE | CMD_MAY_REPLICATE) != 0 {
        return reject(
            srv,
            Some(id),
            "Write commands are not allowed from read-only scripts.",
        );
    }
    // scriptVerifyWriteCommandAllow: a read-only replica runs its master's
    // scripts only (replication/replica.rs).
    if crate::replication::replica::replica_denies_script_write(srv, flags) {
        srv.stats.total_error_replies += 1;
        *srv.stats.errors.entry("READONLY".to_string()).or_insert(0) += 1;
        srv.commands.get_mut(id).stats.rejected_calls += 1;
        return Err(format!("-{}", crate::replication::replica::READONLY_ERR));
    }
    // ... for a write before the script's first one, a disk error
    // (stop-writes-on-bgsave-error, a failed AOF write): MISCONF, as for a
    // client (writeCommandsDeniedByDiskError) ...
    if flags & CMD_WRITE != 0 && ctx_flags & SCRIPT_WRITE_DIRTY == 0 {
        let misconf = if crate::rdb::write_commands_denied_by_disk_error(srv) {
            Some(crate::rdb::MISCONF_ERR.to_string())
        } else {
            crate::aof::write_commands_denied_by_disk_error(srv)
        };
        if let Some(msg) = misconf {
            srv.stats.total_error_replies += 1;
            *srv.stats.errors.entry("MISCONF".to_string()).or_insert(0) += 1;
            srv.commands.get_mut(id).stats.rejected_calls += 1;
            return Err(format!("-{msg}"));
        }
    }
    // ... and not enough good replicas (min-replicas-to-write):
    // NOREPLICAS, as for a client.
    if flags & CMD_WRITE != 0
        && ctx_flags & SCRIPT_WRITE_DIRTY == 0
        && !crate::replication::master::check_good_replicas_status(srv)
    {
        srv.stats.total_error_replies += 1;
        *srv.stats
            .errors
            .entry("NOREPLICAS".to_string())
            .or_insert(0) += 1;
        srv.commands.get_mut(id).stats.rejected_calls += 1;
        return Err(format!("-{}", crate::replication::master::NOREPLICAS_ERR));
    }
    // scriptVerifyOOM: over maxmemory at command start, a script without
    // allow-oom may not run a deny-oom command before its first write
    // (after one it cannot stop half-way).
    if ctx_flags & SCRIPT_ALLOW_OOM == 0
        && srv.config.maxmemory != 0
        && ctx_flags & SCRIPT_WRITE_DIRTY == 0
        && srv.pre_command_oom_state
        && flags & crate::commands::CMD_DENYOOM != 0
    {
        srv.stats.total_error_replies += 1;
        *srv.stats.errors.entry("OOM".to_string()).or_insert(0) += 1;
        srv.commands.get_mut(id).stats.rejected_calls += 1;
        return Err("-OOM command not allowed when used memory > 'maxmemory'.".into());
    }
    if flags & CMD_WRITE != 0 {
        if let Some(ctx) = srv.script_run_ctx.as_mut() {
            ctx.flags |= SCRIPT_WRITE_DIRTY;
        }
    }
    // redis.set_repl(): the command goes only where the script allows.
    let repl_flags = srv.script_run_ctx.as_ref().map_or(0, |ctx| ctx.repl_flags);
    let mut strip = 0;
    if repl_flags & PROPAGATE_AOF == 0 {
        strip |= crate::propagate::PROPAGATE_AOF;
    }
    if repl_flags & PROPAGATE_REPL == 0 {
        strip |= crate::propagate::PROPAGATE_REPL;
    }
    srv.propagate.next_call_strip = strip;
    server::call(srv, sc, id);
    sc.argv.clear();
    Ok(sc.reply.make_contiguous())
}

/// The error path of scriptCall: count the error and the rejected call as
/// Redis does (afterErrorReply, incrCommandStatsOnError).
fn reject<T>(srv: &mut Server, id: Option<crate::commands::CmdId>, msg: &str) -> Result<T, String> {
    srv.stats.total_error_replies += 1;
    *srv.stats.errors.entry("ERR".to_string()).or_insert(0) += 1;
    if let Some(id) = id {
        srv.commands.get_mut(id).stats.rejected_calls += 1;
    }
    Err(msg.to_string())
}

/// scriptFlagsToCmdFlags: a script that declared its flags replaces the
/// command's write / deny-oom / stale flags with what it declared.
// redis: script.c scriptFlagsToCmdFlags
pub fn script_flags_to_cmd_flags(cmd_flags: u64, script_flags: u64) -> u64 {
    use crate::commands::{CMD_DENYOOM, CMD_MAY_REPLICATE, CMD_STALE, CMD_WRITE};
    let mut flags = cmd_flags & !(CMD_STALE | CMD_DENYOOM | CMD_WRITE);
    // no-writes implies allow-oom.
    if script_flags & (SCRIPT_FLAG_ALLOW_OOM | SCRIPT_FLAG_NO_WRITES) == 0 {
        flags |= CMD_DENYOOM;
    }
    if script_flags & SCRIPT_FLAG_NO_WRITES == 0 {
        flags |= CMD_WRITE;
    }
    if script_flags & SCRIPT_FLAG_ALLOW_STALE != 0 {
        flags |= CMD_STALE;
    }
    // The declared flags say whether it writes: may-replicate is moot.
    flags & !CMD_MAY_REPLICATE
}
