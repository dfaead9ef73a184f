//! Redis's util.c: glob matching, strict integer parsing and printing, and
//! the float parsing / long double arithmetic that INCRBYFLOAT exposes.
//!
//! - `string_match` is stringmatchlen: the glob of KEYS, SCAN MATCH, PSUBSCRIBE
//!   and CONFIG GET, byte for byte the 7.0.15 behaviour (as shipped with the
//!   CVE-2022-36021 and CVE-2024-31228 fixes: no retrying longer `*` matches
//!   after a failed tail, and at most 1000 nested `*`).
//! - `string2ll` / `ll2string` are the strict integer rules every command
//!   argument and every int-encoded string goes through: no spaces, no '+',
//!   no leading zeros, no "-0".
//! - `string2d`, `string2ld`, `ld2string` and `incr_by_float` call C
//!   (csrc/util_float.c): Redis uses libc's strtod()/strtold() and does
//!   INCRBYFLOAT's addition in `long double`, the 80-bit x87 type on x86_64.
//!   Rust has no such type, and "5010.60000000000000009" (what Redis answers
//!   for 10.6 + 5.0e3) only comes out of that arithmetic, so the C compiler
//!   does it.

use std::ffi::{c_char, c_double, c_int, c_longlong};
use std::fmt;

// ------------------------------------------------------------------- glob

/// Protection against abusive patterns: a `*` match nested deeper than this
/// fails (util.c, stringmatchlen_impl `nesting`). Each `*` recurses once, so
/// without a limit a long "*a*a*a..." pattern could overflow the stack.
const STRINGMATCH_MAX_NESTING: u32 = 1000;

/// stringmatchlen: does `string` match the glob `pattern`?
///
/// | token | meaning |
/// |---|---|
/// | `*` | any run of bytes, empty included (`**` = `*`) |
/// | `?` | exactly one byte |
/// | `[abc]` `[^abc]` | one byte in / not in the set |
/// | `[a-z]` | a range, inclusive; `[z-a]` works too |
/// | `\c` | the byte `c` literally, also inside `[...]` |
///
/// Corner cases kept from Redis: an empty string matches only the empty
/// pattern (not even `*`: KEYS and SCAN special-case a lone `*` before
/// calling this); an unterminated `[` class runs to the end
/// of the pattern; `[]` never matches and `[^]` matches any byte; a trailing
/// `\` matches a `\`; ranges compare bytes as C's signed `char`; `nocase`
/// folds ASCII only, and not for a `\`-escaped byte inside a class.
pub fn string_match(pattern: &[u8], string: &[u8], nocase: bool) -> bool {
    let mut skip_longer_matches = false;
    stringmatchlen_impl(pattern, string, nocase, &mut skip_longer_matches, 0)
}

/// The recursive worker. `p` and `s` are the unmatched rests of pattern and
/// string. `skip_longer_matches` is set once a `*` found no place at all for
/// the rest of the pattern: then no earlier `*` can help by eating more
/// bytes either, so every level gives up at once (this keeps "a*a*a*...b"
/// linear instead of exponential).
fn stringmatchlen_impl(
    mut p: &[u8],
    mut s: &[u8],
    nocase: bool,
    skip_longer_matches: &mut bool,
    nesting: u32,
) -> bool {
    if nesting > STRINGMATCH_MAX_NESTING {
        return false;
    }

    while !p.is_empty() && !s.is_empty() {
        match p[0] {
            b'*' => {
                // Collapse a run of stars into one.
                while p.len() > 1 && p[1] == b'*' {
                    p = &p[1..];
                }
                if p.len() == 1 {
                    return true; // a trailing star matches the rest
                }
                // Try the rest of the pattern at every position of the rest
                // of the string, shortest star first.
                while !s.is_empty() {
                    if stringmatchlen_impl(&p[1..], s, nocase, skip_longer_matches, nesting + 1) {
                        return true;
                    }
                    if *skip_longer_matches {
                        return false;
                    }
                    s = &s[1..];
                }
                *skip_longer_matches = true;
                return false;
            }
            b'?' => {
                s = &s[1..];
            }
            b'[' => {
                // After this, `p` is the class body; `p[0]` ends up on the
                // closing ']' (or the last byte, if there is none).
                p = &p[1..];
                let not = p.first() == Some(&b'^');
                if not {
                    p = &p[1..];
                }
                let mut matched = false;
                let mut i = 0;
                loop {
                    if p.get(i) == Some(&b'\\') && p.len() - i >= 2 {
                        // Escaped byte: compared as is, even with nocase.
                        i += 1;
                        if p[i] == s[0] {
                            matched = true;
                        }
                    } else if p.get(i) == Some(&b']') {
                        break;
                    } else if i == p.len() {
                        // Unterminated class: step back onto the last byte
                        // (the advance below consumes it).
                        i = i.saturating_sub(1);
                        break;
                    } else if p.len() - i >= 3 && p[i + 1] == b'-' {
                        // Range, as C's signed char; swapped ends allowed.
                        let (mut start, mut end, mut c) =
                            (p[i] as i8 as i32, p[i + 2] as i8 as i32, s[0] as i8 as i32);
                        if start > end {
                            std::mem::swap(&mut start, &mut end);
                        }
                        if nocase {
                            start = c_tolower(start);
                            end = c_tolower(end);
                            c = c_tolower(c);
                        }
                        i += 2;
                        if c >= start && c <= end {
                            matched = true;
                        }
                    } else if bytes_equal(p[i], s[0], nocase) {
                        matched = true;
                    }
                    i += 1;
                }
                if not {
                    matched = !matched;
                }
                if !matched {
                    return false;
                }
                s = &s[1..];
                // Leave `p` on the class's last byte for the common advance.
                p = if p.is_empty() { p } else { &p[i..] };
                if p.is_empty() {
                    // "[^" consumed the whole pattern: nothing left to step.
                    return s.is_empty();
                }
            }
            b'\\' => {
                // An escaped byte matches itself; a trailing '\' is literal.
                if p.len() >= 2 {
                    p = &p[1..];
                }
                if !bytes_equal(p[0], s[0], nocase) {
                    return false;
                }
                s = &s[1..];
            }
            other => {
                if !bytes_equal(other, s[0], nocase) {
                    return false;
                }
                s = &s[1..];
            }
        }
        p = &p[1..];
        if s.is_empty() {
            // Out of string: only stars may remain.
            while p.first() == Some(&b'*') {
                p = &p[1..];
            }
            break;
        }
    }
    p.is_empty() && s.is_empty()
}

/// One literal byte of the pattern against one of the string.
fn bytes_equal(a: u8, b: u8, nocase: bool) -> bool {
    if nocase {
        a.eq_ignore_ascii_case(&b)
    } else {
        a == b
    }
}

/// tolower() of the C locale on an int that came from a signed char.
fn c_tolower(c: i32) -> i32 {
    if (b'A' as i32..=b'Z' as i32).contains(&c) {
        c + 32
    } else {
        c
    }
}

// --------------------------------------------------------------- integers

// The strict decimal rules (string2ll, ll2string) live in the `util`
// crate, their one home; storage takes its stack-formatted LongStr.
pub use util::{string2ll, LongStr, LONG_STR_SIZE};

/// string2l: string2ll checked against `long`, which is 64-bit on every
/// platform redis-lite targets (LP64), so the same thing.
pub fn string2l(s: &[u8]) -> Option<i64> {
    string2ll(s)
}

/// ll2string: `value` in decimal, e.g. for a RESP integer or the text of an
/// int-encoded string.
pub fn ll2string(value: i64) -> LongStr {
    LongStr::from_i64(value)
}

/// ull2string into a LongStr.
pub fn ull2string(value: u64) -> LongStr {
    LongStr::from_u64(value)
}

// ---------------------------------------------------------------- doubles

mod ffi {
    use super::LongDouble;
    use std::ffi::{c_char, c_double, c_int, c_longlong};

    extern "C" {
        pub fn rl_string2d(s: *const c_char, slen: usize, dp: *mut c_double) -> c_int;
        pub fn rl_string2ld(s: *const c_char, slen: usize, dp: *mut LongDouble) -> c_int;
        pub fn rl_ld2string(
            buf: *mut c_char,
            len: usize,
            v: *const LongDouble,
            mode: c_int,
        ) -> c_int;
        pub fn rl_ld_from_ll(v: c_longlong, out: *mut LongDouble);
        pub fn rl_ld_from_double(v: c_double, out: *mut LongDouble);
        pub fn rl_ld_to_double(v: *const LongDouble) -> c_double;
        pub fn rl_ld_add(a: *const LongDouble, b: *const LongDouble, out: *mut LongDouble);
        pub fn rl_ld_is_nan_or_inf(v: *const LongDouble) -> c_int;
    }
}

/// string2d (what getDoubleFromObject accepts: ZADD scores, ZRANGEBYSCORE
/// bounds, INCRBYFLOAT's cousins that use `double`): exactly one strtod()
/// number. "inf", "-Infinity", "0x1p3", "+1.5", ".5" and "5." are fine;
/// "", " 1", "1 ", "nan", "1e400" (overflow) and "1e-400" (underflow to 0)
/// are not.
pub fn string2d(s: &[u8]) -> Option<f64> {
    let mut value: c_double = 0.0;
    // SAFETY: `s` is valid for `s.len()` bytes (the C side copies it and
    // adds the NUL); `value` is a valid out-pointer.
    let ok = unsafe { ffi::rl_string2d(s.as_ptr().cast::<c_char>(), s.len(), &mut value) };
    (ok != 0).then_some(value)
}

/// MAX_LONG_DOUBLE_CHARS: string2ld refuses inputs of 5k bytes or more, and
/// ld2string prints into a buffer this big.
pub const MAX_LONG_DOUBLE_CHARS: usize = 5 * 1024;

/// A C `long double`, held opaquely: 16 bytes, 16-aligned, which covers the
/// x87 80-bit format of x86_64 Linux and every other ABI's. Only the C side
/// reads it, so all arithmetic is the platform's `long double` arithmetic.
#[repr(C, align(16))]
#[derive(Clone, Copy)]
pub struct LongDouble {
    bytes: [u8; 16],
}

impl LongDouble {
    const ZERO_BITS: LongDouble = LongDouble { bytes: [0; 16] };

    /// `(long double)v`: exact for every i64 on x86_64 (64-bit mantissa).
    pub fn from_i64(v: i64) -> LongDouble {
        let mut out = Self::ZERO_BITS;
        // SAFETY: `out` is a 16-byte, 16-aligned buffer the C side writes a
        // long double into (sizes checked by _Static_assert in the C file).
        unsafe { ffi::rl_ld_from_ll(v as c_longlong, &mut out) };
        out
    }

    /// `(long double)v`.
    pub fn from_f64(v: f64) -> LongDouble {
        let mut out = Self::ZERO_BITS;
        // SAFETY: as in from_i64.
        unsafe { ffi::rl_ld_from_double(v, &mut out) };
        out
    }

    /// `(double)self`, rounding to the nearest double.
    pub fn to_f64(&self) -> f64 {
        // SAFETY: `self` holds a long double written by the C side.
        unsafe { ffi::rl_ld_to_double(self) }
    }

    /// `isnan(v) || isinf(v)`: what INCRBYFLOAT refuses to store and
    /// HINCRBYFLOAT refuses as an increment.
    pub fn is_nan_or_inf(&self) -> bool {
        // SAFETY: as in to_f64.
        unsafe { ffi::rl_ld_is_nan_or_inf(self) != 0 }
    }
}

impl std::ops::Add for LongDouble {
    type Output = LongDouble;

    /// Addition in `long double` precision (INCRBYFLOAT's `value += incr`).
    fn add(self, rhs: LongDouble) -> LongDouble {
        let mut out = Self::ZERO_BITS;
        // SAFETY: both inputs hold long doubles from the C side; `out` is a
        // valid, aligned out-pointer.
        unsafe { ffi::rl_ld_add(&self, &rhs, &mut out) };
        out
    }
}

impl fmt::Debug for LongDouble {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = ld2string(*self, LdStrMode::Auto);
        f.write_str(&String::from_utf8_lossy(&text))
    }
}

/// string2ld (getLongDoubleFromObject): exactly one strtold() number, under
/// MAX_LONG_DOUBLE_CHARS bytes, not NaN, not overflowing to infinity, not
/// underflowing to zero. "inf" itself is accepted (the caller decides).
/// The range is the long double one: "1e400" is fine on x86_64.
pub fn string2ld(s: &[u8]) -> Option<LongDouble> {
    let mut value = LongDouble::ZERO_BITS;
    // SAFETY: `s` is valid for `s.len()` bytes (the C side checks the length
    // against its buffer before copying); `value` is an aligned out-pointer.
    let ok = unsafe { ffi::rl_string2ld(s.as_ptr().cast::<c_char>(), s.len(), &mut value) };
    (ok != 0).then_some(value)
}

/// ld2string_mode (util.h).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LdStrMode {
    /// LD_STR_AUTO, "%.17Lg".
    Auto = 0,
    /// LD_STR_HUMAN, "%.17Lf" without trailing zeroes: INCRBYFLOAT's format.
    Human = 1,
    /// LD_STR_HEX, "%La": exact.
    Hex = 2,
}

/// ld2string: `value` as text; infinities are "inf" / "-inf". Empty if the
/// text would not fit in MAX_LONG_DOUBLE_CHARS (Redis then stores an empty
/// string; with x87 long doubles "%.17Lf" is never that long).
pub fn ld2string(value: LongDouble, mode: LdStrMode) -> Vec<u8> {
    let mut buf = vec![0u8; MAX_LONG_DOUBLE_CHARS];
    // SAFETY: `buf` is writable for its whole length, which is passed along;
    // the C side NUL-terminates within it and returns the text's length.
    let len = unsafe {
        ffi::rl_ld2string(
            buf.as_mut_ptr().cast::<c_char>(),
            buf.len(),
            &value,
            mode as c_int,
        )
    };
    buf.truncate(len.max(0) as usize);
    buf
}

/// Why INCRBYFLOAT refused (t_string.c incrbyfloatCommand).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IncrFloatError {
    /// The stored value is not a valid long double.
    InvalidValue,
    /// The increment is not a valid long double.
    InvalidIncrement,
    /// The sum is NaN or infinite (e.g. "inf" + 1, or 1e4932 + 1e4932).
    NanOrInfinity,
}

impl IncrFloatError {
    /// The error text Redis replies with (after "-ERR ").
    pub fn message(self) -> &'static str {
        match self {
            IncrFloatError::InvalidValue | IncrFloatError::InvalidIncrement => {
                "value is not a valid float"
            }
            IncrFloatError::NanOrInfinity => "increment would produce NaN or Infinity",
        }
    }
}

impl fmt::Display for IncrFloatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for IncrFloatError {}

/// INCRBYFLOAT's arithmetic: parse the current value (the text of the stored
/// string; pass "0" for a missing key) and the increment with string2ld, add
/// in long double, refuse NaN/infinity, and return the new value as
/// ld2string(LD_STR_HUMAN) prints it. This text is both the reply and what
/// gets stored (and propagated as SET ... KEEPTTL).
///
/// For an int-encoded value pass its decimal text: strtold() of it is the
/// same long double as Redis's `(long double)(long)o->ptr`.
pub fn incr_by_float(cur: &[u8], incr: &[u8]) -> Result<Vec<u8>, IncrFloatError> {
    let value = string2ld(cur).ok_or(IncrFloatError::InvalidValue)?;
    let incr = string2ld(incr).ok_or(IncrFloatError::InvalidIncrement)?;
    let sum = value + incr;
    if sum.is_nan_or_inf() {
        return Err(IncrFloatError::NanOrInfinity);
    }
    Ok(ld2string(sum, LdStrMode::Human))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(pattern: &str, string: &str) -> bool {
        string_match(pattern.as_bytes(), string.as_bytes(), false)
    }

    #[test]
    fn glob_star_matches_any_run_including_empty() {
        assert!(m("*", "anything"));
        assert!(m("a*", "a"));
        assert!(m("a*c", "abbbc"));
        assert!(m("*c", "abc"));
        assert!(!m("a*c", "abcd"));
        assert!(m("a*b*c", "a-b-c"));
        assert!(!m("a*b*c", "a-c-b"));
    }

    #[test]
    fn glob_repeated_stars_collapse() {
        assert!(m("a***c", "ac"));
        assert!(m("**x**", "yyxyy"));
    }

    #[test]
    fn glob_question_matches_exactly_one_byte() {
        assert!(m("h?llo", "hello"));
        assert!(!m("h?llo", "hllo"));
        assert!(!m("?", ""));
        assert!(m("??", "ab"));
        assert!(!m("??", "abc"));
    }

    #[test]
    fn glob_never_matches_empty_string_unless_pattern_empty() {
        // The loop needs both a pattern byte and a string byte, so "*" does
        // not match "" (checked on 7.0.15: KEYS ** skips the key ""). KEYS
        // and SCAN only see "" under "*" because they skip matching for a
        // lone "*".
        assert!(!m("*", ""));
        assert!(!m("***", ""));
        assert!(m("", ""));
    }

    #[test]
    fn glob_empty_pattern_matches_only_empty_string() {
        assert!(m("", ""));
        assert!(!m("", "a"));
        assert!(!m("a", ""));
    }

    #[test]
    fn glob_class_and_negated_class() {
        assert!(m("h[ae]llo", "hello"));
        assert!(m("h[ae]llo", "hallo"));
        assert!(!m("h[ae]llo", "hillo"));
        assert!(m("h[^e]llo", "hallo"));
        assert!(!m("h[^e]llo", "hello"));
        // Only '^' negates.
        assert!(!m("h[!e]llo", "hallo"));
        assert!(m("h[!e]llo", "h!llo"));
    }

    #[test]
    fn glob_ranges_inclusive_and_swapped() {
        assert!(m("[a-c]", "a"));
        assert!(m("[a-c]", "c"));
        assert!(!m("[a-c]", "d"));
        assert!(m("[c-a]", "b"), "swapped ends");
        assert!(m("[0-9a-f]x", "ex"));
        // "[a-]": the '-' makes a range from 'a' to ']' (swapped: ']'..'a'),
        // which leaves the class unterminated. A leading '-' is literal.
        assert!(!m("[a-]", "-"));
        assert!(m("[a-]", "^"));
        assert!(m("[-a]", "-"));
    }

    #[test]
    fn glob_ranges_compare_as_signed_char() {
        // [\x01-\xff] is [-1 .. 1] as signed chars: 0x80 (-128) is outside.
        assert!(!string_match(b"[\x01-\xff]", b"\x80", false));
        assert!(string_match(b"[\x01-\xff]", b"\x00", false));
        assert!(string_match(b"[\x80-\xff]", b"\x90", false));
        assert!(!string_match(b"[\x80-\xff]", b"a", false));
    }

    #[test]
    fn glob_escapes_outside_and_inside_class() {
        assert!(m("a\\*b", "a*b"));
        assert!(!m("a\\*b", "axb"));
        assert!(m("\\?", "?"));
        assert!(!m("\\?", "x"));
        assert!(m("[\\]]", "]"));
        assert!(m("[\\^a]", "^"));
        assert!(m("[a\\-z]", "-"));
        assert!(!m("[a\\-z]", "b"));
    }

    #[test]
    fn glob_trailing_backslash_matches_backslash() {
        assert!(m("a\\", "a\\"));
        assert!(!m("a\\", "a"));
        assert!(m("[\\", "\\"), "an unterminated class holding a lone '\\'");
    }

    #[test]
    fn glob_unterminated_class_runs_to_pattern_end() {
        assert!(m("[abc", "b"));
        assert!(!m("[abc", "d"));
        assert!(!m("[abc", "bc"));
        // A '[' ending the pattern is a class with nothing in it.
        assert!(!m("x[", "x["));
        assert!(!m("x[", "xa"));
        assert!(m("[^", "z"), "[^ alone negates an empty set");
        assert!(!m("[^", ""));
    }

    #[test]
    fn glob_empty_classes() {
        assert!(!m("[]", "a"));
        assert!(!m("[]", "]"));
        // The first ']' closes the class: "[]]" is [] then ']'.
        assert!(!m("[]]", "]"));
        assert!(!m("[]]", "]]"));
        assert!(m("[^]", "a"));
        assert!(m("[^]x", "zx"));
    }

    #[test]
    fn glob_nocase_folds_ascii_only() {
        assert!(string_match(b"HeLLo", b"hello", true));
        assert!(string_match(b"[A-C]", b"b", true));
        assert!(string_match(b"[abc]", b"B", true));
        assert!(!string_match(b"HeLLo", b"hello", false));
        assert!(!string_match(b"\xc3\x89", b"\xc3\xa9", true));
        // An escaped byte inside a class is compared without folding.
        assert!(!string_match(b"[\\A]", b"a", true));
    }

    #[test]
    fn glob_is_binary_safe() {
        assert!(string_match(b"a\0*", b"a\0bc", false));
        assert!(!string_match(b"a\0", b"a", false));
        assert!(string_match(b"?", b"\0", false));
    }

    #[test]
    fn glob_nesting_limit_is_1000_stars() {
        let key = "a".repeat(1001);
        assert!(m(&"*a".repeat(1000), &key));
        assert!(!m(&"*a".repeat(1001), &key));
    }

    #[test]
    fn glob_skips_longer_matches_after_failed_tail() {
        // Exponential without the skip: 30 stars over 60 'a's, no 'b'.
        let pattern = format!("{}b", "a*".repeat(30));
        let string = "a".repeat(60);
        let start = std::time::Instant::now();
        assert!(!m(&pattern, &string));
        assert!(start.elapsed() < std::time::Duration::from_secs(1));
    }

    #[test]
    fn ll2string_round_trips_extremes() {
        for v in [0, 1, -1, 9, 10, 99, 100, -100, 12345, i64::MAX, i64::MIN] {
            assert_eq!(&*ll2string(v), v.to_string().as_bytes());
            assert_eq!(string2ll(&ll2string(v)), Some(v));
        }
        assert_eq!(&*ull2string(u64::MAX), u64::MAX.to_string().as_bytes());
        for v in (0..100_000i64).step_by(7) {
            assert_eq!(&*ll2string(-v), (-v).to_string().as_bytes());
        }
    }

    #[test]
    fn string2d_follows_strtod_with_redis_rejections() {
        let ok = [
            (&b"1"[..], 1.0),
            (b"+1.5", 1.5),
            (b".5", 0.5),
            (b"5.", 5.0),
            (b"0x10", 16.0),
            (b"-2.5e3", -2500.0),
            (b"inf", f64::INFINITY),
            (b"-inf", f64::NEG_INFINITY),
            (b"INFINITY", f64::INFINITY),
        ];
        for (s, v) in ok {
            assert_eq!(string2d(s), Some(v), "{:?}", String::from_utf8_lossy(s));
        }
        // Denormals set ERANGE but are not zero: accepted.
        assert_eq!(string2d(b"4.9e-324"), Some(f64::from_bits(1)));
        for bad in [
            &b""[..],
            b" 1",
            b"1 ",
            b"\t1",
            b"nan",
            b"NaN",
            b"-nan",
            b"1e400",
            b"-1e400",
            b"1e-400",
            b"1\0",
            b"1e",
            b"-",
            b"0x",
            b"1,5",
        ] {
            assert_eq!(string2d(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
        let long = format!("{}1", "0".repeat(500));
        assert_eq!(
            string2d(long.as_bytes()),
            Some(1.0),
            "long inputs go to the heap"
        );
    }

    #[test]
    fn string2ld_limits_and_rejections() {
        let under = format!("{}1", "0".repeat(MAX_LONG_DOUBLE_CHARS - 2));
        assert_eq!(under.len(), MAX_LONG_DOUBLE_CHARS - 1);
        assert!(string2ld(under.as_bytes()).is_some());
        let at = format!("{}1", "0".repeat(MAX_LONG_DOUBLE_CHARS - 1));
        assert!(string2ld(at.as_bytes()).is_none(), "5k chars or more");
        for bad in [
            &b""[..],
            b" 1",
            b"1 ",
            b"1\n",
            b"abc",
            b"nan",
            b"1\0abc",
            b"1e-5000",
        ] {
            assert!(
                string2ld(bad).is_none(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
        assert!(string2ld(b"inf").unwrap().is_nan_or_inf());
        assert!(!string2ld(b"1e-4940").unwrap().is_nan_or_inf(), "denormal");
        assert_eq!(string2ld(b"0x1p-2").unwrap().to_f64(), 0.25);
    }

    #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
    #[test]
    fn string2ld_has_x87_range() {
        assert!(string2ld(b"1e400").is_some());
        assert!(string2ld(b"1e4932").is_some());
        assert!(string2ld(b"1e4933").is_none(), "overflows even 80-bit");
        assert_eq!(string2ld(b"1e400").unwrap().to_f64(), f64::INFINITY);
    }

    fn incr(cur: &str, by: &str) -> Result<String, IncrFloatError> {
        incr_by_float(cur.as_bytes(), by.as_bytes()).map(|v| String::from_utf8(v).unwrap())
    }

    #[test]
    fn incr_by_float_matches_redis_replies() {
        // Replies recorded from redis-server 7.0.15 on x86_64.
        assert_eq!(incr("10.5", "0.1").unwrap(), "10.6");
        assert_eq!(incr("10.6", "5.0e3").unwrap(), "5010.60000000000000009");
        assert_eq!(incr("3", "1.5").unwrap(), "4.5");
        assert_eq!(incr("4.5", "1e20").unwrap(), "100000000000000000008");
        assert_eq!(incr("1.1", "2.2").unwrap(), "3.3");
        assert_eq!(incr("5", "3").unwrap(), "8");
        assert_eq!(incr("8", "0.0000000000000000001").unwrap(), "8");
        assert_eq!(
            incr("8", "1.23456789012345678901234").unwrap(),
            "9.23456789012345679"
        );
        assert_eq!(incr("0.1", "0.2").unwrap(), "0.3");
        assert_eq!(incr("0.3", "-0.3").unwrap(), "0");
        assert_eq!(incr("1.5e-7", "0").unwrap(), "0.00000015");
        assert_eq!(incr("-5.5", "0.5").unwrap(), "-5");
        assert_eq!(
            incr("9223372036854775807", "1").unwrap(),
            "9223372036854775808"
        );
        assert_eq!(
            incr("123456789012345678901234567890", "0").unwrap(),
            "123456789012345678899921813504"
        );
        assert_eq!(incr("3", "0x1p-2").unwrap(), "3.25");
        assert_eq!(incr("3", "+1").unwrap(), "4");
    }

    #[test]
    fn incr_by_float_never_says_minus_zero() {
        assert_eq!(incr("-0", "-0").unwrap(), "0");
        assert_eq!(incr("-1e-18", "0").unwrap(), "0");
        assert_eq!(incr("0", "-0.0").unwrap(), "0");
    }

    #[test]
    fn incr_by_float_errors() {
        use IncrFloatError::*;
        assert_eq!(incr("abc", "1"), Err(InvalidValue));
        assert_eq!(incr("1", " 1"), Err(InvalidIncrement));
        assert_eq!(incr("1", "1 "), Err(InvalidIncrement));
        assert_eq!(incr("1", ""), Err(InvalidIncrement));
        assert_eq!(incr("1", "nan"), Err(InvalidIncrement));
        assert_eq!(incr("1", "1e-5000"), Err(InvalidIncrement));
        assert_eq!(incr("1", "inf"), Err(NanOrInfinity));
        assert_eq!(incr("1", "-inf"), Err(NanOrInfinity));
        assert_eq!(incr("inf", "1"), Err(NanOrInfinity));
        assert_eq!(InvalidValue.message(), "value is not a valid float");
        assert_eq!(InvalidIncrement.message(), "value is not a valid float");
        assert_eq!(
            NanOrInfinity.to_string(),
            "increment would produce NaN or Infinity"
        );
    }

    #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
    #[test]
    fn incr_by_float_uses_80_bit_range() {
        // 1e308 + 1e308 overflows a double but not a long double.
        let two = incr("1e308", "1e308").unwrap();
        assert!(two.starts_with("1999999999999999999933717593"), "{two}");
        assert_eq!(two.len(), 309);
        assert_eq!(incr("1e4000", "1").unwrap().len(), 4000);
        assert_eq!(incr("1e4932", "1e4932"), Err(IncrFloatError::NanOrInfinity));
    }

    #[test]
    fn ld2string_modes() {
        let v = LongDouble::from_f64(0.5);
        assert_eq!(ld2string(v, LdStrMode::Human), b"0.5");
        assert_eq!(ld2string(v, LdStrMode::Auto), b"0.5");
        assert_eq!(ld2string(LongDouble::from_i64(10), LdStrMode::Human), b"10");
        assert_eq!(
            ld2string(LongDouble::from_i64(i64::MIN), LdStrMode::Human),
            b"-9223372036854775808"
        );
        let inf = string2ld(b"-inf").unwrap();
        assert_eq!(ld2string(inf, LdStrMode::Human), b"-inf");
        assert!(!ld2string(v, LdStrMode::Hex).is_empty());
        assert_eq!(format!("{:?}", LongDouble::from_i64(3)), "3");
    }
}
