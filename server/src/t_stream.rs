//! The stream commands (Redis's t_stream.c, command half, and the stream
//! part of blocked.c).
//!
//! The type itself (the rax of listpack nodes, the iterator, trimming, the
//! consumer groups and their PELs) lives in `storage::t_stream`; this file
//! parses arguments, replies, and keeps the keyspace bookkeeping: every
//! write signals the key, fires its keyspace event (`xadd`, `xtrim`,
//! `xdel`, `xgroup-*`, `xsetid`) and counts `srv.dirty`.
//!
//! Blocking reads never block the loop: XREAD/XREADGROUP with BLOCK and no
//! data park the client (blocked.rs) with, per key, the ID it waits to see
//! passed (BlockState::stream). XADD signals the key; after the command,
//! `serve_clients_blocked_on_stream_key` answers each parked reader whose
//! ID the stream has passed, with just that key's new entries, as Redis 7.0
//! does. A parked XREADGROUP whose group or key disappears (XGROUP DESTROY,
//! DEL, a SET over the key, FLUSHALL, SWAPDB) gets Redis's NOGROUP /
//! UNBLOCKED error instead of waiting for ever.
//!
//! A reply whose length is known only at the end (XRANGE with tombstones,
//! XPENDING with IDLE...) is built in a scratch buffer and its header
//! written first (Redis's deferred lengths).

use bytes::{Bytes, BytesMut};
use storage::listpack::LpEntry;
use storage::object::{RObj, Value};
use storage::t_stream::{
    AppendError, NodeLimits, Stream, StreamID, StreamNack, TrimArgs, TrimStrategy,
    SCG_INVALID_ENTRIES_READ,
};
use storage::util::string2ll;

use crate::db::{db_add, lookup_key_read, lookup_key_write, new_object, signal_modified_key};
use crate::networking::{self, Client, CLIENT_DENY_BLOCKING, CLIENT_SCRIPT};
use crate::notify::{notify_keyspace_event, NOTIFY_STREAM};
use crate::server::{self, Server};
use crate::shared;

/// XREAD_BLOCKED_DEFAULT_COUNT: a reader that blocks without COUNT is
/// served at most this many entries per key when data arrives, so a low
/// ID does not turn one XADD into a huge reply.
const XREAD_BLOCKED_DEFAULT_COUNT: usize = 1000;

/// XAUTOCLAIM's attempts_factor: it looks at most COUNT * 10 PEL entries.
const XAUTOCLAIM_ATTEMPTS_FACTOR: i64 = 10;

/// XAUTOCLAIM allocates COUNT stream IDs up front (ztrymalloc); on the
/// reference machine Redis 7.0.15's allocator refuses a transient block
/// past 80 TiB and XAUTOCLAIM answers "Insufficient memory". We allocate
/// only what is used, and give the same answer at the same COUNT.
const XAUTOCLAIM_TRANSIENT_LIMIT: u128 = 80 << 40;

/// sizeof(stream) on 64-bit Redis 7.0 (rax*, length, three IDs,
/// entries_added, cgroups*).
const STREAM_STRUCT_SIZE: usize = 80;
/// sizeof(streamID).
const STREAM_ID_SIZE: usize = 16;
/// sizeof(raxNode): the 32-bit header.
const RAX_NODE_SIZE: usize = 4;
/// sizeof(streamCG), sizeof(streamNACK), sizeof(streamConsumer).
const STREAM_CG_SIZE: usize = 40;
const STREAM_NACK_SIZE: usize = 24;
const STREAM_CONSUMER_SIZE: usize = 24;

/// OBJ_STREAM: the type number mixed into a stream's digest.
const OBJ_STREAM: u32 = 6;

// ---- small helpers ----

/// The argument as C sees it: Redis's option and ID parsers work on the
/// NUL-terminated string, so `"maxlen\0x"` reads as "maxlen".
fn c_str(arg: &[u8]) -> &[u8] {
    match arg.iter().position(|&b| b == 0) {
        Some(nul) => &arg[..nul],
        None => arg,
    }
}

/// strcasecmp(arg, name) == 0.
fn opt_is(arg: &[u8], name: &str) -> bool {
    c_str(arg).eq_ignore_ascii_case(name.as_bytes())
}

/// The stream inside an object, if it is one.
fn as_stream(o: &mut RObj) -> Option<&mut Stream> {
    match &mut o.value {
        Value::Stream(s) => Some(s),
        _ => None,
    }
}

/// lookupKeyRead + checkType: Ok(None) if missing, Err after WRONGTYPE.
fn lookup_stream_read<'a>(
    srv: &'a mut Server,
    c: &mut Client,
    key: &[u8],
) -> Result<Option<&'a mut Stream>, ()> {
    let o = lookup_key_read(srv, c.db, key);
    crate::db::check_type(c, o, as_stream)
}

/// lookupKeyWrite + checkType.
fn lookup_stream_write<'a>(
    srv: &'a mut Server,
    c: &mut Client,
    key: &[u8],
) -> Result<Option<&'a mut Stream>, ()> {
    let o = lookup_key_write(srv, c.db, key);
    crate::db::check_type(c, o, as_stream)
}

/// The stream at `key` after a lookup already proved it exists.
fn stream_at<'a>(srv: &'a mut Server, dbid: usize, key: &[u8]) -> Option<&'a mut Stream> {
    srv.dbs[dbid].dict.find(key).and_then(as_stream)
}

/// streamTypeLookupWriteOrCreate: the stream at `key`, created (and added
/// to the keyspace) when missing unless `no_create` (NOMKSTREAM), which
/// replies a null. None after a reply.
fn stream_type_lookup_write_or_create<'a>(
    srv: &'a mut Server,
    c: &mut Client,
    key: &[u8],
    no_create: bool,
) -> Option<&'a mut Stream> {
    let dbid = c.db;
    match lookup_stream_write(srv, c, key) {
        Err(()) => return None,
        Ok(Some(_)) => {}
        Ok(None) if no_create => {
            c.add_reply_null();
            return None;
        }
        Ok(None) => {
            let o = new_object(srv, Value::Stream(Box::new(Stream::new())));
            db_add(srv, dbid, key, o);
        }
    }
    stream_at(srv, dbid, key)
}

/// The node limits from the config (stream-node-max-bytes/-entries).
fn node_limits(srv: &Server) -> NodeLimits {
    NodeLimits {
        max_bytes: srv.config.stream_node_max_bytes,
        max_entries: srv.config.stream_node_max_entries,
    }
}

/// getLongLongFromObjectOrReply: Redis's error, or `msg` ("ERR " added).
fn get_long_long_or_reply(c: &mut Client, i: usize, msg: Option<&str>) -> Option<i64> {
    match string2ll(c.arg(i)) {
        Some(v) => Some(v),
        None => {
            match msg {
                Some(m) => c.add_reply_error(&format!("ERR {m}")),
                None => c.add_reply_error(shared::NOT_INTEGER_ERR),
            }
            None
        }
    }
}

/// An error built from user bytes (a key or group name), as
/// addReplyErrorFormat's `%s`: the name stops at a NUL.
fn add_reply_error_parts(c: &mut Client, parts: &[&[u8]]) {
    let msg: Vec<u8> = parts
        .iter()
        .flat_map(|p| c_str(p).iter().copied())
        .collect();
    c.add_reply_error_bytes(&msg);
}

/// The NOGROUP error of XREADGROUP, XPENDING, XCLAIM, XAUTOCLAIM.
fn reply_nogroup(c: &mut Client, key: &[u8], group: &[u8], suffix: &str) {
    add_reply_error_parts(
        c,
        &[
            b"NOGROUP No such key '",
            key,
            b"' or consumer group '",
            group,
            b"'",
            suffix.as_bytes(),
        ],
    );
}

// ---- IDs ----

/// strtoull(s, &end, 10) with errno: leading blanks, an optional sign
/// (a minus negates, modulo 2^64), at least one digit, nothing after.
fn strtoull(s: &[u8]) -> Option<u64> {
    let mut i = 0;
    while i < s.len() && matches!(s[i], b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r') {
        i += 1;
    }
    let mut negative = false;
    if i < s.len() && (s[i] == b'+' || s[i] == b'-') {
        negative = s[i] == b'-';
        i += 1;
    }
    let digits = &s[i..];
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut v: u64 = 0;
    for &d in digits {
        v = v.checked_mul(10)?.checked_add(u64::from(d - b'0'))?; // ERANGE
    }
    Some(if negative { v.wrapping_neg() } else { v })
}

/// string2ull (util.c): a canonical long long that is not negative, or
/// whatever strtoull accepts.
fn string2ull(s: &[u8]) -> Option<u64> {
    if let Some(v) = string2ll(s) {
        return u64::try_from(v).ok();
    }
    if s.is_empty() {
        return None;
    }
    strtoull(s)
}

/// INVALID_ID_ERR: every malformed ID gets this one error.
const INVALID_ID_ERR: &str = "ERR Invalid stream ID specified as stream command argument";

/// How an ID argument may look (streamGenericParseIDOrReply's options).
#[derive(Clone, Copy)]
struct IdParse {
    /// The seq when only `<ms>` is given.
    missing_seq: u64,
    /// `-` and `+` are refused.
    strict: bool,
    /// `<ms>-*` is accepted (XADD).
    allow_seq_star: bool,
}

/// streamGenericParseIDOrReply: `<ms>[-<seq>]`, `-`, `+`, and for XADD
/// `<ms>-*`. Returns the ID and whether the sequence was given.
fn parse_id(arg: &[u8], how: IdParse) -> Option<(StreamID, bool)> {
    // Redis copies the argument into a 128-byte buffer.
    if arg.len() > 127 {
        return None;
    }
    let buf = c_str(arg);
    if how.strict && (buf == b"-" || buf == b"+") {
        return None;
    }
    if buf == b"-" {
        return Some((StreamID::MIN, true));
    }
    if buf == b"+" {
        return Some((StreamID::MAX, true));
    }
    let (ms_part, seq_part) = match buf.iter().position(|&b| b == b'-') {
        Some(dash) => (&buf[..dash], Some(&buf[dash + 1..])),
        None => (buf, None),
    };
    let ms = string2ull(ms_part)?;
    match seq_part {
        Some(b"*") if how.allow_seq_star => Some((StreamID::new(ms, 0), false)),
        Some(seq) => Some((StreamID::new(ms, string2ull(seq)?), true)),
        None => Some((StreamID::new(ms, how.missing_seq), true)),
    }
}

/// streamParseIDOrReply / streamParseStrictIDOrReply.
fn parse_id_or_reply(c: &mut Client, i: usize, missing_seq: u64, strict: bool) -> Option<StreamID> {
    let how = IdParse {
        missing_seq,
        strict,
        allow_seq_star: false,
    };
    match parse_id(c.arg(i), how) {
        Some((id, _)) => Some(id),
        None => {
            c.add_reply_error(INVALID_ID_ERR);
            None
        }
    }
}

/// streamParseIntervalIDOrReply: `(` before an ID makes it exclusive (and
/// strict); the returned flag says so.
fn parse_interval_id_or_reply(
    c: &mut Client,
    i: usize,
    missing_seq: u64,
) -> Option<(StreamID, bool)> {
    let arg = c.arg(i);
    let exclude = arg.len() > 1 && arg[0] == b'(';
    let how = IdParse {
        missing_seq,
        strict: exclude,
        allow_seq_star: false,
    };
    let parsed = if exclude {
        parse_id(&arg[1..], how)
    } else {
        parse_id(arg, how)
    };
    match parsed {
        Some((id, _)) => Some((id, exclude)),
        None => {
            c.add_reply_error(INVALID_ID_ERR);
            None
        }
    }
}

/// The start of a range: `(id` moves to the next ID.
fn parse_range_start_or_reply(c: &mut Client, i: usize) -> Option<StreamID> {
    let (mut id, exclude) = parse_interval_id_or_reply(c, i, 0)?;
    if exclude && !id.incr() {
        c.add_reply_error("ERR invalid start ID for the interval");
        return None;
    }
    Some(id)
}

/// The end of a range: a bare `<ms>` means its last sequence; `(id` moves
/// to the previous ID.
fn parse_range_end_or_reply(c: &mut Client, i: usize) -> Option<StreamID> {
    let (mut id, exclude) = parse_interval_id_or_reply(c, i, u64::MAX)?;
    if exclude && !id.decr() {
        c.add_reply_error("ERR invalid end ID for the interval");
        return None;
    }
    Some(id)
}

/// createStreamIDString into a stack buffer: `<ms>-<seq>`, no allocation.
fn stream_id_bytes(id: StreamID, out: &mut [u8; 41]) -> usize {
    let ms = storage::util::ull2string(id.ms);
    let seq = storage::util::ull2string(id.seq);
    let (a, b) = (ms.as_bytes(), seq.as_bytes());
    out[..a.len()].copy_from_slice(a);
    out[a.len()] = b'-';
    out[a.len() + 1..a.len() + 1 + b.len()].copy_from_slice(b);
    a.len() + 1 + b.len()
}

/// addReplyStreamID.
fn add_reply_stream_id(c: &mut Client, id: StreamID) {
    let mut buf = [0u8; 41];
    let n = stream_id_bytes(id, &mut buf);
    c.add_reply_bulk(&buf[..n]);
}

/// The same into a raw buffer (deferred replies).
fn put_stream_id(out: &mut BytesMut, id: StreamID) {
    let mut buf = [0u8; 41];
    let n = stream_id_bytes(id, &mut buf);
    protocol::reply::bulk(out, &buf[..n]);
}

/// A field or value: an integer element goes back as its decimal text.
fn put_entry(out: &mut BytesMut, e: LpEntry<'_>) {
    match e {
        LpEntry::Str(s) => protocol::reply::bulk(out, s),
        LpEntry::Int(i) => protocol::reply::bulk_i64(out, i),
    }
}

/// Write `body` (holding `n` elements) after an array header: the end of
/// a deferred-length reply.
fn add_reply_deferred_array(c: &mut Client, n: usize, body: &BytesMut) {
    c.add_reply_array_len(n);
    c.reply.extend_from_slice(body);
}

// ---- replying with ranges (streamReplyWithRange) ----

/// streamReplyWithRange without a group: `[id, [field, value ...]]` for
/// each entry in range, at most `count` (0 = all). With `raw` the entries
/// are written without the enclosing array (STREAM_RWR_RAWENTRIES).
/// Returns how many entries were written.
fn reply_with_range(
    out: &mut BytesMut,
    s: &Stream,
    start: Option<StreamID>,
    end: Option<StreamID>,
    count: usize,
    rev: bool,
    mut ids: Option<&mut Vec<StreamID>>,
) -> usize {
    let mut si = s.iter(start, end, rev);
    let mut n = 0;
    while let Some((id, numfields)) = si.next_id() {
        protocol::reply::array_len(out, 2);
        put_stream_id(out, id);
        protocol::reply::array_len(out, numfields as usize * 2);
        for _ in 0..numfields {
            let (f, v) = si.next_field();
            put_entry(out, f);
            put_entry(out, v);
        }
        if let Some(ids) = ids.as_deref_mut() {
            ids.push(id);
        }
        n += 1;
        if count != 0 && n == count {
            break;
        }
    }
    n
}

/// streamReplyWithRange (no group) as a complete reply with its array
/// header.
fn add_reply_range(
    c: &mut Client,
    s: &Stream,
    start: Option<StreamID>,
    end: Option<StreamID>,
    count: usize,
    rev: bool,
) -> usize {
    let mut body = BytesMut::new();
    let n = reply_with_range(&mut body, s, start, end, count, rev, None);
    add_reply_deferred_array(c, n, &body);
    n
}

/// One entry, raw (XCLAIM, XAUTOCLAIM, XINFO's first/last entry).
fn add_reply_one_entry(c: &mut Client, s: &Stream, id: StreamID, rev: bool) -> usize {
    let mut body = BytesMut::new();
    let n = reply_with_range(&mut body, s, Some(id), Some(id), 1, rev, None);
    c.reply.extend_from_slice(&body);
    n
}

/// What a group read needs besides the range: which group and consumer,
/// NOACK, and whether to serve the consumer's history (an ID other than
/// `>`: STREAM_RWR_HISTORY).
struct GroupRead<'a> {
    group: &'a [u8],
    consumer: &'a [u8],
    noack: bool,
    history: bool,
}

/// streamReplyWithRange with a group: the new entries after `start` are
/// delivered (the group's last ID and read counter advance, and unless
/// NOACK each entry gets a NACK owned by the consumer). With `history`,
/// streamReplyWithRangeFromConsumerPEL instead.
///
/// Returns what the read propagates as (streamPropInfo's work): an XCLAIM
/// per entry put in the PEL, and with NOACK, when the group's last ID
/// moved, one XGROUP SETID.
fn reply_with_range_group(
    c: &mut Client,
    s: &mut Stream,
    key: &[u8],
    start: StreamID,
    count: usize,
    g: &GroupRead<'_>,
    now: i64,
) -> Vec<Vec<Bytes>> {
    let mut ops = Vec::new();
    if g.history {
        reply_from_consumer_pel(c, s, start, count, g);
        return ops;
    }
    let mut propagate_last_id = false;
    // Write the entries while the stream is borrowed read-only, noting the
    // IDs; then apply the group's bookkeeping for each, in Redis's order.
    let mut ids = Vec::new();
    let mut body = BytesMut::new();
    let n = reply_with_range(
        &mut body,
        s,
        Some(start),
        None,
        count,
        false,
        Some(&mut ids),
    );
    add_reply_deferred_array(c, n, &body);
    for id in ids {
        let last_id = match s.lookup_cg(g.group) {
            Some(cg) => cg.last_id,
            None => return ops,
        };
        let entries_read = if id > last_id {
            let er = s.lookup_cg(g.group).map_or(0, |cg| cg.entries_read);
            Some(s.cg_entries_read_after(er, id))
        } else {
            None
        };
        let Some(cg) = s.lookup_cg_mut(g.group) else {
            return ops;
        };
        if let Some(er) = entries_read {
            cg.entries_read = er;
            cg.last_id = id;
            // Without NOACK the last ID travels in each XCLAIM's LASTID.
            propagate_last_id |= g.noack;
        }
        if !g.noack {
            cg.deliver(id, g.consumer, now);
            if let Some(nack) = cg.pel.find(&id.encode()) {
                ops.push(stream_propagate_xclaim(
                    key,
                    g.group,
                    g.consumer,
                    Bytes::from(id.to_string()),
                    nack.delivery_time,
                    nack.delivery_count,
                    cg.last_id,
                ));
            }
        }
    }
    if propagate_last_id {
        if let Some(cg) = s.lookup_cg(g.group) {
            ops.push(stream_propagate_group_id(
                key,
                g.group,
                cg.last_id,
                cg.entries_read,
            ));
        }
    }
    ops
}

/// streamPropagateXCLAIM: an entry put in (or removed from) a PEL
/// propagates as an XCLAIM that does the same thing wherever it is
/// replayed, whatever the replica's clock says:
/// `XCLAIM key group consumer 0 id TIME ms RETRYCOUNT n FORCE JUSTID
/// LASTID group-last-id` (JUSTID: the replica need not read the entry).
fn stream_propagate_xclaim(
    key: &[u8],
    group: &[u8],
    consumer: &[u8],
    id_arg: Bytes,
    delivery_time: i64,
    delivery_count: u64,
    last_id: StreamID,
) -> Vec<Bytes> {
    vec![
        Bytes::from_static(b"XCLAIM"),
        Bytes::copy_from_slice(key),
        Bytes::copy_from_slice(group),
        Bytes::copy_from_slice(consumer),
        Bytes::from_static(b"0"),
        id_arg,
        Bytes::from_static(b"TIME"),
        Bytes::from(delivery_time.to_string()),
        Bytes::from_static(b"RETRYCOUNT"),
        Bytes::from(delivery_count.to_string()),
        Bytes::from_static(b"FORCE"),
        Bytes::from_static(b"JUSTID"),
        Bytes::from_static(b"LASTID"),
        Bytes::from(last_id.to_string()),
    ]
}

/// streamPropagateGroupID: the group's last ID moved with no PEL entry to
/// carry it (NOACK, or XCLAIM LASTID claiming nothing):
/// `XGROUP SETID key group id ENTRIESREAD n`.
fn stream_propagate_group_id(
    key: &[u8],
    group: &[u8],
    last_id: StreamID,
    entries_read: i64,
) -> Vec<Bytes> {
    vec![
        Bytes::from_static(b"XGROUP"),
        Bytes::from_static(b"SETID"),
        Bytes::copy_from_slice(key),
        Bytes::copy_from_slice(group),
        Bytes::from(last_id.to_string()),
        Bytes::from_static(b"ENTRIESREAD"),
        Bytes::from(entries_read.to_string()),
    ]
}

/// streamPropagateConsumerCreation: with NOACK no XCLAIM creates the
/// consumer on the replica, so its implicit creation propagates as
/// `XGROUP CREATECONSUMER key group consumer`.
fn stream_propagate_consumer_creation(key: &[u8], group: &[u8], consumer: &[u8]) -> Vec<Bytes> {
    vec![
        Bytes::from_static(b"XGROUP"),
        Bytes::from_static(b"CREATECONSUMER"),
        Bytes::copy_from_slice(key),
        Bytes::copy_from_slice(group),
        Bytes::copy_from_slice(consumer),
    ]
}

/// Queue stream ops for the AOF and the replicas.
fn propagate_ops(srv: &mut Server, dbid: usize, ops: Vec<Vec<Bytes>>) {
    for argv in ops {
        crate::propagate::also_propagate(
            srv,
            dbid,
            argv,
            crate::propagate::PROPAGATE_AOF | crate::propagate::PROPAGATE_REPL,
        );
    }
}

/// streamReplyWithRangeFromConsumerPEL: the consumer's own pending
/// entries from `start`; an entry deleted since is `[id, nil]`; each one
/// served counts one more delivery.
fn reply_from_consumer_pel(
    c: &mut Client,
    s: &mut Stream,
    start: StreamID,
    count: usize,
    g: &GroupRead<'_>,
) {
    let mut ids = Vec::new();
    if let Some(consumer) = s
        .lookup_cg(g.group)
        .and_then(|cg| cg.lookup_consumer(g.consumer))
    {
        let mut it = consumer.pel.iter_from(&start.encode());
        while let Some((key, ())) = it.next() {
            if count != 0 && ids.len() >= count {
                break;
            }
            ids.extend(StreamID::decode(key));
        }
    }
    let now = server::mstime();
    c.add_reply_array_len(ids.len());
    for id in ids {
        if add_reply_one_entry(c, s, id, false) == 0 {
            c.add_reply_array_len(2);
            add_reply_stream_id(c, id);
            c.add_reply_null_array();
        } else if let Some(nack) = s
            .lookup_cg_mut(g.group)
            .and_then(|cg| cg.pel.find_mut(&id.encode()))
        {
            nack.delivery_time = now;
            nack.delivery_count += 1;
        }
    }
}

/// streamLookupConsumer(SLC_DEFAULT), creating the consumer when missing
/// (streamCreateConsumer, which notifies `xgroup-createconsumer` and
/// counts a change).
fn lookup_or_create_consumer(
    srv: &mut Server,
    dbid: usize,
    key: &[u8],
    group: &[u8],
    consumer: &[u8],
) -> bool {
    let now = server::mstime();
    let Some(cg) = stream_at(srv, dbid, key).and_then(|s| s.lookup_cg_mut(group)) else {
        return false;
    };
    if let Some(existing) = cg.lookup_consumer_mut(consumer) {
        existing.seen_time = now;
        return false;
    }
    cg.create_consumer(consumer, now);
    srv.dirty += 1;
    notify_keyspace_event(srv, NOTIFY_STREAM, "xgroup-createconsumer", key, dbid);
    true
}

// ---- XADD / XTRIM ----

/// streamAddTrimArgs: what XADD and XTRIM parsed.
struct AddTrimArgs {
    id: StreamID,
    id_given: bool,
    seq_given: bool,
    no_mkstream: bool,
    trim: TrimArgs,
    /// Where the MAXLEN/MINID threshold is (trim_strategy_arg_idx).
    trim_arg_idx: usize,
}

/// streamParseAddOrTrimArgsOrReply: the options of XADD (up to the ID,
/// whose position is returned) or of XTRIM. None after an error reply.
fn parse_add_or_trim_args(
    srv: &Server,
    c: &mut Client,
    xadd: bool,
) -> Option<(AddTrimArgs, usize)> {
    let mut args = AddTrimArgs {
        id: StreamID::MIN,
        id_given: false,
        seq_given: true,
        no_mkstream: false,
        trim: TrimArgs {
            strategy: TrimStrategy::None,
            approx: false,
            limit: 0,
        },
        trim_arg_idx: 0,
    };
    let mut limit_given = false;
    let mut i = 2;
    while i < c.argc() {
        let moreargs = c.argc() - 1 - i;
        let opt = c.arg(i);
        if xadd && c_str(opt) == b"*" {
            break; // the common case of an automatic ID
        } else if (opt_is(opt, "maxlen") || opt_is(opt, "minid")) && moreargs > 0 {
            let maxlen = opt_is(opt, "maxlen");
            if args.trim.strategy != TrimStrategy::None {
                c.add_reply_error(
                    "ERR syntax error, MAXLEN and MINID options at the same time are not compatible",
                );
                return None;
            }
            args.trim.approx = false;
            let next = c_str(c.arg(i + 1));
            if moreargs >= 2 && next == b"~" {
                args.trim.approx = true;
                i += 1;
            } else if moreargs >= 2 && next == b"=" {
                i += 1;
            }
            args.trim_arg_idx = i + 1;
            if maxlen {
                let n = get_long_long_or_reply(c, i + 1, None)?;
                if n < 0 {
                    c.add_reply_error("ERR The MAXLEN argument must be >= 0.");
                    return None;
                }
                args.trim.strategy = TrimStrategy::MaxLen(n as u64);
            } else {
                let id = parse_id_or_reply(c, i + 1, 0, true)?;
                args.trim.strategy = TrimStrategy::MinId(id);
            }
            i += 1;
        } else if opt_is(opt, "limit") && moreargs > 0 {
            let n = get_long_long_or_reply(c, i + 1, None)?;
            if n < 0 {
                c.add_reply_error("ERR The LIMIT argument must be >= 0.");
                return None;
            }
            args.trim.limit = n;
            limit_given = true;
            i += 1;
        } else if xadd && opt_is(opt, "nomkstream") {
            args.no_mkstream = true;
        } else if xadd {
            // A syntax error, or the ID.
            let how = IdParse {
                missing_seq: 0,
                strict: true,
                allow_seq_star: true,
            };
            let Some((id, seq_given)) = parse_id(opt, how) else {
                c.add_reply_error(INVALID_ID_ERR);
                return None;
            };
            args.id = id;
            args.seq_given = seq_given;
            args.id_given = true;
            break;
        } else {
            c.add_reply_syntax_error();
            return None;
        }
        i += 1;
    }
    if args.trim.limit != 0 && args.trim.strategy == TrimStrategy::None {
        c.add_reply_error(
            "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy",
        );
        return None;
    }
    if !xadd && args.trim.strategy == TrimStrategy::None {
        c.add_reply_error("ERR syntax error, XTRIM must be called with a trimming strategy");
        return None;
    }
    if networking::must_obey_client(c) {
        // From our master or the AOF: the trim argument was rewritten to
        // the exact result, so LIMIT (kept in the command) must not apply.
        args.trim.limit = 0;
    } else if limit_given {
        if !args.trim.approx {
            c.add_reply_error(
                "ERR syntax error, LIMIT cannot be used without the special ~ option",
            );
            return None;
        }
    } else if args.trim.approx {
        // `~` without LIMIT: at most 100 nodes' worth of entries, so one
        // XADD never trims for long.
        args.trim.limit = srv.config.stream_node_max_entries.wrapping_mul(100);
        if args.trim.limit <= 0 {
            args.trim.limit = 10000;
        }
        if args.trim.limit > 1_000_000 {
            args.trim.limit = 1_000_000;
        }
    } else {
        args.trim.limit = 0; // exact trimming is never limited
    }
    Some((args, i))
}

/// XADD key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold [LIMIT count]] *|id field value [field value ...]
// redis: t_stream.c xaddCommand
pub fn xadd_command(srv: &mut Server, c: &mut Client) {
    let Some((args, idpos)) = parse_add_or_trim_args(srv, c, true) else {
        return;
    };
    let field_pos = idpos + 1;
    if c.argc() < field_pos + 2 || (c.argc() - field_pos) % 2 == 1 {
        return c.add_reply_error("ERR wrong number of arguments for 'xadd' command");
    }
    // Refuse 0-0 before a new stream could be created for nothing.
    if args.id_given && args.seq_given && args.id.is_zero() {
        return c.add_reply_error("ERR The ID specified in XADD must be greater than 0-0");
    }
    let (key, dbid, limits) = (c.argv[1].clone(), c.db, node_limits(srv));
    let argv: Vec<Bytes> = c.argv[field_pos..].to_vec();
    let Some(s) = stream_type_lookup_write_or_create(srv, c, &key, args.no_mkstream) else {
        return;
    };
    if s.last_id == StreamID::MAX {
        return c.add_reply_error(
            "ERR The stream has exhausted the last possible ID, unable to add more items",
        );
    }
    let use_id = args.id_given.then_some(args.id);
    let now = server::mstime().max(0) as u64;
    let id =
        match s.append_item(&argv, use_id, args.seq_given, now, limits) {
            Ok(id) => id,
            Err(AppendError::IdTooSmall) => return c.add_reply_error(
                "ERR The ID specified in XADD is equal or smaller than the target stream top item",
            ),
            Err(AppendError::TooLarge | AppendError::SequenceExhausted) => {
                return c.add_reply_error("ERR Elements are too large to be stored")
            }
        };
    add_reply_stream_id(c, id);
    let trimmed = s.trim(&args.trim) > 0;
    // Propagated deterministically: `~ <n>` as `= <what is left>`, and
    // the ID actually used instead of `*` / `<ms>-*`.
    if args.trim.approx && args.trim.strategy != TrimStrategy::None {
        stream_rewrite_trim_argument(c, s, &args);
    }
    if !args.id_given || !args.seq_given {
        crate::propagate::rewrite_client_command_argument(c, idpos, Bytes::from(id.to_string()));
    }
    signal_modified_key(srv, dbid, &key);
    notify_keyspace_event(srv, NOTIFY_STREAM, "xadd", &key, dbid);
    srv.dirty += 1;
    if trimmed {
        notify_keyspace_event(srv, NOTIFY_STREAM, "xtrim", &key, dbid);
    }
    // New data: readers blocked on this key may be served.
    crate::blocked::signal_key_as_ready(srv, dbid, &key);
}

/// streamRewriteApproxSpecifier + streamRewriteTrimArgument: an
/// approximate trim propagates as the exact one it turned out to be
/// (MAXLEN = <length now>, MINID = <first ID now>).
fn stream_rewrite_trim_argument(c: &mut Client, s: &Stream, args: &AddTrimArgs) {
    let idx = args.trim_arg_idx;
    crate::propagate::rewrite_client_command_argument(c, idx - 1, Bytes::from_static(b"="));
    let arg = match args.trim.strategy {
        TrimStrategy::MaxLen(_) => s.length.to_string(),
        _ => s.get_edge_id(true, false).to_string(),
    };
    crate::propagate::rewrite_client_command_argument(c, idx, Bytes::from(arg));
}

/// XTRIM key MAXLEN|MINID [=|~] threshold [LIMIT count]
// redis: t_stream.c xtrimCommand
pub fn xtrim_command(srv: &mut Server, c: &mut Client) {
    let Some((args, _)) = parse_add_or_trim_args(srv, c, false) else {
        return;
    };
    let (key, dbid) = (c.argv[1].clone(), c.db);
    let s = match lookup_stream_write(srv, c, &key) {
        Err(()) => return,
        Ok(None) => return c.add_reply_integer(0),
        Ok(Some(s)) => s,
    };
    let deleted = s.trim(&args.trim);
    if args.trim.approx {
        stream_rewrite_trim_argument(c, s, &args);
    }
    if deleted > 0 {
        notify_keyspace_event(srv, NOTIFY_STREAM, "xtrim", &key, dbid);
        signal_modified_key(srv, dbid, &key);
        srv.dirty += deleted as u64;
    }
    c.add_reply_integer(deleted);
}

// ---- XRANGE / XREVRANGE / XLEN / XDEL ----

/// xrangeGenericCommand: `start`/`end` as given (`-`, `+`, `(` exclusive,
/// a bare `<ms>`), then COUNT.
fn xrange_generic_command(srv: &mut Server, c: &mut Client, rev: bool) {
    let (start_i, end_i) = if rev { (3, 2) } else { (2, 3) };
    let Some(start) = parse_range_start_or_reply(c, start_i) else {
        return;
    };
    let Some(end) = parse_range_end_or_reply(c, end_i) else {
        return;
    };
    let mut count: i64 = -1;
    let mut j = 4;
    while j < c.argc() {
        if opt_is(c.arg(j), "count") && c.argc() - j > 1 {
            count = get_long_long_or_reply(c, j + 1, None)
                .map(|n| n.max(0))
                .unwrap_or(-2);
            if count == -2 {
                return;
            }
            j += 1;
        } else {
            return c.add_reply_syntax_error();
        }
        j += 1;
    }
    let key = c.argv[1].clone();
    let s = match lookup_stream_read(srv, c, &key) {
        Err(()) => return,
        Ok(None) => return c.add_reply_array_len(0),
        Ok(Some(s)) => s,
    };
    if count == 0 {
        return c.add_reply_null_array();
    }
    let count = if count == -1 { 0 } else { count as usize };
    add_reply_range(c, s, Some(start), Some(end), count, rev);
}

/// XRANGE key start end [COUNT count]
// redis: t_stream.c xrangeCommand
pub fn xrange_command(srv: &mut Server, c: &mut Client) {
    xrange_generic_command(srv, c, false);
}

/// XREVRANGE key end start [COUNT count]
// redis: t_stream.c xrevrangeCommand
pub fn xrevrange_command(srv: &mut Server, c: &mut Client) {
    xrange_generic_command(srv, c, true);
}

/// XLEN key
// redis: t_stream.c xlenCommand
pub fn xlen_command(srv: &mut Server, c: &mut Client) {
    let key = c.argv[1].clone();
    match lookup_stream_read(srv, c, &key) {
        Err(()) => {}
        Ok(None) => c.add_reply_integer(0),
        Ok(Some(s)) => c.add_reply_integer(s.length as i64),
    }
}

/// XDEL key id [id ...]
// redis: t_stream.c xdelCommand
pub fn xdel_command(srv: &mut Server, c: &mut Client) {
    let (key, dbid) = (c.argv[1].clone(), c.db);
    match lookup_stream_write(srv, c, &key) {
        Err(()) => return,
        Ok(None) => return c.add_reply_integer(0),
        Ok(Some(_)) => {}
    }
    // Every ID is checked before any is deleted: all or nothing.
    let mut ids = Vec::with_capacity(c.argc() - 2);
    for j in 2..c.argc() {
        let Some(id) = parse_id_or_reply(c, j, 0, true) else {
            return;
        };
        ids.push(id);
    }
    let Some(s) = stream_at(srv, dbid, &key) else {
        return;
    };
    let mut deleted = 0u64;
    let mut first_entry = false;
    for id in ids {
        if s.delete_item(id) {
            if id == s.first_id {
                first_entry = true;
            }
            if id > s.max_deleted_entry_id {
                s.max_deleted_entry_id = id;
            }
            deleted += 1;
        }
    }
    if deleted > 0 {
        if s.length == 0 {
            s.first_id = StreamID::MIN;
        } else if first_entry {
            s.first_id = s.get_edge_id(true, true);
        }
        signal_modified_key(srv, dbid, &key);
        notify_keyspace_event(srv, NOTIFY_STREAM, "xdel", &key, dbid);
        srv.dirty += deleted;
    }
    c.add_reply_integer(deleted as i64);
}

// ---- XREAD / XREADGROUP ----

/// What a parked XREAD/XREADGROUP waits for (c->bpop's stream fields):
/// per blocked key (in BlockState::keys order) the ID to pass, how many
/// entries to serve, and the group it reads for.
#[derive(Debug, Clone)]
pub struct StreamBlock {
    pub ids: Vec<StreamID>,
    pub count: usize,
    pub group: Option<(Bytes, Bytes)>,
    pub noack: bool,
}

/// XREAD [COUNT count] [BLOCK milliseconds] STREAMS key [key ...] id [id ...]
// redis: t_stream.c xreadCommand
pub fn xread_command(srv: &mut Server, c: &mut Client) {
    xread_generic_command(srv, c, false);
}

/// XREADGROUP GROUP group consumer [COUNT count] [BLOCK milliseconds] [NOACK] STREAMS key [key ...] id [id ...]
// redis: t_stream.c xreadCommand
pub fn xreadgroup_command(srv: &mut Server, c: &mut Client) {
    xread_generic_command(srv, c, true);
    // The read propagates through its effects (the XCLAIMs and XGROUPs
    // queued while serving it), never as itself.
    crate::propagate::prevent_command_propagation(srv);
}

/// The parsed options of XREAD/XREADGROUP.
struct XreadArgs {
    timeout: Option<i64>,
    count: usize,
    streams_arg: usize,
    streams_count: usize,
    group: Option<(Bytes, Bytes)>,
    noack: bool,
}

/// xreadCommand's option loop. None after an error reply.
fn parse_xread_args(c: &mut Client, xreadgroup: bool) -> Option<XreadArgs> {
    let mut a = XreadArgs {
        timeout: None,
        count: 0,
        streams_arg: 0,
        streams_count: 0,
        group: None,
        noack: false,
    };
    let mut i = 1;
    while i < c.argc() {
        let moreargs = c.argc() - i - 1;
        let o = c.arg(i);
        if opt_is(o, "block") && moreargs > 0 {
            if c.has_flag(CLIENT_SCRIPT) {
                // No sense in blocking inside a script: refused outright.
                let name = String::from_utf8_lossy(c_str(c.arg(0))).into_owned();
                c.add_reply_error(&format!(
                    "ERR {name} command is not allowed with BLOCK option from scripts"
                ));
                return None;
            }
            i += 1;
            // getTimeoutFromObjectOrReply(UNIT_MILLISECONDS).
            let Some(ms) = string2ll(c.arg(i)) else {
                c.add_reply_error(shared::TIMEOUT_NOT_INTEGER_ERR);
                return None;
            };
            if ms < 0 {
                c.add_reply_error(shared::TIMEOUT_NEGATIVE_ERR);
                return None;
            }
            // tval += mstime() (a C long long: it wraps past the range).
            a.timeout = Some(if ms > 0 {
                ms.wrapping_add(server::mstime())
            } else {
                0
            });
        } else if opt_is(o, "count") && moreargs > 0 {
            i += 1;
            let n = get_long_long_or_reply(c, i, None)?;
            a.count = n.max(0) as usize;
        } else if opt_is(o, "streams") && moreargs > 0 {
            a.streams_arg = i + 1;
            let n = c.argc() - a.streams_arg;
            if !n.is_multiple_of(2) {
                c.add_reply_error(
                    "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.",
                );
                return None;
            }
            a.streams_count = n / 2;
            break;
        } else if opt_is(o, "group") && moreargs >= 2 {
            if !xreadgroup {
                c.add_reply_error(
                    "ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.",
                );
                return None;
            }
            a.group = Some((c.argv[i + 1].clone(), c.argv[i + 2].clone()));
            i += 2;
        } else if opt_is(o, "noack") {
            if !xreadgroup {
                c.add_reply_error(
                    "ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.",
                );
                return None;
            }
            a.noack = true;
        } else {
            c.add_reply_syntax_error();
            return None;
        }
        i += 1;
    }
    if a.streams_arg == 0 {
        c.add_reply_syntax_error();
        return None;
    }
    if xreadgroup && a.group.is_none() {
        c.add_reply_error("ERR Missing GROUP option for XREADGROUP");
        return None;
    }
    Some(a)
}

/// xreadCommand: parse, resolve each ID (`$`, `>`), serve every stream
/// that has something synchronously, else block (or reply null).
fn xread_generic_command(srv: &mut Server, c: &mut Client, xreadgroup: bool) {
    let Some(a) = parse_xread_args(c, xreadgroup) else {
        return;
    };
    let dbid = c.db;
    let first_id_arg = a.streams_arg + a.streams_count;
    let mut ids: Vec<StreamID> = Vec::with_capacity(a.streams_count);
    for i in first_id_arg..c.argc() {
        let key = c.argv[i - a.streams_count].clone();
        let s = match lookup_stream_read(srv, c, &key) {
            Err(()) => return,
            Ok(s) => s,
        };
        if let Some((group, _)) = &a.group {
            if s.as_ref().is_none_or(|s| s.lookup_cg(group).is_none()) {
                let group = group.clone();
                return reply_nogroup(c, &key, &group, " in XREADGROUP with GROUP option");
            }
        }
        let last_id = s.map(|s| s.last_id);
        let arg = c_str(c.arg(i));
        if arg == b"$" {
            if xreadgroup {
                return c.add_reply_error(
                    "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set.",
                );
            }
            ids.push(last_id.unwrap_or(StreamID::MIN));
        } else if arg == b">" {
            if !xreadgroup {
                return c.add_reply_error(
                    "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.",
                );
            }
            // The max ID stands for ">": the group's last ID is read later.
            ids.push(StreamID::MAX);
        } else {
            let Some(id) = parse_id_or_reply(c, i, 0, true) else {
                return;
            };
            ids.push(id);
        }
    }

    // Serve synchronously every stream that has something to give.
    let resp3 = c.resp == protocol::reply::Resp::V3;
    let mut served = 0;
    // The map's length is known at the end: written in place once the
    // first stream is served (nothing at all when none is).
    let mut map_len = None;
    for (i, gt) in ids.iter_mut().enumerate() {
        let key = c.argv[a.streams_arg + i].clone();
        let Ok(Some(s)) = lookup_stream_read(srv, c, &key) else {
            continue;
        };
        let mut history = false;
        let serve = match &a.group {
            Some((group, _)) => {
                if *gt != StreamID::MAX {
                    // An explicit ID: the consumer's own history.
                    history = true;
                    true
                } else if s.length > 0 {
                    let last = s.lookup_cg(group).map_or(StreamID::MAX, |cg| cg.last_id);
                    if s.last_valid_id() > last {
                        *gt = last;
                        true
                    } else {
                        false
                    }
                } else {
                    false
                }
            }
            None => s.length > 0 && s.last_valid_id() > *gt,
        };
        if !serve {
            continue;
        }
        served += 1;
        if map_len.is_none() {
            map_len = Some(c.add_reply_deferred_len());
        }
        let mut start = *gt;
        start.incr();
        if !resp3 {
            c.add_reply_array_len(2);
        }
        c.add_reply_bulk(&key);
        match &a.group {
            None => {
                add_reply_range(c, s, Some(start), None, a.count, false);
            }
            Some((group, consumer)) => {
                if lookup_or_create_consumer(srv, dbid, &key, group, consumer) && a.noack {
                    let op = stream_propagate_consumer_creation(&key, group, consumer);
                    propagate_ops(srv, dbid, vec![op]);
                }
                let g = GroupRead {
                    group,
                    consumer,
                    noack: a.noack,
                    history,
                };
                if let Some(s) = stream_at(srv, dbid, &key) {
                    let ops =
                        reply_with_range_group(c, s, &key, start, a.count, &g, server::mstime());
                    propagate_ops(srv, dbid, ops);
                }
                srv.dirty += 1;
            }
        }
    }
    if let Some(d) = map_len {
        if resp3 {
            c.set_deferred_map_len(d, served);
        } else {
            c.set_deferred_array_len(d, served);
        }
        return;
    }

    match a.timeout {
        // Nothing to serve and BLOCK given: wait (or, where blocking is
        // not allowed, answer as a time-out would).
        Some(_) if c.has_flag(CLIENT_DENY_BLOCKING) => c.add_reply_null_array(),
        Some(timeout) => {
            let keys: Vec<Bytes> = c.argv[a.streams_arg..first_id_arg].to_vec();
            let block = StreamBlock {
                ids,
                count: if a.count > 0 {
                    a.count
                } else {
                    XREAD_BLOCKED_DEFAULT_COUNT
                },
                group: a.group.clone(),
                noack: a.noack,
            };
            crate::blocked::block_for_stream_keys(srv, c, &keys, timeout, block);
        }
        None => c.add_reply_null_array(),
    }
}

/// serveClientsBlockedOnStreamKey and unblockDeletedStreamReadgroupClients
/// (blocked.c): `key` was signalled. If it is a stream, each reader parked
/// on it whose ID the stream has passed is answered with this key's new
/// entries; readers of a group that no longer exists get NOGROUP. If the
/// key is gone or is no stream any more, parked XREADGROUP clients get
/// UNBLOCKED (plain XREAD readers keep waiting).
pub fn serve_clients_blocked_on_stream_key(srv: &mut Server, dbid: usize, key: &Bytes) {
    let waiting: Vec<mio::Token> = match srv.blocking_keys.get(&(dbid, key.clone())) {
        Some(q) => q.iter().copied().collect(),
        None => return,
    };
    crate::db::expire_if_needed(srv, dbid, key);
    let is_stream = matches!(
        srv.dbs[dbid].dict.get(key).map(|o| &o.value),
        Some(Value::Stream(_))
    );
    for token in waiting {
        let Some(block) = srv
            .clients
            .get(&token)
            .and_then(|c| c.bstate.as_ref())
            .filter(|b| b.btype == crate::blocked::BlockType::Stream)
            .and_then(|b| {
                let pos = b.keys.iter().position(|k| k == key)?;
                let sb = b.stream.as_ref()?;
                Some((
                    sb.ids.get(pos).copied()?,
                    sb.count,
                    sb.group.clone(),
                    sb.noack,
                ))
            })
        else {
            continue;
        };
        let (gt, count, group, noack) = block;
        if !is_stream {
            if group.is_none() {
                continue; // XREAD waits for the key to come back
            }
            finish_blocked_reader(srv, token, |_, c| {
                c.add_reply_error("UNBLOCKED the stream key no longer exists");
            });
            continue;
        }
        let Some(s) = stream_at(srv, dbid, key) else {
            continue;
        };
        // In a group the ID to pass is the group's last ID, which other
        // consumers of the group may have moved.
        let gt = match &group {
            Some((g, _)) => match s.lookup_cg(g) {
                Some(cg) => cg.last_id,
                None => {
                    finish_blocked_reader(srv, token, |_, c| {
                        c.add_reply_error(
                            "NOGROUP the consumer group this client was blocked on no longer exists",
                        );
                    });
                    continue;
                }
            },
            None => gt,
        };
        if s.last_id <= gt {
            continue; // nothing new for this one: it keeps its place
        }
        let mut start = gt;
        start.incr();
        let key = key.clone();
        finish_blocked_reader(srv, token, move |srv, c| {
            if let Some((g, consumer)) = &group {
                if lookup_or_create_consumer(srv, dbid, &key, g, consumer) && noack {
                    let op = stream_propagate_consumer_creation(&key, g, consumer);
                    propagate_ops(srv, dbid, vec![op]);
                }
            }
            if c.resp == protocol::reply::Resp::V3 {
                c.add_reply_map_len(1);
            } else {
                c.add_reply_array_len(1);
                c.add_reply_array_len(2);
            }
            c.add_reply_bulk(&key);
            let Some(s) = stream_at(srv, dbid, &key) else {
                return c.add_reply_array_len(0);
            };
            match &group {
                None => {
                    add_reply_range(c, s, Some(start), None, count, false);
                }
                Some((g, consumer)) => {
                    let read = GroupRead {
                        group: g,
                        consumer,
                        noack,
                        history: false,
                    };
                    let ops =
                        reply_with_range_group(c, s, &key, start, count, &read, server::mstime());
                    propagate_ops(srv, dbid, ops);
                }
            }
        });
    }
}

/// Reply to a parked reader and let it go: unblockClient, the one
/// statistics update of the blocked command (updateStatsOnUnblock), then
/// the rest of its input runs before the next sleep.
fn finish_blocked_reader(
    srv: &mut Server,
    token: mio::Token,
    reply: impl FnOnce(&mut Server, &mut Client),
) {
    let Some(mut c) = srv.clients.remove(&token) else {
        return;
    };
    crate::blocked::unblock_client(srv, &mut c);
    let mark = c.reply.len();
    reply(srv, &mut c);
    if c.has_flag(networking::CLIENT_REPLY_OFF | networking::CLIENT_REPLY_SKIP) {
        c.reply.truncate(mark);
    }
    networking::reset_client_reply_skip(&mut c);
    server::update_stats_on_unblock(srv, &mut c);
    srv.unblocked_clients.push(token);
    crate::networking::put_back_client(srv, c);
}

// ---- XGROUP / XSETID ----

/// XGROUP CREATE|SETID|DESTROY|CREATECONSUMER|DELCONSUMER|HELP ...
// redis: t_stream.c xgroupCommand
pub fn xgroup_command(srv: &mut Server, c: &mut Client) {
    let sub = c_str(c.arg(1)).to_ascii_lowercase();
    let dbid = c.db;
    let mut mkstream = false;
    let mut entries_read = SCG_INVALID_ENTRIES_READ;
    let mut have_stream = false;
    if c.argc() >= 4 {
        // The options of CREATE and SETID.
        let (create, setid) = (sub == b"create", sub == b"setid");
        let mut i = 5;
        while i < c.argc() {
            if create && opt_is(c.arg(i), "mkstream") {
                mkstream = true;
                i += 1;
            } else if (create || setid) && opt_is(c.arg(i), "entriesread") && i + 1 < c.argc() {
                let Some(n) = get_long_long_or_reply(c, i + 1, None) else {
                    return;
                };
                if n < 0 && n != SCG_INVALID_ENTRIES_READ {
                    return c.add_reply_error("ERR value for ENTRIESREAD must be positive or -1");
                }
                entries_read = n;
                i += 2;
            } else {
                return c.add_reply_subcommand_syntax_error();
            }
        }
        let key = c.argv[2].clone();
        match lookup_stream_write(srv, c, &key) {
            Err(()) => return,
            Ok(s) => have_stream = s.is_some(),
        }
    }
    let key = c.argv.get(2).cloned().unwrap_or_default();
    let group = c.argv.get(3).cloned().unwrap_or_default();
    if c.argc() >= 4 && !mkstream {
        if !have_stream {
            return c.add_reply_error(
                "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.",
            );
        }
        let exists = stream_at(srv, dbid, &key).is_some_and(|s| s.lookup_cg(&group).is_some());
        if !exists && matches!(&sub[..], b"setid" | b"createconsumer" | b"delconsumer") {
            return add_reply_error_parts(
                c,
                &[
                    b"NOGROUP No such consumer group '",
                    &group,
                    b"' for key name '",
                    &key,
                    b"'",
                ],
            );
        }
    }
    match (&sub[..], c.argc()) {
        (b"help", 2) => c.add_reply_help(
            "XGROUP",
            &[
                "CREATE <key> <groupname> <id|$> [option]",
                "    Create a new consumer group. Options are:",
                "    * MKSTREAM",
                "      Create the empty stream if it does not exist.",
                "    * ENTRIESREAD entries_read",
                "      Set the group's entries_read counter (internal use).",
                "CREATECONSUMER <key> <groupname> <consumer>",
                "    Create a new consumer in the specified group.",
                "DELCONSUMER <key> <groupname> <consumer>",
                "    Remove the specified consumer.",
                "DESTROY <key> <groupname>",
                "    Remove the specified group.",
                "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
                "    Set the current group ID and entries_read counter.",
            ],
        ),
        (b"create", 5..=8) => {
            let id = if c_str(c.arg(4)) == b"$" {
                stream_at(srv, dbid, &key).map_or(StreamID::MIN, |s| s.last_id)
            } else {
                match parse_id_or_reply(c, 4, 0, true) {
                    Some(id) => id,
                    None => return,
                }
            };
            // MKSTREAM: the command can no longer fail, create the stream.
            if !have_stream {
                let o = new_object(srv, Value::Stream(Box::new(Stream::new())));
                db_add(srv, dbid, &key, o);
                signal_modified_key(srv, dbid, &key);
            }
            let created = stream_at(srv, dbid, &key)
                .and_then(|s| s.create_cg(&group, id, entries_read))
                .is_some();
            if created {
                c.add_reply_ok();
                srv.dirty += 1;
                notify_keyspace_event(srv, NOTIFY_STREAM, "xgroup-create", &key, dbid);
            } else {
                c.add_reply_error("BUSYGROUP Consumer Group name already exists");
            }
        }
        (b"setid", 5 | 7) => {
            let id = if c_str(c.arg(4)) == b"$" {
                stream_at(srv, dbid, &key).map_or(StreamID::MIN, |s| s.last_id)
            } else {
                match parse_id_or_reply(c, 4, 0, false) {
                    Some(id) => id,
                    None => return,
                }
            };
            if let Some(cg) = stream_at(srv, dbid, &key).and_then(|s| s.lookup_cg_mut(&group)) {
                cg.last_id = id;
                cg.entries_read = entries_read;
            }
            c.add_reply_ok();
            srv.dirty += 1;
            notify_keyspace_event(srv, NOTIFY_STREAM, "xgroup-setid", &key, dbid);
        }
        (b"destroy", 4) => {
            let destroyed = stream_at(srv, dbid, &key).is_some_and(|s| s.destroy_cg(&group));
            if destroyed {
                c.add_reply_integer(1);
                srv.dirty += 1;
                notify_keyspace_event(srv, NOTIFY_STREAM, "xgroup-destroy", &key, dbid);
                // Readers blocked in this group get NOGROUP.
                crate::blocked::signal_key_as_ready(srv, dbid, &key);
            } else {
                c.add_reply_integer(0);
            }
        }
        (b"createconsumer", 5) => {
            let name = c.argv[4].clone();
            let now = server::mstime();
            let created = stream_at(srv, dbid, &key)
                .and_then(|s| s.lookup_cg_mut(&group))
                .is_some_and(|cg| cg.create_consumer(&name, now));
            if created {
                srv.dirty += 1;
                notify_keyspace_event(srv, NOTIFY_STREAM, "xgroup-createconsumer", &key, dbid);
            }
            c.add_reply_integer(created as i64);
        }
        (b"delconsumer", 5) => {
            let name = c.argv[4].clone();
            let pending = stream_at(srv, dbid, &key)
                .and_then(|s| s.lookup_cg_mut(&group))
                .and_then(|cg| cg.del_consumer(&name));
            if pending.is_some() {
                srv.dirty += 1;
                notify_keyspace_event(srv, NOTIFY_STREAM, "xgroup-delconsumer", &key, dbid);
            }
            c.add_reply_integer(pending.unwrap_or(0) as i64);
        }
        _ => c.add_reply_subcommand_syntax_error(),
    }
}

/// XSETID key last-id [ENTRIESADDED entries-added] [MAXDELETEDID max-deleted-id]
// redis: t_stream.c xsetidCommand
pub fn xsetid_command(srv: &mut Server, c: &mut Client) {
    let Some(id) = parse_id_or_reply(c, 2, 0, true) else {
        return;
    };
    let mut entries_added: i64 = -1;
    let mut max_xdel_id = StreamID::MIN;
    let mut i = 3;
    while i < c.argc() {
        let moreargs = c.argc() - 1 - i;
        if opt_is(c.arg(i), "entriesadded") && moreargs > 0 {
            let Some(n) = get_long_long_or_reply(c, i + 1, None) else {
                return;
            };
            if n < 0 {
                return c.add_reply_error("ERR entries_added must be positive");
            }
            entries_added = n;
            i += 2;
        } else if opt_is(c.arg(i), "maxdeletedid") && moreargs > 0 {
            let Some(m) = parse_id_or_reply(c, i + 1, 0, true) else {
                return;
            };
            if id < m {
                return c.add_reply_error(
                    "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id",
                );
            }
            max_xdel_id = m;
            i += 2;
        } else {
            return c.add_reply_syntax_error();
        }
    }
    let (key, dbid) = (c.argv[1].clone(), c.db);
    let s = match lookup_stream_write(srv, c, &key) {
        Err(()) => return,
        Ok(None) => return c.add_reply_error(shared::NO_SUCH_KEY_ERR),
        Ok(Some(s)) => s,
    };
    if s.length > 0 {
        // IDs never go back below the top item.
        if id < s.last_valid_id() {
            return c.add_reply_error(
                "ERR The ID specified in XSETID is smaller than the target stream top item",
            );
        }
        if entries_added != -1 && s.length > entries_added as u64 {
            return c.add_reply_error(
                "ERR The entries_added specified in XSETID is smaller than the target stream length",
            );
        }
    }
    s.last_id = id;
    if entries_added != -1 {
        s.entries_added = entries_added as u64;
    }
    if !max_xdel_id.is_zero() {
        s.max_deleted_entry_id = max_xdel_id;
    }
    c.add_reply_ok();
    srv.dirty += 1;
    notify_keyspace_event(srv, NOTIFY_STREAM, "xsetid", &key, dbid);
}

// ---- XACK / XPENDING ----

/// XACK key group id [id ...]
// redis: t_stream.c xackCommand
pub fn xack_command(srv: &mut Server, c: &mut Client) {
    let (key, group) = (c.argv[1].clone(), c.argv[2].clone());
    let has_group = match lookup_stream_read(srv, c, &key) {
        Err(()) => return,
        Ok(s) => s.is_some_and(|s| s.lookup_cg(&group).is_some()),
    };
    if !has_group {
        return c.add_reply_integer(0);
    }
    // All IDs are parsed first: the reply cannot be an error once some
    // entries were acknowledged.
    let mut ids = Vec::with_capacity(c.argc() - 3);
    for j in 3..c.argc() {
        let Some(id) = parse_id_or_reply(c, j, 0, true) else {
            return;
        };
        ids.push(id);
    }
    let dbid = c.db;
    let mut acknowledged = 0;
    if let Some(cg) = stream_at(srv, dbid, &key).and_then(|s| s.lookup_cg_mut(&group)) {
        for id in ids {
            if cg.ack(id) {
                acknowledged += 1;
            }
        }
    }
    srv.dirty += acknowledged as u64;
    c.add_reply_integer(acknowledged);
}

/// XPENDING key group [[IDLE min-idle-time] start end count [consumer]]
// redis: t_stream.c xpendingCommand
pub fn xpending_command(srv: &mut Server, c: &mut Client) {
    let justinfo = c.argc() == 3;
    if c.argc() != 3 && (c.argc() < 6 || c.argc() > 9) {
        return c.add_reply_syntax_error();
    }
    let mut range = (StreamID::MIN, StreamID::MAX);
    let mut count: i64 = 0;
    let mut minidle: i64 = 0;
    let mut consumer_name: Option<Bytes> = None;
    if c.argc() >= 6 {
        let mut startidx = 3;
        if opt_is(c.arg(3), "idle") {
            let Some(n) = get_long_long_or_reply(c, 4, None) else {
                return;
            };
            minidle = n;
            if c.argc() < 8 {
                return c.add_reply_syntax_error();
            }
            startidx += 2;
        }
        let Some(n) = get_long_long_or_reply(c, startidx + 2, None) else {
            return;
        };
        count = n.max(0);
        let Some(start) = parse_range_start_or_reply(c, startidx) else {
            return;
        };
        let Some(end) = parse_range_end_or_reply(c, startidx + 1) else {
            return;
        };
        range = (start, end);
        if startidx + 3 < c.argc() {
            consumer_name = Some(c.argv[startidx + 3].clone());
        }
    }
    let (key, group) = (c.argv[1].clone(), c.argv[2].clone());
    let s = match lookup_stream_read(srv, c, &key) {
        Err(()) => return,
        Ok(s) => s,
    };
    let Some(cg) = s.and_then(|s| s.lookup_cg(&group)) else {
        return reply_nogroup(c, &key, &group, "");
    };
    if justinfo {
        // The summary: count, smallest and greatest ID, and per consumer
        // its number of pending entries.
        c.add_reply_array_len(4);
        c.add_reply_integer(cg.pel.len() as i64);
        let mut k = Vec::new();
        if cg.pel.first(&mut k).is_none() {
            c.add_reply_null();
            c.add_reply_null();
            c.add_reply_null_array();
            return;
        }
        add_reply_stream_id(c, StreamID::decode(&k).unwrap_or_default());
        cg.pel.last(&mut k);
        add_reply_stream_id(c, StreamID::decode(&k).unwrap_or_default());
        let mut body = BytesMut::new();
        let mut n = 0;
        let mut it = cg.consumers.iter();
        while let Some((name, consumer)) = it.next() {
            if consumer.pel.is_empty() {
                continue;
            }
            protocol::reply::array_len(&mut body, 2);
            protocol::reply::bulk(&mut body, name);
            protocol::reply::bulk_i64(&mut body, consumer.pel.len() as i64);
            n += 1;
        }
        return add_reply_deferred_array(c, n, &body);
    }
    // The extended form: one line per pending entry in range.
    let consumer = match &consumer_name {
        Some(name) => match cg.lookup_consumer(name) {
            Some(consumer) => Some(consumer),
            None => return c.add_reply_array_len(0),
        },
        None => None,
    };
    let now = server::mstime();
    let (startkey, endkey) = (range.0.encode(), range.1.encode());
    let mut body = BytesMut::new();
    let mut n = 0;
    let mut emit = |key: &[u8], nack: &StreamNack, body: &mut BytesMut| -> bool {
        if count == 0 || key > &endkey[..] {
            return false;
        }
        if minidle != 0 && now - nack.delivery_time < minidle {
            return true;
        }
        n += 1;
        count -= 1;
        protocol::reply::array_len(body, 4);
        put_stream_id(body, StreamID::decode(key).unwrap_or_default());
        protocol::reply::bulk(body, nack.consumer.as_deref().unwrap_or(b""));
        protocol::reply::integer(body, (now - nack.delivery_time).max(0));
        protocol::reply::integer(body, nack.delivery_count as i64);
        true
    };
    match consumer {
        None => {
            let mut it = cg.pel.iter_from(&startkey);
            while let Some((key, nack)) = it.next() {
                if !emit(key, nack, &mut body) {
                    break;
                }
            }
        }
        Some(consumer) => {
            let mut it = consumer.pel.iter_from(&startkey);
            while let Some((key, ())) = it.next() {
                let Some(nack) = cg.pel.find(key) else {
                    continue;
                };
                if !emit(key, nack, &mut body) {
                    break;
                }
            }
        }
    }
    add_reply_deferred_array(c, n, &body);
}

// ---- XCLAIM / XAUTOCLAIM ----

/// XCLAIM key group consumer min-idle-time id [id ...] [IDLE ms] [TIME unix-time-milliseconds] [RETRYCOUNT count] [FORCE] [JUSTID] [LASTID lastid]
// redis: t_stream.c xclaimCommand
pub fn xclaim_command(srv: &mut Server, c: &mut Client) {
    let (key, group, name) = (c.argv[1].clone(), c.argv[2].clone(), c.argv[3].clone());
    let dbid = c.db;
    let has_group = match lookup_stream_read(srv, c, &key) {
        Err(()) => return,
        Ok(s) => s.is_some_and(|s| s.lookup_cg(&group).is_some()),
    };
    if !has_group {
        return reply_nogroup(c, &key, &group, "");
    }
    let Some(minidle) =
        get_long_long_or_reply(c, 4, Some("Invalid min-idle-time argument for XCLAIM"))
    else {
        return;
    };
    let minidle = minidle.max(0);
    // The IDs, up to the first argument that is not one (the options).
    let strict = IdParse {
        missing_seq: 0,
        strict: true,
        allow_seq_star: false,
    };
    let mut ids = Vec::new();
    let mut j = 5;
    while j < c.argc() {
        match parse_id(c.arg(j), strict) {
            Some((id, _)) => ids.push(id),
            None => break,
        }
        j += 1;
    }
    let now = server::mstime();
    let (mut force, mut justid) = (false, false);
    let mut deliverytime: i64 = -1;
    let mut retrycount: i64 = -1;
    let mut last_id = StreamID::MIN;
    while j < c.argc() {
        let moreargs = c.argc() - 1 - j;
        let opt = c.arg(j);
        if opt_is(opt, "force") {
            force = true;
        } else if opt_is(opt, "justid") {
            justid = true;
        } else if opt_is(opt, "idle") && moreargs > 0 {
            j += 1;
            let Some(idle) =
                get_long_long_or_reply(c, j, Some("Invalid IDLE option argument for XCLAIM"))
            else {
                return;
            };
            deliverytime = now.wrapping_sub(idle);
        } else if opt_is(opt, "time") && moreargs > 0 {
            j += 1;
            let Some(t) =
                get_long_long_or_reply(c, j, Some("Invalid TIME option argument for XCLAIM"))
            else {
                return;
            };
            deliverytime = t;
        } else if opt_is(opt, "retrycount") && moreargs > 0 {
            j += 1;
            let Some(n) =
                get_long_long_or_reply(c, j, Some("Invalid RETRYCOUNT option argument for XCLAIM"))
            else {
                return;
            };
            retrycount = n;
        } else if opt_is(opt, "lastid") && moreargs > 0 {
            j += 1;
            let Some(id) = parse_id_or_reply(c, j, 0, true) else {
                return;
            };
            last_id = id;
        } else {
            let opt = opt.to_vec();
            return add_reply_error_parts(c, &[b"ERR Unrecognized XCLAIM option '", &opt, b"'"]);
        }
        j += 1;
    }
    let Some(s) = stream_at(srv, dbid, &key) else {
        return;
    };
    let mut propagate_last_id = false;
    if let Some(cg) = s.lookup_cg_mut(&group) {
        if last_id > cg.last_id {
            cg.last_id = last_id;
            propagate_last_id = true;
        }
    }
    // A bogus delivery time (negative, in the future) becomes now.
    if deliverytime == -1 || deliverytime < 0 || deliverytime > now {
        deliverytime = now;
    }

    let mut claimed = 0;
    let mut dirty = 0u64;
    let mut consumer_ready = false;
    let mut body = BytesMut::new();
    let mut ops = Vec::new();
    for (i, id) in ids.into_iter().enumerate() {
        // What the client wrote for this ID: the XCLAIM propagates it as is.
        let id_arg = c.argv[5 + i].clone();
        let k = id.encode();
        let Some(s) = stream_at(srv, dbid, &key) else {
            break;
        };
        let exists = s.entry_exists(id);
        let Some(cg) = s.lookup_cg_mut(&group) else {
            break;
        };
        if !exists {
            // The entry is gone: so is its NACK.
            if let Some(nack) = cg.pel.find(&k) {
                let owner = nack.consumer.as_deref().unwrap_or_default().to_vec();
                ops.push(stream_propagate_xclaim(
                    &key,
                    &group,
                    &owner,
                    id_arg,
                    nack.delivery_time,
                    nack.delivery_count,
                    cg.last_id,
                ));
                let _ = cg.ack(id);
                dirty += 1;
                propagate_last_id = false;
            }
            continue;
        }
        // FORCE: a NACK for an entry nobody had pending.
        let mut fresh = false;
        if force && cg.pel.find(&k).is_none() {
            cg.pel.insert(
                &k,
                StreamNack {
                    delivery_time: now,
                    delivery_count: 1,
                    consumer: None,
                },
            );
            fresh = true;
        }
        let Some(nack) = cg.pel.find(&k) else {
            continue;
        };
        if !fresh && nack.consumer.is_some() && minidle != 0 && now - nack.delivery_time < minidle {
            continue;
        }
        if !consumer_ready {
            lookup_or_create_consumer(srv, dbid, &key, &group, &name);
            consumer_ready = true;
        }
        let Some(s) = stream_at(srv, dbid, &key) else {
            break;
        };
        let Some(cg) = s.lookup_cg_mut(&group) else {
            break;
        };
        cg.transfer_nack(&k, &name);
        let cg_last_id = cg.last_id;
        if let Some(nack) = cg.pel.find_mut(&k) {
            nack.delivery_time = deliverytime;
            if retrycount >= 0 {
                nack.delivery_count = retrycount as u64;
            } else if !justid {
                nack.delivery_count += 1;
            }
            ops.push(stream_propagate_xclaim(
                &key,
                &group,
                &name,
                id_arg,
                nack.delivery_time,
                nack.delivery_count,
                cg_last_id,
            ));
        }
        if justid {
            put_stream_id(&mut body, id);
        } else {
            reply_with_range(&mut body, s, Some(id), Some(id), 1, false, None);
        }
        claimed += 1;
        dirty += 1;
        propagate_last_id = false;
    }
    if propagate_last_id {
        if let Some(cg) = stream_at(srv, dbid, &key).and_then(|s| s.lookup_cg(&group)) {
            ops.push(stream_propagate_group_id(
                &key,
                &group,
                cg.last_id,
                cg.entries_read,
            ));
        }
        dirty += 1;
    }
    // The XCLAIMs above are the whole propagation (xclaimCommand's
    // preventCommandPropagation).
    propagate_ops(srv, dbid, ops);
    crate::propagate::prevent_command_propagation(srv);
    srv.dirty += dirty;
    add_reply_deferred_array(c, claimed, &body);
}

/// XAUTOCLAIM key group consumer min-idle-time start [COUNT count] [JUSTID]
// redis: t_stream.c xautoclaimCommand
pub fn xautoclaim_command(srv: &mut Server, c: &mut Client) {
    let Some(minidle) =
        get_long_long_or_reply(c, 4, Some("Invalid min-idle-time argument for XAUTOCLAIM"))
    else {
        return;
    };
    let minidle = minidle.max(0);
    let Some(start) = parse_range_start_or_reply(c, 5) else {
        return;
    };
    let mut count: i64 = 100;
    let mut justid = false;
    let mut j = 6;
    while j < c.argc() {
        let moreargs = c.argc() - 1 - j;
        if opt_is(c.arg(j), "count") && moreargs > 0 {
            // getRangeLongFromObjectOrReply(1, LONG_MAX / max(16, 10)).
            let max_count = i64::MAX / (STREAM_ID_SIZE as i64).max(XAUTOCLAIM_ATTEMPTS_FACTOR);
            match string2ll(c.arg(j + 1)) {
                Some(n) if (1..=max_count).contains(&n) => count = n,
                _ => return c.add_reply_error("ERR COUNT must be > 0"),
            }
            j += 1;
        } else if opt_is(c.arg(j), "justid") {
            justid = true;
        } else {
            return c.add_reply_syntax_error();
        }
        j += 1;
    }
    let (key, group, name) = (c.argv[1].clone(), c.argv[2].clone(), c.argv[3].clone());
    let dbid = c.db;
    let has_group = match lookup_stream_read(srv, c, &key) {
        Err(()) => return,
        Ok(s) => s.is_some_and(|s| s.lookup_cg(&group).is_some()),
    };
    if !has_group {
        return reply_nogroup(c, &key, &group, "");
    }
    if count as u128 * STREAM_ID_SIZE as u128 > XAUTOCLAIM_TRANSIENT_LIMIT {
        return c.add_reply_error(
            "ERR Insufficient memory, failed allocating transient memory, COUNT too high.",
        );
    }
    let now = server::mstime();
    let mut attempts = count * XAUTOCLAIM_ATTEMPTS_FACTOR;
    let mut deleted_ids = Vec::new();
    let mut claimed = 0usize;
    let mut dirty = 0u64;
    let mut consumer_ready = false;
    let mut body = BytesMut::new();
    // raxSeek(">=", start) then raxNext: the cursor is the last key seen.
    let mut cursor: Option<Vec<u8>> = None;
    let mut eof = false;
    let mut key_buf = Vec::new();
    let mut ops = Vec::new();
    loop {
        if attempts == 0 {
            break;
        }
        attempts -= 1;
        if count == 0 {
            break;
        }
        let Some(cg) = stream_at(srv, dbid, &key).and_then(|s| s.lookup_cg(&group)) else {
            break;
        };
        let found = match &cursor {
            None => cg.pel.seek_ge(&start.encode(), &mut key_buf).cloned(),
            Some(k) => cg.pel.seek_gt(k, &mut key_buf).cloned(),
        };
        let Some(nack) = found else {
            eof = true;
            break;
        };
        let k = key_buf.clone();
        cursor = Some(k.clone());
        let id = StreamID::decode(&k).unwrap_or_default();
        let Some(s) = stream_at(srv, dbid, &key) else {
            break;
        };
        if !s.entry_exists(id) {
            // The entry is gone: drop its NACK and report the ID (the
            // replica drops it by the same XCLAIM, which finds no entry).
            if let Some(cg) = s.lookup_cg_mut(&group) {
                let owner = nack.consumer.as_deref().unwrap_or_default().to_vec();
                ops.push(stream_propagate_xclaim(
                    &key,
                    &group,
                    &owner,
                    Bytes::from(id.to_string()),
                    nack.delivery_time,
                    nack.delivery_count,
                    cg.last_id,
                ));
                let _ = cg.ack(id);
            }
            dirty += 1;
            deleted_ids.push(id);
            count -= 1;
            continue;
        }
        if minidle != 0 && now - nack.delivery_time < minidle {
            continue;
        }
        if !consumer_ready {
            lookup_or_create_consumer(srv, dbid, &key, &group, &name);
            consumer_ready = true;
        }
        let Some(s) = stream_at(srv, dbid, &key) else {
            break;
        };
        if let Some(cg) = s.lookup_cg_mut(&group) {
            cg.transfer_nack(&k, &name);
            let cg_last_id = cg.last_id;
            if let Some(nack) = cg.pel.find_mut(&k) {
                nack.delivery_time = now;
                if !justid {
                    nack.delivery_count += 1;
                }
                ops.push(stream_propagate_xclaim(
                    &key,
                    &group,
                    &name,
                    Bytes::from(id.to_string()),
                    nack.delivery_time,
                    nack.delivery_count,
                    cg_last_id,
                ));
            }
        }
        if justid {
            put_stream_id(&mut body, id);
        } else {
            reply_with_range(&mut body, s, Some(id), Some(id), 1, false, None);
        }
        claimed += 1;
        count -= 1;
        dirty += 1;
    }
    // The next entry is the cursor for the next call (0-0 at the end).
    let next = if eof {
        None
    } else {
        stream_at(srv, dbid, &key)
            .and_then(|s| s.lookup_cg(&group))
            .and_then(|cg| match &cursor {
                None => cg.pel.seek_ge(&start.encode(), &mut key_buf).map(|_| ()),
                Some(k) => cg.pel.seek_gt(k, &mut key_buf).map(|_| ()),
            })
            .and_then(|_| StreamID::decode(&key_buf))
    };
    srv.dirty += dirty;
    // The XCLAIMs are the whole propagation (xautoclaimCommand's
    // preventCommandPropagation).
    propagate_ops(srv, dbid, ops);
    crate::propagate::prevent_command_propagation(srv);
    c.add_reply_array_len(3);
    add_reply_stream_id(c, next.unwrap_or(StreamID::MIN));
    add_reply_deferred_array(c, claimed, &body);
    c.add_reply_array_len(deleted_ids.len());
    for id in deleted_ids {
        add_reply_stream_id(c, id);
    }
}

// ---- XINFO ----

/// XINFO CONSUMERS key group | GROUPS key | STREAM key [FULL [COUNT count]] | HELP
// redis: t_stream.c xinfoCommand
pub fn xinfo_command(srv: &mut Server, c: &mut Client) {
    if opt_is(c.arg(1), "help") {
        if c.argc() != 2 {
            return c.add_reply_subcommand_syntax_error();
        }
        return c.add_reply_help(
            "XINFO",
            &[
                "CONSUMERS <key> <groupname>",
                "    Show consumers of <groupname>.",
                "GROUPS <key>",
                "    Show the stream consumer groups.",
                "STREAM <key> [FULL [COUNT <count>]",
                "    Show information about the stream.",
            ],
        );
    } else if c.argc() < 3 {
        return c.add_reply_subcommand_syntax_error();
    }
    let key = c.argv[2].clone();
    let s = match lookup_stream_read(srv, c, &key) {
        Err(()) => return,
        Ok(None) => return c.add_reply_error(shared::NO_SUCH_KEY_ERR),
        Ok(Some(s)) => s,
    };
    let s: &Stream = s;
    if opt_is(c.arg(1), "consumers") && c.argc() == 4 {
        let group = c.argv[3].clone();
        let Some(cg) = s.lookup_cg(&group) else {
            return add_reply_error_parts(
                c,
                &[
                    b"NOGROUP No such consumer group '",
                    &group,
                    b"' for key name '",
                    &key,
                    b"'",
                ],
            );
        };
        let now = server::mstime();
        c.add_reply_array_len(cg.consumers.len() as usize);
        let mut it = cg.consumers.iter();
        while let Some((_, consumer)) = it.next() {
            c.add_reply_map_len(3);
            c.add_reply_bulk(b"name");
            c.add_reply_bulk(&consumer.name);
            c.add_reply_bulk(b"pending");
            c.add_reply_integer(consumer.pel.len() as i64);
            c.add_reply_bulk(b"idle");
            c.add_reply_integer((now - consumer.seen_time).max(0));
        }
    } else if opt_is(c.arg(1), "groups") && c.argc() == 3 {
        c.add_reply_array_len(s.num_groups() as usize);
        let Some(mut it) = s.groups() else {
            return;
        };
        while let Some((name, cg)) = it.next() {
            c.add_reply_map_len(6);
            c.add_reply_bulk(b"name");
            c.add_reply_bulk(name);
            c.add_reply_bulk(b"consumers");
            c.add_reply_integer(cg.consumers.len() as i64);
            c.add_reply_bulk(b"pending");
            c.add_reply_integer(cg.pel.len() as i64);
            c.add_reply_bulk(b"last-delivered-id");
            add_reply_stream_id(c, cg.last_id);
            add_reply_entries_read_and_lag(c, s, cg);
        }
    } else if opt_is(c.arg(1), "stream") {
        xinfo_reply_with_stream_info(c, s);
    } else {
        c.add_reply_subcommand_syntax_error();
    }
}

/// `entries-read` (null when unknown) and `lag` (null when it cannot be
/// computed), shared by XINFO GROUPS and XINFO STREAM FULL.
fn add_reply_entries_read_and_lag(c: &mut Client, s: &Stream, cg: &storage::t_stream::StreamCG) {
    c.add_reply_bulk(b"entries-read");
    if cg.entries_read != SCG_INVALID_ENTRIES_READ {
        c.add_reply_integer(cg.entries_read);
    } else {
        c.add_reply_null();
    }
    c.add_reply_bulk(b"lag");
    match s.cg_lag(cg) {
        Some(lag) => c.add_reply_integer(lag),
        None => c.add_reply_null(),
    }
}

/// xinfoReplyWithStreamInfo: XINFO STREAM key [FULL [COUNT count]].
fn xinfo_reply_with_stream_info(c: &mut Client, s: &Stream) {
    let optc = c.argc() - 3;
    let mut full = true;
    let mut count: i64 = 10; // a default so FULL does not stall the server
    if optc == 0 {
        full = false;
    } else {
        if optc != 1 && optc != 3 {
            return c.add_reply_subcommand_syntax_error();
        }
        if !opt_is(c.arg(3), "full") {
            return c.add_reply_subcommand_syntax_error();
        }
        if optc == 3 {
            if !opt_is(c.arg(4), "count") {
                return c.add_reply_subcommand_syntax_error();
            }
            let Some(n) = get_long_long_or_reply(c, 5, None) else {
                return;
            };
            count = if n < 0 { 10 } else { n };
        }
    }
    let count = count as usize;
    c.add_reply_map_len(if full { 9 } else { 10 });
    c.add_reply_bulk(b"length");
    c.add_reply_integer(s.length as i64);
    c.add_reply_bulk(b"radix-tree-keys");
    c.add_reply_integer(s.rax.len() as i64);
    c.add_reply_bulk(b"radix-tree-nodes");
    c.add_reply_integer(s.rax.numnodes() as i64);
    c.add_reply_bulk(b"last-generated-id");
    add_reply_stream_id(c, s.last_id);
    c.add_reply_bulk(b"max-deleted-entry-id");
    add_reply_stream_id(c, s.max_deleted_entry_id);
    c.add_reply_bulk(b"entries-added");
    c.add_reply_integer(s.entries_added as i64);
    c.add_reply_bulk(b"recorded-first-entry-id");
    add_reply_stream_id(c, s.first_id);
    if !full {
        c.add_reply_bulk(b"groups");
        c.add_reply_integer(s.num_groups() as i64);
        for (name, rev) in [(&b"first-entry"[..], false), (b"last-entry", true)] {
            c.add_reply_bulk(name);
            let mut body = BytesMut::new();
            if reply_with_range(&mut body, s, None, None, 1, rev, None) == 0 {
                c.add_reply_null();
            } else {
                c.reply.extend_from_slice(&body);
            }
        }
        return;
    }
    c.add_reply_bulk(b"entries");
    add_reply_range(c, s, None, None, count, false);
    c.add_reply_bulk(b"groups");
    c.add_reply_array_len(s.num_groups() as usize);
    let Some(mut groups) = s.groups() else {
        return;
    };
    while let Some((name, cg)) = groups.next() {
        c.add_reply_map_len(7);
        c.add_reply_bulk(b"name");
        c.add_reply_bulk(name);
        c.add_reply_bulk(b"last-delivered-id");
        add_reply_stream_id(c, cg.last_id);
        add_reply_entries_read_and_lag(c, s, cg);
        c.add_reply_bulk(b"pel-count");
        c.add_reply_integer(cg.pel.len() as i64);
        c.add_reply_bulk(b"pending");
        let mut body = BytesMut::new();
        let mut n = 0;
        let mut it = cg.pel.iter();
        while let Some((k, nack)) = it.next() {
            if count != 0 && n >= count {
                break;
            }
            protocol::reply::array_len(&mut body, 4);
            put_stream_id(&mut body, StreamID::decode(k).unwrap_or_default());
            protocol::reply::bulk(&mut body, nack.consumer.as_deref().unwrap_or(b""));
            protocol::reply::integer(&mut body, nack.delivery_time);
            protocol::reply::integer(&mut body, nack.delivery_count as i64);
            n += 1;
        }
        add_reply_deferred_array(c, n, &body);
        c.add_reply_bulk(b"consumers");
        c.add_reply_array_len(cg.consumers.len() as usize);
        let mut consumers = cg.consumers.iter();
        while let Some((_, consumer)) = consumers.next() {
            c.add_reply_map_len(4);
            c.add_reply_bulk(b"name");
            c.add_reply_bulk(&consumer.name);
            c.add_reply_bulk(b"seen-time");
            c.add_reply_integer(consumer.seen_time);
            c.add_reply_bulk(b"pel-count");
            c.add_reply_integer(consumer.pel.len() as i64);
            c.add_reply_bulk(b"pending");
            let mut body = BytesMut::new();
            let mut n = 0;
            let mut it = consumer.pel.iter();
            while let Some((k, ())) = it.next() {
                if count != 0 && n >= count {
                    break;
                }
                let Some(nack) = cg.pel.find(k) else {
                    continue;
                };
                protocol::reply::array_len(&mut body, 3);
                put_stream_id(&mut body, StreamID::decode(k).unwrap_or_default());
                protocol::reply::integer(&mut body, nack.delivery_time);
                protocol::reply::integer(&mut body, nack.delivery_count as i64);
                n += 1;
            }
            add_reply_deferred_array(c, n, &body);
        }
    }
}

// ---- helpers for OBJECT / MEMORY / DEBUG / COPY ----

/// streamRadixTreeMemoryUsage: Redis's estimate for a rax: 16 bytes per
/// key, and per node its 4-byte header plus 30 pointers' worth of
/// children and padding.
fn rax_memory_usage(numele: u64, numnodes: u64) -> usize {
    numele as usize * STREAM_ID_SIZE
        + numnodes as usize * RAX_NODE_SIZE
        + numnodes as usize * std::mem::size_of::<i64>() * 30
}

/// objectComputeSize for a stream: robj + stream + the tree, the node
/// allocations (the first `samples` averaged over all but the last, which
/// is counted exactly: it is usually still pre-allocated), and for each
/// group its PELs and consumers.
pub fn stream_object_compute_size(s: &Stream, samples: i64) -> usize {
    let jemalloc = crate::object::jemalloc_size_class;
    let mut asize = crate::object::ROBJ_SIZE
        + STREAM_STRUCT_SIZE
        + rax_memory_usage(s.rax.len(), s.rax.numnodes());
    let limit = if samples <= 0 {
        usize::MAX
    } else {
        samples as usize
    };
    let (mut lpsize, mut n) = (0usize, 0usize);
    let mut it = s.nodes();
    while n < limit {
        let Some((_, lp)) = it.next() else {
            break;
        };
        lpsize += jemalloc(lp.capacity());
        n += 1;
    }
    if s.rax.len() as usize <= n {
        asize += lpsize;
    } else {
        lpsize = lpsize.checked_div(n).unwrap_or(lpsize);
        asize += lpsize * (s.rax.len() as usize - 1);
        let mut key = Vec::new();
        if let Some(last) = s.rax.last(&mut key) {
            asize += jemalloc(last.capacity());
        }
    }
    if let Some(mut groups) = s.groups() {
        while let Some((_, cg)) = groups.next() {
            asize += STREAM_CG_SIZE;
            asize += rax_memory_usage(cg.pel.len(), cg.pel.numnodes());
            asize += STREAM_NACK_SIZE * cg.pel.len() as usize;
            let mut consumers = cg.consumers.iter();
            while let Some((_, consumer)) = consumers.next() {
                asize += STREAM_CONSUMER_SIZE + consumer.name.len();
                asize += rax_memory_usage(consumer.pel.len(), consumer.pel.numnodes());
            }
        }
    }
    asize
}

/// xorObjectDigest for a stream: the type, then each entry's `ms.seq`
/// and its fields and values in order (groups are not digested).
pub fn stream_digest(digest: &mut [u8; 20], s: &Stream) {
    crate::debug::mix_digest(digest, &OBJ_STREAM.to_be_bytes());
    let mut si = s.iter(None, None, false);
    while let Some((id, numfields)) = si.next_id() {
        crate::debug::mix_digest(digest, format!("{}.{}", id.ms, id.seq).as_bytes());
        for _ in 0..numfields {
            let (f, v) = si.next_field();
            crate::debug::mix_digest(digest, &f.to_vec());
            crate::debug::mix_digest(digest, &v.to_vec());
        }
    }
}

/// COPY: streamDup.
pub fn stream_dup(s: &Stream) -> Value {
    Value::Stream(Box::new(s.dup()))
}
