//! The set commands (the bottom half of Redis 7.0's t_set.c).
//!
//! Every handler follows one recipe: parse, look the key(s) up, check the
//! type (WRONGTYPE is an early return), change the set through the type API
//! in `storage::t_set` (which alone knows about intset vs hashtable), reply,
//! signal the key, count the change in `srv.dirty`.
//!
//! The multi-key commands share two engines, as in t_set.c:
//! - `sinter_generic_command`: SMEMBERS, SINTER, SINTERCARD, SINTERSTORE.
//!   Walk the smallest set and keep what every other set contains.
//! - `sunion_diff_generic_command`: SUNION(STORE), SDIFF(STORE) and SPOP's
//!   "whole set" case. The result is built in a fresh set that starts as an
//!   intset, so a small all-integer result is an intset (OBJECT ENCODING).
//!
//! SPOP and SRANDMEMBER with a count pick one of several strategies by the
//! ratio of count to set size, exactly as Redis 7.0 does, so the work and
//! the memory used stay proportional to min(count, size).

use bytes::{Bytes, BytesMut};
use storage::dict::Dict;
use storage::object::{RObj, Value};
use storage::t_set::{
    set_type_add, set_type_create, set_type_is_member, set_type_is_member_element, set_type_iter,
    set_type_new_result, set_type_random_element, set_type_remove, set_type_size, SetElement,
    SetValue,
};

use crate::db::{
    self, add_reply_empty_scan, db_add, db_delete, lookup_key_read, lookup_key_write, new_object,
    parse_scan_cursor, scan_generic_command, set_key, signal_modified_key,
};
use crate::networking::Client;
use crate::notify::{notify_keyspace_event, NOTIFY_GENERIC, NOTIFY_SET};
use crate::server::Server;
use crate::shared;

/// SPOP_MOVE_STRATEGY_MUL: SPOP with a count pops elements one by one while
/// the elements that stay are more than count/5; past that it is cheaper to
/// move the few survivors to a new set and hand the old one to the client.
const SPOP_MOVE_STRATEGY_MUL: usize = 5;

/// SRANDMEMBER_SUB_STRATEGY_MUL: when count*3 > size, SRANDMEMBER copies the
/// set and removes random elements down to count; otherwise it draws random
/// elements until it has count distinct ones.
const SRANDMEMBER_SUB_STRATEGY_MUL: usize = 3;

/// SET_OP_UNION / SET_OP_DIFF of sunionDiffGenericCommand.
#[derive(Clone, Copy, PartialEq, Eq)]
enum SetOp {
    Union,
    Diff,
}

/// server.set_max_intset_entries, for the type API.
fn max_intset_entries(srv: &Server) -> usize {
    usize::try_from(srv.config.set_max_intset_entries).unwrap_or(usize::MAX)
}

/// The set inside an object, if it is one (the projection checkType uses).
fn as_set(o: &mut RObj) -> Option<&mut SetValue> {
    match &mut o.value {
        Value::Set(s) => Some(s),
        _ => None,
    }
}

/// lookupKeyWrite + checkType(OBJ_SET): the set (None if missing), or Err
/// after the WRONGTYPE reply.
fn lookup_set_write<'a>(
    srv: &'a mut Server,
    c: &mut Client,
    key: &[u8],
) -> Result<Option<&'a mut SetValue>, ()> {
    let o = lookup_key_write(srv, c.db, key);
    db::check_type(c, o, as_set)
}

/// lookupKeyRead + checkType(OBJ_SET).
fn lookup_set_read<'a>(
    srv: &'a mut Server,
    c: &mut Client,
    key: &[u8],
) -> Result<Option<&'a mut SetValue>, ()> {
    let o = lookup_key_read(srv, c.db, key);
    db::check_type(c, o, as_set)
}

/// The set stored at `key` without any lookup side effect (the caller did
/// the lookup already and knows it is a set).
fn set_at<'a>(srv: &'a Server, dbid: usize, key: &[u8]) -> Option<&'a SetValue> {
    match srv.dbs[dbid].dict.get(key) {
        Some(RObj {
            value: Value::Set(s),
            ..
        }) => Some(s),
        _ => None,
    }
}

/// Append one member as a bulk string (addReplyBulk / addReplyBulkLongLong).
fn bulk_element<B: protocol::reply::ReplySink + ?Sized>(buf: &mut B, ele: SetElement<'_>) {
    match ele {
        SetElement::Int(v) => protocol::reply::bulk_i64(buf, v),
        SetElement::Str(s) => protocol::reply::bulk(buf, s),
    }
}

/// Reply with a whole set as a RESP set (`*` in RESP2, `~` in RESP3).
fn add_reply_set_members(c: &mut Client, set: &SetValue) {
    c.add_reply_set_len(set_type_size(set));
    for ele in set_type_iter(set) {
        bulk_element(&mut c.reply, ele);
    }
}

// ---- SADD / SREM / SMOVE ----

/// SADD key member [member ...]
// redis: t_set.c saddCommand
pub fn sadd_command(srv: &mut Server, c: &mut Client) {
    let (dbid, max) = (c.db, max_intset_entries(srv));
    let key = c.argv[1].clone();
    let set = match lookup_set_write(srv, c, &key) {
        Err(()) => return,
        Ok(Some(set)) => set,
        Ok(None) => {
            // The first member decides the starting encoding.
            let obj = new_object(srv, Value::Set(set_type_create(c.arg(2))));
            db_add(srv, dbid, &key, obj);
            match srv.dbs[dbid].dict.get_mut(&key) {
                Some(RObj {
                    value: Value::Set(s),
                    ..
                }) => s,
                _ => return c.add_reply_integer(0),
            }
        }
    };
    let mut added = 0;
    for member in &c.argv[2..] {
        if set_type_add(set, member, max) {
            added += 1;
        }
    }
    if added > 0 {
        signal_modified_key(srv, dbid, &key);
        notify_keyspace_event(srv, NOTIFY_SET, "sadd", &key, dbid);
    }
    srv.dirty += added;
    c.add_reply_integer(added as i64);
}

/// SREM key member [member ...]
// redis: t_set.c sremCommand
pub fn srem_command(srv: &mut Server, c: &mut Client) {
    let dbid = c.db;
    let key = c.argv[1].clone();
    let set = match lookup_set_write(srv, c, &key) {
        Err(()) => return,
        Ok(None) => return c.add_reply_integer(0),
        Ok(Some(set)) => set,
    };
    let (mut deleted, mut now_empty) = (0u64, false);
    for member in &c.argv[2..] {
        if set_type_remove(set, member) {
            deleted += 1;
            // An empty set is deleted at once: the remaining members are
            // not even looked at.
            if set_type_size(set) == 0 {
                now_empty = true;
                break;
            }
        }
    }
    if now_empty {
        db_delete(srv, dbid, &key);
    }
    if deleted > 0 {
        signal_modified_key(srv, dbid, &key);
        notify_keyspace_event(srv, NOTIFY_SET, "srem", &key, dbid);
        if now_empty {
            notify_keyspace_event(srv, NOTIFY_GENERIC, "del", &key, dbid);
        }
        srv.dirty += deleted;
    }
    c.add_reply_integer(deleted as i64);
}

/// SMOVE source destination member
// redis: t_set.c smoveCommand
pub fn smove_command(srv: &mut Server, c: &mut Client) {
    let (dbid, max) = (c.db, max_intset_entries(srv));
    let (src, dst, ele) = (c.argv[1].clone(), c.argv[2].clone(), c.argv[3].clone());
    // Both keys are looked up (and expired) first, as in Redis; a missing
    // source then answers 0 before either type is checked.
    let src_exists = lookup_key_write(srv, dbid, &src).is_some();
    let dst_exists = lookup_key_write(srv, dbid, &dst).is_some();
    if !src_exists {
        return c.add_reply_integer(0);
    }
    if lookup_set_write(srv, c, &src).is_err() || lookup_set_write(srv, c, &dst).is_err() {
        return;
    }
    // Same key: nothing moves; the answer is whether the member is there.
    if src == dst {
        let is_member = set_at(srv, dbid, &src).is_some_and(|s| set_type_is_member(s, &ele));
        return c.add_reply_integer(i64::from(is_member));
    }
    let srcset = match srv.dbs[dbid].dict.get_mut(&src) {
        Some(RObj {
            value: Value::Set(s),
            ..
        }) => s,
        _ => return c.add_reply_integer(0),
    };
    if !set_type_remove(srcset, &ele) {
        return c.add_reply_integer(0);
    }
    let src_empty = set_type_size(srcset) == 0;
    notify_keyspace_event(srv, NOTIFY_SET, "srem", &src, dbid);
    if src_empty {
        db_delete(srv, dbid, &src);
        notify_keyspace_event(srv, NOTIFY_GENERIC, "del", &src, dbid);
    }
    if !dst_exists {
        let obj = new_object(srv, Value::Set(set_type_create(&ele)));
        db_add(srv, dbid, &dst, obj);
    }
    signal_modified_key(srv, dbid, &src);
    // The encoding log's key is the destination, not the first key.
    storage::encoding_log::set_context_key(&dst);
    // The destination changed only if the member was not there already.
    if let Some(RObj {
        value: Value::Set(dstset),
        ..
    }) = srv.dbs[dbid].dict.get_mut(&dst)
    {
        if set_type_add(dstset, &ele, max) {
            srv.dirty += 1;
            signal_modified_key(srv, dbid, &dst);
            notify_keyspace_event(srv, NOTIFY_SET, "sadd", &dst, dbid);
        }
    }
    srv.dirty += 1;
    c.add_reply_integer(1);
}

// ---- SISMEMBER / SMISMEMBER / SCARD ----

/// SISMEMBER key member
// redis: t_set.c sismemberCommand
pub fn sismember_command(srv: &mut Server, c: &mut Client) {
    let key = c.argv[1].clone();
    match lookup_set_read(srv, c, &key) {
        Err(()) => {}
        Ok(None) => c.add_reply_integer(0),
        Ok(Some(set)) => {
            let is_member = set_type_is_member(set, c.arg(2));
            c.add_reply_integer(i64::from(is_member));
        }
    }
}

/// SMISMEMBER key member [member ...]
// redis: t_set.c smismemberCommand
pub fn smismember_command(srv: &mut Server, c: &mut Client) {
    // A missing key is an empty set: every answer is 0.
    let key = c.argv[1].clone();
    let set = match lookup_set_read(srv, c, &key) {
        Err(()) => return,
        Ok(set) => set,
    };
    let mut body = BytesMut::new();
    for member in &c.argv[2..] {
        let is_member = set
            .as_deref()
            .is_some_and(|s| set_type_is_member(s, member));
        protocol::reply::integer(&mut body, i64::from(is_member));
    }
    c.add_reply_array_len(c.argc() - 2);
    c.reply.extend_from_slice(&body);
}

/// SCARD key
// redis: t_set.c scardCommand
pub fn scard_command(srv: &mut Server, c: &mut Client) {
    let key = c.argv[1].clone();
    match lookup_set_read(srv, c, &key) {
        Err(()) => {}
        Ok(None) => c.add_reply_integer(0),
        Ok(Some(set)) => c.add_reply_integer(set_type_size(set) as i64),
    }
}

// ---- SPOP / SRANDMEMBER ----

/// SPOP key [count]
// redis: t_set.c spopCommand
pub fn spop_command(srv: &mut Server, c: &mut Client) {
    if c.argc() == 3 {
        return spop_with_count_command(srv, c);
    } else if c.argc() > 3 {
        return c.add_reply_syntax_error();
    }
    let dbid = c.db;
    let key = c.argv[1].clone();
    let set = match lookup_set_write(srv, c, &key) {
        Err(()) => return,
        Ok(None) => return c.add_reply_null(),
        Ok(Some(set)) => set,
    };
    let Some(ele) = set_type_random_element(set) else {
        return c.add_reply_null();
    };
    set_type_remove(set, &ele);
    let now_empty = set_type_size(set) == 0;
    // Propagated as SREM key <the member drawn>.
    let argv = vec![
        Bytes::from_static(b"SREM"),
        key.clone(),
        Bytes::copy_from_slice(&ele),
    ];
    crate::propagate::rewrite_client_command_vector(c, argv);
    notify_keyspace_event(srv, NOTIFY_SET, "spop", &key, dbid);
    c.add_reply_bulk(&ele);
    if now_empty {
        db_delete(srv, dbid, &key);
        notify_keyspace_event(srv, NOTIFY_GENERIC, "del", &key, dbid);
    }
    signal_modified_key(srv, dbid, &key);
    srv.dirty += 1;
}

/// getPositiveLongFromObjectOrReply with no custom message.
fn parse_positive_count(arg: &[u8]) -> Result<usize, &'static str> {
    let n = storage::util::string2ll(arg).ok_or(shared::MUST_BE_POSITIVE_ERR)?;
    usize::try_from(n).map_err(|_| shared::MUST_BE_POSITIVE_ERR)
}

/// spopWithCountCommand: SPOP key count.
fn spop_with_count_command(srv: &mut Server, c: &mut Client) {
    let count = match parse_positive_count(c.arg(2)) {
        Ok(n) => n,
        Err(e) => return c.add_reply_error(e),
    };
    let (dbid, max) = (c.db, max_intset_entries(srv));
    let key = c.argv[1].clone();
    let set = match lookup_set_write(srv, c, &key) {
        Err(()) => return,
        Ok(None) => return c.add_reply_set_len(0),
        Ok(Some(set)) => set,
    };
    if count == 0 {
        return c.add_reply_set_len(0);
    }
    let size = set_type_size(set);
    // The event goes out before the pop; the set is then found again (the
    // notification needed the server).
    notify_keyspace_event(srv, NOTIFY_SET, "spop", &key, dbid);
    let Some(RObj {
        value: Value::Set(set),
        ..
    }) = srv.dbs[dbid].dict.get_mut(&key)
    else {
        return c.add_reply_set_len(0);
    };

    // CASE 1: count >= size: the whole set goes to the client (replied as
    // SUNION of the one key would) and the key is deleted.
    if count >= size {
        let whole = sunion_diff(&[Some(&*set)], SetOp::Union, max);
        add_reply_set_members(c, &whole);
        db_delete(srv, dbid, &key);
        notify_keyspace_event(srv, NOTIFY_GENERIC, "del", &key, dbid);
        signal_modified_key(srv, dbid, &key);
        srv.dirty += 1;
        // Propagated as DEL key.
        let argv = vec![Bytes::from_static(b"DEL"), key.clone()];
        crate::propagate::rewrite_client_command_vector(c, argv);
        return;
    }

    c.add_reply_set_len(count);
    let remaining = size - count;
    // Cases 2 and 3 propagate one SREM per popped member (wrapped in
    // MULTI/EXEC), never the SPOP itself.
    let mut popped: Vec<Bytes> = Vec::new();
    let propagating = srv.aof.state != crate::aof::AofStatus::Off || srv.propagate.repl_enabled;
    if remaining * SPOP_MOVE_STRATEGY_MUL > count {
        // CASE 2: few to pop: draw and remove one at a time.
        for _ in 0..count {
            let Some(ele) = set_type_random_element(set) else {
                break;
            };
            c.add_reply_bulk(&ele);
            set_type_remove(set, &ele);
            if propagating {
                popped.push(Bytes::copy_from_slice(&ele));
            }
        }
    } else {
        // CASE 3: popping nearly everything: move the `remaining` survivors
        // to a new set, reply with what is left in the old one, and store
        // the new set under the key.
        let mut newset: Option<SetValue> = None;
        for _ in 0..remaining {
            let Some(ele) = set_type_random_element(set) else {
                break;
            };
            set_type_remove(set, &ele);
            let ns = newset.get_or_insert_with(|| set_type_create(&ele));
            set_type_add(ns, &ele, max);
        }
        for ele in set_type_iter(set) {
            if propagating {
                popped.push(Bytes::copy_from_slice(&ele.as_bytes()));
            }
            bulk_element(&mut c.reply, ele);
        }
        if let Some(ns) = newset {
            if let Some(o) = srv.dbs[dbid].dict.get_mut(&key) {
                o.value = Value::Set(ns);
            }
        }
    }
    signal_modified_key(srv, dbid, &key);
    srv.dirty += count as u64;
    for ele in popped {
        let argv = vec![Bytes::from_static(b"SREM"), key.clone(), ele];
        let target = crate::propagate::PROPAGATE_AOF | crate::propagate::PROPAGATE_REPL;
        crate::propagate::also_propagate(srv, dbid, argv, target);
    }
    crate::propagate::prevent_command_propagation(srv);
}

/// SRANDMEMBER key [count]
// redis: t_set.c srandmemberCommand
pub fn srandmember_command(srv: &mut Server, c: &mut Client) {
    if c.argc() == 3 {
        return srandmember_with_count_command(srv, c);
    } else if c.argc() > 3 {
        return c.add_reply_syntax_error();
    }
    let key = c.argv[1].clone();
    match lookup_set_read(srv, c, &key) {
        Err(()) => {}
        Ok(None) => c.add_reply_null(),
        Ok(Some(set)) => match set_type_random_element(set) {
            Some(ele) => c.add_reply_bulk(&ele),
            None => c.add_reply_null(),
        },
    }
}

/// srandmemberWithCountCommand: SRANDMEMBER key count. A negative count
/// allows repeats; a positive one returns distinct members.
fn srandmember_with_count_command(srv: &mut Server, c: &mut Client) {
    // getRangeLongFromObjectOrReply(-LONG_MAX, LONG_MAX): -count must fit.
    let l = match storage::util::string2ll(c.arg(2)) {
        None => return c.add_reply_error(shared::NOT_INTEGER_ERR),
        Some(i64::MIN) => {
            return c.add_reply_error(
                "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807",
            )
        }
        Some(l) => l,
    };
    let (count, uniq) = (l.unsigned_abs() as usize, l >= 0);
    let key = c.argv[1].clone();
    let set = match lookup_set_read(srv, c, &key) {
        Err(()) => return,
        Ok(None) => return c.add_reply_array_len(0),
        Ok(Some(set)) => set,
    };
    let size = set_type_size(set);
    if count == 0 {
        return c.add_reply_array_len(0);
    }
    // CASE 1: repeats allowed (or a single pick): draw `count` times. The
    // reply is streamed; nothing is allocated in proportion to `count`.
    if !uniq || count == 1 {
        c.add_reply_array_len(count);
        for _ in 0..count {
            let Some(ele) = set_type_random_element(set) else {
                break;
            };
            c.add_reply_bulk(&ele);
        }
        return;
    }
    // CASE 2: at least the whole set asked for: the whole set.
    if count >= size {
        c.add_reply_array_len(size);
        for ele in set_type_iter(set) {
            bulk_element(&mut c.reply, ele);
        }
        return;
    }
    let mut d: Dict<()> = Dict::new();
    if count * SRANDMEMBER_SUB_STRATEGY_MUL > size {
        // CASE 3: close to the size: copy all, remove random ones to count.
        d.expand(size);
        for ele in set_type_iter(set) {
            let _ = d.add(ele.to_vec().into_boxed_slice(), ());
        }
        while d.len() > count {
            let Some(k) = d.random_entry().map(|(k, _)| k.clone()) else {
                break;
            };
            d.remove(&k);
        }
    } else {
        // CASE 4: small compared to the set: draw until `count` distinct.
        d.expand(count);
        while d.len() < count {
            let Some(ele) = set_type_random_element(set) else {
                break;
            };
            let _ = d.add(ele.into_boxed_slice(), ());
        }
    }
    c.add_reply_array_len(d.len());
    for (k, _) in d.iter() {
        protocol::reply::bulk(&mut c.reply, k);
    }
}

// ---- SINTER family ----

/// SMEMBERS key (Redis 7.0 serves it with sinterCommand).
// redis: t_set.c sinterCommand
pub fn smembers_command(srv: &mut Server, c: &mut Client) {
    let keys = c.argv[1..2].to_vec();
    sinter_generic_command(srv, c, &keys, None, false, 0);
}

/// SINTER key [key ...]
// redis: t_set.c sinterCommand
pub fn sinter_command(srv: &mut Server, c: &mut Client) {
    let keys = c.argv[1..].to_vec();
    sinter_generic_command(srv, c, &keys, None, false, 0);
}

/// SINTERSTORE destination key [key ...]
// redis: t_set.c sinterstoreCommand
pub fn sinterstore_command(srv: &mut Server, c: &mut Client) {
    let keys = c.argv[2..].to_vec();
    let dst = c.argv[1].clone();
    sinter_generic_command(srv, c, &keys, Some(dst), false, 0);
}

/// SINTERCARD numkeys key [key ...] [LIMIT limit]
// redis: t_set.c sinterCardCommand
pub fn sintercard_command(srv: &mut Server, c: &mut Client) {
    let numkeys = match storage::util::string2ll(c.arg(1)) {
        Some(n) if n >= 1 => n as usize,
        _ => return c.add_reply_error("ERR numkeys should be greater than 0"),
    };
    if numkeys > c.argc() - 2 {
        return c.add_reply_error("ERR Number of keys can't be greater than number of args");
    }
    let mut limit = 0usize;
    let mut j = 2 + numkeys;
    while j < c.argc() {
        let moreargs = j + 1 < c.argc();
        if c.arg(j).eq_ignore_ascii_case(b"limit") && moreargs {
            j += 1;
            match storage::util::string2ll(c.arg(j)).and_then(|n| usize::try_from(n).ok()) {
                Some(n) => limit = n,
                None => return c.add_reply_error("ERR LIMIT can't be negative"),
            }
        } else {
            return c.add_reply_syntax_error();
        }
        j += 1;
    }
    let keys = c.argv[2..2 + numkeys].to_vec();
    sinter_generic_command(srv, c, &keys, None, true, limit);
}

/// Look every key up, in order. Err on the first key that is not a set;
/// Ok(true) if some key is missing. Read lookups even for the STORE forms,
/// as in Redis 7.0: a missing source counts as a miss and emits "keymiss".
fn lookup_all_sets(srv: &mut Server, c: &mut Client, keys: &[Bytes]) -> Result<bool, ()> {
    let mut missing = false;
    for key in keys {
        missing |= lookup_set_read(srv, c, key)?.is_none();
    }
    Ok(missing)
}

/// sinterGenericCommand: the intersection of `keys`, replied as a set,
/// counted (SINTERCARD, stopping at `limit` when non-zero) or stored at
/// `dstkey`.
fn sinter_generic_command(
    srv: &mut Server,
    c: &mut Client,
    keys: &[Bytes],
    dstkey: Option<Bytes>,
    cardinality_only: bool,
    limit: usize,
) {
    let (dbid, max) = (c.db, max_intset_entries(srv));
    let Ok(missing) = lookup_all_sets(srv, c, keys) else {
        return;
    };
    // A missing key is an empty set, and so is the intersection.
    if missing {
        if let Some(dst) = dstkey {
            if db_delete(srv, dbid, &dst) {
                signal_modified_key(srv, dbid, &dst);
                notify_keyspace_event(srv, NOTIFY_GENERIC, "del", &dst, dbid);
                srv.dirty += 1;
            }
            c.add_reply_integer(0);
        } else if cardinality_only {
            c.add_reply_integer(0);
        } else {
            c.add_reply_set_len(0);
        }
        return;
    }
    // Smallest set first: it bounds the number of candidates.
    let mut sets: Vec<&SetValue> = keys.iter().filter_map(|k| set_at(srv, dbid, k)).collect();
    sets.sort_by_key(|s| set_type_size(s));
    let (mut dstset, mut body, mut cardinality) = (set_type_new_result(), BytesMut::new(), 0usize);
    for ele in set_type_iter(sets[0]) {
        // Keep `ele` only if every other set has it (the same set twice
        // needs no check).
        let in_all = sets[1..]
            .iter()
            .all(|s| std::ptr::eq(*s, sets[0]) || set_type_is_member_element(s, ele));
        if !in_all {
            continue;
        }
        cardinality += 1;
        if cardinality_only {
            if limit > 0 && cardinality >= limit {
                break;
            }
        } else if dstkey.is_none() {
            bulk_element(&mut body, ele);
        } else {
            set_type_add(&mut dstset, &ele.as_bytes(), max);
        }
    }
    if cardinality_only {
        c.add_reply_integer(cardinality as i64);
    } else if let Some(dst) = dstkey {
        store_result(srv, c, dbid, &dst, dstset, "sinterstore");
    } else {
        c.add_reply_set_len(cardinality);
        c.reply.extend_from_slice(&body);
    }
}

/// The STORE ending of both engines: a non-empty result overwrites
/// `dst` (setKey: any type, TTL dropped) and notifies `event`; an empty one
/// deletes it ("del").
fn store_result(
    srv: &mut Server,
    c: &mut Client,
    dbid: usize,
    dst: &[u8],
    result: SetValue,
    event: &str,
) {
    let size = set_type_size(&result);
    if size > 0 {
        let obj = new_object(srv, Value::Set(result));
        set_key(srv, dbid, dst, obj, false);
        notify_keyspace_event(srv, NOTIFY_SET, event, dst, dbid);
        srv.dirty += 1;
    } else if db_delete(srv, dbid, dst) {
        signal_modified_key(srv, dbid, dst);
        notify_keyspace_event(srv, NOTIFY_GENERIC, "del", dst, dbid);
        srv.dirty += 1;
    }
    c.add_reply_integer(size as i64);
}

// ---- SUNION / SDIFF family ----

/// SUNION key [key ...]
// redis: t_set.c sunionCommand
pub fn sunion_command(srv: &mut Server, c: &mut Client) {
    let keys = c.argv[1..].to_vec();
    sunion_diff_generic_command(srv, c, &keys, None, SetOp::Union);
}

/// SUNIONSTORE destination key [key ...]
// redis: t_set.c sunionstoreCommand
pub fn sunionstore_command(srv: &mut Server, c: &mut Client) {
    let keys = c.argv[2..].to_vec();
    let dst = c.argv[1].clone();
    sunion_diff_generic_command(srv, c, &keys, Some(dst), SetOp::Union);
}

/// SDIFF key [key ...]
// redis: t_set.c sdiffCommand
pub fn sdiff_command(srv: &mut Server, c: &mut Client) {
    let keys = c.argv[1..].to_vec();
    sunion_diff_generic_command(srv, c, &keys, None, SetOp::Diff);
}

/// SDIFFSTORE destination key [key ...]
// redis: t_set.c sdiffstoreCommand
pub fn sdiffstore_command(srv: &mut Server, c: &mut Client) {
    let keys = c.argv[2..].to_vec();
    let dst = c.argv[1].clone();
    sunion_diff_generic_command(srv, c, &keys, Some(dst), SetOp::Diff);
}

/// sunionDiffGenericCommand: look the keys up, compute, reply or store.
fn sunion_diff_generic_command(
    srv: &mut Server,
    c: &mut Client,
    keys: &[Bytes],
    dstkey: Option<Bytes>,
    op: SetOp,
) {
    let (dbid, max) = (c.db, max_intset_entries(srv));
    if lookup_all_sets(srv, c, keys).is_err() {
        return;
    }
    let sets: Vec<Option<&SetValue>> = keys.iter().map(|k| set_at(srv, dbid, k)).collect();
    let result = sunion_diff(&sets, op, max);
    match dstkey {
        None => add_reply_set_members(c, &result),
        Some(dst) => {
            let event = match op {
                SetOp::Union => "sunionstore",
                SetOp::Diff => "sdiffstore",
            };
            store_result(srv, c, dbid, &dst, result, event)
        }
    }
}

/// The union or difference of `sets` (None = missing key = empty set),
/// built in a new set that starts as an intset.
fn sunion_diff(sets: &[Option<&SetValue>], op: SetOp, max: usize) -> SetValue {
    let mut dstset = set_type_new_result();
    let first = sets[0];
    // The same key twice in SDIFF: first minus itself is empty.
    let sameset = sets[1..]
        .iter()
        .any(|s| matches!((first, s), (Some(a), Some(b)) if std::ptr::eq(a, *b)));
    if op == SetOp::Union {
        for set in sets.iter().flatten() {
            for ele in set_type_iter(set) {
                set_type_add(&mut dstset, &ele.as_bytes(), max);
            }
        }
        return dstset;
    }
    let Some(first) = first else {
        return dstset;
    };
    if sameset {
        return dstset;
    }
    // Choose the algorithm: 1 costs ~size(first) per set (halved: it does
    // less per step), 2 costs the sum of the sizes.
    let algo_one_work: usize = sets
        .iter()
        .flatten()
        .map(|_| set_type_size(first))
        .sum::<usize>()
        / 2;
    let algo_two_work: usize = sets.iter().flatten().map(|s| set_type_size(s)).sum();
    if algo_one_work <= algo_two_work {
        // Algorithm 1: keep each member of the first set that no other set
        // has; try the biggest sets first, most likely to reject early.
        let mut others: Vec<&SetValue> = sets[1..].iter().flatten().copied().collect();
        others.sort_by_key(|s| std::cmp::Reverse(set_type_size(s)));
        for ele in set_type_iter(first) {
            if !others.iter().any(|s| set_type_is_member_element(s, ele)) {
                set_type_add(&mut dstset, &ele.as_bytes(), max);
            }
        }
    } else {
        // Algorithm 2: copy the first set, then remove every member of the
        // others, stopping once nothing is left.
        let mut cardinality = 0usize;
        for (j, set) in sets.iter().enumerate() {
            let Some(set) = set else { continue };
            for ele in set_type_iter(set) {
                if j == 0 {
                    cardinality += usize::from(set_type_add(&mut dstset, &ele.as_bytes(), max));
                } else if set_type_remove(&mut dstset, &ele.as_bytes()) {
                    cardinality -= 1;
                }
            }
            if cardinality == 0 {
                break;
            }
        }
    }
    dstset
}

// ---- SSCAN ----

/// SSCAN key cursor [MATCH pattern] [COUNT count]
// redis: t_set.c sscanCommand / db.c scanGenericCommand
pub fn sscan_command(srv: &mut Server, c: &mut Client) {
    // The cursor is checked before the key is even looked up.
    let Some(cursor) = parse_scan_cursor(c.arg(2)) else {
        return c.add_reply_error(shared::INVALID_CURSOR_ERR);
    };
    let key = c.argv[1].clone();
    match lookup_set_read(srv, c, &key) {
        Err(()) => {}
        Ok(None) => add_reply_empty_scan(c),
        Ok(Some(_)) => scan_generic_command(srv, c, Some(&key), cursor),
    }
}

// ---- hooks for OBJECT / MEMORY / DEBUG ----

/// OBJ_SET: the type number mixed into a set's digest.
const OBJ_SET: u32 = 2;

/// xorObjectDigest for a set: the type, then every member XORed in (so the
/// order, and the encoding, do not matter).
pub fn set_digest(digest: &mut [u8; 20], set: &SetValue) {
    crate::debug::mix_digest(digest, &OBJ_SET.to_be_bytes());
    for ele in set_type_iter(set) {
        crate::debug::xor_digest(digest, &ele.as_bytes());
    }
}

/// objectComputeSize for a set, on OUR structures (the bytes this process
/// really holds), in Redis's shape:
/// - intset: robj + the blob (one allocation);
/// - hashtable: robj + the Dict struct + the bucket arrays, plus the
///   average of `samples` sampled elements (0 = all) times the element
///   count, an element being its dict entry allocation plus its member
///   allocation (both rounded to jemalloc's size classes).
pub fn set_object_compute_size(set: &SetValue, samples: i64) -> usize {
    use crate::object::{jemalloc_size_class, ROBJ_SIZE};
    match set {
        SetValue::Intset(is) => ROBJ_SIZE + jemalloc_size_class(is.blob_len()),
        SetValue::Hashtable(d) => {
            let buckets = d.buckets() * std::mem::size_of::<usize>();
            let mut asize = ROBJ_SIZE + std::mem::size_of::<Dict<()>>() + buckets;
            let limit = if samples <= 0 {
                usize::MAX
            } else {
                samples as usize
            };
            let (mut elesize, mut sampled) = (0usize, 0usize);
            for (k, _) in d.iter().take(limit) {
                elesize +=
                    jemalloc_size_class(Dict::<()>::entry_size()) + jemalloc_size_class(k.len());
                sampled += 1;
            }
            if sampled > 0 {
                asize += (elesize as f64 / sampled as f64 * d.len() as f64) as usize;
            }
            asize
        }
    }
}
