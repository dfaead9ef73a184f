//! listpack: Redis 7.0's compact sequence of strings and integers
//! (listpack.c), byte for byte.
//!
//! Small lists, hashes and sorted sets live in one contiguous allocation:
//!
//! ```text
//! <total-bytes:u32 LE> <num-elements:u16 LE> <entry> ... <entry> <0xFF>
//! entry = <encoding[+length]> <data> <backlen>
//! ```
//!
//! * The encoding byte tells the entry's type and (for strings) its length.
//!   A string that parses as a strict decimal integer (`string2ll` rules,
//!   which are lpStringToInt64's) is stored as an integer, the narrowest of
//!   7-bit / 13-bit / 16 / 24 / 32 / 64-bit that holds it.
//! * `backlen` is the size of `encoding+data`, written so it can be read from
//!   its LAST byte backwards: 7 bits per byte, the high bit set on every byte
//!   but the first one. That is what makes `lpPrev` possible without a
//!   per-entry "previous length" field (ziplist's cascade-update problem).
//! * `num-elements` saturates at 65535 (LP_HDR_NUMELE_UNKNOWN): from there
//!   `lpLength` has to walk the entries.
//!
//! Entries are addressed by their byte offset in the buffer (Redis uses a
//! `unsigned char *p`), so `first`/`next`/`prev`/`get` read like the C loops.
//! Any change to the buffer invalidates offsets after the change point;
//! `insert`/`replace`/`delete` return the offset the caller continues from.

use crate::util::string2ll;

/// LP_HDR_SIZE: 32-bit total bytes + 16-bit number of elements.
pub const LP_HDR_SIZE: usize = 6;

/// LP_HDR_NUMELE_UNKNOWN: the element count no longer fits in 16 bits
/// (or was never computed); lpLength walks the entries.
pub const LP_HDR_NUMELE_UNKNOWN: usize = u16::MAX as usize;

/// LP_EOF: the byte closing every listpack.
pub const LP_EOF: u8 = 0xFF;

/// LISTPACK_MAX_SAFETY_SIZE: the callers refuse to grow a listpack past 1 GB
/// (listpack.h), converting to the big encoding instead.
pub const LISTPACK_MAX_SAFETY_SIZE: usize = 1 << 30;

// The encoding bytes (listpack.c LP_ENCODING_*), masks in the comments.
/// 0xxxxxxx: an integer 0..127 in the encoding byte itself.
const LP_ENCODING_7BIT_UINT: u8 = 0x00;
/// 10xxxxxx: a string up to 63 bytes, length in the low 6 bits.
const LP_ENCODING_6BIT_STR: u8 = 0x80;
/// 110xxxxx yyyyyyyy: a 13-bit signed integer (-4096..4095).
const LP_ENCODING_13BIT_INT: u8 = 0xC0;
/// 1110xxxx yyyyyyyy: a string up to 4095 bytes.
const LP_ENCODING_12BIT_STR: u8 = 0xE0;
/// 11110000 + 4-byte length: any longer string.
const LP_ENCODING_32BIT_STR: u8 = 0xF0;
/// 11110001..11110100 + 2/3/4/8 bytes little endian two's complement.
const LP_ENCODING_16BIT_INT: u8 = 0xF1;
const LP_ENCODING_24BIT_INT: u8 = 0xF2;
const LP_ENCODING_32BIT_INT: u8 = 0xF3;
const LP_ENCODING_64BIT_INT: u8 = 0xF4;

/// What lpGet returns: the bytes of a string entry, or an integer entry's
/// value (callers format it with ll2string when they need the text).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LpEntry<'a> {
    Str(&'a [u8]),
    Int(i64),
}

impl LpEntry<'_> {
    /// The entry as the string a client would see.
    pub fn to_vec(&self) -> Vec<u8> {
        match self {
            LpEntry::Str(s) => s.to_vec(),
            LpEntry::Int(v) => crate::util::ll2string(*v).to_vec(),
        }
    }

    /// lpCompare: does this entry hold the string `s`? Integer entries
    /// compare against `s` parsed with the same strict rules used to store it.
    pub fn eq_bytes(&self, s: &[u8]) -> bool {
        match self {
            LpEntry::Str(e) => *e == s,
            LpEntry::Int(v) => string2ll(s) == Some(*v),
        }
    }

    /// The length of the entry as a string (HSTRLEN, LCS-free callers).
    pub fn len(&self) -> usize {
        match self {
            LpEntry::Str(s) => s.len(),
            LpEntry::Int(v) => crate::util::ll2string(*v).len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Where `insert` puts the new entry relative to `p` (LP_BEFORE / LP_AFTER).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Where {
    Before,
    After,
}

/// A listpack: one `Vec<u8>` laid out exactly as Redis lays it out.
#[derive(Clone, PartialEq, Eq)]
pub struct Listpack {
    buf: Vec<u8>,
}

impl Default for Listpack {
    fn default() -> Self {
        Listpack::new()
    }
}

impl std::fmt::Debug for Listpack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

// ------------------------------------------------------------ entry encoding

/// lpEncodeBacklen: how many bytes the backlen of an `l`-byte entry takes.
fn backlen_size(l: usize) -> usize {
    if l <= 127 {
        1
    } else if l < 16383 {
        2
    } else if l < 2097151 {
        3
    } else if l < 268435455 {
        4
    } else {
        5
    }
}

/// lpEncodeBacklen: append the backlen of an `l`-byte entry. The first byte
/// carries the highest bits; every later byte has the 128 flag meaning
/// "more bytes to the left", so a reader going backwards knows when to stop.
fn encode_backlen(out: &mut Vec<u8>, l: usize) {
    let n = backlen_size(l);
    for i in (0..n).rev() {
        let chunk = ((l >> (7 * i)) & 127) as u8;
        // Only the leftmost byte (i == n-1) lacks the continuation flag.
        out.push(if i == n - 1 { chunk } else { chunk | 128 });
    }
}

/// lpEncodeIntegerGetType + the write: the narrowest integer encoding.
fn encode_int(out: &mut Vec<u8>, v: i64) {
    if (0..=127).contains(&v) {
        out.push(LP_ENCODING_7BIT_UINT | v as u8);
    } else if (-4096..=4095).contains(&v) {
        // 13-bit two's complement split over the two bytes.
        let u = (v as u64) & 0x1FFF;
        out.push(LP_ENCODING_13BIT_INT | (u >> 8) as u8);
        out.push((u & 0xFF) as u8);
    } else if (-32768..=32767).contains(&v) {
        out.push(LP_ENCODING_16BIT_INT);
        out.extend_from_slice(&(v as i16).to_le_bytes());
    } else if (-8388608..=8388607).contains(&v) {
        out.push(LP_ENCODING_24BIT_INT);
        out.extend_from_slice(&(v as i32).to_le_bytes()[..3]);
    } else if (i32::MIN as i64..=i32::MAX as i64).contains(&v) {
        out.push(LP_ENCODING_32BIT_INT);
        out.extend_from_slice(&(v as i32).to_le_bytes());
    } else {
        out.push(LP_ENCODING_64BIT_INT);
        out.extend_from_slice(&v.to_le_bytes());
    }
}

/// lpEncodeString: length header by size class, then the bytes.
fn encode_str(out: &mut Vec<u8>, s: &[u8]) {
    let len = s.len();
    if len < 64 {
        out.push(LP_ENCODING_6BIT_STR | len as u8);
    } else if len < 4096 {
        out.push(LP_ENCODING_12BIT_STR | (len >> 8) as u8);
        out.push((len & 0xFF) as u8);
    } else {
        out.push(LP_ENCODING_32BIT_STR);
        out.extend_from_slice(&(len as u32).to_le_bytes());
    }
    out.extend_from_slice(s);
}

/// A whole entry (encoding + data + backlen) for the string `v`, stored as
/// an integer when it is one (lpEncodeGetType).
fn encode_entry(v: &[u8]) -> Vec<u8> {
    match string2ll(v) {
        Some(i) => encode_entry_int(i),
        None => {
            let mut out = Vec::with_capacity(v.len() + 10);
            encode_str(&mut out, v);
            let l = out.len();
            encode_backlen(&mut out, l);
            out
        }
    }
}

fn encode_entry_int(i: i64) -> Vec<u8> {
    let mut out = Vec::with_capacity(11);
    encode_int(&mut out, i);
    let l = out.len();
    encode_backlen(&mut out, l);
    out
}

/// Sign-extend the low `bits` bits of `u` (the integer encodings store two's
/// complement of their width).
fn sign_extend(u: u64, bits: u32) -> i64 {
    let shift = 64 - bits;
    ((u << shift) as i64) >> shift
}

impl Listpack {
    /// lpNew: the header and the end byte, 7 bytes.
    pub fn new() -> Self {
        let mut lp = Listpack {
            buf: vec![0; LP_HDR_SIZE + 1],
        };
        lp.buf[LP_HDR_SIZE] = LP_EOF;
        lp.set_total_bytes();
        lp
    }

    /// A listpack from raw bytes (e.g. a DUMP payload); checks the header
    /// and walks every entry (lpValidateIntegrity, deep).
    pub fn from_bytes(bytes: &[u8]) -> Option<Self> {
        Self::validate_integrity(bytes).then(|| Listpack {
            buf: bytes.to_vec(),
        })
    }

    /// `from_bytes` without the copy: takes the buffer the bytes were read
    /// into (RDB loading), or gives it back when it is not a valid listpack.
    pub fn from_vec(bytes: Vec<u8>) -> Result<Self, Vec<u8>> {
        if Self::validate_integrity(&bytes) {
            Ok(Listpack { buf: bytes })
        } else {
            Err(bytes)
        }
    }

    /// lpValidateIntegrity with `deep`: the header's total size and count
    /// agree with a bounds-checked walk over every entry and its backlen.
    pub fn validate_integrity(bytes: &[u8]) -> bool {
        Self::validate_walk(bytes).is_some()
    }

    fn validate_walk(bytes: &[u8]) -> Option<()> {
        if bytes.len() < LP_HDR_SIZE + 1 {
            return None;
        }
        let total = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as usize;
        if total != bytes.len() || bytes[total - 1] != LP_EOF {
            return None;
        }
        // Walk the entries with bounds checks before trusting the offsets.
        let mut p = LP_HDR_SIZE;
        let mut count = 0usize;
        while p < total - 1 {
            let size = Self::checked_entry_size(bytes, p)?;
            let enc = Self::checked_encoded_size(bytes, p)?;
            if p + size > total - 1 {
                return None;
            }
            // The backlen must decode to this entry's encoded size.
            if Self::decode_backlen(bytes, p + size - 1) != Some(enc) {
                return None;
            }
            p += size;
            count += 1;
        }
        let hdr = u16::from_le_bytes([bytes[4], bytes[5]]) as usize;
        if hdr != LP_HDR_NUMELE_UNKNOWN && hdr != count {
            return None;
        }
        Some(())
    }

    // -------------------------------------------------------------- header

    fn set_total_bytes(&mut self) {
        let n = self.buf.len() as u32;
        self.buf[0..4].copy_from_slice(&n.to_le_bytes());
    }

    fn num_elements_hdr(&self) -> usize {
        u16::from_le_bytes([self.buf[4], self.buf[5]]) as usize
    }

    fn set_num_elements(&mut self, n: usize) {
        // Saturates: 65535 and above are all "unknown".
        let v = n.min(LP_HDR_NUMELE_UNKNOWN) as u16;
        self.buf[4..6].copy_from_slice(&v.to_le_bytes());
    }

    /// lpInsert / lpDelete header update: only a known count is adjusted.
    fn adjust_num_elements(&mut self, delta: isize) {
        let n = self.num_elements_hdr();
        if n != LP_HDR_NUMELE_UNKNOWN {
            self.set_num_elements((n as isize + delta) as usize);
        }
    }

    /// lpLength: the header count, or a walk when it saturated.
    pub fn len(&self) -> usize {
        let n = self.num_elements_hdr();
        if n != LP_HDR_NUMELE_UNKNOWN {
            return n;
        }
        self.iter().count()
    }

    pub fn is_empty(&self) -> bool {
        self.buf[LP_HDR_SIZE] == LP_EOF
    }

    /// lpBytes: the total-bytes header (== the buffer length).
    pub fn bytes(&self) -> usize {
        self.buf.len()
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.buf
    }

    /// Heap bytes actually reserved (MEMORY USAGE reports the allocation).
    pub fn capacity(&self) -> usize {
        self.buf.capacity()
    }

    /// lpNew(capacity): an empty listpack allocated with room for
    /// `capacity` bytes (streams pre-allocate their nodes).
    pub fn with_capacity(capacity: usize) -> Self {
        let mut buf = Vec::with_capacity(capacity.max(LP_HDR_SIZE + 1));
        buf.resize(LP_HDR_SIZE + 1, 0);
        let mut lp = Listpack { buf };
        lp.buf[LP_HDR_SIZE] = LP_EOF;
        lp.set_total_bytes();
        lp
    }

    /// lp_realloc as lpInsert does it: make the allocation exactly `total`
    /// bytes when it is smaller (never grows by doubling).
    pub fn reserve_exact_total(&mut self, total: usize) {
        if total > self.buf.capacity() {
            self.buf.reserve_exact(total - self.buf.len());
        }
    }

    /// lpShrinkToFit: give back what the allocation holds beyond the bytes.
    pub fn shrink_to_fit(&mut self) {
        self.buf.shrink_to_fit();
    }

    // ----------------------------------------------------- entry geometry

    /// The size of `encoding + data` of the entry at `p`
    /// (lpCurrentEncodedSizeUnsafe), reading only bytes known to exist.
    fn checked_encoded_size(buf: &[u8], p: usize) -> Option<usize> {
        let b = *buf.get(p)?;
        let size = if b & 0x80 == LP_ENCODING_7BIT_UINT {
            1
        } else if b & 0xC0 == LP_ENCODING_6BIT_STR {
            1 + (b & 0x3F) as usize
        } else if b & 0xE0 == LP_ENCODING_13BIT_INT {
            2
        } else if b & 0xF0 == LP_ENCODING_12BIT_STR {
            2 + (((b & 0x0F) as usize) << 8 | *buf.get(p + 1)? as usize)
        } else {
            match b {
                LP_ENCODING_16BIT_INT => 3,
                LP_ENCODING_24BIT_INT => 4,
                LP_ENCODING_32BIT_INT => 5,
                LP_ENCODING_64BIT_INT => 9,
                LP_ENCODING_32BIT_STR => {
                    let l = buf.get(p + 1..p + 5)?;
                    5 + u32::from_le_bytes([l[0], l[1], l[2], l[3]]) as usize
                }
                _ => return None,
            }
        };
        Some(size)
    }

    fn checked_entry_size(buf: &[u8], p: usize) -> Option<usize> {
        let enc = Self::checked_encoded_size(buf, p)?;
        Some(enc + backlen_size(enc))
    }

    /// lpDecodeBacklen: read the backlen whose last byte is at `end`,
    /// moving left while the continuation flag is set.
    fn decode_backlen(buf: &[u8], end: usize) -> Option<usize> {
        let mut val = 0usize;
        let mut shift = 0;
        let mut i = end;
        loop {
            let b = *buf.get(i)?;
            val |= ((b & 127) as usize) << shift;
            if b & 128 == 0 {
                return Some(val);
            }
            shift += 7;
            if shift > 28 {
                return None;
            }
            i = i.checked_sub(1)?;
        }
    }

    fn encoded_size(&self, p: usize) -> usize {
        Self::checked_encoded_size(&self.buf, p).expect("listpack: corrupt entry")
    }

    /// Bytes of the entry at `p`: encoding + data + backlen.
    pub fn entry_size(&self, p: usize) -> usize {
        let enc = self.encoded_size(p);
        enc + backlen_size(enc)
    }

    // ----------------------------------------------------------- navigation

    /// lpFirst: the first entry, if any.
    pub fn first(&self) -> Option<usize> {
        if self.is_empty() {
            None
        } else {
            Some(LP_HDR_SIZE)
        }
    }

    /// lpLast: the entry before the end byte.
    pub fn last(&self) -> Option<usize> {
        self.prev_of(self.buf.len() - 1)
    }

    /// lpNext: the entry after `p`, or None at the end.
    pub fn next(&self, p: usize) -> Option<usize> {
        let n = p + self.entry_size(p);
        if self.buf[n] == LP_EOF {
            None
        } else {
            Some(n)
        }
    }

    /// lpPrev: the entry before `p`, or None at the first entry.
    pub fn prev(&self, p: usize) -> Option<usize> {
        self.prev_of(p)
    }

    /// The entry that ends right before offset `p` (an entry or the end
    /// byte): decode its backlen, then step over backlen and entry.
    fn prev_of(&self, p: usize) -> Option<usize> {
        if p <= LP_HDR_SIZE {
            return None;
        }
        let enc = Self::decode_backlen(&self.buf, p - 1).expect("listpack: corrupt backlen");
        Some(p - enc - backlen_size(enc))
    }

    /// lpGet: the entry at `p` as a string slice or an integer.
    pub fn get(&self, p: usize) -> LpEntry<'_> {
        let b = &self.buf;
        let e = b[p];
        if e & 0x80 == LP_ENCODING_7BIT_UINT {
            LpEntry::Int((e & 0x7F) as i64)
        } else if e & 0xC0 == LP_ENCODING_6BIT_STR {
            let len = (e & 0x3F) as usize;
            LpEntry::Str(&b[p + 1..p + 1 + len])
        } else if e & 0xE0 == LP_ENCODING_13BIT_INT {
            let u = ((e & 0x1F) as u64) << 8 | b[p + 1] as u64;
            LpEntry::Int(sign_extend(u, 13))
        } else if e & 0xF0 == LP_ENCODING_12BIT_STR {
            let len = ((e & 0x0F) as usize) << 8 | b[p + 1] as usize;
            LpEntry::Str(&b[p + 2..p + 2 + len])
        } else {
            match e {
                LP_ENCODING_16BIT_INT => {
                    LpEntry::Int(i16::from_le_bytes([b[p + 1], b[p + 2]]) as i64)
                }
                LP_ENCODING_24BIT_INT => {
                    let u = u32::from_le_bytes([b[p + 1], b[p + 2], b[p + 3], 0]) as u64;
                    LpEntry::Int(sign_extend(u, 24))
                }
                LP_ENCODING_32BIT_INT => {
                    LpEntry::Int(i32::from_le_bytes([b[p + 1], b[p + 2], b[p + 3], b[p + 4]]) as i64)
                }
                LP_ENCODING_64BIT_INT => {
                    let mut a = [0u8; 8];
                    a.copy_from_slice(&b[p + 1..p + 9]);
                    LpEntry::Int(i64::from_le_bytes(a))
                }
                LP_ENCODING_32BIT_STR => {
                    let len = u32::from_le_bytes([b[p + 1], b[p + 2], b[p + 3], b[p + 4]]) as usize;
                    LpEntry::Str(&b[p + 5..p + 5 + len])
                }
                _ => panic!("listpack: bad encoding byte {e:#x} at {p}"),
            }
        }
    }

    /// lpSeek: the entry at `index` (negative counts from the tail, -1 is
    /// the last), walking from whichever end is nearer as Redis does.
    pub fn seek(&self, index: i64) -> Option<usize> {
        let n = self.len() as i64;
        let index = if index < 0 { n + index } else { index };
        if index < 0 || index >= n {
            return None;
        }
        if index > n / 2 {
            // Closer to the tail: walk backwards.
            let mut p = self.last()?;
            for _ in 0..(n - 1 - index) {
                p = self.prev(p)?;
            }
            Some(p)
        } else {
            let mut p = self.first()?;
            for _ in 0..index {
                p = self.next(p)?;
            }
            Some(p)
        }
    }

    // ------------------------------------------------------------ mutation

    /// Splice `entry` over `range` and fix both header fields.
    fn splice(&mut self, range: std::ops::Range<usize>, entry: &[u8], delta: isize) {
        self.buf.splice(range, entry.iter().copied());
        self.set_total_bytes();
        self.adjust_num_elements(delta);
    }

    /// lpAppend.
    pub fn append(&mut self, v: &[u8]) {
        let end = self.buf.len() - 1;
        let e = encode_entry(v);
        self.splice(end..end, &e, 1);
    }

    /// lpPrepend.
    pub fn prepend(&mut self, v: &[u8]) {
        let e = encode_entry(v);
        self.splice(LP_HDR_SIZE..LP_HDR_SIZE, &e, 1);
    }

    /// lpAppendInteger.
    pub fn append_int(&mut self, v: i64) {
        let end = self.buf.len() - 1;
        let e = encode_entry_int(v);
        self.splice(end..end, &e, 1);
    }

    /// lpInsertString with LP_BEFORE / LP_AFTER: returns the new entry's offset.
    pub fn insert(&mut self, p: usize, v: &[u8], w: Where) -> usize {
        let at = match w {
            Where::Before => p,
            Where::After => p + self.entry_size(p),
        };
        let e = encode_entry(v);
        self.splice(at..at, &e, 1);
        at
    }

    /// lpReplace: the entry at `p` now holds `v`; returns `p`.
    pub fn replace(&mut self, p: usize, v: &[u8]) -> usize {
        let size = self.entry_size(p);
        let e = encode_entry(v);
        self.splice(p..p + size, &e, 0);
        p
    }

    /// lpReplaceInteger.
    pub fn replace_int(&mut self, p: usize, v: i64) -> usize {
        let size = self.entry_size(p);
        let e = encode_entry_int(v);
        self.splice(p..p + size, &e, 0);
        p
    }

    /// lpDelete: remove the entry at `p`; the offset of the entry that
    /// moved into its place, if any.
    pub fn delete(&mut self, p: usize) -> Option<usize> {
        let size = self.entry_size(p);
        self.splice(p..p + size, &[], -1);
        if self.buf[p] == LP_EOF {
            None
        } else {
            Some(p)
        }
    }

    /// lpDeleteRange: `num` entries starting at `index` (clamped to the end).
    pub fn delete_range(&mut self, index: i64, num: usize) {
        let Some(start) = self.seek(index) else {
            return;
        };
        let mut end = start;
        let mut deleted = 0usize;
        while deleted < num && self.buf[end] != LP_EOF {
            end += self.entry_size(end);
            deleted += 1;
        }
        self.buf.drain(start..end);
        self.set_total_bytes();
        // lpDeleteRange recounts only when the count was known.
        let n = self.num_elements_hdr();
        if n != LP_HDR_NUMELE_UNKNOWN {
            self.set_num_elements(n - deleted);
        }
    }

    /// lpDeleteRangeWithEntry: `num` entries starting at offset `p`.
    pub fn delete_range_at(&mut self, p: usize, num: usize) {
        let mut end = p;
        let mut deleted = 0usize;
        while deleted < num && self.buf[end] != LP_EOF {
            end += self.entry_size(end);
            deleted += 1;
        }
        self.buf.drain(p..end);
        self.set_total_bytes();
        let n = self.num_elements_hdr();
        if n != LP_HDR_NUMELE_UNKNOWN {
            self.set_num_elements(n - deleted);
        }
    }

    /// lpFind: from `p`, compare one entry, skip `skip` entries, compare the
    /// next, ... (skip = 1 visits only the fields of a field/value listpack).
    pub fn find(&self, p: usize, v: &[u8], skip: usize) -> Option<usize> {
        // The integer value of `v` is worked out once (Redis's vll cache).
        let vint = string2ll(v);
        let mut cur = Some(p);
        let mut skipcnt = 0usize;
        while let Some(q) = cur {
            if skipcnt == 0 {
                let hit = match self.get(q) {
                    LpEntry::Str(s) => s == v,
                    LpEntry::Int(i) => vint == Some(i),
                };
                if hit {
                    return Some(q);
                }
                skipcnt = skip;
            } else {
                skipcnt -= 1;
            }
            cur = self.next(q);
        }
        None
    }

    /// An iterator over the entries, first to last.
    pub fn iter(&self) -> LpIter<'_> {
        LpIter {
            lp: self,
            p: self.first(),
        }
    }
}

// ------------------------------------------------------- random sampling

/// lpRandomPair: one random field/value pair of a listpack holding
/// `total_pairs` pairs (entries 2i and 2i+1).
pub fn lp_random_pair(lp: &Listpack, total_pairs: usize) -> Option<(LpEntry<'_>, LpEntry<'_>)> {
    if total_pairs == 0 {
        return None;
    }
    let r = (rand::random::<u64>() % total_pairs as u64) as i64;
    let p = lp.seek(r * 2)?;
    let v = lp.next(p)?;
    Some((lp.get(p), lp.get(v)))
}

/// lpRandomPairs: `count` pairs drawn with repetition, in random order.
/// Redis sorts the picks by index and collects them in one walk; the walk
/// is the same idea here (one pass, each pick written to its slot).
pub fn lp_random_pairs(lp: &Listpack, count: usize) -> Vec<(LpEntry<'_>, LpEntry<'_>)> {
    let total_pairs = lp.len() / 2;
    if total_pairs == 0 {
        return Vec::new();
    }
    // (pair index, output slot), sorted by pair index.
    let mut picks: Vec<(usize, usize)> = (0..count)
        .map(|slot| ((rand::random::<u64>() % total_pairs as u64) as usize, slot))
        .collect();
    picks.sort_unstable();
    let mut out: Vec<Option<(LpEntry<'_>, LpEntry<'_>)>> = vec![None; count];
    let mut pick = 0;
    let mut p = lp.first();
    let mut idx = 0;
    while let (Some(f), true) = (p, pick < picks.len()) {
        let Some(v) = lp.next(f) else { break };
        while pick < picks.len() && picks[pick].0 == idx {
            out[picks[pick].1] = Some((lp.get(f), lp.get(v)));
            pick += 1;
        }
        p = lp.next(v);
        idx += 1;
    }
    out.into_iter().flatten().collect()
}

/// lpRandomPairsUnique: up to `count` distinct pairs in listpack order
/// (selection sampling: keep each pair with probability
/// still-needed / still-available).
pub fn lp_random_pairs_unique(lp: &Listpack, count: usize) -> Vec<(LpEntry<'_>, LpEntry<'_>)> {
    let total_pairs = lp.len() / 2;
    let count = count.min(total_pairs);
    let mut out = Vec::with_capacity(count);
    let mut p = lp.first();
    let mut index = 0;
    while out.len() < count {
        let Some(f) = p else { break };
        let Some(v) = lp.next(f) else { break };
        let available = (total_pairs - index) as u64;
        let needed = (count - out.len()) as u64;
        if rand::random::<u64>() % available < needed {
            out.push((lp.get(f), lp.get(v)));
        }
        p = lp.next(v);
        index += 1;
    }
    out
}

/// Iterator over a listpack's entries (the `lpFirst` / `lpNext` loop).
pub struct LpIter<'a> {
    lp: &'a Listpack,
    p: Option<usize>,
}

impl<'a> Iterator for LpIter<'a> {
    type Item = LpEntry<'a>;

    fn next(&mut self) -> Option<LpEntry<'a>> {
        let p = self.p?;
        self.p = self.lp.next(p);
        Some(self.lp.get(p))
    }
}

/// The size of the entry `v` would get (encoding + data + backlen), as
/// lpInsert computes it before it reallocates.
pub fn entry_len(v: &[u8]) -> usize {
    match string2ll(v) {
        Some(i) => int_entry_len(i),
        None => {
            let hdr = if v.len() < 64 {
                1
            } else if v.len() < 4096 {
                2
            } else {
                5
            };
            let enc = hdr + v.len();
            enc + backlen_size(enc)
        }
    }
}

/// The size of an integer entry (lpEncodeIntegerGetType + backlen).
pub fn int_entry_len(v: i64) -> usize {
    let enc = if (0..=127).contains(&v) {
        1
    } else if (-4096..=4095).contains(&v) {
        2
    } else if (-32768..=32767).contains(&v) {
        3
    } else if (-8388608..=8388607).contains(&v) {
        4
    } else if (i32::MIN as i64..=i32::MAX as i64).contains(&v) {
        5
    } else {
        9
    };
    enc + backlen_size(enc)
}

/// lpSafeToAdd: would adding `add` bytes keep the listpack under
/// LISTPACK_MAX_SAFETY_SIZE?
pub fn lp_safe_to_add(lp: Option<&Listpack>, add: usize) -> bool {
    let len = lp.map_or(0, |l| l.bytes());
    len + add <= LISTPACK_MAX_SAFETY_SIZE
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(lp: &Listpack) -> Vec<Vec<u8>> {
        lp.iter().map(|e| e.to_vec()).collect()
    }

    /// Walk backwards with prev from last and check it mirrors the forward walk.
    fn check_round_trip(lp: &Listpack) {
        let mut fwd = Vec::new();
        let mut p = lp.first();
        while let Some(q) = p {
            fwd.push(q);
            p = lp.next(q);
        }
        let mut back = Vec::new();
        let mut p = lp.last();
        while let Some(q) = p {
            back.push(q);
            p = lp.prev(q);
        }
        back.reverse();
        assert_eq!(fwd, back);
        assert_eq!(fwd.len(), lp.len());
        assert_eq!(lp.bytes(), lp.as_bytes().len());
        assert_eq!(Listpack::from_bytes(lp.as_bytes()).as_ref(), Some(lp));
    }

    #[test]
    fn listpack_new_is_seven_bytes() {
        let lp = Listpack::new();
        assert_eq!(lp.as_bytes(), &[7, 0, 0, 0, 0, 0, 0xFF]);
        assert!(lp.is_empty());
        assert_eq!(lp.first(), None);
        assert_eq!(lp.last(), None);
    }

    #[test]
    fn listpack_integer_encoding_widths() {
        // (value, encoded size without backlen)
        let cases: &[(i64, usize)] = &[
            (0, 1),
            (127, 1),
            (128, 2),
            (-1, 2),
            (4095, 2),
            (-4096, 2),
            (4096, 3),
            (-4097, 3),
            (32767, 3),
            (-32768, 3),
            (32768, 4),
            (-32769, 4),
            (8388607, 4),
            (-8388608, 4),
            (8388608, 5),
            (-8388609, 5),
            (i32::MAX as i64, 5),
            (i32::MIN as i64, 5),
            (i32::MAX as i64 + 1, 9),
            (i32::MIN as i64 - 1, 9),
            (i64::MAX, 9),
            (i64::MIN, 9),
        ];
        for &(v, size) in cases {
            let mut lp = Listpack::new();
            lp.append(v.to_string().as_bytes());
            let p = lp.first().unwrap();
            assert_eq!(lp.get(p), LpEntry::Int(v), "value {v}");
            assert_eq!(lp.entry_size(p), size + 1, "value {v}");
            let mut lp2 = Listpack::new();
            lp2.append_int(v);
            assert_eq!(lp.as_bytes(), lp2.as_bytes());
            check_round_trip(&lp);
        }
    }

    #[test]
    fn listpack_non_canonical_numbers_stay_strings() {
        for s in [
            "-0",
            "01",
            "+1",
            " 1",
            "1 ",
            "9223372036854775808",
            "1.5",
            "",
        ] {
            let mut lp = Listpack::new();
            lp.append(s.as_bytes());
            assert_eq!(lp.get(lp.first().unwrap()), LpEntry::Str(s.as_bytes()));
        }
    }

    #[test]
    fn listpack_string_encoding_widths_and_backlens() {
        // (length, header bytes, backlen bytes)
        let cases: &[(usize, usize, usize)] = &[
            (0, 1, 1),
            (63, 1, 1),
            (64, 2, 1),
            (125, 2, 1), // 127 encoded bytes: 1-byte backlen
            (126, 2, 2), // 128: 2-byte backlen
            (4095, 2, 2),
            (4096, 5, 2),
            (16377, 5, 2),   // 16382 encoded: still 2 bytes
            (16378, 5, 3),   // 16383 encoded: 3 bytes
            (2097146, 5, 4), // 2097151 encoded: 4 bytes
        ];
        for &(len, hdr, bl) in cases {
            let s = vec![b'a'; len];
            let mut lp = Listpack::new();
            lp.append(b"x");
            lp.append(&s);
            lp.append(b"y");
            let p = lp.seek(1).unwrap();
            assert_eq!(lp.entry_size(p), hdr + len + bl, "len {len}");
            assert_eq!(lp.get(p), LpEntry::Str(&s));
            assert_eq!(lp.get(p).len(), len);
            check_round_trip(&lp);
            assert_eq!(entries(&lp)[2], b"y");
        }
    }

    #[test]
    fn listpack_known_bytes() {
        // Bytes as Redis 7.0 writes them (DUMP of HSET h a 1 b hello).
        let mut lp = Listpack::new();
        for v in [&b"a"[..], b"1", b"b", b"hello"] {
            lp.append(v);
        }
        let expect: Vec<u8> = vec![
            22, 0, 0, 0, 4, 0, //
            0x81, b'a', 2, //
            0x01, 1, //
            0x81, b'b', 2, //
            0x85, b'h', b'e', b'l', b'l', b'o', 6, //
            0xFF,
        ];
        assert_eq!(lp.as_bytes(), &expect[..]);
        // -1 as 13-bit: 0xDF 0xFF; 1000 as 13-bit: 0xC3 0xE8; 100000 as 24-bit.
        let mut lp = Listpack::new();
        lp.append(b"-1");
        lp.append(b"1000");
        lp.append(b"100000");
        assert_eq!(
            &lp.as_bytes()[6..lp.bytes() - 1],
            &[0xDF, 0xFF, 2, 0xC3, 0xE8, 2, 0xF2, 0xA0, 0x86, 0x01, 4]
        );
        // A 200-byte string: 12-bit header 0xE0 0xC8, backlen 202 in 2 bytes.
        let mut lp = Listpack::new();
        lp.append(&[b'z'; 200]);
        let b = lp.as_bytes();
        assert_eq!(&b[6..8], &[0xE0, 200]);
        assert_eq!(&b[208..210], &[202 >> 7, (202 & 127) | 128]);
    }

    #[test]
    fn listpack_insert_replace_delete_head_middle_tail() {
        let mut lp = Listpack::new();
        lp.append(b"b");
        lp.prepend(b"a");
        lp.append(b"d");
        let p = lp.seek(1).unwrap();
        let q = lp.insert(p, b"c", Where::After);
        assert_eq!(lp.get(q), LpEntry::Str(b"c"));
        let h = lp.insert(lp.first().unwrap(), b"0", Where::Before);
        assert_eq!(h, LP_HDR_SIZE);
        assert_eq!(
            entries(&lp),
            vec![
                b"0".to_vec(),
                b"a".to_vec(),
                b"b".to_vec(),
                b"c".to_vec(),
                b"d".to_vec()
            ]
        );
        check_round_trip(&lp);
        // Replace with a bigger and a smaller entry.
        let m = lp.seek(2).unwrap();
        lp.replace(m, &[b'B'; 300]);
        check_round_trip(&lp);
        let m = lp.seek(2).unwrap();
        lp.replace(m, b"77");
        assert_eq!(lp.get(lp.seek(2).unwrap()), LpEntry::Int(77));
        let t = lp.last().unwrap();
        lp.replace(t, b"tail");
        check_round_trip(&lp);
        // Delete head, middle, tail.
        let next = lp.delete(lp.first().unwrap());
        assert_eq!(next, Some(LP_HDR_SIZE));
        let m = lp.seek(1).unwrap();
        let after = lp.delete(m).unwrap();
        assert_eq!(lp.get(after), LpEntry::Str(b"c"));
        assert_eq!(lp.delete(lp.last().unwrap()), None);
        assert_eq!(entries(&lp), vec![b"a".to_vec(), b"c".to_vec()]);
        check_round_trip(&lp);
        lp.delete(lp.first().unwrap());
        lp.delete(lp.first().unwrap());
        assert_eq!(lp.as_bytes(), Listpack::new().as_bytes());
    }

    #[test]
    fn listpack_seek_negative_and_out_of_range() {
        let mut lp = Listpack::new();
        for i in 0..10 {
            lp.append(format!("v{i}").as_bytes());
        }
        for i in 0..10i64 {
            assert_eq!(
                lp.get(lp.seek(i).unwrap()).to_vec(),
                format!("v{i}").into_bytes()
            );
            assert_eq!(
                lp.get(lp.seek(i - 10).unwrap()).to_vec(),
                format!("v{i}").into_bytes()
            );
        }
        assert_eq!(lp.seek(10), None);
        assert_eq!(lp.seek(-11), None);
        assert_eq!(Listpack::new().seek(0), None);
    }

    #[test]
    fn listpack_find_with_skip() {
        let mut lp = Listpack::new();
        for v in ["f1", "v1", "12", "f1", "v3", "x"] {
            lp.append(v.as_bytes());
        }
        let f = lp.first().unwrap();
        // skip=1 compares only fields (0, 2, 4): "f1" is found at 0.
        assert_eq!(lp.find(f, b"f1", 1), Some(f));
        // "12" only as a field at index 2 (stored as an integer).
        assert_eq!(lp.find(f, b"12", 1), lp.seek(2));
        // "v1" is a value, not a field.
        assert_eq!(lp.find(f, b"v1", 1), None);
        assert_eq!(lp.find(f, b"v1", 0), lp.seek(1));
        assert_eq!(lp.find(f, b"012", 0), None);
    }

    #[test]
    fn listpack_delete_range() {
        let mut lp = Listpack::new();
        for i in 0..6 {
            lp.append_int(i);
        }
        lp.delete_range(1, 2);
        assert_eq!(
            entries(&lp),
            vec![b"0".to_vec(), b"3".to_vec(), b"4".to_vec(), b"5".to_vec()]
        );
        lp.delete_range(-2, 10);
        assert_eq!(entries(&lp), vec![b"0".to_vec(), b"3".to_vec()]);
        check_round_trip(&lp);
    }

    #[test]
    fn listpack_count_saturates_at_65535() {
        let mut lp = Listpack::new();
        for _ in 0..65536 {
            lp.append_int(1);
        }
        assert_eq!(&lp.as_bytes()[4..6], &[0xFF, 0xFF]);
        assert_eq!(lp.len(), 65536);
        lp.delete(lp.first().unwrap());
        // Still unknown after a delete: Redis does not recount on delete.
        assert_eq!(&lp.as_bytes()[4..6], &[0xFF, 0xFF]);
        assert_eq!(lp.len(), 65535);
    }

    #[test]
    fn listpack_random_pairs_shapes() {
        let mut lp = Listpack::new();
        for i in 0..10 {
            lp.append(format!("f{i}").as_bytes());
            lp.append_int(i);
        }
        for (f, v) in lp_random_pairs(&lp, 50) {
            assert_eq!(
                f.to_vec(),
                format!("f{}", v.to_vec()[0] as char).into_bytes()
            );
        }
        assert_eq!(lp_random_pairs(&lp, 50).len(), 50);
        let u = lp_random_pairs_unique(&lp, 7);
        assert_eq!(u.len(), 7);
        let mut keys: Vec<Vec<u8>> = u.iter().map(|(f, _)| f.to_vec()).collect();
        keys.dedup();
        assert_eq!(keys.len(), 7);
        assert_eq!(lp_random_pairs_unique(&lp, 70).len(), 10);
        assert!(lp_random_pair(&lp, 10).is_some());
    }

    #[test]
    fn listpack_entry_len_predicts_append() {
        let mut lp = Listpack::new();
        for v in [
            &b"0"[..],
            b"127",
            b"128",
            b"-4096",
            b"70000",
            b"9223372036854775807",
            b"x",
            &[b'a'; 63],
            &[b'a'; 64],
            &[b'a'; 4095],
            &[b'a'; 4096],
        ] {
            let before = lp.bytes();
            lp.append(v);
            assert_eq!(lp.bytes() - before, entry_len(v));
        }
        let before = lp.bytes();
        lp.append_int(-9);
        assert_eq!(lp.bytes() - before, int_entry_len(-9));
        let mut lp = Listpack::with_capacity(4096);
        assert_eq!(lp.capacity(), 4096);
        lp.append(b"a");
        assert_eq!(lp.capacity(), 4096);
        lp.shrink_to_fit();
        assert_eq!(lp.capacity(), lp.bytes());
        lp.reserve_exact_total(100);
        assert_eq!(lp.capacity(), 100);
    }

    #[test]
    fn listpack_safe_to_add() {
        assert!(lp_safe_to_add(None, LISTPACK_MAX_SAFETY_SIZE));
        assert!(!lp_safe_to_add(
            Some(&Listpack::new()),
            LISTPACK_MAX_SAFETY_SIZE
        ));
    }
}
