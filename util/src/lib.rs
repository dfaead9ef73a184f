//! Number <-> text conversions with Redis's exact rules (redis: util.c):
//! the one home of `string2ll` and `ll2string` for every crate of the
//! workspace (protocol frames lengths with them, storage encodes integers
//! with them, the server parses arguments with them).
//!
//! Redis parses every number a client sends - multibulk counts, bulk lengths,
//! and later command arguments such as `EXPIRE key 10` - with one strict
//! function, `string2ll`. It is stricter than Rust's `str::parse::<i64>()`:
//!
//! | text            | `string2ll` | `"...".parse::<i64>()` |
//! |-----------------|-------------|------------------------|
//! | `"+1"`          | rejected    | 1                      |
//! | `"01"`, `"-0"`  | rejected    | 1, 0                   |
//! | 21+ characters  | rejected    | parsed if it fits      |
//!
//! so `*+1\r\n` is a protocol error in Redis, and we keep that answer by
//! reproducing the function rather than reaching for `parse`.
//!
//! The other direction, `ll2string`, is on the hot path of every reply that
//! carries a length or an integer (`$5`, `*3`, `:42`): it writes digits two at
//! a time from a lookup table into a caller's stack buffer, so a reply never
//! allocates to print a number.

/// LONG_STR_SIZE (util.h): 21 bytes hold the longest `long long` text,
/// "-9223372036854775808" (20 chars), plus C's NUL. `string2ll` refuses any
/// input of that length or more before looking at it, which bounds its work.
pub const LONG_STR_SIZE: usize = 21;

/// Parse `s` exactly as Redis's `string2ll` (util.c) does. `None` means "not a
/// valid long long": the caller turns that into its own error text.
///
/// Rules: optional `-`, then either the single digit `0` or a non-zero digit
/// followed by digits; nothing else (no `+`, no spaces, no leading zeros, no
/// `-0`), at most 20 characters, and the value must fit in an `i64`.
pub fn string2ll(s: &[u8]) -> Option<i64> {
    // Empty or too long: not a number (checked first, like Redis).
    if s.is_empty() || s.len() >= LONG_STR_SIZE {
        return None;
    }
    // The only number allowed to start with '0' is "0" itself.
    if s == b"0" {
        return Some(0);
    }
    let (negative, digits) = match s.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, s),
    };
    // First digit must be 1-9: this rejects "", "-", "-0", "007" and "+1".
    match digits.first() {
        Some(b'1'..=b'9') => {}
        _ => return None,
    }
    // Accumulate in u64 with overflow checks, as Redis does with
    // `unsigned long long`, so that i64::MIN (whose magnitude does not fit in
    // an i64) still parses.
    let mut v: u64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return None; // "12a", "1 ", "1\0": every byte must be a digit
        }
        v = v.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
    }
    if negative {
        // -(i64::MIN) is i64::MAX + 1: the one magnitude allowed beyond i64::MAX.
        if v > i64::MAX as u64 + 1 {
            return None;
        }
        Some((v as i64).wrapping_neg())
    } else {
        i64::try_from(v).ok()
    }
}

/// Two ASCII digits for every value 0..=99, so `ull2string` emits a pair of
/// digits per division instead of one (the table trick in Redis's util.c).
const DIGIT_PAIRS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Number of decimal digits in `v` (redis: util.c digits10).
fn digits10(v: u64) -> usize {
    let mut n = 1;
    let mut v = v;
    while v >= 10 {
        v /= 10;
        n += 1;
    }
    n
}

/// Write `v` in decimal at the start of `out`, return the number of bytes
/// written (redis: util.c ull2string). `out` must hold 20 bytes.
pub fn ull2string(out: &mut [u8], v: u64) -> usize {
    let len = digits10(v);
    // Fill from the last digit backwards, two digits per step.
    let mut next = len;
    let mut v = v;
    while v >= 100 {
        let i = (v % 100) as usize * 2;
        v /= 100;
        out[next - 1] = DIGIT_PAIRS[i + 1];
        out[next - 2] = DIGIT_PAIRS[i];
        next -= 2;
    }
    // One or two digits remain.
    if v < 10 {
        out[next - 1] = b'0' + v as u8;
    } else {
        let i = v as usize * 2;
        out[next - 1] = DIGIT_PAIRS[i + 1];
        out[next - 2] = DIGIT_PAIRS[i];
    }
    len
}

/// Write `v` in decimal at the start of `out`, return the number of bytes
/// written (redis: util.c ll2string). `out` must hold 20 bytes
/// ("-9223372036854775808").
pub fn ll2string(out: &mut [u8], v: i64) -> usize {
    if v < 0 {
        out[0] = b'-';
        // unsigned_abs handles i64::MIN, whose magnitude has no i64.
        1 + ull2string(&mut out[1..], v.unsigned_abs())
    } else {
        ull2string(out, v as u64)
    }
}

/// A formatted integer on the stack (no allocation): 20 bytes hold
/// "-9223372036854775808" and u64::MAX. Derefs to the digits. For callers
/// that want a value rather than a caller's buffer (the text of an
/// int-encoded string, a listpack integer).
#[derive(Clone, Copy)]
pub struct LongStr {
    buf: [u8; LONG_STR_SIZE - 1],
    len: u8,
}

impl LongStr {
    /// `ll2string` into a LongStr.
    pub fn from_i64(v: i64) -> LongStr {
        let mut out = LongStr {
            buf: [0; LONG_STR_SIZE - 1],
            len: 0,
        };
        out.len = ll2string(&mut out.buf, v) as u8;
        out
    }

    /// `ull2string` into a LongStr.
    pub fn from_u64(v: u64) -> LongStr {
        let mut out = LongStr {
            buf: [0; LONG_STR_SIZE - 1],
            len: 0,
        };
        out.len = ull2string(&mut out.buf, v) as u8;
        out
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len as usize]
    }
}

impl std::ops::Deref for LongStr {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl std::fmt::Debug for LongStr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(std::str::from_utf8(self.as_bytes()).unwrap_or("?"))
    }
}

/// C's atoi(), as Redis uses it for DEBUG arguments, ports and config
/// numbers: leading blanks (isspace: space, \t \n \v \f \r), an optional
/// sign, then digits up to the first non-digit; 0 when there are none.
/// Overflow, undefined in C, wraps here.
pub fn atoi(s: &[u8]) -> i64 {
    let start = s
        .iter()
        .position(|b| !matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r'))
        .unwrap_or(s.len());
    let s = &s[start..];
    let (neg, digits) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let mut v: i64 = 0;
    for &b in digits.iter().take_while(|b| b.is_ascii_digit()) {
        v = v.wrapping_mul(10).wrapping_add(i64::from(b - b'0'));
    }
    if neg {
        v.wrapping_neg()
    } else {
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string2ll_accepts_canonical_numbers() {
        assert_eq!(string2ll(b"0"), Some(0));
        assert_eq!(string2ll(b"7"), Some(7));
        assert_eq!(string2ll(b"-7"), Some(-7));
        assert_eq!(string2ll(b"1234567890"), Some(1_234_567_890));
        assert_eq!(string2ll(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(string2ll(b"-9223372036854775808"), Some(i64::MIN));
    }

    #[test]
    fn string2ll_rejects_what_redis_rejects() {
        for bad in [
            &b""[..],
            b"-",
            b"+1",
            b"01",
            b"00",
            b"-0",
            b"-01",
            b" 1",
            b"1 ",
            b"1a",
            b"1\0",
            b"0x10",
            b"1.0",
            b"9223372036854775808",
            b"-9223372036854775809",
            b"99999999999999999999",
            b"000000000000000000001",
        ] {
            assert_eq!(string2ll(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn string2ll_rejects_long_input_before_reading_it() {
        // 21 characters is LONG_STR_SIZE: refused even though it is all digits.
        assert_eq!(string2ll(b"100000000000000000000"), None);
        assert_eq!(string2ll(b"10000000000000000000"), None); // 20 digits, > i64::MAX
    }

    #[test]
    fn ll2string_matches_display_for_edges_and_every_digit_count() {
        let mut buf = [0u8; 20];
        let mut cases = vec![
            0,
            1,
            -1,
            9,
            10,
            99,
            100,
            101,
            i64::MAX,
            i64::MIN,
            i64::MIN + 1,
        ];
        let mut p: i64 = 1;
        for _ in 0..18 {
            p *= 10;
            cases.extend([p - 1, p, p + 1, -(p - 1), -p, -(p + 1)]);
        }
        for v in cases {
            let n = ll2string(&mut buf, v);
            assert_eq!(&buf[..n], v.to_string().as_bytes());
        }
        let n = ull2string(&mut buf, u64::MAX);
        assert_eq!(&buf[..n], u64::MAX.to_string().as_bytes());
    }

    #[test]
    fn long_str_holds_the_same_digits() {
        for v in [0, 1, -1, 99, -100, 12345, i64::MAX, i64::MIN] {
            assert_eq!(&*LongStr::from_i64(v), v.to_string().as_bytes());
        }
        assert_eq!(
            &*LongStr::from_u64(u64::MAX),
            u64::MAX.to_string().as_bytes()
        );
        assert_eq!(format!("{:?}", LongStr::from_i64(-7)), "-7");
    }

    #[test]
    fn atoi_reads_like_c() {
        assert_eq!(atoi(b"42"), 42);
        assert_eq!(atoi(b"  \t\x0b-17xyz"), -17);
        assert_eq!(atoi(b"+8"), 8);
        assert_eq!(atoi(b"abc"), 0);
        assert_eq!(atoi(b""), 0);
        assert_eq!(atoi(b"- 5"), 0);
        assert_eq!(atoi(b"6379 "), 6379);
    }
}
