//! The sorted set type API (Redis 7.0's t_zset.c, the part below the
//! commands).
//!
//! A sorted set has two encodings, and commands never see which one:
//! - `Listpack`: small sets. Member and score are two consecutive entries,
//!   pairs kept sorted by (score, member). Every operation is a linear walk,
//!   which is faster than pointer chasing while the set is small
//!   (zset-max-listpack-entries 128, zset-max-listpack-value 64 bytes).
//! - `Skiplist`: a `ZSet` = skiplist (order, ranks, ranges) + dict
//!   (member -> score in O(1) for ZSCORE and for "is it there?").
//!
//! All encoding changes go through `zset_type_convert`, the only function
//! that reads the two thresholds: a breakpoint there catches every
//! listpack -> skiplist switch (zsetAdd, zaddGenericCommand's create) and
//! every skiplist -> listpack one (zsetConvertToListpackIfNeeded, used only
//! for the results of ZRANGESTORE / Z*STORE). ZREM never converts back.
//!
//! Scores inside a listpack are stored as text made by `d2string`
//! (integers become integer entries, as in Redis).

use crate::dict::Dict;
use crate::listpack::{lp_safe_to_add, Listpack, LpEntry, Where};
use crate::object::ScanStep;
use crate::skiplist::{LexBound, ZLexRangeSpec, ZRangeSpec, ZSkipList};
use crate::util::{ll2string, string2d};

/// `zset`: the skiplist encoding's two halves.
#[derive(Debug, Default)]
pub struct ZSet {
    pub zsl: ZSkipList,
    pub dict: Dict<f64>,
}

/// A sorted set value, in one of its two encodings.
#[derive(Debug)]
pub enum ZSetValue {
    Listpack(Listpack),
    Skiplist(Box<ZSet>),
}

/// The two thresholds, copied from srv.config by the command layer
/// (zset-max-listpack-entries / zset-max-listpack-value).
#[derive(Debug, Clone, Copy)]
pub struct ZSetLimits {
    pub max_listpack_entries: usize,
    pub max_listpack_value: usize,
}

/// Why `zset_type_convert` is being asked.
#[derive(Debug, Clone, Copy)]
pub enum ZConvCheck {
    /// zaddGenericCommand creating the key: 7.0 looks only at the length
    /// of the first member (later members convert through `Adding`).
    Create { first_ele_len: usize },
    /// zrangeResultBeginStore: ZRANGESTORE's result set, whose size is
    /// known up front only for rank ranges.
    RangeStore { length_hint: Option<usize> },
    /// zsetAdd: one new member of `ele_len` bytes is about to be inserted.
    Adding { ele_len: usize },
    /// zsetConvertToListpackIfNeeded: a STORE result with this longest and
    /// total member length.
    Store { maxelelen: usize, totelelen: usize },
    /// sortCommandGeneric: SORT always converts a listpack zset to a
    /// skiplist first (destructively: OBJECT ENCODING says so afterwards).
    Sort,
}

/// ZADD's input flags (ZADD_IN_*).
#[derive(Debug, Clone, Copy, Default)]
pub struct ZAddFlags {
    pub incr: bool,
    pub nx: bool,
    pub xx: bool,
    pub gt: bool,
    pub lt: bool,
}

/// ZADD's outcome for one member (ZADD_OUT_*).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZAddOut {
    /// The score would be NaN (INCR of +inf by -inf).
    Nan,
    Added,
    Updated,
    /// Nothing done: NX/XX/GT/LT said no (ZADD_OUT_NOP).
    Nop,
    /// Processed, but the score did not change (no flag in Redis).
    Same,
}

/// The zset object type, AGGREGATE in ZUNION/ZINTER.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Aggregate {
    Sum,
    Min,
    Max,
}

/// d2string (util.c): the text Redis stores for a score in a listpack and
/// returns in ZSCAN. Integral values within +-2^52 print as integers, the
/// rest with C's `%.17g` (glibc's snprintf itself, so the digits match).
pub fn d2string(value: f64) -> Vec<u8> {
    if value.is_nan() {
        return b"nan".to_vec();
    }
    if value.is_infinite() {
        return if value > 0.0 {
            b"inf".to_vec()
        } else {
            b"-inf".to_vec()
        };
    }
    if value > -4503599627370495.0 && value < 4503599627370496.0 && value == (value as i64) as f64 {
        return ll2string(value as i64).to_vec();
    }
    let mut buf = [0u8; 64];
    // SAFETY: the format is a NUL-terminated literal taking one double;
    // snprintf writes at most buf.len() bytes including the NUL.
    let n = unsafe { snprintf(buf.as_mut_ptr().cast(), buf.len(), c"%.17g".as_ptr(), value) };
    buf[..(n.max(0) as usize).min(buf.len() - 1)].to_vec()
}

/// zzlGetScore: a score entry back to a double.
fn lp_score(e: LpEntry<'_>) -> f64 {
    match e {
        LpEntry::Int(v) => v as f64,
        LpEntry::Str(s) => parse_lp_double(s),
    }
}

fn parse_lp_double(s: &[u8]) -> f64 {
    if let Some(v) = string2d(s) {
        return v;
    }
    match s {
        b"inf" => f64::INFINITY,
        b"-inf" => f64::NEG_INFINITY,
        _ => std::str::from_utf8(s)
            .ok()
            .and_then(|t| t.parse().ok())
            .unwrap_or(0.0),
    }
}

/// A listpack member entry as bytes compared with sdscmp order.
fn lp_ele(e: LpEntry<'_>) -> Vec<u8> {
    e.to_vec()
}

// ---------------------------------------------------------------------------
// Listpack primitives (zzl* in t_zset.c)

/// zzlFind: the member entry's offset and its score.
fn zzl_find(lp: &Listpack, ele: &[u8]) -> Option<(usize, f64)> {
    let first = lp.first()?;
    let p = lp.find(first, ele, 1)?;
    let sp = lp.next(p)?;
    Some((p, lp_score(lp.get(sp))))
}

/// zzlDelete: remove the member at `p` and its score.
fn zzl_delete(lp: &mut Listpack, p: usize) {
    if let Some(next) = lp.delete(p) {
        lp.delete(next);
    }
}

/// zzlInsert: put (ele, score) at its sorted place.
fn zzl_insert(lp: &mut Listpack, ele: &[u8], score: f64) {
    let scoretext = d2string(score);
    let mut cur = lp.first();
    while let Some(p) = cur {
        let sp = lp.next(p).expect("zset listpack: member without score");
        let s = lp_score(lp.get(sp));
        if s > score || (s == score && lp_ele(lp.get(p)).as_slice() > ele) {
            // zzlInsertAt before `p`: member first, then its score after it.
            let np = lp.insert(p, ele, Where::Before);
            lp.insert(np, &scoretext, Where::After);
            return;
        }
        cur = lp.next(sp);
    }
    lp.append(ele);
    lp.append(&scoretext);
}

/// Every (member, score) pair of a listpack, in order.
fn zzl_pairs(lp: &Listpack) -> Vec<(Vec<u8>, f64)> {
    let mut out = Vec::with_capacity(lp.len() / 2);
    let mut it = lp.iter();
    while let (Some(e), Some(s)) = (it.next(), it.next()) {
        out.push((lp_ele(e), lp_score(s)));
    }
    out
}

// ---------------------------------------------------------------------------
// The conversion function

/// For the encoding-transition log: the size that made `zset_type_convert`
/// leave the listpack, and why in words.
fn zset_conversion_trigger(
    members: usize,
    limits: &ZSetLimits,
    check: ZConvCheck,
) -> (u64, String) {
    let (entries, value) = (limits.max_listpack_entries, limits.max_listpack_value);
    match check {
        ZConvCheck::Create { first_ele_len } if first_ele_len > value => (
            first_ele_len as u64,
            format!("a {first_ele_len}-byte member > zset-max-listpack-value {value}"),
        ),
        ZConvCheck::Create { .. } => (0, "zset-max-listpack-entries is 0".to_string()),
        ZConvCheck::RangeStore { length_hint } => {
            let n = length_hint.unwrap_or(0);
            (
                n as u64,
                format!("a result of {n} members > zset-max-listpack-entries {entries}"),
            )
        }
        ZConvCheck::Adding { ele_len } if ele_len > value => (
            ele_len as u64,
            format!("a {ele_len}-byte member > zset-max-listpack-value {value}"),
        ),
        ZConvCheck::Adding { .. } if members >= entries => (
            members as u64 + 1,
            format!(
                "{} members > zset-max-listpack-entries {entries}",
                members + 1
            ),
        ),
        ZConvCheck::Adding { .. } => (
            members as u64,
            "the listpack would pass LISTPACK_MAX_SAFETY_SIZE".to_string(),
        ),
        ZConvCheck::Store { .. } | ZConvCheck::Sort => {
            (members as u64, "SORT works on a skiplist".to_string())
        }
    }
}

/// zsetConvert + every decision about when to call it: the ONE place that
/// reads zset-max-listpack-entries and zset-max-listpack-value.
pub fn zset_type_convert(zv: &mut ZSetValue, limits: &ZSetLimits, check: ZConvCheck) {
    match (&*zv, check) {
        (ZSetValue::Listpack(_), ZConvCheck::Create { first_ele_len }) => {
            if limits.max_listpack_entries != 0 && first_ele_len <= limits.max_listpack_value {
                return;
            }
        }
        (ZSetValue::Listpack(_), ZConvCheck::RangeStore { length_hint }) => {
            if length_hint.is_none_or(|n| n <= limits.max_listpack_entries) {
                return;
            }
        }
        (ZSetValue::Listpack(_), ZConvCheck::Sort) => {}
        (ZSetValue::Listpack(lp), ZConvCheck::Adding { ele_len }) => {
            // Checked *before* zzlInsert, as zsetAdd does.
            if lp.len() / 2 < limits.max_listpack_entries
                && ele_len <= limits.max_listpack_value
                && lp_safe_to_add(Some(lp), ele_len)
            {
                return;
            }
        }
        (
            ZSetValue::Skiplist(zs),
            ZConvCheck::Store {
                maxelelen,
                totelelen,
            },
        ) => {
            if zs.zsl.len() <= limits.max_listpack_entries
                && maxelelen <= limits.max_listpack_value
                && lp_safe_to_add(None, totelelen)
            {
                // skiplist -> listpack: walk the skiplist in order.
                if crate::encoding_log::on() {
                    let n = zs.zsl.len();
                    let trigger = format!(
                        "a STORE result of {n} members <= zset-max-listpack-entries {}",
                        limits.max_listpack_entries
                    );
                    crate::encoding_log::record("zset", "skiplist", "listpack", n as u64, trigger);
                }
                let mut lp = Listpack::new();
                let mut cur = zs.zsl.first();
                while let Some(n) = cur {
                    lp.append(zs.zsl.ele(n));
                    lp.append(&d2string(zs.zsl.score(n)));
                    cur = zs.zsl.next(n);
                }
                *zv = ZSetValue::Listpack(lp);
            }
            return;
        }
        _ => return,
    }
    // listpack -> skiplist.
    let ZSetValue::Listpack(lp) = &*zv else {
        return;
    };
    if crate::encoding_log::on() {
        let (size, trigger) = zset_conversion_trigger(lp.len() / 2, limits, check);
        crate::encoding_log::record("zset", "listpack", "skiplist", size, trigger);
    }
    let mut zs = Box::<ZSet>::default();
    for (ele, score) in zzl_pairs(lp) {
        let ele: Box<[u8]> = ele.into_boxed_slice();
        zs.dict.insert(ele.clone(), score);
        zs.zsl.insert(score, ele);
    }
    *zv = ZSetValue::Skiplist(zs);
}

/// The new-key branch of zaddGenericCommand: an empty set, listpack
/// unless the thresholds rule it out already.
pub fn zset_type_create(limits: &ZSetLimits, first_ele_len: usize) -> ZSetValue {
    let mut zv = ZSetValue::Listpack(Listpack::new());
    zset_type_convert(&mut zv, limits, ZConvCheck::Create { first_ele_len });
    zv
}

// ---------------------------------------------------------------------------
// Range parsing (zslParseRange / zslParseLexRange)

extern "C" {
    fn snprintf(
        buf: *mut std::ffi::c_char,
        n: usize,
        fmt: *const std::ffi::c_char,
        ...
    ) -> std::ffi::c_int;
    fn strtod(s: *const std::ffi::c_char, endp: *mut *mut std::ffi::c_char) -> f64;
}

/// C strtod over the whole argument (as a NUL-terminated sds): Some when
/// it stops at the terminator and the value is not NaN.
fn strtod_whole(s: &[u8]) -> Option<f64> {
    let mut buf = Vec::with_capacity(s.len() + 1);
    buf.extend_from_slice(s);
    buf.push(0);
    let mut end: *mut std::ffi::c_char = std::ptr::null_mut();
    // SAFETY: `buf` is NUL-terminated and outlives the call; `end` is a
    // valid out-pointer that strtod sets inside `buf`.
    let v = unsafe { strtod(buf.as_ptr().cast(), &mut end) };
    // SAFETY: strtod leaves `end` pointing into `buf` (at most at the NUL).
    let at_end = unsafe { *end == 0 };
    (at_end && !v.is_nan()).then_some(v)
}

/// zslParseRangeItem: `1.5`, `(1.5`, `-inf`, `+inf`.
fn parse_range_item(s: &[u8]) -> Option<(f64, bool)> {
    match s.first() {
        Some(b'(') => strtod_whole(&s[1..]).map(|v| (v, true)),
        _ => strtod_whole(s).map(|v| (v, false)),
    }
}

/// zslParseRange: None means "ERR min or max is not a float".
pub fn zsl_parse_range(min: &[u8], max: &[u8]) -> Option<ZRangeSpec> {
    let (min, minex) = parse_range_item(min)?;
    let (max, maxex) = parse_range_item(max)?;
    Some(ZRangeSpec {
        min,
        max,
        minex,
        maxex,
    })
}

/// zslParseLexRangeItem: `-`, `+`, `[x`, `(x`.
fn parse_lex_item(s: &[u8]) -> Option<LexBound> {
    match s.first()? {
        b'+' if s.len() == 1 => Some(LexBound::PlusInf),
        b'-' if s.len() == 1 => Some(LexBound::MinusInf),
        b'(' => Some(LexBound::Excl(s[1..].to_vec())),
        b'[' => Some(LexBound::Incl(s[1..].to_vec())),
        _ => None,
    }
}

/// zslParseLexRange: None means "ERR min or max not valid string range item".
pub fn zsl_parse_lex_range(min: &[u8], max: &[u8]) -> Option<ZLexRangeSpec> {
    Some(ZLexRangeSpec {
        min: parse_lex_item(min)?,
        max: parse_lex_item(max)?,
    })
}

// ---------------------------------------------------------------------------
// The type API

impl ZSetValue {
    /// zsetLength
    pub fn len(&self) -> usize {
        match self {
            ZSetValue::Listpack(lp) => lp.len() / 2,
            ZSetValue::Skiplist(zs) => zs.zsl.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// zsetScore
    pub fn score(&mut self, ele: &[u8]) -> Option<f64> {
        match self {
            ZSetValue::Listpack(lp) => zzl_find(lp, ele).map(|(_, s)| s),
            ZSetValue::Skiplist(zs) => zs.dict.find(ele).copied(),
        }
    }

    /// zsetAdd: add or update one member per `flags`. Returns the outcome
    /// and the member's score afterwards (for INCR's reply).
    pub fn add(
        &mut self,
        limits: &ZSetLimits,
        mut score: f64,
        ele: &[u8],
        flags: ZAddFlags,
    ) -> (ZAddOut, f64) {
        if score.is_nan() {
            return (ZAddOut::Nan, score);
        }
        let cur = self.score(ele);
        if let Some(curscore) = cur {
            if flags.nx {
                return (ZAddOut::Nop, curscore);
            }
            if flags.incr {
                score += curscore;
                if score.is_nan() {
                    return (ZAddOut::Nan, score);
                }
            }
            if (flags.lt && score >= curscore) || (flags.gt && score <= curscore) {
                return (ZAddOut::Nop, curscore);
            }
            if score == curscore {
                return (ZAddOut::Same, score);
            }
            match self {
                ZSetValue::Listpack(lp) => {
                    // Remove and re-insert: the pair may have to move.
                    if let Some((p, _)) = zzl_find(lp, ele) {
                        zzl_delete(lp, p);
                    }
                    zzl_insert(lp, ele, score);
                }
                ZSetValue::Skiplist(zs) => {
                    zs.zsl.update_score(curscore, ele, score);
                    if let Some(v) = zs.dict.find(ele) {
                        *v = score;
                    }
                }
            }
            return (ZAddOut::Updated, score);
        }
        if flags.xx {
            return (ZAddOut::Nop, score);
        }
        zset_type_convert(self, limits, ZConvCheck::Adding { ele_len: ele.len() });
        match self {
            ZSetValue::Listpack(lp) => zzl_insert(lp, ele, score),
            ZSetValue::Skiplist(zs) => {
                let e: Box<[u8]> = ele.into();
                zs.dict.insert(e.clone(), score);
                zs.zsl.insert(score, e);
            }
        }
        (ZAddOut::Added, score)
    }

    /// zsetDel
    pub fn remove(&mut self, ele: &[u8]) -> bool {
        match self {
            ZSetValue::Listpack(lp) => match zzl_find(lp, ele) {
                Some((p, _)) => {
                    zzl_delete(lp, p);
                    true
                }
                None => false,
            },
            ZSetValue::Skiplist(zs) => match zs.dict.remove(ele) {
                Some((_, score)) => {
                    zs.zsl.delete(score, ele);
                    true
                }
                None => false,
            },
        }
    }

    /// zsetRank: 0-based rank (from the top when `reverse`) and score.
    pub fn rank(&mut self, ele: &[u8], reverse: bool) -> Option<(usize, f64)> {
        let len = self.len();
        match self {
            ZSetValue::Listpack(lp) => {
                let (i, s) = zzl_pairs(lp)
                    .into_iter()
                    .enumerate()
                    .find(|(_, (e, _))| e == ele)
                    .map(|(i, (_, s))| (i, s))?;
                Some((if reverse { len - 1 - i } else { i }, s))
            }
            ZSetValue::Skiplist(zs) => {
                let score = *zs.dict.find(ele)?;
                let r = zs.zsl.get_rank(score, ele);
                if r == 0 {
                    return None;
                }
                Some((if reverse { len - r } else { r - 1 }, score))
            }
        }
    }

    /// Every pair in order (or reversed): listpack walk or level-0 walk.
    pub fn to_vec(&self, reverse: bool) -> Vec<(Vec<u8>, f64)> {
        let mut v = match self {
            ZSetValue::Listpack(lp) => zzl_pairs(lp),
            ZSetValue::Skiplist(zs) => {
                let mut out = Vec::with_capacity(zs.zsl.len());
                let mut cur = zs.zsl.first();
                while let Some(n) = cur {
                    out.push((zs.zsl.ele(n).to_vec(), zs.zsl.score(n)));
                    cur = zs.zsl.next(n);
                }
                out
            }
        };
        if reverse {
            v.reverse();
        }
        v
    }

    /// ZRANGE by index: ranks `start..=end` (already clamped, 0-based,
    /// counted from the top when `reverse`).
    pub fn range_by_rank(&self, start: usize, end: usize, reverse: bool) -> Vec<(Vec<u8>, f64)> {
        let mut out = Vec::new();
        match self {
            ZSetValue::Listpack(_) => {
                let all = self.to_vec(reverse);
                out.extend(all.into_iter().skip(start).take(end + 1 - start));
            }
            ZSetValue::Skiplist(zs) => {
                let len = zs.zsl.len();
                let first_rank = if reverse { len - start } else { start + 1 };
                let mut cur = zs.zsl.get_element_by_rank(first_rank);
                for _ in start..=end {
                    let Some(n) = cur else { break };
                    out.push((zs.zsl.ele(n).to_vec(), zs.zsl.score(n)));
                    cur = if reverse {
                        zs.zsl.prev(n)
                    } else {
                        zs.zsl.next(n)
                    };
                }
            }
        }
        out
    }

    /// genericZrangebyscore's walk: members with a score in `range`, from
    /// the low end (or high end when `reverse`), skipping `offset`, at most
    /// `limit` (negative = all).
    pub fn range_by_score(
        &self,
        range: &ZRangeSpec,
        reverse: bool,
        offset: usize,
        limit: i64,
    ) -> Vec<(Vec<u8>, f64)> {
        match self {
            ZSetValue::Listpack(_) => {
                let it = self
                    .to_vec(reverse)
                    .into_iter()
                    .filter(|(_, s)| range.value_gte_min(*s) && range.value_lte_max(*s));
                take_limit(it, offset, limit)
            }
            ZSetValue::Skiplist(zs) => {
                let zsl = &zs.zsl;
                let start = if reverse {
                    zsl.last_in_range(range)
                } else {
                    zsl.first_in_range(range)
                };
                // From the first node in range, walk until the far end of
                // the range is passed.
                let in_range = |n| {
                    if reverse {
                        range.value_gte_min(zsl.score(n))
                    } else {
                        range.value_lte_max(zsl.score(n))
                    }
                };
                take_limit(skiplist_walk(zsl, start, reverse, in_range), offset, limit)
            }
        }
    }

    /// genericZrangebylex's walk.
    pub fn range_by_lex(
        &self,
        range: &ZLexRangeSpec,
        reverse: bool,
        offset: usize,
        limit: i64,
    ) -> Vec<(Vec<u8>, f64)> {
        match self {
            ZSetValue::Listpack(lp) => {
                take_limit(zzl_lex_walk(lp, range, reverse).into_iter(), offset, limit)
            }
            ZSetValue::Skiplist(zs) => {
                let zsl = &zs.zsl;
                let start = if reverse {
                    zsl.last_in_lex_range(range)
                } else {
                    zsl.first_in_lex_range(range)
                };
                let in_range = |n| {
                    if reverse {
                        range.value_gte_min(zsl.ele(n))
                    } else {
                        range.value_lte_max(zsl.ele(n))
                    }
                };
                take_limit(skiplist_walk(zsl, start, reverse, in_range), offset, limit)
            }
        }
    }

    /// ZCOUNT (zzlFirstInRange + walk; zslGetRank arithmetic for skiplists).
    pub fn count_in_range(&self, range: &ZRangeSpec) -> usize {
        match self {
            ZSetValue::Listpack(_) => self.range_by_score(range, false, 0, -1).len(),
            ZSetValue::Skiplist(zs) => {
                let zsl = &zs.zsl;
                let Some(first) = zsl.first_in_range(range) else {
                    return 0;
                };
                // zcountCommand's rank arithmetic, signed as in C.
                let len = zsl.len() as i64;
                let mut count = len - (zsl.get_rank(zsl.score(first), zsl.ele(first)) as i64 - 1);
                if let Some(last) = zsl.last_in_range(range) {
                    count -= len - zsl.get_rank(zsl.score(last), zsl.ele(last)) as i64;
                }
                count.max(0) as usize
            }
        }
    }

    /// ZLEXCOUNT
    pub fn count_in_lex_range(&self, range: &ZLexRangeSpec) -> usize {
        match self {
            ZSetValue::Listpack(_) => self.range_by_lex(range, false, 0, -1).len(),
            ZSetValue::Skiplist(zs) => {
                let zsl = &zs.zsl;
                let Some(first) = zsl.first_in_lex_range(range) else {
                    return 0;
                };
                // zcountCommand's rank arithmetic, signed as in C.
                let len = zsl.len() as i64;
                let mut count = len - (zsl.get_rank(zsl.score(first), zsl.ele(first)) as i64 - 1);
                if let Some(last) = zsl.last_in_lex_range(range) {
                    count -= len - zsl.get_rank(zsl.score(last), zsl.ele(last)) as i64;
                }
                count.max(0) as usize
            }
        }
    }

    /// zremrangeGenericCommand's three flavours, on 0-based ranks.
    pub fn remove_range_by_rank(&mut self, start: usize, end: usize) -> usize {
        match self {
            ZSetValue::Listpack(lp) => {
                let n = end + 1 - start;
                lp.delete_range(2 * start as i64, 2 * n);
                n
            }
            ZSetValue::Skiplist(zs) => {
                zs.zsl
                    .delete_range_by_rank(start + 1, end + 1, &mut zs.dict)
            }
        }
    }

    pub fn remove_range_by_score(&mut self, range: &ZRangeSpec) -> usize {
        match self {
            ZSetValue::Listpack(_) => {
                let victims = self.range_by_score(range, false, 0, -1);
                victims.iter().filter(|(e, _)| self.remove(e)).count()
            }
            ZSetValue::Skiplist(zs) => zs.zsl.delete_range_by_score(range, &mut zs.dict),
        }
    }

    pub fn remove_range_by_lex(&mut self, range: &ZLexRangeSpec) -> usize {
        match self {
            ZSetValue::Listpack(_) => {
                let victims = self.range_by_lex(range, false, 0, -1);
                victims.iter().filter(|(e, _)| self.remove(e)).count()
            }
            ZSetValue::Skiplist(zs) => zs.zsl.delete_range_by_lex(range, &mut zs.dict),
        }
    }

    /// genericZpopCommand: remove up to `count` members from the low end
    /// (or the high end when `max`).
    pub fn pop(&mut self, count: usize, max: bool) -> Vec<(Vec<u8>, f64)> {
        let len = self.len();
        let n = count.min(len);
        if n == 0 {
            return Vec::new();
        }
        let popped = self.range_by_rank(0, n - 1, max);
        for (e, _) in &popped {
            self.remove(e);
        }
        popped
    }

    /// The member -> score dict scan for ZSCAN on a skiplist; listpack
    /// sets are returned whole by the command.
    pub fn dict(&self) -> Option<&Dict<f64>> {
        match self {
            ZSetValue::Listpack(_) => None,
            ZSetValue::Skiplist(zs) => Some(&zs.dict),
        }
    }

    /// A random member (dictGetFairRandomKey / lpRandomPair).
    pub fn random_pair(&mut self) -> Option<(Vec<u8>, f64)> {
        match self {
            ZSetValue::Listpack(lp) => {
                let n = lp.len() / 2;
                if n == 0 {
                    return None;
                }
                let i = (rand::random::<u64>() % n as u64) as i64;
                let p = lp.seek(2 * i)?;
                let sp = lp.next(p)?;
                Some((lp_ele(lp.get(p)), lp_score(lp.get(sp))))
            }
            ZSetValue::Skiplist(zs) => zs.dict.random_entry().map(|(k, v)| (k.to_vec(), *v)),
        }
    }

    /// zsetDup (COPY): same encoding, fresh allocations.
    pub fn dup(&self) -> ZSetValue {
        match self {
            ZSetValue::Listpack(lp) => ZSetValue::Listpack(lp.clone()),
            ZSetValue::Skiplist(zs) => {
                let mut nz = Box::<ZSet>::default();
                let mut cur = zs.zsl.last();
                while let Some(n) = cur {
                    let e: Box<[u8]> = zs.zsl.ele(n).into();
                    nz.dict.insert(e.clone(), zs.zsl.score(n));
                    nz.zsl.insert(zs.zsl.score(n), e);
                    cur = zs.zsl.prev(n);
                }
                ZSetValue::Skiplist(nz)
            }
        }
    }

    pub fn encoding_name(&self) -> &'static str {
        match self {
            ZSetValue::Listpack(_) => "listpack",
            ZSetValue::Skiplist(_) => "skiplist",
        }
    }
}

/// The listpack lex walk as Redis does it (zzlFirstInLexRange /
/// zzlLastInLexRange, then step while the other bound holds). With mixed
/// scores the members are not in lex order and this stops early exactly
/// where Redis stops (BYLEX is only defined for equal scores).
fn zzl_lex_walk(lp: &Listpack, range: &ZLexRangeSpec, reverse: bool) -> Vec<(Vec<u8>, f64)> {
    let pairs = zzl_pairs(lp);
    // zzlIsInLexRange: compare with the last and the first member.
    let (Some(first), Some(last)) = (pairs.first(), pairs.last()) else {
        return Vec::new();
    };
    if range.is_empty() || !range.value_gte_min(&last.0) || !range.value_lte_max(&first.0) {
        return Vec::new();
    }
    if reverse {
        let Some(i) = pairs.iter().rposition(|(e, _)| range.value_lte_max(e)) else {
            return Vec::new();
        };
        let mut out: Vec<_> = pairs[..=i]
            .iter()
            .rev()
            .take_while(|(e, _)| range.value_gte_min(e))
            .cloned()
            .collect();
        out.shrink_to_fit();
        out
    } else {
        let Some(i) = pairs.iter().position(|(e, _)| range.value_gte_min(e)) else {
            return Vec::new();
        };
        pairs[i..]
            .iter()
            .take_while(|(e, _)| range.value_lte_max(e))
            .cloned()
            .collect()
    }
}

/// Apply LIMIT offset count to an ordered walk.
/// The (member, score) pairs of a skiplist from node `start` forwards (or
/// backwards when `reverse`) for as long as `in_range` holds: the walk of
/// genericZrangebyscore and genericZrangebylex.
fn skiplist_walk<'a>(
    zsl: &'a ZSkipList,
    start: Option<usize>,
    reverse: bool,
    in_range: impl Fn(usize) -> bool + 'a,
) -> impl Iterator<Item = (Vec<u8>, f64)> + 'a {
    std::iter::successors(
        start,
        move |&n| if reverse { zsl.prev(n) } else { zsl.next(n) },
    )
    .take_while(move |&n| in_range(n))
    .map(|n| (zsl.ele(n).to_vec(), zsl.score(n)))
}

fn take_limit<I: Iterator<Item = (Vec<u8>, f64)>>(
    it: I,
    offset: usize,
    limit: i64,
) -> Vec<(Vec<u8>, f64)> {
    let it = it.skip(offset);
    if limit < 0 {
        it.collect()
    } else {
        it.take(limit as usize).collect()
    }
}

/// Build a set from (member, score) pairs that are unique (Z*STORE,
/// ZRANGESTORE, ZUNION results), then shrink it back to a listpack if it
/// fits (zsetConvertToListpackIfNeeded).
pub fn zset_from_pairs(limits: &ZSetLimits, pairs: &[(Vec<u8>, f64)]) -> ZSetValue {
    let maxelelen = pairs.iter().map(|(e, _)| e.len()).max().unwrap_or(0);
    let totelelen = pairs.iter().map(|(e, _)| e.len()).sum();
    let mut zs = Box::<ZSet>::default();
    for (e, s) in pairs {
        let e: Box<[u8]> = e.as_slice().into();
        if zs.dict.insert(e.clone(), *s).is_none() {
            zs.zsl.insert(*s, e);
        }
    }
    let mut zv = ZSetValue::Skiplist(zs);
    zset_type_convert(
        &mut zv,
        limits,
        ZConvCheck::Store {
            maxelelen,
            totelelen,
        },
    );
    zv
}

/// ZRANGESTORE's result (zrangeResultBeginStore + zsetAdd per member):
/// a listpack unless the rank range is already longer than the limit,
/// converted by `add` as members arrive.
pub fn zset_from_range(
    limits: &ZSetLimits,
    pairs: &[(Vec<u8>, f64)],
    length_hint: Option<usize>,
) -> ZSetValue {
    let mut zv = ZSetValue::Listpack(Listpack::new());
    zset_type_convert(&mut zv, limits, ZConvCheck::RangeStore { length_hint });
    for (e, s) in pairs {
        zv.add(limits, *s, e, ZAddFlags::default());
    }
    zv
}

impl ZSetValue {
    /// The walk of geo.c geoGetPointsInRange: from the first member whose
    /// score is in `range` (zzlFirstInRange / zslFirstInRange), call
    /// `f(member, score)` in score order until the range ends or `f`
    /// returns false. Members are lent, not copied: a GEO search decodes
    /// every candidate but keeps only those inside its shape.
    pub fn walk_score_range(&self, range: &ZRangeSpec, mut f: impl FnMut(&[u8], f64) -> bool) {
        match self {
            ZSetValue::Listpack(lp) => {
                let mut it = lp.iter();
                while let (Some(e), Some(s)) = (it.next(), it.next()) {
                    let score = lp_score(s);
                    if !range.value_gte_min(score) {
                        continue;
                    }
                    if !range.value_lte_max(score) {
                        break;
                    }
                    let go_on = match e {
                        LpEntry::Str(b) => f(b, score),
                        LpEntry::Int(v) => f(ll2string(v).as_bytes(), score),
                    };
                    if !go_on {
                        break;
                    }
                }
            }
            ZSetValue::Skiplist(zs) => {
                let mut cur = zs.zsl.first_in_range(range);
                while let Some(n) = cur {
                    let score = zs.zsl.score(n);
                    if !range.value_lte_max(score) || !f(zs.zsl.ele(n), score) {
                        break;
                    }
                    cur = zs.zsl.next(n);
                }
            }
        }
    }
}

/// One step of ZSCAN, emitting member then score (formatted as the reply
/// shows it): a listpack whole, or one bucket of the skiplist's dict.
// redis: db.c scanGenericCommand (OBJ_ZSET cases)
pub fn zset_type_scan(z: &ZSetValue, cursor: u64, out: &mut Vec<Vec<u8>>) -> ScanStep {
    match z.dict() {
        None => {
            for (member, score) in z.to_vec(false) {
                out.push(member);
                out.push(d2string(score));
            }
            ScanStep::Whole
        }
        Some(d) => ScanStep::Bucket(d.scan(cursor, |k, v| {
            out.push(k.to_vec());
            out.push(d2string(*v));
        })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: ZSetLimits = ZSetLimits {
        max_listpack_entries: 128,
        max_listpack_value: 64,
    };

    #[test]
    fn zset_listpack_converts_at_129_members() {
        let mut z = zset_type_create(&LIMITS, 1);
        for i in 0..128 {
            let (o, _) = z.add(
                &LIMITS,
                i as f64,
                format!("m{i}").as_bytes(),
                ZAddFlags::default(),
            );
            assert_eq!(o, ZAddOut::Added);
        }
        assert_eq!(z.encoding_name(), "listpack");
        z.add(&LIMITS, 0.5, b"x", ZAddFlags::default());
        assert_eq!(z.encoding_name(), "skiplist");
        assert_eq!(z.len(), 129);
        assert_eq!(z.rank(b"x", false), Some((1, 0.5)));
        assert!(z.remove(b"x"));
        assert_eq!(z.encoding_name(), "skiplist", "no conversion back on ZREM");
    }

    #[test]
    fn zset_listpack_keeps_order_and_scores() {
        let mut z = zset_type_create(&LIMITS, 1);
        for (s, e) in [
            (2.5, "b"),
            (1.0, "a"),
            (2.5, "a2"),
            (-1e300, "neg"),
            (f64::INFINITY, "inf"),
        ] {
            z.add(&LIMITS, s, e.as_bytes(), ZAddFlags::default());
        }
        let v: Vec<_> = z
            .to_vec(false)
            .into_iter()
            .map(|(e, s)| (String::from_utf8(e).unwrap(), s))
            .collect();
        assert_eq!(v[0], ("neg".into(), -1e300));
        assert_eq!(v[1], ("a".into(), 1.0));
        assert_eq!(v[2], ("a2".into(), 2.5));
        assert_eq!(v[4], ("inf".into(), f64::INFINITY));
        let incr = ZAddFlags {
            incr: true,
            ..Default::default()
        };
        assert_eq!(z.add(&LIMITS, 10.0, b"a", incr), (ZAddOut::Updated, 11.0));
        assert_eq!(z.rank(b"a", false), Some((3, 11.0)));
    }

    #[test]
    fn zset_store_result_shrinks_to_listpack() {
        let pairs: Vec<_> = (0..10)
            .map(|i| (format!("m{i}").into_bytes(), i as f64))
            .collect();
        assert_eq!(zset_from_pairs(&LIMITS, &pairs).encoding_name(), "listpack");
        let big = vec![(vec![b'x'; 65], 1.0)];
        assert_eq!(zset_from_pairs(&LIMITS, &big).encoding_name(), "skiplist");
    }

    #[test]
    fn zset_d2string_matches_redis() {
        assert_eq!(d2string(3.0), b"3");
        assert_eq!(d2string(0.1), b"0.10000000000000001");
        assert_eq!(d2string(1.5), b"1.5");
        assert_eq!(d2string(1e300), b"1.0000000000000001e+300");
        assert_eq!(d2string(-0.0), b"0", "-0 takes the integer path");
    }

    #[test]
    fn zset_parse_ranges() {
        let r = zsl_parse_range(b"(1.5", b"+inf").unwrap();
        assert!(r.minex && !r.maxex && r.max == f64::INFINITY);
        assert!(zsl_parse_range(b"x", b"1").is_none());
        assert!(zsl_parse_range(b"nan", b"1").is_none());
        assert!(zsl_parse_lex_range(b"-", b"(b").is_some());
        assert!(zsl_parse_lex_range(b"a", b"+").is_none());
        assert!(zsl_parse_lex_range(b"-x", b"+").is_none());
    }
}
