//! List commands (the command half of Redis 7.0's t_list.c).
//!
//! Every handler follows the recipe of t_string.rs: parse arguments (in
//! Redis's order, which decides *which* error a client sees), look the key
//! up for reading or writing, return early on WRONGTYPE, change the list
//! through the list type API (`storage::t_list`), reply, then keep the
//! keyspace tidy: a list that becomes empty is deleted on the spot
//! (`list_elements_removed`), because Redis never keeps empty lists.
//!
//! Every list is a quicklist (Redis 7.0): a new list takes the current
//! `list-max-listpack-size` / `list-compress-depth` and keeps them. The
//! read commands end with `recompress`: the compressed nodes they read
//! are compressed again (Redis's quicklistRecompressOnly).
//!
//! The blocking variants (BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP) serve
//! at once when a list has elements, and otherwise park the client in
//! blocked.rs until a push to one of its keys (or its timeout) wakes it.

use storage::listpack::LpEntry;
use storage::object::{RObj, Value};
use storage::quicklist::Quicklist;
use storage::t_list::{
    create_quicklist_object, list_type_delete_range, list_type_index, list_type_insert,
    list_type_iter, list_type_length, list_type_pop, list_type_push, list_type_rem,
    list_type_replace_at_index, ListWhere,
};
use storage::util::string2ll;

use crate::db;
use crate::networking::Client;
use crate::notify::{notify_keyspace_event, NOTIFY_GENERIC, NOTIFY_LIST};
use crate::server::Server;
use crate::shared;

// ---- shared pieces ----

/// getLongFromObjectOrReply with the default error text.
fn parse_long_or_reply(c: &mut Client, i: usize) -> Option<i64> {
    let v = string2ll(c.arg(i));
    if v.is_none() {
        c.add_reply_error(shared::NOT_INTEGER_ERR);
    }
    v
}

/// getRangeLongFromObjectOrReply with a custom message: `msg` both when the
/// argument is not an integer and when it is outside [min, max].
fn parse_range_long_or_reply(c: &mut Client, i: usize, min: i64, msg: &str) -> Option<i64> {
    let v = string2ll(c.arg(i)).filter(|v| *v >= min);
    if v.is_none() {
        c.add_reply_error(msg);
    }
    v
}

/// getListPositionFromObjectOrReply: LEFT (head) or RIGHT (tail).
fn parse_where_or_reply(c: &mut Client, i: usize) -> Option<ListWhere> {
    let arg = c.arg(i);
    if arg.eq_ignore_ascii_case(b"right") {
        Some(ListWhere::Tail)
    } else if arg.eq_ignore_ascii_case(b"left") {
        Some(ListWhere::Head)
    } else {
        c.add_reply_syntax_error();
        None
    }
}

/// The list inside an object, or None if it is another type.
fn as_list(o: &mut RObj) -> Option<&mut Quicklist> {
    match &mut o.value {
        Value::List(ql) => Some(ql),
        _ => None,
    }
}

/// Look `key` up for writing: Ok(None) if missing, Err after a WRONGTYPE
/// reply if it is not a list (lookupKeyWrite + checkType).
fn lookup_list_write<'a>(
    srv: &'a mut Server,
    c: &mut Client,
    key: &[u8],
) -> Result<Option<&'a mut Quicklist>, ()> {
    let o = db::lookup_key_write(srv, c.db, key);
    db::check_type(c, o, as_list)
}

/// lookupKeyRead + checkType.
fn lookup_list_read<'a>(
    srv: &'a mut Server,
    c: &mut Client,
    key: &[u8],
) -> Result<Option<&'a mut Quicklist>, ()> {
    let o = db::lookup_key_read(srv, c.db, key);
    db::check_type(c, o, as_list)
}

/// A new empty list with the server's list options, added under `key`
/// (createQuicklistObject + quicklistSetOptions + dbAdd).
fn create_list(srv: &mut Server, dbid: usize, key: &[u8]) {
    let value = create_quicklist_object(
        srv.config.list_max_listpack_size,
        srv.config.list_compress_depth,
    );
    let obj = db::new_object(srv, value);
    db::db_add(srv, dbid, key, obj);
}

/// The list under `key`, which the caller knows is a list.
fn list_mut<'a>(srv: &'a mut Server, dbid: usize, key: &[u8]) -> Option<&'a mut Quicklist> {
    srv.dbs[dbid].dict.find(key).and_then(as_list)
}

/// listElementsRemoved: notify `event` ("lpop", "rpop", "ltrim", "lrem"),
/// delete the key if the list is now empty (with a "del" event), signal the
/// change and count `count` changes.
fn list_elements_removed(srv: &mut Server, dbid: usize, key: &[u8], event: &str, count: usize) {
    notify_keyspace_event(srv, NOTIFY_LIST, event, key, dbid);
    if list_mut(srv, dbid, key).is_some_and(|ql| ql.is_empty()) {
        db::db_delete(srv, dbid, key);
        notify_keyspace_event(srv, NOTIFY_GENERIC, "del", key, dbid);
    }
    db::signal_modified_key(srv, dbid, key);
    srv.dirty += count as u64;
}

/// The keyspace event of a push at `wh`.
fn push_event(wh: ListWhere) -> &'static str {
    match wh {
        ListWhere::Head => "lpush",
        ListWhere::Tail => "rpush",
    }
}

/// The keyspace event of a pop at `wh`.
fn pop_event(wh: ListWhere) -> &'static str {
    match wh {
        ListWhere::Head => "lpop",
        ListWhere::Tail => "rpop",
    }
}

/// One list element as a bulk reply (integers are formatted as text).
fn add_reply_entry(c: &mut Client, e: LpEntry<'_>) {
    match e {
        LpEntry::Str(s) => c.add_reply_bulk(s),
        LpEntry::Int(v) => c.add_reply_bulk_i64(v),
    }
}

/// addListRangeReply: elements start..=end (negative = from the tail),
/// clamped; `reverse` walks from `end` towards `start` (RPOP with count).
/// Compressed nodes it read are compressed again when it is done.
fn add_list_range_reply(c: &mut Client, ql: &mut Quicklist, start: i64, end: i64, reverse: bool) {
    let llen = list_type_length(ql) as i64;
    let mut start = if start < 0 { llen + start } else { start };
    let mut end = if end < 0 { llen + end } else { end };
    if start < 0 {
        start = 0;
    }
    if start > end || start >= llen {
        c.add_reply_array_len(0);
        return;
    }
    if end >= llen {
        end = llen - 1;
    }
    let rangelen = (end - start + 1) as usize;
    c.add_reply_array_len(rangelen);
    let from = if reverse { end } else { start };
    for e in list_type_iter(ql, from, !reverse).take(rangelen) {
        add_reply_entry(c, e);
    }
    ql.recompress();
}

// ---- LPUSH / RPUSH / LPUSHX / RPUSHX ----

/// pushGenericCommand: `xx` = only if the key exists (LPUSHX / RPUSHX).
fn push_generic_command(srv: &mut Server, c: &mut Client, wh: ListWhere, xx: bool) {
    let key = c.argv[1].clone();
    let dbid = c.db;
    match lookup_list_write(srv, c, &key) {
        Err(()) => return,
        Ok(None) if xx => return c.add_reply_integer(0),
        Ok(None) => create_list(srv, dbid, &key),
        Ok(Some(_)) => {}
    }
    let Some(ql) = list_mut(srv, dbid, &key) else {
        return;
    };
    for v in &c.argv[2..] {
        list_type_push(ql, v, wh);
    }
    let len = list_type_length(ql);
    c.add_reply_integer(len as i64);
    db::signal_modified_key(srv, dbid, &key);
    notify_keyspace_event(srv, NOTIFY_LIST, push_event(wh), &key, dbid);
    srv.dirty += (c.argc() - 2) as u64;
}

/// LPUSH key element [element ...]
// redis: t_list.c lpushCommand
pub fn lpush_command(srv: &mut Server, c: &mut Client) {
    push_generic_command(srv, c, ListWhere::Head, false);
}

/// RPUSH key element [element ...]
// redis: t_list.c rpushCommand
pub fn rpush_command(srv: &mut Server, c: &mut Client) {
    push_generic_command(srv, c, ListWhere::Tail, false);
}

/// LPUSHX key element [element ...]
// redis: t_list.c lpushxCommand
pub fn lpushx_command(srv: &mut Server, c: &mut Client) {
    push_generic_command(srv, c, ListWhere::Head, true);
}

/// RPUSHX key element [element ...]
// redis: t_list.c rpushxCommand
pub fn rpushx_command(srv: &mut Server, c: &mut Client) {
    push_generic_command(srv, c, ListWhere::Tail, true);
}

// ---- LINSERT / LLEN / LINDEX / LSET ----

/// LINSERT key BEFORE|AFTER pivot element
// redis: t_list.c linsertCommand
pub fn linsert_command(srv: &mut Server, c: &mut Client) {
    let after = if c.arg(2).eq_ignore_ascii_case(b"after") {
        true
    } else if c.arg(2).eq_ignore_ascii_case(b"before") {
        false
    } else {
        return c.add_reply_syntax_error();
    };
    let key = c.argv[1].clone();
    let ql = match lookup_list_write(srv, c, &key) {
        Err(()) => return,
        Ok(None) => return c.add_reply_integer(0),
        Ok(Some(ql)) => ql,
    };
    if !list_type_insert(ql, c.arg(3), c.arg(4), after) {
        return c.add_reply_integer(-1);
    }
    let len = list_type_length(ql);
    db::signal_modified_key(srv, c.db, &key);
    notify_keyspace_event(srv, NOTIFY_LIST, "linsert", &key, c.db);
    srv.dirty += 1;
    c.add_reply_integer(len as i64);
}

/// LLEN key
// redis: t_list.c llenCommand
pub fn llen_command(srv: &mut Server, c: &mut Client) {
    let key = c.argv[1].clone();
    match lookup_list_read(srv, c, &key) {
        Err(()) => {}
        Ok(None) => c.add_reply_integer(0),
        Ok(Some(ql)) => c.add_reply_integer(list_type_length(ql) as i64),
    }
}

/// LINDEX key index
// redis: t_list.c lindexCommand
pub fn lindex_command(srv: &mut Server, c: &mut Client) {
    let key = c.argv[1].clone();
    // The key is looked up before the index is parsed (Redis's order).
    let ql = match lookup_list_read(srv, c, &key) {
        Err(()) => return,
        Ok(None) => return c.add_reply_null(),
        Ok(Some(ql)) => ql,
    };
    let Some(index) = parse_long_or_reply(c, 2) else {
        return;
    };
    match list_type_index(ql, index) {
        Some(v) => c.add_reply_bulk(&v),
        None => c.add_reply_null(),
    }
    ql.recompress();
}

/// LSET key index element
// redis: t_list.c lsetCommand
pub fn lset_command(srv: &mut Server, c: &mut Client) {
    let key = c.argv[1].clone();
    let ql = match lookup_list_write(srv, c, &key) {
        Err(()) => return,
        Ok(None) => return c.add_reply_error(shared::NO_SUCH_KEY_ERR),
        Ok(Some(ql)) => ql,
    };
    let Some(index) = parse_long_or_reply(c, 2) else {
        return;
    };
    if !list_type_replace_at_index(ql, index, c.arg(3)) {
        return c.add_reply_error(shared::OUT_OF_RANGE_ERR);
    }
    c.add_reply_ok();
    db::signal_modified_key(srv, c.db, &key);
    notify_keyspace_event(srv, NOTIFY_LIST, "lset", &key, c.db);
    srv.dirty += 1;
}

// ---- LPOP / RPOP / LRANGE / LTRIM ----

/// popGenericCommand: one element as a bulk, or with a count an array.
fn pop_generic_command(srv: &mut Server, c: &mut Client, wh: ListWhere) {
    let hascount = c.argc() == 3;
    if c.argc() > 3 {
        let name = String::from_utf8_lossy(c.arg(0)).to_lowercase();
        return c.add_reply_error(&format!(
            "ERR wrong number of arguments for '{name}' command"
        ));
    }
    let mut count = 0;
    if hascount {
        match parse_range_long_or_reply(c, 2, 0, shared::MUST_BE_POSITIVE_ERR) {
            Some(n) => count = n,
            None => return,
        }
    }
    let key = c.argv[1].clone();
    let dbid = c.db;
    let ql = match lookup_list_write(srv, c, &key) {
        Err(()) => return,
        Ok(None) if hascount => return c.add_reply_null_array(),
        Ok(None) => return c.add_reply_null(),
        Ok(Some(ql)) => ql,
    };
    if hascount && count == 0 {
        return c.add_reply_array_len(0);
    }
    let removed = if !hascount {
        let v = list_type_pop(ql, wh).unwrap_or_default();
        c.add_reply_bulk(&v);
        1
    } else {
        let rangelen = count.min(list_type_length(ql) as i64);
        let (start, end, reverse) = match wh {
            ListWhere::Head => (0, rangelen - 1, false),
            ListWhere::Tail => (-rangelen, -1, true),
        };
        add_list_range_reply(c, ql, start, end, reverse);
        list_type_delete_range(ql, start, rangelen);
        rangelen as usize
    };
    list_elements_removed(srv, dbid, &key, pop_event(wh), removed);
}

/// LPOP key [count]
// redis: t_list.c lpopCommand
pub fn lpop_command(srv: &mut Server, c: &mut Client) {
    pop_generic_command(srv, c, ListWhere::Head);
}

/// RPOP key [count]
// redis: t_list.c rpopCommand
pub fn rpop_command(srv: &mut Server, c: &mut Client) {
    pop_generic_command(srv, c, ListWhere::Tail);
}

/// LRANGE key start stop
// redis: t_list.c lrangeCommand
pub fn lrange_command(srv: &mut Server, c: &mut Client) {
    let Some(start) = parse_long_or_reply(c, 2) else {
        return;
    };
    let Some(end) = parse_long_or_reply(c, 3) else {
        return;
    };
    let key = c.argv[1].clone();
    match lookup_list_read(srv, c, &key) {
        Err(()) => {}
        Ok(None) => c.add_reply_array_len(0),
        Ok(Some(ql)) => add_list_range_reply(c, ql, start, end, false),
    }
}

/// LTRIM key start stop
// redis: t_list.c ltrimCommand
pub fn ltrim_command(srv: &mut Server, c: &mut Client) {
    let Some(start) = parse_long_or_reply(c, 2) else {
        return;
    };
    let Some(end) = parse_long_or_reply(c, 3) else {
        return;
    };
    let key = c.argv[1].clone();
    let dbid = c.db;
    let ql = match lookup_list_write(srv, c, &key) {
        Err(()) => return,
        Ok(None) => return c.add_reply_ok(),
        Ok(Some(ql)) => ql,
    };
    let llen = list_type_length(ql) as i64;
    let start = if start < 0 {
        (llen + start).max(0)
    } else {
        start
    };
    let end = if end < 0 { llen + end } else { end };
    // An empty range empties the list; otherwise trim both sides.
    let (ltrim, rtrim) = if start > end || start >= llen {
        (llen, 0)
    } else {
        (start, llen - end.min(llen - 1) - 1)
    };
    list_type_delete_range(ql, 0, ltrim);
    list_type_delete_range(ql, -rtrim, rtrim);
    list_elements_removed(srv, dbid, &key, "ltrim", (ltrim + rtrim) as usize);
    c.add_reply_ok();
}

// ---- LPOS / LREM ----

/// The options of LPOS: RANK, COUNT (-1 = not given), MAXLEN (0 = all).
struct LposOptions {
    rank: i64,
    count: i64,
    maxlen: i64,
}

/// lposCommand's option loop.
fn parse_lpos_options(c: &mut Client) -> Option<LposOptions> {
    let mut o = LposOptions {
        rank: 1,
        count: -1,
        maxlen: 0,
    };
    let mut j = 3;
    while j < c.argc() {
        let moreargs = j + 1 < c.argc();
        let opt = c.arg(j);
        if opt.eq_ignore_ascii_case(b"rank") && moreargs {
            j += 1;
            o.rank = parse_long_or_reply(c, j)?;
            if o.rank == 0 {
                c.add_reply_error(
                    "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list",
                );
                return None;
            }
        } else if opt.eq_ignore_ascii_case(b"count") && moreargs {
            j += 1;
            o.count = parse_range_long_or_reply(c, j, 0, "ERR COUNT can't be negative")?;
        } else if opt.eq_ignore_ascii_case(b"maxlen") && moreargs {
            j += 1;
            o.maxlen = parse_range_long_or_reply(c, j, 0, "ERR MAXLEN can't be negative")?;
        } else {
            c.add_reply_syntax_error();
            return None;
        }
        j += 1;
    }
    Some(o)
}

/// LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN len]
// redis: t_list.c lposCommand
pub fn lpos_command(srv: &mut Server, c: &mut Client) {
    let Some(opts) = parse_lpos_options(c) else {
        return;
    };
    // A negative rank searches from the tail. RANK LLONG_MIN: in Redis
    // `-rank` stays negative, so every match qualifies and COUNT's test
    // (matches - rank + 1 >= count) wraps and never stops the search.
    let forward = opts.rank > 0;
    let wrapped = opts.rank == i64::MIN;
    let rank = if wrapped { 1 } else { opts.rank.unsigned_abs() };
    let key = c.argv[1].clone();
    let ql = match lookup_list_read(srv, c, &key) {
        Err(()) => return,
        Ok(None) if opts.count != -1 => return c.add_reply_array_len(0),
        Ok(None) => return c.add_reply_null(),
        Ok(Some(ql)) => ql,
    };
    let llen = list_type_length(ql) as i64;
    let ele = c.argv[2].clone();
    let (mut matches, mut found) = (0u64, Vec::new());
    let start = if forward { 0 } else { -1 };
    for (index, e) in list_type_iter(ql, start, forward).enumerate() {
        if opts.maxlen != 0 && index as i64 >= opts.maxlen {
            break;
        }
        if e.eq_bytes(&ele) {
            matches += 1;
            if matches >= rank {
                found.push(if forward {
                    index as i64
                } else {
                    llen - index as i64 - 1
                });
                // Without COUNT the first hit is the answer; COUNT 0 = all.
                let count_reached = opts.count > 0 && !wrapped && found.len() as i64 >= opts.count;
                if opts.count == -1 || count_reached {
                    break;
                }
            }
        }
    }
    ql.recompress();
    if opts.count != -1 {
        c.add_reply_array_len(found.len());
        for i in found {
            c.add_reply_integer(i);
        }
    } else {
        match found.first() {
            Some(&i) => c.add_reply_integer(i),
            None => c.add_reply_null(),
        }
    }
}

/// LREM key count element
// redis: t_list.c lremCommand
pub fn lrem_command(srv: &mut Server, c: &mut Client) {
    let Some(toremove) = parse_long_or_reply(c, 2) else {
        return;
    };
    let key = c.argv[1].clone();
    let dbid = c.db;
    let ql = match lookup_list_write(srv, c, &key) {
        Err(()) => return,
        Ok(None) => return c.add_reply_integer(0),
        Ok(Some(ql)) => ql,
    };
    let removed = list_type_rem(ql, c.arg(3), toremove);
    if removed > 0 {
        list_elements_removed(srv, dbid, &key, "lrem", removed);
    }
    c.add_reply_integer(removed as i64);
}

// ---- LMOVE / RPOPLPUSH / LMPOP ----

/// lmoveGenericCommand: pop from `src` at `wherefrom`, push to `dst` at
/// `whereto`, reply with the element. The destination's type is checked
/// before anything is popped.
fn lmove_generic_command(
    srv: &mut Server,
    c: &mut Client,
    wherefrom: ListWhere,
    whereto: ListWhere,
) {
    let (src, dst) = (c.argv[1].clone(), c.argv[2].clone());
    let dbid = c.db;
    match lookup_list_write(srv, c, &src) {
        Err(()) => return,
        Ok(None) => return c.add_reply_null(),
        Ok(Some(_)) => {}
    }
    let dst_exists = match lookup_list_write(srv, c, &dst) {
        Err(()) => return,
        Ok(d) => d.is_some(),
    };
    let Some(value) = list_mut(srv, dbid, &src).and_then(|ql| list_type_pop(ql, wherefrom)) else {
        return c.add_reply_null();
    };
    // lmoveHandlePush: create the destination if needed, push, reply.
    if !dst_exists && list_mut(srv, dbid, &dst).is_none() {
        create_list(srv, dbid, &dst);
    }
    if let Some(ql) = list_mut(srv, dbid, &dst) {
        list_type_push(ql, &value, whereto);
    }
    db::signal_modified_key(srv, dbid, &dst);
    notify_keyspace_event(srv, NOTIFY_LIST, push_event(whereto), &dst, dbid);
    c.add_reply_bulk(&value);
    list_elements_removed(srv, dbid, &src, pop_event(wherefrom), 1);
}

/// LMOVE source destination LEFT|RIGHT LEFT|RIGHT
// redis: t_list.c lmoveCommand
pub fn lmove_command(srv: &mut Server, c: &mut Client) {
    let Some(wherefrom) = parse_where_or_reply(c, 3) else {
        return;
    };
    let Some(whereto) = parse_where_or_reply(c, 4) else {
        return;
    };
    lmove_generic_command(srv, c, wherefrom, whereto);
}

/// RPOPLPUSH source destination
// redis: t_list.c rpoplpushCommand
pub fn rpoplpush_command(srv: &mut Server, c: &mut Client) {
    lmove_generic_command(srv, c, ListWhere::Tail, ListWhere::Head);
}

/// LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count]
// redis: t_list.c lmpopCommand
pub fn lmpop_command(srv: &mut Server, c: &mut Client) {
    lmpop_generic_command(srv, c, 1, None);
}

/// BLMPOP timeout numkeys key [key ...] LEFT|RIGHT [COUNT count]
// redis: t_list.c blmpopCommand
pub fn blmpop_command(srv: &mut Server, c: &mut Client) {
    let Some(timeout) = crate::blocked::get_timeout_or_reply(srv, c, 1) else {
        return;
    };
    lmpop_generic_command(srv, c, 2, Some(timeout));
}

/// lmpopGenericCommand + mpopGenericCommand: `numkeys` is at
/// `numkeys_idx`; with a timeout (BLMPOP), all-empty keys park the client.
fn lmpop_generic_command(
    srv: &mut Server,
    c: &mut Client,
    numkeys_idx: usize,
    timeout: Option<i64>,
) {
    let Some(numkeys) =
        parse_range_long_or_reply(c, numkeys_idx, 1, "ERR numkeys should be greater than 0")
    else {
        return;
    };
    // where_idx = numkeys_idx + numkeys + 1, past the keys.
    let where_idx = match usize::try_from(numkeys)
        .ok()
        .and_then(|n| n.checked_add(numkeys_idx + 1))
    {
        Some(i) if i < c.argc() => i,
        _ => return c.add_reply_syntax_error(),
    };
    let Some(wh) = parse_where_or_reply(c, where_idx) else {
        return;
    };
    let mut count = -1;
    let mut j = where_idx + 1;
    while j < c.argc() {
        if count == -1 && c.arg(j).eq_ignore_ascii_case(b"count") && j + 1 < c.argc() {
            j += 1;
            count = match parse_range_long_or_reply(c, j, 1, "ERR count should be greater than 0") {
                Some(n) => n,
                None => return,
            };
        } else {
            return c.add_reply_syntax_error();
        }
        j += 1;
    }
    let count = if count == -1 { 1 } else { count };
    let dbid = c.db;
    let first_key = numkeys_idx + 1;
    for k in first_key..where_idx {
        let key = c.argv[k].clone();
        let ql = match lookup_list_write(srv, c, &key) {
            Err(()) => return,
            Ok(None) => continue,
            Ok(Some(ql)) if ql.is_empty() => continue,
            Ok(Some(ql)) => ql,
        };
        // listPopRangeAndReplyWithKey: [key, [elements...]].
        let rangelen = count.min(list_type_length(ql) as i64);
        let (start, end, reverse) = match wh {
            ListWhere::Head => (0, rangelen - 1, false),
            ListWhere::Tail => (-rangelen, -1, true),
        };
        c.add_reply_array_len(2);
        c.add_reply_bulk(&key);
        add_list_range_reply(c, ql, start, end, reverse);
        list_type_delete_range(ql, start, rangelen);
        // Propagated as [LR]POP key <count popped>.
        let argv = vec![
            pop_command_name(wh),
            key.clone(),
            bytes::Bytes::from(rangelen.to_string()),
        ];
        crate::propagate::rewrite_client_command_vector(c, argv);
        return list_elements_removed(srv, dbid, &key, pop_event(wh), rangelen as usize);
    }
    match timeout {
        // BLMPOP with every list empty: wait for one of them.
        Some(timeout) => {
            let keys: Vec<bytes::Bytes> = c.argv[first_key..where_idx].to_vec();
            crate::blocked::block_for_keys(srv, c, crate::blocked::BlockType::List, &keys, timeout);
        }
        None => c.add_reply_null_array(),
    }
}

// ---- helpers for OBJECT / MEMORY / DEBUG ----

/// sizeof(quicklist) on 64-bit Redis 7.0 (head, tail, count, len, bit fields).
const QUICKLIST_SIZE: usize = 40;
/// sizeof(quicklistNode) in 7.0: prev, next, entry, size_t sz, bit fields
/// (4 bytes) padded to 40.
const QUICKLIST_NODE_SIZE: usize = 40;

/// objectComputeSize for a quicklist: robj + quicklist, plus the average
/// (node struct + listpack allocation) of the first `samples` nodes times
/// the number of nodes.
pub fn list_object_compute_size(ql: &Quicklist, samples: i64) -> usize {
    let mut asize = crate::object::ROBJ_SIZE + QUICKLIST_SIZE;
    let limit = if samples <= 0 {
        usize::MAX
    } else {
        samples as usize
    };
    let (mut elesize, mut n) = (0usize, 0usize);
    for node in ql.nodes().take(limit.max(1)) {
        elesize +=
            QUICKLIST_NODE_SIZE + crate::object::jemalloc_size_class(node.entry_alloc_bytes());
        n += 1;
    }
    if n > 0 {
        asize += (elesize as f64 / n as f64 * ql.node_count() as f64) as usize;
    }
    asize
}

/// xorObjectDigest for a list: the type, then every element in order.
pub fn list_digest(digest: &mut [u8; 20], ql: &Quicklist) {
    /// OBJ_LIST
    const OBJ_LIST: u32 = 1;
    crate::debug::mix_digest(digest, &OBJ_LIST.to_be_bytes());
    for e in ql.iter() {
        crate::debug::mix_digest(digest, &e.to_vec());
    }
}

/// DEBUG OBJECT's quicklist fields.
pub fn debug_object_extra(ql: &Quicklist) -> String {
    let nodes = ql.node_count();
    let avg = ql.len() as f64 / nodes as f64;
    format!(
        " ql_nodes:{} ql_avg_node:{:.2} ql_listpack_max:{} ql_compressed:{} ql_uncompressed_size:{}",
        nodes,
        avg,
        ql.fill(),
        (ql.compress() != 0) as i32,
        ql.uncompressed_size()
    )
}

/// COPY: a deep copy of the list.
pub fn list_dup(ql: &Quicklist) -> Value {
    Value::List(Box::new(storage::t_list::list_type_dup(ql)))
}

// ---- blocking pops (t_list.c blockingPopGenericCommand, blmoveGenericCommand) ----

/// BLPOP/BRPOP: pop from the first non-empty list among the keys, or park
/// the client until one gets data (blocked.rs), or the timeout passes.
fn blocking_pop_generic_command(srv: &mut Server, c: &mut Client, wh: ListWhere) {
    let last = c.argc() - 1;
    let Some(timeout) = crate::blocked::get_timeout_or_reply(srv, c, last) else {
        return;
    };
    let dbid = c.db;
    for k in 1..last {
        let key = c.argv[k].clone();
        let ql = match lookup_list_write(srv, c, &key) {
            Err(()) => return,
            Ok(None) => continue,
            Ok(Some(ql)) if ql.is_empty() => continue,
            Ok(Some(ql)) => ql,
        };
        // Non-empty list: behave like LPOP/RPOP, replying [key, element].
        let value = list_type_pop(ql, wh).unwrap_or_default();
        c.add_reply_array_len(2);
        c.add_reply_bulk(&key);
        c.add_reply_bulk(&value);
        // Propagated as an [LR]POP instead of B[LR]POP.
        crate::propagate::rewrite_client_command_vector(c, vec![pop_command_name(wh), key.clone()]);
        return list_elements_removed(srv, dbid, &key, pop_event(wh), 1);
    }
    // Every list is empty: wait for one of them.
    let keys: Vec<bytes::Bytes> = c.argv[1..last].to_vec();
    crate::blocked::block_for_keys(srv, c, crate::blocked::BlockType::List, &keys, timeout);
}

/// shared.lpop / shared.rpop: how a pop at `wh` propagates.
fn pop_command_name(wh: ListWhere) -> bytes::Bytes {
    bytes::Bytes::from_static(match wh {
        ListWhere::Head => b"LPOP",
        ListWhere::Tail => b"RPOP",
    })
}

/// getStringObjectFromListPosition: a direction as a served BLMOVE
/// propagates it (lowercase, Redis's shared.left / shared.right).
fn list_position_name(wh: ListWhere) -> bytes::Bytes {
    bytes::Bytes::from_static(match wh {
        ListWhere::Head => b"left",
        ListWhere::Tail => b"right",
    })
}

/// BLPOP key [key ...] timeout
// redis: t_list.c blpopCommand
pub fn blpop_command(srv: &mut Server, c: &mut Client) {
    blocking_pop_generic_command(srv, c, ListWhere::Head);
}

/// BRPOP key [key ...] timeout
// redis: t_list.c brpopCommand
pub fn brpop_command(srv: &mut Server, c: &mut Client) {
    blocking_pop_generic_command(srv, c, ListWhere::Tail);
}

/// blmoveGenericCommand: LMOVE when the source has data, else wait for it.
fn blmove_generic_command(
    srv: &mut Server,
    c: &mut Client,
    wherefrom: ListWhere,
    whereto: ListWhere,
    timeout_idx: usize,
) {
    let Some(timeout) = crate::blocked::get_timeout_or_reply(srv, c, timeout_idx) else {
        return;
    };
    let src = c.argv[1].clone();
    match lookup_list_write(srv, c, &src) {
        Err(()) => {}
        Ok(Some(_)) => {
            lmove_generic_command(srv, c, wherefrom, whereto);
            // Propagated as LMOVE / RPOPLPUSH (no timeout, never blocks).
            let name: &'static [u8] = if timeout_idx == 5 {
                b"LMOVE"
            } else {
                b"RPOPLPUSH"
            };
            let mut argv = vec![bytes::Bytes::from_static(name)];
            argv.extend_from_slice(&c.argv[1..3]);
            if timeout_idx == 5 {
                if srv.reprocessing_command {
                    // Served after blocking: Redis's serveClientBlockedOnList
                    // writes the directions as its shared "left"/"right"
                    // (getStringObjectFromListPosition), not as the client
                    // spelled them.
                    argv.push(list_position_name(wherefrom));
                    argv.push(list_position_name(whereto));
                } else {
                    argv.extend_from_slice(&c.argv[3..5]);
                }
            }
            crate::propagate::rewrite_client_command_vector(c, argv);
        }
        // Inside MULTI or a script the client may not block: an empty
        // source answers at once, as a time-out would (a null bulk here).
        Ok(None) if c.has_flag(crate::networking::CLIENT_DENY_BLOCKING) => c.add_reply_null(),
        Ok(None) => {
            crate::blocked::block_for_keys(srv, c, crate::blocked::BlockType::List, &[src], timeout)
        }
    }
}

/// BLMOVE source destination LEFT|RIGHT LEFT|RIGHT timeout
// redis: t_list.c blmoveCommand
pub fn blmove_command(srv: &mut Server, c: &mut Client) {
    let Some(wherefrom) = parse_where_or_reply(c, 3) else {
        return;
    };
    let Some(whereto) = parse_where_or_reply(c, 4) else {
        return;
    };
    blmove_generic_command(srv, c, wherefrom, whereto, 5);
}

/// BRPOPLPUSH source destination timeout
// redis: t_list.c brpoplpushCommand
pub fn brpoplpush_command(srv: &mut Server, c: &mut Client) {
    blmove_generic_command(srv, c, ListWhere::Tail, ListWhere::Head, 3);
}
