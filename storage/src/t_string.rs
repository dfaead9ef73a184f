//! The string type API (Redis's object.c string helpers + t_string.c's
//! encoding decisions, and the byte work behind APPEND, SETRANGE, GETRANGE
//! and the bit commands of bitops.c). Commands in the server's `t_string.rs`
//! call these and never choose an encoding themselves.
//!
//! Encodings, as `OBJECT ENCODING` shows them:
//! - `int`: the text is a canonical i64 of at most 20 chars ("123", "-5").
//! - `embstr`: at most 44 bytes, never modified in place.
//! - `raw`: anything longer, or any string that was modified in place
//!   (APPEND/SETRANGE/SETBIT always leave `raw`, as in Redis).
//!
//! Which constructor a command uses decides the encoding, exactly as in Redis:
//! - a value sent by the client (SET, MSET, GETSET, APPEND on a new key) goes
//!   through `create_string_object_encoded` (tryObjectEncoding: int, embstr
//!   or raw);
//! - a number computed by INCR/DECR is `create_string_object_from_long_long`
//!   (always `int`);
//! - the text INCRBYFLOAT formats is `create_string_object` (embstr or raw,
//!   never `int`, even for "3");
//! - a string built from zeros by SETRANGE/SETBIT on a missing key is
//!   `create_zeroed_raw` (always `raw`, even when short);
//! - changing an existing value in place first calls `make_raw`
//!   (dbUnshareStringValue), so the result is `raw`.

use std::borrow::Cow;

use crate::bitops::popcount;
use crate::object::{StrValue, OBJ_ENCODING_EMBSTR_SIZE_LIMIT};
use crate::util::string2ll;

/// createStringObject: embstr up to 44 bytes, raw above. No integer attempt
/// (DEBUG POPULATE values, for instance, are stored like this).
pub fn create_string_object(s: &[u8]) -> StrValue {
    if s.len() <= OBJ_ENCODING_EMBSTR_SIZE_LIMIT {
        StrValue::Embstr(s.into())
    } else {
        StrValue::Raw(s.to_vec())
    }
}

/// tryObjectEncoding on a fresh value (SET, MSET, GETSET...): a string of at
/// most 20 chars that reads back as the same i64 becomes `int`; otherwise
/// embstr/raw by length.
pub fn create_string_object_encoded(s: &[u8]) -> StrValue {
    if s.len() <= 20 {
        if let Some(v) = string2ll(s) {
            return StrValue::Int(v);
        }
    }
    create_string_object(s)
}

/// createStringObjectFromLongLongForValue: the result of INCR/DECR. Always
/// `int` (Redis shares the objects for 0..9999; that only shows in OBJECT
/// REFCOUNT, which is derived from the value elsewhere).
pub fn create_string_object_from_long_long(v: i64) -> StrValue {
    StrValue::Int(v)
}

/// createStringObjectFromLongDouble: INCRBYFLOAT stores the *text* it
/// formatted, as embstr or raw by length; it is never turned into `int`.
pub fn create_string_object_from_long_double(text: &[u8]) -> StrValue {
    create_string_object(text)
}

/// createObject(OBJ_STRING, sdsnewlen(NULL, len)): a zero-filled `raw`
/// string, the starting point of SETRANGE and SETBIT on a missing key.
/// `len` must already be bounded by the caller (proto-max-bulk-len).
pub fn create_zeroed_raw(len: usize) -> StrValue {
    StrValue::Raw(vec![0; len])
}

/// checkStringLength: may a string of `len` bytes grow by `append` bytes
/// without passing `max` (proto-max-bulk-len)? Overflow counts as too big.
pub fn check_string_length(len: usize, append: usize, max: i64) -> bool {
    match len.checked_add(append) {
        Some(total) => (total as u128) <= max.max(0) as u128,
        None => false,
    }
}

/// The byte range GETRANGE returns for `start..=end` on a string of `len`
/// bytes (t_string.c getrangeCommand): negative indexes count from the end,
/// both are clamped into the string, and `None` means "empty reply".
pub fn string_range(len: usize, start: i64, end: i64) -> Option<(usize, usize)> {
    // Both from the end and reversed: empty, even if clamping would make
    // them meet at 0 ("hello" -10 -20 is "", not "h").
    if start < 0 && end < 0 && start > end {
        return None;
    }
    let (start, end) = clamp_range(len as i128, start as i128, end as i128);
    if len == 0 || start > end {
        return None;
    }
    Some((start as usize, end as usize))
}

/// The index arithmetic shared by GETRANGE and BITCOUNT: add `len` to
/// negative indexes, clamp both to 0, and clamp `end` to the last index.
/// i128 so that `len + i64::MIN` cannot overflow.
fn clamp_range(len: i128, mut start: i128, mut end: i128) -> (i128, i128) {
    if start < 0 {
        start += len;
    }
    if end < 0 {
        end += len;
    }
    start = start.max(0);
    end = end.max(0);
    if end >= len {
        end = len - 1;
    }
    (start, end)
}

impl StrValue {
    /// STRLEN: the length of the string as text.
    pub fn len(&self) -> usize {
        match self {
            StrValue::Int(v) => itoa_len(*v),
            StrValue::Embstr(b) => b.len(),
            StrValue::Raw(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The value as bytes; an `int` is formatted on the fly (as Redis's
    /// getDecodedObject does).
    pub fn as_bytes(&self) -> Cow<'_, [u8]> {
        match self {
            StrValue::Int(v) => Cow::Owned(v.to_string().into_bytes()),
            StrValue::Embstr(b) => Cow::Borrowed(b),
            StrValue::Raw(v) => Cow::Borrowed(v),
        }
    }

    /// getLongLongFromObject: the value as an i64 when it is one.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            StrValue::Int(v) => Some(*v),
            StrValue::Embstr(b) => string2ll(b),
            StrValue::Raw(v) => string2ll(v),
        }
    }

    /// dbUnshareStringValue: turn the value into a `raw` string that can be
    /// modified in place, and return its buffer.
    pub fn make_raw(&mut self) -> &mut Vec<u8> {
        if !matches!(self, StrValue::Raw(_)) {
            let bytes = self.as_bytes().into_owned();
            *self = StrValue::Raw(bytes);
        }
        match self {
            StrValue::Raw(v) => v,
            _ => unreachable!("just converted to raw"),
        }
    }

    /// APPEND on an existing value: make it `raw`, append, return the new
    /// length. The caller has checked the size with `check_string_length`.
    pub fn append(&mut self, s: &[u8]) -> usize {
        let buf = self.make_raw();
        buf.extend_from_slice(s);
        buf.len()
    }

    /// SETRANGE: write `s` at `offset`, zero-padding if the string is shorter
    /// (sdsgrowzero), and return the new length. Leaves `raw`. The caller has
    /// checked `offset + s.len()` against proto-max-bulk-len.
    pub fn setrange(&mut self, offset: usize, s: &[u8]) -> usize {
        let buf = self.make_raw();
        let end = offset + s.len();
        if buf.len() < end {
            buf.resize(end, 0);
        }
        buf[offset..end].copy_from_slice(s);
        buf.len()
    }

    /// GETRANGE start end (see `string_range`); an `int` is read as its text.
    pub fn getrange(&self, start: i64, end: i64) -> Cow<'_, [u8]> {
        let bytes = self.as_bytes();
        match (string_range(bytes.len(), start, end), bytes) {
            (None, _) => Cow::Borrowed(&[]),
            (Some((s, e)), Cow::Borrowed(b)) => Cow::Borrowed(&b[s..=e]),
            (Some((s, e)), Cow::Owned(v)) => Cow::Owned(v[s..=e].to_vec()),
        }
    }

    /// GETBIT: bit `bitoffset`, counting from the most significant bit of
    /// byte 0; bits past the end read as 0.
    pub fn getbit(&self, bitoffset: u64) -> bool {
        let bytes = self.as_bytes();
        let byte = bitoffset >> 3;
        let bit = 7 - (bitoffset & 7) as u32;
        match usize::try_from(byte).ok().and_then(|i| bytes.get(i)) {
            Some(b) => b & (1 << bit) != 0,
            None => false,
        }
    }

    /// BITCOUNT key [start end [BYTE|BIT]]: set bits in the whole string
    /// (`range` None) or in a byte or bit range with GETRANGE-style indexes.
    pub fn bitcount(&self, range: Option<(i64, i64, bool)>) -> i64 {
        let p = self.as_bytes();
        let Some((start, end, isbit)) = range else {
            return popcount(&p);
        };
        if start < 0 && end < 0 && start > end {
            return 0;
        }
        let totlen = if isbit {
            (p.len() as i128) << 3
        } else {
            p.len() as i128
        };
        let (start, end) = clamp_range(totlen, start as i128, end as i128);
        if start > end {
            return 0;
        }
        if !isbit {
            return popcount(&p[start as usize..=end as usize]);
        }
        // Bit range: count the whole bytes, then take off the bits of the
        // first and last byte that lie outside the range.
        let (first, last) = ((start >> 3) as usize, (end >> 3) as usize);
        let first_mask: u8 = !(0xffu16 >> (start & 7)) as u8;
        let last_mask: u8 = ((1u16 << (7 - (end & 7))) - 1) as u8;
        popcount(&p[first..=last]) - popcount(&[p[first] & first_mask, p[last] & last_mask])
    }

    /// Bytes this value occupies beyond the object header (MEMORY USAGE).
    pub fn alloc_size(&self) -> usize {
        match self {
            StrValue::Int(_) => 0,
            StrValue::Embstr(b) => b.len(),
            StrValue::Raw(v) => v.capacity(),
        }
    }
}

// ---- LCS (t_string.c lcsCommand) ----

/// One run of the longest common subsequence that is contiguous in both
/// strings: `a.0..=a.1` in the first, `b.0..=b.1` in the second.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LcsMatch {
    pub a: (u32, u32),
    pub b: (u32, u32),
    pub len: u32,
}

/// What LCS computed: the length, and (when asked) the subsequence itself
/// and its matching runs, from the end of the strings backwards as Redis
/// reports them.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct LcsResult {
    pub len: u32,
    pub string: Vec<u8>,
    pub matches: Vec<LcsMatch>,
}

/// Why LCS refused (each maps to Redis's error text).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LcsError {
    /// A string is 4 GB or longer: "String too long for LCS".
    TooLong,
    /// The table would exceed proto-max-bulk-len.
    ExceedsLimit,
    /// The table could not be allocated.
    NoMemory,
}

/// The longest common subsequence of `a` and `b` with the classic dynamic
/// programming table: LCS[i][j] is the LCS length of a[..i] and b[..j], one
/// u32 per cell, (|a|+1)*(|b|+1) cells. That table is transient memory
/// Redis bounds by `max_table_bytes` (proto-max-bulk-len); the time is
/// O(|a|*|b|), in the loop, as in Redis.
///
/// With `backtrack`, walk the table back from the end to rebuild the
/// subsequence and its runs; runs shorter than `minmatchlen` are left out
/// of `matches` (0 keeps them all).
pub fn lcs(
    a: &[u8],
    b: &[u8],
    max_table_bytes: i64,
    backtrack: bool,
    minmatchlen: i64,
) -> Result<LcsResult, LcsError> {
    if a.len() as u64 >= u32::MAX as u64 - 1 || b.len() as u64 >= u32::MAX as u64 - 1 {
        return Err(LcsError::TooLong);
    }
    let (alen, blen) = (a.len(), b.len());
    let cells = (alen as u128 + 1) * (blen as u128 + 1);
    if cells * 4 > max_table_bytes.max(0) as u128 {
        return Err(LcsError::ExceedsLimit);
    }
    let cells = cells as usize;
    let mut table: Vec<u32> = Vec::new();
    table
        .try_reserve_exact(cells)
        .map_err(|_| LcsError::NoMemory)?;
    table.resize(cells, 0);
    let w = blen + 1;
    // Row 0 and column 0 stay 0: the LCS with an empty prefix is empty.
    for i in 1..=alen {
        for j in 1..=blen {
            table[i * w + j] = if a[i - 1] == b[j - 1] {
                table[(i - 1) * w + j - 1] + 1
            } else {
                table[(i - 1) * w + j].max(table[i * w + j - 1])
            };
        }
    }
    let len = table[alen * w + blen];
    let mut out = LcsResult {
        len,
        ..Default::default()
    };
    if !backtrack {
        return Ok(out);
    }
    out.string = vec![0; len as usize];
    let mut idx = len as usize;
    // The run being collected; `None` until the next match starts one.
    let mut run: Option<LcsMatch> = None;
    let (mut i, mut j) = (alen, blen);
    while i > 0 && j > 0 {
        let mut emit = false;
        if a[i - 1] == b[j - 1] {
            out.string[idx - 1] = a[i - 1];
            match run.as_mut() {
                None => {
                    let (ai, bj) = ((i - 1) as u32, (j - 1) as u32);
                    run = Some(LcsMatch {
                        a: (ai, ai),
                        b: (bj, bj),
                        len: 0,
                    });
                }
                // Still contiguous: extend the run backwards.
                Some(r) if r.a.0 as usize == i && r.b.0 as usize == j => {
                    r.a.0 -= 1;
                    r.b.0 -= 1;
                }
                Some(_) => emit = true,
            }
            // A run that reached the start of either string is complete.
            if let Some(r) = run {
                if r.a.0 == 0 || r.b.0 == 0 {
                    emit = true;
                }
            }
            idx -= 1;
            i -= 1;
            j -= 1;
        } else {
            // Follow the larger neighbour, as the table was filled.
            if table[(i - 1) * w + j] > table[i * w + j - 1] {
                i -= 1;
            } else {
                j -= 1;
            }
            emit = run.is_some();
        }
        if emit {
            if let Some(mut r) = run.take() {
                r.len = r.a.1 - r.a.0 + 1;
                if minmatchlen == 0 || r.len as i64 >= minmatchlen {
                    out.matches.push(r);
                }
            }
        }
    }
    Ok(out)
}

/// Number of decimal characters of `v` (sdigits10 in util.c).
fn itoa_len(v: i64) -> usize {
    let mut n = if v < 0 { 2 } else { 1 };
    let mut u = v.unsigned_abs();
    while u >= 10 {
        u /= 10;
        n += 1;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_integers_become_int_encoding() {
        assert_eq!(create_string_object_encoded(b"12345"), StrValue::Int(12345));
        assert_eq!(create_string_object_encoded(b"-1"), StrValue::Int(-1));
        assert!(matches!(
            create_string_object_encoded(b"012"),
            StrValue::Embstr(_)
        ));
        assert!(matches!(
            create_string_object_encoded(b"+1"),
            StrValue::Embstr(_)
        ));
    }

    #[test]
    fn embstr_limit_is_44_bytes() {
        assert!(matches!(
            create_string_object(&[b'a'; 44]),
            StrValue::Embstr(_)
        ));
        assert!(matches!(
            create_string_object(&[b'a'; 45]),
            StrValue::Raw(_)
        ));
    }

    #[test]
    fn strlen_of_int_counts_digits_and_sign() {
        for v in [0i64, 9, 10, -1, -10, i64::MAX, i64::MIN] {
            assert_eq!(StrValue::Int(v).len(), v.to_string().len());
        }
    }

    #[test]
    fn make_raw_keeps_the_text() {
        let mut s = StrValue::Int(42);
        s.make_raw().extend_from_slice(b"x");
        assert_eq!(&*s.as_bytes(), b"42x");
    }

    #[test]
    fn append_turns_any_encoding_into_raw() {
        for mut s in [StrValue::Int(10), create_string_object(b"ab")] {
            let before = s.len();
            assert_eq!(s.append(b"xyz"), before + 3);
            assert!(matches!(s, StrValue::Raw(_)));
        }
        let mut s = StrValue::Int(10);
        s.append(b"1");
        assert_eq!(&*s.as_bytes(), b"101");
    }

    #[test]
    fn setrange_pads_with_zeros_and_overwrites() {
        let mut s = create_zeroed_raw(0);
        assert_eq!(s.setrange(3, b"ab"), 5);
        assert_eq!(&*s.as_bytes(), b"\0\0\0ab");
        let mut s = create_string_object(b"hello");
        assert_eq!(s.setrange(1, b"EL"), 5);
        assert_eq!(&*s.as_bytes(), b"hELlo");
        assert!(matches!(s, StrValue::Raw(_)));
    }

    #[test]
    fn getrange_follows_redis_index_rules() {
        let s = create_string_object(b"hello");
        assert_eq!(&*s.getrange(0, -1), b"hello");
        assert_eq!(&*s.getrange(-3, -1), b"llo");
        assert_eq!(&*s.getrange(0, -100), b"h");
        assert_eq!(&*s.getrange(-10, -20), b"");
        assert_eq!(&*s.getrange(-1, -5), b"");
        assert_eq!(&*s.getrange(10, 20), b"");
        assert_eq!(&*s.getrange(i64::MIN, i64::MAX), b"hello");
        assert_eq!(&*s.getrange(i64::MAX, i64::MIN), b"");
        assert_eq!(&*StrValue::Int(-12345).getrange(-3, -1), b"345");
        assert_eq!(&*create_string_object(b"").getrange(0, 0), b"");
    }

    #[test]
    fn getbit_reads_msb_first_and_past_the_end_as_zero() {
        let s = create_string_object(b"\x40");
        assert!(!s.getbit(0));
        assert!(s.getbit(1));
        assert!(!s.getbit(8));
        assert!(!s.getbit(u64::MAX));
        // an int is read as its text: "5" is 0x35 = 0011 0101
        assert!(StrValue::Int(5).getbit(2));
        assert!(!StrValue::Int(5).getbit(4));
    }

    #[test]
    fn bitcount_byte_and_bit_ranges() {
        let s = create_string_object(b"foobar");
        assert_eq!(s.bitcount(None), 26);
        assert_eq!(s.bitcount(Some((1, 1, false))), 6);
        assert_eq!(s.bitcount(Some((-1, -5, false))), 0);
        assert_eq!(s.bitcount(Some((5, 30, true))), 17);
        assert_eq!(s.bitcount(Some((7, 7, true))), 0);
        assert_eq!(s.bitcount(Some((9, 9, true))), 1);
        assert_eq!(s.bitcount(Some((0, -1, true))), 26);
        assert_eq!(s.bitcount(Some((100, 200, true))), 0);
        assert_eq!(s.bitcount(Some((i64::MIN, i64::MAX, true))), 26);
        assert_eq!(StrValue::Int(-12345).bitcount(Some((3, 20, true))), 8);
        assert_eq!(create_string_object(b"").bitcount(Some((0, -1, true))), 0);
    }

    #[test]
    fn lcs_finds_subsequence_and_runs() {
        let r = lcs(b"ohmytext", b"mynewtext", 1 << 20, true, 0).unwrap();
        assert_eq!(r.len, 6);
        assert_eq!(r.string, b"mytext");
        let runs: Vec<_> = r.matches.iter().map(|m| (m.a, m.b, m.len)).collect();
        assert_eq!(runs, vec![((4, 7), (5, 8), 4), ((2, 3), (0, 1), 2)]);
        let r = lcs(b"ohmytext", b"mynewtext", 1 << 20, true, 4).unwrap();
        assert_eq!(r.matches.len(), 1);
        let r = lcs(b"", b"abc", 1 << 20, true, 0).unwrap();
        assert_eq!((r.len, r.string.len(), r.matches.len()), (0, 0, 0));
        assert_eq!(
            lcs(b"abc", b"abc", 15, false, 0),
            Err(LcsError::ExceedsLimit)
        );
        assert_eq!(lcs(b"abc", b"abc", 64, false, 0).unwrap().len, 3);
    }

    #[test]
    fn string_length_check_uses_the_limit_and_catches_overflow() {
        let max = 512 * 1024 * 1024;
        assert!(check_string_length(536870911, 1, max));
        assert!(!check_string_length(536870912, 1, max));
        assert!(!check_string_length(usize::MAX, 1, max));
    }

    #[test]
    fn computed_values_pick_their_encoding() {
        assert_eq!(create_string_object_from_long_long(123), StrValue::Int(123));
        assert!(matches!(
            create_string_object_from_long_double(b"3"),
            StrValue::Embstr(_)
        ));
        assert!(matches!(create_zeroed_raw(1), StrValue::Raw(_)));
    }
}
