//! `bit`: LuaBitOp 1.0.2, 32-bit bitwise operations on Lua numbers.
//!
//! Every argument is normalised with `barg`: the double is added to
//! 2^52 + 2^51, which puts its integer part, rounded to nearest-even and
//! wrapped modulo 2^32, in the low 32 bits of the mantissa. So
//! `bit.tobit(2^32 + 5) == 5`, `bit.tobit(1.5) == 2`, `bit.tobit(2.5) == 2`,
//! and NaN/Inf give 0. Results are signed 32-bit numbers.

use super::{lua_cfunction, set_funcs, type_error, LibError, LibResult};
use mlua::ffi::{self, lua_State};
use std::ffi::{c_int, CStr};

/// 2^52 + 2^51: adding it leaves the rounded integer in the low mantissa bits.
const BIT_NORMALISE: f64 = 6_755_399_441_055_744.0;

/// The number trick on its own.
fn tobit(n: f64) -> u32 {
    (n + BIT_NORMALISE).to_bits() as u32
}

/// barg: argument `idx` as 32 bits; "number expected" for non-numbers.
unsafe fn barg(l: *mut lua_State, idx: c_int) -> Result<u32, LibError> {
    let b = tobit(ffi::lua_tonumber(l, idx));
    if b == 0 && ffi::lua_isnumber(l, idx) == 0 {
        return type_error(l, idx, "number");
    }
    Ok(b)
}

/// BRET: results are pushed as signed 32-bit numbers.
unsafe fn bret(l: *mut lua_State, b: u32) -> LibResult {
    ffi::lua_pushnumber(l, b as i32 as f64);
    Ok(1)
}

/// bit.tobit(x)
unsafe fn bit_tobit_impl(l: *mut lua_State) -> LibResult {
    let b = barg(l, 1)?;
    bret(l, b)
}

/// bit.bnot(x)
unsafe fn bit_bnot_impl(l: *mut lua_State) -> LibResult {
    let b = barg(l, 1)?;
    bret(l, !b)
}

/// band/bor/bxor: arguments are read from the last one down to the
/// second, then the first, so the highest bad argument is the one reported.
unsafe fn fold_args(l: *mut lua_State, op: fn(u32, u32) -> u32) -> LibResult {
    let mut b = barg(l, 1)?;
    let mut i = ffi::lua_gettop(l);
    while i > 1 {
        b = op(b, barg(l, i)?);
        i -= 1;
    }
    bret(l, b)
}

/// bit.band(x1 [, x2...])
unsafe fn bit_band_impl(l: *mut lua_State) -> LibResult {
    fold_args(l, |a, b| a & b)
}

/// bit.bor(x1 [, x2...])
unsafe fn bit_bor_impl(l: *mut lua_State) -> LibResult {
    fold_args(l, |a, b| a | b)
}

/// bit.bxor(x1 [, x2...])
unsafe fn bit_bxor_impl(l: *mut lua_State) -> LibResult {
    fold_args(l, |a, b| a ^ b)
}

/// Shifts and rotates: `x`, then the count masked to 0..31.
unsafe fn shift_args(l: *mut lua_State) -> Result<(u32, u32), LibError> {
    let b = barg(l, 1)?;
    let n = barg(l, 2)? & 31;
    Ok((b, n))
}

/// bit.lshift(x, n)
unsafe fn bit_lshift_impl(l: *mut lua_State) -> LibResult {
    let (b, n) = shift_args(l)?;
    bret(l, b << n)
}

/// bit.rshift(x, n): logical shift.
unsafe fn bit_rshift_impl(l: *mut lua_State) -> LibResult {
    let (b, n) = shift_args(l)?;
    bret(l, b >> n)
}

/// bit.arshift(x, n): arithmetic shift.
unsafe fn bit_arshift_impl(l: *mut lua_State) -> LibResult {
    let (b, n) = shift_args(l)?;
    bret(l, ((b as i32) >> n) as u32)
}

/// bit.rol(x, n)
unsafe fn bit_rol_impl(l: *mut lua_State) -> LibResult {
    let (b, n) = shift_args(l)?;
    bret(l, b.rotate_left(n))
}

/// bit.ror(x, n)
unsafe fn bit_ror_impl(l: *mut lua_State) -> LibResult {
    let (b, n) = shift_args(l)?;
    bret(l, b.rotate_right(n))
}

/// bit.bswap(x)
unsafe fn bit_bswap_impl(l: *mut lua_State) -> LibResult {
    let b = barg(l, 1)?;
    bret(l, b.swap_bytes())
}

/// bit.tohex(x [, n]): n hex digits (default 8, at most 8); a negative n
/// means upper case.
unsafe fn bit_tohex_impl(l: *mut lua_State) -> LibResult {
    let mut b = barg(l, 1)?;
    let mut n: i32 = if ffi::lua_type(l, 2) == ffi::LUA_TNONE {
        8
    } else {
        barg(l, 2)? as i32
    };
    let mut digits: &[u8; 16] = b"0123456789abcdef";
    // -INT32_MIN overflows; Redis later fixed the C code the same way.
    if n == i32::MIN {
        n = i32::MIN + 1;
    }
    if n < 0 {
        n = -n;
        digits = b"0123456789ABCDEF";
    }
    let n = n.min(8) as usize;
    let mut buf = [0u8; 8];
    for i in (0..n).rev() {
        buf[i] = digits[(b & 15) as usize];
        b >>= 4;
    }
    super::push_bytes(l, &buf[..n]);
    Ok(1)
}

lua_cfunction!(bit_tobit, bit_tobit_impl);
lua_cfunction!(bit_bnot, bit_bnot_impl);
lua_cfunction!(bit_band, bit_band_impl);
lua_cfunction!(bit_bor, bit_bor_impl);
lua_cfunction!(bit_bxor, bit_bxor_impl);
lua_cfunction!(bit_lshift, bit_lshift_impl);
lua_cfunction!(bit_rshift, bit_rshift_impl);
lua_cfunction!(bit_arshift, bit_arshift_impl);
lua_cfunction!(bit_rol, bit_rol_impl);
lua_cfunction!(bit_ror, bit_ror_impl);
lua_cfunction!(bit_bswap, bit_bswap_impl);
lua_cfunction!(bit_tohex, bit_tohex_impl);

/// luaopen_bit: pushes the module table.
pub(crate) unsafe fn luaopen_bit(l: *mut lua_State) {
    let funcs: [(&CStr, ffi::lua_CFunction); 12] = [
        (c"tobit", bit_tobit),
        (c"bnot", bit_bnot),
        (c"band", bit_band),
        (c"bor", bit_bor),
        (c"bxor", bit_bxor),
        (c"lshift", bit_lshift),
        (c"rshift", bit_rshift),
        (c"arshift", bit_arshift),
        (c"rol", bit_rol),
        (c"ror", bit_ror),
        (c"bswap", bit_bswap),
        (c"tohex", bit_tohex),
    ];
    ffi::lua_newtable(l);
    set_funcs(l, &funcs, 0);
}

#[cfg(test)]
mod tests {
    //! Expected outputs recorded from redis-server 7.0.15 with
    //! `redis-cli EVAL "return table.concat({...}, ',')" 0`.
    use super::super::test_util::run;

    fn list(exprs: &str) -> String {
        run(&format!("local t = {{{exprs}}} for i = 1, #t do t[i] = tostring(t[i]) end return table.concat(t, ',')"))
    }

    #[test]
    fn bit_tobit_normalises_like_luabitop() {
        assert_eq!(
            list("bit.tobit(2^32+5), bit.tobit(2^31), bit.tobit(-1), bit.tobit(1.5), bit.tobit(2.5), bit.tobit(-1.5), bit.tobit(0xffffffff), bit.tobit(2^52), bit.tobit(1e300), bit.tobit(-2^31-1)"),
            "5,-2147483648,-1,2,2,-2,-1,0,-2013235812,2147483647"
        );
        assert_eq!(list("bit.tobit(0/0), bit.tobit(1/0), bit.tobit(-1/0), bit.tobit('10'), bit.tobit('0x10')"), "0,0,0,10,16");
        assert_eq!(list("bit.tobit(-0.5), bit.tobit(0.5), bit.tobit(3.5), bit.tobit(-2.5), bit.tobit(2^53), bit.tobit(2^53+2)"), "0,0,4,-2,0,1");
    }

    #[test]
    fn bit_operations() {
        assert_eq!(list("bit.bnot(0), bit.bnot(-1), bit.bnot(5)"), "-1,0,-6");
        assert_eq!(
            list("bit.band(0xff, 0x0f), bit.band(-1, 7, 3), bit.band(5), bit.bor(1,2,4,8), bit.bxor(5,3), bit.bxor(1,1,1)"),
            "15,3,5,15,6,1"
        );
        assert_eq!(
            list("bit.lshift(1, 31), bit.lshift(1, 32), bit.lshift(1, 33), bit.lshift(1, -1), bit.rshift(-1, 28), bit.rshift(-1, 0), bit.arshift(-256, 4), bit.arshift(256, 4), bit.arshift(-1, 31)"),
            "-2147483648,1,2,-2147483648,15,-1,-16,16,-1"
        );
        assert_eq!(
            list("bit.rol(0x12345678, 12), bit.ror(0x12345678, 12), bit.rol(1, 0), bit.ror(1, 32), bit.rol(-1, 5)"),
            "1164411171,1736516421,1,1,-1"
        );
        assert_eq!(
            list("bit.bswap(0x12345678), bit.bswap(1), bit.bswap(-1)"),
            "2018915346,16777216,-1"
        );
        assert_eq!(
            list("bit.tohex(255), bit.tohex(-1), bit.tohex(255, 2), bit.tohex(255, -2), bit.tohex(0x12345678, 4), bit.tohex(1, 10), bit.tohex(1, -10), bit.tohex(1, 0), bit.tohex(2^32+1)"),
            "000000ff,ffffffff,ff,FF,5678,00000001,00000001,,00000001"
        );
    }

    #[test]
    fn bit_argument_errors() {
        assert_eq!(
            run("return bit.tobit('x')"),
            "ERR: user_script:1: bad argument #1 to 'tobit' (number expected, got string)"
        );
        assert_eq!(
            run("return bit.band()"),
            "ERR: user_script:1: bad argument #1 to 'band' (number expected, got no value)"
        );
        assert_eq!(
            run("return bit.band(1, 'x', {})"),
            "ERR: user_script:1: bad argument #3 to 'band' (number expected, got table)"
        );
        assert_eq!(
            run("return bit.lshift(1)"),
            "ERR: user_script:1: bad argument #2 to 'lshift' (number expected, got no value)"
        );
        assert_eq!(
            run("return bit.tohex(1, nil)"),
            "ERR: user_script:1: bad argument #2 to 'tohex' (number expected, got nil)"
        );
    }
}
