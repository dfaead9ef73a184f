//! Client-side caching: key tracking and invalidation (redis: tracking.c),
//! and the CLIENT TRACKING / CACHING / GETREDIR / TRACKINGINFO commands.
//!
//! A client that runs `CLIENT TRACKING ON` tells the server "I keep a local
//! copy of what I read". The server answers by remembering, for each key
//! the client read, that this client may cache it, and by sending an
//! invalidation message the first time the key changes afterwards.
//!
//! ## The tables (all global, not per database, as in Redis)
//! - `table` (Redis's TrackingTable): key -> the ids of the clients that
//!   read it (with their poller token, so finding a client is O(1): tokens
//!   are never reused, a gone client is simply not found). An entry is
//!   dropped as soon as it is invalidated: the client must read the key
//!   again to be told about the next change. Ids of clients that turned
//!   tracking off or left are not cleaned up eagerly (Redis neither): they
//!   are skipped when the key changes. `tracking-table-max-keys` bounds the
//!   table; over it, `tracking_limit_used_slots` invalidates keys as if they
//!   changed (from the cron, and before each command).
//! - `prefixes` (Redis's PrefixTable), for BCAST mode: prefix -> the
//!   clients subscribed to it and the keys with that prefix modified during
//!   this loop iteration. BCAST clients are not in `table` at all; their
//!   messages are batched and sent by `tracking_broadcast_invalidation_messages`
//!   from before_sleep, one array of keys per prefix.
//!
//! ## Where messages go
//! `send_tracking_message` is Redis's sendTrackingMessage: a RESP3 client
//! gets the push `>2 invalidate [keys]`; with `REDIRECT id` the message goes
//! to that other connection instead, which under RESP2 must be subscribed
//! to `__redis__:invalidate` and gets it as a pub/sub `message` on that
//! channel. When the redirect client is gone, a RESP3 client is told with
//! `>2 tracking-redir-broken id` (flag R in CLIENT LIST).
//!
//! ## The running client
//! While a client runs a command it is out of `srv.clients` (networking.rs
//! handle_client_readable), yet Redis writes invalidations into its buffer
//! at once (say it modifies a key tracked by a client that REDIRECTs to
//! it), or, for a key it tracks itself, after the command's reply (Redis's
//! `tracking_pending_keys`). So `call()` (and
//! process_command around evictions) records a snapshot of the running
//! client in `running`: what `send_tracking_message` must know about it
//! (protocol, subscribed, tracking flags). Bytes for a running client are
//! parked in `parked` and spliced into its reply where Redis would have
//! written them (before the reply for anything sent during the command,
//! after it for the pending keys). This mirrors pubsub.rs's handling of a
//! client's messages to itself.
//!
//! Per-client state lives in `Client::tracking` (a `ClientTracking`), not in
//! the client's flag word: Redis's CLIENT_TRACKING* flags are kept apart so
//! they need no bits of `Client::flags`.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use bytes::{Bytes, BytesMut};
use mio::Token;
use protocol::reply;
use protocol::Resp;

use crate::commands::{CmdId, CMD_PUBSUB, CMD_READONLY};
use crate::networking::{
    close_client_on_output_buffer_limit_reached, Client, CLIENT_CLOSE_ASAP, CLIENT_MULTI,
    CLIENT_PENDING_WRITE, CLIENT_PUBSUB, CLIENT_SCRIPT,
};
use crate::server::Server;
use crate::shared;

// Tracking flags (server.h CLIENT_TRACKING*), in `ClientTracking::flags`.
/// CLIENT_TRACKING: tracking is on for this client.
pub const TRACKING_ON: u32 = 1 << 0;
/// CLIENT_TRACKING_BROKEN_REDIR: the redirect client went away.
pub const TRACKING_BROKEN_REDIR: u32 = 1 << 1;
/// CLIENT_TRACKING_BCAST: broadcast mode (prefixes, no per-key table).
pub const TRACKING_BCAST: u32 = 1 << 2;
/// CLIENT_TRACKING_OPTIN: track only after CLIENT CACHING YES.
pub const TRACKING_OPTIN: u32 = 1 << 3;
/// CLIENT_TRACKING_OPTOUT: track unless CLIENT CACHING NO.
pub const TRACKING_OPTOUT: u32 = 1 << 4;
/// CLIENT_TRACKING_CACHING: CLIENT CACHING was given for the next command.
pub const TRACKING_CACHING: u32 = 1 << 5;
/// CLIENT_TRACKING_NOLOOP: no messages about the client's own writes.
pub const TRACKING_NOLOOP: u32 = 1 << 6;

/// The pub/sub channel RESP2 redirect clients receive invalidations on
/// (Redis's TrackingChannelName).
const TRACKING_CHANNEL_NAME: &[u8] = b"__redis__:invalidate";

/// Effort of one trackingLimitUsedSlots run: keys invalidated per run is
/// this times the number of consecutive runs that stayed over the limit.
const TRACKING_LIMIT_EFFORT_STEP: usize = 100;

/// One client's tracking state (Redis: the CLIENT_TRACKING* flags,
/// client_tracking_redirection, client_tracking_prefixes).
#[derive(Default, Clone)]
pub struct ClientTracking {
    pub flags: u32,
    /// REDIRECT id (0 = none), and its token when it was found.
    pub redirection: u64,
    redir_token: Option<Token>,
    /// BCAST prefixes, sorted as Redis's rax lists them.
    pub prefixes: BTreeSet<Bytes>,
}

/// bcastState: the clients subscribed to one prefix, and the keys with
/// that prefix modified in this loop iteration, each with the client that
/// modified it last (NOLOOP leaves that client's own keys out).
#[derive(Default)]
pub struct BcastState {
    keys: BTreeMap<Bytes, Option<Token>>,
    clients: BTreeMap<u64, Token>,
}

/// What sending a message needs to know about a client.
#[derive(Clone)]
struct Peer {
    resp: Resp,
    pubsub: bool,
    flags: u32,
    redirection: u64,
    redir_token: Option<Token>,
}

impl Peer {
    fn of(c: &Client) -> Peer {
        Peer {
            resp: c.resp,
            pubsub: c.has_flag(CLIENT_PUBSUB),
            flags: c.tracking.flags,
            redirection: c.tracking.redirection,
            redir_token: c.tracking.redir_token,
        }
    }
}

/// A client out of `srv.clients` because it runs a command (see the top).
struct Running {
    token: Token,
    id: u64,
    peer: Peer,
    /// Inside call() (Redis's fixed_time_expire > 0), not just in
    /// process_command's evictions.
    in_call: bool,
    /// The scripts' fake client: not Redis's server.current_client.
    is_script: bool,
    /// The redirect turned out broken while it ran: flag R on the way out.
    broken: bool,
}

/// Everything tracking keeps server-wide (tracking.c's globals).
#[derive(Default)]
pub struct Tracking {
    /// TrackingTable: None until the first CLIENT TRACKING ON.
    table: Option<HashMap<Bytes, BTreeMap<u64, Token>>>,
    /// TrackingTableTotalItems: client ids summed over all keys.
    total_items: u64,
    /// PrefixTable (BCAST).
    prefixes: BTreeMap<Bytes, BcastState>,
    /// server.tracking_clients.
    pub clients: usize,
    /// server.tracking_pending_keys: invalidations for the running client
    /// itself, sent after its reply (None = the flush "all keys" null).
    pending_keys: Vec<Option<Bytes>>,
    running: Vec<Running>,
    parked: Vec<(Token, BytesMut)>,
    /// trackingLimitUsedSlots' static timeout_counter.
    timeout_counter: usize,
}

/// The "value" part of an invalidation message.
enum Payload<'a> {
    /// One key: an array of one.
    Key(&'a [u8]),
    /// After a flush: a null in the tracking client's protocol.
    Null,
    /// Ready-made protocol (BCAST's array of keys).
    Proto(&'a [u8]),
}

// ---- finding clients ----

/// What is known of the client under `token`: in the table, or running.
fn peer(srv: &Server, token: Token) -> Option<Peer> {
    if let Some(c) = srv.clients.get(&token) {
        return Some(Peer::of(c));
    }
    srv.tracking
        .running
        .iter()
        .rev()
        .find(|r| r.token == token)
        .map(|r| r.peer.clone())
}

/// server.current_client: the real client whose command runs now.
fn current_client(srv: &Server) -> Option<Token> {
    srv.tracking
        .running
        .iter()
        .rev()
        .find(|r| !r.is_script)
        .map(|r| r.token)
}

/// lookupClientByID, for CLIENT TRACKING REDIRECT: the token of client `id`.
fn lookup_client_token_by_id(srv: &Server, c: &Client, id: u64) -> Option<Token> {
    if c.id == id {
        return Some(c.token);
    }
    if let Some((t, _)) = srv.clients.iter().find(|(_, o)| o.id == id) {
        return Some(*t);
    }
    srv.tracking
        .running
        .iter()
        .find(|r| r.id == id)
        .map(|r| r.token)
}

/// Append a message to a client's output: directly when it sits in the
/// table (queued for writing as pub/sub's deliver does), parked when it is
/// running (see the top of the file), dropped when it is gone.
fn deliver(srv: &mut Server, token: Token, msg: BytesMut) {
    if let Some(dst) = srv.clients.get_mut(&token) {
        if dst.has_flag(CLIENT_CLOSE_ASAP) {
            return;
        }
        dst.reply.extend_from_slice(&msg);
        if close_client_on_output_buffer_limit_reached(&srv.config.client_output_buffer_limit, dst)
        {
            srv.clients_to_close.push(token);
        } else if !dst.has_flag(CLIENT_PENDING_WRITE) {
            dst.flags |= CLIENT_PENDING_WRITE;
            srv.clients_pending_write.push(token);
        }
        // The receiver's output grew (client eviction).
        let limit = srv.config.maxmemory_clients;
        crate::client_eviction::update_client_mem_usage_and_bucket(&mut srv.client_mem, limit, dst);
        return;
    }
    if srv.tracking.running.iter().any(|r| r.token == token) {
        srv.tracking.parked.push((token, msg));
    }
}

/// Take what was parked for `token`, in order.
fn take_parked(srv: &mut Server, token: Token) -> BytesMut {
    let mut out = BytesMut::new();
    if srv.tracking.parked.is_empty() {
        return out;
    }
    srv.tracking.parked.retain(|(t, m)| {
        if *t == token {
            out.extend_from_slice(m);
            false
        } else {
            true
        }
    });
    out
}

fn set_broken_redir(srv: &mut Server, token: Token) {
    if let Some(c) = srv.clients.get_mut(&token) {
        c.tracking.flags |= TRACKING_BROKEN_REDIR;
        return;
    }
    if let Some(r) = srv
        .tracking
        .running
        .iter_mut()
        .rev()
        .find(|r| r.token == token)
    {
        r.broken = true;
        r.peer.flags |= TRACKING_BROKEN_REDIR;
    }
}

// ---- enabling and disabling ----

/// The tracking prefixes' share of the client's memory (client
/// eviction). Like Redis's count of rax nodes, an underestimate that needs
/// no walk: one `Bytes` handle per prefix.
pub fn tracking_prefixes_mem_overhead(c: &Client) -> usize {
    c.tracking.prefixes.len() * std::mem::size_of::<Bytes>()
}

/// disableTracking: leave the prefixes (a prefix nobody follows any more
/// is dropped), clear the flags. The client's ids stay in the key table
/// and are skipped lazily, as in Redis.
pub fn disable_tracking(srv: &mut Server, c: &mut Client) {
    if c.tracking.flags & TRACKING_BCAST != 0 {
        for prefix in std::mem::take(&mut c.tracking.prefixes) {
            if let Some(bs) = srv.tracking.prefixes.get_mut(&prefix) {
                bs.clients.remove(&c.id);
                if bs.clients.is_empty() {
                    srv.tracking.prefixes.remove(&prefix);
                }
            }
        }
    }
    if c.tracking.flags & TRACKING_ON != 0 {
        srv.tracking.clients -= 1;
        c.tracking.flags = 0;
    }
}

/// enableBcastTrackingForPrefix
fn enable_bcast_tracking_for_prefix(srv: &mut Server, c: &mut Client, prefix: &Bytes) {
    let bs = srv.tracking.prefixes.entry(prefix.clone()).or_default();
    if bs.clients.insert(c.id, c.token).is_none() {
        c.tracking.prefixes.insert(prefix.clone());
    }
}

/// enableTracking: options are TRACKING_BCAST / OPTIN / OPTOUT / NOLOOP.
/// Turning it on again replaces the mode flags and the redirection; BCAST
/// prefixes add up.
fn enable_tracking(
    srv: &mut Server,
    c: &mut Client,
    redirect: (u64, Option<Token>),
    options: u32,
    prefixes: &[Bytes],
) {
    if c.tracking.flags & TRACKING_ON == 0 {
        srv.tracking.clients += 1;
    }
    c.tracking.flags |= TRACKING_ON;
    c.tracking.flags &= !(TRACKING_BROKEN_REDIR
        | TRACKING_BCAST
        | TRACKING_OPTIN
        | TRACKING_OPTOUT
        | TRACKING_NOLOOP);
    (c.tracking.redirection, c.tracking.redir_token) = redirect;
    if srv.tracking.table.is_none() {
        srv.tracking.table = Some(HashMap::new());
    }
    if options & TRACKING_BCAST != 0 {
        c.tracking.flags |= TRACKING_BCAST;
        if prefixes.is_empty() {
            enable_bcast_tracking_for_prefix(srv, c, &Bytes::new());
        }
        for p in prefixes {
            enable_bcast_tracking_for_prefix(srv, c, p);
        }
    }
    c.tracking.flags |= options & (TRACKING_OPTIN | TRACKING_OPTOUT | TRACKING_NOLOOP);
}

/// addReplyErrorFormat's text: CR and LF become spaces.
fn add_reply_error_format(c: &mut Client, msg: Vec<u8>) {
    let msg: Vec<u8> = msg
        .into_iter()
        .map(|b| if b == b'\r' || b == b'\n' { b' ' } else { b })
        .collect();
    c.add_reply_error_bytes(&msg);
}

/// The C-string view of an argument in Redis's "%s": up to its first NUL.
fn c_str(b: &[u8]) -> &[u8] {
    &b[..b.iter().position(|&x| x == 0).unwrap_or(b.len())]
}

/// Two prefixes overlap when one starts the other (stringCheckPrefix).
fn string_check_prefix(a: &[u8], b: &[u8]) -> bool {
    let n = a.len().min(b.len());
    a[..n] == b[..n]
}

/// checkPrefixCollisionsOrReply: Ok(true) when no prefix overlaps one the
/// client has or another given one. Redis returns the loop index `i` for a
/// clash between two given prefixes, which is "success" for any i > 0: the
/// error is replied AND tracking goes on (then +OK). Kept as Redis does it,
/// since replies must match: `Err(())` = error replied, stop; `Ok(false)` =
/// error replied but carry on.
fn check_prefix_collisions_or_reply(c: &mut Client, prefixes: &[Bytes]) -> Result<bool, ()> {
    for (i, p) in prefixes.iter().enumerate() {
        let existing = c
            .tracking
            .prefixes
            .iter()
            .find(|e| string_check_prefix(e, p))
            .cloned();
        if let Some(e) = existing {
            let mut msg = b"ERR Prefix '".to_vec();
            msg.extend_from_slice(c_str(p));
            msg.extend_from_slice(b"' overlaps with an existing prefix '");
            msg.extend_from_slice(c_str(&e));
            msg.extend_from_slice(b"'. Prefixes for a single client must not overlap.");
            add_reply_error_format(c, msg);
            return Err(());
        }
        for q in &prefixes[i + 1..] {
            if string_check_prefix(p, q) {
                let mut msg = b"ERR Prefix '".to_vec();
                msg.extend_from_slice(c_str(p));
                msg.extend_from_slice(b"' overlaps with another provided prefix '");
                msg.extend_from_slice(c_str(q));
                msg.extend_from_slice(b"'. Prefixes for a single client must not overlap.");
                add_reply_error_format(c, msg);
                return if i == 0 { Err(()) } else { Ok(false) };
            }
        }
    }
    Ok(true)
}

// ---- remembering keys ----

/// trackingRememberKeys: after a read-only command, note that this client
/// may now cache the command's keys (unless OPTIN without CACHING YES, or
/// OPTOUT with CACHING NO).
fn tracking_remember_keys(
    srv: &mut Server,
    token: Token,
    id: u64,
    flags: u32,
    cmd: CmdId,
    argv: &[Bytes],
) {
    let optin = flags & TRACKING_OPTIN != 0;
    let optout = flags & TRACKING_OPTOUT != 0;
    let caching_given = flags & TRACKING_CACHING != 0;
    if (optin && !caching_given) || (optout && caching_given) {
        return;
    }
    let command = srv.commands.get(cmd);
    let keys = crate::commands::get_keys_from_command(command, argv);
    // Shard channels are "keys" for cluster routing, not data to track.
    if keys.is_empty() || command.spec.flags & CMD_PUBSUB != 0 {
        return;
    }
    let Some(table) = srv.tracking.table.as_mut() else {
        return;
    };
    for k in keys {
        let Some(key) = argv.get(k.pos) else { continue };
        // A key seen for the first time is copied out of the argument: the
        // argument is a slice of the client's read buffer, and a table
        // entry that lives until the key changes would pin (and have
        // used_memory count) that whole buffer.
        let ids = match table.get_mut(key) {
            Some(ids) => ids,
            None => table.entry(Bytes::copy_from_slice(key)).or_default(),
        };
        if ids.insert(id, token).is_none() {
            srv.tracking.total_items += 1;
        }
    }
}

// ---- sending ----

/// sendTrackingMessage: tell `source` (a tracking client) that `payload`
/// is invalid, on its own connection (RESP3) or its redirect's.
fn send_tracking_message(srv: &mut Server, source: Token, payload: Payload) {
    let Some(src) = peer(srv, source) else {
        return;
    };
    let mut dest = source;
    let mut dest_peer = src.clone();
    let mut using_redirection = false;
    if src.redirection != 0 {
        match src.redir_token.and_then(|t| peer(srv, t).map(|p| (t, p))) {
            Some((t, p)) => {
                dest = t;
                dest_peer = p;
                using_redirection = true;
            }
            None => {
                set_broken_redir(srv, source);
                // Only a RESP3 connection can be told.
                if src.resp == Resp::V3 {
                    let mut msg = BytesMut::new();
                    reply::push_len(&mut msg, 2, Resp::V3);
                    reply::bulk(&mut msg, b"tracking-redir-broken");
                    reply::integer(&mut msg, src.redirection as i64);
                    deliver(srv, source, msg);
                }
                return;
            }
        }
    }
    let mut msg = BytesMut::new();
    if dest_peer.resp == Resp::V3 {
        reply::push_len(&mut msg, 2, Resp::V3);
        reply::bulk(&mut msg, b"invalidate");
    } else if using_redirection && dest_peer.pubsub {
        // addReplyPubsubMessage(c, TrackingChannelName, <the value>).
        reply::array_len(&mut msg, 3);
        reply::bulk(&mut msg, b"message");
        reply::bulk(&mut msg, TRACKING_CHANNEL_NAME);
    } else {
        // RESP2 without a subscribed redirect: no way to tell it.
        return;
    }
    match payload {
        Payload::Key(k) => {
            reply::array_len(&mut msg, 1);
            reply::bulk(&mut msg, k);
        }
        // shared.null[c->resp] of the tracking client, even when the
        // message goes to a redirect speaking the other protocol.
        Payload::Null => reply::null(&mut msg, src.resp),
        Payload::Proto(p) => msg.extend_from_slice(p),
    }
    deliver(srv, dest, msg);
}

/// trackingRememberKeyToBroadcast: note the key under every prefix it has.
fn tracking_remember_key_to_broadcast(srv: &mut Server, modifier: Option<Token>, key: &[u8]) {
    for (prefix, bs) in srv.tracking.prefixes.iter_mut() {
        if key.starts_with(prefix) {
            bs.keys.insert(Bytes::copy_from_slice(key), modifier);
        }
    }
}

/// trackingInvalidateKey: `key` changed (from signalModifiedKey: writes,
/// expiry, eviction) or is dropped from the table (`bcast` false: the
/// tracking-table-max-keys limit). Every client that may cache it is told,
/// and the key leaves the table.
pub fn tracking_invalidate_key(srv: &mut Server, key: &[u8], bcast: bool) {
    if srv.tracking.table.is_none() {
        return;
    }
    if bcast && !srv.tracking.prefixes.is_empty() {
        let modifier = srv.tracking.running.last().map(|r| r.token);
        tracking_remember_key_to_broadcast(srv, modifier, key);
    }
    let Some(ids) = srv.tracking.table.as_mut().and_then(|t| t.remove(key)) else {
        return;
    };
    srv.tracking.total_items -= ids.len() as u64;
    let current = current_client(srv);
    let in_call = srv.tracking.running.iter().any(|r| r.in_call);
    for token in ids.into_values() {
        let Some(target) = peer(srv, token) else {
            continue; // gone
        };
        // Tracking off, or switched to BCAST since it read the key.
        if target.flags & TRACKING_ON == 0 || target.flags & TRACKING_BCAST != 0 {
            continue;
        }
        let is_current = current == Some(token);
        if target.flags & TRACKING_NOLOOP != 0 && is_current {
            continue;
        }
        // Its own command changed the key: the message follows the reply.
        if is_current && in_call {
            srv.tracking
                .pending_keys
                .push(Some(Bytes::copy_from_slice(key)));
        } else {
            send_tracking_message(srv, token, Payload::Key(key));
        }
    }
}

/// trackingHandlePendingKeyInvalidations: what the running client's own
/// command invalidated for it, now that its reply is written.
fn tracking_handle_pending_key_invalidations(srv: &mut Server) {
    if srv.tracking.pending_keys.is_empty() {
        return;
    }
    let pending = std::mem::take(&mut srv.tracking.pending_keys);
    let Some(current) = current_client(srv) else {
        return;
    };
    for key in pending {
        match key {
            Some(k) => send_tracking_message(srv, current, Payload::Key(&k)),
            None => send_tracking_message(srv, current, Payload::Null),
        }
    }
}

/// trackingInvalidateKeysOnFlush: FLUSHDB / FLUSHALL (and reloads) tell
/// every tracking client "everything" with a null, and empty the table.
pub fn tracking_invalidate_keys_on_flush(srv: &mut Server) {
    if srv.tracking.clients > 0 {
        let current = current_client(srv);
        let mut targets: Vec<(u64, Token)> = srv
            .clients
            .values()
            .filter(|c| c.tracking.flags & TRACKING_ON != 0)
            .map(|c| (c.id, c.token))
            .collect();
        // server.clients is in connection order.
        targets.sort_unstable();
        for (_, token) in targets {
            send_tracking_message(srv, token, Payload::Null);
        }
        if let Some(cur) = current {
            if peer(srv, cur).is_some_and(|p| p.flags & TRACKING_ON != 0) {
                srv.tracking.pending_keys.push(None);
            }
        }
    }
    if srv.tracking.table.is_some() {
        srv.tracking.table = Some(HashMap::new());
        srv.tracking.total_items = 0;
    }
}

/// trackingLimitUsedSlots: over tracking-table-max-keys, invalidate keys
/// (as if modified) until under it again, with an effort that grows while
/// the table stays over the limit from one run to the next.
pub fn tracking_limit_used_slots(srv: &mut Server) {
    if srv.tracking.table.is_none() || srv.config.tracking_table_max_keys <= 0 {
        return;
    }
    let max_keys = srv.config.tracking_table_max_keys as usize;
    let size = |srv: &Server| srv.tracking.table.as_ref().map_or(0, |t| t.len());
    if size(srv) <= max_keys {
        srv.tracking.timeout_counter = 0;
        return;
    }
    let mut effort = TRACKING_LIMIT_EFFORT_STEP * (srv.tracking.timeout_counter + 1);
    while effort > 0 {
        effort -= 1;
        // Redis takes a random walk in its rax; the first key in hash order
        // (random per process) serves the same purpose.
        let Some(key) = srv
            .tracking
            .table
            .as_ref()
            .and_then(|t| t.keys().next().cloned())
        else {
            break;
        };
        tracking_invalidate_key(srv, &key, false);
        if size(srv) <= max_keys {
            srv.tracking.timeout_counter = 0;
            return;
        }
    }
    srv.tracking.timeout_counter += 1;
}

/// trackingBuildBroadcastReply: the array of modified keys, without those
/// `exclude` modified last (NOLOOP); None when that leaves nothing.
fn tracking_build_broadcast_reply(
    exclude: Option<Token>,
    keys: &BTreeMap<Bytes, Option<Token>>,
) -> Option<BytesMut> {
    let count = keys
        .values()
        .filter(|m| exclude.is_none() || **m != exclude)
        .count();
    if exclude.is_some() && count == 0 {
        return None;
    }
    let mut proto = BytesMut::new();
    reply::array_len(&mut proto, count);
    for (k, m) in keys {
        if exclude.is_some() && *m == exclude {
            continue;
        }
        reply::bulk(&mut proto, k);
    }
    Some(proto)
}

/// trackingBroadcastInvalidationMessages (before_sleep): for each prefix
/// with modified keys, one message to each of its clients; then forget
/// the keys.
pub fn tracking_broadcast_invalidation_messages(srv: &mut Server) {
    if srv.tracking.table.is_none() || srv.tracking.clients == 0 {
        return;
    }
    let mut prefixes = std::mem::take(&mut srv.tracking.prefixes);
    for bs in prefixes.values_mut() {
        if bs.keys.is_empty() {
            continue;
        }
        let proto = tracking_build_broadcast_reply(None, &bs.keys).unwrap_or_default();
        for &token in bs.clients.values() {
            let noloop = peer(srv, token).is_some_and(|p| p.flags & TRACKING_NOLOOP != 0);
            if noloop {
                if let Some(adhoc) = tracking_build_broadcast_reply(Some(token), &bs.keys) {
                    send_tracking_message(srv, token, Payload::Proto(&adhoc));
                }
            } else {
                send_tracking_message(srv, token, Payload::Proto(&proto));
            }
        }
        bs.keys.clear();
    }
    srv.tracking.prefixes = prefixes;
}

// ---- hooks in call() and process_command ----

/// What `tracking_call_end` needs from `tracking_call_begin`.
pub struct TrackingScope {
    active: bool,
    reply_start: usize,
}

fn running_of(c: &Client, in_call: bool) -> Running {
    Running {
        token: c.token,
        id: c.id,
        peer: Peer::of(c),
        in_call,
        is_script: c.has_flag(CLIENT_SCRIPT),
        broken: false,
    }
}

/// Before a command's handler: note the running client (only once
/// tracking was ever enabled: before that nothing can be sent).
pub fn tracking_call_begin(srv: &mut Server, c: &Client) -> TrackingScope {
    let active = srv.tracking.table.is_some();
    if active {
        srv.tracking.running.push(running_of(c, true));
    }
    TrackingScope {
        active,
        reply_start: c.reply.len(),
    }
}

/// After a command (call()'s end): remember the keys a read-only command
/// served to a tracking client (a script's reads count for its caller,
/// with the keys the script declared), put what was sent to this client
/// during the command before its reply, and at the outermost call send
/// the invalidations its own command caused (afterCommand).
pub fn tracking_call_end(srv: &mut Server, c: &mut Client, cmd: CmdId, scope: TrackingScope) {
    // No tracking table: no client tracks anything, so a command costs
    // nothing here (the hot path with tracking unused).
    if !scope.active {
        return;
    }
    let (flags, fullname) = {
        let command = srv.commands.get(cmd);
        (command.spec.flags, command.fullname)
    };
    if flags & CMD_READONLY != 0 && !matches!(fullname, "eval_ro" | "evalsha_ro" | "fcall_ro") {
        if c.has_flag(CLIENT_SCRIPT) {
            remember_keys_for_script_caller(srv);
        } else if c.tracking.flags & TRACKING_ON != 0 && c.tracking.flags & TRACKING_BCAST == 0 {
            let argv = std::mem::take(&mut c.argv);
            tracking_remember_keys(srv, c.token, c.id, c.tracking.flags, cmd, &argv);
            c.argv = argv;
        }
    }
    // Sent to this client while its command ran: before the reply.
    let early = take_parked(srv, c.token);
    if !early.is_empty() {
        splice_before(c, scope.reply_start, &early);
    }
    // The command may have changed the client's own tracking state.
    if let Some(r) = srv.tracking.running.last_mut() {
        let broken = r.broken;
        r.peer = Peer::of(c);
        if broken {
            r.peer.flags |= TRACKING_BROKEN_REDIR;
        }
    }
    if srv.propagate.in_nested_call == 0 {
        tracking_handle_pending_key_invalidations(srv);
        let late = take_parked(srv, c.token);
        if !late.is_empty() {
            c.push_buf().extend_from_slice(&late);
        }
    }
    if let Some(r) = srv.tracking.running.pop() {
        if r.broken && c.tracking.flags & TRACKING_ON != 0 {
            c.tracking.flags |= TRACKING_BROKEN_REDIR;
        }
    }
}

/// A read from inside a script: the caller (the running real client)
/// tracks every key its EVAL / FCALL declared.
fn remember_keys_for_script_caller(srv: &mut Server) {
    let Some(caller) = srv.tracking.running.iter().rev().find(|r| !r.is_script) else {
        return;
    };
    let (token, id, flags) = (caller.token, caller.id, caller.peer.flags);
    if flags & TRACKING_ON == 0 || flags & TRACKING_BCAST != 0 {
        return;
    }
    let Some(argv) = srv.script_run_ctx.as_ref().map(|r| r.original_argv.clone()) else {
        return;
    };
    if let Ok(Some(cmd)) = srv.commands.lookup_argv(&argv) {
        tracking_remember_keys(srv, token, id, flags, cmd, &argv);
    }
}

/// Insert `bytes` into the client's output at `at` (where its reply began);
/// under CLIENT REPLY OFF/SKIP the reply is scratch and the message goes to
/// the real buffer.
fn splice_before(c: &mut Client, at: usize, bytes: &[u8]) {
    if let Some(stash) = c.reply_stash.as_mut() {
        stash.extend_from_slice(bytes);
        return;
    }
    c.reply.insert_at(at, bytes);
}

/// Run `f` (process_command's evictions, the table limit) with `c` noted
/// as the running client, outside call(): what it sends `c` goes out at
/// once, before the command's reply, as in Redis.
pub fn with_running_client<R>(
    srv: &mut Server,
    c: &mut Client,
    f: impl FnOnce(&mut Server) -> R,
) -> R {
    if srv.tracking.table.is_none() {
        return f(srv);
    }
    srv.tracking.running.push(running_of(c, false));
    let r = f(srv);
    let sent = take_parked(srv, c.token);
    if !sent.is_empty() {
        c.push_buf().extend_from_slice(&sent);
    }
    if let Some(run) = srv.tracking.running.pop() {
        if run.broken && c.tracking.flags & TRACKING_ON != 0 {
            c.tracking.flags |= TRACKING_BROKEN_REDIR;
        }
    }
    r
}

/// processCommand's "make sure to use a reasonable amount of memory for
/// client side caching metadata".
pub fn tracking_limit_used_slots_for(srv: &mut Server, c: &mut Client) {
    if srv.tracking.clients > 0 {
        with_running_client(srv, c, tracking_limit_used_slots);
    }
}

/// resetClient's CACHING part: CLIENT CACHING affects the next command (or
/// transaction) only.
pub fn reset_client_caching(c: &mut Client) {
    if !c.has_flag(CLIENT_MULTI) && !c.last_cmd.starts_with("client|") {
        c.tracking.flags &= !TRACKING_CACHING;
    }
}

// ---- INFO ----

/// trackingGetTotalKeys
pub fn tracking_get_total_keys(srv: &Server) -> u64 {
    srv.tracking.table.as_ref().map_or(0, |t| t.len() as u64)
}

/// trackingGetTotalItems
pub fn tracking_get_total_items(srv: &Server) -> u64 {
    srv.tracking.total_items
}

/// trackingGetTotalPrefixes
pub fn tracking_get_total_prefixes(srv: &Server) -> u64 {
    srv.tracking.prefixes.len() as u64
}

/// CLIENT LIST's flags= with the tracking letters t, R, B placed where
/// Redis prints them: after O/S/M/P/x/b, before d/c/... .
pub fn client_flags_with_tracking(base: String, c: &Client) -> String {
    let mut letters = String::new();
    if c.tracking.flags & TRACKING_ON != 0 {
        letters.push('t');
    }
    if c.tracking.flags & TRACKING_BROKEN_REDIR != 0 {
        letters.push('R');
    }
    if c.tracking.flags & TRACKING_BCAST != 0 {
        letters.push('B');
    }
    if letters.is_empty() {
        return base;
    }
    if base == "N" {
        return letters;
    }
    let at = base
        .find(|ch: char| !"OSMPxb".contains(ch))
        .unwrap_or(base.len());
    let mut s = base;
    s.insert_str(at, &letters);
    s
}

/// CLIENT LIST's redir=: the redirect id while tracking, else -1.
pub fn client_redir(c: &Client) -> i64 {
    if c.tracking.flags & TRACKING_ON != 0 {
        c.tracking.redirection as i64
    } else {
        -1
    }
}

// ---- commands ----

/// CLIENT TRACKING ON|OFF [REDIRECT client-id] [PREFIX prefix [PREFIX prefix ...]]
///     [BCAST] [OPTIN] [OPTOUT] [NOLOOP]
// redis: networking.c clientCommand ("tracking")
pub fn client_tracking_command(srv: &mut Server, c: &mut Client) {
    let mut redir: i64 = 0;
    let mut redir_token = None;
    let mut options = 0u32;
    let mut prefixes: Vec<Bytes> = Vec::new();
    let mut j = 3;
    while j < c.argc() {
        let moreargs = c.argc() - 1 - j;
        let opt = c.arg(j);
        if opt.eq_ignore_ascii_case(b"redirect") && moreargs > 0 {
            j += 1;
            if redir != 0 {
                c.add_reply_error("ERR A client can only redirect to a single other client");
                return;
            }
            let Some(id) = protocol::util::string2ll(c.arg(j)) else {
                c.add_reply_error(shared::NOT_INTEGER_ERR);
                return;
            };
            redir = id;
            // The client must exist now (it may go away later).
            redir_token = u64::try_from(id)
                .ok()
                .and_then(|id| lookup_client_token_by_id(srv, c, id));
            if redir_token.is_none() {
                c.add_reply_error("ERR The client ID you want redirect to does not exist");
                return;
            }
        } else if opt.eq_ignore_ascii_case(b"bcast") {
            options |= TRACKING_BCAST;
        } else if opt.eq_ignore_ascii_case(b"optin") {
            options |= TRACKING_OPTIN;
        } else if opt.eq_ignore_ascii_case(b"optout") {
            options |= TRACKING_OPTOUT;
        } else if opt.eq_ignore_ascii_case(b"noloop") {
            options |= TRACKING_NOLOOP;
        } else if opt.eq_ignore_ascii_case(b"prefix") && moreargs > 0 {
            j += 1;
            // Copied: kept as long as tracking is on, it must not pin the
            // read buffer the argument is a slice of.
            prefixes.push(Bytes::copy_from_slice(&c.argv[j]));
        } else {
            c.add_reply_syntax_error();
            return;
        }
        j += 1;
    }

    if c.arg(2).eq_ignore_ascii_case(b"on") {
        if options & TRACKING_BCAST == 0 && !prefixes.is_empty() {
            c.add_reply_error("ERR PREFIX option requires BCAST mode to be enabled");
            return;
        }
        if c.tracking.flags & TRACKING_ON != 0 {
            let oldbcast = c.tracking.flags & TRACKING_BCAST != 0;
            let newbcast = options & TRACKING_BCAST != 0;
            if oldbcast != newbcast {
                c.add_reply_error("ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode.");
                return;
            }
        }
        if options & TRACKING_BCAST != 0 && options & (TRACKING_OPTIN | TRACKING_OPTOUT) != 0 {
            c.add_reply_error("ERR OPTIN and OPTOUT are not compatible with BCAST");
            return;
        }
        if options & TRACKING_OPTIN != 0 && options & TRACKING_OPTOUT != 0 {
            c.add_reply_error("ERR You can't specify both OPTIN mode and OPTOUT mode");
            return;
        }
        if (options & TRACKING_OPTIN != 0 && c.tracking.flags & TRACKING_OPTOUT != 0)
            || (options & TRACKING_OPTOUT != 0 && c.tracking.flags & TRACKING_OPTIN != 0)
        {
            c.add_reply_error("ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode.");
            return;
        }
        if options & TRACKING_BCAST != 0 && check_prefix_collisions_or_reply(c, &prefixes).is_err()
        {
            return;
        }
        enable_tracking(srv, c, (redir as u64, redir_token), options, &prefixes);
    } else if c.arg(2).eq_ignore_ascii_case(b"off") {
        disable_tracking(srv, c);
    } else {
        c.add_reply_syntax_error();
        return;
    }
    c.add_reply_ok();
}

/// CLIENT CACHING YES|NO
// redis: networking.c clientCommand ("caching")
pub fn client_caching_command(_srv: &mut Server, c: &mut Client) {
    if c.tracking.flags & TRACKING_ON == 0 {
        c.add_reply_error("ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled");
        return;
    }
    if c.arg(2).eq_ignore_ascii_case(b"yes") {
        if c.tracking.flags & TRACKING_OPTIN == 0 {
            c.add_reply_error(
                "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.",
            );
            return;
        }
    } else if c.arg(2).eq_ignore_ascii_case(b"no") {
        if c.tracking.flags & TRACKING_OPTOUT == 0 {
            c.add_reply_error(
                "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.",
            );
            return;
        }
    } else {
        c.add_reply_syntax_error();
        return;
    }
    c.tracking.flags |= TRACKING_CACHING;
    c.add_reply_ok();
}

/// CLIENT GETREDIR
// redis: networking.c clientCommand ("getredir"): -1 while tracking is off.
pub fn client_getredir_command(_srv: &mut Server, c: &mut Client) {
    c.add_reply_integer(client_redir(c));
}

/// CLIENT TRACKINGINFO
// redis: networking.c clientCommand ("trackinginfo")
pub fn client_trackinginfo_command(_srv: &mut Server, c: &mut Client) {
    let f = c.tracking.flags;
    let mut flags: Vec<&[u8]> = vec![if f & TRACKING_ON != 0 { b"on" } else { b"off" }];
    if f & TRACKING_BCAST != 0 {
        flags.push(b"bcast");
    }
    if f & TRACKING_OPTIN != 0 {
        flags.push(b"optin");
        if f & TRACKING_CACHING != 0 {
            flags.push(b"caching-yes");
        }
    }
    if f & TRACKING_OPTOUT != 0 {
        flags.push(b"optout");
        if f & TRACKING_CACHING != 0 {
            flags.push(b"caching-no");
        }
    }
    if f & TRACKING_NOLOOP != 0 {
        flags.push(b"noloop");
    }
    if f & TRACKING_BROKEN_REDIR != 0 {
        flags.push(b"broken_redirect");
    }
    c.add_reply_map_len(3);
    c.add_reply_bulk(b"flags");
    c.add_reply_set_len(flags.len());
    for fl in flags {
        c.add_reply_bulk(fl);
    }
    c.add_reply_bulk(b"redirect");
    c.add_reply_integer(client_redir(c));
    c.add_reply_bulk(b"prefixes");
    let prefixes: Vec<Bytes> = c.tracking.prefixes.iter().cloned().collect();
    c.add_reply_array_len(prefixes.len());
    for p in prefixes {
        c.add_reply_bulk(&p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcast_reply_leaves_out_the_noloop_clients_own_keys() {
        let me = Token(7);
        let mut keys = BTreeMap::new();
        keys.insert(Bytes::from_static(b"b"), Some(me));
        keys.insert(Bytes::from_static(b"a"), None);
        let all = tracking_build_broadcast_reply(None, &keys).unwrap();
        assert_eq!(&all[..], b"*2\r\n$1\r\na\r\n$1\r\nb\r\n");
        let mine = tracking_build_broadcast_reply(Some(me), &keys).unwrap();
        assert_eq!(&mine[..], b"*1\r\n$1\r\na\r\n");
        keys.remove(&Bytes::from_static(b"a"));
        assert!(tracking_build_broadcast_reply(Some(me), &keys).is_none());
    }

    #[test]
    fn client_list_flags_put_tracking_letters_where_redis_does() {
        use crate::networking::{client_flags_string, CLIENT_DIRTY_CAS};
        let mut c = Client::new_fake(1, Token(1));
        assert_eq!(
            client_flags_with_tracking(client_flags_string(c.flags), &c),
            "N"
        );
        c.tracking.flags = TRACKING_ON;
        assert_eq!(
            client_flags_with_tracking(client_flags_string(c.flags), &c),
            "t"
        );
        c.flags = CLIENT_PUBSUB | CLIENT_MULTI | CLIENT_DIRTY_CAS;
        c.tracking.flags = TRACKING_ON | TRACKING_BROKEN_REDIR | TRACKING_BCAST;
        assert_eq!(
            client_flags_with_tracking(client_flags_string(c.flags), &c),
            "PxtRBd"
        );
    }

    #[test]
    fn prefixes_overlap_when_one_starts_the_other() {
        assert!(string_check_prefix(b"foo", b"foobar"));
        assert!(string_check_prefix(b"foobar", b"foo"));
        assert!(string_check_prefix(b"", b"x"));
        assert!(!string_check_prefix(b"foo", b"fob"));
    }
}
