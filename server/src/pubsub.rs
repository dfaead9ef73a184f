//! Pub/Sub (redis: pubsub.c): SUBSCRIBE, PSUBSCRIBE, SSUBSCRIBE, their
//! UNSUBSCRIBE twins, PUBLISH, SPUBLISH and PUBSUB introspection.
//!
//! State lives in two places, as in Redis:
//! - the server maps each channel (and each pattern, and each shard
//!   channel) to the tokens of its subscribers, in subscription order
//!   (`srv.pubsub_channels`, `srv.pubsub_patterns`,
//!   `srv.pubsubshard_channels`; Redis: dict of channel -> list of clients);
//! - each client keeps the set of what it subscribed to
//!   (`c.pubsub_channels`, `c.pubsub_patterns`, `c.pubsubshard_channels`)
//!   and the CLIENT_PUBSUB flag while it has any subscription.
//!
//! A message is delivered by appending it to each subscriber's output
//! buffer and queueing the subscriber for writing, exactly like a reply;
//! the `pubsub` class of client-output-buffer-limit closes a subscriber that
//! stops reading. Across different channels or patterns the order is hash
//! order, as with Redis's dicts.
//!
//! RESP2 replies to (un)subscribe and messages are plain arrays; RESP3 sends
//! them as push frames (`>3` / `>4`), so a RESP3 client may run any command
//! while subscribed.
//!
//! ## The running client and its own messages
//!
//! While a command runs, its client is taken out of `srv.clients` (networking.rs handle_client_readable).
//! A RESP3 client may be subscribed and publish (or trigger a keyspace
//! notification) to itself, and Redis writes that push into its buffer at
//! once, i.e. BEFORE the command's own reply. PUBLISH passes its client to
//! the delivery code directly. For notifications, which only reach
//! `pubsub_publish_message(srv, ..)`, `call()` brackets the handler with
//! `pubsub_call_begin` / `pubsub_call_end`: the first pushes the running
//! client's token on `srv.current_clients` and records where its reply
//! starts; messages for a running client are parked in
//! `srv.pending_self_push`; the second splices that client's messages into
//! `c.reply` at the recorded offset, so they precede the reply as in Redis.
//! Calls nest (EXEC runs each queued command through `call()`, a script
//! runs commands for its fake client), so a message raised by a command
//! inside EXEC lands inside EXEC's array, before that command's reply, as in
//! Redis. (A command that writes its reply before its notification still
//! gets the push in front: a simplification.)

use std::collections::{HashMap, HashSet};

use bytes::{Bytes, BytesMut};
use mio::Token;
use protocol::reply;
use protocol::Resp;
use storage::util::string_match;

use crate::networking::{
    close_client_on_output_buffer_limit_reached, Client, CLIENT_CLOSE_ASAP, CLIENT_DENY_BLOCKING,
    CLIENT_MULTI, CLIENT_PENDING_WRITE, CLIENT_PUBSUB,
};
use crate::server::Server;

/// Subscribers of each channel (or pattern), in subscription order.
pub type PubsubTable = HashMap<Bytes, Vec<Token>>;

/// Which family of channels: the global ones (SUBSCRIBE/PUBLISH) or the
/// shard channels (SSUBSCRIBE/SPUBLISH). Redis's `pubsubtype` struct.
#[derive(Clone, Copy, PartialEq, Eq)]
enum PubsubType {
    Global,
    Shard,
}

impl PubsubType {
    /// The reply words: subscribe / unsubscribe / message.
    fn words(self) -> (&'static [u8], &'static [u8], &'static [u8]) {
        match self {
            PubsubType::Global => (b"subscribe", b"unsubscribe", b"message"),
            PubsubType::Shard => (b"ssubscribe", b"sunsubscribe", b"smessage"),
        }
    }
}

/// A message for the running client, parked until its command returns
/// (see the top of the file). `pattern` is set for `pmessage`.
pub struct PendingPush {
    kind: &'static [u8],
    pattern: Option<Bytes>,
    channel: Bytes,
    message: Bytes,
}

// ---- replies (addReplyPubsub*) ----

/// addReplyPubsubMessage / addReplyPubsubPatMessage: `message channel msg`
/// or `pmessage pattern channel msg`, as an array (RESP2) or a push (RESP3).
fn add_reply_pubsub_message<B: reply::ReplySink + ?Sized>(
    buf: &mut B,
    resp: Resp,
    kind: &[u8],
    pattern: Option<&[u8]>,
    channel: &[u8],
    message: &[u8],
) {
    reply::push_len(buf, if pattern.is_some() { 4 } else { 3 }, resp);
    reply::bulk(buf, kind);
    if let Some(p) = pattern {
        reply::bulk(buf, p);
    }
    reply::bulk(buf, channel);
    reply::bulk(buf, message);
}

/// addReplyPubsubSubscribed / Unsubscribed / PatSubscribed /
/// PatUnsubscribed: `<what> <channel or null> <count>`. The count is the
/// client's channels + patterns, or its shard channels for the S forms.
/// Written to `push_buf`: like messages, these go out even under CLIENT
/// REPLY OFF (Redis's CLIENT_PUSHING).
fn add_reply_pubsub_notice(c: &mut Client, what: &[u8], channel: Option<&[u8]>, count: usize) {
    let resp = c.resp;
    let buf = c.push_buf();
    reply::push_len(buf, 3, resp);
    reply::bulk(buf, what);
    match channel {
        Some(ch) => reply::bulk(buf, ch),
        None => reply::null(buf, resp),
    }
    reply::integer(buf, count as i64);
}

// ---- counts ----

/// clientSubscriptionsCount: channels + patterns.
fn client_subscriptions_count(c: &Client) -> usize {
    c.pubsub_channels.len() + c.pubsub_patterns.len()
}

/// clientTotalPubSubSubscriptionCount: including shard channels.
fn client_total_pubsub_subscription_count(c: &Client) -> usize {
    client_subscriptions_count(c) + c.pubsubshard_channels.len()
}

fn type_count(c: &Client, t: PubsubType) -> usize {
    match t {
        PubsubType::Global => client_subscriptions_count(c),
        PubsubType::Shard => c.pubsubshard_channels.len(),
    }
}

fn client_set(c: &mut Client, t: PubsubType) -> &mut HashSet<Bytes> {
    match t {
        PubsubType::Global => &mut c.pubsub_channels,
        PubsubType::Shard => &mut c.pubsubshard_channels,
    }
}

fn server_table(srv: &mut Server, t: PubsubType) -> &mut PubsubTable {
    match t {
        PubsubType::Global => &mut srv.pubsub_channels,
        PubsubType::Shard => &mut srv.pubsubshard_channels,
    }
}

/// Drop the CLIENT_PUBSUB flag once nothing is left.
fn update_pubsub_flag(c: &mut Client) {
    if client_total_pubsub_subscription_count(c) == 0 {
        c.flags &= !CLIENT_PUBSUB;
    }
}

// ---- the low level API ----

/// Add `token` to the subscribers of `name` in `table`. The name is copied:
/// an argument may be a slice of a big query buffer we must not pin.
fn table_add(table: &mut PubsubTable, name: &[u8], token: Token) {
    table
        .entry(Bytes::copy_from_slice(name))
        .or_default()
        .push(token);
}

/// Remove `token` from the subscribers of `name`; the entry goes when its
/// last subscriber does, so abandoned channels cost nothing.
fn table_remove(table: &mut PubsubTable, name: &[u8], token: Token) {
    if let Some(list) = table.get_mut(name) {
        if let Some(pos) = list.iter().position(|t| *t == token) {
            list.remove(pos);
        }
        if list.is_empty() {
            table.remove(name);
        }
    }
}

/// pubsubSubscribeChannel: subscribe (if not already) and always notify.
fn pubsub_subscribe_channel(srv: &mut Server, c: &mut Client, channel: &Bytes, t: PubsubType) {
    if client_set(c, t).insert(Bytes::copy_from_slice(channel)) {
        table_add(server_table(srv, t), channel, c.token);
    }
    let count = type_count(c, t);
    add_reply_pubsub_notice(c, t.words().0, Some(channel), count);
}

/// pubsubUnsubscribeChannel: returns whether the client was subscribed.
fn pubsub_unsubscribe_channel(
    srv: &mut Server,
    c: &mut Client,
    channel: &Bytes,
    notify: bool,
    t: PubsubType,
) -> bool {
    let removed = client_set(c, t).remove(channel);
    if removed {
        table_remove(server_table(srv, t), channel, c.token);
    }
    if notify {
        let count = type_count(c, t);
        add_reply_pubsub_notice(c, t.words().1, Some(channel), count);
    }
    removed
}

/// pubsubUnsubscribeAllChannelsInternal: with nothing to leave, a notifying
/// caller still gets one reply, with a null channel.
fn pubsub_unsubscribe_all_channels(
    srv: &mut Server,
    c: &mut Client,
    notify: bool,
    t: PubsubType,
) -> usize {
    let channels: Vec<Bytes> = client_set(c, t).iter().cloned().collect();
    let mut count = 0;
    for ch in &channels {
        count += usize::from(pubsub_unsubscribe_channel(srv, c, ch, notify, t));
    }
    if notify && count == 0 {
        let n = type_count(c, t);
        add_reply_pubsub_notice(c, t.words().1, None, n);
    }
    count
}

/// pubsubSubscribePattern.
fn pubsub_subscribe_pattern(srv: &mut Server, c: &mut Client, pattern: &Bytes) {
    if c.pubsub_patterns.insert(Bytes::copy_from_slice(pattern)) {
        table_add(&mut srv.pubsub_patterns, pattern, c.token);
    }
    let count = client_subscriptions_count(c);
    add_reply_pubsub_notice(c, b"psubscribe", Some(pattern), count);
}

/// pubsubUnsubscribePattern.
fn pubsub_unsubscribe_pattern(
    srv: &mut Server,
    c: &mut Client,
    pattern: &Bytes,
    notify: bool,
) -> bool {
    let removed = c.pubsub_patterns.remove(pattern);
    if removed {
        table_remove(&mut srv.pubsub_patterns, pattern, c.token);
    }
    if notify {
        let count = client_subscriptions_count(c);
        add_reply_pubsub_notice(c, b"punsubscribe", Some(pattern), count);
    }
    removed
}

/// pubsubUnsubscribeAllPatterns.
fn pubsub_unsubscribe_all_patterns(srv: &mut Server, c: &mut Client, notify: bool) -> usize {
    let patterns: Vec<Bytes> = c.pubsub_patterns.iter().cloned().collect();
    let mut count = 0;
    for p in &patterns {
        count += usize::from(pubsub_unsubscribe_pattern(srv, c, p, notify));
    }
    if notify && count == 0 {
        let n = client_subscriptions_count(c);
        add_reply_pubsub_notice(c, b"punsubscribe", None, n);
    }
    count
}

/// pubsubMemOverhead: the client's side of its subscriptions (client
/// eviction): one set slot per channel, pattern and shard channel (a
/// `Bytes` handle plus the hash table's control byte). The names are
/// shared with the server's tables, so, as in Redis, they do not count.
pub fn pubsub_mem_overhead(c: &Client) -> usize {
    let slot = std::mem::size_of::<Bytes>() + 1;
    (c.pubsub_channels.capacity()
        + c.pubsub_patterns.capacity()
        + c.pubsubshard_channels.capacity())
        * slot
}

/// Leave every channel, pattern and shard channel without notifying: RESET
/// (clearClientConnectionState) and a closing client (freeClient).
pub fn pubsub_unsubscribe_all(srv: &mut Server, c: &mut Client) {
    pubsub_unsubscribe_all_channels(srv, c, false, PubsubType::Global);
    pubsub_unsubscribe_all_channels(srv, c, false, PubsubType::Shard);
    pubsub_unsubscribe_all_patterns(srv, c, false);
    c.flags &= !CLIENT_PUBSUB;
}

// ---- delivery ----

/// Append one message to the subscriber `token`'s output buffer.
/// - `me`, the client running the command when the caller has it: written
///   directly, before the reply the handler adds next;
/// - a client in `srv.clients`: written and queued for writing; closed at
///   its output buffer limit (the `pubsub` class) instead of growing;
/// - a running client the caller does not have: parked in
///   `srv.pending_self_push` (see the top of the file).
fn deliver(srv: &mut Server, me: &mut Option<&mut Client>, token: Token, msg: &PendingPush) {
    let pattern = msg.pattern.as_deref();
    if let Some(c) = me.as_deref_mut().filter(|c| c.token == token) {
        let resp = c.resp;
        add_reply_pubsub_message(
            c.push_buf(),
            resp,
            msg.kind,
            pattern,
            &msg.channel,
            &msg.message,
        );
        return;
    }
    if let Some(sub) = srv.clients.get_mut(&token) {
        // Redis stops adding replies to a client that is being closed.
        if sub.has_flag(CLIENT_CLOSE_ASAP) {
            return;
        }
        let resp = sub.resp;
        add_reply_pubsub_message(
            &mut sub.reply,
            resp,
            msg.kind,
            pattern,
            &msg.channel,
            &msg.message,
        );
        if close_client_on_output_buffer_limit_reached(&srv.config.client_output_buffer_limit, sub)
        {
            srv.clients_to_close.push(token);
        } else if !sub.has_flag(CLIENT_PENDING_WRITE) {
            sub.flags |= CLIENT_PENDING_WRITE;
            srv.clients_pending_write.push(token);
        }
        // The subscriber's output grew (client eviction).
        let limit = srv.config.maxmemory_clients;
        crate::client_eviction::update_client_mem_usage_and_bucket(&mut srv.client_mem, limit, sub);
        return;
    }
    if srv.current_clients.contains(&token) {
        let parked = PendingPush {
            kind: msg.kind,
            pattern: msg.pattern.clone(),
            channel: msg.channel.clone(),
            message: msg.message.clone(),
        };
        srv.pending_self_push.push((token, parked));
    }
}

/// pubsubPublishMessageInternal: exact subscribers first, in subscription
/// order, then (global channels only) each matching pattern's subscribers.
/// Returns the number of receivers, counting one client once per match.
fn pubsub_publish_message_internal(
    srv: &mut Server,
    mut me: Option<&mut Client>,
    channel: &[u8],
    message: &[u8],
    t: PubsubType,
) -> usize {
    let mut receivers = 0;
    let channel = Bytes::copy_from_slice(channel);
    let message = Bytes::copy_from_slice(message);
    // Delivery never changes subscriptions (closing is deferred), so each
    // table is moved out while we walk it and `srv` stays free for writing.
    let table = std::mem::take(server_table(srv, t));
    if let Some(subscribers) = table.get(&channel) {
        let msg = PendingPush {
            kind: t.words().2,
            pattern: None,
            channel: channel.clone(),
            message: message.clone(),
        };
        for &token in subscribers {
            deliver(srv, &mut me, token, &msg);
            receivers += 1;
        }
    }
    *server_table(srv, t) = table;
    if t == PubsubType::Shard {
        return receivers; // shard channels ignore patterns
    }

    let patterns = std::mem::take(&mut srv.pubsub_patterns);
    for (pattern, subscribers) in &patterns {
        if !string_match(pattern, &channel, false) {
            continue;
        }
        let msg = PendingPush {
            kind: b"pmessage",
            pattern: Some(pattern.clone()),
            channel: channel.clone(),
            message: message.clone(),
        };
        for &token in subscribers {
            deliver(srv, &mut me, token, &msg);
            receivers += 1;
        }
    }
    srv.pubsub_patterns = patterns;
    receivers
}

/// pubsubPublishMessage: deliver `message` to every client subscribed to
/// `channel` or to a pattern matching it; returns the number of receivers.
/// Keyspace notifications (notify.rs) publish through here.
pub fn pubsub_publish_message(srv: &mut Server, channel: &[u8], message: &[u8]) -> usize {
    pubsub_publish_message_internal(srv, None, channel, message, PubsubType::Global)
}

/// A message that came over the cluster bus (a PUBLISH or PUBLISHSHARD
/// packet): delivered to this node's subscribers only.
pub fn pubsub_publish_message_from_cluster(
    srv: &mut Server,
    channel: &[u8],
    message: &[u8],
    sharded: bool,
) -> usize {
    let ptype = if sharded {
        PubsubType::Shard
    } else {
        PubsubType::Global
    };
    pubsub_publish_message_internal(srv, None, channel, message, ptype)
}

/// Where the running command's reply starts (see `pubsub_call_begin`).
pub struct CallScope {
    reply_start: usize,
}

/// Before a command's handler runs: mark its client as running.
pub fn pubsub_call_begin(srv: &mut Server, c: &Client) -> CallScope {
    srv.current_clients.push(c.token);
    CallScope {
        reply_start: c.reply.len(),
    }
}

/// After the handler: put the messages the command sent to its own client
/// in front of the command's reply, where Redis's buffer has them.
pub fn pubsub_call_end(srv: &mut Server, c: &mut Client, scope: CallScope) {
    srv.current_clients.pop();
    if srv.pending_self_push.is_empty() {
        return;
    }
    let mut pushes = BytesMut::new();
    srv.pending_self_push.retain(|(token, m)| {
        if *token != c.token {
            return true; // an enclosing call's client (a script's caller)
        }
        let pattern = m.pattern.as_deref();
        add_reply_pubsub_message(&mut pushes, c.resp, m.kind, pattern, &m.channel, &m.message);
        false
    });
    if pushes.is_empty() {
        return;
    }
    // Under CLIENT REPLY OFF/SKIP the reply is dropped but pushes are not.
    if let Some(stash) = c.reply_stash.as_mut() {
        stash.extend_from_slice(&pushes);
        return;
    }
    c.reply.insert_at(scope.reply_start, &pushes);
}

/// The RESP2 subscribed-mode gate of processCommand: a RESP2 client with
/// any subscription may only run these (Redis compares c->cmd->proc).
pub fn command_allowed_in_resp2_pubsub_context(name: &str) -> bool {
    matches!(
        name,
        "ping"
            | "subscribe"
            | "ssubscribe"
            | "unsubscribe"
            | "sunsubscribe"
            | "psubscribe"
            | "punsubscribe"
            | "quit"
            | "reset"
    )
}

/// The text processCommand rejects with in RESP2 subscribed mode.
pub fn resp2_pubsub_context_error(fullname: &str) -> String {
    format!(
        "ERR Can't execute '{fullname}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context"
    )
}

// ---- commands ----

/// A client that expects exactly one reply per command (a script, EXEC's
/// inner commands) cannot enter subscribed mode; MULTI is tolerated for
/// SUBSCRIBE and PSUBSCRIBE for backward compatibility.
fn deny_subscribe(c: &mut Client, name: &str, allow_in_multi: bool) -> bool {
    if c.has_flag(CLIENT_DENY_BLOCKING) && !(allow_in_multi && c.has_flag(CLIENT_MULTI)) {
        c.add_reply_error(&format!(
            "ERR {name} isn't allowed for a DENY BLOCKING client"
        ));
        return true;
    }
    false
}

/// SUBSCRIBE channel [channel ...]
// redis: pubsub.c subscribeCommand
pub fn subscribe_command(srv: &mut Server, c: &mut Client) {
    if deny_subscribe(c, "SUBSCRIBE", true) {
        return;
    }
    for j in 1..c.argc() {
        let ch = c.argv[j].clone();
        pubsub_subscribe_channel(srv, c, &ch, PubsubType::Global);
    }
    c.flags |= CLIENT_PUBSUB;
}

/// UNSUBSCRIBE [channel [channel ...]]
// redis: pubsub.c unsubscribeCommand
pub fn unsubscribe_command(srv: &mut Server, c: &mut Client) {
    if c.argc() == 1 {
        pubsub_unsubscribe_all_channels(srv, c, true, PubsubType::Global);
    } else {
        for j in 1..c.argc() {
            let ch = c.argv[j].clone();
            pubsub_unsubscribe_channel(srv, c, &ch, true, PubsubType::Global);
        }
    }
    update_pubsub_flag(c);
}

/// PSUBSCRIBE pattern [pattern ...]
// redis: pubsub.c psubscribeCommand
pub fn psubscribe_command(srv: &mut Server, c: &mut Client) {
    if deny_subscribe(c, "PSUBSCRIBE", true) {
        return;
    }
    for j in 1..c.argc() {
        let p = c.argv[j].clone();
        pubsub_subscribe_pattern(srv, c, &p);
    }
    c.flags |= CLIENT_PUBSUB;
}

/// PUNSUBSCRIBE [pattern [pattern ...]]
// redis: pubsub.c punsubscribeCommand
pub fn punsubscribe_command(srv: &mut Server, c: &mut Client) {
    if c.argc() == 1 {
        pubsub_unsubscribe_all_patterns(srv, c, true);
    } else {
        for j in 1..c.argc() {
            let p = c.argv[j].clone();
            pubsub_unsubscribe_pattern(srv, c, &p, true);
        }
    }
    update_pubsub_flag(c);
}

/// SSUBSCRIBE shardchannel [shardchannel ...]
// redis: pubsub.c ssubscribeCommand (standalone: no slot bookkeeping; not
// even MULTI is tolerated)
pub fn ssubscribe_command(srv: &mut Server, c: &mut Client) {
    if deny_subscribe(c, "SSUBSCRIBE", false) {
        return;
    }
    for j in 1..c.argc() {
        let ch = c.argv[j].clone();
        pubsub_subscribe_channel(srv, c, &ch, PubsubType::Shard);
    }
    c.flags |= CLIENT_PUBSUB;
}

/// SUNSUBSCRIBE [shardchannel [shardchannel ...]]
// redis: pubsub.c sunsubscribeCommand
pub fn sunsubscribe_command(srv: &mut Server, c: &mut Client) {
    if c.argc() == 1 {
        pubsub_unsubscribe_all_channels(srv, c, true, PubsubType::Shard);
    } else {
        for j in 1..c.argc() {
            let ch = c.argv[j].clone();
            pubsub_unsubscribe_channel(srv, c, &ch, true, PubsubType::Shard);
        }
    }
    update_pubsub_flag(c);
}

/// PUBLISH channel message
// redis: pubsub.c publishCommand
pub fn publish_command(srv: &mut Server, c: &mut Client) {
    let (channel, message) = (c.argv[1].clone(), c.argv[2].clone());
    let receivers =
        pubsub_publish_message_internal(srv, Some(c), &channel, &message, PubsubType::Global);
    if srv.cluster.is_some() {
        // Every node of the cluster gets it over the bus
        // (pubsubPublishMessageAndPropagateToCluster).
        crate::cluster::bus::cluster_propagate_publish(srv, &channel, &message, false);
    } else {
        // Replicas get the message too (their subscribers hear it); the
        // AOF does not, since it changes no data.
        crate::propagate::force_command_propagation(srv, crate::propagate::PROPAGATE_REPL);
    }
    c.add_reply_integer(receivers as i64);
}

/// SPUBLISH shardchannel message
// redis: pubsub.c spublishCommand
pub fn spublish_command(srv: &mut Server, c: &mut Client) {
    let (channel, message) = (c.argv[1].clone(), c.argv[2].clone());
    let receivers =
        pubsub_publish_message_internal(srv, Some(c), &channel, &message, PubsubType::Shard);
    if srv.cluster.is_some() {
        // The other nodes of my shard (master and replicas) get it over
        // the bus.
        crate::cluster::bus::cluster_propagate_publish(srv, &channel, &message, true);
    } else {
        crate::propagate::force_command_propagation(srv, crate::propagate::PROPAGATE_REPL);
    }
    c.add_reply_integer(receivers as i64);
}

/// channelList: the channels (of `table`) matching `pat`, or all of them.
fn channel_list(c: &mut Client, table: &PubsubTable) {
    let pat = c.argv.get(2).cloned();
    let matching: Vec<&Bytes> = table
        .keys()
        .filter(|ch| pat.as_ref().is_none_or(|p| string_match(p, ch, false)))
        .collect();
    c.add_reply_array_len(matching.len());
    for ch in matching {
        c.add_reply_bulk(ch);
    }
}

/// Every `<channel> <subscriber count>` pair of (SHARD)NUMSUB.
fn numsub_reply(c: &mut Client, table: &PubsubTable) {
    c.add_reply_array_len((c.argc() - 2) * 2);
    for j in 2..c.argc() {
        let ch = c.argv[j].clone();
        c.add_reply_bulk(&ch);
        c.add_reply_integer(table.get(&ch).map_or(0, |l| l.len()) as i64);
    }
}

/// PUBSUB CHANNELS [pattern]
// redis: pubsub.c pubsubCommand ("channels")
pub fn pubsub_channels_command(srv: &mut Server, c: &mut Client) {
    if c.argc() > 3 {
        c.add_reply_subcommand_syntax_error();
        return;
    }
    channel_list(c, &srv.pubsub_channels);
}

/// PUBSUB SHARDCHANNELS [pattern]
// redis: pubsub.c pubsubCommand ("shardchannels")
pub fn pubsub_shardchannels_command(srv: &mut Server, c: &mut Client) {
    if c.argc() > 3 {
        c.add_reply_subcommand_syntax_error();
        return;
    }
    channel_list(c, &srv.pubsubshard_channels);
}

/// PUBSUB NUMSUB [channel [channel ...]]
// redis: pubsub.c pubsubCommand ("numsub"): pattern subscribers not counted
pub fn pubsub_numsub_command(srv: &mut Server, c: &mut Client) {
    numsub_reply(c, &srv.pubsub_channels);
}

/// PUBSUB SHARDNUMSUB [shardchannel [shardchannel ...]]
// redis: pubsub.c pubsubCommand ("shardnumsub")
pub fn pubsub_shardnumsub_command(srv: &mut Server, c: &mut Client) {
    numsub_reply(c, &srv.pubsubshard_channels);
}

/// PUBSUB NUMPAT
// redis: pubsub.c pubsubCommand ("numpat"): distinct patterns, not
// subscriptions
pub fn pubsub_numpat_command(srv: &mut Server, c: &mut Client) {
    c.add_reply_integer(srv.pubsub_patterns.len() as i64);
}

/// PUBSUB HELP
// redis: pubsub.c pubsubCommand ("help")
pub fn pubsub_help_command(_srv: &mut Server, c: &mut Client) {
    c.add_reply_help("PUBSUB", PUBSUB_HELP);
}

const PUBSUB_HELP: &[&str] = &[
    "CHANNELS [<pattern>]",
    "    Return the currently active channels matching a <pattern> (default: '*').",
    "NUMPAT",
    "    Return number of subscriptions to patterns.",
    "NUMSUB [<channel> ...]",
    "    Return the number of subscribers for the specified channels, excluding",
    "    pattern subscriptions(default: no channels).",
    "SHARDCHANNELS [<pattern>]",
    "    Return the currently active shard level channels matching a <pattern> (default: '*').",
    "SHARDNUMSUB [<shardchannel> ...]",
    "    Return the number of subscribers for the specified shard level channel(s)",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pubsub_message_is_an_array_in_resp2_and_a_push_in_resp3() {
        let mut b = BytesMut::new();
        add_reply_pubsub_message(&mut b, Resp::V2, b"message", None, b"ch", b"hi");
        assert_eq!(&b[..], b"*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n");
        let mut b = BytesMut::new();
        add_reply_pubsub_message(&mut b, Resp::V3, b"pmessage", Some(b"c*"), b"ch", b"hi");
        assert_eq!(
            &b[..],
            b">4\r\n$8\r\npmessage\r\n$2\r\nc*\r\n$2\r\nch\r\n$2\r\nhi\r\n"
        );
    }

    #[test]
    fn table_remove_drops_the_entry_with_its_last_subscriber() {
        let mut t = PubsubTable::new();
        table_add(&mut t, b"ch", Token(70));
        table_add(&mut t, b"ch", Token(71));
        table_remove(&mut t, b"ch", Token(70));
        assert_eq!(t.get(&b"ch"[..]).map(|l| l.len()), Some(1));
        table_remove(&mut t, b"ch", Token(71));
        assert!(t.is_empty());
        table_remove(&mut t, b"nothing", Token(71));
    }

    #[test]
    fn only_subscription_commands_ping_quit_reset_pass_the_resp2_gate() {
        assert!(command_allowed_in_resp2_pubsub_context("psubscribe"));
        assert!(command_allowed_in_resp2_pubsub_context("reset"));
        assert!(!command_allowed_in_resp2_pubsub_context("config|get"));
        assert!(!command_allowed_in_resp2_pubsub_context("publish"));
    }
}
