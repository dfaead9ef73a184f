//! OBJECT and MEMORY USAGE (Redis's object.c): looking at a value from the
//! inside -- its encoding, its reference count, its LRU clock, its size.
//!
//! These commands are introspection, so they try not to disturb what they
//! look at. In Redis 7.0 the OBJECT subcommands look the key up with
//! lookupKeyReadWithFlags(LOOKUP_NOTOUCH | LOOKUP_NONOTIFY): a logically
//! expired key IS deleted and a hit or miss IS counted, but the object's LRU
//! clock is left alone. MEMORY USAGE (and DEBUG OBJECT) use a raw dictFind
//! instead: no expiry, no statistics.
//!
//! MEMORY USAGE reproduces Redis's arithmetic rather than measuring our own
//! allocations, so a workshop can compare both servers number for number.
//! For a string key it is (objectComputeSize + key sds + dictEntry):
//!
//! | part            | Redis                                   | bytes                          |
//! |-----------------|-----------------------------------------|--------------------------------|
//! | `int` value     | the robj, the number lives in its `ptr` | 16                             |
//! | `embstr` value  | robj + sdshdr8 + bytes + NUL, one block | class(16 + 3 + len + 1)        |
//! | `raw` value     | robj + separately allocated sds         | 16 + class(hdr + alloc + 1)    |
//! | key             | an sds                                  | class(hdr(len) + len + 1)      |
//! | dict entry      | struct dictEntry                        | 24                             |
//!
//! `class(n)` is the jemalloc size class n is rounded up to and `hdr` the
//! sds header size for that length (1, 3, 5, 9 or 17 bytes). For `raw` the
//! sds `alloc` is our Vec's capacity (see `sds_zmalloc_size` for how the
//! header is guessed): exact for strings built in one go (SET, DEBUG
//! POPULATE, COPY); after APPEND/SETRANGE/SETBIT it matches Redis only as
//! far as the string layer grows its Vec the way sdsMakeRoomFor grows an
//! sds (doubling below 1 MB, reserved exactly).

use storage::object::{RObj, StrValue, Value, OBJ_SHARED_INTEGERS, OBJ_SHARED_REFCOUNT};

use crate::networking::Client;
use crate::server::Server;
use crate::shared;

/// sizeof(robj): type/encoding/lru bitfields (4) + refcount (4) + ptr (8).
pub const ROBJ_SIZE: usize = 16;

/// sizeof(dictEntry): key, value and next pointers.
pub const DICT_ENTRY_SIZE: usize = 24;

/// OBJ_COMPUTE_SIZE_DEF_SAMPLES: MEMORY USAGE samples 5 elements of an
/// aggregate by default (strings have nothing to sample).
pub const OBJ_COMPUTE_SIZE_DEF_SAMPLES: i64 = 5;

/// LRU_CLOCK_RESOLUTION: the LRU clock ticks once per 1000 ms.
pub const LRU_CLOCK_RESOLUTION: u64 = 1000;

// ---- helpers shared with DEBUG OBJECT ----

/// objectCommandLookup: a read lookup that expires the key and counts the
/// hit/miss, without touching the LRU clock (OBJECT IDLETIME would
/// otherwise always answer 0). The key is `argv[2]`.
pub fn object_command_lookup<'a>(srv: &'a mut Server, c: &Client) -> Option<&'a mut RObj> {
    // LOOKUP_NOTOUCH | LOOKUP_NONOTIFY: no touch, and no
    // keymiss event (OBJECT is introspection, not a read of the data).
    crate::db::lookup_key_read_with_flags(
        srv,
        c.db,
        c.arg(2),
        crate::db::LOOKUP_NOTOUCH | crate::db::LOOKUP_NONOTIFY,
    )
}

/// The refcount Redis would report. Values 0..9999 stored as integers are
/// Redis's shared integer objects (OBJ_SHARED_INTEGERS), which report
/// INT_MAX; every other value has exactly one owner, the keyspace.
pub fn object_refcount(o: &RObj) -> i64 {
    match &o.value {
        Value::Str(StrValue::Int(v)) if (0..OBJ_SHARED_INTEGERS).contains(v) => OBJ_SHARED_REFCOUNT,
        _ => 1,
    }
}

/// estimateObjectIdleTime: milliseconds since the object's `lru` stamp,
/// on the 24-bit seconds clock (which wraps every ~194 days).
pub fn estimate_object_idle_time(lruclock: u32, lru: u32) -> u64 {
    let (now, lru) = (u64::from(lruclock), u64::from(lru));
    let max = u64::from(storage::object::LRU_CLOCK_MAX);
    if now >= lru {
        (now - lru) * LRU_CLOCK_RESOLUTION
    } else {
        (now + (max - lru)) * LRU_CLOCK_RESOLUTION
    }
}

/// objectSetLRUOrLFU: the access information an RDB file or RESTORE gives
/// a new object. Under an LFU policy `lfu_freq` (0..255, -1 = none) becomes
/// the counter; otherwise `lru_idle` (seconds scaled by `lru_multiplier`/
/// 1000, -1 = none) is turned into an absolute LRU stamp before
/// `lru_clock`. Returns whether the field was set.
pub fn object_set_lru_or_lfu(
    srv: &Server,
    o: &mut RObj,
    lfu_freq: i64,
    lru_idle: i64,
    lru_clock: i64,
    lru_multiplier: i64,
) -> bool {
    if crate::evict::policy_is_lfu(srv.config.maxmemory_policy) {
        if lfu_freq >= 0 {
            let now_min = crate::evict::lfu_get_time_in_minutes(crate::server::mstime());
            o.lru = (now_min << 8) | (lfu_freq.min(255) as u32);
            return true;
        }
    } else if lru_idle >= 0 {
        let idle = lru_idle.saturating_mul(lru_multiplier) / LRU_CLOCK_RESOLUTION as i64;
        let max = i64::from(storage::object::LRU_CLOCK_MAX);
        let mut abs = lru_clock - idle;
        // The clock wraps: an idle time longer than the clock goes half-way
        // round, so it keeps reading as "very idle" for a long time.
        if abs < 0 {
            abs = (lru_clock + max / 2) % max;
        }
        o.lru = abs as u32;
        return true;
    }
    false
}

/// je_malloc_usable_size of an `n`-byte request: jemalloc's size classes on
/// x86-64 (8, then steps of 16 up to 128, then four classes per doubling:
/// 160 192 224 256, 320 384 448 512, ...).
pub fn jemalloc_size_class(n: usize) -> usize {
    if n <= 8 {
        return 8;
    }
    if n <= 128 {
        return n.div_ceil(16) * 16;
    }
    // The doubling [2^k, 2^(k+1)) holding n-1 is cut in 4 steps of 2^(k-2).
    let lg = usize::BITS - 1 - (n - 1).leading_zeros();
    let step = 1usize << (lg - 2);
    n.div_ceil(step) * step
}

/// sdsHdrSize(sdsReqType(len)): the sds header for a string of `len` bytes.
pub fn sds_hdr_size(len: usize) -> usize {
    match len {
        0..=31 => 1,              // sdshdr5
        32..=255 => 3,            // sdshdr8
        256..=65535 => 5,         // sdshdr16
        65536..=0xffff_ffff => 9, // sdshdr32
        _ => 17,                  // sdshdr64
    }
}

/// sdsZmallocSize of an sds holding `len` bytes with room for `alloc`
/// (header, bytes and the NUL terminator, rounded to the allocator's class).
///
/// An sds made in one go (sdsnewlen) has alloc == len and a header chosen
/// by length, sdshdr5 included. One that grew (sdsMakeRoomFor) has spare
/// room and never an sdshdr5: growth always switches to sdshdr8 or wider.
pub fn sds_zmalloc_size(len: usize, alloc: usize) -> usize {
    let hdr = if alloc == len && len > 0 {
        sds_hdr_size(len)
    } else {
        // "" from sdsnewlen, and any grown sds: at least an sdshdr8.
        sds_hdr_size(alloc).max(3)
    };
    jemalloc_size_class(hdr + alloc + 1)
}

/// objectComputeSize: bytes used by the value (no key, no dict entry).
pub fn object_compute_size(o: &RObj, _samples: i64) -> usize {
    match &o.value {
        // The integer is stored in the robj's pointer field.
        Value::Str(StrValue::Int(_)) => ROBJ_SIZE,
        // robj and sdshdr8 + bytes + NUL in one allocation.
        Value::Str(StrValue::Embstr(b)) => jemalloc_size_class(ROBJ_SIZE + 3 + b.len() + 1),
        // robj, then the sds on its own.
        Value::Str(StrValue::Raw(v)) => ROBJ_SIZE + sds_zmalloc_size(v.len(), v.capacity()),
        Value::Set(s) => crate::t_set::set_object_compute_size(s, _samples),
        Value::List(ql) => crate::t_list::list_object_compute_size(ql, _samples),
        Value::ZSet(z) => crate::t_zset::zset_compute_size(z, _samples),
        Value::Hash(h) => crate::t_hash::hash_object_compute_size(h, _samples),
        Value::Stream(s) => crate::t_stream::stream_object_compute_size(s, _samples),
    }
}

/// MEMORY USAGE's total for one key: value + key sds + dict entry.
pub fn key_memory_usage(key: &[u8], o: &RObj, samples: i64) -> usize {
    object_compute_size(o, samples) + sds_zmalloc_size(key.len(), key.len()) + DICT_ENTRY_SIZE
}

// ---- OBJECT ----

/// OBJECT ENCODING key
// redis: object.c objectCommand (encoding)
pub fn object_encoding_command(srv: &mut Server, c: &mut Client) {
    match object_command_lookup(srv, c).map(|o| o.encoding_name()) {
        Some(enc) => c.add_reply_bulk(enc.as_bytes()),
        None => c.add_reply_null(),
    }
}

/// OBJECT REFCOUNT key
// redis: object.c objectCommand (refcount)
pub fn object_refcount_command(srv: &mut Server, c: &mut Client) {
    // With maxmemory and an LRU/LFU policy Redis stops sharing integers
    // (evict.rs); redis-lite decides when asked, not when the value is set.
    let shared = crate::evict::can_use_shared_integers(srv);
    match object_command_lookup(srv, c).map(|o| if shared { object_refcount(o) } else { 1 }) {
        Some(n) => c.add_reply_integer(n),
        None => c.add_reply_null(),
    }
}

/// OBJECT IDLETIME key
// redis: object.c objectCommand (idletime)
pub fn object_idletime_command(srv: &mut Server, c: &mut Client) {
    // LRU_CLOCK(): with hz >= 1 the cron-refreshed clock is precise enough.
    let lruclock = srv.lruclock;
    let Some(lru) = object_command_lookup(srv, c).map(|o| o.lru) else {
        return c.add_reply_null();
    };
    // Under an LFU policy `lru` holds the LFU counter, not an LRU stamp.
    if crate::evict::policy_is_lfu(srv.config.maxmemory_policy) {
        return c.add_reply_error(
            "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.",
        );
    }
    let idle_ms = estimate_object_idle_time(lruclock, lru);
    c.add_reply_integer((idle_ms / 1000) as i64);
}

/// OBJECT FREQ key
// redis: object.c objectCommand (freq)
pub fn object_freq_command(srv: &mut Server, c: &mut Client) {
    let Some(lru) = object_command_lookup(srv, c).map(|o| o.lru) else {
        return c.add_reply_null();
    };
    // Without an allkeys-lfu / volatile-lfu policy `lru` holds no counter.
    if !crate::evict::policy_is_lfu(srv.config.maxmemory_policy) {
        return c.add_reply_error(
            "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.",
        );
    }
    // LFUDecrAndReturn: the key may not have been accessed for a while,
    // and the counter only decays when it is.
    let now = crate::evict::lfu_get_time_in_minutes(srv.cmd_time_snapshot);
    let freq = crate::evict::lfu_decr_and_return(lru, now, srv.config.lfu_decay_time);
    c.add_reply_integer(i64::from(freq));
}

/// OBJECT HELP
// redis: object.c objectCommand (help)
pub fn object_help_command(_srv: &mut Server, c: &mut Client) {
    c.add_reply_help(
        "OBJECT",
        &[
            "ENCODING <key>",
            "    Return the kind of internal representation used in order to store the value",
            "    associated with a <key>.",
            "FREQ <key>",
            "    Return the access frequency index of the <key>. The returned integer is",
            "    proportional to the logarithm of the recent access frequency of the key.",
            "IDLETIME <key>",
            "    Return the idle time of the <key>, that is the approximated number of",
            "    seconds elapsed since the last access to the key.",
            "REFCOUNT <key>",
            "    Return the number of references of the value associated with the specified",
            "    <key>.",
        ],
    );
}

// ---- MEMORY ----

/// MEMORY USAGE key [SAMPLES count]
// redis: object.c memoryCommand (usage)
pub fn memory_usage_command(srv: &mut Server, c: &mut Client) {
    // Options first: a bad option is an error even for a missing key.
    let mut samples = OBJ_COMPUTE_SIZE_DEF_SAMPLES;
    let mut j = 3;
    while j < c.argc() {
        if !(c.arg(j).eq_ignore_ascii_case(b"samples") && j + 1 < c.argc()) {
            return c.add_reply_syntax_error();
        }
        let Some(n) = storage::util::string2ll(c.arg(j + 1)) else {
            return c.add_reply_error(shared::NOT_INTEGER_ERR);
        };
        if n < 0 {
            return c.add_reply_syntax_error();
        }
        // SAMPLES 0 means "look at every element".
        samples = if n == 0 { i64::MAX } else { n };
        j += 2;
    }
    // A raw lookup: no lazy expiry, no LRU touch.
    let key = c.argv[2].clone();
    match srv.dbs[c.db].dict.find(&key) {
        Some(o) => {
            let usage = key_memory_usage(&key, o, samples);
            c.add_reply_integer(usage as i64);
        }
        None => c.add_reply_null(),
    }
}

/// MEMORY HELP
// redis: object.c memoryCommand (help)
pub fn memory_help_command(_srv: &mut Server, c: &mut Client) {
    c.add_reply_help(
        "MEMORY",
        &[
            "DOCTOR",
            "    Return memory problems reports.",
            "MALLOC-STATS",
            "    Return internal statistics report from the memory allocator.",
            "PURGE",
            "    Attempt to purge dirty pages for reclamation by the allocator.",
            "STATS",
            "    Return information about the memory usage of the server.",
            "USAGE <key> [SAMPLES <count>]",
            "    Return memory in bytes used by <key> and its value. Nested values are",
            "    sampled up to <count> times (default: 5, 0 means sample all).",
        ],
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use storage::t_string::{create_string_object, create_string_object_encoded};

    fn obj(v: StrValue) -> RObj {
        RObj::new(Value::Str(v), 0)
    }

    #[test]
    fn jemalloc_classes() {
        let cases = [
            (1, 8),
            (8, 8),
            (9, 16),
            (21, 32),
            (33, 48),
            (64, 64),
            (104, 112),
            (128, 128),
        ];
        for (n, class) in cases {
            assert_eq!(jemalloc_size_class(n), class, "n={n}");
        }
        let cases = [
            (129, 160),
            (204, 224),
            (256, 256),
            (259, 320),
            (1004, 1024),
            (5006, 5120),
            (40006, 40960),
        ];
        for (n, class) in cases {
            assert_eq!(jemalloc_size_class(n), class, "n={n}");
        }
    }

    // Numbers measured with MEMORY USAGE on Redis 7.0.15 (jemalloc).
    #[test]
    fn memory_usage_matches_redis_for_strings() {
        let k1 = b"k";
        assert_eq!(
            key_memory_usage(k1, &obj(create_string_object_encoded(b"1")), 5),
            48
        );
        assert_eq!(
            key_memory_usage(
                k1,
                &obj(create_string_object_encoded(b"9223372036854775807")),
                5
            ),
            48
        );
        assert_eq!(
            key_memory_usage(k1, &obj(create_string_object(b"x")), 5),
            64
        );
        assert_eq!(
            key_memory_usage(k1, &obj(create_string_object(&[b'x'; 20])), 5),
            80
        );
        assert_eq!(
            key_memory_usage(k1, &obj(create_string_object(&[b'x'; 44])), 5),
            96
        );
        let raw = |n: usize| obj(create_string_object(&vec![b'x'; n]));
        assert_eq!(key_memory_usage(k1, &raw(45), 5), 112);
        assert_eq!(key_memory_usage(k1, &raw(64), 5), 128);
        assert_eq!(key_memory_usage(k1, &raw(100), 5), 160);
        assert_eq!(key_memory_usage(k1, &raw(200), 5), 272);
        assert_eq!(key_memory_usage(k1, &raw(1000), 5), 1072);
        assert_eq!(key_memory_usage(k1, &raw(5000), 5), 5168);
        assert_eq!(key_memory_usage(k1, &raw(40000), 5), 41008);
        // Longer keys: sdshdr5 / 8 / 16 headers.
        let one = obj(create_string_object_encoded(b"1"));
        assert_eq!(key_memory_usage(&[b'k'; 31], &one, 5), 88);
        assert_eq!(key_memory_usage(&[b'k'; 40], &one, 5), 88);
        assert_eq!(key_memory_usage(&[b'k'; 255], &one, 5), 360);
        assert_eq!(key_memory_usage(&[b'k'; 256], &one, 5), 360);
    }

    #[test]
    fn shared_integers_report_int_max_refcount() {
        assert_eq!(object_refcount(&obj(StrValue::Int(0))), OBJ_SHARED_REFCOUNT);
        assert_eq!(
            object_refcount(&obj(StrValue::Int(9999))),
            OBJ_SHARED_REFCOUNT
        );
        assert_eq!(object_refcount(&obj(StrValue::Int(10000))), 1);
        assert_eq!(object_refcount(&obj(StrValue::Int(-1))), 1);
        assert_eq!(object_refcount(&obj(create_string_object(b"abc"))), 1);
    }

    #[test]
    fn idle_time_handles_clock_wrap() {
        assert_eq!(estimate_object_idle_time(100, 90), 10_000);
        let max = storage::object::LRU_CLOCK_MAX;
        assert_eq!(estimate_object_idle_time(5, max - 5), 10_000);
    }
}
