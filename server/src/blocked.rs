//! Blocking operations without blocking the loop (Redis's blocked.c and
//! the blocking half of t_list.c).
//!
//! `BLPOP key timeout` on an empty key does not wait inside the command:
//! the client is *parked*. Its command stays in `argv`, its token is queued
//! under each key it waits for (`srv.blocking_keys`), and the loop goes on
//! serving everybody else. The client's socket is not read meanwhile.
//!
//! When a command adds a key that somebody waits for (`db_add` calls
//! `signal_key_as_ready`), the key is noted in `srv.ready_keys`. Right after
//! that command, `handle_clients_blocked_on_keys` serves the waiting clients
//! of each ready key in the order they blocked (first blocked, first served),
//! by running their command again: now it finds data, pops and replies.
//! A client whose timeout passes gets a null reply from
//! `handle_blocked_clients_timeout`, called before each sleep.
//!
//! Time-outs (Redis's timeout.c): a client that blocks with a deadline is
//! entered in `srv.clients_timeout_table`, a BTreeMap keyed by
//! (deadline, client id), and leaves it when it is unblocked for any
//! reason. Before each sleep the loop pops entries from the front while
//! their deadline has passed and stops at the first one in the future, and
//! the poll timeout is the first key: with 10,000 clients parked, neither
//! visits the 9,999 whose time has not come (O(log N) per block/unblock).

use bytes::Bytes;
use storage::object::Value;

use crate::networking::{self, Client, CLIENT_BLOCKED};
use crate::server::{self, Server};
use crate::shared;

/// Which kind of value a parked client waits for (c->btype): a list key
/// that becomes a zset does not wake a BLPOP, and the other way round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockType {
    List,
    ZSet,
    /// XREAD / XREADGROUP: served by t_stream.rs, not by re-running.
    Stream,
    /// WAIT (BLOCKED_WAIT): no keys; answered by replication/master.rs
    /// when enough replicas acknowledged.
    Wait,
    /// SHUTDOWN waiting for lagging replicas (BLOCKED_SHUTDOWN): no keys,
    /// no timeout of its own; answered by shutdown.rs when the shutdown
    /// fails or is aborted (on success the process exits).
    Shutdown,
}

/// What a parked client waits for (c->bstate).
#[derive(Debug, Clone)]
pub struct BlockState {
    pub btype: BlockType,
    pub db: usize,
    pub keys: Vec<Bytes>,
    /// Absolute unix time in ms; 0 waits forever.
    pub timeout: i64,
    /// XREAD/XREADGROUP: the ID each key must pass, COUNT, the group.
    pub stream: Option<Box<crate::t_stream::StreamBlock>>,
}

/// getTimeoutFromObjectOrReply (seconds, fractions allowed): the absolute
/// deadline in unix ms, 0 for "forever", None after an error reply.
pub fn get_timeout_or_reply(srv: &Server, c: &mut Client, i: usize) -> Option<i64> {
    // strtold rules, as getLongDoubleFromObjectOrReply (hex and inf parse).
    let Some(secs) = storage::util::string2ld(c.arg(i)).map(|v| v.to_f64()) else {
        c.add_reply_error(shared::TIMEOUT_NOT_FLOAT_ERR);
        return None;
    };
    // (long long) ceill(secs * 1000): a value past the range of a long long
    // (or infinite) comes out negative in C, so Redis calls it negative.
    let ms = (secs * 1000.0).ceil();
    // i64::MAX as f64 is 2^63: anything from there up does not fit.
    if !(0.0..i64::MAX as f64).contains(&ms) {
        c.add_reply_error(shared::TIMEOUT_NEGATIVE_ERR);
        return None;
    }
    let ms = ms as i64;
    Some(if ms > 0 {
        srv.cmd_time_snapshot.saturating_add(ms)
    } else {
        0
    })
}

/// blockForKeys: park the client on `keys` until one gets data or the
/// timeout passes. The command's reply comes later.
///
/// A client that may not block (CLIENT_DENY_BLOCKING: inside EXEC or a
/// script) is not parked: it gets the time-out reply, a null array, at
/// once, so a blocking pop behaves as its non-blocking form (BLMOVE, whose
/// reply is a null bulk, checks this itself before calling).
pub fn block_for_keys(
    srv: &mut Server,
    c: &mut Client,
    btype: BlockType,
    keys: &[Bytes],
    timeout: i64,
) {
    if c.has_flag(crate::networking::CLIENT_DENY_BLOCKING) {
        c.add_reply_null_array();
        return;
    }
    let mut unique: Vec<Bytes> = Vec::with_capacity(keys.len());
    for k in keys {
        if !unique.contains(k) {
            srv.blocking_keys
                .entry((c.db, k.clone()))
                .or_default()
                .push_back(c.token);
            unique.push(k.clone());
        }
    }
    c.bstate = Some(BlockState {
        btype,
        db: c.db,
        keys: unique,
        timeout,
        stream: None,
    });
    c.flags |= CLIENT_BLOCKED;
    srv.blocked_clients += 1;
    add_client_to_timeout_table(srv, c);
}

/// addClientToTimeoutTable: a client blocked with a deadline joins the
/// ordered table; one that waits forever (timeout 0) does not.
// redis: timeout.c addClientToTimeoutTable
fn add_client_to_timeout_table(srv: &mut Server, c: &Client) {
    let Some(bs) = c.bstate.as_ref() else {
        return;
    };
    if bs.timeout != 0 {
        srv.clients_timeout_table
            .insert((bs.timeout, c.id), c.token);
    }
}

/// removeClientFromTimeoutTable: unblocked before its time (served, CLIENT
/// UNBLOCK, disconnected): forget its deadline. O(log N).
// redis: timeout.c removeClientFromTimeoutTable
fn remove_client_from_timeout_table(srv: &mut Server, c: &Client, timeout: i64) {
    if timeout != 0 {
        srv.clients_timeout_table.remove(&(timeout, c.id));
    }
}

/// blockForKeys for XREAD/XREADGROUP (BLOCKED_STREAM): as above, and each
/// key remembers the ID of its first mention on the command line.
pub fn block_for_stream_keys(
    srv: &mut Server,
    c: &mut Client,
    keys: &[Bytes],
    timeout: i64,
    mut block: crate::t_stream::StreamBlock,
) {
    block_for_keys(srv, c, BlockType::Stream, keys, timeout);
    if let Some(bs) = c.bstate.as_mut() {
        block.ids = bs
            .keys
            .iter()
            .filter_map(|k| keys.iter().position(|x| x == k))
            .map(|i| block.ids[i])
            .collect();
        bs.stream = Some(Box::new(block));
    }
}

/// unblockClient: forget everything the client waited for.
pub fn unblock_client(srv: &mut Server, c: &mut Client) {
    let Some(bs) = c.bstate.take() else {
        return;
    };
    remove_client_from_timeout_table(srv, c, bs.timeout);
    for k in bs.keys {
        let entry = (bs.db, k);
        if let Some(q) = srv.blocking_keys.get_mut(&entry) {
            q.retain(|t| *t != c.token);
            if q.is_empty() {
                srv.blocking_keys.remove(&entry);
            }
        }
    }
    if c.has_flag(CLIENT_BLOCKED) {
        c.flags &= !CLIENT_BLOCKED;
        srv.blocked_clients = srv.blocked_clients.saturating_sub(1);
    }
}

/// signalKeyAsReady: a key was added; if somebody waits for it, serve them
/// after the current command.
pub fn signal_key_as_ready(srv: &mut Server, dbid: usize, key: &[u8]) {
    if srv.blocking_keys.is_empty() {
        return;
    }
    let entry = (dbid, Bytes::copy_from_slice(key));
    if srv.blocking_keys.contains_key(&entry) && !srv.ready_keys.contains(&entry) {
        srv.ready_keys.push_back(entry);
    }
}

/// A value left the keyspace (deleted, overwritten, moved): XREADGROUP
/// readers blocked on a stream key must learn it (signalDeletedKeyAsReady,
/// the `val->type == OBJ_STREAM` checks of db.c).
pub fn signal_deleted_key_as_ready(srv: &mut Server, dbid: usize, key: &[u8], val: &Value) {
    if matches!(val, Value::Stream(_)) {
        signal_key_as_ready(srv, dbid, key);
    }
}

/// scanDatabaseForDeletedStreams: `dbid` is about to be flushed or to get
/// `replaced_with`'s contents; each waited-for key that holds a stream now
/// and will not afterwards is signalled, so its XREADGROUP readers get
/// their error.
pub fn scan_database_for_deleted_streams(
    srv: &mut Server,
    dbid: usize,
    replaced_with: Option<usize>,
) {
    let is_stream = |srv: &Server, db: usize, key: &[u8]| {
        matches!(
            srv.dbs[db].dict.get(key).map(|o| &o.value),
            Some(Value::Stream(_))
        )
    };
    let waited: Vec<Bytes> = srv
        .blocking_keys
        .keys()
        .filter(|(db, _)| *db == dbid)
        .map(|(_, key)| key.clone())
        .collect();
    for key in waited {
        let was = is_stream(srv, dbid, &key);
        let will = replaced_with.is_some_and(|r| is_stream(srv, r, &key));
        if was && !will {
            signal_key_as_ready(srv, dbid, &key);
        }
    }
}

/// scanDatabaseForReadyKeys: after SWAPDB a db holds other keys; every
/// waited-for key that now exists in it is ready.
pub fn scan_database_for_ready_keys(srv: &mut Server, dbid: usize) {
    let waited: Vec<Bytes> = srv
        .blocking_keys
        .keys()
        .filter(|(db, _)| *db == dbid)
        .map(|(_, key)| key.clone())
        .collect();
    for key in waited {
        if srv.dbs[dbid].dict.get(&key).is_some() {
            signal_key_as_ready(srv, dbid, &key);
        }
    }
}

/// Does `key` hold data a client blocked for `btype` can take?
fn key_has_data(srv: &Server, dbid: usize, key: &[u8], btype: BlockType) -> bool {
    match (srv.dbs[dbid].dict.get(key).map(|o| &o.value), btype) {
        (Some(Value::List(ql)), BlockType::List) => !ql.is_empty(),
        (Some(Value::ZSet(_)), BlockType::ZSet) => true,
        _ => false,
    }
}

/// handleClientsBlockedOnKeys: for each ready key, serve its waiting clients
/// in blocking order while the key still has data of the type they wait
/// for. Serving a client may make other keys ready (BLMOVE pushes): the loop
/// runs until nothing is ready.
pub fn handle_clients_blocked_on_keys(srv: &mut Server) {
    if srv.handling_blocked_clients {
        return; // a served client's command made a key ready: handled below
    }
    srv.handling_blocked_clients = true;
    while let Some((dbid, key)) = srv.ready_keys.pop_front() {
        let waiting: Vec<_> = match srv.blocking_keys.get(&(dbid, key.clone())) {
            Some(q) => q.iter().copied().collect(),
            None => continue,
        };
        for token in waiting {
            let Some(btype) = srv
                .clients
                .get(&token)
                .and_then(|c| c.bstate.as_ref())
                .map(|b| b.btype)
            else {
                continue;
            };
            if !key_has_data(srv, dbid, &key, btype) {
                continue; // nothing for this one (yet): it keeps its place
            }
            let Some(mut bc) = srv.clients.remove(&token) else {
                continue;
            };
            unblock_client(srv, &mut bc);
            resume_client(srv, &mut bc);
            crate::networking::put_back_client(srv, bc);
        }
        // Stream readers are answered from the key directly.
        crate::t_stream::serve_clients_blocked_on_stream_key(srv, dbid, &key);
    }
    srv.handling_blocked_clients = false;
}

/// Run a parked client's command again: it finds data now and replies.
/// What the client sent after it runs from `process_unblocked_clients`.
fn resume_client(srv: &mut Server, c: &mut Client) {
    srv.reprocessing_command = true;
    networking::process_command_maybe_silenced(srv, c);
    srv.reprocessing_command = false;
    if !c.has_flag(CLIENT_BLOCKED) {
        networking::reset_client_reply_skip(c);
    }
    if !c.has_flag(CLIENT_BLOCKED) {
        srv.unblocked_clients.push(c.token);
    }
}

/// processUnblockedClients (beforeSleep): clients that were just served,
/// timed out or unblocked go on with the rest of their query buffer.
pub fn process_unblocked_clients(srv: &mut Server) {
    let unblocked = std::mem::take(&mut srv.unblocked_clients);
    for token in unblocked {
        let Some(mut c) = srv.clients.remove(&token) else {
            continue;
        };
        if !c.has_flag(CLIENT_BLOCKED) {
            c.argv.clear();
            networking::process_input_buffer(srv, &mut c);
        }
        crate::networking::put_back_client(srv, c);
    }
}

/// handleBlockedClientsTimeout: reply null to clients whose time is up.
/// The table is ordered by deadline, so this takes entries from the front
/// and stops at the first deadline still in the future.
// redis: timeout.c handleBlockedClientsTimeout
pub fn handle_blocked_clients_timeout(srv: &mut Server) {
    if srv.clients_timeout_table.is_empty() {
        return;
    }
    let now = server::mstime();
    while let Some(entry) = srv.clients_timeout_table.first_entry() {
        let (timeout, _id) = *entry.key();
        if timeout >= now {
            break; // all the others are later still
        }
        let token = entry.remove();
        let Some(mut c) = srv.clients.remove(&token) else {
            continue;
        };
        // checkBlockedClientTimeout: still blocked with that deadline?
        let due = c.has_flag(CLIENT_BLOCKED)
            && c.bstate
                .as_ref()
                .is_some_and(|b| b.timeout != 0 && b.timeout < now);
        if due {
            let wait = c
                .bstate
                .as_ref()
                .is_some_and(|b| b.btype == BlockType::Wait);
            unblock_client(srv, &mut c);
            // replyToBlockedClientTimedOut: a null array for list pops,
            // the number of replicas that made it for WAIT.
            if wait {
                crate::replication::master::reply_to_wait_timed_out(srv, &mut c);
            } else {
                networking::add_reply_unless_silenced(&mut c, |c| c.add_reply_null_array());
            }
            networking::reset_client_reply_skip(&mut c);
            server::update_stats_on_unblock(srv, &mut c);
            srv.unblocked_clients.push(token);
        }
        crate::networking::put_back_client(srv, c);
    }
}

/// The nearest block deadline (unix ms), for the poll timeout: the first
/// key of the ordered table.
pub fn nearest_block_timeout(srv: &Server) -> Option<i64> {
    srv.clients_timeout_table
        .first_key_value()
        .map(|(&(deadline, _), _)| deadline)
}

/// disconnectAllBlockedClients: an instance that becomes a replica
/// cannot serve the clients blocked on its keys (or in WAIT) any more: each
/// gets Redis's -UNBLOCKED error and is closed once it is written. Clients
/// parked by CLIENT PAUSE stay: their command runs from scratch later.
// redis: blocked.c disconnectAllBlockedClients
pub fn disconnect_all_blocked_clients(srv: &mut Server) {
    let mut blocked: Vec<(u64, mio::Token)> = srv
        .clients
        .values()
        .filter(|c| c.has_flag(CLIENT_BLOCKED))
        .map(|c| (c.id, c.token))
        .collect();
    // server.clients is in connection order.
    blocked.sort_unstable();
    for (_, token) in blocked {
        let Some(mut c) = srv.clients.remove(&token) else {
            continue;
        };
        c.add_reply_error(
            "UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)",
        );
        srv.note_errors(&mut c);
        unblock_client(srv, &mut c);
        c.flags |= networking::CLIENT_CLOSE_AFTER_REPLY;
        srv.unblocked_clients.push(c.token);
        networking::put_back_client(srv, c);
    }
}

/// CLIENT UNBLOCK's action on a parked client: TIMEOUT replies as if the
/// time were up, ERROR with Redis's -UNBLOCKED error.
pub fn unblock_client_from_command(srv: &mut Server, c: &mut Client, with_error: bool) {
    let wait = c
        .bstate
        .as_ref()
        .is_some_and(|b| b.btype == BlockType::Wait);
    unblock_client(srv, c);
    if wait && !with_error {
        crate::replication::master::reply_to_wait_timed_out(srv, c);
    } else {
        networking::add_reply_unless_silenced(c, |c| {
            if with_error {
                c.add_reply_error("UNBLOCKED client unblocked via CLIENT UNBLOCK");
            } else {
                c.add_reply_null_array();
            }
        });
    }
    networking::reset_client_reply_skip(c);
    server::update_stats_on_unblock(srv, c);
    srv.unblocked_clients.push(c.token);
}
