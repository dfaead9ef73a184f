//! Three functions of Lua 5.1's base library as the Lua inside Redis 7.0.15
//! (Debian's build, with its security fixes) has them. Stock Lua 5.1.5, the
//! one mlua vendors, differs on input a script controls:
//!
//! * `unpack(t, i, e)` computes `e - i + 1` in a C `int`: with
//!   `unpack({}, -2, 2147483647)` the count overflows, the check after it is
//!   optimised away, and the interpreter writes past its stack (a crash of
//!   the whole server). Here the count is computed wide and checked first:
//!   "too many results to unpack", as Redis answers.
//! * `loadstring` / `load` accept precompiled bytecode (a chunk starting with
//!   ESC, `string.dump`'s output), and a crafted bytecode chunk can corrupt
//!   memory. Redis's Lua always parses chunks as source text, so bytecode is
//!   a syntax error: `[string "..."]:1: unexpected symbol near 'char(27)'`.
//!   The parser would stop at that first byte anyway, so the message is
//!   built here and the chunk never reaches the bytecode loader.

use mlua::ffi::{self, lua_State};
use std::ffi::{c_char, c_int};

use super::{
    check_integer, check_lstring, lua_cfunction, msg_err, opt_integer, push_bytes, to_bytes,
    type_error, LibResult,
};

/// LUA_SIGNATURE[0]: the first byte of every precompiled chunk.
const LUA_SIGNATURE_FIRST: u8 = 0x1b;

/// LUA_IDSIZE: the longest chunk name in a message (luaO_chunkid).
const LUA_IDSIZE: usize = 60;

/// luaB_unpack: `t[i], ..., t[e]` (defaults 1 and #t).
unsafe fn unpack_impl(l: *mut lua_State) -> LibResult {
    if ffi::lua_type(l, 1) != ffi::LUA_TTABLE {
        return type_error(l, 1, "table");
    }
    // luaL_optint / luaL_checkint: lua_Integer narrowed to a C int.
    let i = opt_integer(l, 2, 1)? as i32;
    let e = if ffi::lua_type(l, 3) <= ffi::LUA_TNIL {
        ffi::lua_objlen(l, 1) as i32
    } else {
        check_integer(l, 3)? as i32
    };
    if i > e {
        return Ok(0);
    }
    let n = i64::from(e) - i64::from(i) + 1;
    if n >= i64::from(i32::MAX) || ffi::lua_checkstack(l, n as c_int) == 0 {
        return msg_err("too many results to unpack");
    }
    for k in i..=e {
        ffi::lua_rawgeti(l, 1, k.into());
    }
    Ok(n as c_int)
}
lua_cfunction!(lua_unpack, unpack_impl);

/// luaB_loadstring: compile `s` as source text (never as bytecode).
unsafe fn loadstring_impl(l: *mut lua_State) -> LibResult {
    let chunk = check_lstring(l, 1)?;
    let name = if ffi::lua_type(l, 2) <= ffi::LUA_TNIL {
        chunk
    } else {
        check_lstring(l, 2)?
    };
    Ok(load_text_chunk(l, chunk, name))
}
lua_cfunction!(lua_loadstring, loadstring_impl);

/// luaB_load: the chunk comes in pieces from a reader function; it is
/// collected whole, then compiled like `loadstring`.
unsafe fn load_impl(l: *mut lua_State) -> LibResult {
    let name: Vec<u8> = if ffi::lua_type(l, 2) <= ffi::LUA_TNIL {
        b"=(load)".to_vec()
    } else {
        check_lstring(l, 2)?.to_vec()
    };
    if ffi::lua_type(l, 1) != ffi::LUA_TFUNCTION {
        return type_error(l, 1, "function");
    }
    let mut chunk = Vec::new();
    loop {
        ffi::lua_pushvalue(l, 1);
        if ffi::lua_pcall(l, 0, 1, 0) != 0 {
            // An error in the reader: load returns nil and the message.
            ffi::lua_pushnil(l);
            ffi::lua_insert(l, -2);
            return Ok(2);
        }
        if ffi::lua_type(l, -1) == ffi::LUA_TNIL {
            ffi::lua_pop(l, 1);
            break;
        }
        match to_bytes(l, -1) {
            Some(piece) if ffi::lua_type(l, -1) == ffi::LUA_TSTRING || !piece.is_empty() => {
                chunk.extend_from_slice(piece);
                let empty = piece.is_empty();
                ffi::lua_pop(l, 1);
                if empty {
                    break;
                }
            }
            _ => {
                ffi::lua_pop(l, 1);
                ffi::lua_pushnil(l);
                push_bytes(l, b"reader function must return a string");
                return Ok(2);
            }
        }
    }
    push_bytes(l, &chunk);
    let chunk = to_bytes(l, -1).unwrap_or(&[]);
    push_bytes(l, &name);
    let name = to_bytes(l, -1).unwrap_or(&[]);
    Ok(load_text_chunk(l, chunk, name))
}
lua_cfunction!(lua_load, load_impl);

/// load_aux over a chunk parsed as text: the function, or nil and the
/// message. `chunk` and `name` must stay on the Lua stack meanwhile.
unsafe fn load_text_chunk(l: *mut lua_State, chunk: &[u8], name: &[u8]) -> c_int {
    if chunk.first() == Some(&LUA_SIGNATURE_FIRST) {
        let mut msg = chunk_id(name);
        msg.extend_from_slice(b":1: unexpected symbol near 'char(27)'");
        ffi::lua_pushnil(l);
        push_bytes(l, &msg);
        return 2;
    }
    // Lua strings end with a NUL, so `name` is a valid C string here.
    let status = ffi::luaL_loadbuffer(
        l,
        chunk.as_ptr() as *const c_char,
        chunk.len(),
        name.as_ptr() as *const c_char,
    );
    if status == 0 {
        return 1;
    }
    ffi::lua_pushnil(l);
    ffi::lua_insert(l, -2);
    2
}

/// luaO_chunkid: how a chunk name appears in messages (`=name` as is,
/// `@file`, or `[string "first line..."]`), read as a C string.
fn chunk_id(name: &[u8]) -> Vec<u8> {
    let name = name.split(|&b| b == 0).next().unwrap_or(&[]);
    let room = LUA_IDSIZE - 1;
    if let Some(rest) = name.strip_prefix(b"=") {
        return rest[..rest.len().min(room)].to_vec();
    }
    if let Some(rest) = name.strip_prefix(b"@") {
        if rest.len() + 1 > room {
            let mut out = b"...".to_vec();
            out.extend_from_slice(&rest[rest.len() + 3 - room..]);
            return out;
        }
        return rest.to_vec();
    }
    // [string "..."]: up to the first line end, cut to fit.
    let budget = LUA_IDSIZE - " [string \"...\"] ".len();
    let line_end = name
        .iter()
        .position(|&b| b == b'\n' || b == b'\r')
        .unwrap_or(name.len());
    let len = line_end.min(budget);
    let mut out = b"[string \"".to_vec();
    out.extend_from_slice(&name[..len]);
    if len < name.len() {
        out.extend_from_slice(b"...");
    }
    out.extend_from_slice(b"\"]");
    out
}

/// Replace `unpack`, `loadstring` and `load` in the globals of `lua`.
pub fn patch_base_lib(lua: &mlua::Lua) -> mlua::Result<()> {
    // SAFETY: the closure only pushes C functions and sets globals.
    unsafe {
        lua.exec_raw::<()>((), |l| {
            ffi::lua_pushcfunction(l, lua_unpack);
            ffi::lua_setglobal(l, c"unpack".as_ptr());
            ffi::lua_pushcfunction(l, lua_loadstring);
            ffi::lua_setglobal(l, c"loadstring".as_ptr());
            ffi::lua_pushcfunction(l, lua_load);
            ffi::lua_setglobal(l, c"load".as_ptr());
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(code: &str) -> String {
        let lua = mlua::Lua::new();
        patch_base_lib(&lua).unwrap();
        match lua.load(code).eval::<mlua::Value>() {
            Ok(v) => format!("{v:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn unpack_overflow_is_an_error_not_a_crash() {
        // Probe: EVAL "return {unpack({1,2,3}, -2, 2147483647)}" 0 on
        // redis-server 7.0.15: "too many results to unpack".
        for args in [
            "-2, 2147483647",
            "0, 2147483647",
            "-2147483648, 2147483647",
            "1, 100000",
        ] {
            let out = run(&format!("return unpack({{1,2,3}}, {args})"));
            assert!(out.contains("too many results to unpack"), "{args}: {out}");
        }
        assert_eq!(
            run("return select('#', unpack({1,2,3}, 2, 3))"),
            "Integer(2)"
        );
        assert_eq!(run("return select('#', unpack({1,2,3}))"), "Integer(3)");
        assert_eq!(
            run("return select('#', unpack({1,2,3}, 3, 1))"),
            "Integer(0)"
        );
    }

    #[test]
    fn bytecode_is_parsed_as_text() {
        // Probe: loadstring(string.dump(...)) on redis-server 7.0.15 gives
        // nil, '[string "\27LuaQ"]:1: unexpected symbol near 'char(27)''.
        let out = run("local f, e = loadstring(string.dump(function() return 1 end)); return e");
        assert!(
            out.contains("\\u{1b}LuaQ\\\"]:1: unexpected symbol near 'char(27)'"),
            "{out}"
        );
        assert_eq!(run("return loadstring('return 5')()"), "Integer(5)");
        let parts = "local t = {'return ', '7'} local i = 0 \
                     return load(function() i = i + 1 return t[i] end)()";
        assert_eq!(run(parts), "Integer(7)");
    }

    #[test]
    fn chunk_ids_follow_lua() {
        assert_eq!(chunk_id(b"=(load)"), b"(load)");
        assert_eq!(chunk_id(b"return 1"), b"[string \"return 1\"]");
        assert_eq!(chunk_id(b"a\nb"), b"[string \"a...\"]");
    }
}
