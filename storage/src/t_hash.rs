//! The hash type API (Redis's t_hash.c `hashType*` functions).
//!
//! A hash has two encodings:
//! * `listpack`: field, value, field, value, ... in one `Listpack`. Lookups
//!   are linear scans (`lpFind` with skip 1 visits only the fields), which is
//!   faster than hashing for a few hundred short entries and costs no
//!   per-entry allocation.
//! * `hashtable`: a `Dict<Sds>`, fields as keys and values as individually
//!   allocated `Box<[u8]>`s (Redis's two sds strings per dictEntry).
//!
//! A hash starts as a listpack and is converted, once and never back, when
//! it grows past `hash-max-listpack-entries` fields or receives a field or
//! value longer than `hash-max-listpack-value` bytes. Every such decision
//! goes through `hash_type_try_conversion` (the thresholds come in as a
//! `HashLimits` read from the server config), and the conversion itself
//! is `hash_type_convert`: a breakpoint there sees every switch.
//!
//! Commands never look inside an encoding: they ask this module and reply
//! with `LpEntry` values (a string slice or a listpack integer).

use crate::dict::{Dict, Sds};
use crate::listpack::{self, lp_safe_to_add, Listpack, LpEntry};
use crate::object::ScanStep;

/// The two hash encodings (OBJ_ENCODING_LISTPACK / OBJ_ENCODING_HT).
#[derive(Debug)]
///
/// The hashtable is boxed: a `Dict` struct is 64 bytes, and an enum is as
/// big as its biggest variant, so an inline one would make every key of the
/// keyspace (strings included) pay for it. A hashtable hash is big anyway;
/// one more pointer is nothing (Redis's robj->ptr points at the dict too).
pub enum HashValue {
    Listpack(Listpack),
    Hashtable(Box<Dict<Sds>>),
}

/// The conversion thresholds, from the server config.
#[derive(Debug, Clone, Copy)]
pub struct HashLimits {
    /// hash-max-listpack-entries (default 512): more fields than this and
    /// the linear scans of a listpack stop paying off.
    pub max_listpack_entries: usize,
    /// hash-max-listpack-value (default 64): a longer field or value
    /// converts the hash (long strings make every scan and memmove slow).
    pub max_listpack_value: usize,
}

impl Default for HashLimits {
    fn default() -> Self {
        HashLimits {
            max_listpack_entries: 512,
            max_listpack_value: 64,
        }
    }
}

/// createHashObject: an empty listpack hash.
pub fn hash_type_create() -> HashValue {
    HashValue::Listpack(Listpack::new())
}

impl HashValue {
    /// OBJECT ENCODING's name for this encoding.
    pub fn encoding_name(&self) -> &'static str {
        match self {
            HashValue::Listpack(_) => "listpack",
            HashValue::Hashtable(_) => "hashtable",
        }
    }
}

/// hashTypeTryConversion + the entry-count check of hashTypeSet: the one
/// place that owns both thresholds. `args` are the strings about to be
/// added (fields and values); call it with `&[]` after an insert to check
/// the count. Converts a listpack to a hashtable when:
/// * any string is longer than `max_listpack_value`, or
/// * the listpack would grow past LISTPACK_MAX_SAFETY_SIZE, or
/// * it already holds more than `max_listpack_entries` fields.
pub fn hash_type_try_conversion(h: &mut HashValue, args: &[&[u8]], limits: &HashLimits) {
    let HashValue::Listpack(lp) = h else { return };
    let mut sum = 0usize;
    for a in args {
        if a.len() > limits.max_listpack_value {
            let why = HashConvWhy::LongString {
                len: a.len(),
                limit: limits.max_listpack_value,
            };
            hash_type_convert(h, why);
            return;
        }
        sum += a.len();
    }
    if !lp_safe_to_add(Some(lp), sum) {
        hash_type_convert(h, HashConvWhy::SafetySize);
    } else if lp.len() / 2 > limits.max_listpack_entries {
        let why = HashConvWhy::Entries {
            limit: limits.max_listpack_entries,
        };
        hash_type_convert(h, why);
    }
}

/// Why a hash converts, for the encoding-transition log
/// (storage/src/encoding_log.rs).
#[derive(Clone, Copy, Debug)]
pub enum HashConvWhy {
    /// A field or value longer than hash-max-listpack-value.
    LongString { len: usize, limit: usize },
    /// More fields than hash-max-listpack-entries.
    Entries { limit: usize },
    /// The listpack would pass LISTPACK_MAX_SAFETY_SIZE.
    SafetySize,
    /// An RDB file or a RESTORE payload past the limits.
    Load,
}

/// hashTypeConvert (listpack -> hashtable): every pair becomes a dict
/// entry; the dict is presized so the conversion does not rehash.
pub fn hash_type_convert(h: &mut HashValue, why: HashConvWhy) {
    let HashValue::Listpack(lp) = h else { return };
    if crate::encoding_log::on() {
        let fields = lp.len() / 2;
        let (size, trigger) = match why {
            HashConvWhy::LongString { len, limit } => (
                len as u64,
                format!("a {len}-byte string > hash-max-listpack-value {limit}"),
            ),
            HashConvWhy::Entries { limit } => (
                fields as u64,
                format!("{fields} fields > hash-max-listpack-entries {limit}"),
            ),
            HashConvWhy::SafetySize => (
                lp.bytes() as u64,
                "the listpack would pass LISTPACK_MAX_SAFETY_SIZE".to_string(),
            ),
            HashConvWhy::Load => (fields as u64, "loaded past the limits".to_string()),
        };
        crate::encoding_log::record("hash", "listpack", "hashtable", size, trigger);
    }
    let mut d: Dict<Sds> = Dict::new();
    d.expand(lp.len() / 2);
    for (field, value) in HashIter::listpack(lp) {
        d.insert(
            field.to_vec().into_boxed_slice(),
            value.to_vec().into_boxed_slice(),
        );
    }
    *h = HashValue::Hashtable(Box::new(d));
}

/// hashTypeLength: number of fields.
pub fn hash_type_length(h: &HashValue) -> usize {
    match h {
        HashValue::Listpack(lp) => lp.len() / 2,
        HashValue::Hashtable(d) => d.len(),
    }
}

/// The listpack offset of `field`'s value, if the field is there
/// (hashTypeGetFromListpack: lpFind over fields, then lpNext).
fn listpack_value_pos(lp: &Listpack, field: &[u8]) -> Option<usize> {
    let f = lp.find(lp.first()?, field, 1)?;
    lp.next(f)
}

/// hashTypeGetValue: the value of `field`. Takes `&mut` because a dict
/// lookup does a rehash step, as dictFind does.
pub fn hash_type_get<'a>(h: &'a mut HashValue, field: &[u8]) -> Option<LpEntry<'a>> {
    match h {
        HashValue::Listpack(lp) => listpack_value_pos(lp, field).map(|v| lp.get(v)),
        HashValue::Hashtable(d) => d.find(field).map(|v| LpEntry::Str(&v[..])),
    }
}

/// hashTypeExists.
pub fn hash_type_exists(h: &mut HashValue, field: &[u8]) -> bool {
    hash_type_get(h, field).is_some()
}

/// hashTypeGetValueLength (HSTRLEN): 0 when the field is missing.
pub fn hash_type_get_value_length(h: &mut HashValue, field: &[u8]) -> usize {
    hash_type_get(h, field).map_or(0, |v| v.len())
}

/// hashTypeSet: add or overwrite `field`. Returns true on update, false
/// on insert. Long strings convert first (needed by HINCRBY*, a no-op after
/// the commands' own `hash_type_try_conversion`); the field count is
/// checked after the insert.
pub fn hash_type_set(h: &mut HashValue, field: &[u8], value: &[u8], limits: &HashLimits) -> bool {
    if let HashValue::Listpack(_) = h {
        let len = field.len().max(value.len());
        if len > limits.max_listpack_value {
            let why = HashConvWhy::LongString {
                len,
                limit: limits.max_listpack_value,
            };
            hash_type_convert(h, why);
        }
    }
    let update = match h {
        HashValue::Listpack(lp) => match listpack_value_pos(lp, field) {
            Some(v) => {
                lp.replace(v, value);
                true
            }
            None => {
                lp.append(field);
                lp.append(value);
                false
            }
        },
        HashValue::Hashtable(d) => match d.find(field) {
            Some(v) => {
                *v = value.into();
                true
            }
            None => {
                d.insert(field.into(), value.into());
                false
            }
        },
    };
    hash_type_try_conversion(h, &[], limits);
    update
}

/// hashTypeDelete: true if the field was there. A hashtable is shrunk
/// when it falls under 10% full (htNeedsResize / dictResize).
pub fn hash_type_delete(h: &mut HashValue, field: &[u8]) -> bool {
    match h {
        HashValue::Listpack(lp) => {
            let Some(f) = lp.first().and_then(|p| lp.find(p, field, 1)) else {
                return false;
            };
            // lpDeleteRangeWithEntry(.., 2): field and value together.
            lp.delete_range_at(f, 2);
            true
        }
        HashValue::Hashtable(d) => {
            if d.remove(field).is_none() {
                return false;
            }
            if d.needs_resize() {
                d.resize_to_fit();
            }
            true
        }
    }
}

/// hashTypeDup (COPY): same encoding, fresh allocations.
pub fn hash_type_dup(h: &HashValue) -> HashValue {
    match h {
        HashValue::Listpack(lp) => HashValue::Listpack(lp.clone()),
        HashValue::Hashtable(d) => {
            let mut nd: Dict<Sds> = Dict::new();
            nd.expand(d.len());
            for (k, v) in d.iter() {
                nd.insert(k.clone(), v.clone());
            }
            HashValue::Hashtable(Box::new(nd))
        }
    }
}

/// hashTypeInitIterator / hashTypeNext: (field, value) pairs in encoding
/// order (listpack order, or dict iteration order).
pub fn hash_type_iter(h: &HashValue) -> HashIter<'_> {
    match h {
        HashValue::Listpack(lp) => HashIter::listpack(lp),
        HashValue::Hashtable(d) => HashIter {
            inner: HashIterInner::Hashtable(d.iter()),
        },
    }
}

/// One step of HSCAN, emitting field then value: a listpack whole, or one
/// dict bucket of a hashtable (with its expansions while rehashing).
// redis: db.c scanGenericCommand (OBJ_HASH cases)
pub fn hash_type_scan(h: &HashValue, cursor: u64, out: &mut Vec<Vec<u8>>) -> ScanStep {
    match h {
        HashValue::Listpack(_) => {
            for (f, v) in hash_type_iter(h) {
                out.push(f.to_vec());
                out.push(v.to_vec());
            }
            ScanStep::Whole
        }
        HashValue::Hashtable(d) => ScanStep::Bucket(d.scan(cursor, |k, v| {
            out.push(k.to_vec());
            out.push(v.to_vec());
        })),
    }
}

/// hashTypeRandomElement: one random pair (dictGetFairRandomKey or
/// lpRandomPair), None for an empty hash.
pub fn hash_type_random_element(h: &mut HashValue) -> Option<(LpEntry<'_>, LpEntry<'_>)> {
    match h {
        HashValue::Listpack(lp) => {
            let n = lp.len() / 2;
            listpack::lp_random_pair(lp, n)
        }
        HashValue::Hashtable(d) => d
            .random_entry()
            .map(|(k, v)| (LpEntry::Str(&k[..]), LpEntry::Str(&v[..]))),
    }
}

/// The iterator behind `hash_type_iter`.
pub struct HashIter<'a> {
    inner: HashIterInner<'a>,
}

enum HashIterInner<'a> {
    Listpack(&'a Listpack, Option<usize>),
    Hashtable(crate::dict::Iter<'a, Sds>),
}

impl<'a> HashIter<'a> {
    fn listpack(lp: &'a Listpack) -> Self {
        HashIter {
            inner: HashIterInner::Listpack(lp, lp.first()),
        }
    }
}

impl<'a> Iterator for HashIter<'a> {
    type Item = (LpEntry<'a>, LpEntry<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.inner {
            HashIterInner::Listpack(lp, pos) => {
                let f = (*pos)?;
                let v = lp.next(f)?;
                *pos = lp.next(v);
                Some((lp.get(f), lp.get(v)))
            }
            HashIterInner::Hashtable(it) => it
                .next()
                .map(|(k, v)| (LpEntry::Str(&k[..]), LpEntry::Str(&v[..]))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(entries: usize, value: usize) -> HashLimits {
        HashLimits {
            max_listpack_entries: entries,
            max_listpack_value: value,
        }
    }

    #[test]
    fn hash_set_get_delete_listpack() {
        let l = HashLimits::default();
        let mut h = hash_type_create();
        assert!(!hash_type_set(&mut h, b"a", b"1", &l));
        assert!(!hash_type_set(&mut h, b"b", b"x", &l));
        assert!(hash_type_set(&mut h, b"a", b"2", &l));
        assert_eq!(hash_type_get(&mut h, b"a"), Some(LpEntry::Int(2)));
        // "1" is a value, never a field.
        assert_eq!(hash_type_get(&mut h, b"x"), None);
        assert_eq!(hash_type_length(&h), 2);
        assert!(hash_type_delete(&mut h, b"a"));
        assert!(!hash_type_delete(&mut h, b"a"));
        assert_eq!(hash_type_length(&h), 1);
        assert_eq!(h.encoding_name(), "listpack");
    }

    #[test]
    fn hash_converts_past_entry_limit() {
        let l = limits(4, 64);
        let mut h = hash_type_create();
        for i in 0..4 {
            hash_type_set(&mut h, format!("f{i}").as_bytes(), b"v", &l);
        }
        assert_eq!(h.encoding_name(), "listpack");
        hash_type_set(&mut h, b"f4", b"v", &l);
        assert_eq!(h.encoding_name(), "hashtable");
        assert_eq!(hash_type_length(&h), 5);
        assert_eq!(hash_type_get(&mut h, b"f0"), Some(LpEntry::Str(b"v")));
    }

    #[test]
    fn hash_converts_on_long_value() {
        let l = limits(512, 3);
        let mut h = hash_type_create();
        hash_type_set(&mut h, b"f", b"abc", &l);
        assert_eq!(h.encoding_name(), "listpack");
        hash_type_try_conversion(&mut h, &[b"f", b"abcd"], &l);
        assert_eq!(h.encoding_name(), "hashtable");
        let d = hash_type_dup(&h);
        assert_eq!(hash_type_iter(&d).count(), 1);
    }
}
