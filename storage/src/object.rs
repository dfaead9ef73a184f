//! The Redis object (`robj` in Redis's server.h / object.c).
//!
//! Every value in the keyspace is an `RObj`: a value of one of Redis's types
//! (string, list, set, hash, zset) in one of that type's *encodings*, plus the
//! 24-bit `lru` field that Redis keeps on every object for maxmemory eviction
//! (LRU clock in seconds, or the LFU counter and decrement time).
//!
//! The encoding is what makes Redis fast and what makes some commands slow:
//! a 3-byte string stored as an `int` costs no allocation, a 1M-member set
//! stored as a hashtable costs a million of them (and DEL frees them all).
//! The type APIs (`t_string`, ...) choose encodings; commands never look
//! inside an encoding themselves.

/// OBJ_ENCODING_EMBSTR_SIZE_LIMIT: strings up to 44 bytes are `embstr` in
/// Redis (object header and bytes in one 64-byte jemalloc allocation).
pub const OBJ_ENCODING_EMBSTR_SIZE_LIMIT: usize = 44;

/// OBJ_SHARED_INTEGERS: Redis keeps one shared object for each of 0..9999, so
/// `OBJECT REFCOUNT` of such a value reports `OBJ_SHARED_REFCOUNT`.
pub const OBJ_SHARED_INTEGERS: i64 = 10000;

/// OBJ_SHARED_REFCOUNT: the refcount Redis reports for shared objects (INT_MAX).
pub const OBJ_SHARED_REFCOUNT: i64 = i32::MAX as i64;

/// LRU_CLOCK_MAX: the `lru` field is 24 bits wide (LRU_BITS in server.h).
pub const LRU_CLOCK_MAX: u32 = (1 << 24) - 1;

/// The string encodings (OBJ_ENCODING_INT / EMBSTR / RAW).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StrValue {
    /// A decimal integer that fits in an i64: no allocation at all.
    Int(i64),
    /// A short string (<= 44 bytes), allocated once and never grown.
    Embstr(Box<[u8]>),
    /// A string that may grow in place (APPEND, SETRANGE, SETBIT).
    Raw(Vec<u8>),
}

/// The value part of an object. More types join as their issues land.
///
/// Its size is paid by every key: an `RObj` sits inside the keyspace's
/// `DictEntry`, and an enum is as big as its biggest variant. So no variant
/// is wider than a `Vec` (24 bytes, 32 with the tag): the big encodings
/// (hashtable sets and hashes, skiplist zsets, quicklists, streams) live
/// behind a `Box`, as they live behind `robj->ptr` in Redis, and the entry
/// stays in jemalloc's 64-byte class (the tests below pin it).
#[derive(Debug)]
pub enum Value {
    Str(StrValue),
    ZSet(crate::t_zset::ZSetValue),
    Set(crate::t_set::SetValue),
    Hash(crate::t_hash::HashValue),
    /// Every list is a quicklist in Redis 7.0.
    List(Box<crate::quicklist::Quicklist>),
    /// A stream: its one encoding is the radix tree of listpacks.
    Stream(Box<crate::t_stream::Stream>),
}

/// What one step of a collection's scan did: the two cases of Redis's
/// scanGenericCommand, decided by the encoding (which the server crate
/// never looks at).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScanStep {
    /// A hashtable encoding: one dict bucket (and, while rehashing, its
    /// expansions in the bigger table) was emitted; the next cursor, 0 at
    /// the end (dictScan).
    Bucket(u64),
    /// A compact encoding (intset, listpack) is small by construction: all
    /// of it was emitted at once, and the scan is over (cursor 0).
    Whole,
}

/// One scan step over a set, hash or sorted set value, appending what it
/// visits to `out`: members (set), field then value (hash), member then
/// score (zset). None for the types SCAN does not walk.
pub fn object_scan(value: &Value, cursor: u64, out: &mut Vec<Vec<u8>>) -> Option<ScanStep> {
    Some(match value {
        Value::Set(s) => crate::t_set::set_type_scan(s, cursor, out),
        Value::Hash(h) => crate::t_hash::hash_type_scan(h, cursor, out),
        Value::ZSet(z) => crate::t_zset::zset_type_scan(z, cursor, out),
        _ => return None,
    })
}

/// How many items one element of `value` puts in a scan reply: 2 for a
/// hash (field, value) and a sorted set (member, score), 1 otherwise.
/// SCAN's COUNT counts elements, so the collecting loop multiplies by this
/// (Redis: `count *= 2` for hashes and sorted sets).
pub fn object_scan_items_per_element(value: &Value) -> usize {
    match value {
        Value::Hash(_) | Value::ZSet(_) => 2,
        _ => 1,
    }
}

/// `robj`: a value plus Redis's per-object clock field.
#[derive(Debug)]
pub struct RObj {
    /// LRU clock (seconds, 24 bits) at the last access; the slot that
    /// maxmemory's sampled LRU/LFU eviction will read.
    pub lru: u32,
    pub value: Value,
}

impl RObj {
    pub fn new(value: Value, lru: u32) -> RObj {
        RObj { lru, value }
    }

    /// Name used by TYPE and by WRONGTYPE decisions.
    pub fn type_name(&self) -> &'static str {
        match self.value {
            Value::Str(_) => "string",
            Value::ZSet(_) => "zset",
            Value::Set(_) => "set",
            Value::Hash(_) => "hash",
            Value::List(_) => "list",
            Value::Stream(_) => "stream",
        }
    }

    /// Name used by OBJECT ENCODING (object.c strEncoding).
    pub fn encoding_name(&self) -> &'static str {
        match &self.value {
            Value::Str(StrValue::Int(_)) => "int",
            Value::Str(StrValue::Embstr(_)) => "embstr",
            Value::Str(StrValue::Raw(_)) => "raw",
            Value::ZSet(z) => z.encoding_name(),
            Value::Set(s) => crate::t_set::set_type_encoding_name(s),
            Value::Hash(h) => h.encoding_name(),
            Value::List(_) => "quicklist",
            Value::Stream(_) => "stream",
        }
    }

    /// The string value, if this object is a string.
    pub fn as_str(&self) -> Option<&StrValue> {
        match &self.value {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_str_mut(&mut self) -> Option<&mut StrValue> {
        match &mut self.value {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::size_of;

    /// Every key of the keyspace is one `DictEntry<RObj>` allocation (key
    /// pointer, object, next pointer), so its size is paid once per key.
    /// 64 bytes is a jemalloc class of its own; one byte more would cost 80
    /// (it was 104 -> 112 while a set's or hash's `Dict` sat inline).
    #[test]
    fn keyspace_entry_is_one_64_byte_class() {
        assert_eq!(crate::dict::Dict::<RObj>::entry_size(), 64);
        assert_eq!(size_of::<RObj>(), 40);
        assert_eq!(size_of::<Value>(), 32);
    }

    /// No variant of `Value` is bigger than a `Vec` (24 bytes): the big
    /// encodings (hashtable set / hash, skiplist zset, quicklist, stream)
    /// sit behind a pointer.
    #[test]
    fn value_variants_are_at_most_three_words() {
        assert_eq!(size_of::<StrValue>(), 24);
        assert_eq!(size_of::<crate::t_set::SetValue>(), 24);
        assert_eq!(size_of::<crate::t_hash::HashValue>(), 24);
        assert_eq!(size_of::<crate::t_zset::ZSetValue>(), 24);
    }
}
