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

/// redisPopcount: the number of set bits in `p`.
pub fn popcount(p: &[u8]) -> i64 {
    let mut count = 0i64;
    for b in p {
        count += b.count_ones() as i64;
    }
    count
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

    /// SETBIT (bitops.c lookupStringForBitCommand + setbitCommand): make the
    /// value `raw`, grow it with zero bytes to hold the bit, set or clear it.
    /// Returns (the old bit, whether the string changed at all): growing counts
    /// as a change, setting a bit to the value it has does not.
    /// The caller has bounded `bitoffset` by proto-max-bulk-len.
    pub fn setbit(&mut self, bitoffset: u64, on: bool) -> (bool, bool) {
        let byte = (bitoffset >> 3) as usize;
        let bit = 7 - (bitoffset & 7) as u32;
        let buf = self.make_raw();
        let grew = buf.len() < byte + 1;
        if grew {
            buf.resize(byte + 1, 0);
        }
        let old = buf[byte] & (1 << bit) != 0;
        if grew || old != on {
            buf[byte] &= !(1 << bit);
            buf[byte] |= (on as u8) << bit;
        }
        (old, grew || old != on)
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
    fn setbit_grows_and_reports_changes() {
        let mut s = create_zeroed_raw(0);
        assert_eq!(s.setbit(7, true), (false, true));
        assert_eq!(&*s.as_bytes(), b"\x01");
        assert_eq!(s.setbit(7, true), (true, false));
        assert_eq!(s.setbit(7, false), (true, true));
        let mut s = StrValue::Int(5);
        assert_eq!(s.setbit(0, false), (false, false));
        assert!(matches!(s, StrValue::Raw(_)), "SETBIT always leaves raw");
        assert_eq!(s.setbit(20, false), (false, true), "growing is a change");
        assert_eq!(s.len(), 3);
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
