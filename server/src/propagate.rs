//! Command propagation: how a write leaves the server (the propagation
//! part of Redis's server.c: alsoPropagate, propagateNow,
//! propagatePendingCommands, and db.c propagateDeletion).
//!
//! Every change to the dataset reaches the AOF (and, once replication
//! exists, the replicas) through this one path, as Redis 7.0 sends it:
//!
//! - `call()` compares `srv.dirty` before and after the handler. A command
//!   that changed something is queued here with `also_propagate` as its
//!   *effective* argv: handlers rewrite relative or random commands into
//!   deterministic ones first (`Client::rewrite_client_command_vector`):
//!   SET EX -> SET PXAT, EXPIRE -> PEXPIREAT, SPOP -> SREM, INCRBYFLOAT ->
//!   SET KEEPTTL, BLPOP -> LPOP, XADD * -> XADD <id>...
//! - Side effects are queued too: a key found expired during the command
//!   is queued as DEL (UNLINK with lazyfree-lazy-expire) *before* the
//!   command itself, so a reader of the AOF sees the deletion first.
//! - Nothing is written while commands nest (EXEC, scripts). When the
//!   outermost `call()` returns, `propagate_pending_commands` emits the
//!   queue: one op as it is, several ops wrapped in MULTI ... EXEC so a
//!   transaction or a script that wrote twice stays atomic for the reader.
//!   EXEC, EVAL and FCALL are never propagated themselves (their effects
//!   are).
//! - Deletions made outside any command (the active expiry cycle,
//!   evictions) are emitted without MULTI (`propagate_no_multi`).
//! - `propagate_now` is the single exit: it feeds the AOF
//!   (`aof::feed_append_only_file`, which adds SELECT when the db changes)
//!   and feeds the replicas and the backlog (`PROPAGATE_REPL`:
//!   replication/master.rs `replication_feed_slaves`, which adds SELECT).
//!
//! Breakpoint on `propagate_now` to see every byte of the stream.

use bytes::Bytes;

use crate::server::Server;

/// PROPAGATE_AOF / PROPAGATE_REPL: where an op goes (a bit set).
pub const PROPAGATE_NONE: u8 = 0;
pub const PROPAGATE_AOF: u8 = 1;
pub const PROPAGATE_REPL: u8 = 2;

/// CLIENT_FORCE_AOF / CLIENT_FORCE_REPL / CLIENT_PREVENT_*_PROP: what the
/// running command asked for about its own propagation. Redis keeps these
/// in the client's flags; here they belong to the running `call()` and are
/// saved and restored around nested calls (`PropagateState::call_flags`).
pub const CALL_FORCE_AOF: u8 = 1 << 0;
pub const CALL_FORCE_REPL: u8 = 1 << 1;
pub const CALL_PREVENT_AOF_PROP: u8 = 1 << 2;
pub const CALL_PREVENT_REPL_PROP: u8 = 1 << 3;
pub const CALL_PREVENT_PROP: u8 = CALL_PREVENT_AOF_PROP | CALL_PREVENT_REPL_PROP;

/// redisOp: one command waiting to be propagated.
#[derive(Debug, Clone)]
pub struct RedisOp {
    pub dbid: usize,
    pub argv: Vec<Bytes>,
    pub target: u8,
}

/// The propagation state (server.also_propagate, server.in_nested_call,
/// server.propagate_no_multi).
#[derive(Debug, Default)]
pub struct PropagateState {
    /// Ops queued during the current execution unit.
    pub also_propagate: Vec<RedisOp>,
    /// How deep `call()` is nested (0: no command runs).
    pub in_nested_call: u32,
    /// The running call's CALL_* flags.
    pub call_flags: u8,
    /// Replication's switch: whether PROPAGATE_REPL ops have somewhere to
    /// go: true while a replication backlog exists (master.rs creates it
    /// with the first replica and frees it after repl-backlog-ttl).
    pub repl_enabled: bool,
    /// The targets the next `call()` may not propagate its own command to
    /// (the CMD_CALL_PROPAGATE_AOF / _REPL bits Redis's scriptCall leaves
    /// out of call_flags after `redis.set_repl()`): taken by that call
    /// before its handler runs, so commands nested in it are not affected.
    pub next_call_strip: u8,
}

/// shouldPropagate: is anybody listening for this target? Nothing is
/// propagated while the dataset is being loaded (the AOF replays itself
/// through `call()`).
fn should_propagate(srv: &Server, target: u8) -> bool {
    if target == PROPAGATE_NONE || srv.loading.loading {
        return false;
    }
    (target & PROPAGATE_AOF != 0 && srv.aof.state != crate::aof::AofStatus::Off)
        || (target & PROPAGATE_REPL != 0 && srv.propagate.repl_enabled)
}

/// alsoPropagate: queue `argv` for propagation into `dbid` once the
/// current execution unit ends.
pub fn also_propagate(srv: &mut Server, dbid: usize, argv: Vec<Bytes>, target: u8) {
    if !should_propagate(srv, target) {
        return;
    }
    srv.propagate
        .also_propagate
        .push(RedisOp { dbid, argv, target });
}

/// forceCommandPropagation: propagate the running command even if it did
/// not change the dataset (FLUSHALL on an empty server must still reach
/// the AOF and the replicas).
pub fn force_command_propagation(srv: &mut Server, target: u8) {
    if target & PROPAGATE_AOF != 0 {
        srv.propagate.call_flags |= CALL_FORCE_AOF;
    }
    if target & PROPAGATE_REPL != 0 {
        srv.propagate.call_flags |= CALL_FORCE_REPL;
    }
}

/// preventCommandPropagation: the running command propagates itself with
/// `also_propagate` (SPOP with a count) or through its effects (scripts).
pub fn prevent_command_propagation(srv: &mut Server) {
    srv.propagate.call_flags |= CALL_PREVENT_PROP;
}

/// propagateDeletion: a key expired or was evicted; replicas and the AOF
/// learn it as DEL, or UNLINK when it was freed lazily.
// redis: db.c propagateDeletion
pub fn propagate_deletion(srv: &mut Server, dbid: usize, key: &[u8], lazy: bool) {
    let cmd: &'static [u8] = if lazy { b"UNLINK" } else { b"DEL" };
    let argv = vec![Bytes::from_static(cmd), Bytes::copy_from_slice(key)];
    also_propagate(srv, dbid, argv, PROPAGATE_AOF | PROPAGATE_REPL);
}

/// propagateNow: the one exit of the stream.
fn propagate_now(srv: &mut Server, dbid: usize, argv: &[Bytes], target: u8) {
    if !should_propagate(srv, target) {
        return;
    }
    if srv.aof.state != crate::aof::AofStatus::Off && target & PROPAGATE_AOF != 0 {
        crate::aof::feed_append_only_file(srv, dbid, argv);
    }
    if srv.propagate.repl_enabled && target & PROPAGATE_REPL != 0 {
        crate::replication::master::replication_feed_slaves(srv, dbid as i64, argv);
    }
}

/// The part of `call()` that decides whether the command itself is
/// propagated: when it changed the dataset (`dirty`) or forced it, and did
/// not prevent it. EXEC never is: its commands were queued one by one.
pub fn call_propagate(
    srv: &mut Server,
    dbid: usize,
    argv: &[Bytes],
    dirty: bool,
    is_exec: bool,
    strip: u8,
) {
    let flags = srv.propagate.call_flags;
    if flags & CALL_PREVENT_PROP == CALL_PREVENT_PROP || is_exec {
        return;
    }
    let mut target = PROPAGATE_NONE;
    if dirty {
        target |= PROPAGATE_AOF | PROPAGATE_REPL;
    }
    if flags & CALL_FORCE_REPL != 0 {
        target |= PROPAGATE_REPL;
    }
    if flags & CALL_FORCE_AOF != 0 {
        target |= PROPAGATE_AOF;
    }
    if flags & CALL_PREVENT_REPL_PROP != 0 {
        target &= !PROPAGATE_REPL;
    }
    if flags & CALL_PREVENT_AOF_PROP != 0 {
        target &= !PROPAGATE_AOF;
    }
    // A script's redis.set_repl(): this command may reach only some targets.
    target &= !strip;
    // Checked before the copy: with no AOF and no replicas a write costs no
    // argv allocation (also_propagate would only drop it).
    if should_propagate(srv, target) {
        also_propagate(srv, dbid, argv.to_vec(), target);
    }
}

/// propagatePendingCommands: emit the queued ops, wrapped in MULTI/EXEC
/// when there are several of them (unless `no_multi`: deletions made by
/// the server itself, or a command that touches arbitrary keys).
pub fn propagate_pending_commands(srv: &mut Server, no_multi: bool) {
    if srv.propagate.also_propagate.is_empty() {
        return;
    }
    let ops = std::mem::take(&mut srv.propagate.also_propagate);
    let transaction = ops.len() > 1 && !no_multi;
    let both = PROPAGATE_AOF | PROPAGATE_REPL;
    if transaction {
        // MULTI goes to the first op's db, so its SELECT comes first.
        propagate_now(srv, ops[0].dbid, &[Bytes::from_static(b"MULTI")], both);
    }
    for op in &ops {
        propagate_now(srv, op.dbid, &op.argv, op.target);
    }
    if transaction {
        // EXEC in the last op's db: no SELECT between the last op and it.
        let last = ops[ops.len() - 1].dbid;
        propagate_now(srv, last, &[Bytes::from_static(b"EXEC")], both);
    }
}

/// Ops queued outside any command (lazy expiry met by the cron, the
/// active expiry cycle, evictions before a command): emitted each on its
/// own, before the next command or before the loop sleeps.
pub fn propagate_pending_outside_call(srv: &mut Server) {
    if srv.propagate.in_nested_call == 0 {
        propagate_pending_commands(srv, true);
    }
}

/// rewriteClientCommandVector (networking.c): the command propagates as
/// `argv` instead of what the client sent. The original stays in
/// `original_argv` for SLOWLOG and MONITOR, as in Redis.
pub fn rewrite_client_command_vector(c: &mut crate::networking::Client, argv: Vec<Bytes>) {
    let old = std::mem::replace(&mut c.argv, argv);
    if c.original_argv.is_none() {
        c.original_argv = Some(old);
    }
}

/// rewriteClientCommandArgument: replace (or append, at `argc`) one
/// argument of the propagated command.
pub fn rewrite_client_command_argument(c: &mut crate::networking::Client, i: usize, arg: Bytes) {
    if c.original_argv.is_none() {
        c.original_argv = Some(c.argv.clone());
    }
    if i < c.argv.len() {
        c.argv[i] = arg;
    } else {
        c.argv.push(arg);
    }
}

/// `DEL` or `UNLINK`, as a deletion made lazily or not propagates.
pub fn del_or_unlink(lazy: bool) -> Bytes {
    Bytes::from_static(if lazy { b"UNLINK" } else { b"DEL" })
}
