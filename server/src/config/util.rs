//! Value parsing helpers (util.c)

use super::*;

/// memtoull: digits then an optional unit (b, k, kb, m, mb, g, gb; any
/// case). k/m/g are powers of 1000, kb/mb/gb of 1024. Like C's strtoull the
/// number saturates on overflow and the multiplication wraps; no digits at
/// all reads as 0 ("gb" is 0). None = not a memory value.
pub fn memtoull(p: &str) -> Option<u64> {
    if p.starts_with('-') {
        return None;
    }
    let digits = p.bytes().take_while(|c| c.is_ascii_digit()).count();
    let mul: u64 = match p[digits..].to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" => 1000,
        "kb" => 1024,
        "m" => 1000 * 1000,
        "mb" => 1024 * 1024,
        "g" => 1000 * 1000 * 1000,
        "gb" => 1024 * 1024 * 1024,
        _ => return None,
    };
    // buf[128] in C: longer digit strings are refused.
    if digits >= 128 {
        return None;
    }
    let val = if digits == 0 {
        0
    } else {
        p[..digits].parse::<u64>().unwrap_or(u64::MAX)
    };
    Some(val.wrapping_mul(mul))
}

/// strtoll(s, &end, base) that must consume the whole string (`*end ==
/// '\0'`): leading blanks and a sign are allowed, overflow saturates, and an
/// empty string is 0 (end == start points at the NUL).
pub(super) fn strtoll_full(s: &str, base: u32) -> Option<i64> {
    let t = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let (neg, body) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let ndig = body
        .bytes()
        .take_while(|c| (*c as char).is_digit(base))
        .count();
    if ndig == 0 {
        // Nothing converted: end == s, fine only when s is empty.
        return if s.is_empty() { Some(0) } else { None };
    }
    if ndig != body.len() {
        return None;
    }
    let mag = u64::from_str_radix(body, base).unwrap_or(u64::MAX);
    Some(if neg {
        if mag > i64::MAX as u64 {
            i64::MIN
        } else {
            -(mag as i64)
        }
    } else if mag > i64::MAX as u64 {
        i64::MAX
    } else {
        mag as i64
    })
}

/// yesnotoi.
pub(super) fn yesnotoi(s: &str) -> Option<bool> {
    if s.eq_ignore_ascii_case("yes") {
        Some(true)
    } else if s.eq_ignore_ascii_case("no") {
        Some(false)
    } else {
        None
    }
}

/// sdssplitlen(value, " "): CONFIG SET's split of a multi-argument value.
/// Exactly one space separates; "" gives no arguments.
pub(super) fn split_spaces(v: &str) -> Vec<String> {
    if v.is_empty() {
        return Vec::new();
    }
    v.split(' ').map(str::to_string).collect()
}

/// sdssplitargs on a config line: None on unbalanced quotes.
pub fn split_args(line: &str) -> Option<Vec<String>> {
    let bytes = bytes::Bytes::copy_from_slice(line.as_bytes());
    let argv = protocol::request::sdssplitargs(&bytes)?;
    Some(
        argv.iter()
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect(),
    )
}

/// sdscatrepr: a double-quoted, escaped copy of `s` (CONFIG REWRITE).
pub fn repr(s: &str) -> String {
    let mut out = String::from("\"");
    for &b in s.as_bytes() {
        match b {
            b'\\' => out.push_str("\\\\"),
            b'"' => out.push_str("\\\""),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            7 => out.push_str("\\a"),
            8 => out.push_str("\\b"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out.push('"');
    out
}

/// `%f` then trimDoubleString: "99.900000" -> "99.9", "50.000000" -> "50".
pub(super) fn trim_double(d: f64) -> String {
    let s = format!("{d:.6}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// The text of the last OS error of an io::Error, as strerror() prints it.
pub fn strerror(e: &io::Error) -> String {
    match e.raw_os_error() {
        Some(code) => {
            // SAFETY: strerror returns a valid NUL-terminated static string.
            let p = unsafe { libc::strerror(code) };
            if p.is_null() {
                return e.to_string();
            }
            unsafe { std::ffi::CStr::from_ptr(p) }
                .to_string_lossy()
                .into_owned()
        }
        None => e.to_string(),
    }
}
