//! SORT and SORT_RO (Redis's sort.c): "the most complex command in Redis".
//!
//! One call runs five steps, each a function below, in sortCommandGeneric's
//! order:
//!
//! 1. `parse_sort_options`: the SQL-like options, left to right. A LIMIT
//!    that is not a number or an unknown word stops the parse with an
//!    error *before* the key is looked up (so `SORT str LIMIT x 1` says
//!    "not an integer", not WRONGTYPE).
//! 2. `sort_load_vector`: the elements of the list, set or sorted set,
//!    through the type APIs (no encoding is visible here) into a vector of
//!    `SortObject`s. A missing key is an empty list. With `BY <no star>`
//!    ("dontsort") a list or zset hands over only the LIMIT window, in its
//!    own order (reversed for DESC). A set has no order of its own: SORT
//!    then forces an ALPHA sort when the result is STOREd or the caller is
//!    a script, so replicas and AOF see the same list.
//! 3. `sort_load_weights`: each element's weight -- the element itself, or
//!    the value found through the BY pattern -- as a double (strtod) or,
//!    with ALPHA, as bytes.
//! 4. `sort_vector`: `sort_compare` over the vector. Redis uses libc's
//!    qsort (glibc's is a stable merge sort: `sort_by` gives the same
//!    order) and, for BY with a LIMIT window, its own partial quicksort
//!    `pqsort` (not stable: ties come out in its order, reproduced here).
//! 5. `sort_reply` or `sort_store`: the window, each element replaced by
//!    its GET patterns if there are any.
//!
//! Patterns (`lookup_key_by_pattern`): the first `*` is replaced by the
//! element; `key->field` reads a hash field; `#` is the element itself.

use std::cmp::Ordering;

use bytes::Bytes;
use storage::object::{RObj, Value};
use storage::quicklist::Quicklist;
use storage::t_hash::hash_type_get;
use storage::t_list::{
    create_quicklist_object, list_type_iter, list_type_length, list_type_push, ListWhere,
};
use storage::t_set::set_type_iter;
use storage::t_zset::{zset_type_convert, ZConvCheck, ZSetLimits, ZSetValue};
use storage::util::string2ll;

use crate::commands::KeyReference;
use crate::db::{
    db_add, db_delete, lookup_key_read, lookup_key_write, new_object, set_key, signal_modified_key,
};
use crate::networking::{Client, CLIENT_SCRIPT};
use crate::notify::{notify_keyspace_event, NOTIFY_GENERIC, NOTIFY_LIST};
use crate::server::Server;
use crate::shared;
const ERR_NOT_DOUBLE: &str = "ERR One or more scores can't be converted into double";

/// redisSortObject: one element and what it sorts by.
struct SortObject {
    obj: Vec<u8>,
    /// u.score: the numeric weight (0 when the BY key is missing).
    score: f64,
    /// u.cmpobj: the ALPHA weight found through BY (None: no such key).
    cmpobj: Option<Vec<u8>>,
}

impl SortObject {
    fn new(obj: Vec<u8>) -> SortObject {
        SortObject {
            obj,
            score: 0.0,
            cmpobj: None,
        }
    }
}

/// The parsed options of one SORT call.
struct SortOptions {
    desc: bool,
    alpha: bool,
    limit_start: i64,
    /// -1: no LIMIT (everything from `limit_start`).
    limit_count: i64,
    sortby: Option<Bytes>,
    /// BY with a pattern that has no `*`: keep the container's own order.
    dontsort: bool,
    storekey: Option<Bytes>,
    /// GET patterns in order (SORT_OP_GET, the only operation there is).
    getops: Vec<Bytes>,
}

/// What sortCompare reads from server.sort_desc / sort_alpha /
/// sort_bypattern / sort_store (globals in Redis, for qsort's sake).
#[derive(Clone, Copy)]
struct SortFlags {
    desc: bool,
    alpha: bool,
    bypattern: bool,
    store: bool,
}

/// SORT key [BY pattern] [LIMIT offset count] [GET pattern [GET pattern ...]] [ASC|DESC] [ALPHA] [STORE destination]
// redis: sort.c sortCommand
pub fn sort_command(srv: &mut Server, c: &mut Client) {
    sort_command_generic(srv, c, false);
}

/// SORT_RO key [BY pattern] [LIMIT offset count] [GET pattern [GET pattern ...]] [ASC|DESC] [ALPHA]
// redis: sort.c sortroCommand
pub fn sort_ro_command(srv: &mut Server, c: &mut Client) {
    sort_command_generic(srv, c, true);
}

/// sortCommandGeneric: parse, load, weigh, sort, then reply or store.
// redis: sort.c sortCommandGeneric
fn sort_command_generic(srv: &mut Server, c: &mut Client, readonly: bool) {
    let full_key_access =
        crate::acl::user_check_cmd_with_unrestricted_key_access(srv, c, &["access"]);
    let Some(mut opts) = parse_sort_options(c, readonly, full_key_access) else {
        return;
    };
    let (dbid, key) = (c.db, c.argv[1].clone());
    let script = c.flags & CLIENT_SCRIPT != 0;
    let limits = zset_limits(srv);
    // Only lists, sets and sorted sets can be sorted; a missing key sorts
    // as an empty list.
    let o = lookup_key_read(srv, dbid, &key);
    let Ok(o) = crate::db::check_type(c, o, |o| {
        matches!(o.value, Value::List(_) | Value::Set(_) | Value::ZSet(_)).then_some(o)
    }) else {
        return;
    };
    let (mut vector, start, end) = sort_load_vector(o, &mut opts, script, &limits);
    let mut conversion_error = false;
    if !opts.dontsort {
        conversion_error = sort_load_weights(srv, dbid, &mut vector, &opts);
        // Redis sorts anyway and then replies the error; the order is never
        // seen, and NaN weights would make the comparison inconsistent.
        if !conversion_error {
            sort_vector(&mut vector, &opts, start, end);
        }
    }
    // The LIMIT window (empty when end < start).
    let window: &[SortObject] = match (usize::try_from(start), usize::try_from(end)) {
        (Ok(s), Ok(e)) if s <= e => vector.get(s..=e).unwrap_or(&[]),
        _ => &[],
    };
    if conversion_error {
        c.add_reply_error(ERR_NOT_DOUBLE);
    } else if let Some(dst) = &opts.storekey {
        sort_store(srv, c, dbid, dst, window, &opts.getops);
    } else {
        sort_reply(srv, c, dbid, window, &opts.getops);
    }
}

// ---- 1. options ----

/// The option loop of sortCommandGeneric. None after replying an error.
/// BY/GET patterns read keys the ACL check never saw, so they are refused
/// for users without read access to every key (Redis also refuses them in
/// cluster mode, which redis-lite has not).
fn parse_sort_options(
    c: &mut Client,
    readonly: bool,
    full_key_access: bool,
) -> Option<SortOptions> {
    let mut o = SortOptions {
        desc: false,
        alpha: false,
        limit_start: 0,
        limit_count: -1,
        sortby: None,
        dontsort: false,
        storekey: None,
        getops: Vec::new(),
    };
    let argc = c.argv.len();
    let mut j = 2;
    while j < argc {
        let leftargs = argc - j - 1;
        let arg = &c.argv[j];
        let is = |word: &str| arg.eq_ignore_ascii_case(word.as_bytes());
        if is("asc") {
            o.desc = false;
        } else if is("desc") {
            o.desc = true;
        } else if is("alpha") {
            o.alpha = true;
        } else if is("limit") && leftargs >= 2 {
            // getLongFromObjectOrReply, offset first.
            let (Some(start), Some(count)) = (string2ll(&c.argv[j + 1]), string2ll(&c.argv[j + 2]))
            else {
                c.add_reply_error(shared::NOT_INTEGER_ERR);
                return None;
            };
            (o.limit_start, o.limit_count) = (start, count);
            j += 2;
        } else if !readonly && is("store") && leftargs >= 1 {
            o.storekey = Some(c.argv[j + 1].clone());
            j += 1;
        } else if is("by") && leftargs >= 1 {
            let pattern = c.argv[j + 1].clone();
            // A constant BY pattern: nothing to look up, nothing to sort.
            // (Never reset: a later BY with a `*` still does not sort.)
            if !c_str(&pattern).contains(&b'*') {
                o.dontsort = true;
            } else if !full_key_access {
                c.add_reply_error(
                    "ERR BY option of SORT denied due to insufficient ACL permissions.",
                );
                return None;
            }
            o.sortby = Some(pattern);
            j += 1;
        } else if is("get") && leftargs >= 1 {
            if !full_key_access {
                c.add_reply_error(
                    "ERR GET option of SORT denied due to insufficient ACL permissions.",
                );
                return None;
            }
            o.getops.push(c.argv[j + 1].clone());
            j += 1;
        } else {
            c.add_reply_syntax_error();
            return None;
        }
        j += 1;
    }
    Some(o)
}

// ---- 2. the vector ----

/// The zset thresholds for the type API (the SORT conversion ignores them).
fn zset_limits(srv: &Server) -> ZSetLimits {
    ZSetLimits {
        max_listpack_entries: srv.config.zset_max_listpack_entries.max(0) as usize,
        max_listpack_value: srv.config.zset_max_listpack_value.max(0) as usize,
    }
}

/// LIMIT sanity checking: the window [start, end] over `len` elements,
/// clamped to the object's size (end < start means an empty window).
fn sort_limit_range(limit_start: i64, limit_count: i64, len: i64) -> (i64, i64) {
    let mut start = limit_start.max(0).min(len);
    let count = limit_count.max(-1).min(len);
    let mut end = if count < 0 {
        len - 1
    } else {
        start + count - 1
    };
    if start >= len {
        start = len - 1;
        end = len - 2;
    }
    if end >= len {
        end = len - 1;
    }
    (start, end)
}

/// Load the elements to sort and the output window [start, end] into it.
/// Lists and zsets with dontsort load only the window (already in output
/// order), and the window is moved to the start of the vector.
fn sort_load_vector(
    o: Option<&mut RObj>,
    opts: &mut SortOptions,
    script: bool,
    limits: &ZSetLimits,
) -> (Vec<SortObject>, i64, i64) {
    let Some(o) = o else {
        return (Vec::new(), -1, -2); // the window of an empty list
    };
    match &mut o.value {
        Value::Set(set) => {
            // A set has no native order: when the result is replicated
            // (STORE) or comes from a script, sort it anyway, as ALPHA.
            if opts.dontsort && (opts.storekey.is_some() || script) {
                (opts.dontsort, opts.alpha, opts.sortby) = (false, true, None);
            }
            let vector: Vec<SortObject> = set_type_iter(set)
                .map(|e| SortObject::new(e.to_vec()))
                .collect();
            let (start, end) =
                sort_limit_range(opts.limit_start, opts.limit_count, vector.len() as i64);
            (vector, start, end)
        }
        Value::ZSet(zv) => {
            // Destructive: a listpack zset stays a skiplist after SORT.
            zset_type_convert(zv, limits, ZConvCheck::Sort);
            load_zset(zv, opts)
        }
        Value::List(ql) => load_list(ql, opts),
        _ => (Vec::new(), -1, -2), // not reached: the caller checked the type
    }
}

/// A list's elements: with dontsort only the window, walking backwards
/// for DESC; otherwise all of them, head to tail.
fn load_list(ql: &Quicklist, opts: &SortOptions) -> (Vec<SortObject>, i64, i64) {
    let len = list_type_length(ql) as i64;
    let (start, end) = sort_limit_range(opts.limit_start, opts.limit_count, len);
    if !opts.dontsort {
        let vector = list_type_iter(ql, 0, true)
            .map(|e| SortObject::new(e.to_vec()))
            .collect();
        return (vector, start, end);
    }
    if end < start {
        return (Vec::new(), start, end);
    }
    let (from, forward) = if opts.desc {
        (len - start - 1, false)
    } else {
        (start, true)
    };
    let vector = list_type_iter(ql, from, forward)
        .take((end - start + 1) as usize)
        .map(|e| SortObject::new(e.to_vec()))
        .collect();
    (vector, 0, end - start)
}

/// A sorted set's elements: with dontsort only the window, by rank (from
/// the top for DESC); otherwise every member in its dict's order.
fn load_zset(zv: &ZSetValue, opts: &SortOptions) -> (Vec<SortObject>, i64, i64) {
    let (start, end) = sort_limit_range(opts.limit_start, opts.limit_count, zv.len() as i64);
    if opts.dontsort {
        let vector = if end >= start {
            zv.range_by_rank(start as usize, end as usize, opts.desc)
                .into_iter()
                .map(|(ele, _)| SortObject::new(ele))
                .collect()
        } else {
            Vec::new()
        };
        return (vector, 0, end - start);
    }
    let vector = match zv.dict() {
        Some(d) => d
            .iter()
            .map(|(ele, _)| SortObject::new(ele.to_vec()))
            .collect(),
        None => zv
            .to_vec(false)
            .into_iter()
            .map(|(ele, _)| SortObject::new(ele))
            .collect(),
    };
    (vector, start, end)
}

// ---- 3. weights ----

/// Fill in each element's weight: a double, or with ALPHA + BY the bytes
/// of the BY value. Returns true if some weight is not a number.
fn sort_load_weights(
    srv: &mut Server,
    dbid: usize,
    vector: &mut [SortObject],
    opts: &SortOptions,
) -> bool {
    let mut conversion_error = false;
    for so in vector.iter_mut() {
        let byval = match &opts.sortby {
            Some(pattern) => match lookup_key_by_pattern(srv, dbid, pattern, &so.obj) {
                Some(v) => v,
                None => continue, // missing: sorts as 0 (or NULL with ALPHA)
            },
            None => so.obj.clone(),
        };
        if opts.alpha {
            if opts.sortby.is_some() {
                so.cmpobj = Some(byval);
            }
        } else {
            match sort_strtod(&byval) {
                Some(score) => so.score = score,
                None => conversion_error = true,
            }
        }
    }
    conversion_error
}

/// The weight as sortCommandGeneric parses it: plain strtod() on the C
/// string, so unlike ZADD's string2d an empty string (0), leading spaces
/// and bytes after a NUL are all fine; trailing junk, NaN and ERANGE
/// (overflow, and underflow such as 1e-400 or subnormal 1e-310) are not.
/// Redis does not clear errno first, so a stale ERANGE from an earlier
/// command can make its SORT fail; this version clears it.
fn sort_strtod(s: &[u8]) -> Option<f64> {
    let mut buf = Vec::with_capacity(s.len() + 1);
    buf.extend_from_slice(s);
    buf.push(0);
    let mut end: *mut libc::c_char = std::ptr::null_mut();
    // SAFETY: `buf` is NUL-terminated and outlives the call; strtod sets
    // `end` to a position inside `buf` (at most its NUL); errno is this
    // thread's.
    let (value, at_end, erange) = unsafe {
        *libc::__errno_location() = 0;
        let value = libc::strtod(buf.as_ptr().cast(), &mut end);
        (value, *end == 0, *libc::__errno_location() == libc::ERANGE)
    };
    (at_end && !erange && !value.is_nan()).then_some(value)
}

// ---- 4. sorting ----

/// Sort the vector as Redis does: BY with a window smaller than the whole
/// vector uses the partial quicksort, everything else a full (stable) sort.
fn sort_vector(vector: &mut [SortObject], opts: &SortOptions, start: i64, end: i64) {
    let flags = SortFlags {
        desc: opts.desc,
        alpha: opts.alpha,
        bypattern: opts.sortby.is_some(),
        store: opts.storekey.is_some(),
    };
    let cmp = |a: &SortObject, b: &SortObject| sort_compare(a, b, flags);
    if flags.bypattern && (start != 0 || end != vector.len() as i64 - 1) {
        pqsort(vector, &cmp, start, end);
    } else {
        vector.sort_by(cmp);
    }
}

/// sortCompare. Numbers: by weight, equal weights by the element's bytes
/// (so the result is deterministic). ALPHA: by the BY value (a missing one
/// first) or by the element. Byte comparison (memcmp, then length) when
/// storing; otherwise strcoll(), which Redis runs in the locale of its
/// environment. Under C / C.UTF-8, strcoll is strcmp: bytes up to the
/// first NUL -- that is what `strcoll_c` does. DESC reverses everything.
fn sort_compare(so1: &SortObject, so2: &SortObject, f: SortFlags) -> Ordering {
    let cmp = if !f.alpha {
        if so1.score > so2.score {
            Ordering::Greater
        } else if so1.score < so2.score {
            Ordering::Less
        } else {
            so1.obj.cmp(&so2.obj) // compareStringObjects
        }
    } else if f.bypattern {
        match (&so1.cmpobj, &so2.cmpobj) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Less,
            (Some(_), None) => Ordering::Greater,
            (Some(a), Some(b)) if f.store => a.cmp(b),
            (Some(a), Some(b)) => strcoll_c(a, b),
        }
    } else if f.store {
        so1.obj.cmp(&so2.obj)
    } else {
        strcoll_c(&so1.obj, &so2.obj) // collateStringObjects
    };
    if f.desc {
        cmp.reverse()
    } else {
        cmp
    }
}

/// strcoll() in the C locale: strcmp over the bytes before the first NUL.
fn strcoll_c(a: &[u8], b: &[u8]) -> Ordering {
    c_str(a).cmp(c_str(b))
}

/// The bytes a C string function sees: up to the first NUL.
fn c_str(s: &[u8]) -> &[u8] {
    match s.iter().position(|&b| b == 0) {
        Some(i) => &s[..i],
        None => s,
    }
}

/// pqsort (pqsort.c): NetBSD's qsort (Bentley & McIlroy, "Engineering a
/// Sort Function") that skips partitions lying wholly outside the window
/// [lrange, rrange]: only the window ends up sorted. Not stable, so with
/// ties the exact steps matter; this follows the C code step by step, with
/// element indexes for its byte pointers.
fn pqsort<T>(v: &mut [T], cmp: &dyn Fn(&T, &T) -> Ordering, lrange: i64, rrange: i64) {
    let n = v.len();
    pqsort_part(v, 0, n, cmp, lrange, rrange);
}

/// _pqsort over v[a .. a+n].
fn pqsort_part<T>(
    v: &mut [T],
    mut a: usize,
    mut n: usize,
    cmp: &dyn Fn(&T, &T) -> Ordering,
    lrange: i64,
    rrange: i64,
) {
    loop {
        if n < 7 {
            insertion_sort(v, a, n, cmp);
            return;
        }
        let mut pm = a + n / 2;
        if n > 7 {
            let (mut pl, mut pn) = (a, a + n - 1);
            if n > 40 {
                let d = n / 8;
                pl = med3(v, pl, pl + d, pl + 2 * d, cmp);
                pm = med3(v, pm - d, pm, pm + d, cmp);
                pn = med3(v, pn - 2 * d, pn - d, pn, cmp);
            }
            pm = med3(v, pl, pm, pn, cmp);
        }
        v.swap(a, pm);
        let (mut pa, mut pb) = (a + 1, a + 1);
        let (mut pc, mut pd) = (a + n - 1, a + n - 1);
        let mut swapped = false;
        loop {
            while pb <= pc {
                match cmp(&v[pb], &v[a]) {
                    Ordering::Greater => break,
                    Ordering::Equal => {
                        swapped = true;
                        v.swap(pa, pb);
                        pa += 1;
                    }
                    Ordering::Less => {}
                }
                pb += 1;
            }
            while pb <= pc {
                match cmp(&v[pc], &v[a]) {
                    Ordering::Less => break,
                    Ordering::Equal => {
                        swapped = true;
                        v.swap(pc, pd);
                        pd -= 1;
                    }
                    Ordering::Greater => {}
                }
                pc -= 1;
            }
            if pb > pc {
                break;
            }
            v.swap(pb, pc);
            swapped = true;
            pb += 1;
            pc -= 1;
        }
        if !swapped {
            // Already partitioned without a swap: switch to insertion sort.
            insertion_sort(v, a, n, cmp);
            return;
        }
        let pn = a + n;
        let r = (pa - a).min(pb - pa);
        vec_swap(v, a, pb - r, r);
        let r = (pd - pc).min(pn - pd - 1);
        vec_swap(v, pb, pn - r, r);
        let r = pb - pa;
        if r > 1 && window_overlaps(a, r, lrange, rrange) {
            pqsort_part(v, a, r, cmp, lrange, rrange);
        }
        let r = pd - pc;
        if r <= 1 {
            return;
        }
        // Iterate rather than recurse on the right part.
        (a, n) = (pn - r, r);
        if !window_overlaps(a, n, lrange, rrange) {
            return;
        }
    }
}

/// Does v[a .. a+n] hold any part of the window [lrange, rrange]?
fn window_overlaps(a: usize, n: usize, lrange: i64, rrange: i64) -> bool {
    let (first, last) = (a as i64, (a + n) as i64 - 1);
    !((lrange < first && rrange < first) || (lrange > last && rrange > last))
}

/// The insertion sort pqsort uses for short or presorted runs.
fn insertion_sort<T>(v: &mut [T], a: usize, n: usize, cmp: &dyn Fn(&T, &T) -> Ordering) {
    for pm in a + 1..a + n {
        let mut pl = pm;
        while pl > a && cmp(&v[pl - 1], &v[pl]) == Ordering::Greater {
            v.swap(pl, pl - 1);
            pl -= 1;
        }
    }
}

/// med3: the index of the median of three.
fn med3<T>(v: &[T], a: usize, b: usize, c: usize, cmp: &dyn Fn(&T, &T) -> Ordering) -> usize {
    if cmp(&v[a], &v[b]) == Ordering::Less {
        if cmp(&v[b], &v[c]) == Ordering::Less {
            b
        } else if cmp(&v[a], &v[c]) == Ordering::Less {
            c
        } else {
            a
        }
    } else if cmp(&v[b], &v[c]) == Ordering::Greater {
        b
    } else if cmp(&v[a], &v[c]) == Ordering::Less {
        a
    } else {
        c
    }
}

/// vecswap: swap n elements pairwise, in order.
fn vec_swap<T>(v: &mut [T], a: usize, b: usize, n: usize) {
    for i in 0..n {
        v.swap(a + i, b + i);
    }
}

// ---- 5. output ----

/// lookupKeyByPattern: the value a BY/GET pattern names for `subst`.
/// `#` is `subst` itself; the first `*` is replaced by `subst`; a
/// `->field` after the star reads that field of a hash. None when the
/// pattern has no star or the key is missing or of the wrong type (a
/// string for plain patterns, a hash for `->`). The pattern is searched
/// as a C string (strchr/strstr stop at a NUL), as in Redis.
fn lookup_key_by_pattern(
    srv: &mut Server,
    dbid: usize,
    pattern: &[u8],
    subst: &[u8],
) -> Option<Vec<u8>> {
    if pattern.first() == Some(&b'#') && pattern.get(1).is_none_or(|&b| b == 0) {
        return Some(subst.to_vec());
    }
    let cpat = c_str(pattern);
    let star = cpat.iter().position(|&b| b == b'*')?;
    // "->" after the star, followed by at least one byte: a hash field.
    let arrow = cpat[star + 1..]
        .windows(2)
        .position(|w| w == b"->")
        .map(|i| star + 1 + i)
        .filter(|&f| f + 2 < cpat.len());
    let suffix_end = arrow.unwrap_or(pattern.len());
    let mut key = Vec::with_capacity(pattern.len() + subst.len());
    key.extend_from_slice(&pattern[..star]);
    key.extend_from_slice(subst);
    key.extend_from_slice(&pattern[star + 1..suffix_end]);
    let o = lookup_key_read(srv, dbid, &key)?;
    match (arrow, &mut o.value) {
        (Some(f), Value::Hash(h)) => hash_type_get(h, &pattern[f + 2..]).map(|e| e.to_vec()),
        (None, Value::Str(s)) => Some(s.as_bytes().into_owned()),
        _ => None,
    }
}

/// The reply: each element of the window, or for each element the values
/// of its GET patterns (a null bulk where there is none).
fn sort_reply(
    srv: &mut Server,
    c: &mut Client,
    dbid: usize,
    window: &[SortObject],
    getops: &[Bytes],
) {
    let per_element = getops.len().max(1);
    c.add_reply_array_len(window.len() * per_element);
    for so in window {
        if getops.is_empty() {
            c.add_reply_bulk(&so.obj);
        }
        for pattern in getops {
            match lookup_key_by_pattern(srv, dbid, pattern, &so.obj) {
                Some(v) => c.add_reply_bulk(&v),
                None => c.add_reply_null(),
            }
        }
    }
}

/// STORE: the same output as a new list under `dst` (a missing GET value
/// is stored as ""). An empty result deletes `dst`. Replies the length.
fn sort_store(
    srv: &mut Server,
    c: &mut Client,
    dbid: usize,
    dst: &[u8],
    window: &[SortObject],
    getops: &[Bytes],
) {
    let mut value = create_quicklist_object(
        srv.config.list_max_listpack_size,
        srv.config.list_compress_depth,
    );
    let mut outputlen = 0usize;
    if let Value::List(ql) = &mut value {
        for so in window {
            if getops.is_empty() {
                list_type_push(ql, &so.obj, ListWhere::Tail);
            }
            for pattern in getops {
                let v = lookup_key_by_pattern(srv, dbid, pattern, &so.obj).unwrap_or_default();
                list_type_push(ql, &v, ListWhere::Tail);
            }
        }
        outputlen = list_type_length(ql);
    }
    if outputlen > 0 {
        let obj = new_object(srv, value);
        // setKey: dbAdd for a new key (which wakes clients blocked on it),
        // dbOverwrite otherwise; both signal the modified key.
        if lookup_key_write(srv, dbid, dst).is_some() {
            set_key(srv, dbid, dst, obj, false);
        } else {
            db_add(srv, dbid, dst, obj);
        }
        notify_keyspace_event(srv, NOTIFY_LIST, "sortstore", dst, dbid);
        srv.dirty += outputlen as u64;
    } else if db_delete(srv, dbid, dst) {
        signal_modified_key(srv, dbid, dst);
        notify_keyspace_event(srv, NOTIFY_GENERIC, "del", dst, dbid);
        srv.dirty += 1;
    }
    c.add_reply_integer(outputlen as i64);
}

// ---- key extraction (COMMAND GETKEYS) ----

/// sortGetKeys (db.c): the sorted key, plus the destination of the last
/// STORE. Arguments of LIMIT (2), GET and BY (1) are skipped; any other
/// word counts as an option without arguments. BY/GET keys are not
/// reported: they depend on the data.
pub fn sort_get_keys(argv: &[Bytes]) -> Vec<KeyReference> {
    const SKIPLIST: [(&str, usize); 3] = [("limit", 2), ("get", 1), ("by", 1)];
    let mut keys = vec![KeyReference {
        pos: 1,
        flags: &["RO", "access"],
    }];
    let mut store = None;
    let mut i = 2;
    while i < argv.len() {
        let arg = &argv[i];
        if let Some((_, skip)) = SKIPLIST
            .iter()
            .find(|(name, _)| arg.eq_ignore_ascii_case(name.as_bytes()))
        {
            i += skip;
        } else if arg.eq_ignore_ascii_case(b"store") && i + 1 < argv.len() {
            store = Some(i + 1);
        }
        i += 1;
    }
    if let Some(pos) = store {
        keys.push(KeyReference {
            pos,
            flags: &["OW", "update"],
        });
    }
    keys
}

/// sortROGetKeys (db.c): only the sorted key.
pub fn sort_ro_get_keys(_argv: &[Bytes]) -> Vec<KeyReference> {
    vec![KeyReference {
        pos: 1,
        flags: &["RO", "access"],
    }]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limit_range_clamps_like_redis() {
        assert_eq!(sort_limit_range(0, -1, 5), (0, 4));
        assert_eq!(sort_limit_range(-3, 2, 5), (0, 1));
        assert_eq!(sort_limit_range(3, 100, 5), (3, 4));
        assert_eq!(sort_limit_range(5, 1, 5), (4, 3));
        assert_eq!(sort_limit_range(0, 0, 5), (0, -1));
        assert_eq!(sort_limit_range(0, -1, 0), (-1, -2));
        assert_eq!(sort_limit_range(i64::MAX, i64::MAX, 3), (2, 1));
    }

    #[test]
    fn strtod_accepts_what_redis_sort_accepts() {
        assert_eq!(sort_strtod(b""), Some(0.0));
        assert_eq!(sort_strtod(b" 4"), Some(4.0));
        assert_eq!(sort_strtod(b"0x10"), Some(16.0));
        assert_eq!(sort_strtod(b"1\0junk"), Some(1.0));
        assert_eq!(sort_strtod(b"4 "), None);
        assert_eq!(sort_strtod(b"nan"), None);
        assert_eq!(sort_strtod(b"1e400"), None);
        assert_eq!(sort_strtod(b"1e-400"), None);
    }

    #[test]
    fn pqsort_sorts_the_window() {
        let data: Vec<i64> = (0..200).map(|i| (i * 7919) % 211).collect();
        let mut sorted = data.clone();
        sorted.sort();
        let cmp = |a: &i64, b: &i64| a.cmp(b);
        let mut v = data.clone();
        pqsort(&mut v, &cmp, 50, 59);
        assert_eq!(v[50..60], sorted[50..60]);
        let mut v = data;
        pqsort(&mut v, &cmp, 0, 199);
        assert_eq!(v, sorted);
    }

    #[test]
    fn get_keys_takes_the_last_store() {
        let argv: Vec<Bytes> = "sort k limit 0 1 store a get # store b"
            .split(' ')
            .map(|s| Bytes::copy_from_slice(s.as_bytes()))
            .collect();
        let keys = sort_get_keys(&argv);
        assert_eq!(keys.iter().map(|k| k.pos).collect::<Vec<_>>(), vec![1, 10]);
    }
}
