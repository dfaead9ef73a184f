//! String commands (Redis's t_string.c); the bit commands are in bitops.rs.
//!
//! Every handler follows the same recipe: parse the arguments (errors first,
//! in Redis's order, because the order decides *which* error a client sees),
//! look the key up for reading or writing, return early on WRONGTYPE, change
//! the value through the string type API (`storage::t_string`), reply, mark
//! the key modified and count the change in `srv.dirty`.
//!
//! Encodings are never chosen here: the type API has one constructor per way
//! a string comes to exist (client value, INCR result, INCRBYFLOAT text,
//! zero-filled SETRANGE/SETBIT buffer), and in-place edits go through
//! `StrValue::{append, setrange}` (and `make_raw` for the bit commands),
//! which leave the value `raw`.
//!
//! Lookups go through `db::lookup_key_read` / `db::lookup_key_write`, which
//! delete a key whose TTL has passed before the command sees it.

use bytes::Bytes;
use storage::object::{RObj, StrValue, Value};
use storage::t_string::{
    check_string_length, create_string_object_encoded, create_string_object_from_long_double,
    create_string_object_from_long_long, create_zeroed_raw,
};
use storage::util::{incr_by_float, string2ll};

use crate::db;
use crate::expire::add_reply_error_expire_time;
use crate::networking::Client;
use crate::notify::{notify_keyspace_event, NOTIFY_GENERIC, NOTIFY_STRING};
use crate::server::Server;
use crate::shared;

// Flags of SET / GETEX options (server.h OBJ_*): a plain bit set, as in
// Redis, so the compatibility rules read as in parseExtendedStringArguments.
pub const OBJ_NO_FLAGS: u32 = 0;
/// Set if key does not exist.
pub const OBJ_SET_NX: u32 = 1 << 0;
/// Set if key exists.
pub const OBJ_SET_XX: u32 = 1 << 1;
/// Relative expire in seconds.
pub const OBJ_EX: u32 = 1 << 2;
/// Relative expire in milliseconds.
pub const OBJ_PX: u32 = 1 << 3;
/// Keep the TTL the key already has.
pub const OBJ_KEEPTTL: u32 = 1 << 4;
/// Reply with the old value (SET ... GET).
pub const OBJ_SET_GET: u32 = 1 << 5;
/// Absolute expire, unix seconds.
pub const OBJ_EXAT: u32 = 1 << 6;
/// Absolute expire, unix milliseconds.
pub const OBJ_PXAT: u32 = 1 << 7;
/// Remove the TTL (GETEX PERSIST).
pub const OBJ_PERSIST: u32 = 1 << 8;

/// Which command's options `parse_extended_string_arguments` accepts.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum CommandType {
    Set,
    Get,
}

/// UNIT_SECONDS / UNIT_MILLISECONDS: how an expire argument is read.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Seconds,
    Milliseconds,
}

/// The parsed options of SET / GETEX: flags, and the expire argument (still
/// text; it is validated later, at the point where Redis does it) with its unit.
pub struct StringOptions {
    pub flags: u32,
    pub expire: Option<Bytes>,
    pub unit: Unit,
}

/// What a SET-like command replies: SET/SETEX/PSETEX say +OK (null when NX
/// or XX refuse), SETNX says 1 (0 when refused).
#[derive(Clone, Copy, PartialEq, Eq)]
enum SetReply {
    OkOrNull,
    OneOrZero,
}
const ERR_TOO_BIG: &str = "ERR string exceeds maximum allowed size (proto-max-bulk-len)";

// ---- shared pieces ----

/// The C-string view of an argument: Redis compares options with
/// strcasecmp, which stops at the first NUL byte.
fn c_str(arg: &[u8]) -> &[u8] {
    match arg.iter().position(|&b| b == 0) {
        Some(n) => &arg[..n],
        None => arg,
    }
}

/// getLongLongFromObjectOrReply with the default error text.
fn parse_i64_or_reply(c: &mut Client, arg: &[u8]) -> Option<i64> {
    let v = string2ll(arg);
    if v.is_none() {
        c.add_reply_error(shared::NOT_INTEGER_ERR);
    }
    v
}

/// checkStringLength: refuse to grow a string past proto-max-bulk-len.
fn check_string_length_or_reply(c: &mut Client, len: usize, append: usize, max: i64) -> bool {
    let ok = check_string_length(len, append, max);
    if !ok {
        c.add_reply_error(ERR_TOO_BIG);
    }
    ok
}

/// The string value of `o`, or None after a WRONGTYPE reply: checkType(o,
/// OBJ_STRING) for a key already looked up, shared by the bit and HLL
/// commands that store their data in strings.
pub(crate) fn str_or_wrongtype<'a>(c: &mut Client, o: &'a mut RObj) -> Option<&'a mut StrValue> {
    db::check_type(c, Some(o), RObj::as_str_mut).ok().flatten()
}

/// A new string object holding `v`, with the current LRU clock.
fn new_string(srv: &Server, v: StrValue) -> RObj {
    db::new_object(srv, Value::Str(v))
}

/// getGenericCommand: reply with the value (null if missing). Err only for
/// WRONGTYPE, so SET ... GET and GETSET stop before writing anything.
fn get_generic_command(srv: &mut Server, c: &mut Client) -> Result<(), ()> {
    let key = c.argv[1].clone();
    let o = db::lookup_key_read(srv, c.db, &key);
    match db::check_type(c, o, RObj::as_str_mut)? {
        None => c.add_reply_null(),
        Some(s) => c.add_reply_bulk(&s.as_bytes()),
    }
    Ok(())
}

/// parseExtendedStringArgumentsOrReply: the options of SET (from argv[3])
/// or GETEX (from argv[2]), in any order. Conflicting options, an option of
/// the other command, or EX/PX/EXAT/PXAT without a value is a syntax error.
/// Repeating the same option is allowed (the last expire wins).
pub fn parse_extended_string_arguments(
    c: &mut Client,
    command_type: CommandType,
) -> Option<StringOptions> {
    let mut flags = OBJ_NO_FLAGS;
    let mut expire = None;
    let mut unit = Unit::Seconds;
    const EXPIRES: u32 = OBJ_EX | OBJ_PX | OBJ_EXAT | OBJ_PXAT;
    let is_set = command_type == CommandType::Set;
    let mut j = if is_set { 3 } else { 2 };
    while j < c.argc() {
        let opt = c_str(c.arg(j)).to_ascii_uppercase();
        let has_next = j + 1 < c.argc();
        // The expire flags other than this one: EX after PX is a conflict,
        // EX after EX just replaces the value.
        let other_expires = |this: u32| flags & (EXPIRES & !this) != 0;
        let nx_xx_get_keepttl = match &opt[..] {
            b"NX" if is_set && flags & OBJ_SET_XX == 0 => Some(OBJ_SET_NX),
            b"XX" if is_set && flags & OBJ_SET_NX == 0 => Some(OBJ_SET_XX),
            b"GET" if is_set => Some(OBJ_SET_GET),
            b"KEEPTTL" if is_set && flags & (OBJ_PERSIST | EXPIRES) == 0 => Some(OBJ_KEEPTTL),
            b"PERSIST" if !is_set && flags & (EXPIRES | OBJ_KEEPTTL) == 0 => Some(OBJ_PERSIST),
            _ => None,
        };
        if let Some(f) = nx_xx_get_keepttl {
            flags |= f;
            j += 1;
            continue;
        }
        let (f, u) = match &opt[..] {
            b"EX" => (OBJ_EX, Unit::Seconds),
            b"PX" => (OBJ_PX, Unit::Milliseconds),
            b"EXAT" => (OBJ_EXAT, Unit::Seconds),
            b"PXAT" => (OBJ_PXAT, Unit::Milliseconds),
            _ => {
                c.add_reply_syntax_error();
                return None;
            }
        };
        if flags & (OBJ_KEEPTTL | OBJ_PERSIST) != 0 || other_expires(f) || !has_next {
            c.add_reply_syntax_error();
            return None;
        }
        flags |= f;
        unit = u;
        expire = Some(c.argv[j + 1].clone());
        j += 2;
    }
    Some(StringOptions {
        flags,
        expire,
        unit,
    })
}

/// getExpireMillisecondsOrReply: the expire argument as an absolute unix
/// time in ms. Relative forms (EX/PX) are added to `now`. Zero, negative,
/// and anything that overflows on the way is "invalid expire time".
pub fn get_expire_milliseconds_or_reply(
    c: &mut Client,
    expire: &[u8],
    flags: u32,
    unit: Unit,
    now: i64,
) -> Option<i64> {
    let mut ms = parse_i64_or_reply(c, expire)?;
    if ms <= 0 || (unit == Unit::Seconds && ms > i64::MAX / 1000) {
        add_reply_error_expire_time(c);
        return None;
    }
    if unit == Unit::Seconds {
        ms *= 1000;
    }
    if flags & (OBJ_EX | OBJ_PX) != 0 {
        // Redis adds and then tests for a wrapped (non-positive) result.
        ms = ms.wrapping_add(now);
    }
    if ms <= 0 {
        add_reply_error_expire_time(c);
        return None;
    }
    Some(ms)
}

/// setGenericCommand: the body of SET, SETNX, SETEX and PSETEX.
fn set_generic_command(
    srv: &mut Server,
    c: &mut Client,
    opts: StringOptions,
    key: Bytes,
    val: Bytes,
    reply: SetReply,
) {
    let StringOptions {
        flags,
        expire,
        unit,
    } = opts;
    let dbid = c.db;
    let now = srv.cmd_time_snapshot;
    let when = match expire {
        None => None,
        Some(e) => match get_expire_milliseconds_or_reply(c, &e, flags, unit, now) {
            None => return,
            ms => ms,
        },
    };
    if flags & OBJ_SET_GET != 0 && get_generic_command(srv, c).is_err() {
        return;
    }
    let found = db::lookup_key_write(srv, dbid, &key).is_some();
    if (flags & OBJ_SET_NX != 0 && found) || (flags & OBJ_SET_XX != 0 && !found) {
        if flags & OBJ_SET_GET == 0 {
            match reply {
                SetReply::OkOrNull => c.add_reply_null(),
                SetReply::OneOrZero => c.add_reply_integer(0),
            }
        }
        return;
    }
    let obj = new_string(srv, create_string_object_encoded(&val));
    db::set_key(srv, dbid, &key, obj, flags & OBJ_KEEPTTL != 0);
    srv.dirty += 1;
    notify_keyspace_event(srv, NOTIFY_STRING, "set", &key, dbid);
    if let Some(when) = when {
        // An EXAT/PXAT in the past is stored as is; the key disappears at
        // its next lookup, as in Redis 7.0.
        crate::db::set_expire(srv, dbid, &key, when);
        // Propagated as SET key value PXAT <ms>: the same moment on replay.
        crate::propagate::rewrite_client_command_vector(
            c,
            vec![
                Bytes::from_static(b"SET"),
                key.clone(),
                val.clone(),
                Bytes::from_static(b"PXAT"),
                Bytes::from(when.to_string()),
            ],
        );
        notify_keyspace_event(srv, NOTIFY_GENERIC, "expire", &key, dbid);
    } else if flags & OBJ_SET_GET != 0 {
        // Propagated without its GET (which may be repeated).
        let argv: Vec<Bytes> = c
            .argv
            .iter()
            .enumerate()
            .filter(|(j, a)| *j < 3 || !a.eq_ignore_ascii_case(b"get"))
            .map(|(_, a)| a.clone())
            .collect();
        crate::propagate::rewrite_client_command_vector(c, argv);
    }
    if flags & OBJ_SET_GET == 0 {
        match reply {
            SetReply::OkOrNull => c.add_reply_ok(),
            SetReply::OneOrZero => c.add_reply_integer(1),
        }
    }
}

// ---- SET family ----

/// SET key value [NX | XX] [GET] [EX seconds | PX milliseconds |
///     EXAT unix-time-seconds | PXAT unix-time-milliseconds | KEEPTTL]
// redis: t_string.c setCommand
pub fn set_command(srv: &mut Server, c: &mut Client) {
    let Some(opts) = parse_extended_string_arguments(c, CommandType::Set) else {
        return;
    };
    let (key, val) = (c.argv[1].clone(), c.argv[2].clone());
    set_generic_command(srv, c, opts, key, val, SetReply::OkOrNull);
}

/// SETNX key value
// redis: t_string.c setnxCommand
pub fn setnx_command(srv: &mut Server, c: &mut Client) {
    let opts = StringOptions {
        flags: OBJ_SET_NX,
        expire: None,
        unit: Unit::Seconds,
    };
    let (key, val) = (c.argv[1].clone(), c.argv[2].clone());
    set_generic_command(srv, c, opts, key, val, SetReply::OneOrZero);
}

/// SETEX key seconds value
// redis: t_string.c setexCommand
pub fn setex_command(srv: &mut Server, c: &mut Client) {
    let opts = StringOptions {
        flags: OBJ_EX,
        expire: Some(c.argv[2].clone()),
        unit: Unit::Seconds,
    };
    let (key, val) = (c.argv[1].clone(), c.argv[3].clone());
    set_generic_command(srv, c, opts, key, val, SetReply::OkOrNull);
}

/// PSETEX key milliseconds value
// redis: t_string.c psetexCommand
pub fn psetex_command(srv: &mut Server, c: &mut Client) {
    let opts = StringOptions {
        flags: OBJ_PX,
        expire: Some(c.argv[2].clone()),
        unit: Unit::Milliseconds,
    };
    let (key, val) = (c.argv[1].clone(), c.argv[3].clone());
    set_generic_command(srv, c, opts, key, val, SetReply::OkOrNull);
}

/// GET key
// redis: t_string.c getCommand
pub fn get_command(srv: &mut Server, c: &mut Client) {
    let _ = get_generic_command(srv, c);
}

/// GETSET key value
// redis: t_string.c getsetCommand
pub fn getset_command(srv: &mut Server, c: &mut Client) {
    if get_generic_command(srv, c).is_err() {
        return;
    }
    let (key, val) = (c.argv[1].clone(), c.argv[2].clone());
    let obj = new_string(srv, create_string_object_encoded(&val));
    // Like SET: the new value drops any TTL.
    db::set_key(srv, c.db, &key, obj, false);
    notify_keyspace_event(srv, NOTIFY_STRING, "set", &key, c.db);
    srv.dirty += 1;
    // Propagated as SET.
    crate::propagate::rewrite_client_command_argument(c, 0, Bytes::from_static(b"SET"));
}

/// GETDEL key
// redis: t_string.c getdelCommand
pub fn getdel_command(srv: &mut Server, c: &mut Client) {
    if get_generic_command(srv, c).is_err() {
        return;
    }
    let key = c.argv[1].clone();
    let lazy = srv.config.lazyfree_lazy_user_del;
    if db::db_generic_delete(srv, c.db, &key, lazy, db::FreeCause::Del) {
        // Propagated as DEL / UNLINK.
        let argv = vec![crate::propagate::del_or_unlink(lazy), key.clone()];
        crate::propagate::rewrite_client_command_vector(c, argv);
        db::signal_modified_key(srv, c.db, &key);
        notify_keyspace_event(srv, NOTIFY_GENERIC, "del", &key, c.db);
        srv.dirty += 1;
    }
}

/// GETEX key [EX seconds | PX milliseconds | EXAT unix-time-seconds |
///     PXAT unix-time-milliseconds | PERSIST]
// redis: t_string.c getexCommand
pub fn getex_command(srv: &mut Server, c: &mut Client) {
    let Some(StringOptions {
        flags,
        expire,
        unit,
    }) = parse_extended_string_arguments(c, CommandType::Get)
    else {
        return;
    };
    let (key, dbid, now) = (c.argv[1].clone(), c.db, srv.cmd_time_snapshot);
    let Some(o) = db::lookup_key_read(srv, dbid, &key) else {
        c.add_reply_null();
        return;
    };
    let Some(s) = str_or_wrongtype(c, o) else {
        return;
    };
    // The expire is validated only once the key is known to be a string.
    let when = match expire {
        None => None,
        Some(e) => match get_expire_milliseconds_or_reply(c, &e, flags, unit, now) {
            None => return,
            ms => ms,
        },
    };
    // Reply first: the key may be deleted just below.
    c.add_reply_bulk(&s.as_bytes());
    // The change made, as the name of its keyspace event.
    // GETEX never propagates as itself: as DEL/UNLINK, PEXPIREAT or
    // PERSIST.
    use crate::propagate::rewrite_client_command_vector as rewrite;
    let event = match when {
        // An absolute time already past deletes the key (checkAlreadyExpired).
        Some(ms) if flags & (OBJ_EXAT | OBJ_PXAT) != 0 && ms <= now && !srv.loading.loading => {
            let lazy = srv.config.lazyfree_lazy_expire;
            let deleted = db::db_generic_delete(srv, dbid, &key, lazy, db::FreeCause::Expire);
            rewrite(c, vec![crate::propagate::del_or_unlink(lazy), key.clone()]);
            deleted.then_some("del")
        }
        Some(ms) => {
            crate::db::set_expire(srv, dbid, &key, ms);
            let argv = vec![
                Bytes::from_static(b"PEXPIREAT"),
                key.clone(),
                Bytes::from(ms.to_string()),
            ];
            rewrite(c, argv);
            Some("expire")
        }
        None => {
            let persisted = flags & OBJ_PERSIST != 0 && srv.dbs[dbid].remove_expire(&key);
            if persisted {
                rewrite(c, vec![Bytes::from_static(b"PERSIST"), key.clone()]);
            }
            persisted.then_some("persist")
        }
    };
    if let Some(event) = event {
        db::signal_modified_key(srv, dbid, &key);
        notify_keyspace_event(srv, NOTIFY_GENERIC, event, &key, dbid);
        srv.dirty += 1;
    }
}

/// MGET key [key ...]
// redis: t_string.c mgetCommand
pub fn mget_command(srv: &mut Server, c: &mut Client) {
    c.add_reply_array_len(c.argc() - 1);
    for j in 1..c.argc() {
        let key = c.argv[j].clone();
        // A missing key and a key of another type both read as null.
        match db::lookup_key_read(srv, c.db, &key).and_then(|o| o.as_str()) {
            Some(s) => c.add_reply_bulk(&s.as_bytes()),
            None => c.add_reply_null(),
        }
    }
}

/// msetGenericCommand: MSET, and MSETNX when `nx` (all or nothing: if any
/// key exists, nothing is set and the reply is 0).
fn mset_generic_command(srv: &mut Server, c: &mut Client, nx: bool) {
    if c.argc().is_multiple_of(2) {
        // addReplyErrorArity: the table's arity (-3) cannot say "pairs".
        let name = String::from_utf8_lossy(c.arg(0)).to_lowercase();
        c.add_reply_error(&format!(
            "ERR wrong number of arguments for '{name}' command"
        ));
        return;
    }
    if nx {
        for j in (1..c.argc()).step_by(2) {
            let key = c.argv[j].clone();
            if db::lookup_key_write(srv, c.db, &key).is_some() {
                c.add_reply_integer(0);
                return;
            }
        }
    }
    for j in (1..c.argc()).step_by(2) {
        let (key, val) = (c.argv[j].clone(), c.argv[j + 1].clone());
        let obj = new_string(srv, create_string_object_encoded(&val));
        db::set_key(srv, c.db, &key, obj, false);
        notify_keyspace_event(srv, NOTIFY_STRING, "set", &key, c.db);
    }
    srv.dirty += ((c.argc() - 1) / 2) as u64;
    if nx {
        c.add_reply_integer(1);
    } else {
        c.add_reply_ok();
    }
}

/// MSET key value [key value ...]
// redis: t_string.c msetCommand
pub fn mset_command(srv: &mut Server, c: &mut Client) {
    mset_generic_command(srv, c, false);
}

/// MSETNX key value [key value ...]
// redis: t_string.c msetnxCommand
pub fn msetnx_command(srv: &mut Server, c: &mut Client) {
    mset_generic_command(srv, c, true);
}

// ---- in-place edits ----

/// APPEND key value
// redis: t_string.c appendCommand
pub fn append_command(srv: &mut Server, c: &mut Client) {
    let (key, append, dbid) = (c.argv[1].clone(), c.argv[2].clone(), c.db);
    let max = srv.config.proto_max_bulk_len;
    let totlen = match db::lookup_key_write(srv, dbid, &key) {
        None => {
            // A new key is stored like SET stores it (so "123" is `int`).
            let v = create_string_object_encoded(&append);
            let len = v.len();
            let obj = new_string(srv, v);
            db::db_add(srv, dbid, &key, obj);
            len
        }
        Some(o) => {
            let Some(s) = str_or_wrongtype(c, o) else {
                return;
            };
            if !check_string_length_or_reply(c, s.len(), append.len(), max) {
                return;
            }
            let len = s.append(&append);
            db::signal_modified_key(srv, dbid, &key);
            len
        }
    };
    notify_keyspace_event(srv, NOTIFY_STRING, "append", &key, dbid);
    srv.dirty += 1;
    c.add_reply_integer(totlen as i64);
}

/// STRLEN key
// redis: t_string.c strlenCommand
pub fn strlen_command(srv: &mut Server, c: &mut Client) {
    let key = c.argv[1].clone();
    match db::lookup_key_read(srv, c.db, &key) {
        None => c.add_reply_integer(0),
        Some(o) => {
            let Some(s) = str_or_wrongtype(c, o) else {
                return;
            };
            c.add_reply_integer(s.len() as i64);
        }
    }
}

/// GETRANGE key start end (also SUBSTR key start end)
// redis: t_string.c getrangeCommand
pub fn getrange_command(srv: &mut Server, c: &mut Client) {
    let key = c.argv[1].clone();
    let (start_arg, end_arg) = (c.argv[2].clone(), c.argv[3].clone());
    let Some(start) = parse_i64_or_reply(c, &start_arg) else {
        return;
    };
    let Some(end) = parse_i64_or_reply(c, &end_arg) else {
        return;
    };
    match db::lookup_key_read(srv, c.db, &key) {
        None => c.add_reply_bulk(b""),
        Some(o) => {
            let Some(s) = str_or_wrongtype(c, o) else {
                return;
            };
            c.add_reply_bulk(&s.getrange(start, end));
        }
    }
}

/// SETRANGE key offset value
// redis: t_string.c setrangeCommand
pub fn setrange_command(srv: &mut Server, c: &mut Client) {
    let (key, value, dbid) = (c.argv[1].clone(), c.argv[3].clone(), c.db);
    let offset_arg = c.argv[2].clone();
    let Some(offset) = parse_i64_or_reply(c, &offset_arg) else {
        return;
    };
    if offset < 0 {
        c.add_reply_error("ERR offset is out of range");
        return;
    }
    let offset = offset as usize;
    let max = srv.config.proto_max_bulk_len;
    let newlen = match db::lookup_key_write(srv, dbid, &key) {
        None => {
            // Setting nothing on a missing key creates nothing.
            if value.is_empty() {
                c.add_reply_integer(0);
                return;
            }
            if !check_string_length_or_reply(c, offset, value.len(), max) {
                return;
            }
            let mut v = create_zeroed_raw(offset + value.len());
            let len = v.setrange(offset, &value);
            let obj = new_string(srv, v);
            db::db_add(srv, dbid, &key, obj);
            len
        }
        Some(o) => {
            let Some(s) = str_or_wrongtype(c, o) else {
                return;
            };
            // Setting nothing: reply the length, the value stays as it is.
            if value.is_empty() {
                c.add_reply_integer(s.len() as i64);
                return;
            }
            if !check_string_length_or_reply(c, offset, value.len(), max) {
                return;
            }
            let len = s.setrange(offset, &value);
            db::signal_modified_key(srv, dbid, &key);
            len
        }
    };
    notify_keyspace_event(srv, NOTIFY_STRING, "setrange", &key, dbid);
    srv.dirty += 1;
    c.add_reply_integer(newlen as i64);
}

// ---- counters ----

/// incrDecrCommand: add `incr` to the integer stored at the key (0 if
/// missing). The result is always `int`; the TTL is kept.
fn incr_decr_command(srv: &mut Server, c: &mut Client, incr: i64) {
    let (key, dbid) = (c.argv[1].clone(), c.db);
    let old = match db::lookup_key_write(srv, dbid, &key) {
        None => Some(0),
        Some(o) => match str_or_wrongtype(c, o) {
            None => return,
            Some(s) => s.as_i64(),
        },
    };
    let Some(old) = old else {
        c.add_reply_error(shared::NOT_INTEGER_ERR);
        return;
    };
    let Some(value) = old.checked_add(incr) else {
        c.add_reply_error("ERR increment or decrement would overflow");
        return;
    };
    let obj = new_string(srv, create_string_object_from_long_long(value));
    // dbOverwrite / dbAdd: replacing the value keeps the TTL.
    db::set_key(srv, dbid, &key, obj, true);
    notify_keyspace_event(srv, NOTIFY_STRING, "incrby", &key, dbid);
    srv.dirty += 1;
    c.add_reply_integer(value);
}

/// INCR key
// redis: t_string.c incrCommand
pub fn incr_command(srv: &mut Server, c: &mut Client) {
    incr_decr_command(srv, c, 1);
}

/// DECR key
// redis: t_string.c decrCommand
pub fn decr_command(srv: &mut Server, c: &mut Client) {
    incr_decr_command(srv, c, -1);
}

/// INCRBY key increment
// redis: t_string.c incrbyCommand
pub fn incrby_command(srv: &mut Server, c: &mut Client) {
    let arg = c.argv[2].clone();
    let Some(incr) = parse_i64_or_reply(c, &arg) else {
        return;
    };
    incr_decr_command(srv, c, incr);
}

/// DECRBY key decrement
// redis: t_string.c decrbyCommand
pub fn decrby_command(srv: &mut Server, c: &mut Client) {
    let arg = c.argv[2].clone();
    let Some(decr) = parse_i64_or_reply(c, &arg) else {
        return;
    };
    // -i64::MIN does not exist: refused before the key is even looked at.
    if decr == i64::MIN {
        c.add_reply_error("ERR decrement would overflow");
        return;
    }
    incr_decr_command(srv, c, -decr);
}

/// INCRBYFLOAT key increment
// redis: t_string.c incrbyfloatCommand
pub fn incrbyfloat_command(srv: &mut Server, c: &mut Client) {
    let (key, incr, dbid) = (c.argv[1].clone(), c.argv[2].clone(), c.db);
    let cur = match db::lookup_key_write(srv, dbid, &key) {
        None => None,
        Some(o) => match str_or_wrongtype(c, o) {
            None => return,
            Some(s) => Some(s.as_bytes().into_owned()),
        },
    };
    // The sum is computed in long double and formatted with %.17Lg (humanized)
    // by the util helper; a missing key counts as 0.
    let text = match incr_by_float(cur.as_deref().unwrap_or(b"0"), &incr) {
        Ok(text) => text,
        Err(e) => {
            // "value is not a valid float" (either operand) or
            // "increment would produce NaN or Infinity".
            c.add_reply_error(&format!("ERR {}", e.message()));
            return;
        }
    };
    // Stored as the text it replies with (embstr or raw, never int).
    let obj = new_string(srv, create_string_object_from_long_double(&text));
    db::set_key(srv, dbid, &key, obj, true);
    notify_keyspace_event(srv, NOTIFY_STRING, "incrbyfloat", &key, dbid);
    srv.dirty += 1;
    c.add_reply_bulk(&text);
    // Propagated as SET key <result> KEEPTTL: float formatting and
    // precision must not differ on replay.
    let argv = vec![
        Bytes::from_static(b"SET"),
        key,
        Bytes::copy_from_slice(&text),
        Bytes::from_static(b"KEEPTTL"),
    ];
    crate::propagate::rewrite_client_command_vector(c, argv);
}

// ---- LCS ----

/// LCS key1 key2 [LEN] [IDX] [MINMATCHLEN min-match-len] [WITHMATCHLEN]
// redis: t_string.c lcsCommand
pub fn lcs_command(srv: &mut Server, c: &mut Client) {
    let (ka, kb, dbid) = (c.argv[1].clone(), c.argv[2].clone(), c.db);
    // Both keys are looked up before anything is checked; a missing key is
    // an empty string.
    let a_is_str = db::lookup_key_read(srv, dbid, &ka).map(|o| o.as_str().is_some());
    let b_is_str = db::lookup_key_read(srv, dbid, &kb).map(|o| o.as_str().is_some());
    if a_is_str == Some(false) || b_is_str == Some(false) {
        return c.add_reply_error("ERR The specified keys must contain string values");
    }
    let (mut getlen, mut getidx, mut withmatchlen, mut minmatchlen) = (false, false, false, 0);
    let mut j = 3;
    while j < c.argc() {
        let opt = c_str(c.arg(j)).to_ascii_uppercase();
        let moreargs = c.argc() - 1 - j;
        match opt.as_slice() {
            b"IDX" => getidx = true,
            b"LEN" => getlen = true,
            b"WITHMATCHLEN" => withmatchlen = true,
            b"MINMATCHLEN" if moreargs > 0 => {
                let arg = c.argv[j + 1].clone();
                let Some(n) = parse_i64_or_reply(c, &arg) else {
                    return;
                };
                minmatchlen = n.max(0);
                j += 1;
            }
            _ => return c.add_reply_syntax_error(),
        }
        j += 1;
    }
    if getlen && getidx {
        return c
            .add_reply_error("ERR If you want both the length and indexes, please just use IDX.");
    }
    let max = srv.config.proto_max_bulk_len;
    let result = {
        let dict = &srv.dbs[dbid].dict;
        let text = |k: &[u8]| match dict.get(k).and_then(|o| o.as_str()) {
            Some(s) => s.as_bytes(),
            None => std::borrow::Cow::Borrowed(&[][..]),
        };
        let (a, b) = (text(&ka), text(&kb));
        storage::t_string::lcs(&a, &b, max, getidx || !getlen, minmatchlen)
    };
    let r = match result {
        Ok(r) => r,
        Err(storage::t_string::LcsError::TooLong) => {
            return c.add_reply_error("ERR String too long for LCS")
        }
        Err(storage::t_string::LcsError::ExceedsLimit) => {
            return c.add_reply_error(
                "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len",
            )
        }
        Err(storage::t_string::LcsError::NoMemory) => {
            return c.add_reply_error(
                "ERR Insufficient memory, failed allocating transient memory for LCS",
            )
        }
    };
    if getidx {
        c.add_reply_map_len(2);
        c.add_reply_bulk(b"matches");
        c.add_reply_array_len(r.matches.len());
        for m in &r.matches {
            c.add_reply_array_len(2 + usize::from(withmatchlen));
            c.add_reply_array_len(2);
            c.add_reply_integer(m.a.0 as i64);
            c.add_reply_integer(m.a.1 as i64);
            c.add_reply_array_len(2);
            c.add_reply_integer(m.b.0 as i64);
            c.add_reply_integer(m.b.1 as i64);
            if withmatchlen {
                c.add_reply_integer(m.len as i64);
            }
        }
        c.add_reply_bulk(b"len");
        c.add_reply_integer(r.len as i64);
    } else if getlen {
        c.add_reply_integer(r.len as i64);
    } else {
        c.add_reply_bulk(&r.string);
    }
}
