//! The bit commands (Redis's bitops.c): SETBIT, GETBIT, BITCOUNT, BITPOS,
//! BITOP, BITFIELD and BITFIELD_RO.
//!
//! A bitmap is an ordinary string: these commands read any string (an `int`
//! is read as its decimal text) and the writers leave it `raw`, grown with
//! zero bytes to reach the highest bit they touch (lookupStringForBitCommand:
//! never past proto-max-bulk-len, because every offset is checked against it
//! first). The byte work is in `storage::bitops`.
//!
//! The dirty rules are Redis's, and they are the interesting part to step
//! through: a write counts (signalModifiedKey, a keyspace event, server.dirty)
//! only when something really changed. SETBIT of a bit to the value it has
//! changes nothing; BITFIELD counts one change per operation that wrote a
//! different value (or grew the string); BITOP always rewrites its target.

use std::borrow::Cow;

use bytes::Bytes;
use storage::bitops::{
    bitop, bitpos_range, check_signed_bitfield_overflow, check_unsigned_bitfield_overflow,
    get_bitfield_padded, get_signed_bitfield, get_unsigned_bitfield, set_signed_bitfield,
    set_unsigned_bitfield, BitOp, BitRange, Overflow,
};
use storage::object::{StrValue, Value};
use storage::t_string::create_zeroed_raw;
use storage::util::string2ll;

use crate::commands::KeyReference;
use crate::db;
use crate::networking::Client;
use crate::notify::{notify_keyspace_event, NOTIFY_GENERIC, NOTIFY_STRING};
use crate::server::Server;
use crate::shared;
const ERR_BIT_OFFSET: &str = "ERR bit offset is not an integer or out of range";
const ERR_BIT_VALUE: &str = "ERR bit is not an integer or out of range";
const ERR_BITFIELD_TYPE: &str =
    "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.";

// ---- argument parsing ----

/// The C-string view of an argument: Redis compares option names with
/// strcasecmp, which stops at the first NUL byte.
fn c_str(arg: &[u8]) -> &[u8] {
    match arg.iter().position(|&b| b == 0) {
        Some(n) => &arg[..n],
        None => arg,
    }
}

fn is(arg: &[u8], name: &str) -> bool {
    c_str(arg).eq_ignore_ascii_case(name.as_bytes())
}

/// getLongLongFromObjectOrReply with the default error text.
fn parse_i64_or_reply(c: &mut Client, arg: &[u8]) -> Option<i64> {
    let v = string2ll(arg);
    if v.is_none() {
        c.add_reply_error(shared::NOT_INTEGER_ERR);
    }
    v
}

/// getBitOffsetFromArgument: a bit offset >= 0 whose byte lies below
/// proto-max-bulk-len, so no bit command can grow a string past it. With
/// `hash` (BITFIELD), `#N` means N times the field width; the product
/// wraps as C's does and is then checked like any offset.
fn get_bit_offset(arg: &[u8], hash: Option<u32>, max: i64) -> Result<u64, &'static str> {
    let usehash = hash.is_some() && arg.first() == Some(&b'#');
    let digits = if usehash { &arg[1..] } else { arg };
    let mut offset = string2ll(digits).ok_or(ERR_BIT_OFFSET)?;
    if let (true, Some(bits)) = (usehash, hash) {
        offset = offset.wrapping_mul(bits as i64);
    }
    if offset < 0 || (offset >> 3) >= max {
        return Err(ERR_BIT_OFFSET);
    }
    Ok(offset as u64)
}

/// `get_bit_offset`, replying the error.
fn get_bit_offset_or_reply(c: &mut Client, arg: &[u8], max: i64) -> Option<u64> {
    get_bit_offset(arg, None, max)
        .map_err(|e| c.add_reply_error(e))
        .ok()
}

/// getBitfieldTypeFromArgument: `i1`..`i64` or `u1`..`u63` (a u64 could
/// not be replied as a RESP integer). Returns (signed, bits).
fn get_bitfield_type(arg: &[u8]) -> Result<(bool, u32), &'static str> {
    let signed = match arg.first() {
        Some(b'i') => true,
        Some(b'u') => false,
        _ => return Err(ERR_BITFIELD_TYPE),
    };
    match string2ll(c_str(&arg[1..])) {
        Some(bits) if bits >= 1 && bits <= if signed { 64 } else { 63 } => {
            Ok((signed, bits as u32))
        }
        _ => Err(ERR_BITFIELD_TYPE),
    }
}

/// The optional `start end [BYTE|BIT]` of BITCOUNT, or `start [end
/// [BYTE|BIT]]` of BITPOS, from argument `first` on. Err after replying.
fn parse_bit_range(c: &mut Client, first: usize, end_optional: bool) -> Result<BitRange, ()> {
    let start_arg = c.argv[first].clone();
    let start = parse_i64_or_reply(c, &start_arg).ok_or(())?;
    // The unit is checked before the end is parsed, as Redis does.
    let isbit = match c.argv.get(first + 2).map(|u| c_str(u).to_ascii_uppercase()) {
        None => false,
        Some(u) if u == b"BYTE" => false,
        Some(u) if u == b"BIT" => true,
        Some(_) => {
            c.add_reply_syntax_error();
            return Err(());
        }
    };
    let end = match c.argv.get(first + 1).cloned() {
        Some(arg) => Some(parse_i64_or_reply(c, &arg).ok_or(())?),
        None if end_optional => None,
        None => unreachable!("BITCOUNT always has an end"),
    };
    Ok(BitRange { start, end, isbit })
}

// ---- string lookups ----

use crate::t_string::str_or_wrongtype;

/// lookupStringForBitCommand: run `f` on the string at argv[1], made `raw`
/// and grown with zero bytes so that bit `maxbit` exists; a missing key is
/// created (dbAdd after `f` has filled it in). `f` also gets whether the
/// string is new or grew: that alone is a change, whatever bits it writes.
/// Err after a WRONGTYPE reply. One key lookup either way.
fn with_string_for_bit_command<R>(
    srv: &mut Server,
    c: &mut Client,
    maxbit: u64,
    f: impl FnOnce(&mut Client, &mut Vec<u8>, bool) -> R,
) -> Result<R, ()> {
    let (key, dbid) = (c.argv[1].clone(), c.db);
    // The caller bounded maxbit by proto-max-bulk-len (plus a field width).
    let byte = (maxbit >> 3) as usize;
    if let Some(o) = db::lookup_key_write(srv, dbid, &key) {
        let buf = str_or_wrongtype(c, o).ok_or(())?.make_raw();
        let grew = buf.len() < byte + 1;
        if grew {
            buf.resize(byte + 1, 0);
        }
        return Ok(f(c, buf, grew));
    }
    let mut v = create_zeroed_raw(byte + 1);
    let r = f(c, v.make_raw(), true);
    let obj = db::new_object(srv, Value::Str(v));
    db::db_add(srv, dbid, &key, obj);
    Ok(r)
}

// ---- SETBIT / GETBIT / BITCOUNT ----

/// SETBIT key offset value
// redis: bitops.c setbitCommand
pub fn setbit_command(srv: &mut Server, c: &mut Client) {
    let (key, off_arg, on_arg, dbid) = (
        c.argv[1].clone(),
        c.argv[2].clone(),
        c.argv[3].clone(),
        c.db,
    );
    let max = srv.config.proto_max_bulk_len;
    let Some(bitoffset) = get_bit_offset_or_reply(c, &off_arg, max) else {
        return;
    };
    let on = match string2ll(&on_arg) {
        Some(0) => false,
        Some(1) => true,
        _ => return c.add_reply_error(ERR_BIT_VALUE),
    };
    let byte = (bitoffset >> 3) as usize;
    let mask = 1u8 << (7 - (bitoffset & 7));
    let set = |_: &mut Client, buf: &mut Vec<u8>, grew: bool| {
        let old = buf[byte] & mask != 0;
        // Only a real change counts: a new or longer string, or a flipped bit.
        let changed = grew || old != on;
        if changed {
            buf[byte] = if on {
                buf[byte] | mask
            } else {
                buf[byte] & !mask
            };
        }
        (old, changed)
    };
    let Ok((old, changed)) = with_string_for_bit_command(srv, c, bitoffset, set) else {
        return;
    };
    if changed {
        db::signal_modified_key(srv, dbid, &key);
        notify_keyspace_event(srv, NOTIFY_STRING, "setbit", &key, dbid);
        srv.dirty += 1;
    }
    c.add_reply_integer(old as i64);
}

/// GETBIT key offset
// redis: bitops.c getbitCommand
pub fn getbit_command(srv: &mut Server, c: &mut Client) {
    let (key, off_arg) = (c.argv[1].clone(), c.argv[2].clone());
    let max = srv.config.proto_max_bulk_len;
    let Some(bitoffset) = get_bit_offset_or_reply(c, &off_arg, max) else {
        return;
    };
    match db::lookup_key_read(srv, c.db, &key) {
        None => c.add_reply_integer(0),
        Some(o) => {
            let Some(s) = str_or_wrongtype(c, o) else {
                return;
            };
            c.add_reply_integer(s.getbit(bitoffset) as i64);
        }
    }
}

/// BITCOUNT key [start end [BYTE | BIT]]
// redis: bitops.c bitcountCommand
pub fn bitcount_command(srv: &mut Server, c: &mut Client) {
    let key = c.argv[1].clone();
    // Redis 7.0 looks the key up first: a missing key answers 0 whatever
    // the other arguments are.
    let Some(o) = db::lookup_key_read(srv, c.db, &key) else {
        return c.add_reply_integer(0);
    };
    let Some(s) = str_or_wrongtype(c, o) else {
        return;
    };
    let range = match c.argc() {
        2 => None,
        4 | 5 => {
            let (start_arg, end_arg) = (c.argv[2].clone(), c.argv[3].clone());
            let Some(start) = parse_i64_or_reply(c, &start_arg) else {
                return;
            };
            let Some(end) = parse_i64_or_reply(c, &end_arg) else {
                return;
            };
            // Checked before BYTE|BIT is even read.
            if start < 0 && end < 0 && start > end {
                return c.add_reply_integer(0);
            }
            let isbit = match c.argv.get(4) {
                None => false,
                Some(u) if is(u, "byte") => false,
                Some(u) if is(u, "bit") => true,
                Some(_) => return c.add_reply_syntax_error(),
            };
            Some((start, end, isbit))
        }
        _ => return c.add_reply_syntax_error(),
    };
    c.add_reply_integer(s.bitcount(range));
}

// ---- BITPOS ----

/// BITPOS key bit [start [end [BYTE | BIT]]]
// redis: bitops.c bitposCommand
pub fn bitpos_command(srv: &mut Server, c: &mut Client) {
    let (key, bit_arg) = (c.argv[1].clone(), c.argv[2].clone());
    let bit = match parse_i64_or_reply(c, &bit_arg) {
        None => return,
        Some(0) => false,
        Some(1) => true,
        Some(_) => return c.add_reply_error("ERR The bit argument must be 1 or 0."),
    };
    // A missing key is an endless run of zeros: the range is not even
    // parsed.
    let Some(o) = db::lookup_key_read(srv, c.db, &key) else {
        return c.add_reply_integer(if bit { -1 } else { 0 });
    };
    let Some(s) = str_or_wrongtype(c, o) else {
        return;
    };
    let range = match c.argc() {
        3 => None,
        4..=6 => match parse_bit_range(c, 3, true) {
            Ok(r) => Some(r),
            Err(()) => return,
        },
        _ => return c.add_reply_syntax_error(),
    };
    c.add_reply_integer(bitpos_range(&s.as_bytes(), bit, range));
}

// ---- BITOP ----

/// BITOP <AND | OR | XOR | NOT> destkey key [key ...]
// redis: bitops.c bitopCommand
pub fn bitop_command(srv: &mut Server, c: &mut Client) {
    let (target, dbid) = (c.argv[2].clone(), c.db);
    let op = match &c.argv[1] {
        a if is(a, "and") => BitOp::And,
        a if is(a, "or") => BitOp::Or,
        a if is(a, "xor") => BitOp::Xor,
        a if is(a, "not") => BitOp::Not,
        _ => return c.add_reply_syntax_error(),
    };
    if op == BitOp::Not && c.argc() != 4 {
        return c.add_reply_error("ERR BITOP NOT must be called with a single source key.");
    }
    // First every lookup, in order (expiry, stats, WRONGTYPE)...
    let keys: Vec<Bytes> = c.argv[3..].to_vec();
    for k in &keys {
        if let Some(o) = db::lookup_key_read(srv, dbid, k) {
            if str_or_wrongtype(c, o).is_none() {
                return;
            }
        }
    }
    // ...then the sources, borrowed side by side (an `int` as its text).
    let res = {
        let dict = &srv.dbs[dbid].dict;
        let srcs: Vec<Cow<'_, [u8]>> = keys
            .iter()
            .map(|k| match dict.get(k).and_then(|o| o.as_str()) {
                Some(s) => s.as_bytes(),
                None => Cow::Borrowed(&[][..]),
            })
            .collect();
        let views: Vec<&[u8]> = srcs.iter().map(|s| &s[..]).collect();
        bitop(op, &views)
    };
    let maxlen = res.len();
    if maxlen > 0 {
        let obj = db::new_object(srv, Value::Str(StrValue::Raw(res)));
        db::set_key(srv, dbid, &target, obj, false);
        notify_keyspace_event(srv, NOTIFY_STRING, "set", &target, dbid);
        srv.dirty += 1;
    } else if db::db_delete(srv, dbid, &target) {
        // Every source empty: the target is deleted, not set to "".
        db::signal_modified_key(srv, dbid, &target);
        notify_keyspace_event(srv, NOTIFY_GENERIC, "del", &target, dbid);
        srv.dirty += 1;
    }
    c.add_reply_integer(maxlen as i64);
}

// ---- BITFIELD ----

#[derive(Clone, Copy, PartialEq, Eq)]
enum FieldOp {
    Get,
    Set,
    IncrBy,
}

/// One parsed BITFIELD operation (struct bitfieldOp).
struct BitfieldOp {
    offset: u64,
    /// The SET value or the INCRBY increment.
    value: i64,
    op: FieldOp,
    overflow: Overflow,
    bits: u32,
    signed: bool,
}

/// Parse every operation before touching the key, as Redis does. Returns
/// the ops and the highest bit a SET/INCRBY writes (None: read only), or
/// the error to reply.
fn parse_bitfield_ops(
    argv: &[Bytes],
    max: i64,
) -> Result<(Vec<BitfieldOp>, Option<u64>), &'static str> {
    let mut ops = Vec::new();
    let mut overflow = Overflow::Wrap;
    let mut highest_write: Option<u64> = None;
    let mut j = 2;
    while j < argv.len() {
        let remargs = argv.len() - j - 1;
        let sub = &argv[j];
        let op = if is(sub, "get") && remargs >= 2 {
            FieldOp::Get
        } else if is(sub, "set") && remargs >= 3 {
            FieldOp::Set
        } else if is(sub, "incrby") && remargs >= 3 {
            FieldOp::IncrBy
        } else if is(sub, "overflow") && remargs >= 1 {
            let kind = &argv[j + 1];
            overflow = if is(kind, "wrap") {
                Overflow::Wrap
            } else if is(kind, "sat") {
                Overflow::Sat
            } else if is(kind, "fail") {
                Overflow::Fail
            } else {
                return Err("ERR Invalid OVERFLOW type specified");
            };
            j += 2;
            continue;
        } else {
            return Err(shared::SYNTAX_ERR);
        };
        let (signed, bits) = get_bitfield_type(&argv[j + 1])?;
        let offset = get_bit_offset(&argv[j + 2], Some(bits), max)?;
        let mut value = 0;
        if op != FieldOp::Get {
            let last = offset + bits as u64 - 1;
            highest_write = Some(highest_write.map_or(last, |h| h.max(last)));
            value = string2ll(&argv[j + 3]).ok_or(shared::NOT_INTEGER_ERR)?;
        }
        ops.push(BitfieldOp {
            offset,
            value,
            op,
            overflow,
            bits,
            signed,
        });
        j += if op == FieldOp::Get { 3 } else { 4 };
    }
    Ok((ops, highest_write))
}

/// One SET or INCRBY on the buffer: replies the old value (SET) or the new
/// one (INCRBY), or nil when OVERFLOW FAIL refuses (None: nothing written).
/// Some(changed): whether the field now holds a different value.
fn bitfield_write(c: &mut Client, buf: &mut [u8], op: &BitfieldOp) -> Option<bool> {
    let incr = op.op == FieldOp::IncrBy;
    let (reply, old, new, overflowed) = if op.signed {
        let old = get_signed_bitfield(buf, op.offset, op.bits);
        let (value, delta) = if incr { (old, op.value) } else { (op.value, 0) };
        let check = check_signed_bitfield_overflow(value, delta, op.bits, op.overflow);
        let new = check.limit().unwrap_or(value.wrapping_add(delta));
        let reply = if incr { new } else { old };
        (reply, old as u64, new as u64, check.overflowed())
    } else {
        let old = get_unsigned_bitfield(buf, op.offset, op.bits);
        let (value, delta) = if incr {
            (old, op.value)
        } else {
            (op.value as u64, 0)
        };
        let check = check_unsigned_bitfield_overflow(value, delta, op.bits, op.overflow);
        let new = check.limit().unwrap_or(value.wrapping_add(delta as u64));
        let reply = if incr { new } else { old };
        (reply as i64, old, new, check.overflowed())
    };
    if overflowed && op.overflow == Overflow::Fail {
        c.add_reply_null();
        return None;
    }
    c.add_reply_integer(reply);
    if op.signed {
        set_signed_bitfield(buf, op.offset, op.bits, new as i64);
    } else {
        set_unsigned_bitfield(buf, op.offset, op.bits, new);
    }
    Some(old != new)
}

/// bitfieldGeneric: BITFIELD (`readonly_cmd` false) and BITFIELD_RO.
// redis: bitops.c bitfieldGeneric
fn bitfield_generic(srv: &mut Server, c: &mut Client, readonly_cmd: bool) {
    let (key, dbid) = (c.argv[1].clone(), c.db);
    let (ops, highest_write) = match parse_bitfield_ops(&c.argv, srv.config.proto_max_bulk_len) {
        Ok(parsed) => parsed,
        Err(e) => return c.add_reply_error(e),
    };
    let Some(maxbit) = highest_write else {
        // Only GETs: a read lookup; a missing key reads as zeros.
        let s = match db::lookup_key_read(srv, dbid, &key) {
            None => None,
            Some(o) => match str_or_wrongtype(c, o) {
                None => return,
                Some(s) => Some(s.as_bytes()),
            },
        };
        let p: &[u8] = s.as_deref().unwrap_or(&[]);
        c.add_reply_array_len(ops.len());
        for op in &ops {
            c.add_reply_integer(get_bitfield_padded(p, op.offset, op.bits, op.signed));
        }
        return;
    };
    if readonly_cmd {
        return c.add_reply_error("ERR BITFIELD_RO only supports the GET subcommand");
    }
    let run = |c: &mut Client, buf: &mut Vec<u8>, grew: bool| {
        c.add_reply_array_len(ops.len());
        let mut changes = 0;
        for op in &ops {
            if op.op == FieldOp::Get {
                c.add_reply_integer(get_bitfield_padded(buf, op.offset, op.bits, op.signed));
            } else if let Some(changed) = bitfield_write(c, buf, op) {
                // A string that was created or grew counts as changed.
                if changed || grew {
                    changes += 1;
                }
            }
        }
        changes
    };
    let Ok(changes) = with_string_for_bit_command(srv, c, maxbit, run) else {
        return;
    };
    if changes > 0 {
        db::signal_modified_key(srv, dbid, &key);
        notify_keyspace_event(srv, NOTIFY_STRING, "setbit", &key, dbid);
        srv.dirty += changes;
    }
}

/// BITFIELD key [GET encoding offset | [OVERFLOW <WRAP | SAT | FAIL>]
/// <SET encoding offset value | INCRBY encoding offset increment> ...]
// redis: bitops.c bitfieldCommand
pub fn bitfield_command(srv: &mut Server, c: &mut Client) {
    bitfield_generic(srv, c, false);
}

/// BITFIELD_RO key [GET encoding offset [GET encoding offset ...]]
// redis: bitops.c bitfieldroCommand
pub fn bitfield_ro_command(srv: &mut Server, c: &mut Client) {
    bitfield_generic(srv, c, true);
}

/// bitfieldGetKeys (db.c): BITFIELD's key is argv[1]; it is read-only when
/// every subcommand is a GET (or OVERFLOW), which decides its flags.
pub fn bitfield_get_keys(argv: &[Bytes]) -> Vec<KeyReference> {
    let mut readonly = true;
    let mut i = 2;
    while i < argv.len() {
        let remargs = argv.len() - i - 1;
        let arg = &argv[i];
        if is(arg, "get") && remargs >= 2 {
            i += 2;
        } else if (is(arg, "set") || is(arg, "incrby")) && remargs >= 3 {
            readonly = false;
            break;
        } else if is(arg, "overflow") && remargs >= 1 {
            i += 1;
        } else {
            // A syntax error: safer to assume a write.
            readonly = false;
            break;
        }
        i += 1;
    }
    let flags: &'static [&'static str] = if readonly {
        &["RO", "access"]
    } else {
        &["RW", "access", "update"]
    };
    vec![KeyReference { pos: 1, flags }]
}
