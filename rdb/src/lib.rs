//! The RDB file format, version 10, as Redis 7.0.15 writes and reads it
//! (rdb.h, rdb.c). Pure: it reads from `std::io::Read`, writes to
//! `std::io::Write`, and builds or walks `storage`'s objects directly (a
//! listpack-encoded hash is written as its listpack blob, as Redis does).
//!
//! An RDB file:
//!
//! ```text
//! "REDIS0010"                          magic + 4-digit version
//! AUX redis-ver 7.0.15, AUX redis-bits 64, AUX ctime <unix>,
//! AUX used-mem <bytes>, AUX aof-base 0  (0xFA key value, each)
//! FUNCTION2 <library code>             (0xF5, once per library)
//! SELECTDB <n> RESIZEDB <keys> <expires>        for each non-empty db
//!   [EXPIRETIME_MS <i64 LE>] [IDLE <len> | FREQ <u8>] <type> <key> <value>
//! EOF (0xFF) <crc64 LE>                0 when rdbchecksum is off
//! ```
//!
//! Lengths use the 2-bit prefix scheme of `rdbSaveLen` (6/14/32/64-bit);
//! the prefix 11 marks a *special* string encoding: an 8/16/32-bit integer
//! or an LZF-compressed string. A DUMP payload is `<type> <value>` followed
//! by the 2-byte RDB version and a CRC64 of everything before it.
//!
//! Files: `save.rs` ~ rdbSave* (the writer), `load.rs` ~ rdbLoad* (the
//! reader, hostile-input safe), `ziplist.rs` (the older encodings that 7.0
//! still loads and converts), `dump.rs` (DUMP / RESTORE payloads).

pub mod dump;
pub mod load;
pub mod save;
pub mod ziplist;

pub use load::{Entry, LoadLimits, RdbReader};
pub use save::{KeyMeta, RdbWriter};

/// RDB_VERSION: what Redis 7.0 writes, and the newest it can read.
pub const RDB_VERSION: u16 = 10;

// Length encodings: the two high bits of the first byte (rdb.h).
/// RDB_6BITLEN: 00xxxxxx.
pub const RDB_6BITLEN: u8 = 0;
/// RDB_14BITLEN: 01xxxxxx xxxxxxxx (big endian).
pub const RDB_14BITLEN: u8 = 1;
/// RDB_32BITLEN: 0x80 then 4 bytes big endian.
pub const RDB_32BITLEN: u8 = 0x80;
/// RDB_64BITLEN: 0x81 then 8 bytes big endian.
pub const RDB_64BITLEN: u8 = 0x81;
/// RDB_ENCVAL: 11xxxxxx, a special encoding follows (see RDB_ENC_*).
pub const RDB_ENCVAL: u8 = 3;

/// RDB_ENC_INT8/16/32: an integer string in 1/2/4 bytes little endian.
pub const RDB_ENC_INT8: u8 = 0;
pub const RDB_ENC_INT16: u8 = 1;
pub const RDB_ENC_INT32: u8 = 2;
/// RDB_ENC_LZF: <compressed len> <original len> <LZF bytes>.
pub const RDB_ENC_LZF: u8 = 3;

// Object types (rdb.h RDB_TYPE_*). 7.0 writes only the ones marked (w).
pub const RDB_TYPE_STRING: u8 = 0; // (w)
pub const RDB_TYPE_LIST: u8 = 1;
pub const RDB_TYPE_SET: u8 = 2; // (w) hashtable set
pub const RDB_TYPE_ZSET: u8 = 3;
pub const RDB_TYPE_HASH: u8 = 4; // (w) hashtable hash
pub const RDB_TYPE_ZSET_2: u8 = 5; // (w) skiplist, binary double scores
pub const RDB_TYPE_MODULE_PRE_GA: u8 = 6;
pub const RDB_TYPE_MODULE_2: u8 = 7;
pub const RDB_TYPE_HASH_ZIPMAP: u8 = 9;
pub const RDB_TYPE_LIST_ZIPLIST: u8 = 10;
pub const RDB_TYPE_SET_INTSET: u8 = 11; // (w)
pub const RDB_TYPE_ZSET_ZIPLIST: u8 = 12;
pub const RDB_TYPE_HASH_ZIPLIST: u8 = 13;
pub const RDB_TYPE_LIST_QUICKLIST: u8 = 14;
pub const RDB_TYPE_STREAM_LISTPACKS: u8 = 15;
pub const RDB_TYPE_HASH_LISTPACK: u8 = 16; // (w)
pub const RDB_TYPE_ZSET_LISTPACK: u8 = 17; // (w)
pub const RDB_TYPE_LIST_QUICKLIST_2: u8 = 18; // (w)
pub const RDB_TYPE_STREAM_LISTPACKS_2: u8 = 19;

/// rdbIsObjectType: 0..=7 and 9..=19 (8 was never used).
pub fn rdb_is_object_type(t: u8) -> bool {
    t <= 7 || (9..=19).contains(&t)
}

// Opcodes: the "types" above 240 that are not keys.
/// RDB_OPCODE_FUNCTION2: one function library's code.
pub const RDB_OPCODE_FUNCTION2: u8 = 245;
/// RDB_OPCODE_FUNCTION: the 7.0-rc1/rc2 library format (name, engine, desc, code).
pub const RDB_OPCODE_FUNCTION: u8 = 246;
pub const RDB_OPCODE_MODULE_AUX: u8 = 247;
/// RDB_OPCODE_IDLE: LRU idle time of the next key, in seconds.
pub const RDB_OPCODE_IDLE: u8 = 248;
/// RDB_OPCODE_FREQ: LFU counter of the next key (one byte).
pub const RDB_OPCODE_FREQ: u8 = 249;
pub const RDB_OPCODE_AUX: u8 = 250;
pub const RDB_OPCODE_RESIZEDB: u8 = 251;
/// RDB_OPCODE_EXPIRETIME_MS: absolute unix ms, 8 bytes little endian.
pub const RDB_OPCODE_EXPIRETIME_MS: u8 = 252;
/// RDB_OPCODE_EXPIRETIME: the old seconds form (4 bytes).
pub const RDB_OPCODE_EXPIRETIME: u8 = 253;
pub const RDB_OPCODE_SELECTDB: u8 = 254;
pub const RDB_OPCODE_EOF: u8 = 255;

/// QUICKLIST_NODE_CONTAINER_PLAIN / _PACKED: the per-node tag of
/// RDB_TYPE_LIST_QUICKLIST_2.
pub const QUICKLIST_NODE_CONTAINER_PLAIN: u64 = 1;
pub const QUICKLIST_NODE_CONTAINER_PACKED: u64 = 2;

/// Redis's CRC-64 (crc64.c: Jones polynomial, reflected, init 0, no final
/// xor), as the `crc` crate's catalogue has it; slice-by-16 tables.
pub static CRC64: crc::Crc<u64, crc::Table<16>> =
    crc::Crc::<u64, crc::Table<16>>::new(&crc::CRC_64_REDIS);

/// crc64(0, data, len).
pub fn crc64(data: &[u8]) -> u64 {
    CRC64.checksum(data)
}

/// Why a load failed. Redis tells the first two apart in its log ("Short
/// read or OOM loading DB" vs "Internal error in RDB reading...").
#[derive(Debug)]
pub enum RdbError {
    /// The input ended early, or the reader/writer failed.
    Io(std::io::Error),
    /// The bytes are not a valid RDB (rdbReportCorruptRDB's reason).
    Corrupt(String),
    /// A valid type that redis-lite cannot load (modules, and streams until
    /// the stream type lands).
    Unsupported(String),
}

impl std::fmt::Display for RdbError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RdbError::Io(e) => write!(f, "{e}"),
            RdbError::Corrupt(s) => write!(f, "{s}"),
            RdbError::Unsupported(s) => write!(f, "{s}"),
        }
    }
}

impl std::error::Error for RdbError {}

impl From<std::io::Error> for RdbError {
    fn from(e: std::io::Error) -> Self {
        RdbError::Io(e)
    }
}

/// Build a `RdbError::Corrupt`.
pub(crate) fn corrupt<T>(reason: impl Into<String>) -> Result<T, RdbError> {
    Err(RdbError::Corrupt(reason.into()))
}

#[cfg(test)]
mod tests {
    /// crc64.c's own test: crc64(0, "123456789") = e9c6d914c4b8d9ca.
    #[test]
    fn crc64_matches_redis_test_vector() {
        assert_eq!(super::crc64(b"123456789"), 0xe9c6d914c4b8d9ca);
    }
}
