//! `cmsgpack`: MessagePack for scripts, as lua-cmsgpack 0.4.0 vendored by
//! Redis 7.0.
//!
//! Encoding choices a script can observe:
//!
//! * a number that is an exact 64-bit integer is an integer of the smallest
//!   width (positive/negative fixint, uint8..64, int8..64); any other number
//!   is a float32 when that is lossless, else a float64 (so Inf is float32
//!   and NaN float64);
//! * strings are always the str family (fixstr, str8, str16, str32), never bin;
//! * a table whose keys are exactly 1..N is an array (an empty table is an
//!   empty array), anything else a map in `next` order;
//! * tables nested deeper than LUACMSGPACK_MAX_NESTING encode as nil, which
//!   also stops reference cycles; functions, userdata and nil encode as nil.
//!
//! Decoding pushes every top-level value (`unpack`), one (`unpack_one`) or
//! a counted number (`unpack_limit`), the last two returning the offset to
//! continue from (-1 at the end).

use super::{
    arg_err, c_double_to_i64, check_integer, check_lstring, lua_cfunction, msg_err, opt_integer,
    push_bytes, to_bytes, LibError, LibResult,
};
use mlua::ffi::{self, lua_State};
use std::ffi::{c_int, CStr};

/// LUACMSGPACK_MAX_NESTING: tables deeper than this encode as nil.
const LUACMSGPACK_MAX_NESTING: i32 = 16;

// ---------------------------------------------------------------------------
// Encoding
// ---------------------------------------------------------------------------

/// mp_encode_bytes: a string with its str header.
fn encode_bytes(buf: &mut Vec<u8>, s: &[u8]) {
    let len = s.len();
    if len < 32 {
        buf.push(0xa0 | len as u8); // fixstr
    } else if len <= 0xff {
        buf.extend_from_slice(&[0xd9, len as u8]); // str 8
    } else if len <= 0xffff {
        buf.push(0xda); // str 16
        buf.extend_from_slice(&(len as u16).to_be_bytes());
    } else {
        buf.push(0xdb); // str 32
        buf.extend_from_slice(&(len as u32).to_be_bytes());
    }
    buf.extend_from_slice(s);
}

/// mp_encode_double: float32 when lossless, else float64.
fn encode_double(buf: &mut Vec<u8>, d: f64) {
    let f = d as f32;
    if d == f as f64 {
        buf.push(0xca);
        buf.extend_from_slice(&f.to_be_bytes());
    } else {
        buf.push(0xcb);
        buf.extend_from_slice(&d.to_be_bytes());
    }
}

/// mp_encode_int: the smallest integer encoding.
fn encode_int(buf: &mut Vec<u8>, n: i64) {
    if n >= 0 {
        if n <= 127 {
            buf.push(n as u8); // positive fixint
        } else if n <= 0xff {
            buf.extend_from_slice(&[0xcc, n as u8]);
        } else if n <= 0xffff {
            buf.push(0xcd);
            buf.extend_from_slice(&(n as u16).to_be_bytes());
        } else if n <= 0xffff_ffff {
            buf.push(0xce);
            buf.extend_from_slice(&(n as u32).to_be_bytes());
        } else {
            buf.push(0xcf);
            buf.extend_from_slice(&(n as u64).to_be_bytes());
        }
    } else if n >= -32 {
        buf.push(n as i8 as u8); // negative fixint
    } else if n >= -128 {
        buf.extend_from_slice(&[0xd0, n as i8 as u8]);
    } else if n >= -32768 {
        buf.push(0xd1);
        buf.extend_from_slice(&(n as i16).to_be_bytes());
    } else if n >= -2_147_483_648 {
        buf.push(0xd2);
        buf.extend_from_slice(&(n as i32).to_be_bytes());
    } else {
        buf.push(0xd3);
        buf.extend_from_slice(&n.to_be_bytes());
    }
}

/// mp_encode_array / mp_encode_map: a container header; `fix` is 0x90 or
/// 0x80, `wide` the 16-bit opcode (the 32-bit one follows it).
fn encode_header(buf: &mut Vec<u8>, n: u64, fix: u8, wide: u8) {
    if n <= 15 {
        buf.push(fix | n as u8);
    } else if n <= 65535 {
        buf.push(wide);
        buf.extend_from_slice(&(n as u16).to_be_bytes());
    } else {
        buf.push(wide + 1);
        buf.extend_from_slice(&(n as u32).to_be_bytes());
    }
}

/// mp_encode_lua_number: Lua 5.1 numbers are doubles; integral ones that
/// fit an int64 are encoded as integers.
fn encode_lua_number(buf: &mut Vec<u8>, n: f64) {
    // IS_INT64_EQUIVALENT: !isinf(x) && (int64_t)x == x
    if !n.is_infinite() && c_double_to_i64(n) as f64 == n {
        encode_int(buf, c_double_to_i64(n));
    } else {
        encode_double(buf, n);
    }
}

/// table_is_an_array: keys are exactly 1..N (N = number of keys).
unsafe fn table_is_an_array(l: *mut lua_State) -> bool {
    let mut count: i64 = 0;
    let mut max: i64 = 0;
    // Stack room: nesting is capped at LUACMSGPACK_MAX_NESTING levels of a
    // few slots each, far below Lua's limit, so this cannot fail.
    ffi::lua_checkstack(l, 2);
    ffi::lua_pushnil(l);
    while ffi::lua_next(l, -2) != 0 {
        ffi::lua_pop(l, 1); // keep the key
        let n = ffi::lua_tonumber(l, -1);
        // IS_INT_EQUIVALENT: an integral double inside C int's range.
        let int_equivalent =
            !n.is_infinite() && n == n.trunc() && n >= i32::MIN as f64 && n <= i32::MAX as f64;
        if ffi::lua_type(l, -1) != ffi::LUA_TNUMBER || n <= 0.0 || !int_equivalent {
            ffi::lua_pop(l, 1);
            return false;
        }
        max = max.max(n as i64);
        count += 1;
    }
    max == count
}

/// mp_encode_lua_type: the value on top of the stack, which is popped.
unsafe fn encode_lua_type(l: *mut lua_State, buf: &mut Vec<u8>, level: i32) {
    let mut t = ffi::lua_type(l, -1);
    // Nesting limit: also what keeps a cyclic table from recursing forever.
    if t == ffi::LUA_TTABLE && level == LUACMSGPACK_MAX_NESTING {
        t = ffi::LUA_TNIL;
    }
    match t {
        ffi::LUA_TSTRING => encode_bytes(buf, to_bytes(l, -1).unwrap_or(&[])),
        ffi::LUA_TBOOLEAN => buf.push(if ffi::lua_toboolean(l, -1) != 0 {
            0xc3
        } else {
            0xc2
        }),
        ffi::LUA_TNUMBER => encode_lua_number(buf, ffi::lua_tonumber(l, -1)),
        ffi::LUA_TTABLE => {
            if table_is_an_array(l) {
                encode_table_as_array(l, buf, level);
            } else {
                encode_table_as_map(l, buf, level);
            }
        }
        _ => buf.push(0xc0), // nil, functions, userdata, threads
    }
    ffi::lua_pop(l, 1);
}

/// mp_encode_lua_table_as_array
unsafe fn encode_table_as_array(l: *mut lua_State, buf: &mut Vec<u8>, level: i32) {
    let len = ffi::lua_objlen(l, -1);
    encode_header(buf, len as u64, 0x90, 0xdc);
    ffi::lua_checkstack(l, 1);
    for j in 1..=len {
        ffi::lua_rawgeti_(l, -1, j as c_int);
        encode_lua_type(l, buf, level + 1);
    }
}

/// mp_encode_lua_table_as_map: count the pairs, then encode them.
unsafe fn encode_table_as_map(l: *mut lua_State, buf: &mut Vec<u8>, level: i32) {
    let mut len: u64 = 0;
    ffi::lua_checkstack(l, 3);
    ffi::lua_pushnil(l);
    while ffi::lua_next(l, -2) != 0 {
        ffi::lua_pop(l, 1);
        len += 1;
    }
    encode_header(buf, len, 0x80, 0xde);
    ffi::lua_pushnil(l);
    while ffi::lua_next(l, -2) != 0 {
        ffi::lua_pushvalue(l, -2); // key value key
        encode_lua_type(l, buf, level + 1); // key
        encode_lua_type(l, buf, level + 1); // value
    }
}

/// cmsgpack.pack(v1, v2, ...): the encodings, concatenated.
// redis: deps/lua/src/lua_cmsgpack.c mp_pack
unsafe fn mp_pack_impl(l: *mut lua_State) -> LibResult {
    let nargs = ffi::lua_gettop(l);
    if nargs == 0 {
        return arg_err(0, "MessagePack pack needs input.");
    }
    if ffi::lua_checkstack(l, nargs) == 0 {
        return arg_err(0, "Too many arguments for MessagePack pack.");
    }
    let mut buf = Vec::new();
    for i in 1..=nargs {
        ffi::lua_pushvalue(l, i);
        encode_lua_type(l, &mut buf, 0);
    }
    push_bytes(l, &buf);
    Ok(1)
}

// ---------------------------------------------------------------------------
// Decoding
// ---------------------------------------------------------------------------

/// mp_cur: what is left of the input, and the first error met.
struct Cursor<'a> {
    data: &'a [u8],
    err: CurErr,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum CurErr {
    None,
    /// MP_CUR_ERROR_EOF: not enough data.
    Eof,
    /// MP_CUR_ERROR_BADFMT: an unknown type byte.
    BadFmt,
}

impl Cursor<'_> {
    /// mp_cur_need: false (and EOF recorded) when fewer than `n` bytes remain.
    fn need(&mut self, n: usize) -> bool {
        if self.data.len() < n {
            self.err = CurErr::Eof;
            return false;
        }
        true
    }

    fn be(&self, from: usize, n: usize) -> u64 {
        self.data[from..from + n]
            .iter()
            .fold(0u64, |acc, &b| (acc << 8) | b as u64)
    }

    fn consume(&mut self, n: usize) {
        self.data = &self.data[n..];
    }
}

/// lua_settable on a fresh table with a nil or NaN key raises from the Lua
/// core (no position prefix); check first so no Lua error crosses Rust.
unsafe fn settable(l: *mut lua_State) -> Result<(), LibError> {
    match ffi::lua_type(l, -2) {
        ffi::LUA_TNIL => Err(LibError::Raw(b"table index is nil".to_vec())),
        ffi::LUA_TNUMBER if ffi::lua_tonumber(l, -2).is_nan() => {
            Err(LibError::Raw(b"table index is NaN".to_vec()))
        }
        _ => {
            ffi::lua_rawset(l, -3);
            Ok(())
        }
    }
}

/// mp_decode_to_lua_array
unsafe fn decode_array(l: *mut lua_State, c: &mut Cursor, len: u64) -> Result<(), LibError> {
    ffi::lua_newtable(l);
    if ffi::lua_checkstack(l, 1) == 0 {
        return msg_err("stack overflow (in function mp_decode_to_lua_array)");
    }
    let mut index: c_int = 1;
    for _ in 0..len {
        ffi::lua_pushnumber(l, index as f64);
        index = index.wrapping_add(1);
        decode_lua_type(l, c)?;
        if c.err != CurErr::None {
            return Ok(());
        }
        settable(l)?;
    }
    Ok(())
}

/// mp_decode_to_lua_hash
unsafe fn decode_hash(l: *mut lua_State, c: &mut Cursor, len: u64) -> Result<(), LibError> {
    ffi::lua_newtable(l);
    for _ in 0..len {
        decode_lua_type(l, c)?; // key
        if c.err != CurErr::None {
            return Ok(());
        }
        decode_lua_type(l, c)?; // value
        if c.err != CurErr::None {
            return Ok(());
        }
        settable(l)?;
    }
    Ok(())
}

/// A length-prefixed string: `hdr` header bytes, then `len` bytes.
unsafe fn decode_str(l: *mut lua_State, c: &mut Cursor, hdr: usize, len: usize) {
    if !c.need(hdr.saturating_add(len)) {
        return;
    }
    push_bytes(l, &c.data[hdr..hdr + len]);
    c.consume(hdr + len);
}

/// mp_decode_to_lua_type: push one value; cursor errors are left in `c.err`.
unsafe fn decode_lua_type(l: *mut lua_State, c: &mut Cursor) -> Result<(), LibError> {
    if !c.need(1) {
        return Ok(());
    }
    if ffi::lua_checkstack(l, 1) == 0 {
        return msg_err(
            "stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)",
        );
    }
    let b = c.data[0];
    match b {
        0xcc | 0xd0 => {
            if c.need(2) {
                let v = if b == 0xcc {
                    c.data[1] as f64
                } else {
                    c.data[1] as i8 as f64
                };
                ffi::lua_pushnumber(l, v);
                c.consume(2);
            }
        }
        0xcd | 0xd1 => {
            if c.need(3) {
                let raw = c.be(1, 2) as u16;
                let v = if b == 0xcd {
                    raw as f64
                } else {
                    raw as i16 as f64
                };
                ffi::lua_pushnumber(l, v);
                c.consume(3);
            }
        }
        0xce | 0xd2 => {
            if c.need(5) {
                let raw = c.be(1, 4) as u32;
                let v = if b == 0xce {
                    raw as f64
                } else {
                    raw as i32 as f64
                };
                ffi::lua_pushnumber(l, v);
                c.consume(5);
            }
        }
        0xcf | 0xd3 => {
            if c.need(9) {
                // uint64 goes through lua_pushinteger (a signed ptrdiff_t).
                ffi::lua_pushnumber(l, c.be(1, 8) as i64 as f64);
                c.consume(9);
            }
        }
        0xc0 => {
            ffi::lua_pushnil(l);
            c.consume(1);
        }
        0xc3 | 0xc2 => {
            ffi::lua_pushboolean(l, (b == 0xc3) as c_int);
            c.consume(1);
        }
        0xca => {
            if c.need(5) {
                ffi::lua_pushnumber(l, f32::from_bits(c.be(1, 4) as u32) as f64);
                c.consume(5);
            }
        }
        0xcb => {
            if c.need(9) {
                ffi::lua_pushnumber(l, f64::from_bits(c.be(1, 8)));
                c.consume(9);
            }
        }
        0xd9 => {
            if c.need(2) {
                let len = c.data[1] as usize;
                decode_str(l, c, 2, len);
            }
        }
        0xda => {
            if c.need(3) {
                let len = c.be(1, 2) as usize;
                decode_str(l, c, 3, len);
            }
        }
        0xdb => {
            if c.need(5) {
                let len = c.be(1, 4) as usize;
                decode_str(l, c, 5, len);
            }
        }
        0xdc | 0xde => {
            if c.need(3) {
                let len = c.be(1, 2);
                c.consume(3);
                return if b == 0xdc {
                    decode_array(l, c, len)
                } else {
                    decode_hash(l, c, len)
                };
            }
        }
        0xdd | 0xdf => {
            if c.need(5) {
                let len = c.be(1, 4);
                c.consume(5);
                return if b == 0xdd {
                    decode_array(l, c, len)
                } else {
                    decode_hash(l, c, len)
                };
            }
        }
        _ if b & 0x80 == 0 => {
            ffi::lua_pushnumber(l, b as f64); // positive fixint
            c.consume(1);
        }
        _ if b & 0xe0 == 0xe0 => {
            ffi::lua_pushnumber(l, b as i8 as f64); // negative fixint
            c.consume(1);
        }
        _ if b & 0xe0 == 0xa0 => decode_str(l, c, 1, (b & 0x1f) as usize), // fixstr
        _ if b & 0xf0 == 0x90 => {
            c.consume(1);
            return decode_array(l, c, (b & 0xf) as u64);
        }
        _ if b & 0xf0 == 0x80 => {
            c.consume(1);
            return decode_hash(l, c, (b & 0xf) as u64);
        }
        _ => c.err = CurErr::BadFmt,
    }
    Ok(())
}

/// mp_unpack_full: decode up to `limit` values from `offset` (both 0: all
/// values, and no offset is returned).
unsafe fn unpack_full(l: *mut lua_State, limit: i64, offset: i64) -> LibResult {
    let decode_all = limit == 0 && offset == 0;
    let s = check_lstring(l, 1)?;
    let len = s.len();
    if offset < 0 || limit < 0 {
        // The C message prints the input length where it says "limit".
        return msg_err(format!(
            "Invalid request to unpack with offset of {} and limit of {}.",
            offset as i32, len as i32
        ));
    } else if offset as u64 > len as u64 {
        return msg_err(format!(
            "Start offset {} greater than input length {}.",
            offset as i32, len as i32
        ));
    }
    let limit = if decode_all { i32::MAX as i64 } else { limit };
    let mut c = Cursor {
        data: &s[offset as usize..],
        err: CurErr::None,
    };
    let mut cnt: i64 = 0;
    while !c.data.is_empty() && cnt < limit {
        decode_lua_type(l, &mut c)?;
        match c.err {
            CurErr::Eof => return msg_err("Missing bytes in input."),
            CurErr::BadFmt => return msg_err("Bad data format in input."),
            CurErr::None => {}
        }
        cnt += 1;
    }
    if !decode_all {
        let new_offset = len - c.data.len();
        if ffi::lua_checkstack(l, 1) == 0 {
            return msg_err("stack overflow (in function mp_unpack_full)");
        }
        ffi::lua_pushinteger(
            l,
            if c.data.is_empty() {
                -1
            } else {
                new_offset as ffi::lua_Integer
            },
        );
        // The offset is the first result: just above the argument.
        ffi::lua_insert(l, 2);
        cnt += 1;
    }
    Ok(cnt as c_int)
}

/// cmsgpack.unpack(s): every value in `s`.
// redis: deps/lua/src/lua_cmsgpack.c mp_unpack
unsafe fn mp_unpack_impl(l: *mut lua_State) -> LibResult {
    unpack_full(l, 0, 0)
}

/// cmsgpack.unpack_one(s [, offset]): next offset, then one value.
unsafe fn mp_unpack_one_impl(l: *mut lua_State) -> LibResult {
    let offset = opt_integer(l, 2, 0)?;
    ffi::lua_settop(l, 1.min(ffi::lua_gettop(l)));
    unpack_full(l, 1, offset)
}

/// cmsgpack.unpack_limit(s, limit [, offset]): next offset, then up to
/// `limit` values.
unsafe fn mp_unpack_limit_impl(l: *mut lua_State) -> LibResult {
    let limit = check_integer(l, 2)?;
    let offset = opt_integer(l, 3, 0)?;
    ffi::lua_settop(l, 1);
    unpack_full(l, limit, offset)
}

lua_cfunction!(mp_pack, mp_pack_impl);
lua_cfunction!(mp_unpack, mp_unpack_impl);
lua_cfunction!(mp_unpack_one, mp_unpack_one_impl);
lua_cfunction!(mp_unpack_limit, mp_unpack_limit_impl);

/// luaopen_cmsgpack: pushes the module table.
pub(crate) unsafe fn luaopen_cmsgpack(l: *mut lua_State) {
    let funcs: [(&CStr, ffi::lua_CFunction); 4] = [
        (c"pack", mp_pack),
        (c"unpack", mp_unpack),
        (c"unpack_one", mp_unpack_one),
        (c"unpack_limit", mp_unpack_limit),
    ];
    ffi::lua_newtable(l);
    super::set_funcs(l, &funcs, 0);
    let fields: [(&CStr, &CStr); 4] = [
        (c"_NAME", c"cmsgpack"),
        (c"_VERSION", c"lua-cmsgpack 0.4.0"),
        (c"_COPYRIGHT", c"Copyright (C) 2012, Salvatore Sanfilippo"),
        (c"_DESCRIPTION", c"MessagePack C implementation for Lua"),
    ];
    for (k, v) in fields {
        ffi::lua_pushstring_(l, v.as_ptr());
        ffi::lua_setfield(l, -2, k.as_ptr());
    }
}

#[cfg(test)]
mod tests {
    //! Expected outputs recorded from redis-server 7.0.15 with
    //! `redis-cli EVAL "local function hex(s) ... end return hex(cmsgpack.pack(...))" 0`.
    use super::super::test_util::run;

    const HEX: &str = "local function hex(s) return (string.gsub(s, '.', function(c) return string.format('%02x', string.byte(c)) end)) end ";

    fn hex(expr: &str) -> String {
        run(&format!("{HEX} return hex({expr})"))
    }

    fn list(expr: &str) -> String {
        run(&format!("local t = {{{expr}}} for i = 1, #t do t[i] = tostring(t[i]) end return table.concat(t, ',')"))
    }

    #[test]
    fn cmsgpack_pack_integers_and_floats() {
        assert_eq!(
            hex("cmsgpack.pack(1, -1, -32, -33, 127, 128, 255, 256, 65535, 65536, 2^32-1, 2^32, -128, -129, -32768, -32769, -2^31, -2^31-1, 2^53, -2^53)"),
            "01ffe0d0df7fcc80ccffcd0100cdffffce00010000ceffffffffcf0000000100000000d080d1ff7fd18000d2ffff7fffd280000000d3ffffffff7fffffffcf0020000000000000d3ffe0000000000000"
        );
        assert_eq!(
            hex("cmsgpack.pack(1.5, 0.1, 1/0, -1/0, 2^63, -2^63, 2^64, 1e300, -0.0)"),
            "ca3fc00000cb3fb999999999999aca7f800000caff800000ca5f000000d38000000000000000ca5f800000cb7e37e43c8800759c00"
        );
        assert_eq!(hex("cmsgpack.pack(0/0)"), "cbfff8000000000000");
    }

    #[test]
    fn cmsgpack_pack_strings_and_tables() {
        assert_eq!(
            hex("cmsgpack.pack('', 'abc', string.rep('x', 31), string.rep('x', 32)):sub(1, 20)"),
            "a0a3616263bf7878787878787878787878787878"
        );
        assert_eq!(
            run(&format!("{HEX} return hex(cmsgpack.pack(string.rep('x', 255)):sub(1,6)) .. ' ' .. hex(cmsgpack.pack(string.rep('x', 256)):sub(1,8)) .. ' ' .. hex(cmsgpack.pack(string.rep('x', 65536)):sub(1,12))")),
            "d9ff78787878 da01007878787878 db0001000078787878787878"
        );
        assert_eq!(
            hex("cmsgpack.pack({1,2,3}, {}, {a=1}, {[1]=1,[3]=3}, {[2]=2}, {[1.5]=1}, true, false, nil, cjson.null, cmsgpack.pack)"),
            "930102039081a16101820101030381020281ca3fc0000001c3c2c0c0c0"
        );
        assert_eq!(
            run(&format!(
                "{HEX} local t={{}} t[1]=t return hex(cmsgpack.pack(t))"
            )),
            "91919191919191919191919191919191c0"
        );
        assert_eq!(hex("cmsgpack.pack({[2^31]=1})"), "81ce8000000001");
        assert_eq!(
            run("return cmsgpack.pack()"),
            "ERR: user_script:1: bad argument #0 to 'pack' (MessagePack pack needs input.)"
        );
    }

    #[test]
    fn cmsgpack_unpack() {
        assert_eq!(
            run("return cmsgpack.unpack(cmsgpack.pack({a={b='c'}})).a.b"),
            "c"
        );
        assert_eq!(
            list("cmsgpack.unpack('\\207\\255\\255\\255\\255\\255\\255\\255\\255')"),
            "-1"
        );
        assert_eq!(
            list("cmsgpack.unpack('\\255\\224\\208\\128\\209\\255\\254\\206\\255\\255\\255\\254')"),
            "-1,-32,-128,-2,4294967294"
        );
        assert_eq!(list("cmsgpack.unpack('\\202\\64\\32\\0\\0')"), "2.5");
        assert_eq!(list("cmsgpack.unpack(12)"), "49,50");
        assert_eq!(
            run("return cmsgpack.unpack('\\193')"),
            "ERR: user_script:1: Bad data format in input."
        );
        assert_eq!(
            run("return cmsgpack.unpack('\\147\\1')"),
            "ERR: user_script:1: Missing bytes in input."
        );
        assert_eq!(
            run("return cmsgpack.unpack('\\196\\3abc')"),
            "ERR: user_script:1: Bad data format in input."
        );
        assert_eq!(
            run("return cmsgpack.unpack('\\129\\192\\1')"),
            "ERR: table index is nil"
        );
        assert_eq!(
            run("return cmsgpack.unpack({})"),
            "ERR: user_script:1: bad argument #1 to 'unpack' (string expected, got table)"
        );
    }

    #[test]
    fn cmsgpack_unpack_one_and_limit() {
        assert_eq!(list("cmsgpack.unpack_one(cmsgpack.pack(1,2,3))"), "1,1");
        assert_eq!(list("cmsgpack.unpack_one(cmsgpack.pack(1,2,3), 2)"), "-1,3");
        assert_eq!(list("cmsgpack.unpack_one(cmsgpack.pack(1,2,3), 3)"), "-1");
        assert_eq!(
            list("cmsgpack.unpack_one(cmsgpack.pack(1,2,3), 4)"),
            "ERR: user_script:1: Start offset 4 greater than input length 3."
        );
        assert_eq!(
            list("cmsgpack.unpack_one(cmsgpack.pack(1,2,3), -1)"),
            "ERR: user_script:1: Invalid request to unpack with offset of -1 and limit of 3."
        );
        assert_eq!(
            list("cmsgpack.unpack_limit(cmsgpack.pack(1,2,3), 2)"),
            "2,1,2"
        );
        assert_eq!(
            list("cmsgpack.unpack_limit(cmsgpack.pack(1,2,3), 0)"),
            "1,2,3"
        );
        assert_eq!(
            list("cmsgpack.unpack_limit(cmsgpack.pack(1,2,3), 0, 1)"),
            "1"
        );
        assert_eq!(
            list("cmsgpack.unpack_limit(cmsgpack.pack(1,2,3), 5)"),
            "-1,1,2,3"
        );
        assert_eq!(
            list("cmsgpack.unpack_limit(cmsgpack.pack(1,2,3))"),
            "ERR: user_script:1: bad argument #2 to 'unpack_limit' (number expected, got no value)"
        );
        assert_eq!(
            run("return cmsgpack._NAME .. '|' .. cmsgpack._VERSION .. '|' .. cmsgpack._COPYRIGHT .. '|' .. cmsgpack._DESCRIPTION"),
            "cmsgpack|lua-cmsgpack 0.4.0|Copyright (C) 2012, Salvatore Sanfilippo|MessagePack C implementation for Lua"
        );
    }
}
