//! Hash slots: which of the 16384 slots a key lives in, and the slot bitmap.
//!
//! Redis Cluster never hashes a key onto a node directly. Every key maps to
//! one of `CLUSTER_SLOTS` slots (`CRC16(key) mod 16384`), and every slot is
//! owned by one master. Moving data between nodes is moving slots; routing a
//! command is one CRC16 and one table lookup.
//!
//! Hash tags let an application keep related keys together: if a key
//! contains `{...}`, only the part between the first `{` and the first `}`
//! after it is hashed, so `{user:1000}.following` and
//! `{user:1000}.followers` share a slot and can be used in one MGET or
//! MULTI. The rules, exactly as Redis applies them, are in
//! [`key_hash_slot`].
//!
//! [`SlotBitmap`] is the set of slots a node serves, 2048 bytes, bit `s` of
//! byte `s / 8` for slot `s` (least significant bit first). It travels as-is
//! in every cluster bus header (`myslots`) and UPDATE message, and its runs
//! of consecutive slots are the `0-5460` ranges of nodes.conf and
//! CLUSTER NODES.
//!
//! redis: cluster.c keyHashSlot, bitmapTestBit/bitmapSetBit/bitmapClearBit,
//! crc16.c (the XMODEM variant).

use std::fmt;

/// CLUSTER_SLOTS: the number of hash slots. 16384 = 2^14, so a slot is the
/// low 14 bits of the CRC16, and the bitmap of a node's slots is 2 KB: small
/// enough to ship in every heartbeat (a 65536-slot bitmap would be 8 KB).
pub const CLUSTER_SLOTS: usize = 16384;

/// Bytes in a slot bitmap: one bit per slot.
pub const SLOT_BITMAP_LEN: usize = CLUSTER_SLOTS / 8;

/// CRC16 as Redis computes it: the XMODEM variant (polynomial 0x1021,
/// initial value 0, no reflection, no final xor), from the `crc16` crate.
/// `crc16("123456789") == 0x31C3`, the check value Redis's crc16.c quotes.
pub fn crc16(bytes: &[u8]) -> u16 {
    crc16::State::<crc16::XMODEM>::calculate(bytes)
}

/// The hash slot of `key` (redis: cluster.c keyHashSlot).
///
/// * No `{` in the key: hash the whole key.
/// * A `{`, then a `}` somewhere after it, with at least one byte between:
///   hash only the bytes between the *first* `{` and the first `}` after
///   it. `foo{bar}{zap}` hashes `bar`; `foo{{bar}}` hashes `{bar`.
/// * A `{` with no `}` after it, or an empty tag `{}`: hash the whole key.
///   `foo{}{bar}` hashes the whole key: only the first `{` is looked at.
pub fn key_hash_slot(key: &[u8]) -> u16 {
    let Some(open) = key.iter().position(|&b| b == b'{') else {
        return crc16(key) & 0x3FFF;
    };
    let after_open = &key[open + 1..];
    match after_open.iter().position(|&b| b == b'}') {
        // `{...}` with something inside: the tag alone decides the slot.
        Some(close) if close > 0 => crc16(&after_open[..close]) & 0x3FFF,
        // No `}`, or `{}`: the whole key.
        _ => crc16(key) & 0x3FFF,
    }
}

/// The set of slots one node serves: `myslots` in a bus header, `slots` in
/// an UPDATE message, `node->slots` in Redis.
///
/// Slot `s` is bit `s % 8` (least significant first) of byte `s / 8`, as
/// Redis's bitmapTestBit reads it. Functions taking a slot ignore slots out
/// of range (`>= CLUSTER_SLOTS`) rather than panic: `get` says false, `set`
/// and `clear` do nothing.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct SlotBitmap(pub [u8; SLOT_BITMAP_LEN]);

impl SlotBitmap {
    /// No slots.
    pub fn new() -> SlotBitmap {
        SlotBitmap([0; SLOT_BITMAP_LEN])
    }

    /// The slots of inclusive `(start, end)` ranges; ranges past the last
    /// slot are clipped.
    pub fn from_ranges(ranges: &[(u16, u16)]) -> SlotBitmap {
        let mut bitmap = SlotBitmap::new();
        for &(start, end) in ranges {
            bitmap.set_range(start, end);
        }
        bitmap
    }

    /// Is `slot` in the set? (redis: bitmapTestBit)
    pub fn get(&self, slot: u16) -> bool {
        let slot = slot as usize;
        slot < CLUSTER_SLOTS && self.0[slot / 8] & (1 << (slot & 7)) != 0
    }

    /// Add `slot` (redis: bitmapSetBit).
    pub fn set(&mut self, slot: u16) {
        let slot = slot as usize;
        if slot < CLUSTER_SLOTS {
            self.0[slot / 8] |= 1 << (slot & 7);
        }
    }

    /// Remove `slot` (redis: bitmapClearBit).
    pub fn clear(&mut self, slot: u16) {
        let slot = slot as usize;
        if slot < CLUSTER_SLOTS {
            self.0[slot / 8] &= !(1 << (slot & 7));
        }
    }

    /// Add every slot from `start` to `end` inclusive.
    pub fn set_range(&mut self, start: u16, end: u16) {
        let end = end.min(CLUSTER_SLOTS as u16 - 1);
        for slot in start..=end {
            self.set(slot);
        }
    }

    /// How many slots are set (`node->numslots`).
    pub fn count(&self) -> usize {
        self.0.iter().map(|b| b.count_ones() as usize).sum()
    }

    /// True when no slot is set.
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|&b| b == 0)
    }

    /// The maximal runs of consecutive slots, in slot order, as inclusive
    /// `(start, end)` pairs: the `0-5460 5462` of CLUSTER NODES.
    pub fn ranges(&self) -> Vec<(u16, u16)> {
        let mut ranges = Vec::new();
        let mut start: Option<u16> = None;
        for slot in 0..CLUSTER_SLOTS as u16 {
            match (self.get(slot), start) {
                (true, None) => start = Some(slot),
                (false, Some(s)) => {
                    ranges.push((s, slot - 1));
                    start = None;
                }
                _ => {}
            }
        }
        if let Some(s) = start {
            ranges.push((s, CLUSTER_SLOTS as u16 - 1));
        }
        ranges
    }
}

impl Default for SlotBitmap {
    fn default() -> SlotBitmap {
        SlotBitmap::new()
    }
}

/// Printed as its ranges (`SlotBitmap[0-5460 5462]`): 2048 raw bytes help
/// nobody in a debugger.
impl fmt::Debug for SlotBitmap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SlotBitmap[")?;
        for (i, (start, end)) in self.ranges().into_iter().enumerate() {
            if i > 0 {
                write!(f, " ")?;
            }
            if start == end {
                write!(f, "{start}")?;
            } else {
                write!(f, "{start}-{end}")?;
            }
        }
        write!(f, "]")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc16_is_xmodem_with_redis_check_value() {
        // crc16.c: "Output for "123456789" : 31C3".
        assert_eq!(crc16(b"123456789"), 0x31C3);
        assert_eq!(crc16(b""), 0);
    }

    #[test]
    fn key_hash_slot_hash_tag_rules() {
        let whole = |k: &[u8]| crc16(k) & 0x3FFF;
        // Plain keys and the tag cases from the cluster spec.
        assert_eq!(key_hash_slot(b"foo"), 12182);
        assert_eq!(
            key_hash_slot(b"{user1000}.following"),
            key_hash_slot(b"user1000")
        );
        assert_eq!(
            key_hash_slot(b"{user1000}.followers"),
            key_hash_slot(b"user1000")
        );
        // Only the first `{` counts, and the first `}` after it.
        assert_eq!(key_hash_slot(b"foo{bar}{zap}"), key_hash_slot(b"bar"));
        assert_eq!(key_hash_slot(b"foo{{bar}}zap"), key_hash_slot(b"{bar"));
        // Empty tag or no closing brace: the whole key.
        assert_eq!(key_hash_slot(b"foo{}{bar}"), whole(b"foo{}{bar}"));
        assert_eq!(key_hash_slot(b"{}"), whole(b"{}"));
        assert_eq!(key_hash_slot(b"foo{bar"), whole(b"foo{bar"));
        assert_eq!(key_hash_slot(b"}{"), whole(b"}{"));
        // A `}` before the `{` does not close it.
        assert_eq!(key_hash_slot(b"a}b{c}"), key_hash_slot(b"c"));
        assert_eq!(key_hash_slot(b""), 0);
    }

    #[test]
    fn slot_bitmap_bit_order_is_lsb_first() {
        let mut b = SlotBitmap::new();
        b.set(0);
        b.set(9);
        b.set(16383);
        assert_eq!(b.0[0], 0b0000_0001);
        assert_eq!(b.0[1], 0b0000_0010);
        assert_eq!(b.0[2047], 0b1000_0000);
        assert!(b.get(9) && !b.get(8));
        b.clear(9);
        assert!(!b.get(9));
        assert_eq!(b.count(), 2);
    }

    #[test]
    fn slot_bitmap_out_of_range_slots_are_ignored() {
        let mut b = SlotBitmap::new();
        b.set(16384);
        b.set(u16::MAX);
        b.clear(u16::MAX);
        assert!(b.is_empty());
        assert!(!b.get(u16::MAX));
        b.set_range(16380, u16::MAX);
        assert_eq!(b.ranges(), vec![(16380, 16383)]);
    }

    #[test]
    fn slot_bitmap_ranges_are_maximal_runs() {
        let b = SlotBitmap::from_ranges(&[(0, 5460), (5462, 5462), (10923, 16383), (7, 9)]);
        assert_eq!(b.ranges(), vec![(0, 5460), (5462, 5462), (10923, 16383)]);
        assert_eq!(b.count(), 5461 + 1 + 5461);
        assert_eq!(format!("{b:?}"), "SlotBitmap[0-5460 5462 10923-16383]");
        assert_eq!(SlotBitmap::new().ranges(), vec![]);
    }
}
