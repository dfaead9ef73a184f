//! The sorted set commands (Redis 7.0's t_zset.c, the command half).
//!
//! Every handler follows one recipe: parse the arguments (errors first, in
//! Redis's order), look the key up, check it is a zset (WRONGTYPE),
//! work through the type API in `storage::t_zset` (which alone knows about
//! listpack vs skiplist), reply, then delete the key if it became empty and
//! count the change in `srv.dirty`.
//!
//! Scores go out with `add_reply_double` (`%.17g`; a RESP3 double). With
//! WITHSCORES, RESP2 gets one flat array (member, score, member, ...) and
//! RESP3 an array of [member, score] pairs, as Redis 7.0 replies.

use bytes::Bytes;
use protocol::Resp;
use storage::object::{RObj, Value};
use storage::skiplist::{ZLexRangeSpec, ZRangeSpec};
use storage::t_zset::{
    zset_from_pairs, zset_from_range, zset_type_create, zsl_parse_lex_range, zsl_parse_range,
    Aggregate, ZAddFlags, ZAddOut, ZSetLimits, ZSetValue,
};
use storage::util::{string2d, string2ll};

use crate::db::{
    db_add, db_delete, lookup_key_read, lookup_key_write, set_key, signal_modified_key,
};
use crate::networking::Client;
use crate::notify::{notify_keyspace_event, NOTIFY_GENERIC, NOTIFY_ZSET};
use crate::server::Server;
use crate::shared;
const ERR_RANGE_FLOAT: &str = "ERR min or max is not a float";
const ERR_RANGE_LEX: &str = "ERR min or max not valid string range item";

/// The thresholds from the config, handed to the type API.
fn limits(srv: &Server) -> ZSetLimits {
    ZSetLimits {
        max_listpack_entries: srv.config.zset_max_listpack_entries.max(0) as usize,
        max_listpack_value: srv.config.zset_max_listpack_value.max(0) as usize,
    }
}

/// lookupKeyRead + checkType: Err(()) after replying WRONGTYPE.
fn zset_read<'a>(
    srv: &'a mut Server,
    c: &mut Client,
    key: &[u8],
) -> Result<Option<&'a mut ZSetValue>, ()> {
    zset_of(lookup_key_read(srv, c.db, key), c)
}

/// lookupKeyWrite + checkType.
fn zset_write<'a>(
    srv: &'a mut Server,
    c: &mut Client,
    key: &[u8],
) -> Result<Option<&'a mut ZSetValue>, ()> {
    zset_of(lookup_key_write(srv, c.db, key), c)
}

fn zset_of<'a>(o: Option<&'a mut RObj>, c: &mut Client) -> Result<Option<&'a mut ZSetValue>, ()> {
    crate::db::check_type(c, o, |o| match &mut o.value {
        Value::ZSet(z) => Some(z),
        _ => None,
    })
}

/// After a removal: notify `event` ("zrem", "zpopmin", ...), delete the key
/// if the set is now empty (with a "del" event), signal it.
fn delete_if_empty(srv: &mut Server, dbid: usize, key: &[u8], event: &str) {
    let empty = matches!(srv.dbs[dbid].dict.get(key), Some(RObj { value: Value::ZSet(z), .. }) if z.is_empty());
    notify_keyspace_event(srv, NOTIFY_ZSET, event, key, dbid);
    if empty {
        db_delete(srv, dbid, key);
        notify_keyspace_event(srv, NOTIFY_GENERIC, "del", key, dbid);
    }
    signal_modified_key(srv, dbid, key);
}

/// getLongFromObjectOrReply
fn parse_long(c: &mut Client, arg: &[u8]) -> Option<i64> {
    let v = string2ll(arg);
    if v.is_none() {
        c.add_reply_error(shared::NOT_INTEGER_ERR);
    }
    v
}

/// Members with (optionally) scores: flat in RESP2, pairs in RESP3.
fn reply_pairs(c: &mut Client, pairs: &[(Vec<u8>, f64)], withscores: bool) {
    let v3 = c.resp == Resp::V3;
    c.add_reply_array_len(if withscores && !v3 {
        pairs.len() * 2
    } else {
        pairs.len()
    });
    for (e, s) in pairs {
        if withscores && v3 {
            c.add_reply_array_len(2);
        }
        c.add_reply_bulk(e);
        if withscores {
            c.add_reply_double(*s);
        }
    }
}

// ---------------------------------------------------------------- ZADD

/// ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member [score member ...]
// redis: t_zset.c zaddCommand
pub fn zadd_command(srv: &mut Server, c: &mut Client) {
    zadd_generic_command(srv, c, ZAddFlags::default());
}

/// ZINCRBY key increment member
// redis: t_zset.c zincrbyCommand
pub fn zincrby_command(srv: &mut Server, c: &mut Client) {
    zadd_generic_command(
        srv,
        c,
        ZAddFlags {
            incr: true,
            ..Default::default()
        },
    );
}

// redis: t_zset.c zaddGenericCommand
fn zadd_generic_command(srv: &mut Server, c: &mut Client, flags: ZAddFlags) {
    // Steps 1-2: options, their conflicts, then every score.
    let (flags, ch, scoreidx, scores) = match parse_zadd_args(c, flags) {
        Ok(parsed) => parsed,
        Err(e) => return c.add_reply_error(e),
    };
    // Step 3: lookup, create if needed (unless XX), add one by one.
    let (key, dbid, lim) = (c.argv[1].clone(), c.db, limits(srv));
    let Ok(found) = zset_write(srv, c, &key) else {
        return;
    };
    let exists = found.is_some();
    if !exists {
        if flags.xx {
            return zadd_reply(c, flags, ch, 0, 0, None);
        }
        let zv = zset_type_create(&lim, c.arg(scoreidx + 1).len());
        let obj = crate::db::new_object(srv, Value::ZSet(zv));
        db_add(srv, dbid, &key, obj);
    }
    let Ok(Some(z)) = zset_write(srv, c, &key) else {
        return;
    };
    let (mut added, mut updated, mut last) = (0, 0, None);
    let mut nan = false;
    for (j, score) in scores.iter().enumerate() {
        let ele = &c.argv[scoreidx + 1 + j * 2];
        match z.add(&lim, *score, ele, flags) {
            (ZAddOut::Nan, _) => {
                nan = true;
                break;
            }
            (ZAddOut::Added, s) => (added, last) = (added + 1, Some(s)),
            (ZAddOut::Updated, s) => (updated, last) = (updated + 1, Some(s)),
            (ZAddOut::Same, s) => last = Some(s),
            // NOP: not "processed", so INCR replies nil.
            (ZAddOut::Nop, _) => {}
        }
    }
    if nan {
        c.add_reply_error("ERR resulting score is not a number (NaN)");
    } else {
        zadd_reply(c, flags, ch, added, updated, last);
    }
    if added + updated > 0 {
        signal_modified_key(srv, dbid, &key);
        let event = if flags.incr { "zincr" } else { "zadd" };
        notify_keyspace_event(srv, NOTIFY_ZSET, event, &key, dbid);
    }
    srv.dirty += added + updated;
}

/// Steps 1-2 of zaddGenericCommand: the options before the first score
/// (in any order), their conflicts, then every score parsed before anything
/// is touched. Returns the flags, CH, the index of the first score and the
/// scores.
fn parse_zadd_args(
    c: &Client,
    mut flags: ZAddFlags,
) -> Result<(ZAddFlags, bool, usize, Vec<f64>), &'static str> {
    let mut ch = false;
    let mut scoreidx = 2;
    while scoreidx < c.argc() {
        match c.arg(scoreidx).to_ascii_lowercase().as_slice() {
            b"nx" => flags.nx = true,
            b"xx" => flags.xx = true,
            b"ch" => ch = true,
            b"incr" => flags.incr = true,
            b"gt" => flags.gt = true,
            b"lt" => flags.lt = true,
            _ => break,
        }
        scoreidx += 1;
    }
    let elements = c.argc() - scoreidx;
    if !elements.is_multiple_of(2) || elements == 0 {
        return Err(shared::SYNTAX_ERR);
    }
    let elements = elements / 2;
    if flags.nx && flags.xx {
        return Err("ERR XX and NX options at the same time are not compatible");
    }
    // Redis spells it out as (gt && nx) || (lt && nx) || (gt && lt).
    if (flags.nx && (flags.gt || flags.lt)) || (flags.gt && flags.lt) {
        return Err("ERR GT, LT, and/or NX options at the same time are not compatible");
    }
    if flags.incr && elements > 1 {
        return Err("ERR INCR option supports a single increment-element pair");
    }
    let scores = (0..elements)
        .map(|j| string2d(c.arg(scoreidx + j * 2)).ok_or(shared::NOT_FLOAT_ERR))
        .collect::<Result<Vec<f64>, _>>()?;
    Ok((flags, ch, scoreidx, scores))
}

/// The last part of zaddGenericCommand: INCR replies the new score (nil
/// when nothing happened), otherwise the count (CH: added + changed).
fn zadd_reply(
    c: &mut Client,
    flags: ZAddFlags,
    ch: bool,
    added: u64,
    updated: u64,
    last: Option<f64>,
) {
    if flags.incr {
        match last {
            Some(s) => c.add_reply_double(s),
            None => c.add_reply_null(),
        }
    } else {
        c.add_reply_integer((if ch { added + updated } else { added }) as i64);
    }
}

// ---------------------------------------------------------------- ZREM

/// ZREM key member [member ...]
// redis: t_zset.c zremCommand
pub fn zrem_command(srv: &mut Server, c: &mut Client) {
    let (key, dbid) = (c.argv[1].clone(), c.db);
    let Ok(found) = zset_write(srv, c, &key) else {
        return;
    };
    let Some(z) = found else {
        return c.add_reply_integer(0);
    };
    let mut deleted = 0;
    for ele in &c.argv[2..] {
        if z.remove(ele) {
            deleted += 1;
        }
        if z.is_empty() {
            break;
        }
    }
    if deleted > 0 {
        delete_if_empty(srv, dbid, &key, "zrem");
    }
    srv.dirty += deleted;
    c.add_reply_integer(deleted as i64);
}

/// Which flavour of ZREMRANGEBY* / ZRANGE.
#[derive(Clone, Copy, PartialEq, Eq)]
enum RangeType {
    Rank,
    Score,
    Lex,
}

/// A parsed range of one of the three kinds.
enum Range {
    Rank(i64, i64),
    Score(ZRangeSpec),
    Lex(ZLexRangeSpec),
}

/// Parse `min max` for a range type, replying the error of its kind.
fn parse_range(c: &mut Client, t: RangeType, min: &[u8], max: &[u8]) -> Option<Range> {
    match t {
        RangeType::Rank => {
            let start = parse_long(c, min)?;
            let end = parse_long(c, max)?;
            Some(Range::Rank(start, end))
        }
        RangeType::Score => match zsl_parse_range(min, max) {
            Some(r) => Some(Range::Score(r)),
            None => {
                c.add_reply_error(ERR_RANGE_FLOAT);
                None
            }
        },
        RangeType::Lex => match zsl_parse_lex_range(min, max) {
            Some(r) => Some(Range::Lex(r)),
            None => {
                c.add_reply_error(ERR_RANGE_LEX);
                None
            }
        },
    }
}

/// Clamp Redis-style rank indexes (negative = from the end) to 0..len.
fn sanitize_ranks(start: i64, end: i64, len: usize) -> Option<(usize, usize)> {
    let llen = len as i64;
    let mut start = if start < 0 { llen + start } else { start };
    let mut end = if end < 0 { llen + end } else { end };
    if start < 0 {
        start = 0;
    }
    if start > end || start >= llen {
        return None;
    }
    if end >= llen {
        end = llen - 1;
    }
    Some((start as usize, end as usize))
}

/// ZREMRANGEBYRANK key start stop
// redis: t_zset.c zremrangebyrankCommand
pub fn zremrangebyrank_command(srv: &mut Server, c: &mut Client) {
    zremrange_generic_command(srv, c, RangeType::Rank);
}

/// ZREMRANGEBYSCORE key min max
// redis: t_zset.c zremrangebyscoreCommand
pub fn zremrangebyscore_command(srv: &mut Server, c: &mut Client) {
    zremrange_generic_command(srv, c, RangeType::Score);
}

/// ZREMRANGEBYLEX key min max
// redis: t_zset.c zremrangebylexCommand
pub fn zremrangebylex_command(srv: &mut Server, c: &mut Client) {
    zremrange_generic_command(srv, c, RangeType::Lex);
}

// redis: t_zset.c zremrangeGenericCommand
fn zremrange_generic_command(srv: &mut Server, c: &mut Client, t: RangeType) {
    let (key, dbid) = (c.argv[1].clone(), c.db);
    let (min, max) = (c.argv[2].clone(), c.argv[3].clone());
    let Some(range) = parse_range(c, t, &min, &max) else {
        return;
    };
    let Ok(found) = zset_write(srv, c, &key) else {
        return;
    };
    let Some(z) = found else {
        return c.add_reply_integer(0);
    };
    let deleted = match &range {
        Range::Rank(s, e) => match sanitize_ranks(*s, *e, z.len()) {
            Some((s, e)) => z.remove_range_by_rank(s, e),
            None => 0,
        },
        Range::Score(r) => z.remove_range_by_score(r),
        Range::Lex(r) => z.remove_range_by_lex(r),
    };
    if deleted > 0 {
        let event = match t {
            RangeType::Rank => "zremrangebyrank",
            RangeType::Score => "zremrangebyscore",
            RangeType::Lex => "zremrangebylex",
        };
        delete_if_empty(srv, dbid, &key, event);
    }
    srv.dirty += deleted as u64;
    c.add_reply_integer(deleted as i64);
}

// ---------------------------------------------------------------- ZRANGE family

/// ZRANGE key start stop [BYSCORE|BYLEX] [REV] [LIMIT offset count] [WITHSCORES]
// redis: t_zset.c zrangeCommand
pub fn zrange_command(srv: &mut Server, c: &mut Client) {
    zrange_generic_command(srv, c, 1, false, None, None);
}

/// ZRANGESTORE dst src min max [BYSCORE|BYLEX] [REV] [LIMIT offset count]
// redis: t_zset.c zrangestoreCommand
pub fn zrangestore_command(srv: &mut Server, c: &mut Client) {
    zrange_generic_command(srv, c, 2, true, None, None);
}

/// ZREVRANGE key start stop [WITHSCORES]
// redis: t_zset.c zrevrangeCommand
pub fn zrevrange_command(srv: &mut Server, c: &mut Client) {
    zrange_generic_command(srv, c, 1, false, Some(RangeType::Rank), Some(true));
}

/// ZRANGEBYSCORE key min max [WITHSCORES] [LIMIT offset count]
// redis: t_zset.c zrangebyscoreCommand
pub fn zrangebyscore_command(srv: &mut Server, c: &mut Client) {
    zrange_generic_command(srv, c, 1, false, Some(RangeType::Score), Some(false));
}

/// ZREVRANGEBYSCORE key max min [WITHSCORES] [LIMIT offset count]
// redis: t_zset.c zrevrangebyscoreCommand
pub fn zrevrangebyscore_command(srv: &mut Server, c: &mut Client) {
    zrange_generic_command(srv, c, 1, false, Some(RangeType::Score), Some(true));
}

/// ZRANGEBYLEX key min max [LIMIT offset count]
// redis: t_zset.c zrangebylexCommand
pub fn zrangebylex_command(srv: &mut Server, c: &mut Client) {
    zrange_generic_command(srv, c, 1, false, Some(RangeType::Lex), Some(false));
}

/// ZREVRANGEBYLEX key max min [LIMIT offset count]
// redis: t_zset.c zrevrangebylexCommand
pub fn zrevrangebylex_command(srv: &mut Server, c: &mut Client) {
    zrange_generic_command(srv, c, 1, false, Some(RangeType::Lex), Some(true));
}

/// The options after `key min max` (Step 1 of zrangeGenericCommand).
struct ZRangeOpts {
    withscores: bool,
    offset: i64,
    limit: i64,
    rtype: RangeType,
    reverse: bool,
}

fn parse_zrange_opts(
    c: &mut Client,
    first: usize,
    store: bool,
    rtype: Option<RangeType>,
    rev: Option<bool>,
) -> Option<ZRangeOpts> {
    let (mut rtype, mut rev) = (rtype, rev);
    let (mut withscores, mut offset, mut limit) = (false, 0, -1);
    let mut j = first;
    while j < c.argc() {
        let left = c.argc() - j - 1;
        let opt = c.arg(j).to_ascii_lowercase();
        if !store && opt == b"withscores" {
            withscores = true;
        } else if opt == b"limit" && left >= 2 {
            let (o, l) = (c.argv[j + 1].clone(), c.argv[j + 2].clone());
            offset = parse_long(c, &o)?;
            limit = parse_long(c, &l)?;
            j += 2;
        } else if rev.is_none() && opt == b"rev" {
            rev = Some(true);
        } else if rtype.is_none() && opt == b"bylex" {
            rtype = Some(RangeType::Lex);
        } else if rtype.is_none() && opt == b"byscore" {
            rtype = Some(RangeType::Score);
        } else {
            c.add_reply_syntax_error();
            return None;
        }
        j += 1;
    }
    let rtype = rtype.unwrap_or(RangeType::Rank);
    if limit != -1 && rtype == RangeType::Rank {
        c.add_reply_error(
            "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX",
        );
        return None;
    }
    if withscores && rtype == RangeType::Lex {
        c.add_reply_error("ERR syntax error, WITHSCORES not supported in combination with BYLEX");
        return None;
    }
    Some(ZRangeOpts {
        withscores,
        offset,
        limit,
        rtype,
        reverse: rev.unwrap_or(false),
    })
}

// redis: t_zset.c zrangeGenericCommand
fn zrange_generic_command(
    srv: &mut Server,
    c: &mut Client,
    argc_start: usize,
    store: bool,
    rtype: Option<RangeType>,
    rev: Option<bool>,
) {
    let key = c.argv[argc_start].clone();
    let Some(o) = parse_zrange_opts(c, argc_start + 3, store, rtype, rev) else {
        return;
    };
    // BYSCORE / BYLEX with REV take the range as `max min`.
    let (mut minidx, mut maxidx) = (argc_start + 1, argc_start + 2);
    if o.reverse && o.rtype != RangeType::Rank {
        std::mem::swap(&mut minidx, &mut maxidx);
    }
    let (min, max) = (c.argv[minidx].clone(), c.argv[maxidx].clone());
    let Some(range) = parse_range(c, o.rtype, &min, &max) else {
        return;
    };
    let Ok(found) = zset_read(srv, c, &key) else {
        return;
    };
    let pairs = match found {
        None => Vec::new(),
        Some(z) => zrange_collect(z, &range, &o),
    };
    if store {
        let dst = c.argv[1].clone();
        // Only a rank range knows its length before the walk.
        let hint = (o.rtype == RangeType::Rank).then_some(pairs.len());
        return zstore_result(srv, c, &dst, &pairs, Some(hint), "zrangestore");
    }
    reply_pairs(c, &pairs, o.withscores);
}

/// The three range walks (genericZrangebyrank/score/lexCommand).
fn zrange_collect(z: &ZSetValue, range: &Range, o: &ZRangeOpts) -> Vec<(Vec<u8>, f64)> {
    // A negative offset skips everything (Redis's `while (offset--)`),
    // a negative limit means no limit.
    if o.offset < 0 || (o.offset > 0 && o.offset as usize >= z.len()) {
        return Vec::new();
    }
    match range {
        Range::Rank(s, e) => match sanitize_ranks(*s, *e, z.len()) {
            Some((s, e)) => z.range_by_rank(s, e, o.reverse),
            None => Vec::new(),
        },
        Range::Score(r) => z.range_by_score(r, o.reverse, o.offset as usize, o.limit),
        Range::Lex(r) => z.range_by_lex(r, o.reverse, o.offset as usize, o.limit),
    }
}

/// Store a result set at `dst` (or delete `dst` if empty) and reply its
/// size: zrangeResultFinalizeStore and the STORE branch of
/// zunionInterDiffGenericCommand. `range_hint` is Some for ZRANGESTORE
/// (built member by member like Redis), None for the set operations
/// (built whole, then shrunk if it fits). A stored result notifies `event`
/// ("zrangestore", "zunionstore", ...), a deleted `dst` "del".
fn zstore_result(
    srv: &mut Server,
    c: &mut Client,
    dst: &[u8],
    pairs: &[(Vec<u8>, f64)],
    range_hint: Option<Option<usize>>,
    event: &str,
) {
    let dbid = c.db;
    if pairs.is_empty() {
        c.add_reply_integer(0);
        if db_delete(srv, dbid, dst) {
            signal_modified_key(srv, dbid, dst);
            notify_keyspace_event(srv, NOTIFY_GENERIC, "del", dst, dbid);
            srv.dirty += 1;
        }
        return;
    }
    let zv = match range_hint {
        Some(hint) => zset_from_range(&limits(srv), pairs, hint),
        None => zset_from_pairs(&limits(srv), pairs),
    };
    let len = zv.len();
    let obj = crate::db::new_object(srv, Value::ZSet(zv));
    set_key(srv, dbid, dst, obj, false);
    notify_keyspace_event(srv, NOTIFY_ZSET, event, dst, dbid);
    srv.dirty += 1;
    c.add_reply_integer(len as i64);
}

// ---------------------------------------------------------------- reads

/// ZCARD key
// redis: t_zset.c zcardCommand
pub fn zcard_command(srv: &mut Server, c: &mut Client) {
    let key = c.argv[1].clone();
    let Ok(found) = zset_read(srv, c, &key) else {
        return;
    };
    let n = found.map_or(0, |z| z.len());
    c.add_reply_integer(n as i64);
}

/// ZSCORE key member
// redis: t_zset.c zscoreCommand
pub fn zscore_command(srv: &mut Server, c: &mut Client) {
    let key = c.argv[1].clone();
    let Ok(found) = zset_read(srv, c, &key) else {
        return;
    };
    match found.and_then(|z| z.score(&c.argv[2])) {
        Some(s) => c.add_reply_double(s),
        None => c.add_reply_null(),
    }
}

/// ZMSCORE key member [member ...]
// redis: t_zset.c zmscoreCommand
pub fn zmscore_command(srv: &mut Server, c: &mut Client) {
    let key = c.argv[1].clone();
    let Ok(mut found) = zset_read(srv, c, &key) else {
        return;
    };
    c.add_reply_array_len(c.argc() - 2);
    for j in 2..c.argc() {
        let ele = c.argv[j].clone();
        match found.as_mut().and_then(|z| z.score(&ele)) {
            Some(s) => c.add_reply_double(s),
            None => c.add_reply_null(),
        }
    }
}

/// ZCOUNT key min max
// redis: t_zset.c zcountCommand
pub fn zcount_command(srv: &mut Server, c: &mut Client) {
    zcount_generic(srv, c, RangeType::Score);
}

/// ZLEXCOUNT key min max
// redis: t_zset.c zlexcountCommand
pub fn zlexcount_command(srv: &mut Server, c: &mut Client) {
    zcount_generic(srv, c, RangeType::Lex);
}

fn zcount_generic(srv: &mut Server, c: &mut Client, t: RangeType) {
    let key = c.argv[1].clone();
    let (min, max) = (c.argv[2].clone(), c.argv[3].clone());
    let Some(range) = parse_range(c, t, &min, &max) else {
        return;
    };
    let Ok(found) = zset_read(srv, c, &key) else {
        return;
    };
    let n = match (found, &range) {
        (None, _) => 0,
        (Some(z), Range::Score(r)) => z.count_in_range(r),
        (Some(z), Range::Lex(r)) => z.count_in_lex_range(r),
        (Some(_), Range::Rank(..)) => 0,
    };
    c.add_reply_integer(n as i64);
}

/// ZRANK key member
// redis: t_zset.c zrankCommand
pub fn zrank_command(srv: &mut Server, c: &mut Client) {
    zrank_generic_command(srv, c, false);
}

/// ZREVRANK key member
// redis: t_zset.c zrevrankCommand
pub fn zrevrank_command(srv: &mut Server, c: &mut Client) {
    zrank_generic_command(srv, c, true);
}

fn zrank_generic_command(srv: &mut Server, c: &mut Client, reverse: bool) {
    let key = c.argv[1].clone();
    let Ok(found) = zset_read(srv, c, &key) else {
        return;
    };
    match found.and_then(|z| z.rank(&c.argv[2], reverse)) {
        Some((r, _)) => c.add_reply_integer(r as i64),
        None => c.add_reply_null(),
    }
}

// ---------------------------------------------------------------- pops

/// ZPOPMIN key [count]
// redis: t_zset.c zpopminCommand
pub fn zpopmin_command(srv: &mut Server, c: &mut Client) {
    zpop_min_max_command(srv, c, false);
}

/// ZPOPMAX key [count]
// redis: t_zset.c zpopmaxCommand
pub fn zpopmax_command(srv: &mut Server, c: &mut Client) {
    zpop_min_max_command(srv, c, true);
}

// redis: t_zset.c zpopMinMaxCommand
fn zpop_min_max_command(srv: &mut Server, c: &mut Client, max: bool) {
    if c.argc() > 3 {
        return c.add_reply_syntax_error();
    }
    let mut count = -1;
    if c.argc() == 3 {
        // getPositiveLongFromObjectOrReply: one message for both failures.
        match string2ll(c.arg(2)) {
            Some(n) if n >= 0 => count = n,
            _ => return c.add_reply_error(shared::MUST_BE_POSITIVE_ERR),
        }
    }
    // RESP3 with an explicit COUNT: nested [member, score] pairs.
    let nested = c.resp == Resp::V3 && count != -1;
    let keys = vec![c.argv[1].clone()];
    generic_zpop_command(srv, c, &keys, max, false, count, nested, false);
}

/// ZMPOP numkeys key [key ...] MIN|MAX [COUNT count]
// redis: t_zset.c zmpopCommand
pub fn zmpop_command(srv: &mut Server, c: &mut Client) {
    zmpop_generic_command(srv, c, 1, None);
}

/// BZMPOP timeout numkeys key [key ...] MIN|MAX [COUNT count]
// redis: t_zset.c bzmpopCommand
pub fn bzmpop_command(srv: &mut Server, c: &mut Client) {
    let Some(timeout) = crate::blocked::get_timeout_or_reply(srv, c, 1) else {
        return;
    };
    zmpop_generic_command(srv, c, 2, Some(timeout));
}

/// zmpopGenericCommand: `numkeys` at `numkeys_idx`; with a timeout
/// (BZMPOP), all-empty keys park the client (blocked.rs).
fn zmpop_generic_command(
    srv: &mut Server,
    c: &mut Client,
    numkeys_idx: usize,
    timeout: Option<i64>,
) {
    // getRangeLongFromObjectOrReply with a message: used for both failures.
    let numkeys = match string2ll(c.arg(numkeys_idx)) {
        Some(n) if n >= 1 => n as u64,
        _ => return c.add_reply_error("ERR numkeys should be greater than 0"),
    };
    let where_idx = match numkeys.checked_add(numkeys_idx as u64 + 1) {
        Some(w) if w < c.argc() as u64 => w as usize,
        _ => return c.add_reply_syntax_error(),
    };
    let max = if c.arg(where_idx).eq_ignore_ascii_case(b"min") {
        false
    } else if c.arg(where_idx).eq_ignore_ascii_case(b"max") {
        true
    } else {
        return c.add_reply_syntax_error();
    };
    let mut count = -1;
    let mut j = where_idx + 1;
    while j < c.argc() {
        if count == -1 && c.arg(j).eq_ignore_ascii_case(b"count") && j + 1 < c.argc() {
            j += 1;
            match string2ll(c.arg(j)) {
                Some(n) if n >= 1 => count = n,
                _ => return c.add_reply_error("ERR count should be greater than 0"),
            }
        } else {
            return c.add_reply_syntax_error();
        }
        j += 1;
    }
    let keys: Vec<Bytes> = c.argv[numkeys_idx + 1..where_idx].to_vec();
    if let Some(timeout) = timeout {
        if !any_zset_exists(srv, c, &keys) {
            return park_for_zsets(srv, c, &keys, timeout);
        }
    }
    generic_zpop_command(srv, c, &keys, max, true, count.max(1), true, true);
}

/// Does any of `keys` hold a zset? (WRONGTYPE is left to the pop itself.)
fn any_zset_exists(srv: &mut Server, c: &Client, keys: &[Bytes]) -> bool {
    keys.iter().any(|k| {
        matches!(
            lookup_key_write(srv, c.db, k).map(|o| &o.value),
            Some(Value::ZSet(_))
        )
    })
}

/// Block for `keys` unless one of them holds another type (then the pop's
/// own WRONGTYPE reply is what Redis sends).
fn park_for_zsets(srv: &mut Server, c: &mut Client, keys: &[Bytes], timeout: i64) {
    // No key holds a sorted set (any_zset_exists said so): an existing key
    // is of another type.
    for k in keys {
        let o = lookup_key_write(srv, c.db, k);
        if zset_of(o, c).is_err() {
            return;
        }
    }
    crate::blocked::block_for_keys(srv, c, crate::blocked::BlockType::ZSet, keys, timeout);
}

/// BZPOPMIN/BZPOPMAX: `[key, member, score]` from the first non-empty zset
/// of the keys, or park until one exists (blockingGenericZpopCommand).
fn blocking_zpop_command(srv: &mut Server, c: &mut Client, max: bool) {
    let last = c.argc() - 1;
    let Some(timeout) = crate::blocked::get_timeout_or_reply(srv, c, last) else {
        return;
    };
    let dbid = c.db;
    for k in 1..last {
        let key = c.argv[k].clone();
        let z = match zset_write(srv, c, &key) {
            Err(()) => return,
            Ok(None) => continue,
            Ok(Some(z)) => z,
        };
        let popped = z.pop(1, max);
        c.add_reply_array_len(1 + popped.len() * 2);
        c.add_reply_bulk(&key);
        for (e, score) in &popped {
            c.add_reply_bulk(e);
            c.add_reply_double(*score);
        }
        delete_if_empty(srv, dbid, &key, zpop_event(max));
        srv.dirty += popped.len() as u64;
        // Propagated as ZPOP[MIN|MAX] instead of BZPOP[MIN|MAX].
        crate::propagate::rewrite_client_command_vector(c, vec![zpop_command_name(max), key]);
        return;
    }
    let keys: Vec<Bytes> = c.argv[1..last].to_vec();
    crate::blocked::block_for_keys(srv, c, crate::blocked::BlockType::ZSet, &keys, timeout);
}

/// BZPOPMIN key [key ...] timeout
// redis: t_zset.c bzpopminCommand
pub fn bzpopmin_command(srv: &mut Server, c: &mut Client) {
    blocking_zpop_command(srv, c, false);
}

/// BZPOPMAX key [key ...] timeout
// redis: t_zset.c bzpopmaxCommand
pub fn bzpopmax_command(srv: &mut Server, c: &mut Client) {
    blocking_zpop_command(srv, c, true);
}

/// genericZpopCommand: pop from the first non-empty key of `keys`.
#[allow(clippy::too_many_arguments)]
fn generic_zpop_command(
    srv: &mut Server,
    c: &mut Client,
    keys: &[Bytes],
    max: bool,
    emitkey: bool,
    count: i64,
    nested: bool,
    nil_when_empty: bool,
) {
    let dbid = c.db;
    let mut chosen = None;
    for key in keys {
        match zset_write(srv, c, key) {
            Err(()) => return,
            Ok(Some(_)) => {
                chosen = Some(key.clone());
                break;
            }
            Ok(None) => {}
        }
    }
    let Some(key) = chosen else {
        return if nil_when_empty {
            c.add_reply_null_array()
        } else {
            c.add_reply_array_len(0)
        };
    };
    if count == 0 {
        return c.add_reply_array_len(0);
    }
    let count = if count == -1 { 1 } else { count as usize };
    let Ok(Some(z)) = zset_write(srv, c, &key) else {
        return;
    };
    let popped = z.pop(count, max);
    if emitkey {
        c.add_reply_array_len(2);
        c.add_reply_bulk(&key);
    }
    c.add_reply_array_len(if nested {
        popped.len()
    } else {
        popped.len() * 2
    });
    for (e, s) in &popped {
        if nested {
            c.add_reply_array_len(2);
        }
        c.add_reply_bulk(e);
        c.add_reply_double(*s);
    }
    delete_if_empty(srv, dbid, &key, zpop_event(max));
    srv.dirty += popped.len() as u64;
    if emitkey {
        // ZMPOP / BZMPOP: propagated as ZPOP[MIN|MAX] key <count popped>.
        let argv = vec![
            zpop_command_name(max),
            key,
            Bytes::from(popped.len().to_string()),
        ];
        crate::propagate::rewrite_client_command_vector(c, argv);
    }
}

/// shared.zpopmin / shared.zpopmax.
fn zpop_command_name(max: bool) -> Bytes {
    Bytes::from_static(if max { b"ZPOPMAX" } else { b"ZPOPMIN" })
}

/// The keyspace event of a pop from the `max` end.
fn zpop_event(max: bool) -> &'static str {
    if max {
        "zpopmax"
    } else {
        "zpopmin"
    }
}

// ---------------------------------------------------------------- ZRANDMEMBER

/// ZRANDMEMBER key [count [WITHSCORES]]
// redis: t_zset.c zrandmemberCommand
pub fn zrandmember_command(srv: &mut Server, c: &mut Client) {
    let key = c.argv[1].clone();
    if c.argc() >= 3 {
        let Some(l) = parse_long(c, &c.argv[2].clone()) else {
            return;
        };
        // getRangeLongFromObjectOrReply(-LONG_MAX, LONG_MAX), before the
        // syntax check as in Redis.
        if l == i64::MIN {
            return c.add_reply_error(
                "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807",
            );
        }
        let withscores = c.argc() == 4 && c.arg(3).eq_ignore_ascii_case(b"withscores");
        if c.argc() > 4 || (c.argc() == 4 && !withscores) {
            return c.add_reply_syntax_error();
        }
        // The count is doubled for WITHSCORES replies: keep it in range.
        if withscores && !(-(i64::MAX / 2)..=i64::MAX / 2).contains(&l) {
            return c.add_reply_error("ERR value is out of range");
        }
        return zrandmember_with_count_command(srv, c, &key, l, withscores);
    }
    let Ok(found) = zset_read(srv, c, &key) else {
        return;
    };
    match found.and_then(|z| z.random_pair()) {
        Some((e, _)) => c.add_reply_bulk(&e),
        None => c.add_reply_null(),
    }
}

// redis: t_zset.c zrandmemberWithCountCommand
fn zrandmember_with_count_command(
    srv: &mut Server,
    c: &mut Client,
    key: &[u8],
    l: i64,
    withscores: bool,
) {
    let Ok(found) = zset_read(srv, c, key) else {
        return;
    };
    let Some(z) = found else {
        return c.add_reply_array_len(0);
    };
    let (count, uniq) = if l >= 0 {
        (l as u64, true)
    } else {
        (l.unsigned_abs(), false)
    };
    if count == 0 {
        return c.add_reply_array_len(0);
    }
    let v3 = c.resp == Resp::V3;
    // CASE 1: negative count (repeats allowed) or a single member.
    if !uniq || count == 1 {
        c.add_reply_array_len(if withscores && !v3 {
            count as usize * 2
        } else {
            count as usize
        });
        for _ in 0..count {
            let Some((e, s)) = z.random_pair() else { break };
            if withscores && v3 {
                c.add_reply_array_len(2);
            }
            c.add_reply_bulk(&e);
            if withscores {
                c.add_reply_double(s);
            }
        }
        return;
    }
    // CASE 2: count >= size: the whole set, highest score first (as 7.0
    // replies it).
    if count >= z.len() as u64 {
        let all = z.to_vec(true);
        return reply_pairs(c, &all, withscores);
    }
    // CASE 3/4: distinct random members: shuffle-pick `count` of them.
    let mut all = z.to_vec(false);
    let mut picked = Vec::with_capacity(count as usize);
    for _ in 0..count {
        let i = (rand::random::<u64>() % all.len() as u64) as usize;
        picked.push(all.swap_remove(i));
    }
    reply_pairs(c, &picked, withscores);
}

// ---------------------------------------------------------------- set operations

#[derive(Clone, Copy, PartialEq, Eq)]
enum SetOp {
    Union,
    Inter,
    Diff,
}

/// ZUNION numkeys key [key ...] [WEIGHTS weight ...] [AGGREGATE SUM|MIN|MAX] [WITHSCORES]
// redis: t_zset.c zunionCommand
pub fn zunion_command(srv: &mut Server, c: &mut Client) {
    zunion_inter_diff_generic_command(srv, c, None, 1, SetOp::Union, false);
}

/// ZINTER numkeys key [key ...] [WEIGHTS weight ...] [AGGREGATE SUM|MIN|MAX] [WITHSCORES]
// redis: t_zset.c zinterCommand
pub fn zinter_command(srv: &mut Server, c: &mut Client) {
    zunion_inter_diff_generic_command(srv, c, None, 1, SetOp::Inter, false);
}

/// ZDIFF numkeys key [key ...] [WITHSCORES]
// redis: t_zset.c zdiffCommand
pub fn zdiff_command(srv: &mut Server, c: &mut Client) {
    zunion_inter_diff_generic_command(srv, c, None, 1, SetOp::Diff, false);
}

/// ZUNIONSTORE destination numkeys key [key ...] [WEIGHTS ...] [AGGREGATE ...]
// redis: t_zset.c zunionstoreCommand
pub fn zunionstore_command(srv: &mut Server, c: &mut Client) {
    let dst = c.argv[1].clone();
    zunion_inter_diff_generic_command(srv, c, Some(dst), 2, SetOp::Union, false);
}

/// ZINTERSTORE destination numkeys key [key ...] [WEIGHTS ...] [AGGREGATE ...]
// redis: t_zset.c zinterstoreCommand
pub fn zinterstore_command(srv: &mut Server, c: &mut Client) {
    let dst = c.argv[1].clone();
    zunion_inter_diff_generic_command(srv, c, Some(dst), 2, SetOp::Inter, false);
}

/// ZDIFFSTORE destination numkeys key [key ...]
// redis: t_zset.c zdiffstoreCommand
pub fn zdiffstore_command(srv: &mut Server, c: &mut Client) {
    let dst = c.argv[1].clone();
    zunion_inter_diff_generic_command(srv, c, Some(dst), 2, SetOp::Diff, false);
}

/// ZINTERCARD numkeys key [key ...] [LIMIT limit]
// redis: t_zset.c zinterCardCommand
pub fn zintercard_command(srv: &mut Server, c: &mut Client) {
    zunion_inter_diff_generic_command(srv, c, None, 1, SetOp::Inter, true);
}

/// The options of the set operations after the keys.
struct SetOpOpts {
    weights: Vec<f64>,
    aggregate: Aggregate,
    withscores: bool,
    limit: u64,
}

// redis: t_zset.c zunionInterDiffGenericCommand
fn zunion_inter_diff_generic_command(
    srv: &mut Server,
    c: &mut Client,
    dst: Option<Bytes>,
    numkeys_idx: usize,
    op: SetOp,
    card_only: bool,
) {
    let Some(setnum) = parse_long(c, &c.argv[numkeys_idx].clone()) else {
        return;
    };
    if setnum < 1 {
        let name = String::from_utf8_lossy(c.arg(0)).to_lowercase();
        return c.add_reply_error(&format!(
            "ERR at least 1 input key is needed for '{name}' command"
        ));
    }
    if setnum as u64 > (c.argc() - (numkeys_idx + 1)) as u64 {
        return c.add_reply_syntax_error();
    }
    let setnum = setnum as usize;
    // Read every input (a missing key is an empty set) before the options.
    // Read lookups even for the STORE forms, as in Redis 7.0: a missing
    // source counts as a miss and emits "keymiss".
    let mut srcs: Vec<Vec<(Vec<u8>, f64)>> = Vec::with_capacity(setnum);
    for j in 0..setnum {
        let key = c.argv[numkeys_idx + 1 + j].clone();
        // Sorted sets and plain sets are both accepted here.
        let o = lookup_key_read(srv, c.db, &key);
        let Ok(o) = crate::db::check_type(c, o, |o| {
            matches!(o.value, Value::ZSet(_) | Value::Set(_)).then_some(&mut o.value)
        }) else {
            return;
        };
        match o {
            None => srcs.push(Vec::new()),
            Some(Value::ZSet(z)) => srcs.push(z.to_vec(false)),
            // A plain set takes part with every score 1.0.
            Some(Value::Set(set)) => srcs.push(
                storage::t_set::set_type_iter(set)
                    .map(|e| (e.to_vec(), 1.0))
                    .collect(),
            ),
            Some(_) => unreachable!("check_type let only sets and sorted sets through"),
        }
    }
    let Some(opts) = parse_setop_opts(
        c,
        numkeys_idx + 1 + setnum,
        setnum,
        dst.is_some(),
        op,
        card_only,
    ) else {
        return;
    };
    let result = zset_setop(&srcs, &opts, op, card_only);
    if let Some(dst) = dst {
        let event = match op {
            SetOp::Union => "zunionstore",
            SetOp::Inter => "zinterstore",
            SetOp::Diff => "zdiffstore",
        };
        return zstore_result(srv, c, &dst, &result, None, event);
    }
    if card_only {
        return c.add_reply_integer(result.len() as i64);
    }
    reply_pairs(c, &result, opts.withscores);
}

fn parse_setop_opts(
    c: &mut Client,
    mut j: usize,
    setnum: usize,
    store: bool,
    op: SetOp,
    card_only: bool,
) -> Option<SetOpOpts> {
    let mut o = SetOpOpts {
        weights: vec![1.0; setnum],
        aggregate: Aggregate::Sum,
        withscores: false,
        limit: 0,
    };
    while j < c.argc() {
        let remaining = c.argc() - j;
        let opt = c.arg(j).to_ascii_lowercase();
        if op != SetOp::Diff && !card_only && remaining > setnum && opt == b"weights" {
            for i in 0..setnum {
                match string2d(c.arg(j + 1 + i)) {
                    Some(w) => o.weights[i] = w,
                    None => {
                        c.add_reply_error("ERR weight value is not a float");
                        return None;
                    }
                }
            }
            j += 1 + setnum;
        } else if op != SetOp::Diff && !card_only && remaining >= 2 && opt == b"aggregate" {
            o.aggregate = match c.arg(j + 1).to_ascii_lowercase().as_slice() {
                b"sum" => Aggregate::Sum,
                b"min" => Aggregate::Min,
                b"max" => Aggregate::Max,
                _ => {
                    c.add_reply_syntax_error();
                    return None;
                }
            };
            j += 2;
        } else if !store && !card_only && opt == b"withscores" {
            o.withscores = true;
            j += 1;
        } else if card_only && remaining >= 2 && opt == b"limit" {
            // getPositiveLongFromObjectOrReply: one message for a non-number
            // and for a negative number alike.
            match string2ll(c.arg(j + 1)).and_then(|n| u64::try_from(n).ok()) {
                Some(n) => o.limit = n,
                None => {
                    c.add_reply_error("ERR LIMIT can't be negative");
                    return None;
                }
            }
            j += 2;
        } else {
            c.add_reply_syntax_error();
            return None;
        }
    }
    Some(o)
}

/// zunionInterAggregate: SUM turns +inf + -inf into 0, as Redis does.
fn aggregate(target: &mut f64, val: f64, a: Aggregate) {
    match a {
        Aggregate::Sum => {
            *target += val;
            if target.is_nan() {
                *target = 0.0;
            }
        }
        // Redis's own comparisons (f64::min/max may pick either zero).
        Aggregate::Min => {
            if val < *target {
                *target = val;
            }
        }
        Aggregate::Max => {
            if val > *target {
                *target = val;
            }
        }
    }
}

/// The algebra itself, on (member, score) vectors; result sorted by
/// (score, member) like the skiplist Redis builds.
fn zset_setop(
    srcs: &[Vec<(Vec<u8>, f64)>],
    o: &SetOpOpts,
    op: SetOp,
    card_only: bool,
) -> Vec<(Vec<u8>, f64)> {
    use std::collections::HashMap;
    let weighted = |i: usize, s: f64| {
        let v = o.weights[i] * s;
        if v.is_nan() {
            0.0
        } else {
            v
        }
    };
    // Redis sorts the inputs smallest first (a stable sort, glibc's
    // mergesort qsort) for UNION and INTER; the order matters for float
    // sums and for which of -0 / 0 survives.
    let mut order: Vec<usize> = (0..srcs.len()).collect();
    order.sort_by_key(|&i| srcs[i].len());
    let mut out: Vec<(Vec<u8>, f64)> = Vec::new();
    match op {
        SetOp::Union => {
            let mut acc: HashMap<&[u8], f64> = HashMap::new();
            for &i in &order {
                for (e, s) in &srcs[i] {
                    let v = weighted(i, *s);
                    acc.entry(e)
                        .and_modify(|t| aggregate(t, v, o.aggregate))
                        .or_insert(v);
                }
            }
            out.extend(acc.into_iter().map(|(e, s)| (e.to_vec(), s)));
        }
        SetOp::Inter => {
            // Walk the smallest input, probe the others (sorted by size).
            let maps: Vec<HashMap<&[u8], f64>> = srcs
                .iter()
                .map(|s| s.iter().map(|(e, v)| (e.as_slice(), *v)).collect())
                .collect();
            for (e, s) in &srcs[order[0]] {
                let mut score = weighted(order[0], *s);
                let mut all = true;
                for &i in &order[1..] {
                    match maps[i].get(e.as_slice()) {
                        Some(v) => aggregate(&mut score, weighted(i, *v), o.aggregate),
                        None => {
                            all = false;
                            break;
                        }
                    }
                }
                if all {
                    out.push((e.clone(), score));
                    if card_only && o.limit > 0 && out.len() as u64 >= o.limit {
                        break;
                    }
                }
            }
        }
        SetOp::Diff => {
            let others: Vec<HashMap<&[u8], f64>> = srcs[1..]
                .iter()
                .map(|s| s.iter().map(|(e, v)| (e.as_slice(), *v)).collect())
                .collect();
            for (e, s) in &srcs[0] {
                if !others.iter().any(|m| m.contains_key(e.as_slice())) {
                    out.push((e.clone(), *s));
                }
            }
        }
    }
    out.sort_by(|a, b| {
        a.1.partial_cmp(&b.1)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then_with(|| a.0.cmp(&b.0))
    });
    out
}

// ---------------------------------------------------------------- ZSCAN

/// ZSCAN key cursor [MATCH pattern] [COUNT count]
// redis: t_zset.c zscanCommand
pub fn zscan_command(srv: &mut Server, c: &mut Client) {
    // The cursor is checked before the key is even looked up.
    let Some(cursor) = crate::db::parse_scan_cursor(c.arg(2)) else {
        return c.add_reply_error(shared::INVALID_CURSOR_ERR);
    };
    let key = c.argv[1].clone();
    match zset_read(srv, c, &key) {
        Err(()) => {}
        Ok(None) => crate::db::add_reply_empty_scan(c),
        Ok(Some(_)) => crate::db::scan_generic_command(srv, c, Some(&key), cursor),
    }
}

// ---------------------------------------------------------------- OBJECT / DEBUG helpers

/// objectComputeSize for zsets (sampled like Redis: `samples` nodes, or
/// all when 0).
pub fn zset_compute_size(z: &ZSetValue, samples: i64) -> usize {
    use crate::object::{jemalloc_size_class, sds_zmalloc_size, DICT_ENTRY_SIZE, ROBJ_SIZE};
    match z {
        ZSetValue::Listpack(lp) => ROBJ_SIZE + jemalloc_size_class(lp.bytes()),
        ZSetValue::Skiplist(zs) => {
            // robj + zset + zskiplist + dict + bucket array + header node.
            let mut asize = ROBJ_SIZE
                + 16
                + 32
                + 56
                + 8 * zs.dict.buckets()
                + jemalloc_size_class(24 + 32 * 16);
            let (mut elesize, mut n) = (0usize, 0usize);
            let mut cur = zs.zsl.first();
            while let Some(node) = cur {
                if samples > 0 && n as i64 >= samples {
                    break;
                }
                let ele = zs.zsl.ele(node);
                elesize += sds_zmalloc_size(ele.len(), ele.len()) + DICT_ENTRY_SIZE;
                elesize += jemalloc_size_class(24 + 16 * zs.zsl.node_level(node));
                n += 1;
                cur = zs.zsl.next(node);
            }
            if n > 0 {
                asize += (elesize as f64 / n as f64 * zs.dict.len() as f64) as usize;
            }
            asize
        }
    }
}

/// xorObjectDigest for zsets: type 3, then per member SHA1(member, %.17g
/// score) XORed in, so the encoding and order do not matter.
pub fn zset_digest(digest: &mut [u8; 20], z: &ZSetValue) {
    use crate::debug::{mix_digest, xor_digest};
    const OBJ_ZSET: u32 = 3;
    mix_digest(digest, &OBJ_ZSET.to_be_bytes());
    for (e, s) in z.to_vec(false) {
        let mut ele = [0u8; 20];
        mix_digest(&mut ele, &e);
        let mut text = Vec::new();
        protocol::reply::fmt_double_g17(s, &mut text);
        mix_digest(&mut ele, &text);
        xor_digest(digest, &ele);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use storage::t_zset::ZConvCheck;

    const LIMITS: ZSetLimits = ZSetLimits {
        max_listpack_entries: 128,
        max_listpack_value: 64,
    };

    #[test]
    fn sanitize_ranks_clamps_like_redis() {
        assert_eq!(sanitize_ranks(0, -1, 5), Some((0, 4)));
        assert_eq!(sanitize_ranks(-100, 100, 5), Some((0, 4)));
        assert_eq!(sanitize_ranks(3, 1, 5), None);
        assert_eq!(sanitize_ranks(5, 10, 5), None);
        assert_eq!(sanitize_ranks(i64::MIN, i64::MAX, 5), Some((0, 4)));
    }

    #[test]
    fn zset_digest_does_not_depend_on_encoding() {
        let pairs: Vec<_> = (0..10)
            .map(|i| (format!("m{i}").into_bytes(), i as f64 / 3.0))
            .collect();
        let lp = zset_from_pairs(&LIMITS, &pairs);
        let mut sk = zset_from_pairs(&LIMITS, &pairs);
        storage::t_zset::zset_type_convert(
            &mut sk,
            &LIMITS,
            ZConvCheck::Create {
                first_ele_len: 1000,
            },
        );
        assert_eq!(
            (lp.encoding_name(), sk.encoding_name()),
            ("listpack", "skiplist")
        );
        let (mut d1, mut d2) = ([0u8; 20], [0u8; 20]);
        zset_digest(&mut d1, &lp);
        zset_digest(&mut d2, &sk);
        assert_eq!(d1, d2);
    }

    #[test]
    fn setop_union_sums_and_turns_inf_minus_inf_into_zero() {
        let srcs = vec![
            vec![(b"a".to_vec(), f64::INFINITY), (b"b".to_vec(), 1.0)],
            vec![(b"a".to_vec(), f64::NEG_INFINITY), (b"c".to_vec(), 0.5)],
        ];
        let o = SetOpOpts {
            weights: vec![1.0, 1.0],
            aggregate: Aggregate::Sum,
            withscores: true,
            limit: 0,
        };
        let out = zset_setop(&srcs, &o, SetOp::Union, false);
        assert_eq!(
            out,
            vec![
                (b"a".to_vec(), 0.0),
                (b"c".to_vec(), 0.5),
                (b"b".to_vec(), 1.0)
            ]
        );
    }
}
