//! The byte work behind Redis's bit commands (bitops.c): population count,
//! first set/clear bit, the bitwise operations of BITOP, and the
//! arbitrary-width integers of BITFIELD. Pure functions over byte slices;
//! the commands (and the string lookups, dirty rules and replies) are in
//! the server's `bitops.rs`.
//!
//! Bit numbering is the one SETBIT uses everywhere: bit 0 is the most
//! significant bit of byte 0, bit 7 its least significant, bit 8 the most
//! significant bit of byte 1, and so on. A BITFIELD integer is read and
//! written in that order, so an aligned `u8`/`i16`/... is big endian.
//!
//! Speed matters here (BITCOUNT of a 512 MB bitmap is a single command): the
//! counting and searching loops work eight bytes at a time, as Redis's
//! redisPopcount and redisBitpos do, and fall back to bytes only at the
//! edges.

/// BITOP's operation (BITOP_AND / OR / XOR / NOT in bitops.c).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BitOp {
    And,
    Or,
    Xor,
    Not,
}

/// BITFIELD's overflow behaviour (BFOVERFLOW_WRAP / SAT / FAIL).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overflow {
    /// Wrap around, modulo 2^bits (the default).
    Wrap,
    /// Saturate at the type's minimum or maximum.
    Sat,
    /// Do nothing and reply nil.
    Fail,
}

/// redisPopcount: the number of set bits in `p`.
///
/// Eight bytes at a time, four words per round so the additions of
/// independent words overlap (Redis unrolls seven 32-bit words the same
/// way); the tail is counted byte by byte.
pub fn popcount(p: &[u8]) -> i64 {
    let mut chunks = p.chunks_exact(32);
    let mut bits = 0u64;
    for c in &mut chunks {
        let w = |i: usize| u64::from_ne_bytes(c[i..i + 8].try_into().unwrap()).count_ones();
        bits += (w(0) + w(8) + w(16) + w(24)) as u64;
    }
    let mut words = chunks.remainder().chunks_exact(8);
    for c in &mut words {
        bits += u64::from_ne_bytes(c.try_into().unwrap()).count_ones() as u64;
    }
    for b in words.remainder() {
        bits += b.count_ones() as u64;
    }
    bits as i64
}

/// redisBitpos: the position of the first bit set to `bit` in `p`.
///
/// If no such bit exists, a search for 1 answers -1, but a search for 0
/// answers `p.len() * 8`: the string is taken as padded with zeros on the
/// right (the callers decide whether that padding counts).
pub fn bitpos(p: &[u8], bit: bool) -> i64 {
    // The byte that cannot hold the bit we look for: skip whole words of it.
    let skip: u8 = if bit { 0 } else { 0xff };
    let skip_word = u64::from_ne_bytes([skip; 8]);
    let mut i = 0;
    while i + 8 <= p.len() && u64::from_ne_bytes(p[i..i + 8].try_into().unwrap()) == skip_word {
        i += 8;
    }
    while i < p.len() && p[i] == skip {
        i += 1;
    }
    match p.get(i) {
        // Bits are numbered from the most significant one of each byte.
        Some(&b) => {
            let within = if bit {
                b.leading_zeros()
            } else {
                b.leading_ones()
            };
            (i as i64) * 8 + within as i64
        }
        None if bit => -1,
        None => (p.len() as i64) * 8,
    }
}

/// A BITPOS/BITCOUNT range as the client gave it: `start`, an optional
/// `end`, and whether the indexes count bits (BIT) or bytes (BYTE).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BitRange {
    pub start: i64,
    pub end: Option<i64>,
    pub isbit: bool,
}

/// BITPOS key bit [start [end [BYTE|BIT]]] on the bytes `p` of an existing
/// string (bitops.c bitposCommand after its argument parsing).
///
/// The range is normalised like GETRANGE's (negative indexes from the end,
/// clamped into the string). A BIT range is turned into a byte range plus
/// two masks for the bits of its first and last byte that lie outside it;
/// those edge bytes are searched on their own, masked, and the whole bytes
/// in between with `bitpos`. An empty range answers -1. Without an explicit
/// `end`, a search for 0 may answer the first bit past the string (the
/// right side is zero padded); with one, it may not.
pub fn bitpos_range(p: &[u8], bit: bool, range: Option<BitRange>) -> i64 {
    let strlen = p.len() as i64;
    let (mut start, mut end) = (0i64, strlen - 1);
    let (mut first_mask, mut last_mask) = (0u8, 0u8);
    let end_given = match range {
        None => false,
        Some(r) => {
            let mut totlen = strlen;
            start = r.start;
            end = match r.end {
                Some(e) => e,
                None if r.isbit => (totlen << 3) + 7,
                None => totlen - 1,
            };
            if r.isbit {
                totlen <<= 3;
            }
            (start, end) = normalise_range(totlen, start, end);
            if r.isbit && start <= end {
                // Bits of the first / last byte that are outside the range.
                first_mask = !((1u16 << (8 - (start & 7))) - 1) as u8;
                last_mask = ((1u16 << (7 - (end & 7))) - 1) as u8;
                start >>= 3;
                end >>= 3;
            }
            r.end.is_some()
        }
    };
    if start > end {
        return -1;
    }
    let (mut start, end) = (start as usize, end as usize);
    let mut bytes = end - start + 1;
    // Clear (searching for 1) or set (searching for 0) the masked bits.
    let masked = |b: u8, mask: u8| if bit { b & !mask } else { b | mask };
    let mut pos;
    'search: {
        if first_mask != 0 {
            let mut tmp = masked(p[start], first_mask);
            if last_mask != 0 && bytes == 1 {
                tmp = masked(tmp, last_mask);
            }
            pos = bitpos(&[tmp], bit);
            if bytes == 1 || (pos != -1 && pos != 8) {
                break 'search;
            }
            start += 1;
            bytes -= 1;
        }
        // The last byte is searched apart when it has bits out of range.
        let curbytes = bytes - usize::from(last_mask != 0);
        if curbytes > 0 {
            pos = bitpos(&p[start..start + curbytes], bit);
            if bytes == curbytes || (pos != -1 && pos != (curbytes as i64) << 3) {
                break 'search;
            }
            start += curbytes;
            bytes -= curbytes;
        }
        pos = bitpos(&[masked(p[end], last_mask)], bit);
    }
    // With an explicit end, the first 0 past the range is not an answer.
    if end_given && !bit && pos == (bytes as i64) << 3 {
        return -1;
    }
    if pos != -1 {
        pos += (start as i64) << 3;
    }
    pos
}

/// GETRANGE-style index normalisation over a length of `totlen` (bytes or
/// bits): negative indexes count from the end, both are clamped to 0, and
/// `end` to the last index.
pub fn normalise_range(totlen: i64, mut start: i64, mut end: i64) -> (i64, i64) {
    if start < 0 {
        start += totlen;
    }
    if end < 0 {
        end += totlen;
    }
    start = start.max(0);
    end = end.max(0);
    if end >= totlen {
        end = totlen - 1;
    }
    (start, end)
}

/// The bitwise operation of BITOP over `srcs` (missing keys are empty
/// slices). The result is as long as the longest source; a shorter source
/// counts as padded with zero bytes (so AND yields zeros past the shortest
/// one). NOT has exactly one source.
pub fn bitop(op: BitOp, srcs: &[&[u8]]) -> Vec<u8> {
    let maxlen = srcs.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut res = vec![0u8; maxlen];
    let Some((first, rest)) = srcs.split_first() else {
        return res;
    };
    res[..first.len()].copy_from_slice(first);
    match op {
        BitOp::Not => {
            for b in res.iter_mut() {
                *b = !*b;
            }
        }
        BitOp::And => {
            for s in rest {
                // Past the end of `s` its bytes are 0, and so is the result.
                for (r, b) in res.iter_mut().zip(s.iter()) {
                    *r &= b;
                }
                for r in res.iter_mut().skip(s.len()) {
                    *r = 0;
                }
            }
        }
        BitOp::Or => {
            for s in rest {
                for (r, b) in res.iter_mut().zip(s.iter()) {
                    *r |= b;
                }
            }
        }
        BitOp::Xor => {
            for s in rest {
                for (r, b) in res.iter_mut().zip(s.iter()) {
                    *r ^= b;
                }
            }
        }
    }
    res
}

// ---- BITFIELD integers (set/getUnsignedBitfield and friends) ----

/// setUnsignedBitfield: write the low `bits` bits of `value` at bit
/// `offset`, most significant first. `p` must hold bit `offset + bits - 1`.
pub fn set_unsigned_bitfield(p: &mut [u8], mut offset: u64, bits: u32, value: u64) {
    for j in 0..bits {
        let bitval = (value >> (bits - 1 - j)) & 1;
        let byte = (offset >> 3) as usize;
        let bit = 7 - (offset & 7) as u32;
        p[byte] = (p[byte] & !(1 << bit)) | ((bitval as u8) << bit);
        offset += 1;
    }
}

/// setSignedBitfield: the two's complement bits of `value`.
pub fn set_signed_bitfield(p: &mut [u8], offset: u64, bits: u32, value: i64) {
    set_unsigned_bitfield(p, offset, bits, value as u64);
}

/// getUnsignedBitfield: `bits` bits from bit `offset`. `p` must hold bit
/// `offset + bits - 1`.
pub fn get_unsigned_bitfield(p: &[u8], mut offset: u64, bits: u32) -> u64 {
    let mut value = 0u64;
    for _ in 0..bits {
        let byte = (offset >> 3) as usize;
        let bit = 7 - (offset & 7) as u32;
        value = (value << 1) | ((p[byte] >> bit) & 1) as u64;
        offset += 1;
    }
    value
}

/// getSignedBitfield: as unsigned, then the sign bit extended.
pub fn get_signed_bitfield(p: &[u8], offset: u64, bits: u32) -> i64 {
    let mut value = get_unsigned_bitfield(p, offset, bits);
    if bits < 64 && value & (1u64 << (bits - 1)) != 0 {
        value |= u64::MAX << bits;
    }
    value as i64
}

/// BITFIELD GET on a string that may be shorter than the field: Redis
/// copies up to 9 bytes from the field's first byte into a zeroed buffer
/// and reads there, so bits past the end of the string read as 0.
pub fn get_bitfield_padded(p: &[u8], offset: u64, bits: u32, signed: bool) -> i64 {
    let byte = offset >> 3;
    let mut buf = [0u8; 9];
    if let Ok(start) = usize::try_from(byte) {
        if start < p.len() {
            let n = (p.len() - start).min(9);
            buf[..n].copy_from_slice(&p[start..start + n]);
        }
    }
    let within = offset - byte * 8;
    if signed {
        get_signed_bitfield(&buf, within, bits)
    } else {
        get_unsigned_bitfield(&buf, within, bits) as i64
    }
}

/// What an overflow check found: in range, or past the maximum / minimum
/// (with the value the operation must produce instead, except under FAIL).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Checked<T> {
    Fits,
    Over(Option<T>),
    Under(Option<T>),
}

impl<T: Copy> Checked<T> {
    /// Did the value leave the range?
    pub fn overflowed(&self) -> bool {
        !matches!(self, Checked::Fits)
    }

    /// The replacement value (WRAP or SAT), if any.
    pub fn limit(&self) -> Option<T> {
        match self {
            Checked::Fits => None,
            Checked::Over(l) | Checked::Under(l) => *l,
        }
    }
}

/// checkUnsignedBitfieldOverflow: does `value + incr` fit in `bits`
/// unsigned bits? `value` may itself be out of range (BITFIELD SET passes
/// the new value with incr 0). The arithmetic is Redis's, wrapping where
/// C's unsigned arithmetic wraps.
pub fn check_unsigned_bitfield_overflow(
    value: u64,
    incr: i64,
    bits: u32,
    owtype: Overflow,
) -> Checked<u64> {
    let max = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let maxincr = max.wrapping_sub(value) as i64;
    let minincr = (value as i64).wrapping_neg();
    let wrap = || {
        let mask = if bits == 64 { 0 } else { u64::MAX << bits };
        value.wrapping_add(incr as u64) & !mask
    };
    if value > max || (incr > 0 && incr > maxincr) {
        Checked::Over(match owtype {
            Overflow::Wrap => Some(wrap()),
            Overflow::Sat => Some(max),
            Overflow::Fail => None,
        })
    } else if incr < 0 && incr < minincr {
        Checked::Under(match owtype {
            Overflow::Wrap => Some(wrap()),
            Overflow::Sat => Some(0),
            Overflow::Fail => None,
        })
    } else {
        Checked::Fits
    }
}

/// checkSignedBitfieldOverflow: does `value + incr` fit in `bits` signed
/// bits? As in Redis, the increments that would reach the limits are
/// computed with wrapping arithmetic and only trusted where they cannot
/// have wrapped.
pub fn check_signed_bitfield_overflow(
    value: i64,
    incr: i64,
    bits: u32,
    owtype: Overflow,
) -> Checked<i64> {
    let max: i64 = if bits == 64 {
        i64::MAX
    } else {
        (1i64 << (bits - 1)) - 1
    };
    let min = -max - 1;
    let maxincr = (max as u64).wrapping_sub(value as u64) as i64;
    let minincr = min.wrapping_sub(value);
    let wrap = || {
        let msb = 1u64 << (bits - 1);
        let mut c = (value as u64).wrapping_add(incr as u64);
        if bits < 64 {
            // Sign-extend from the field's top bit, or mask to the field.
            let mask = u64::MAX << bits;
            if c & msb != 0 {
                c |= mask;
            } else {
                c &= !mask;
            }
        }
        c as i64
    };
    if value > max || (bits != 64 && incr > maxincr) || (value >= 0 && incr > 0 && incr > maxincr) {
        Checked::Over(match owtype {
            Overflow::Wrap => Some(wrap()),
            Overflow::Sat => Some(max),
            Overflow::Fail => None,
        })
    } else if value < min
        || (bits != 64 && incr < minincr)
        || (value < 0 && incr < 0 && incr < minincr)
    {
        Checked::Under(match owtype {
            Overflow::Wrap => Some(wrap()),
            Overflow::Sat => Some(min),
            Overflow::Fail => None,
        })
    } else {
        Checked::Fits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive_popcount(p: &[u8]) -> i64 {
        p.iter().map(|b| b.count_ones() as i64).sum()
    }

    fn naive_bitpos(p: &[u8], bit: bool) -> i64 {
        for i in 0..p.len() * 8 {
            if ((p[i / 8] >> (7 - i % 8)) & 1 == 1) == bit {
                return i as i64;
            }
        }
        if bit {
            -1
        } else {
            (p.len() * 8) as i64
        }
    }

    #[test]
    fn popcount_matches_bytewise_count_at_every_length() {
        let data: Vec<u8> = (0..200u32).map(|i| (i * 37 + 11) as u8).collect();
        for len in 0..data.len() {
            for start in 0..3.min(len + 1) {
                let s = &data[start..len];
                assert_eq!(popcount(s), naive_popcount(s), "len {len} start {start}");
            }
        }
        assert_eq!(popcount(b"foobar"), 26);
    }

    #[test]
    fn bitpos_finds_first_bit_and_pads_zeros_on_the_right() {
        assert_eq!(bitpos(b"", true), -1);
        assert_eq!(bitpos(b"", false), 0);
        assert_eq!(bitpos(&[0xff, 0xf0, 0x00], false), 12);
        assert_eq!(bitpos(&[0x00, 0x00, 0x01], true), 23);
        assert_eq!(bitpos(&[0xff; 20], false), 160);
        assert_eq!(bitpos(&[0x00; 20], true), -1);
        let mut v = vec![0u8; 100];
        for pos in [0usize, 7, 8, 63, 64, 65, 799] {
            v.iter_mut().for_each(|b| *b = 0);
            v[pos / 8] |= 0x80 >> (pos % 8);
            assert_eq!(bitpos(&v, true), pos as i64);
            let inv: Vec<u8> = v.iter().map(|b| !b).collect();
            assert_eq!(bitpos(&inv, false), pos as i64);
            assert_eq!(bitpos(&v[1..], true), naive_bitpos(&v[1..], true));
        }
    }

    #[test]
    fn bitop_pads_shorter_sources_with_zeros() {
        let a: &[u8] = b"\xff\xf0\x0f";
        let b: &[u8] = b"\x0f";
        assert_eq!(bitop(BitOp::And, &[a, b]), vec![0x0f, 0, 0]);
        assert_eq!(bitop(BitOp::Or, &[b, a]), vec![0xff, 0xf0, 0x0f]);
        assert_eq!(bitop(BitOp::Xor, &[a, b]), vec![0xf0, 0xf0, 0x0f]);
        assert_eq!(bitop(BitOp::Not, &[a]), vec![0x00, 0x0f, 0xf0]);
        assert_eq!(bitop(BitOp::And, &[b"", b""]), Vec::<u8>::new());
        assert_eq!(bitop(BitOp::And, &[b"", a]), vec![0, 0, 0]);
    }

    #[test]
    fn bitfield_layout_is_msb_first() {
        // The example from bitops.c: a u5 of 23 at offset 7.
        let mut p = [0u8; 2];
        set_unsigned_bitfield(&mut p, 7, 5, 23);
        assert_eq!(p, [0b0000_0001, 0b0111_0000]);
        assert_eq!(get_unsigned_bitfield(&p, 7, 5), 23);
        set_signed_bitfield(&mut p, 0, 8, -1);
        assert_eq!(p[0], 0xff);
        assert_eq!(get_signed_bitfield(&p, 0, 8), -1);
        assert_eq!(get_signed_bitfield(&p, 0, 4), -1);
        let mut q = [0u8; 9];
        set_signed_bitfield(&mut q, 3, 64, i64::MIN);
        assert_eq!(get_signed_bitfield(&q, 3, 64), i64::MIN);
        assert_eq!(get_bitfield_padded(b"\x80", 0, 16, false), 0x8000);
        assert_eq!(get_bitfield_padded(b"\x80", 1000, 16, true), 0);
        assert_eq!(get_bitfield_padded(b"\x80", u64::MAX - 70, 63, true), 0);
    }

    #[test]
    fn unsigned_overflow_wraps_saturates_or_fails() {
        use Checked::*;
        assert_eq!(
            check_unsigned_bitfield_overflow(250, 10, 8, Overflow::Wrap),
            Over(Some(4))
        );
        assert_eq!(
            check_unsigned_bitfield_overflow(250, 10, 8, Overflow::Sat),
            Over(Some(255))
        );
        assert_eq!(
            check_unsigned_bitfield_overflow(250, 10, 8, Overflow::Fail),
            Over(None)
        );
        assert_eq!(
            check_unsigned_bitfield_overflow(5, -10, 8, Overflow::Wrap),
            Under(Some(251))
        );
        assert_eq!(
            check_unsigned_bitfield_overflow(5, -10, 8, Overflow::Sat),
            Under(Some(0))
        );
        assert_eq!(
            check_unsigned_bitfield_overflow(5, -5, 8, Overflow::Sat),
            Fits
        );
        // SET of -1 into a u8: the value itself is out of range.
        assert_eq!(
            check_unsigned_bitfield_overflow(u64::MAX, 0, 8, Overflow::Wrap),
            Over(Some(255))
        );
        assert_eq!(
            check_unsigned_bitfield_overflow(1 << 62, 1 << 62, 63, Overflow::Sat),
            Over(Some((1 << 63) - 1))
        );
    }

    #[test]
    fn signed_overflow_wraps_saturates_or_fails() {
        use Checked::*;
        assert_eq!(
            check_signed_bitfield_overflow(127, 1, 8, Overflow::Wrap),
            Over(Some(-128))
        );
        assert_eq!(
            check_signed_bitfield_overflow(127, 1, 8, Overflow::Sat),
            Over(Some(127))
        );
        assert_eq!(
            check_signed_bitfield_overflow(-128, -1, 8, Overflow::Wrap),
            Under(Some(127))
        );
        assert_eq!(
            check_signed_bitfield_overflow(-128, -1, 8, Overflow::Sat),
            Under(Some(-128))
        );
        assert_eq!(
            check_signed_bitfield_overflow(200, 0, 8, Overflow::Wrap),
            Over(Some(-56))
        );
        assert_eq!(
            check_signed_bitfield_overflow(i64::MAX, 1, 64, Overflow::Wrap),
            Over(Some(i64::MIN))
        );
        assert_eq!(
            check_signed_bitfield_overflow(i64::MIN, -1, 64, Overflow::Sat),
            Under(Some(i64::MIN))
        );
        assert_eq!(
            check_signed_bitfield_overflow(-5, i64::MAX, 64, Overflow::Sat),
            Fits
        );
        assert_eq!(
            check_signed_bitfield_overflow(0, -1, 1, Overflow::Sat),
            Fits
        );
        assert_eq!(
            check_signed_bitfield_overflow(0, 1, 1, Overflow::Wrap),
            Over(Some(-1))
        );
    }
}
