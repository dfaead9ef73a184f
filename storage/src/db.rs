//! One Redis database (`redisDb` in server.h): the keyspace dict and the
//! expires dict.
//!
//! Like Redis, a key with a TTL lives in *two* dicts: `dict` (key -> value)
//! and `expires` (key -> unix time in ms). Keeping the volatile keys apart is
//! what lets the active expiry cycle sample only keys that can expire.
//!
//! This layer knows nothing about clients, statistics or lazy freeing: its
//! functions take the current time as a parameter (so tests can fake the
//! clock) and hand deleted values back to the caller, who decides whether they
//! are freed here or on the `bio_lazy_free` thread.

use std::collections::HashSet;

use crate::dict::{Dict, Sds};
use crate::object::RObj;

/// CLUSTER_SLOTS: the hash slots a cluster key space is divided into
/// (cluster.h); the index below has one entry per slot.
pub const CLUSTER_SLOTS: usize = 16384;

/// The keys of each hash slot (Redis 7.0's `slots_to_keys`), kept only when
/// the server runs in cluster mode: CLUSTER COUNTKEYSINSLOT and
/// GETKEYSINSLOT read it instead of scanning the keyspace. Redis threads a
/// list through the dict entries; here each slot has a set of its keys,
/// so its count is the set's length.
///
/// The key -> slot function comes from the caller (the cluster crate's
/// `key_hash_slot`), so that this crate stays free of cluster rules.
pub struct SlotToKeys {
    hash_slot: fn(&[u8]) -> u16,
    by_slot: Vec<HashSet<Sds>>,
}

impl SlotToKeys {
    pub fn new(hash_slot: fn(&[u8]) -> u16) -> SlotToKeys {
        SlotToKeys {
            hash_slot,
            by_slot: (0..CLUSTER_SLOTS).map(|_| HashSet::new()).collect(),
        }
    }

    /// The slot of `key`, as the index files it.
    pub fn slot_of(&self, key: &[u8]) -> usize {
        (self.hash_slot)(key) as usize % CLUSTER_SLOTS
    }

    fn add(&mut self, key: &[u8]) {
        let slot = self.slot_of(key);
        self.by_slot[slot].insert(key.into());
    }

    fn remove(&mut self, key: &[u8]) {
        let slot = self.slot_of(key);
        self.by_slot[slot].remove(key);
    }

    fn clear(&mut self) {
        for keys in &mut self.by_slot {
            if !keys.is_empty() {
                *keys = HashSet::new();
            }
        }
    }

    /// countKeysInSlot.
    pub fn count(&self, slot: usize) -> usize {
        self.by_slot.get(slot).map_or(0, HashSet::len)
    }

    /// Up to `n` keys of `slot` (CLUSTER GETKEYSINSLOT).
    pub fn keys(&self, slot: usize, n: usize) -> Vec<&[u8]> {
        match self.by_slot.get(slot) {
            Some(keys) => keys.iter().take(n).map(|k| &k[..]).collect(),
            None => Vec::new(),
        }
    }
}

pub struct Db {
    /// The database number (SELECT index).
    pub id: usize,
    /// The keyspace: every key of this db.
    pub dict: Dict<RObj>,
    /// Keys with a TTL -> absolute expire time in unix milliseconds.
    pub expires: Dict<i64>,
    /// Running average TTL of sampled volatile keys (INFO keyspace avg_ttl).
    pub avg_ttl: i64,
    /// Where the active expiry cycle stopped in `expires` (its scan cursor).
    pub expires_cursor: u64,
    /// The keys of each hash slot, in cluster mode only (None otherwise:
    /// a standalone server pays nothing for it).
    pub slots_to_keys: Option<Box<SlotToKeys>>,
}

impl Db {
    pub fn new(id: usize) -> Db {
        Db {
            id,
            dict: Dict::new_guarded(),
            expires: Dict::new_guarded(),
            avg_ttl: 0,
            expires_cursor: 0,
            slots_to_keys: None,
        }
    }

    /// Number of keys, logically expired ones included (as DBSIZE counts).
    pub fn size(&self) -> usize {
        self.dict.len()
    }

    /// The expire time of `key` in unix ms, if it has one (getExpire).
    pub fn get_expire(&self, key: &[u8]) -> Option<i64> {
        if self.expires.is_empty() {
            return None;
        }
        self.expires.get(key).copied()
    }

    /// keyIsExpired: a key is expired once `now` is strictly past its time.
    pub fn key_is_expired(&self, key: &[u8], now_ms: i64) -> bool {
        match self.get_expire(key) {
            Some(when) => now_ms > when,
            None => false,
        }
    }

    /// dbAdd: the caller has checked the key is absent.
    pub fn add(&mut self, key: Sds, val: RObj) {
        if let Some(index) = &mut self.slots_to_keys {
            index.add(&key);
        }
        self.dict.insert(key, val);
    }

    /// dbOverwrite / setKey's value part: replace the value of an existing or
    /// new key and return the old value (for the caller to free). The TTL is
    /// removed unless `keep_ttl`.
    pub fn set_value(&mut self, key: &[u8], val: RObj, keep_ttl: bool) -> Option<RObj> {
        if !keep_ttl {
            self.remove_expire(key);
        }
        match self.dict.find(key) {
            Some(slot) => Some(std::mem::replace(slot, val)),
            None => {
                if let Some(index) = &mut self.slots_to_keys {
                    index.add(key);
                }
                self.dict.insert(key.into(), val);
                None
            }
        }
    }

    /// dbGenericDelete's bookkeeping: drop the key from both dicts and return
    /// the value, still alive, so the caller chooses how to free it.
    pub fn delete(&mut self, key: &[u8]) -> Option<RObj> {
        let (_key, val) = self.dict.remove(key)?;
        if let Some(index) = &mut self.slots_to_keys {
            index.remove(key);
        }
        if !self.expires.is_empty() {
            self.expires.remove(key);
        }
        Some(val)
    }

    /// setExpire: the key must exist.
    pub fn set_expire(&mut self, key: &[u8], when_ms: i64) {
        match self.expires.find(key) {
            Some(slot) => *slot = when_ms,
            None => {
                self.expires.insert(key.into(), when_ms);
            }
        }
    }

    /// removeExpire: true if the key had a TTL.
    pub fn remove_expire(&mut self, key: &[u8]) -> bool {
        if self.expires.is_empty() {
            return false;
        }
        self.expires.remove(key).is_some()
    }

    /// Detach both tables, leaving the db empty, and hand them to the caller
    /// (emptyDbAsync gives them to the lazy-free thread).
    pub fn take_tables(&mut self) -> (Dict<RObj>, Dict<i64>) {
        let dict = std::mem::replace(&mut self.dict, Dict::new_guarded());
        let expires = std::mem::replace(&mut self.expires, Dict::new_guarded());
        if let Some(index) = &mut self.slots_to_keys {
            index.clear();
        }
        self.avg_ttl = 0;
        self.expires_cursor = 0;
        (dict, expires)
    }

    /// Drop every key (FLUSHDB's synchronous form); returns how many there were.
    pub fn empty(&mut self) -> usize {
        let removed = self.dict.len();
        self.dict = Dict::new_guarded();
        self.expires = Dict::new_guarded();
        if let Some(index) = &mut self.slots_to_keys {
            index.clear();
        }
        self.avg_ttl = 0;
        self.expires_cursor = 0;
        removed
    }
}

#[cfg(test)]
mod slot_index_tests {
    use super::*;
    use crate::object::RObj;

    /// A stand-in for CRC16: the first byte is the slot.
    fn first_byte(key: &[u8]) -> u16 {
        key.first().copied().unwrap_or(0) as u16
    }

    #[test]
    fn slots_to_keys_follows_add_overwrite_delete_and_flush() {
        let mut db = Db::new(0);
        db.slots_to_keys = Some(Box::new(SlotToKeys::new(first_byte)));
        db.add(
            b"\x01a".to_vec().into_boxed_slice(),
            RObj::new(
                crate::object::Value::Str(crate::object::StrValue::Int(1)),
                0,
            ),
        );
        db.set_value(
            b"\x01b",
            RObj::new(
                crate::object::Value::Str(crate::object::StrValue::Int(1)),
                0,
            ),
            false,
        );
        // Overwriting an existing key does not count it twice.
        db.set_value(
            b"\x01b",
            RObj::new(
                crate::object::Value::Str(crate::object::StrValue::Int(2)),
                0,
            ),
            false,
        );
        db.add(
            b"\x02c".to_vec().into_boxed_slice(),
            RObj::new(
                crate::object::Value::Str(crate::object::StrValue::Int(1)),
                0,
            ),
        );
        let index = db.slots_to_keys.as_ref().unwrap();
        assert_eq!((index.count(1), index.count(2), index.count(3)), (2, 1, 0));
        assert_eq!(index.keys(1, 1).len(), 1);
        assert_eq!(index.count(CLUSTER_SLOTS + 5), 0);
        db.delete(b"\x01a");
        assert_eq!(db.slots_to_keys.as_ref().unwrap().count(1), 1);
        db.empty();
        assert_eq!(db.slots_to_keys.as_ref().unwrap().count(1), 0);
        assert_eq!(db.slots_to_keys.as_ref().unwrap().count(2), 0);
    }
}
