//! The hash commands (Redis's t_hash.c, command half).
//!
//! Every handler follows one recipe: parse the arguments, look the key up
//! (read or write), return early with WRONGTYPE for another type, change or
//! read the hash through `storage::t_hash` (which owns the listpack ->
//! hashtable conversion and its thresholds), reply, signal the key and
//! count the change in `srv.dirty`. No handler looks inside an encoding
//! (HSCAN goes through db.rs scan_generic_command and storage's
//! `hash_type_scan`).
//!
//! Values come back as `LpEntry`: a listpack stores "123" as the integer
//! 123, and the reply writes it back as the same bulk string.

use storage::dict::Dict;
use storage::listpack::{self, LpEntry};
use storage::object::{RObj, Value};
use storage::t_hash::{
    hash_type_create, hash_type_delete, hash_type_exists, hash_type_get,
    hash_type_get_value_length, hash_type_iter, hash_type_length, hash_type_random_element,
    hash_type_set, hash_type_try_conversion, HashLimits, HashValue,
};
use storage::util::{ld2string, string2ld, string2ll, LdStrMode};

use crate::db::{
    add_reply_empty_scan, db_add, db_delete, lookup_key_read, lookup_key_write, new_object,
    parse_scan_cursor, scan_generic_command, signal_modified_key,
};
use crate::networking::Client;
use crate::notify::{notify_keyspace_event, NOTIFY_GENERIC, NOTIFY_HASH};
use crate::server::Server;
use crate::shared;

/// HRANDFIELD_SUB_STRATEGY_MUL: when the hash holds at most 3 times the
/// fields asked for, copying it and removing random fields (case 3) is
/// cheaper than drawing random fields until enough distinct ones came up.
const HRANDFIELD_SUB_STRATEGY_MUL: usize = 3;

/// HRANDFIELD_RANDOM_SAMPLE_LIMIT: a negative count on a listpack is served
/// in batches of at most 1000 picks, so a huge count does not allocate a
/// huge pick array at once.
const HRANDFIELD_RANDOM_SAMPLE_LIMIT: usize = 1000;

/// redis-lite's own guard (Redis has none and runs out of memory): the
/// largest |count| HRANDFIELD serves with repetitions to a client without
/// an output buffer hard limit; beyond it the reply alone would be
/// gigabytes. With a hard limit the reply is cut there, as in Redis.
const HRANDFIELD_MAX_REPEATED: u64 = 1 << 27;

/// OBJ_HASH: the type number mixed into a hash's digest.
const OBJ_HASH: u32 = 4;

/// The conversion thresholds from the config (hash-max-listpack-*).
fn hash_limits(srv: &Server) -> HashLimits {
    HashLimits {
        max_listpack_entries: srv.config.hash_max_listpack_entries.max(0) as usize,
        max_listpack_value: srv.config.hash_max_listpack_value.max(0) as usize,
    }
}

/// The hash behind a read lookup: Ok(None) if missing, Err(()) after a
/// WRONGTYPE reply (lookupKeyRead + checkType).
fn lookup_hash_read<'a>(
    srv: &'a mut Server,
    c: &mut Client,
    key: &[u8],
) -> Result<Option<&'a mut HashValue>, ()> {
    let o = lookup_key_read(srv, c.db, key);
    crate::db::check_type(c, o, as_hash)
}

/// The hash behind a write lookup (no creation).
fn lookup_hash_write<'a>(
    srv: &'a mut Server,
    c: &mut Client,
    key: &[u8],
) -> Result<Option<&'a mut HashValue>, ()> {
    let o = lookup_key_write(srv, c.db, key);
    crate::db::check_type(c, o, as_hash)
}

/// The hash inside an object, if it is one.
fn as_hash(o: &mut RObj) -> Option<&mut HashValue> {
    match &mut o.value {
        Value::Hash(h) => Some(h),
        _ => None,
    }
}

/// hashTypeLookupWriteOrCreate: the hash at `key`, created empty (and
/// added to the keyspace) if missing; None after a WRONGTYPE reply.
fn hash_type_lookup_write_or_create<'a>(
    srv: &'a mut Server,
    c: &mut Client,
    key: &[u8],
) -> Option<&'a mut HashValue> {
    let dbid = c.db;
    let o = lookup_key_write(srv, dbid, key);
    if crate::db::check_type(c, o, as_hash).ok()?.is_none() {
        let o = new_object(srv, Value::Hash(hash_type_create()));
        db_add(srv, dbid, key, o);
    }
    match srv.dbs[dbid].dict.find(key) {
        Some(RObj {
            value: Value::Hash(h),
            ..
        }) => Some(h),
        _ => None,
    }
}

/// addReplyBulk of a hash field or value (a listpack integer is written
/// back as its decimal text, as addReplyBulkLongLong does).
fn add_reply_entry(c: &mut Client, e: LpEntry<'_>) {
    match e {
        LpEntry::Str(s) => c.add_reply_bulk(s),
        LpEntry::Int(i) => c.add_reply_bulk_i64(i),
    }
}

/// The fields and values of argv[from..] as slices (for the conversion check).
fn arg_slices(c: &Client, from: usize) -> Vec<&[u8]> {
    c.argv[from..].iter().map(|a| &a[..]).collect()
}

/// HSETNX key field value
// redis: t_hash.c hsetnxCommand
pub fn hsetnx_command(srv: &mut Server, c: &mut Client) {
    let limits = hash_limits(srv);
    let (key, field, value) = (c.argv[1].clone(), c.argv[2].clone(), c.argv[3].clone());
    let Some(h) = hash_type_lookup_write_or_create(srv, c, &key) else {
        return;
    };
    if hash_type_exists(h, &field) {
        return c.add_reply_integer(0);
    }
    hash_type_try_conversion(h, &[&field, &value], &limits);
    hash_type_set(h, &field, &value, &limits);
    c.add_reply_integer(1);
    signal_modified_key(srv, c.db, &key);
    notify_keyspace_event(srv, NOTIFY_HASH, "hset", &key, c.db);
    srv.dirty += 1;
}

/// HSET key field value [field value ...]  (also HMSET, which replies OK)
// redis: t_hash.c hsetCommand
pub fn hset_command(srv: &mut Server, c: &mut Client) {
    if c.argc() % 2 == 1 {
        let name = String::from_utf8_lossy(c.arg(0)).to_lowercase();
        return c.add_reply_error(&format!(
            "ERR wrong number of arguments for '{name}' command"
        ));
    }
    let limits = hash_limits(srv);
    let key = c.argv[1].clone();
    let argv = c.argv.clone();
    let Some(h) = hash_type_lookup_write_or_create(srv, c, &key) else {
        return;
    };
    // Long fields or values convert before anything is inserted.
    hash_type_try_conversion(h, &arg_slices(c, 2), &limits);
    let mut created = 0;
    for pair in argv[2..].chunks_exact(2) {
        if !hash_type_set(h, &pair[0], &pair[1], &limits) {
            created += 1;
        }
    }
    // HMSET (deprecated) replies OK; HSET the number of new fields.
    if matches!(c.arg(0).get(1), Some(b's' | b'S')) {
        c.add_reply_integer(created);
    } else {
        c.add_reply_ok();
    }
    signal_modified_key(srv, c.db, &key);
    notify_keyspace_event(srv, NOTIFY_HASH, "hset", &key, c.db);
    srv.dirty += ((c.argc() - 2) / 2) as u64;
}

/// HMSET key field value [field value ...]
// redis: t_hash.c hsetCommand
pub fn hmset_command(srv: &mut Server, c: &mut Client) {
    hset_command(srv, c)
}

/// HINCRBY key field increment
// redis: t_hash.c hincrbyCommand
pub fn hincrby_command(srv: &mut Server, c: &mut Client) {
    let Some(incr) = string2ll(c.arg(3)) else {
        return c.add_reply_error(shared::NOT_INTEGER_ERR);
    };
    let limits = hash_limits(srv);
    let (key, field) = (c.argv[1].clone(), c.argv[2].clone());
    let Some(h) = hash_type_lookup_write_or_create(srv, c, &key) else {
        return;
    };
    let old = match hash_type_get(h, &field) {
        None => 0,
        Some(LpEntry::Int(v)) => v,
        Some(LpEntry::Str(s)) => match string2ll(s) {
            Some(v) => v,
            None => return c.add_reply_error("ERR hash value is not an integer"),
        },
    };
    let Some(value) = old.checked_add(incr) else {
        return c.add_reply_error("ERR increment or decrement would overflow");
    };
    hash_type_set(
        h,
        &field,
        storage::util::ll2string(value).as_bytes(),
        &limits,
    );
    c.add_reply_integer(value);
    signal_modified_key(srv, c.db, &key);
    notify_keyspace_event(srv, NOTIFY_HASH, "hincrby", &key, c.db);
    srv.dirty += 1;
}

/// HINCRBYFLOAT key field increment
// redis: t_hash.c hincrbyfloatCommand
pub fn hincrbyfloat_command(srv: &mut Server, c: &mut Client) {
    let Some(incr) = string2ld(c.arg(3)) else {
        return c.add_reply_error(shared::NOT_FLOAT_ERR);
    };
    // An infinite increment is refused before the key is looked at.
    if incr.is_nan_or_inf() {
        return c.add_reply_error("ERR value is NaN or Infinity");
    }
    let limits = hash_limits(srv);
    let (key, field) = (c.argv[1].clone(), c.argv[2].clone());
    let Some(h) = hash_type_lookup_write_or_create(srv, c, &key) else {
        return;
    };
    let old = match hash_type_get(h, &field) {
        None => storage::util::LongDouble::from_i64(0),
        Some(LpEntry::Int(v)) => storage::util::LongDouble::from_i64(v),
        Some(LpEntry::Str(s)) => match string2ld(s) {
            Some(v) => v,
            None => return c.add_reply_error("ERR hash value is not a float"),
        },
    };
    let value = old + incr;
    if value.is_nan_or_inf() {
        return c.add_reply_error("ERR increment would produce NaN or Infinity");
    }
    let text = ld2string(value, LdStrMode::Human);
    hash_type_set(h, &field, &text, &limits);
    c.add_reply_bulk(&text);
    signal_modified_key(srv, c.db, &key);
    notify_keyspace_event(srv, NOTIFY_HASH, "hincrbyfloat", &key, c.db);
    srv.dirty += 1;
    // Propagated as HSET key field <result>: the same digits on replay.
    let argv = vec![
        bytes::Bytes::from_static(b"HSET"),
        key,
        field,
        bytes::Bytes::copy_from_slice(&text),
    ];
    crate::propagate::rewrite_client_command_vector(c, argv);
}

/// HGET key field
// redis: t_hash.c hgetCommand / addHashFieldToReply
pub fn hget_command(srv: &mut Server, c: &mut Client) {
    let (key, field) = (c.argv[1].clone(), c.argv[2].clone());
    match lookup_hash_read(srv, c, &key) {
        Err(()) => {}
        Ok(None) => c.add_reply_null(),
        Ok(Some(h)) => match hash_type_get(h, &field) {
            Some(v) => add_reply_entry(c, v),
            None => c.add_reply_null(),
        },
    }
}

/// HMGET key field [field ...]
// redis: t_hash.c hmgetCommand
pub fn hmget_command(srv: &mut Server, c: &mut Client) {
    let argv = c.argv.clone();
    // A missing key is an empty hash: one null per field.
    let Ok(mut h) = lookup_hash_read(srv, c, &argv[1]) else {
        return;
    };
    c.add_reply_array_len(argv.len() - 2);
    for field in &argv[2..] {
        match h.as_deref_mut().and_then(|h| hash_type_get(h, field)) {
            Some(v) => add_reply_entry(c, v),
            None => c.add_reply_null(),
        }
    }
}

/// HDEL key field [field ...]
// redis: t_hash.c hdelCommand
pub fn hdel_command(srv: &mut Server, c: &mut Client) {
    let argv = c.argv.clone();
    let h = match lookup_hash_write(srv, c, &argv[1]) {
        Err(()) => return,
        Ok(None) => return c.add_reply_integer(0),
        Ok(Some(h)) => h,
    };
    let mut deleted = 0;
    let mut keyremoved = false;
    for field in &argv[2..] {
        if hash_type_delete(h, field) {
            deleted += 1;
            // The last field gone: the key goes too.
            if hash_type_length(h) == 0 {
                keyremoved = true;
                break;
            }
        }
    }
    if keyremoved {
        db_delete(srv, c.db, &argv[1]);
    }
    if deleted > 0 {
        signal_modified_key(srv, c.db, &argv[1]);
        notify_keyspace_event(srv, NOTIFY_HASH, "hdel", &argv[1], c.db);
        if keyremoved {
            notify_keyspace_event(srv, NOTIFY_GENERIC, "del", &argv[1], c.db);
        }
        srv.dirty += deleted as u64;
    }
    c.add_reply_integer(deleted);
}

/// HLEN key
// redis: t_hash.c hlenCommand
pub fn hlen_command(srv: &mut Server, c: &mut Client) {
    let key = c.argv[1].clone();
    match lookup_hash_read(srv, c, &key) {
        Err(()) => {}
        Ok(None) => c.add_reply_integer(0),
        Ok(Some(h)) => {
            let n = hash_type_length(h);
            c.add_reply_integer(n as i64)
        }
    }
}

/// HSTRLEN key field
// redis: t_hash.c hstrlenCommand
pub fn hstrlen_command(srv: &mut Server, c: &mut Client) {
    let (key, field) = (c.argv[1].clone(), c.argv[2].clone());
    match lookup_hash_read(srv, c, &key) {
        Err(()) => {}
        Ok(None) => c.add_reply_integer(0),
        Ok(Some(h)) => {
            let n = hash_type_get_value_length(h, &field);
            c.add_reply_integer(n as i64)
        }
    }
}

/// HEXISTS key field
// redis: t_hash.c hexistsCommand
pub fn hexists_command(srv: &mut Server, c: &mut Client) {
    let (key, field) = (c.argv[1].clone(), c.argv[2].clone());
    match lookup_hash_read(srv, c, &key) {
        Err(()) => {}
        Ok(None) => c.add_reply_integer(0),
        Ok(Some(h)) => {
            let found = hash_type_exists(h, &field);
            c.add_reply_integer(found as i64)
        }
    }
}

/// What genericHgetallCommand replies with (OBJ_HASH_KEY / OBJ_HASH_VALUE).
#[derive(Clone, Copy, PartialEq)]
enum HgetallWhat {
    Keys,
    Values,
    Both,
}

/// genericHgetallCommand: HKEYS / HVALS as an array, HGETALL as a map
/// (a flat array in RESP2).
fn generic_hgetall_command(srv: &mut Server, c: &mut Client, what: HgetallWhat) {
    let key = c.argv[1].clone();
    let h = match lookup_hash_read(srv, c, &key) {
        Err(()) => return,
        Ok(None) if what == HgetallWhat::Both => return c.add_reply_map_len(0),
        Ok(None) => return c.add_reply_array_len(0),
        Ok(Some(h)) => &*h,
    };
    let len = hash_type_length(h);
    if what == HgetallWhat::Both {
        c.add_reply_map_len(len);
    } else {
        c.add_reply_array_len(len);
    }
    for (field, value) in hash_type_iter(h) {
        if what != HgetallWhat::Values {
            add_reply_entry(c, field);
        }
        if what != HgetallWhat::Keys {
            add_reply_entry(c, value);
        }
    }
}

/// HKEYS key
// redis: t_hash.c hkeysCommand
pub fn hkeys_command(srv: &mut Server, c: &mut Client) {
    generic_hgetall_command(srv, c, HgetallWhat::Keys)
}

/// HVALS key
// redis: t_hash.c hvalsCommand
pub fn hvals_command(srv: &mut Server, c: &mut Client) {
    generic_hgetall_command(srv, c, HgetallWhat::Values)
}

/// HGETALL key
// redis: t_hash.c hgetallCommand
pub fn hgetall_command(srv: &mut Server, c: &mut Client) {
    generic_hgetall_command(srv, c, HgetallWhat::Both)
}

/// HSCAN key cursor [MATCH pattern] [COUNT count]
// redis: t_hash.c hscanCommand / db.c scanGenericCommand
pub fn hscan_command(srv: &mut Server, c: &mut Client) {
    // The cursor is checked before the key is even looked up.
    let Some(cursor) = parse_scan_cursor(c.arg(2)) else {
        return c.add_reply_error(shared::INVALID_CURSOR_ERR);
    };
    let key = c.argv[1].clone();
    match lookup_hash_read(srv, c, &key) {
        Err(()) => {}
        Ok(None) => add_reply_empty_scan(c),
        Ok(Some(_)) => scan_generic_command(srv, c, Some(&key), cursor),
    }
}

/// HRANDFIELD key [count [WITHVALUES]]
// redis: t_hash.c hrandfieldCommand
pub fn hrandfield_command(srv: &mut Server, c: &mut Client) {
    if c.argc() >= 3 {
        // getRangeLongFromObjectOrReply(-LONG_MAX, LONG_MAX).
        let Some(l) = string2ll(c.arg(2)) else {
            return c.add_reply_error(shared::NOT_INTEGER_ERR);
        };
        if l == i64::MIN {
            return c.add_reply_error(
                "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807",
            );
        }
        let withvalues = c.argc() == 4;
        if c.argc() > 4 || (withvalues && !c.arg(3).eq_ignore_ascii_case(b"withvalues")) {
            return c.add_reply_syntax_error();
        }
        // The reply holds 2*count items: keep that in a long.
        if withvalues && !(-(i64::MAX / 2)..=i64::MAX / 2).contains(&l) {
            return c.add_reply_error("ERR value is out of range");
        }
        return hrandfield_with_count_command(srv, c, l, withvalues);
    }
    // No count: one field as a bulk string (null if no key).
    let key = c.argv[1].clone();
    match lookup_hash_read(srv, c, &key) {
        Err(()) => {}
        Ok(None) => c.add_reply_null(),
        Ok(Some(h)) => match hash_type_random_element(h) {
            Some((f, _)) => add_reply_entry(c, f),
            None => c.add_reply_null(),
        },
    }
}

/// One HRANDFIELD pick: RESP3 nests a [field, value] pair, RESP2 is flat.
fn add_reply_pick(c: &mut Client, f: LpEntry<'_>, v: LpEntry<'_>, withvalues: bool) {
    if withvalues && c.resp == protocol::reply::Resp::V3 {
        c.add_reply_array_len(2);
    }
    add_reply_entry(c, f);
    if withvalues {
        add_reply_entry(c, v);
    }
}

/// hrandfieldWithCountCommand: the four strategies of Redis.
fn hrandfield_with_count_command(srv: &mut Server, c: &mut Client, l: i64, withvalues: bool) {
    let key = c.argv[1].clone();
    let h = match lookup_hash_read(srv, c, &key) {
        Err(()) => return,
        Ok(None) => return c.add_reply_array_len(0),
        Ok(Some(h)) => h,
    };
    let size = hash_type_length(h);
    let (count, uniq) = (l.unsigned_abs(), l >= 0);
    if count == 0 {
        return c.add_reply_array_len(0);
    }
    // CASE 1: negative count (or 1): `count` independent draws, repeats
    // allowed, in random order.
    if !uniq || count == 1 {
        // Redis relies on the output buffer limit to stop a huge reply
        // mid-run; without a hard limit for this client the guard applies.
        if count > HRANDFIELD_MAX_REPEATED && crate::networking::reply_hard_limit(c) == 0 {
            return c.add_reply_error("ERR value is out of range");
        }
        let count = count as usize;
        let flat = withvalues && c.resp == protocol::reply::Resp::V2;
        c.add_reply_array_len(if flat { count * 2 } else { count });
        match h {
            HashValue::Hashtable(_) => {
                for _ in 0..count {
                    let Some((f, v)) = hash_type_random_element(h) else {
                        break;
                    };
                    add_reply_pick(c, f, v, withvalues);
                    if c.has_flag(crate::networking::CLIENT_CLOSE_ASAP) {
                        break; // cut at its output buffer limit
                    }
                }
            }
            HashValue::Listpack(lp) => {
                let mut left = count;
                while left > 0 {
                    let batch = left.min(HRANDFIELD_RANDOM_SAMPLE_LIMIT);
                    left -= batch;
                    for (f, v) in listpack::lp_random_pairs(lp, batch) {
                        add_reply_pick(c, f, v, withvalues);
                    }
                    if c.has_flag(crate::networking::CLIENT_CLOSE_ASAP) {
                        break; // cut at its output buffer limit
                    }
                }
            }
        }
        return;
    }
    let count = count as usize;
    let reply_size = count.min(size);
    c.add_reply_array_len(if withvalues && c.resp == protocol::reply::Resp::V2 {
        reply_size * 2
    } else {
        reply_size
    });
    // CASE 2: asked for at least the whole hash: all of it.
    if count >= size {
        for (f, v) in hash_type_iter(h) {
            add_reply_pick(c, f, v, withvalues);
        }
        return;
    }
    // CASE 3: asked for most of it: copy everything, remove random fields.
    if count * HRANDFIELD_SUB_STRATEGY_MUL > size {
        let mut d: Dict<Box<[u8]>> = Dict::new();
        d.expand(size);
        for (f, v) in hash_type_iter(h) {
            d.insert(f.to_vec().into(), v.to_vec().into());
        }
        while d.len() > count {
            let Some((f, _)) = d.random_entry() else {
                break;
            };
            let f = f.clone();
            d.remove(&f);
        }
        for (f, v) in d.iter() {
            add_reply_pick(c, LpEntry::Str(f), LpEntry::Str(v), withvalues);
        }
        return;
    }
    // CASE 4: a few fields of a big hash.
    match h {
        // Drawing one by one from a listpack is slow: one pass instead.
        HashValue::Listpack(lp) => {
            for (f, v) in listpack::lp_random_pairs_unique(lp, count) {
                add_reply_pick(c, f, v, withvalues);
            }
        }
        // Draw until `count` distinct fields came up; reply as they come.
        HashValue::Hashtable(_) => {
            let mut seen: Dict<()> = Dict::new();
            seen.expand(count);
            while seen.len() < count {
                let Some((f, v)) = hash_type_random_element(h) else {
                    break;
                };
                if seen.contains_key(&f.to_vec()) {
                    continue;
                }
                seen.insert(f.to_vec().into(), ());
                add_reply_pick(c, f, v, withvalues);
            }
        }
    }
}

// ---- hooks for OBJECT / MEMORY / DEBUG / COPY ----

/// xorObjectDigest for a hash: the type, then for each pair
/// SHA1-mix(field, value) XORed in (order-free, encoding-free).
pub fn hash_digest(digest: &mut [u8; 20], h: &HashValue) {
    crate::debug::mix_digest(digest, &OBJ_HASH.to_be_bytes());
    for (f, v) in hash_type_iter(h) {
        let mut eledigest = [0u8; 20];
        crate::debug::mix_digest(&mut eledigest, &f.to_vec());
        crate::debug::mix_digest(&mut eledigest, &v.to_vec());
        crate::debug::xor_digest(digest, &eledigest);
    }
}

/// objectComputeSize for a hash, in Redis's shape on our structures:
/// - listpack: robj + the listpack allocation (Redis reallocs it to the
///   exact size, so jemalloc's class of its byte count);
/// - hashtable: robj + Dict + buckets, plus the average of `samples`
///   entries (0 = all) times the count, an entry being its dict entry and
///   its field and value allocations.
pub fn hash_object_compute_size(h: &HashValue, samples: i64) -> usize {
    use crate::object::{jemalloc_size_class, ROBJ_SIZE};
    match h {
        HashValue::Listpack(lp) => ROBJ_SIZE + jemalloc_size_class(lp.bytes()),
        HashValue::Hashtable(d) => {
            let buckets = d.buckets() * std::mem::size_of::<usize>();
            let mut asize = ROBJ_SIZE + std::mem::size_of::<Dict<Box<[u8]>>>() + buckets;
            let limit = if samples <= 0 {
                usize::MAX
            } else {
                samples as usize
            };
            let (mut elesize, mut sampled) = (0usize, 0usize);
            for (f, v) in d.iter().take(limit) {
                elesize += jemalloc_size_class(Dict::<Box<[u8]>>::entry_size())
                    + jemalloc_size_class(f.len())
                    + jemalloc_size_class(v.len());
                sampled += 1;
            }
            if sampled > 0 {
                asize += (elesize as f64 / sampled as f64 * d.len() as f64) as usize;
            }
            asize
        }
    }
}
