//! Transactions: MULTI, EXEC, DISCARD, WATCH, UNWATCH (redis: multi.c).
//!
//! MULTI does not lock anything. It only changes what `process_command`
//! does with the client's next commands: instead of running them it queues
//! them (`queue_multi_command`) and replies `+QUEUED`. EXEC then runs the
//! whole queue inside one command, so no other client's command can come in
//! between: atomicity is a free gift of the single thread, exactly as in
//! Redis. A pipeline gives no such promise; its commands are interleaved
//! with everybody else's at each 16 KB read.
//!
//! Two things make EXEC refuse to run:
//! - a command failed while it was being queued (unknown command, wrong
//!   arity, ...): `flag_transaction` sets CLIENT_DIRTY_EXEC and EXEC replies
//!   `-EXECABORT`;
//! - a key the client WATCHed was touched by anyone, itself included, after
//!   WATCH: `touch_watched_key` (called from `db::signal_modified_key` on
//!   every write, from expiry, FLUSHDB/FLUSHALL and SWAPDB) sets
//!   CLIENT_DIRTY_CAS and EXEC replies a null array. That is optimistic
//!   locking ("check and set").
//!
//! Bookkeeping, as in Redis: the server maps every watched key to the
//! (db, client) pairs watching it (`srv.watched_keys`, Redis's
//! `db->watched_keys`) and
//! each client lists what it watches (`c.watched_keys`), so a write finds the
//! watchers in O(1) and a client leaving unwatches in O(its keys).
//!
//! Inside EXEC the client carries CLIENT_DENY_BLOCKING: a blocking command
//! (BLPOP...) cannot park the client in the middle of a transaction, so it
//! answers at once as if its timeout had passed.

use bytes::Bytes;
use mio::Token;

use crate::commands::CmdId;
use crate::networking::{
    Client, CLIENT_DENY_BLOCKING, CLIENT_DIRTY_CAS, CLIENT_DIRTY_EXEC, CLIENT_EXECUTING_MULTI,
    CLIENT_MULTI,
};
use crate::server::{self, Server};

/// One queued command: what to run and with which arguments.
pub struct MultiCmd {
    pub id: CmdId,
    pub argv: Vec<Bytes>,
}

/// multiState: the commands queued since MULTI, and the union of their
/// flags (EXEC of a queue holding writes counts as a write for CLIENT PAUSE).
#[derive(Default)]
pub struct MultiState {
    pub commands: Vec<MultiCmd>,
    /// The union of the queued commands' flags (any of them writes...),
    /// and of their complements (cmd_inv_flags: any of them is *not*
    /// `stale`...), which EXEC is judged by.
    pub cmd_flags: u64,
    pub cmd_inv_flags: u64,
    /// Bytes of all queued arguments (CLIENT LIST multi-mem).
    pub argv_len_sums: usize,
}

/// watchedKey: one key a client watches. `expired` remembers that the key
/// had already expired (logically absent) when WATCH ran, so its later
/// deletion by the expiry machinery is not a change.
pub struct WatchedKey {
    pub db: usize,
    pub key: Bytes,
    pub expired: bool,
}

/// A touch of a watched key whose watcher was not in the client table
/// because it is the client running the current command (see
/// `apply_pending_touches`), with what the rule needs to know about the key
/// at the time of the touch.
pub struct PendingTouch {
    pub token: Token,
    pub db: usize,
    pub key: Bytes,
    pub kind: TouchKind,
}

/// Which of Redis's two touch rules applies.
pub enum TouchKind {
    /// touchWatchedKey: a write; `existed`: the key is in the db.
    Write { existed: bool },
    /// touchAllWatchedKeysInDb: a flush or a swap of the key's db.
    Flush(FlushTouch),
}

/// What touchAllWatchedKeysInDb knows about one key.
#[derive(Clone, Copy)]
pub struct FlushTouch {
    pub in_emptied: bool,
    pub in_replacement: bool,
    pub replacement_expired: bool,
}

/// multiStateMemOverhead: what the MULTI queue and the watched keys cost
/// the client (client eviction): the queued arguments' bytes, the queue
/// array, one entry per watched key (the key names are shared with the
/// db's watched_keys table, so Redis does not count them either).
pub fn multi_state_mem_overhead(c: &Client) -> usize {
    c.mstate.argv_len_sums
        + c.mstate.commands.capacity() * std::mem::size_of::<MultiCmd>()
        + c.watched_keys.capacity() * std::mem::size_of::<WatchedKey>()
}

/// MULTI
// redis: multi.c multiCommand
pub fn multi_command(_srv: &mut Server, c: &mut Client) {
    if c.has_flag(CLIENT_MULTI) {
        return c.add_reply_error("ERR MULTI calls can not be nested");
    }
    c.flags |= CLIENT_MULTI;
    c.add_reply_ok();
}

/// DISCARD
// redis: multi.c discardCommand
pub fn discard_command(srv: &mut Server, c: &mut Client) {
    if !c.has_flag(CLIENT_MULTI) {
        return c.add_reply_error("ERR DISCARD without MULTI");
    }
    discard_transaction(srv, c);
    c.add_reply_ok();
}

/// queueMultiCommand: called by `process_command` for every command that
/// arrives between MULTI and EXEC (except EXEC, DISCARD, MULTI, WATCH, QUIT
/// and RESET, which run at once). The caller replies +QUEUED.
pub fn queue_multi_command(c: &mut Client, id: CmdId, flags: u64) {
    // A transaction that will abort anyway keeps no more memory.
    if c.has_flag(CLIENT_DIRTY_CAS | CLIENT_DIRTY_EXEC) {
        return;
    }
    let argv = std::mem::take(&mut c.argv);
    c.mstate.argv_len_sums += argv.iter().map(|a| a.len()).sum::<usize>();
    c.mstate.cmd_flags |= flags;
    c.mstate.cmd_inv_flags |= !flags;
    c.mstate.commands.push(MultiCmd { id, argv });
}

/// flagTransaction: a command was rejected while queueing, so the whole
/// transaction must fail at EXEC.
pub fn flag_transaction(c: &mut Client) {
    if c.has_flag(CLIENT_MULTI) {
        c.flags |= CLIENT_DIRTY_EXEC;
    }
}

/// discardTransaction: forget the queue, leave MULTI, unwatch everything.
pub fn discard_transaction(srv: &mut Server, c: &mut Client) {
    c.mstate = MultiState::default();
    c.flags &= !(CLIENT_MULTI | CLIENT_DIRTY_CAS | CLIENT_DIRTY_EXEC);
    unwatch_all_keys(srv, c);
}

/// execCommandAbort: EXEC itself was rejected by `process_command`; the
/// reason is folded into the EXECABORT error.
pub fn exec_command_abort(srv: &mut Server, c: &mut Client, error: &[u8]) {
    discard_transaction(srv, c);
    // Redis's formatted rejections carry no "ERR " (addReplyErrorFormat adds
    // it); shared ones such as "NOAUTH ..." keep their code.
    let reason = error.strip_prefix(b"ERR ").unwrap_or(error);
    let mut msg = b"EXECABORT Transaction discarded because of: ".to_vec();
    msg.extend_from_slice(reason);
    c.add_reply_error_bytes(&msg);
}

/// EXEC
// redis: multi.c execCommand
pub fn exec_command(srv: &mut Server, c: &mut Client) {
    if !c.has_flag(CLIENT_MULTI) {
        return c.add_reply_error("ERR EXEC without MULTI");
    }
    // A watched key that expired since WATCH counts as touched.
    if is_watched_key_expired(srv, c) {
        c.flags |= CLIENT_DIRTY_CAS;
    }
    if c.has_flag(CLIENT_DIRTY_CAS | CLIENT_DIRTY_EXEC) {
        if c.has_flag(CLIENT_DIRTY_EXEC) {
            c.add_reply_error("EXECABORT Transaction discarded because of previous errors.");
        } else {
            c.add_reply_null_array();
        }
        discard_transaction(srv, c);
        return;
    }

    // Run the queue. Nothing else runs meanwhile: this is the atomicity.
    let old_flags = c.flags;
    c.flags |= CLIENT_DENY_BLOCKING | CLIENT_EXECUTING_MULTI;
    srv.in_exec = true;
    unwatch_all_keys(srv, c); // no point watching any more
    let orig_argv = std::mem::take(&mut c.argv);
    let queued = std::mem::take(&mut c.mstate.commands);
    c.add_reply_array_len(queued.len());
    for cmd in queued {
        c.argv = cmd.argv;
        // The ACL rules may have changed since the command was queued: it
        // is checked again, and a denial replaces its reply (acl.rs).
        if let Err((why, pos)) = crate::acl::acl_check_all_perm(srv, c, cmd.id) {
            let fullname = srv.commands.get(cmd.id).fullname;
            crate::acl::add_acl_log_entry_at(
                srv,
                c,
                why,
                crate::acl::AclLogCtx::Multi,
                pos,
                fullname,
            );
            let reason = match why {
                crate::acl::AclDenied::Cmd => "no permission to execute the command or subcommand",
                crate::acl::AclDenied::Key => "no permission to touch the specified keys",
                crate::acl::AclDenied::Channel => {
                    "no permission to access one of the channels used as arguments"
                }
                crate::acl::AclDenied::Auth => "no permission",
            };
            c.add_reply_error(&format!("NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This command is no longer allowed for the following reason: {reason}"));
            continue;
        }
        server::call(srv, c, cmd.id);
    }
    c.argv = orig_argv;
    c.flags &= !CLIENT_EXECUTING_MULTI;
    srv.in_exec = false;
    if old_flags & CLIENT_DENY_BLOCKING == 0 {
        c.flags &= !CLIENT_DENY_BLOCKING;
    }
    discard_transaction(srv, c);
}

/// WATCH key [key ...]
// redis: multi.c watchCommand
pub fn watch_command(srv: &mut Server, c: &mut Client) {
    if c.has_flag(CLIENT_MULTI) {
        return c.add_reply_error("ERR WATCH inside MULTI is not allowed");
    }
    // Already doomed: watching more changes nothing.
    if c.has_flag(CLIENT_DIRTY_CAS) {
        return c.add_reply_ok();
    }
    for j in 1..c.argc() {
        let key = c.argv[j].clone();
        watch_for_key(srv, c, key);
    }
    c.add_reply_ok();
}

/// UNWATCH
// redis: multi.c unwatchCommand
pub fn unwatch_command(srv: &mut Server, c: &mut Client) {
    unwatch_all_keys(srv, c);
    c.flags &= !CLIENT_DIRTY_CAS;
    c.add_reply_ok();
}

/// watchForKey: remember `key` on both sides (server map and client list).
fn watch_for_key(srv: &mut Server, c: &mut Client, key: Bytes) {
    let db = c.db;
    if c.watched_keys.iter().any(|wk| wk.db == db && wk.key == key) {
        return;
    }
    srv.watched_keys
        .entry(key.clone())
        .or_default()
        .push((db, c.token));
    let expired = srv.dbs[db].key_is_expired(&key, server::mstime());
    c.watched_keys.push(WatchedKey { db, key, expired });
}

/// unwatchAllKeys: drop every watch of this client.
pub fn unwatch_all_keys(srv: &mut Server, c: &mut Client) {
    for wk in c.watched_keys.drain(..) {
        if let Some(watchers) = srv.watched_keys.get_mut(&wk.key) {
            watchers.retain(|&(db, t)| !(db == wk.db && t == c.token));
            if watchers.is_empty() {
                srv.watched_keys.remove(&wk.key);
            }
        }
    }
}

/// isWatchedKeyExpired: has a watched key (alive at WATCH time) expired
/// since, without having been deleted yet?
fn is_watched_key_expired(srv: &Server, c: &Client) -> bool {
    let now = server::mstime();
    c.watched_keys
        .iter()
        .any(|wk| !wk.expired && srv.dbs[wk.db].key_is_expired(&wk.key, now))
}

/// touchWatchedKey: `key` in `db` was modified; every client watching it
/// will fail its EXEC. Called from `db::signal_modified_key`.
pub fn touch_watched_key(srv: &mut Server, db: usize, key: &[u8]) {
    if srv.watched_keys.is_empty() {
        return;
    }
    let Some(watchers) = srv.watched_keys.get(key) else {
        return;
    };
    let tokens: Vec<Token> = watchers
        .iter()
        .filter(|&&(d, _)| d == db)
        .map(|&(_, t)| t)
        .collect();
    let existed = srv.dbs[db].dict.get(key).is_some();
    for token in tokens {
        mark_touched(srv, token, db, key, existed);
    }
}

/// One watcher of a touched key: flag it dirty (unless the key had already
/// expired at WATCH time and is simply gone now).
fn mark_touched(srv: &mut Server, token: Token, db: usize, key: &[u8], existed: bool) {
    let Some(mut c) = srv.clients.remove(&token) else {
        // The watcher is the client running this command, out of the table:
        // its flag is set when its command returns.
        srv.pending_touches.push(PendingTouch {
            token,
            db,
            key: Bytes::copy_from_slice(key),
            kind: TouchKind::Write { existed },
        });
        return;
    };
    flag_dirty_cas(srv, &mut c, db, key, existed);
    srv.clients.insert(token, c);
}

/// The watcher side of touchWatchedKey.
fn flag_dirty_cas(srv: &mut Server, c: &mut Client, db: usize, key: &[u8], existed: bool) {
    if let Some(wk) = c
        .watched_keys
        .iter_mut()
        .find(|wk| wk.db == db && wk.key == key)
    {
        if wk.expired && !existed {
            // It was expired at WATCH time and has now been deleted:
            // logically nothing changed. From now on it is a plain watch.
            wk.expired = false;
            return;
        }
    }
    c.flags |= CLIENT_DIRTY_CAS;
    // Dirty for good: no need to hear about more touches.
    unwatch_all_keys(srv, c);
}

/// Apply the touches recorded for the client that was running a command
/// when its own watched key changed (WATCH k, then SET k by itself).
/// Called by `server::call` after the handler.
pub fn apply_pending_touches(srv: &mut Server, c: &mut Client) {
    let touches = std::mem::take(&mut srv.pending_touches);
    for t in touches {
        if t.token == c.token {
            apply_touch(srv, c, &t);
        } else if let Some(mut other) = srv.clients.remove(&t.token) {
            apply_touch(srv, &mut other, &t);
            srv.clients.insert(t.token, other);
        }
    }
}

fn apply_touch(srv: &mut Server, c: &mut Client, t: &PendingTouch) {
    match t.kind {
        TouchKind::Write { existed } => flag_dirty_cas(srv, c, t.db, &t.key, existed),
        TouchKind::Flush(f) => {
            if should_flag_on_flush(c, t.db, &t.key, f) {
                c.flags |= CLIENT_DIRTY_CAS;
                unwatch_all_keys(srv, c);
            }
        }
    }
}

/// touchAllWatchedKeysInDb: `emptied` is about to be flushed, or swapped
/// with `replaced_with` (SWAPDB). Watchers of keys that exist in either
/// (and would thus appear to change) fail their EXEC.
pub fn touch_all_watched_keys_in_db(
    srv: &mut Server,
    emptied: usize,
    replaced_with: Option<usize>,
) {
    if srv.watched_keys.is_empty() {
        return;
    }
    let now = server::mstime();
    let db = emptied;
    let watched: Vec<(Bytes, Vec<Token>)> = srv
        .watched_keys
        .iter()
        .map(|(key, watchers)| {
            let tokens = watchers
                .iter()
                .filter(|&&(d, _)| d == db)
                .map(|&(_, t)| t)
                .collect::<Vec<Token>>();
            (key.clone(), tokens)
        })
        .filter(|(_, tokens)| !tokens.is_empty())
        .collect();
    for (key, watchers) in watched {
        let in_emptied = srv.dbs[db].dict.get(&key).is_some();
        let in_replacement = replaced_with.is_some_and(|r| srv.dbs[r].dict.get(&key).is_some());
        if !in_emptied && !in_replacement {
            continue;
        }
        let touch = FlushTouch {
            in_emptied,
            in_replacement,
            replacement_expired: replaced_with
                .is_some_and(|r| srv.dbs[r].key_is_expired(&key, now)),
        };
        for token in watchers {
            let Some(mut c) = srv.clients.remove(&token) else {
                // The running client (FLUSHALL after its own WATCH).
                srv.pending_touches.push(PendingTouch {
                    token,
                    db,
                    key: key.clone(),
                    kind: TouchKind::Flush(touch),
                });
                continue;
            };
            if should_flag_on_flush(&mut c, db, &key, touch) {
                c.flags |= CLIENT_DIRTY_CAS;
                unwatch_all_keys(srv, &mut c);
            }
            srv.clients.insert(token, c);
        }
    }
}

/// The per-watcher rule of touchAllWatchedKeysInDb about keys that were
/// already expired: their disappearance is no change, and a replacement
/// that is itself expired is no change either.
fn should_flag_on_flush(c: &mut Client, db: usize, key: &[u8], t: FlushTouch) -> bool {
    let Some(wk) = c
        .watched_keys
        .iter_mut()
        .find(|wk| wk.db == db && wk.key == key)
    else {
        return false;
    };
    if wk.expired {
        if !t.in_replacement {
            // The expired key is gone and nothing replaces it: no change.
            wk.expired = false;
            return false;
        }
        if t.replacement_expired {
            return false;
        }
    } else if !t.in_emptied && t.replacement_expired {
        // A missing key replaced by an expired one: still logically
        // missing, but from now on an expired watch.
        wk.expired = true;
        return false;
    }
    true
}
