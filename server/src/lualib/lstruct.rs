//! `struct`: Roberto Ierusalimschy's struct library (struct.c 1.4, with the
//! bounds fixes Redis applied), which packs Lua numbers and strings into
//! binary strings and back, driven by a format string:
//!
//! | option | meaning |
//! |--------|---------|
//! | `>` `<` | big / little endian (default: native, little on x86-64) |
//! | `!n` | align fields to at most n bytes (power of 2; default `!` = 8) |
//! | `x` | one padding byte |
//! | `b B` `h H` `l L` `T` | signed/unsigned char, short, long (8), size_t (8) |
//! | `i[n]` `I[n]` | signed/unsigned integer of n bytes (default 4, at most 32) |
//! | `f` `d` | float, double |
//! | `s` | zero-terminated string |
//! | `c[n]` | n chars; `c0`: the whole string (pack) / the previous number as length (unpack) |
//! | ` ` | ignored |
//!
//! Integers go through a C `long` and doubles, so the conversions follow
//! what the C compiler does on x86-64 (see `c_double_to_i64`).

use super::{
    arg_err, c_double_to_i64, c_double_to_u64, check_lstring, check_number, lua_cfunction, msg_err,
    opt_integer, push_bytes, set_funcs, LibError, LibResult,
};
use mlua::ffi::{self, lua_State};
use std::ffi::{c_int, CStr};

/// MAXINTSIZE: largest integer width for `i`/`I`.
const MAXINTSIZE: i32 = 32;
/// MAXALIGN: max(alignment of double, sizeof(int)) on x86-64; what a bare
/// `!` selects.
const MAXALIGN: i32 = 8;

/// Header: current endianness and maximum alignment.
#[derive(Clone, Copy)]
struct Header {
    little: bool,
    align: usize,
}

/// defaultoptions: native (little) endian, no alignment.
fn default_options() -> Header {
    Header {
        little: cfg!(target_endian = "little"),
        align: 1,
    }
}

/// The format as C sees it: up to the first NUL.
fn c_format(fmt: &[u8]) -> &[u8] {
    fmt.split(|&b| b == 0).next().unwrap_or(&[])
}

/// getnum: an optional decimal number at `fmt[*i..]`.
fn getnum(fmt: &[u8], i: &mut usize, df: i32) -> Result<i32, LibError> {
    if !fmt.get(*i).is_some_and(|c| c.is_ascii_digit()) {
        return Ok(df);
    }
    let mut a: i32 = 0;
    while let Some(&c) = fmt.get(*i).filter(|c| c.is_ascii_digit()) {
        let digit = (c - b'0') as i32;
        if a > i32::MAX / 10 || a * 10 > i32::MAX - digit {
            return msg_err("integral size overflow");
        }
        a = a * 10 + digit;
        *i += 1;
    }
    Ok(a)
}

/// optsize: the size of one option (0 for options with no data).
fn optsize(opt: u8, fmt: &[u8], i: &mut usize) -> Result<usize, LibError> {
    Ok(match opt {
        b'B' | b'b' => 1,
        b'H' | b'h' => 2,
        b'L' | b'l' => 8,
        b'T' => 8,
        b'f' => 4,
        b'd' => 8,
        b'x' => 1,
        b'c' => getnum(fmt, i, 1)? as usize,
        b'i' | b'I' => {
            let sz = getnum(fmt, i, 4)?;
            if sz > MAXINTSIZE {
                return msg_err(format!(
                    "integral size {sz} is larger than limit of {MAXINTSIZE}"
                ));
            }
            sz as usize
        }
        _ => 0,
    })
}

/// gettoalign: padding needed before an item of `size` at offset `len`.
fn gettoalign(len: usize, h: &Header, opt: u8, size: usize) -> usize {
    if size == 0 || opt == b'c' {
        return 0;
    }
    let size = size.min(h.align);
    (size.wrapping_sub(len & size.wrapping_sub(1))) & size.wrapping_sub(1)
}

/// controloptions: endianness, alignment, spaces; anything else is an
/// invalid option.
fn controloptions(opt: u8, fmt: &[u8], i: &mut usize, h: &mut Header) -> Result<(), LibError> {
    match opt {
        b' ' => Ok(()),
        b'>' => {
            h.little = false;
            Ok(())
        }
        b'<' => {
            h.little = true;
            Ok(())
        }
        b'!' => {
            let a = getnum(fmt, i, MAXALIGN)?;
            if !(a > 0 && a & (a - 1) == 0) {
                return msg_err(format!("alignment {a} is not a power of 2"));
            }
            h.align = a as usize;
            Ok(())
        }
        _ => {
            let mut msg = b"invalid format option '".to_vec();
            msg.push(opt);
            msg.push(b'\'');
            arg_err(1, msg)
        }
    }
}

/// putinteger: argument `arg` as a `size`-byte integer.
unsafe fn putinteger(
    l: *mut lua_State,
    out: &mut Vec<u8>,
    arg: c_int,
    little: bool,
    size: usize,
) -> Result<(), LibError> {
    let n = check_number(l, arg)?;
    // (Uinttype)(Inttype)n for negatives, (Uinttype)n otherwise.
    let mut value: u64 = if n < 0.0 {
        c_double_to_i64(n) as u64
    } else {
        c_double_to_u64(n)
    };
    let mut buff = [0u8; MAXINTSIZE as usize];
    for k in 0..size {
        let idx = if little { k } else { size - 1 - k };
        buff[idx] = (value & 0xff) as u8;
        value >>= 8;
    }
    out.extend_from_slice(&buff[..size]);
    Ok(())
}

/// Bytes of a float/double in the requested byte order.
fn ordered(bytes: &[u8], little: bool) -> Vec<u8> {
    let mut v = bytes.to_vec();
    if !little {
        v.reverse();
    }
    v
}

/// struct.pack(fmt, d1, d2, ...)
// redis: deps/lua/src/lua_struct.c b_pack
unsafe fn b_pack_impl(l: *mut lua_State) -> LibResult {
    let fmt = c_format(check_lstring(l, 1)?);
    let mut h = default_options();
    let mut arg: c_int = 2;
    let mut totalsize: usize = 0;
    // The C code pushes a nil to separate the arguments from its string
    // buffer; a missing first argument therefore reads as nil.
    ffi::lua_pushnil(l);
    let mut out = Vec::new();
    let mut i = 0;
    while i < fmt.len() {
        let opt = fmt[i];
        i += 1;
        let mut size = optsize(opt, fmt, &mut i)?;
        let toalign = gettoalign(totalsize, &h, opt, size);
        totalsize = totalsize.wrapping_add(toalign);
        out.resize(out.len() + toalign, 0);
        match opt {
            b'b' | b'B' | b'h' | b'H' | b'l' | b'L' | b'T' | b'i' | b'I' => {
                putinteger(l, &mut out, arg, h.little, size)?;
                arg += 1;
            }
            b'x' => out.push(0),
            b'f' => {
                let f = check_number(l, arg)? as f32;
                arg += 1;
                out.extend_from_slice(&ordered(&f.to_le_bytes(), h.little));
            }
            b'd' => {
                let d = check_number(l, arg)?;
                arg += 1;
                out.extend_from_slice(&ordered(&d.to_le_bytes(), h.little));
            }
            b'c' | b's' => {
                let s = check_lstring(l, arg)?;
                arg += 1;
                if size == 0 {
                    size = s.len();
                }
                if s.len() < size {
                    return arg_err(arg, "string too short");
                }
                out.extend_from_slice(&s[..size]);
                if opt == b's' {
                    out.push(0);
                    size += 1;
                }
            }
            _ => controloptions(opt, fmt, &mut i, &mut h)?,
        }
        totalsize = totalsize.wrapping_add(size);
    }
    push_bytes(l, &out);
    Ok(1)
}

/// getinteger: `size` bytes as an integer (only the low 64 bits survive).
fn getinteger(buff: &[u8], little: bool, issigned: bool, size: usize) -> f64 {
    let mut v: u64 = 0;
    for k in 0..size {
        let idx = if little { size - 1 - k } else { k };
        v = (v << 8) | buff[idx] as u64;
    }
    if !issigned {
        return v as f64;
    }
    // `~0 << (size*8 - 1)`: x86 masks the shift count to 6 bits.
    let mask = (!0u64).wrapping_shl((size as i64 * 8 - 1) as u32);
    if v & mask != 0 {
        v |= mask; // sign extension
    }
    v as i64 as f64
}

/// The "data string too short" check, overflow-safe as in Redis's fix.
fn check_room(pos: usize, size: usize, ld: usize) -> Result<(), LibError> {
    if size <= ld && pos <= ld - size {
        Ok(())
    } else {
        arg_err(2, "data string too short")
    }
}

/// struct.unpack(fmt, s [, i]): the values, then the next position.
// redis: deps/lua/src/lua_struct.c b_unpack
unsafe fn b_unpack_impl(l: *mut lua_State) -> LibResult {
    let fmt = c_format(check_lstring(l, 1)?);
    let data = check_lstring(l, 2)?;
    let ld = data.len();
    // size_t in C: a negative offset wraps to a huge one.
    let mut pos = opt_integer(l, 3, 1)? as u64 as usize;
    if pos == 0 {
        return arg_err(3, "offset must be 1 or greater");
    }
    pos -= 1;
    let mut n: c_int = 0;
    let mut h = default_options();
    let mut i = 0;
    while i < fmt.len() {
        let opt = fmt[i];
        i += 1;
        let mut size = optsize(opt, fmt, &mut i)?;
        pos = pos.wrapping_add(gettoalign(pos, &h, opt, size));
        check_room(pos, size, ld)?;
        if ffi::lua_checkstack(l, 2) == 0 {
            return msg_err("stack overflow (too many results)");
        }
        match opt {
            b'b' | b'B' | b'h' | b'H' | b'l' | b'L' | b'T' | b'i' | b'I' => {
                let issigned = opt.is_ascii_lowercase();
                ffi::lua_pushnumber(
                    l,
                    getinteger(&data[pos..pos + size], h.little, issigned, size),
                );
                n += 1;
            }
            b'x' => {}
            b'f' => {
                let b: [u8; 4] = ordered(&data[pos..pos + 4], h.little)
                    .try_into()
                    .unwrap_or([0; 4]);
                ffi::lua_pushnumber(l, f32::from_le_bytes(b) as f64);
                n += 1;
            }
            b'd' => {
                let b: [u8; 8] = ordered(&data[pos..pos + 8], h.little)
                    .try_into()
                    .unwrap_or([0; 8]);
                ffi::lua_pushnumber(l, f64::from_le_bytes(b));
                n += 1;
            }
            b'c' => {
                if size == 0 {
                    if n == 0 || ffi::lua_isnumber(l, -1) == 0 {
                        return msg_err("format 'c0' needs a previous size");
                    }
                    size = c_double_to_u64(ffi::lua_tonumber(l, -1)) as usize;
                    ffi::lua_pop(l, 1);
                    n -= 1;
                    check_room(pos, size, ld)?;
                }
                push_bytes(l, &data[pos..pos + size]);
                n += 1;
            }
            b's' => {
                let Some(e) = data[pos..].iter().position(|&b| b == 0) else {
                    return msg_err("unfinished string in data");
                };
                size = e + 1;
                push_bytes(l, &data[pos..pos + e]);
                n += 1;
            }
            _ => controloptions(opt, fmt, &mut i, &mut h)?,
        }
        pos = pos.wrapping_add(size);
    }
    ffi::lua_pushinteger(l, pos.wrapping_add(1) as ffi::lua_Integer);
    Ok(n + 1)
}

/// struct.size(fmt): bytes a pack with `fmt` produces.
// redis: deps/lua/src/lua_struct.c b_size
unsafe fn b_size_impl(l: *mut lua_State) -> LibResult {
    let fmt = c_format(check_lstring(l, 1)?);
    let mut h = default_options();
    let mut pos: usize = 0;
    let mut i = 0;
    while i < fmt.len() {
        let opt = fmt[i];
        i += 1;
        let size = optsize(opt, fmt, &mut i)?;
        pos = pos.wrapping_add(gettoalign(pos, &h, opt, size));
        if opt == b's' {
            return arg_err(1, "option 's' has no fixed size");
        } else if opt == b'c' && size == 0 {
            return arg_err(1, "option 'c0' has no fixed size");
        }
        if !opt.is_ascii_alphanumeric() {
            controloptions(opt, fmt, &mut i, &mut h)?;
        }
        pos = pos.wrapping_add(size);
    }
    ffi::lua_pushinteger(l, pos as ffi::lua_Integer);
    Ok(1)
}

lua_cfunction!(b_pack, b_pack_impl);
lua_cfunction!(b_unpack, b_unpack_impl);
lua_cfunction!(b_size, b_size_impl);

/// luaopen_struct: pushes the module table.
pub(crate) unsafe fn luaopen_struct(l: *mut lua_State) {
    let funcs: [(&CStr, ffi::lua_CFunction); 3] =
        [(c"pack", b_pack), (c"unpack", b_unpack), (c"size", b_size)];
    ffi::lua_newtable(l);
    set_funcs(l, &funcs, 0);
}

#[cfg(test)]
mod tests {
    //! Expected outputs recorded from redis-server 7.0.15 with
    //! `redis-cli EVAL "<chunk>" 0`.
    use super::super::test_util::{run, run_bytes};

    fn unpack(args: &str) -> String {
        run(&format!(
            "local t = {{struct.unpack({args})}} for i = 1, #t do t[i] = tostring(t[i]) end return table.concat(t, ',')"
        ))
    }

    #[test]
    fn struct_size() {
        assert_eq!(run("return struct.size('bBhHlLTfdxi')"), "47");
        assert_eq!(run("return struct.size('!8bd')"), "16");
        assert_eq!(run("return struct.size('!4bd')"), "12");
        assert_eq!(run("return struct.size('i3I9')"), "12");
        assert_eq!(run("return struct.size(12)"), "0");
        assert_eq!(
            run("return struct.size('c99999999999')"),
            "ERR: user_script:1: integral size overflow"
        );
        assert_eq!(
            run("return struct.size('i33')"),
            "ERR: user_script:1: integral size 33 is larger than limit of 32"
        );
        assert_eq!(
            run("return struct.size('!3')"),
            "ERR: user_script:1: alignment 3 is not a power of 2"
        );
        assert_eq!(
            run("return struct.size('s')"),
            "ERR: user_script:1: bad argument #1 to 'size' (option 's' has no fixed size)"
        );
        assert_eq!(
            run("return struct.size()"),
            "ERR: user_script:1: bad argument #1 to 'size' (string expected, got no value)"
        );
    }

    #[test]
    fn struct_pack() {
        assert_eq!(run_bytes("return struct.pack('>i', 1)"), b"\0\0\0\x01");
        assert_eq!(run_bytes("return struct.pack('b', 300)"), b",");
        assert_eq!(
            run_bytes("return struct.pack('>L', 2^64)"),
            b"\0\0\0\0\0\0\0\0"
        );
        assert_eq!(
            run_bytes("return struct.pack('>l', 0/0)"),
            b"\x80\0\0\0\0\0\0\0"
        );
        assert_eq!(
            run_bytes("return struct.pack('>I16', -1)"),
            b"\0\0\0\0\0\0\0\0\xff\xff\xff\xff\xff\xff\xff\xff"
        );
        assert_eq!(run_bytes("return struct.pack('>f', 0.1)"), b"=\xcc\xcc\xcd");
        assert_eq!(
            run_bytes("return struct.pack('!2 b d', 1, 2)"),
            b"\x01\0\0\0\0\0\0\0\0@"
        );
        assert_eq!(run_bytes("return struct.pack('s', 'a\\0b')"), b"a\0b\0");
        assert_eq!(
            run("return struct.pack('c5', 'abc')"),
            "ERR: user_script:1: bad argument #3 to 'pack' (string too short)"
        );
        assert_eq!(
            run("return struct.pack('b')"),
            "ERR: user_script:1: bad argument #2 to 'pack' (number expected, got nil)"
        );
        assert_eq!(
            run("return struct.pack('q', 1)"),
            "ERR: user_script:1: bad argument #1 to 'pack' (invalid format option 'q')"
        );
    }

    #[test]
    fn struct_unpack() {
        assert_eq!(unpack("'>i', struct.pack('>i', -5)"), "-5,5");
        assert_eq!(unpack("'>I', struct.pack('>i', -5)"), "4294967291,5");
        assert_eq!(unpack("'>i16', string.rep('\\255', 16)"), "-1,17");
        assert_eq!(unpack("'>i3', '\\255\\255\\254'"), "-2,4");
        assert_eq!(unpack("'s', 'abc\\0de'"), "abc,5");
        assert_eq!(unpack("'bc0', '\\2abc'"), "ab,4");
        assert_eq!(unpack("'bb', 'abc', 2"), "98,99,4");
        assert_eq!(unpack("'I0', 'ab'"), "0,1");
        assert_eq!(unpack("'!4bi', '\\1\\0\\0\\0\\2\\0\\0\\0'"), "1,2,9");
        assert_eq!(unpack("'ic0', '\\2\\0\\0\\0\\1\\2'"), "\u{1}\u{2},7");
        assert_eq!(
            unpack("'b', 'abc', 0"),
            "ERR: user_script:1: bad argument #3 to 'unpack' (offset must be 1 or greater)"
        );
        assert_eq!(
            unpack("'b', 'abc', -1"),
            "ERR: user_script:1: bad argument #2 to 'unpack' (data string too short)"
        );
        assert_eq!(
            unpack("'s', 'abc'"),
            "ERR: user_script:1: unfinished string in data"
        );
        assert_eq!(
            unpack("'c0', 'abc'"),
            "ERR: user_script:1: format 'c0' needs a previous size"
        );
        assert_eq!(
            unpack("'bc0', '\\5abc'"),
            "ERR: user_script:1: bad argument #2 to 'unpack' (data string too short)"
        );
    }
}
