//! Redis's intset (intset.c): a sorted array of distinct integers in ONE
//! allocation, used for small sets whose members are all integers.
//!
//! Layout, byte for byte as Redis keeps it (and as an RDB file stores it):
//!
//! ```text
//! +--------------+--------------+---------------------------------+
//! | encoding u32 | length u32   | contents: length * encoding     |
//! | little end.  | little end.  | bytes, each value little endian |
//! +--------------+--------------+---------------------------------+
//! ```
//!
//! `encoding` is the width of every element: 2, 4 or 8 bytes
//! (INTSET_ENC_INT16/32/64). All elements share it, so element `i` is at
//! `8 + i * encoding` and a lookup is a binary search over fixed-width
//! slots. Adding a value too wide for the current encoding *upgrades* the
//! whole set (every element rewritten wider, back to front so nothing is
//! overwritten before it is read); an intset never downgrades.
//!
//! Cost model, which is why intsets are only used for small sets: every add
//! or remove reallocates the blob to its exact size and moves the tail with
//! `memmove`, so it is O(N); but a whole set of 512 integers is a single
//! allocation, and freeing it (DEL) is one `free()`.

/// INTSET_ENC_INT16: elements fit in an i16 (the encoding of a new intset).
pub const INTSET_ENC_INT16: u32 = 2;
/// INTSET_ENC_INT32: some element needs 32 bits.
pub const INTSET_ENC_INT32: u32 = 4;
/// INTSET_ENC_INT64: some element needs 64 bits.
pub const INTSET_ENC_INT64: u32 = 8;

/// sizeof(intset): the encoding and length header before the contents.
pub const INTSET_HEADER_SIZE: usize = 8;

/// _intsetValueEncoding: the narrowest encoding that holds `v`.
pub fn intset_value_encoding(v: i64) -> u32 {
    if v < i32::MIN as i64 || v > i32::MAX as i64 {
        INTSET_ENC_INT64
    } else if v < i16::MIN as i64 || v > i16::MAX as i64 {
        INTSET_ENC_INT32
    } else {
        INTSET_ENC_INT16
    }
}

/// An intset: the blob above, owned. Its capacity is kept equal to its
/// length (Redis zrealloc's the blob to the exact size on every change).
#[derive(Clone, PartialEq, Eq)]
pub struct Intset {
    blob: Vec<u8>,
}

impl std::fmt::Debug for Intset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Intset")
            .field("encoding", &self.encoding())
            .field("contents", &self.iter().collect::<Vec<_>>())
            .finish()
    }
}

impl Default for Intset {
    fn default() -> Self {
        Self::new()
    }
}

impl Intset {
    /// intsetNew: an empty intset, 16-bit encoded, header only.
    pub fn new() -> Intset {
        let mut blob = Vec::with_capacity(INTSET_HEADER_SIZE);
        blob.extend_from_slice(&INTSET_ENC_INT16.to_le_bytes());
        blob.extend_from_slice(&0u32.to_le_bytes());
        Intset { blob }
    }

    /// The `encoding` header field (2, 4 or 8).
    pub fn encoding(&self) -> u32 {
        u32::from_le_bytes([self.blob[0], self.blob[1], self.blob[2], self.blob[3]])
    }

    fn set_encoding(&mut self, enc: u32) {
        self.blob[0..4].copy_from_slice(&enc.to_le_bytes());
    }

    /// intsetLen: number of elements (the `length` header field).
    pub fn len(&self) -> usize {
        u32::from_le_bytes([self.blob[4], self.blob[5], self.blob[6], self.blob[7]]) as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn set_len(&mut self, len: usize) {
        self.blob[4..8].copy_from_slice(&(len as u32).to_le_bytes());
    }

    /// intsetBlobLen: header plus contents, the size of the allocation.
    pub fn blob_len(&self) -> usize {
        INTSET_HEADER_SIZE + self.len() * self.encoding() as usize
    }

    /// An intset from a blob read from an RDB file or a RESTORE payload
    /// (intsetValidateIntegrity): a known encoding, a length that matches
    /// the size exactly, at least one element and, when `deep`
    /// (sanitize-dump-payload), elements in strictly ascending order. An
    /// unsorted intset is memory-safe here, only its lookups are wrong, as
    /// in Redis without sanitization.
    pub fn from_bytes(bytes: &[u8], deep: bool) -> Option<Intset> {
        if bytes.len() < INTSET_HEADER_SIZE {
            return None;
        }
        let enc = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        if ![INTSET_ENC_INT16, INTSET_ENC_INT32, INTSET_ENC_INT64].contains(&enc) {
            return None;
        }
        let count = u32::from_le_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]) as usize;
        if count == 0 || INTSET_HEADER_SIZE as u64 + count as u64 * enc as u64 != bytes.len() as u64
        {
            return None;
        }
        let is = Intset {
            blob: bytes.to_vec(),
        };
        let ascending = !deep || (1..count).all(|i| is.get_raw(i - 1) < is.get_raw(i));
        ascending.then_some(is)
    }

    /// The raw blob (what RDB stores and MEMORY USAGE measures).
    pub fn as_bytes(&self) -> &[u8] {
        &self.blob
    }

    /// _intsetGetEncoded: element `pos` read with encoding `enc`.
    fn get_encoded(&self, pos: usize, enc: u32) -> i64 {
        let at = INTSET_HEADER_SIZE + pos * enc as usize;
        let b = &self.blob[at..at + enc as usize];
        match enc {
            INTSET_ENC_INT64 => {
                i64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])
            }
            INTSET_ENC_INT32 => i32::from_le_bytes([b[0], b[1], b[2], b[3]]) as i64,
            _ => i16::from_le_bytes([b[0], b[1]]) as i64,
        }
    }

    /// _intsetGet: element `pos` with the set's own encoding.
    fn get_raw(&self, pos: usize) -> i64 {
        self.get_encoded(pos, self.encoding())
    }

    /// _intsetSet: write `v` (which fits the encoding) at `pos`.
    fn set_raw(&mut self, pos: usize, v: i64) {
        let enc = self.encoding() as usize;
        let at = INTSET_HEADER_SIZE + pos * enc;
        match enc as u32 {
            INTSET_ENC_INT64 => self.blob[at..at + 8].copy_from_slice(&v.to_le_bytes()),
            INTSET_ENC_INT32 => self.blob[at..at + 4].copy_from_slice(&(v as i32).to_le_bytes()),
            _ => self.blob[at..at + 2].copy_from_slice(&(v as i16).to_le_bytes()),
        }
    }

    /// intsetResize: the blob to exactly `len` elements of the current
    /// encoding (zrealloc: no spare capacity is kept).
    fn resize(&mut self, len: usize) {
        let size = INTSET_HEADER_SIZE + len * self.encoding() as usize;
        if size > self.blob.len() {
            self.blob.reserve_exact(size - self.blob.len());
        }
        self.blob.resize(size, 0);
        self.blob.shrink_to_fit();
    }

    /// intsetSearch: `Ok(pos)` if `v` is at `pos`, else `Err(pos)` where it
    /// would be inserted to keep the contents sorted.
    fn search(&self, v: i64) -> Result<usize, usize> {
        let len = self.len();
        if len == 0 {
            return Err(0);
        }
        // The common cases of appending or prepending skip the search.
        if v > self.get_raw(len - 1) {
            return Err(len);
        }
        if v < self.get_raw(0) {
            return Err(0);
        }
        // Binary search over the fixed-width slots.
        let (mut min, mut max) = (0isize, len as isize - 1);
        while max >= min {
            let mid = ((min + max) as usize) >> 1;
            let cur = self.get_raw(mid);
            if v > cur {
                min = mid as isize + 1;
            } else if v < cur {
                max = mid as isize - 1;
            } else {
                return Ok(mid);
            }
        }
        Err(min as usize)
    }

    /// intsetUpgradeAndAdd: `v` needs a wider encoding than the set has.
    /// Being out of the old range, it is either smaller than every element
    /// (negative: goes first) or larger than every element (goes last).
    fn upgrade_and_add(&mut self, v: i64) {
        let old_enc = self.encoding();
        let new_enc = intset_value_encoding(v);
        let len = self.len();
        let prepend = usize::from(v < 0);
        self.set_encoding(new_enc);
        self.resize(len + 1);
        // Back to front: the wider slots overlap the old narrower ones only
        // at lower addresses, so nothing is overwritten before it is read.
        for i in (0..len).rev() {
            let old = self.get_encoded(i, old_enc);
            self.set_raw(i + prepend, old);
        }
        if prepend == 1 {
            self.set_raw(0, v);
        } else {
            self.set_raw(len, v);
        }
        self.set_len(len + 1);
    }

    /// intsetMoveTail: memmove the elements from `from` to the end so they
    /// start at `to`.
    fn move_tail(&mut self, from: usize, to: usize) {
        let enc = self.encoding() as usize;
        let bytes = (self.len() - from) * enc;
        let src = INTSET_HEADER_SIZE + from * enc;
        let dst = INTSET_HEADER_SIZE + to * enc;
        self.blob.copy_within(src..src + bytes, dst);
    }

    /// intsetAdd: insert `v`; false if it was already there.
    pub fn add(&mut self, v: i64) -> bool {
        if intset_value_encoding(v) > self.encoding() {
            // Too wide for the current slots: it cannot be present yet.
            self.upgrade_and_add(v);
            return true;
        }
        let pos = match self.search(v) {
            Ok(_) => return false,
            Err(pos) => pos,
        };
        let len = self.len();
        self.resize(len + 1);
        if pos < len {
            self.move_tail(pos, pos + 1);
        }
        self.set_raw(pos, v);
        self.set_len(len + 1);
        true
    }

    /// intsetRemove: delete `v`; false if it was not there. The encoding is
    /// never narrowed again.
    pub fn remove(&mut self, v: i64) -> bool {
        if intset_value_encoding(v) > self.encoding() {
            return false;
        }
        let Ok(pos) = self.search(v) else {
            return false;
        };
        let len = self.len();
        if pos < len - 1 {
            self.move_tail(pos + 1, pos);
        }
        self.resize(len - 1);
        self.set_len(len - 1);
        true
    }

    /// intsetFind: is `v` a member? Values wider than the encoding are
    /// rejected without searching.
    pub fn find(&self, v: i64) -> bool {
        intset_value_encoding(v) <= self.encoding() && self.search(v).is_ok()
    }

    /// intsetGet: element at `pos`, or None past the end.
    pub fn get(&self, pos: usize) -> Option<i64> {
        (pos < self.len()).then(|| self.get_raw(pos))
    }

    /// intsetRandom: a uniformly random element (None when empty).
    pub fn random(&self) -> Option<i64> {
        let len = self.len();
        if len == 0 {
            return None;
        }
        Some(self.get_raw((rand::random::<u64>() % len as u64) as usize))
    }

    /// The elements in ascending order.
    pub fn iter(&self) -> IntsetIter<'_> {
        IntsetIter { is: self, pos: 0 }
    }
}

/// Ascending iteration over an intset (setTypeNext on an intset).
pub struct IntsetIter<'a> {
    is: &'a Intset,
    pos: usize,
}

impl Iterator for IntsetIter<'_> {
    type Item = i64;
    fn next(&mut self) -> Option<i64> {
        let v = self.is.get(self.pos)?;
        self.pos += 1;
        Some(v)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.is.len() - self.pos;
        (n, Some(n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contents(is: &Intset) -> Vec<i64> {
        is.iter().collect()
    }

    #[test]
    fn intset_new_is_header_only_int16() {
        let is = Intset::new();
        assert_eq!(is.as_bytes(), &[2, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(is.blob_len(), 8);
        assert!(is.is_empty());
    }

    #[test]
    fn intset_value_encoding_boundaries() {
        assert_eq!(intset_value_encoding(32767), INTSET_ENC_INT16);
        assert_eq!(intset_value_encoding(-32768), INTSET_ENC_INT16);
        assert_eq!(intset_value_encoding(32768), INTSET_ENC_INT32);
        assert_eq!(intset_value_encoding(-32769), INTSET_ENC_INT32);
        assert_eq!(intset_value_encoding(i32::MAX as i64), INTSET_ENC_INT32);
        assert_eq!(intset_value_encoding(i32::MIN as i64), INTSET_ENC_INT32);
        assert_eq!(intset_value_encoding(i32::MAX as i64 + 1), INTSET_ENC_INT64);
        assert_eq!(intset_value_encoding(i32::MIN as i64 - 1), INTSET_ENC_INT64);
        assert_eq!(intset_value_encoding(i64::MIN), INTSET_ENC_INT64);
    }

    #[test]
    fn intset_add_keeps_sorted_and_unique() {
        let mut is = Intset::new();
        for v in [5, 1, 3, 3, -2, 9, 1] {
            is.add(v);
        }
        assert_eq!(contents(&is), vec![-2, 1, 3, 5, 9]);
        assert!(!is.add(3));
        assert_eq!(is.len(), 5);
        assert_eq!(is.blob_len(), 8 + 5 * 2);
        assert_eq!(is.as_bytes().len(), is.blob_len());
    }

    #[test]
    fn intset_byte_layout_is_little_endian() {
        let mut is = Intset::new();
        is.add(1);
        is.add(258);
        assert_eq!(is.as_bytes(), &[2, 0, 0, 0, 2, 0, 0, 0, 1, 0, 2, 1]);
    }

    #[test]
    fn intset_upgrade_int16_to_int32_appends() {
        let mut is = Intset::new();
        is.add(1);
        is.add(-7);
        assert!(is.add(32768));
        assert_eq!(is.encoding(), INTSET_ENC_INT32);
        assert_eq!(contents(&is), vec![-7, 1, 32768]);
        assert_eq!(is.blob_len(), 8 + 3 * 4);
    }

    #[test]
    fn intset_upgrade_negative_prepends() {
        let mut is = Intset::new();
        is.add(10);
        is.add(20);
        assert!(is.add(-32769));
        assert_eq!(is.encoding(), INTSET_ENC_INT32);
        assert_eq!(contents(&is), vec![-32769, 10, 20]);
        assert!(is.add(i64::MIN));
        assert!(is.add(i64::MAX));
        assert_eq!(is.encoding(), INTSET_ENC_INT64);
        assert_eq!(contents(&is), vec![i64::MIN, -32769, 10, 20, i64::MAX]);
    }

    #[test]
    fn intset_upgrade_int16_straight_to_int64() {
        let mut is = Intset::new();
        is.add(-1);
        is.add(1);
        is.add(1 << 40);
        assert_eq!(is.encoding(), INTSET_ENC_INT64);
        assert_eq!(contents(&is), vec![-1, 1, 1 << 40]);
    }

    #[test]
    fn intset_remove_never_downgrades() {
        let mut is = Intset::new();
        for v in [1, 2, 3, 100000] {
            is.add(v);
        }
        assert!(is.remove(100000));
        assert!(!is.remove(100000));
        assert_eq!(is.encoding(), INTSET_ENC_INT32);
        assert!(is.remove(2));
        assert_eq!(contents(&is), vec![1, 3]);
        assert!(is.remove(1));
        assert!(is.remove(3));
        assert!(is.is_empty());
        assert_eq!(is.blob_len(), 8);
    }

    #[test]
    fn intset_find_rejects_wider_values() {
        let mut is = Intset::new();
        is.add(7);
        assert!(is.find(7));
        assert!(!is.find(8));
        assert!(!is.find(1 << 33));
        assert!(!is.remove(1 << 33));
    }

    #[test]
    fn intset_get_and_random_stay_in_bounds() {
        let mut is = Intset::new();
        assert_eq!(is.random(), None);
        assert_eq!(is.get(0), None);
        for v in 0..100 {
            is.add(v * 3);
        }
        assert_eq!(is.get(99), Some(297));
        assert_eq!(is.get(100), None);
        for _ in 0..200 {
            let r = is.random().unwrap();
            assert!(is.find(r));
        }
    }

    #[test]
    fn intset_search_many_values() {
        let mut is = Intset::new();
        for v in (0..1000).rev() {
            assert!(is.add(v * 2 - 1000));
        }
        for v in 0..1000 {
            assert!(is.find(v * 2 - 1000));
            assert!(!is.find(v * 2 - 999));
        }
        let c = contents(&is);
        assert!(c.windows(2).all(|w| w[0] < w[1]));
    }
}
