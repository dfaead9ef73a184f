//! `cjson`: JSON for scripts, as lua-cjson 2.1.0 vendored by Redis 7.0.
//!
//! Encoding walks the Lua value on top of the stack and appends to a byte
//! buffer; decoding is a one-token-lookahead recursive descent parser over
//! the NUL-terminated Lua string. The observable quirks of the C library are
//! kept on purpose, because scripts see them:
//!
//! * numbers are printed with `%.14g` (see `encode_number_precision`), so
//!   `cjson.encode(2^53)` is `9.007199254741e+15` and `-0` stays `-0`;
//! * `/` is escaped as `\/`, control characters and DEL as `\u00XX`, bytes
//!   >= 0x80 pass through untouched (no UTF-8 validation);
//! * a table is an array when every key is a positive integer; holes become
//!   `null`, and an "excessively sparse" one is an error (`encode_sparse_array`);
//! * parsing stops at the first NUL byte (the C parser reads a C string), and
//!   numbers go through `strtod`, so `0x10`, `Infinity` and `nan` decode while
//!   `decode_invalid_numbers` is on (the default);
//! * JSON `null` decodes to `cjson.null`, a NULL light userdata.
//!
//! Each table returned by `cjson.new()` has its own configuration, kept in a
//! userdata that every function of the table holds as upvalue 1.

use super::{
    arg_err, c_double_to_int, check_integer, check_lstring, check_option, lua_cfunction, msg_err,
    push_bytes, set_funcs, to_bytes, LibError, LibResult,
};
use mlua::ffi::{self, lua_State};
use std::ffi::{c_char, c_int, CStr};

// Defaults of lua-cjson 2.1.0 as Redis builds it (DEFAULT_* in lua_cjson.c).
/// DEFAULT_SPARSE_CONVERT: an excessively sparse array is an error, not an object.
const DEFAULT_SPARSE_CONVERT: i32 = 0;
/// DEFAULT_SPARSE_RATIO: sparse when max index > items * 2 ...
const DEFAULT_SPARSE_RATIO: i32 = 2;
/// DEFAULT_SPARSE_SAFE: ... and max index > 10 (small arrays are always fine).
const DEFAULT_SPARSE_SAFE: i32 = 10;
/// DEFAULT_ENCODE_MAX_DEPTH: nesting limit; also stops reference cycles.
const DEFAULT_ENCODE_MAX_DEPTH: i32 = 1000;
/// DEFAULT_DECODE_MAX_DEPTH: nesting limit of decoded arrays/objects.
const DEFAULT_DECODE_MAX_DEPTH: i32 = 1000;
/// DEFAULT_ENCODE_INVALID_NUMBERS: NaN/Inf cannot be encoded (0 = off).
const DEFAULT_ENCODE_INVALID_NUMBERS: i32 = 0;
/// DEFAULT_DECODE_INVALID_NUMBERS: hex, Inf, NaN are accepted when decoding.
const DEFAULT_DECODE_INVALID_NUMBERS: i32 = 1;
/// DEFAULT_ENCODE_KEEP_BUFFER: only a memory tweak in C; kept as a setting.
const DEFAULT_ENCODE_KEEP_BUFFER: i32 = 1;
/// DEFAULT_ENCODE_NUMBER_PRECISION: `%.14g`.
const DEFAULT_ENCODE_NUMBER_PRECISION: i32 = 14;

/// json_config_t: one per module table, stored in a userdata upvalue.
#[repr(C)]
#[derive(Clone, Copy)]
struct JsonConfig {
    encode_sparse_convert: i32,
    encode_sparse_ratio: i32,
    encode_sparse_safe: i32,
    encode_max_depth: i32,
    /// 0 = refuse, 1 = print inf/nan, 2 = print null.
    encode_invalid_numbers: i32,
    encode_number_precision: i32,
    encode_keep_buffer: i32,
    decode_invalid_numbers: i32,
    decode_max_depth: i32,
}

/// json_fetch_config: upvalue 1 of the running function.
unsafe fn fetch_config(l: *mut lua_State) -> Result<*mut JsonConfig, LibError> {
    let cfg = ffi::lua_touserdata(l, ffi::lua_upvalueindex(1)) as *mut JsonConfig;
    if cfg.is_null() {
        return msg_err("BUG: Unable to fetch CJSON configuration");
    }
    Ok(cfg)
}

/// json_arg_init: at most `args` arguments, padded with nil.
unsafe fn arg_init(l: *mut lua_State, args: c_int) -> Result<*mut JsonConfig, LibError> {
    if ffi::lua_gettop(l) > args {
        return arg_err(args + 1, "found too many arguments");
    }
    while ffi::lua_gettop(l) < args {
        ffi::lua_pushnil(l);
    }
    fetch_config(l)
}

/// json_integer_option. The range error always names argument 1, as in C.
unsafe fn integer_option(
    l: *mut lua_State,
    optindex: c_int,
    setting: &mut i32,
    min: i32,
    max: i32,
) -> LibResult {
    if ffi::lua_type(l, optindex) != ffi::LUA_TNIL {
        // luaL_checkinteger's result lands in a C int.
        let value = check_integer(l, optindex)? as i32;
        if !(min <= value && value <= max) {
            return arg_err(1, format!("expected integer between {min} and {max}"));
        }
        *setting = value;
    }
    ffi::lua_pushinteger(l, *setting as ffi::lua_Integer);
    Ok(1)
}

/// json_enum_option: a boolean or one of `options`; `None` means off/on.
unsafe fn enum_option(
    l: *mut lua_State,
    optindex: c_int,
    setting: &mut i32,
    options: Option<&[&str]>,
    bool_true: i32,
) -> LibResult {
    let (options, bool_true) = match options {
        Some(o) => (o, bool_true),
        None => (&["off", "on"][..], 1),
    };
    if ffi::lua_type(l, optindex) != ffi::LUA_TNIL {
        if bool_true != 0 && ffi::lua_type(l, optindex) == ffi::LUA_TBOOLEAN {
            *setting = ffi::lua_toboolean(l, optindex) * bool_true;
        } else {
            *setting = check_option(l, optindex, options)? as i32;
        }
    }
    if bool_true != 0 && (*setting == 0 || *setting == bool_true) {
        ffi::lua_pushboolean(l, *setting);
    } else {
        push_bytes(l, options[*setting as usize].as_bytes());
    }
    Ok(1)
}

/// cjson.encode_sparse_array([convert[, ratio[, safe]]])
unsafe fn cfg_encode_sparse_array(l: *mut lua_State) -> LibResult {
    let cfg = &mut *arg_init(l, 3)?;
    enum_option(l, 1, &mut cfg.encode_sparse_convert, None, 1)?;
    integer_option(l, 2, &mut cfg.encode_sparse_ratio, 0, i32::MAX)?;
    integer_option(l, 3, &mut cfg.encode_sparse_safe, 0, i32::MAX)?;
    Ok(3)
}

/// cjson.encode_max_depth([depth])
unsafe fn cfg_encode_max_depth(l: *mut lua_State) -> LibResult {
    let cfg = &mut *arg_init(l, 1)?;
    integer_option(l, 1, &mut cfg.encode_max_depth, 1, i32::MAX)
}

/// cjson.decode_max_depth([depth])
unsafe fn cfg_decode_max_depth(l: *mut lua_State) -> LibResult {
    let cfg = &mut *arg_init(l, 1)?;
    integer_option(l, 1, &mut cfg.decode_max_depth, 1, i32::MAX)
}

/// cjson.encode_number_precision([1..14])
unsafe fn cfg_encode_number_precision(l: *mut lua_State) -> LibResult {
    let cfg = &mut *arg_init(l, 1)?;
    integer_option(l, 1, &mut cfg.encode_number_precision, 1, 14)
}

/// cjson.encode_keep_buffer([bool]): a buffer-reuse switch in C; here it
/// only remembers the setting.
unsafe fn cfg_encode_keep_buffer(l: *mut lua_State) -> LibResult {
    let cfg = &mut *arg_init(l, 1)?;
    enum_option(l, 1, &mut cfg.encode_keep_buffer, None, 1)
}

/// cjson.encode_invalid_numbers([bool | "on" | "off" | "null"])
unsafe fn cfg_encode_invalid_numbers(l: *mut lua_State) -> LibResult {
    let cfg = &mut *arg_init(l, 1)?;
    enum_option(
        l,
        1,
        &mut cfg.encode_invalid_numbers,
        Some(&["off", "on", "null"]),
        1,
    )
}

/// cjson.decode_invalid_numbers([bool | "on" | "off"])
unsafe fn cfg_decode_invalid_numbers(l: *mut lua_State) -> LibResult {
    let cfg = &mut *arg_init(l, 1)?;
    enum_option(l, 1, &mut cfg.decode_invalid_numbers, None, 1)
}

// ---------------------------------------------------------------------------
// Encoding
// ---------------------------------------------------------------------------

/// json_encode_exception: "Cannot serialise <type of value at lindex>: reason".
unsafe fn encode_exception<T>(
    l: *mut lua_State,
    lindex: c_int,
    reason: &str,
) -> Result<T, LibError> {
    let tname = CStr::from_ptr(ffi::lua_typename(l, ffi::lua_type(l, lindex))).to_string_lossy();
    msg_err(format!("Cannot serialise {tname}: {reason}"))
}

/// char2escape: the JSON spelling of a byte, or None to copy it as is.
fn char2escape(c: u8) -> Option<&'static [u8]> {
    const CTRL: [&[u8]; 32] = [
        b"\\u0000", b"\\u0001", b"\\u0002", b"\\u0003", b"\\u0004", b"\\u0005", b"\\u0006",
        b"\\u0007", b"\\b", b"\\t", b"\\n", b"\\u000b", b"\\f", b"\\r", b"\\u000e", b"\\u000f",
        b"\\u0010", b"\\u0011", b"\\u0012", b"\\u0013", b"\\u0014", b"\\u0015", b"\\u0016",
        b"\\u0017", b"\\u0018", b"\\u0019", b"\\u001a", b"\\u001b", b"\\u001c", b"\\u001d",
        b"\\u001e", b"\\u001f",
    ];
    match c {
        0..=31 => Some(CTRL[c as usize]),
        b'"' => Some(b"\\\""),
        b'/' => Some(b"\\/"),
        b'\\' => Some(b"\\\\"),
        127 => Some(b"\\u007f"),
        _ => None,
    }
}

/// json_append_string: the string (or number, converted) at `lindex`.
unsafe fn append_string(l: *mut lua_State, json: &mut Vec<u8>, lindex: c_int) {
    let s = to_bytes(l, lindex).unwrap_or(&[]);
    json.reserve(s.len() + 2);
    json.push(b'"');
    for &c in s {
        match char2escape(c) {
            Some(esc) => json.extend_from_slice(esc),
            None => json.push(c),
        }
    }
    json.push(b'"');
}

/// C's `printf("%.*g", precision, d)`.
fn format_g(d: f64, precision: i32) -> Vec<u8> {
    let mut buf = [0u8; 64];
    // SAFETY: the buffer is large enough for any %.14g output (at most 21
    // bytes) and snprintf never writes past the size it is given.
    let n = unsafe {
        libc::snprintf(
            buf.as_mut_ptr() as *mut c_char,
            buf.len(),
            c"%.*g".as_ptr(),
            precision as c_int,
            d,
        )
    };
    let n = (n.max(0) as usize).min(buf.len() - 1);
    buf[..n].to_vec()
}

/// json_append_number: the number at `lindex`, honouring
/// encode_invalid_numbers and the precision.
unsafe fn append_number(
    l: *mut lua_State,
    cfg: &JsonConfig,
    json: &mut Vec<u8>,
    lindex: c_int,
) -> Result<(), LibError> {
    let num = ffi::lua_tonumber(l, lindex);
    match cfg.encode_invalid_numbers {
        0 => {
            if num.is_infinite() || num.is_nan() {
                return encode_exception(l, lindex, "must not be NaN or Inf");
            }
        }
        1 => {
            // "nan" spelled out: some platforms print "-nan".
            if num.is_nan() {
                json.extend_from_slice(b"nan");
                return Ok(());
            }
        }
        _ => {
            if num.is_infinite() || num.is_nan() {
                json.extend_from_slice(b"null");
                return Ok(());
            }
        }
    }
    json.extend_from_slice(&format_g(num, cfg.encode_number_precision));
    Ok(())
}

/// lua_array_length: for the table on top of the stack, the array length
/// (max index), or -1 when it must be encoded as an object.
unsafe fn array_length(l: *mut lua_State, cfg: &JsonConfig) -> Result<i32, LibError> {
    let mut max: i32 = 0;
    let mut items: i32 = 0;
    ffi::lua_pushnil(l);
    while ffi::lua_next(l, -2) != 0 {
        // table, key, value
        if ffi::lua_type(l, -2) == ffi::LUA_TNUMBER {
            let k = ffi::lua_tonumber(l, -2);
            if k != 0.0 && k.floor() == k && k >= 1.0 {
                // `max = k` is a double -> int conversion in C.
                if k > max as f64 {
                    max = c_double_to_int(k);
                }
                items = items.wrapping_add(1);
                ffi::lua_pop(l, 1);
                continue;
            }
        }
        // A non positive-integer key: not an array.
        ffi::lua_pop(l, 2);
        return Ok(-1);
    }
    if cfg.encode_sparse_ratio > 0
        && max > items.wrapping_mul(cfg.encode_sparse_ratio)
        && max > cfg.encode_sparse_safe
    {
        if cfg.encode_sparse_convert == 0 {
            return encode_exception(l, -1, "excessively sparse array");
        }
        return Ok(-1);
    }
    Ok(max)
}

/// json_append_array: t[1..=len], holes as null.
unsafe fn append_array(
    l: *mut lua_State,
    cfg: &JsonConfig,
    depth: i32,
    json: &mut Vec<u8>,
    len: i32,
) -> Result<(), LibError> {
    json.push(b'[');
    for i in 1..=len {
        if i > 1 {
            json.push(b',');
        }
        ffi::lua_rawgeti_(l, -1, i);
        append_data(l, cfg, depth, json)?;
        ffi::lua_pop(l, 1);
    }
    json.push(b']');
    Ok(())
}

/// json_append_object: every key/value pair in `next` order; number keys
/// are printed as numbers inside quotes.
unsafe fn append_object(
    l: *mut lua_State,
    cfg: &JsonConfig,
    depth: i32,
    json: &mut Vec<u8>,
) -> Result<(), LibError> {
    json.push(b'{');
    ffi::lua_pushnil(l);
    let mut comma = false;
    while ffi::lua_next(l, -2) != 0 {
        if comma {
            json.push(b',');
        } else {
            comma = true;
        }
        // table, key, value
        match ffi::lua_type(l, -2) {
            ffi::LUA_TNUMBER => {
                json.push(b'"');
                append_number(l, cfg, json, -2)?;
                json.extend_from_slice(b"\":");
            }
            ffi::LUA_TSTRING => {
                append_string(l, json, -2);
                json.push(b':');
            }
            _ => return encode_exception(l, -2, "table key must be a number or string"),
        }
        append_data(l, cfg, depth, json)?;
        ffi::lua_pop(l, 1);
    }
    json.push(b'}');
    Ok(())
}

/// json_append_data: the value on top of the stack.
unsafe fn append_data(
    l: *mut lua_State,
    cfg: &JsonConfig,
    depth: i32,
    json: &mut Vec<u8>,
) -> Result<(), LibError> {
    match ffi::lua_type(l, -1) {
        ffi::LUA_TSTRING => append_string(l, json, -1),
        ffi::LUA_TNUMBER => append_number(l, cfg, json, -1)?,
        ffi::LUA_TBOOLEAN => {
            if ffi::lua_toboolean(l, -1) != 0 {
                json.extend_from_slice(b"true");
            } else {
                json.extend_from_slice(b"false");
            }
        }
        ffi::LUA_TTABLE => {
            let depth = depth + 1;
            // json_check_encode_depth (3 free slots: key, value, error).
            if !(depth <= cfg.encode_max_depth && ffi::lua_checkstack(l, 3) != 0) {
                return msg_err(format!("Cannot serialise, excessive nesting ({depth})"));
            }
            let len = array_length(l, cfg)?;
            if len > 0 {
                append_array(l, cfg, depth, json, len)?;
            } else {
                append_object(l, cfg, depth, json)?;
            }
        }
        ffi::LUA_TNIL => json.extend_from_slice(b"null"),
        ffi::LUA_TLIGHTUSERDATA if ffi::lua_touserdata(l, -1).is_null() => {
            json.extend_from_slice(b"null")
        }
        // functions, full userdata, threads, other light userdata
        _ => return encode_exception(l, -1, "type not supported"),
    }
    Ok(())
}

/// cjson.encode(value)
// redis: deps/lua/src/lua_cjson.c json_encode
unsafe fn json_encode_impl(l: *mut lua_State) -> LibResult {
    let cfg = *fetch_config(l)?;
    if ffi::lua_gettop(l) != 1 {
        return arg_err(1, "expected 1 argument");
    }
    let mut json = Vec::new();
    append_data(l, &cfg, 0, &mut json)?;
    push_bytes(l, &json);
    Ok(1)
}

// ---------------------------------------------------------------------------
// Decoding
// ---------------------------------------------------------------------------

/// json_token_type_t; the names are part of the error messages.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum TokenType {
    ObjBegin,
    ObjEnd,
    ArrBegin,
    ArrEnd,
    String,
    Number,
    Boolean,
    Null,
    Colon,
    Comma,
    End,
    Error,
}

impl TokenType {
    /// json_token_type_name
    fn name(self) -> &'static str {
        match self {
            TokenType::ObjBegin => "T_OBJ_BEGIN",
            TokenType::ObjEnd => "T_OBJ_END",
            TokenType::ArrBegin => "T_ARR_BEGIN",
            TokenType::ArrEnd => "T_ARR_END",
            TokenType::String => "T_STRING",
            TokenType::Number => "T_NUMBER",
            TokenType::Boolean => "T_BOOLEAN",
            TokenType::Null => "T_NULL",
            TokenType::Colon => "T_COLON",
            TokenType::Comma => "T_COMMA",
            TokenType::End => "T_END",
            TokenType::Error => "T_ERROR",
        }
    }
}

/// json_token_t
struct Token {
    ty: TokenType,
    /// 0-based offset of the token (of the error, for T_ERROR).
    index: usize,
    string: Vec<u8>,
    number: f64,
    boolean: bool,
    /// T_ERROR's description ("invalid token", ...).
    error: &'static str,
}

impl Token {
    fn new() -> Token {
        Token {
            ty: TokenType::End,
            index: 0,
            string: Vec::new(),
            number: 0.0,
            boolean: false,
            error: "",
        }
    }
}

/// json_parse_t
struct Parser<'a> {
    /// The JSON text; byte `data.len()` is the NUL terminator Lua keeps.
    data: &'a [u8],
    /// The same text as a C string, for strtod.
    cstr: *const c_char,
    ptr: usize,
    cfg: JsonConfig,
    current_depth: i32,
}

impl Parser<'_> {
    /// The byte at `i`, 0 at and past the end (the C string's terminator).
    fn at(&self, i: usize) -> u8 {
        self.data.get(i).copied().unwrap_or(0)
    }

    fn starts_with(&self, s: &[u8]) -> bool {
        self.data
            .get(self.ptr..)
            .is_some_and(|rest| rest.starts_with(s))
    }

    /// json_set_token_error
    fn set_token_error(&self, token: &mut Token, errtype: &'static str) {
        token.ty = TokenType::Error;
        token.index = self.ptr;
        token.error = errtype;
    }

    /// decode_hex4: four hex digits at `i`, or None.
    fn decode_hex4(&self, i: usize) -> Option<u32> {
        let mut v = 0u32;
        for k in 0..4 {
            let d = (self.at(i + k) as char).to_digit(16)?;
            v = (v << 4) | d;
        }
        Some(v)
    }

    /// json_append_unicode_escape: `\uXXXX` (or a surrogate pair) at ptr,
    /// appended as UTF-8. None on a malformed escape.
    fn append_unicode_escape(&mut self, out: &mut Vec<u8>) -> Option<()> {
        let mut escape_len = 6;
        let mut codepoint = self.decode_hex4(self.ptr + 2)?;
        // UTF-16 surrogates: 11011 x yyyyyyyyyy, x = 0 high, 1 low.
        if codepoint & 0xF800 == 0xD800 {
            if codepoint & 0x400 != 0 {
                return None; // a low surrogate first
            }
            if self.at(self.ptr + 6) != b'\\' || self.at(self.ptr + 7) != b'u' {
                return None;
            }
            let low = self.decode_hex4(self.ptr + 8)?;
            if low & 0xFC00 != 0xDC00 {
                return None;
            }
            codepoint = (((codepoint & 0x3FF) << 10) | (low & 0x3FF)) + 0x10000;
            escape_len = 12;
        }
        // codepoint_to_utf8 (never more than 0x10FFFF here)
        let mut buf = [0u8; 4];
        let s = char::from_u32(codepoint)
            .map(|c| c.encode_utf8(&mut buf).as_bytes().to_vec())
            .unwrap_or_else(|| encode_utf8_raw(codepoint));
        out.extend_from_slice(&s);
        self.ptr += escape_len;
        Some(())
    }

    /// json_next_string_token: ptr is at the opening quote.
    fn next_string_token(&mut self, token: &mut Token) {
        self.ptr += 1;
        let mut out = Vec::new();
        loop {
            let mut ch = self.at(self.ptr);
            if ch == b'"' {
                break;
            }
            if ch == 0 {
                self.set_token_error(token, "unexpected end of string");
                return;
            }
            if ch == b'\\' {
                // escape2char
                ch = match self.at(self.ptr + 1) {
                    b'"' => b'"',
                    b'\\' => b'\\',
                    b'/' => b'/',
                    b'b' => 0x08,
                    b't' => b'\t',
                    b'n' => b'\n',
                    b'f' => 0x0c,
                    b'r' => b'\r',
                    b'u' => {
                        if self.append_unicode_escape(&mut out).is_some() {
                            continue;
                        }
                        self.set_token_error(token, "invalid unicode escape code");
                        return;
                    }
                    _ => {
                        self.set_token_error(token, "invalid escape code");
                        return;
                    }
                };
                self.ptr += 1; // skip '\'
            }
            out.push(ch);
            self.ptr += 1;
        }
        self.ptr += 1; // closing quote
        token.ty = TokenType::String;
        token.string = out;
    }

    /// json_is_invalid_number: forms strtod accepts but strict JSON does not
    /// (leading '+', hex, leading zeros, inf, nan).
    fn is_invalid_number(&self) -> bool {
        let mut p = self.ptr;
        if self.at(p) == b'+' {
            return true;
        }
        if self.at(p) == b'-' {
            p += 1;
        }
        if self.at(p) == b'0' {
            let ch2 = self.at(p + 1);
            return (ch2 | 0x20) == b'x' || ch2.is_ascii_digit();
        }
        // `*p <= '9'` on a signed char: bytes >= 0x80 count as "ordinary".
        if (self.at(p) as i8) <= b'9' as i8 {
            return false;
        }
        let rest = self.data.get(p..).unwrap_or(&[]);
        let ci = |w: &[u8]| rest.len() >= 3 && rest[..3].eq_ignore_ascii_case(w);
        ci(b"inf") || ci(b"nan")
    }

    /// json_next_number_token: strtod from ptr.
    fn next_number_token(&mut self, token: &mut Token) {
        let mut end: *mut c_char = std::ptr::null_mut();
        // SAFETY: cstr is the Lua string, NUL-terminated at data.len(), and
        // ptr never passes that terminator.
        let (n, consumed) = unsafe {
            let start = self.cstr.add(self.ptr);
            let n = libc::strtod(start, &mut end);
            (n, end.offset_from(start) as usize)
        };
        token.ty = TokenType::Number;
        token.number = n;
        if consumed == 0 {
            self.set_token_error(token, "invalid number");
        } else {
            self.ptr += consumed;
        }
    }

    /// json_next_token
    fn next_token(&mut self, token: &mut Token) {
        while matches!(self.at(self.ptr), b' ' | b'\t' | b'\n' | b'\r') {
            self.ptr += 1;
        }
        token.index = self.ptr;
        let ch = self.at(self.ptr);
        let single = match ch {
            b'{' => Some(TokenType::ObjBegin),
            b'}' => Some(TokenType::ObjEnd),
            b'[' => Some(TokenType::ArrBegin),
            b']' => Some(TokenType::ArrEnd),
            b',' => Some(TokenType::Comma),
            b':' => Some(TokenType::Colon),
            _ => None,
        };
        if let Some(ty) = single {
            token.ty = ty;
            self.ptr += 1;
            return;
        }
        if ch == 0 {
            token.ty = TokenType::End;
            return;
        }
        let unknown = matches!(
            ch,
            b'f' | b'i' | b'I' | b'n' | b'N' | b't' | b'"' | b'+' | b'-' | b'0'..=b'9'
        );
        if !unknown {
            self.set_token_error(token, "invalid token");
            return;
        }
        if ch == b'"' {
            self.next_string_token(token);
        } else if ch == b'-' || ch.is_ascii_digit() {
            if self.cfg.decode_invalid_numbers == 0 && self.is_invalid_number() {
                self.set_token_error(token, "invalid number");
                return;
            }
            self.next_number_token(token);
        } else if self.starts_with(b"true") {
            token.ty = TokenType::Boolean;
            token.boolean = true;
            self.ptr += 4;
        } else if self.starts_with(b"false") {
            token.ty = TokenType::Boolean;
            token.boolean = false;
            self.ptr += 5;
        } else if self.starts_with(b"null") {
            token.ty = TokenType::Null;
            self.ptr += 4;
        } else if self.cfg.decode_invalid_numbers != 0 && self.is_invalid_number() {
            // Only inf/nan/+ reach here: parse them as numbers.
            self.next_number_token(token);
        } else {
            self.set_token_error(token, "invalid token");
        }
    }
}

/// UTF-8 bytes of a code point that is not a Rust `char` (a lone surrogate
/// cannot reach here, but keep the C encoder's total behaviour).
fn encode_utf8_raw(cp: u32) -> Vec<u8> {
    if cp <= 0xFFFF {
        vec![
            (cp >> 12) as u8 | 0xE0,
            ((cp >> 6) & 0x3F) as u8 | 0x80,
            (cp & 0x3F) as u8 | 0x80,
        ]
    } else {
        vec![
            (cp >> 18) as u8 | 0xF0,
            ((cp >> 12) & 0x3F) as u8 | 0x80,
            ((cp >> 6) & 0x3F) as u8 | 0x80,
            (cp & 0x3F) as u8 | 0x80,
        ]
    }
}

/// json_throw_parse_error: "Expected <exp> but found <token> at character N".
fn parse_error<T>(exp: &str, token: &Token) -> Result<T, LibError> {
    let found = if token.ty == TokenType::Error {
        token.error
    } else {
        token.ty.name()
    };
    msg_err(format!(
        "Expected {exp} but found {found} at character {}",
        token.index + 1
    ))
}

/// json_decode_descend
unsafe fn decode_descend(
    l: *mut lua_State,
    json: &mut Parser,
    slots: c_int,
) -> Result<(), LibError> {
    json.current_depth += 1;
    if json.current_depth <= json.cfg.decode_max_depth && ffi::lua_checkstack(l, slots) != 0 {
        return Ok(());
    }
    msg_err(format!(
        "Found too many nested data structures ({}) at character {}",
        json.current_depth, json.ptr
    ))
}

/// json_parse_object_context: after '{'.
unsafe fn parse_object(l: *mut lua_State, json: &mut Parser) -> Result<(), LibError> {
    decode_descend(l, json, 3)?;
    ffi::lua_newtable(l);
    let mut token = Token::new();
    json.next_token(&mut token);
    if token.ty == TokenType::ObjEnd {
        json.current_depth -= 1;
        return Ok(());
    }
    loop {
        if token.ty != TokenType::String {
            return parse_error("object key string", &token);
        }
        push_bytes(l, &token.string);
        json.next_token(&mut token);
        if token.ty != TokenType::Colon {
            return parse_error("colon", &token);
        }
        json.next_token(&mut token);
        process_value(l, json, &token)?;
        ffi::lua_rawset(l, -3);
        json.next_token(&mut token);
        if token.ty == TokenType::ObjEnd {
            json.current_depth -= 1;
            return Ok(());
        }
        if token.ty != TokenType::Comma {
            return parse_error("comma or object end", &token);
        }
        json.next_token(&mut token);
    }
}

/// json_parse_array_context: after '['.
unsafe fn parse_array(l: *mut lua_State, json: &mut Parser) -> Result<(), LibError> {
    decode_descend(l, json, 2)?;
    ffi::lua_newtable(l);
    let mut token = Token::new();
    json.next_token(&mut token);
    if token.ty == TokenType::ArrEnd {
        json.current_depth -= 1;
        return Ok(());
    }
    let mut i: c_int = 1;
    loop {
        process_value(l, json, &token)?;
        ffi::lua_rawseti_(l, -2, i);
        i = i.wrapping_add(1);
        json.next_token(&mut token);
        if token.ty == TokenType::ArrEnd {
            json.current_depth -= 1;
            return Ok(());
        }
        if token.ty != TokenType::Comma {
            return parse_error("comma or array end", &token);
        }
        json.next_token(&mut token);
    }
}

/// json_process_value: push the value that starts with `token`.
unsafe fn process_value(
    l: *mut lua_State,
    json: &mut Parser,
    token: &Token,
) -> Result<(), LibError> {
    match token.ty {
        TokenType::String => push_bytes(l, &token.string),
        TokenType::Number => ffi::lua_pushnumber(l, token.number),
        TokenType::Boolean => ffi::lua_pushboolean(l, token.boolean as c_int),
        TokenType::ObjBegin => parse_object(l, json)?,
        TokenType::ArrBegin => parse_array(l, json)?,
        // Lua tables cannot hold nil: JSON null is a NULL light userdata.
        TokenType::Null => ffi::lua_pushlightuserdata(l, std::ptr::null_mut()),
        _ => return parse_error("value", token),
    }
    Ok(())
}

/// cjson.decode(json_text)
// redis: deps/lua/src/lua_cjson.c json_decode
unsafe fn json_decode_impl(l: *mut lua_State) -> LibResult {
    if ffi::lua_gettop(l) != 1 {
        return arg_err(1, "expected 1 argument");
    }
    let cfg = *fetch_config(l)?;
    let data = check_lstring(l, 1)?;
    // Only the first two bytes are checked: JSON starts with ASCII, so a
    // NUL there means UTF-16/32 (RFC 4627 section 3).
    if data.len() >= 2 && (data[0] == 0 || data[1] == 0) {
        return msg_err("JSON parser does not support UTF-16 or UTF-32");
    }
    let mut json = Parser {
        data,
        cstr: data.as_ptr() as *const c_char,
        ptr: 0,
        cfg,
        current_depth: 0,
    };
    let mut token = Token::new();
    json.next_token(&mut token);
    process_value(l, &mut json, &token)?;
    json.next_token(&mut token);
    if token.ty != TokenType::End {
        return parse_error("the end", &token);
    }
    Ok(1)
}

// ---------------------------------------------------------------------------
// Module table
// ---------------------------------------------------------------------------

lua_cfunction!(json_encode, json_encode_impl);
lua_cfunction!(json_decode, json_decode_impl);
lua_cfunction!(json_cfg_encode_sparse_array, cfg_encode_sparse_array);
lua_cfunction!(json_cfg_encode_max_depth, cfg_encode_max_depth);
lua_cfunction!(json_cfg_decode_max_depth, cfg_decode_max_depth);
lua_cfunction!(
    json_cfg_encode_number_precision,
    cfg_encode_number_precision
);
lua_cfunction!(json_cfg_encode_keep_buffer, cfg_encode_keep_buffer);
lua_cfunction!(json_cfg_encode_invalid_numbers, cfg_encode_invalid_numbers);
lua_cfunction!(json_cfg_decode_invalid_numbers, cfg_decode_invalid_numbers);

/// cjson.new(): a fresh module table with its own configuration.
unsafe extern "C-unwind" fn lua_cjson_new(l: *mut lua_State) -> c_int {
    let funcs: [(&CStr, ffi::lua_CFunction); 10] = [
        (c"encode", json_encode),
        (c"decode", json_decode),
        (c"encode_sparse_array", json_cfg_encode_sparse_array),
        (c"encode_max_depth", json_cfg_encode_max_depth),
        (c"decode_max_depth", json_cfg_decode_max_depth),
        (c"encode_number_precision", json_cfg_encode_number_precision),
        (c"encode_keep_buffer", json_cfg_encode_keep_buffer),
        (c"encode_invalid_numbers", json_cfg_encode_invalid_numbers),
        (c"decode_invalid_numbers", json_cfg_decode_invalid_numbers),
        (c"new", lua_cjson_new),
    ];
    ffi::lua_newtable(l);
    // json_create_config: plain integers, so no __gc is needed.
    let cfg = ffi::lua_newuserdata(l, std::mem::size_of::<JsonConfig>()) as *mut JsonConfig;
    cfg.write(JsonConfig {
        encode_sparse_convert: DEFAULT_SPARSE_CONVERT,
        encode_sparse_ratio: DEFAULT_SPARSE_RATIO,
        encode_sparse_safe: DEFAULT_SPARSE_SAFE,
        encode_max_depth: DEFAULT_ENCODE_MAX_DEPTH,
        encode_invalid_numbers: DEFAULT_ENCODE_INVALID_NUMBERS,
        encode_number_precision: DEFAULT_ENCODE_NUMBER_PRECISION,
        encode_keep_buffer: DEFAULT_ENCODE_KEEP_BUFFER,
        decode_invalid_numbers: DEFAULT_DECODE_INVALID_NUMBERS,
        decode_max_depth: DEFAULT_DECODE_MAX_DEPTH,
    });
    set_funcs(l, &funcs, 1);
    ffi::lua_pushlightuserdata(l, std::ptr::null_mut());
    ffi::lua_setfield(l, -2, c"null".as_ptr());
    ffi::lua_pushstring_(l, c"cjson".as_ptr());
    ffi::lua_setfield(l, -2, c"_NAME".as_ptr());
    ffi::lua_pushstring_(l, c"2.1.0".as_ptr());
    ffi::lua_setfield(l, -2, c"_VERSION".as_ptr());
    1
}

/// luaopen_cjson: pushes the module table.
pub(crate) unsafe fn luaopen_cjson(l: *mut lua_State) {
    lua_cjson_new(l);
}

#[cfg(test)]
mod tests {
    //! Expected outputs recorded from redis-server 7.0.15 with
    //! `redis-cli EVAL "<chunk>" 0` (errors there carry the same
    //! `user_script:1: ` prefix these tests see).
    use super::super::test_util::{run, run_bytes};

    #[test]
    fn cjson_encode_numbers_use_percent_14g() {
        // EVAL "return cjson.encode({1.5, -3, 1e100, 2^63, -2^63, 255, 0.1+0.2})" 0
        assert_eq!(
            run("return cjson.encode({1.5, -3, 1e100, 2^63, -2^63, 255, 0.1+0.2})"),
            "[1.5,-3,1e+100,9.2233720368548e+18,-9.2233720368548e+18,255,0.3]"
        );
        assert_eq!(run("return cjson.encode(1/3)"), "0.33333333333333");
        assert_eq!(run("return cjson.encode(2^53)"), "9.007199254741e+15");
        assert_eq!(run("return cjson.encode(-0.0)"), "-0");
        assert_eq!(run("return cjson.encode(1e-5)"), "1e-05");
        assert_eq!(
            run("return cjson.encode(123456789012345)"),
            "1.2345678901234e+14"
        );
        assert_eq!(run("return cjson.encode(5e-324)"), "4.9406564584125e-324");
    }

    #[test]
    fn cjson_encode_escapes_strings() {
        // EVAL "return cjson.encode(\"a/b\\\"c\\\\d\\n\\r\\t\\b\\f\\0\\1\\31\\127\\128\\255é\")" 0
        assert_eq!(
            run_bytes(r#"return cjson.encode("a/b\"c\\d\n\r\t\b\f\0\1\31\127\128\255é")"#),
            b"\"a\\/b\\\"c\\\\d\\n\\r\\t\\b\\f\\u0000\\u0001\\u001f\\u007f\x80\xff\xc3\xa9\""
                .to_vec()
        );
    }

    #[test]
    fn cjson_encode_tables_arrays_and_objects() {
        assert_eq!(run("return cjson.encode({1,2,3})"), "[1,2,3]");
        assert_eq!(run("return cjson.encode({})"), "{}");
        assert_eq!(
            run("return cjson.encode({[1]=1,[2]=2,[4]=4})"),
            "[1,2,null,4]"
        );
        assert_eq!(
            run("return cjson.encode({[10]=1})"),
            "[null,null,null,null,null,null,null,null,null,1]"
        );
        assert_eq!(run("return cjson.encode({[1.5]=1})"), "{\"1.5\":1}");
        assert_eq!(run("return cjson.encode({[0]=1})"), "{\"0\":1}");
        assert_eq!(run("return cjson.encode({[2^31]=1})"), "{\"2147483648\":1}");
        assert_eq!(run("return cjson.encode({[2^32+1]=1, [1]=2})"), "[2]");
        assert_eq!(
            run("return cjson.encode({cjson.null, false, true})"),
            "[null,false,true]"
        );
        assert_eq!(run("return cjson.encode(nil)"), "null");
        assert_eq!(
            run("return cjson.encode({a={b={c={}}}})"),
            "{\"a\":{\"b\":{\"c\":{}}}}"
        );
    }

    #[test]
    fn cjson_encode_errors() {
        assert_eq!(
            run("return cjson.encode({[1]=1,[20]=2})"),
            "ERR: user_script:1: Cannot serialise table: excessively sparse array"
        );
        assert_eq!(
            run("return cjson.encode(0/0)"),
            "ERR: user_script:1: Cannot serialise number: must not be NaN or Inf"
        );
        assert_eq!(
            run("return cjson.encode({a=cjson.encode})"),
            "ERR: user_script:1: Cannot serialise function: type not supported"
        );
        assert_eq!(
            run("return cjson.encode({[true]=1})"),
            "ERR: user_script:1: Cannot serialise boolean: table key must be a number or string"
        );
        assert_eq!(
            run("return cjson.encode()"),
            "ERR: user_script:1: bad argument #1 to 'encode' (expected 1 argument)"
        );
        assert_eq!(
            run("local t={} t[1]=t return cjson.encode(t)"),
            "ERR: user_script:1: Cannot serialise, excessive nesting (1001)"
        );
        assert_eq!(
            run("local e = cjson.encode return e()"),
            "ERR: user_script:1: bad argument #1 to 'e' (expected 1 argument)"
        );
    }

    #[test]
    fn cjson_decode_values() {
        assert_eq!(
            run(r#"return cjson.encode(cjson.decode('{"a":[1,{"b":null}],"c":"d"}'))"#),
            r#"{"a":[1,{"b":null}],"c":"d"}"#
        );
        assert_eq!(
            run("return cjson.encode(cjson.decode('[0x1F, 1e2, -0, 0.5, 1E+2, 1.5e-3]'))"),
            "[31,100,-0,0.5,100,0.0015]"
        );
        assert_eq!(run("return tostring(cjson.decode('-Infinity'))"), "-inf");
        assert_eq!(run("return tostring(cjson.decode('0x1p3'))"), "8");
        assert_eq!(
            run("return tostring(cjson.decode('null') == cjson.null)"),
            "true"
        );
        assert_eq!(
            run("return cjson.encode(cjson.decode('[1]\\0garbage'))"),
            "[1]"
        );
        assert_eq!(
            run_bytes(
                r#"return cjson.decode('"\\u00e9\\u4e2d\\ud83d\\ude00\\u0000x\\/\\b\\f\\n\\r\\t\\"\\\\"')"#
            ),
            b"\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80\x00x/\x08\x0c\n\r\t\"\\".to_vec()
        );
    }

    #[test]
    fn cjson_decode_errors() {
        let cases = [
            ("''", "Expected value but found T_END at character 1"),
            (
                "'x'",
                "Expected value but found invalid token at character 1",
            ),
            (
                "'-'",
                "Expected value but found invalid number at character 1",
            ),
            (
                "'1e'",
                "Expected the end but found invalid token at character 2",
            ),
            (
                "'12 13'",
                "Expected the end but found T_NUMBER at character 4",
            ),
            (
                "'[1,2'",
                "Expected comma or array end but found T_END at character 5",
            ),
            (
                "'{\"a\" 1}'",
                "Expected colon but found T_NUMBER at character 6",
            ),
            (
                "'{1:2}'",
                "Expected object key string but found T_NUMBER at character 2",
            ),
            (
                "'\"abc'",
                "Expected value but found unexpected end of string at character 5",
            ),
            (
                "'\"a\\\\qb\"'",
                "Expected value but found invalid escape code at character 3",
            ),
            (
                "'\"\\\\ud800\"'",
                "Expected value but found invalid unicode escape code at character 2",
            ),
            ("'1\\0'", "JSON parser does not support UTF-16 or UTF-32"),
            ("'  \\0'", "Expected value but found T_END at character 3"),
            (
                "'falsey'",
                "Expected the end but found invalid token at character 6",
            ),
            (
                "string.rep('[',1001)..string.rep(']',1001)",
                "Found too many nested data structures (1001) at character 1001",
            ),
        ];
        for (arg, msg) in cases {
            assert_eq!(
                run(&format!("return cjson.decode({arg})")),
                format!("ERR: user_script:1: {msg}"),
                "{arg}"
            );
        }
        assert_eq!(
            run("return cjson.decode({})"),
            "ERR: user_script:1: bad argument #1 to 'decode' (string expected, got table)"
        );
    }

    #[test]
    fn cjson_config_functions() {
        assert_eq!(
            run("local c=cjson.new() return c.encode_max_depth()"),
            "1000"
        );
        assert_eq!(
            run("local c=cjson.new() return c.encode_max_depth(0)"),
            "ERR: user_script:1: bad argument #1 to 'encode_max_depth' (expected integer between 1 and 2147483647)"
        );
        assert_eq!(
            run("local c=cjson.new() return c.encode_max_depth(1,2)"),
            "ERR: user_script:1: bad argument #2 to 'encode_max_depth' (found too many arguments)"
        );
        assert_eq!(
            run("local c=cjson.new() return c.encode_max_depth(2^32+3)"),
            "3"
        );
        assert_eq!(
            run("local c=cjson.new() c.encode_number_precision(3) return c.encode({1/3, 1234.5, 100, 1e20, 0.00001234})"),
            "[0.333,1.23e+03,100,1e+20,1.23e-05]"
        );
        assert_eq!(
            run("local c=cjson.new() local a,b,d = c.encode_sparse_array(true, 3, 4) return tostring(a)..b..d..c.encode({[1]=1,[5]=5})"),
            "true34[1,null,null,null,5]"
        );
        assert_eq!(
            run("local c=cjson.new() return c.encode_sparse_array('yes')"),
            "ERR: user_script:1: bad argument #1 to 'encode_sparse_array' (invalid option 'yes')"
        );
        assert_eq!(
            run("local c=cjson.new() return c.encode_invalid_numbers('null')"),
            "null"
        );
        assert_eq!(
            run("local c=cjson.new() c.encode_invalid_numbers(true) return c.encode({1/0, -1/0, 0/0, -(0/0)})"),
            "[inf,-inf,nan,nan]"
        );
        assert_eq!(
            run("local c=cjson.new() c.decode_invalid_numbers(false) return c.decode('0x10')"),
            "ERR: user_script:1: Expected value but found invalid number at character 1"
        );
        assert_eq!(
            run("local c=cjson.new() c.decode_max_depth(2) return c.decode('[{\"a\":[1]}]')"),
            "ERR: user_script:1: Found too many nested data structures (3) at character 7"
        );
        assert_eq!(
            run("return cjson._NAME .. cjson._VERSION .. type(cjson.new().new)"),
            "cjson2.1.0function"
        );
    }
}
