//! Expire commands (Redis's expire.c): EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT,
//! TTL, PTTL, EXPIRETIME, PEXPIRETIME, PERSIST.
//!
//! A TTL is stored as an absolute unix time in milliseconds in the db's
//! `expires` dict (`Db::set_expire`); a key without an entry there is
//! persistent. All four EXPIRE forms funnel into `expire_generic_command`,
//! which turns the argument into that absolute time: seconds are multiplied
//! by 1000, relative forms add "now" (the per-command time snapshot,
//! `srv.cmd_time_snapshot`), and either step overflowing is an error.
//!
//! A time that is already past does not store a TTL at all: the key is
//! deleted on the spot and the reply is still 1 (Redis propagates this as a
//! DEL). Keys whose TTL passes later are removed lazily by
//! `db::expire_if_needed` on their next lookup, or by the active cycle.

use bytes::Bytes;

use crate::db;
use crate::networking::Client;
use crate::notify::{notify_keyspace_event, NOTIFY_GENERIC};
use crate::server::Server;
use crate::shared;
use storage::expire::{CycleType, ExpireCycleConfig, SystemClock};

// Option flags of EXPIRE and friends (expire.c EXPIRE_*).
/// Set only if the key has no TTL.
pub const EXPIRE_NX: u32 = 1 << 0;
/// Set only if the key has a TTL.
pub const EXPIRE_XX: u32 = 1 << 1;
/// Set only if the new time is later than the current one.
pub const EXPIRE_GT: u32 = 1 << 2;
/// Set only if the new time is earlier than the current one.
pub const EXPIRE_LT: u32 = 1 << 3;

/// UNIT_SECONDS / UNIT_MILLISECONDS of the time argument.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Unit {
    Seconds,
    Milliseconds,
}

/// parseExtendedExpireArgumentsOrReply: NX | XX | GT | LT from argv[3] on,
/// case-insensitive, repeats allowed. An unknown word is reported before any
/// incompatibility, and incompatibilities before the time argument is read.
fn parse_extended_expire_arguments(c: &mut Client) -> Option<u32> {
    let mut flags = 0;
    for j in 3..c.argc() {
        // strcasecmp stops at NUL, and so does the echoed option.
        let arg = c.arg(j);
        let opt = &arg[..arg.iter().position(|&b| b == 0).unwrap_or(arg.len())];
        flags |= match &opt.to_ascii_uppercase()[..] {
            b"NX" => EXPIRE_NX,
            b"XX" => EXPIRE_XX,
            b"GT" => EXPIRE_GT,
            b"LT" => EXPIRE_LT,
            _ => {
                let mut msg = b"ERR Unsupported option ".to_vec();
                msg.extend_from_slice(opt);
                c.add_reply_error_bytes(&msg);
                return None;
            }
        };
    }
    if flags & EXPIRE_NX != 0 && flags & (EXPIRE_XX | EXPIRE_GT | EXPIRE_LT) != 0 {
        c.add_reply_error("ERR NX and XX, GT or LT options at the same time are not compatible");
        return None;
    }
    if flags & EXPIRE_GT != 0 && flags & EXPIRE_LT != 0 {
        c.add_reply_error("ERR GT and LT options at the same time are not compatible");
        return None;
    }
    Some(flags)
}

/// Do the NX/XX/GT/LT conditions allow replacing `current` (None: no TTL)
/// with `when`? A key without TTL counts as an infinite TTL: GT never
/// passes, LT always does.
fn expire_allowed(flags: u32, current: Option<i64>, when: i64) -> bool {
    if flags & EXPIRE_NX != 0 && current.is_some() {
        return false;
    }
    if flags & EXPIRE_XX != 0 && current.is_none() {
        return false;
    }
    if flags & EXPIRE_GT != 0 && current.is_none_or(|cur| when <= cur) {
        return false;
    }
    if flags & EXPIRE_LT != 0 && current.is_some_and(|cur| when >= cur) {
        return false;
    }
    true
}

/// expireGenericCommand: `basetime` is 0 for the *AT forms, now otherwise.
/// Replies 1 when the TTL was set (or the key deleted because the time is
/// already past), 0 when the key is missing or a condition refused.
fn expire_generic_command(srv: &mut Server, c: &mut Client, basetime: i64, unit: Unit) {
    let (key, dbid) = (c.argv[1].clone(), c.db);
    let Some(flags) = parse_extended_expire_arguments(c) else {
        return;
    };
    let Some(mut when) = storage::util::string2ll(c.arg(2)) else {
        c.add_reply_error(shared::NOT_INTEGER_ERR);
        return;
    };
    // Negative times are allowed (they delete the key), but the conversion
    // to an absolute time in ms must not overflow.
    if unit == Unit::Seconds {
        if !(i64::MIN / 1000..=i64::MAX / 1000).contains(&when) {
            add_reply_error_expire_time(c);
            return;
        }
        when *= 1000;
    }
    if when > i64::MAX - basetime {
        add_reply_error_expire_time(c);
        return;
    }
    when += basetime;

    if db::lookup_key_write(srv, dbid, &key).is_none() {
        c.add_reply_integer(0);
        return;
    }
    if flags != 0 && !expire_allowed(flags, srv.dbs[dbid].get_expire(&key), when) {
        c.add_reply_integer(0);
        return;
    }
    // checkAlreadyExpired: a time not in the future deletes the key now
    // (not while the AOF replays: the deletion follows in the file).
    // Propagated as DEL/UNLINK, or as PEXPIREAT with the absolute time in
    // ms (the NX/XX/GT/LT options kept), so a replay later means the same.
    let event = if when <= srv.cmd_time_snapshot && !srv.loading.loading {
        let lazy = srv.config.lazyfree_lazy_expire;
        db::db_generic_delete(srv, dbid, &key, lazy, db::FreeCause::Expire);
        crate::propagate::rewrite_client_command_vector(
            c,
            vec![crate::propagate::del_or_unlink(lazy), key.clone()],
        );
        "del"
    } else {
        crate::db::set_expire(srv, dbid, &key, when);
        if !c.arg(0).eq_ignore_ascii_case(b"pexpireat") {
            crate::propagate::rewrite_client_command_argument(
                c,
                0,
                Bytes::from_static(b"PEXPIREAT"),
            );
        }
        if basetime != 0 || unit == Unit::Seconds {
            crate::propagate::rewrite_client_command_argument(c, 2, Bytes::from(when.to_string()));
        }
        "expire"
    };
    db::signal_modified_key(srv, dbid, &key);
    notify_keyspace_event(srv, NOTIFY_GENERIC, event, &key, dbid);
    srv.dirty += 1;
    c.add_reply_integer(1);
}

/// addReplyErrorExpireTime: the text names the command ('expire', 'set',
/// 'getex'...); the string commands use it too.
pub fn add_reply_error_expire_time(c: &mut Client) {
    let name = String::from_utf8_lossy(c.arg(0)).to_lowercase();
    c.add_reply_error(&format!("ERR invalid expire time in '{name}' command"));
}

/// EXPIRE key seconds [NX | XX | GT | LT]
// redis: expire.c expireCommand
pub fn expire_command(srv: &mut Server, c: &mut Client) {
    let now = srv.cmd_time_snapshot;
    expire_generic_command(srv, c, now, Unit::Seconds);
}

/// PEXPIRE key milliseconds [NX | XX | GT | LT]
// redis: expire.c pexpireCommand
pub fn pexpire_command(srv: &mut Server, c: &mut Client) {
    let now = srv.cmd_time_snapshot;
    expire_generic_command(srv, c, now, Unit::Milliseconds);
}

/// EXPIREAT key unix-time-seconds [NX | XX | GT | LT]
// redis: expire.c expireatCommand
pub fn expireat_command(srv: &mut Server, c: &mut Client) {
    expire_generic_command(srv, c, 0, Unit::Seconds);
}

/// PEXPIREAT key unix-time-milliseconds [NX | XX | GT | LT]
// redis: expire.c pexpireatCommand
pub fn pexpireat_command(srv: &mut Server, c: &mut Client) {
    expire_generic_command(srv, c, 0, Unit::Milliseconds);
}

/// ttlGenericCommand: -2 if the key is missing, -1 if it has no TTL, else
/// the remaining time (`output_abs`: the absolute time) in ms or in seconds
/// rounded to nearest ((ms + 500) / 1000).
fn ttl_generic_command(srv: &mut Server, c: &mut Client, output_ms: bool, output_abs: bool) {
    let (key, dbid) = (c.argv[1].clone(), c.db);
    // LOOKUP_NOTOUCH: asking for a TTL counts a hit or miss but does not
    // make the key look recently used.
    if db::lookup_key_read_with_flags(srv, dbid, &key, db::LOOKUP_NOTOUCH).is_none() {
        c.add_reply_integer(-2);
        return;
    }
    let Some(expire) = srv.dbs[dbid].get_expire(&key) else {
        c.add_reply_integer(-1);
        return;
    };
    let ttl = if output_abs {
        expire
    } else {
        expire - srv.cmd_time_snapshot
    };
    let ttl = ttl.max(0);
    // Rounded in wide arithmetic: a TTL near i64::MAX must not wrap (Redis's
    // compiled C gives the mathematical result there too).
    let secs = ((ttl as i128 + 500) / 1000) as i64;
    c.add_reply_integer(if output_ms { ttl } else { secs });
}

/// TTL key
// redis: expire.c ttlCommand
pub fn ttl_command(srv: &mut Server, c: &mut Client) {
    ttl_generic_command(srv, c, false, false);
}

/// PTTL key
// redis: expire.c pttlCommand
pub fn pttl_command(srv: &mut Server, c: &mut Client) {
    ttl_generic_command(srv, c, true, false);
}

/// EXPIRETIME key
// redis: expire.c expiretimeCommand
pub fn expiretime_command(srv: &mut Server, c: &mut Client) {
    ttl_generic_command(srv, c, false, true);
}

/// PEXPIRETIME key
// redis: expire.c pexpiretimeCommand
pub fn pexpiretime_command(srv: &mut Server, c: &mut Client) {
    ttl_generic_command(srv, c, true, true);
}

/// PERSIST key
// redis: expire.c persistCommand
pub fn persist_command(srv: &mut Server, c: &mut Client) {
    let (key, dbid) = (c.argv[1].clone(), c.db);
    if db::lookup_key_write(srv, dbid, &key).is_none() || !srv.dbs[dbid].remove_expire(&key) {
        c.add_reply_integer(0);
        return;
    }
    db::signal_modified_key(srv, dbid, &key);
    notify_keyspace_event(srv, NOTIFY_GENERIC, "persist", &key, dbid);
    srv.dirty += 1;
    c.add_reply_integer(1);
}

// ---- the active expiry cycle (expire.c activeExpireCycle) ----

/// activeExpireCycle: sample the expires dicts and delete what has expired.
/// The sampling logic lives in `storage::expire` (with the clock passed in,
/// so it can be tested); each key it finds expired is deleted by
/// `db::delete_expired_key` (the `ExpireHost` impl below), exactly as a key
/// that lazy expiry finds: freed inline or on `bio_lazy_free` with
/// lazyfree-lazy-expire, counted, notified, timed.
pub fn active_expire_cycle(srv: &mut Server, cycle: CycleType) {
    // During CLIENT PAUSE the dataset must not change, expiry included.
    if crate::networking::check_client_pause_timeout_and_return_if_paused(srv) {
        return;
    }
    let config = ExpireCycleConfig {
        effort: srv.config.active_expire_effort as u64,
        hz: srv.hz as u64,
    };
    let threshold = srv.config.latency_monitor_threshold;
    // The cycle's state lives between cycles; it is lent out so that the
    // cycle can hold the server (the host) at the same time.
    let mut state = std::mem::take(&mut srv.expire_state);
    let report = storage::expire::active_expire_cycle(srv, &mut state, cycle, config, &SystemClock);
    srv.expire_state = state;
    // Each deletion went out on its own, no MULTI (propagate_no_multi).
    crate::propagate::propagate_pending_outside_call(srv);
    if report.ran {
        srv.latency
            .add_sample_if_needed(threshold, "expire-cycle", report.elapsed_us / 1000);
    }
}

/// The server as the active cycle's host: its dbs, and `db::delete_expired_key`
/// for each key the cycle finds expired -- the function lazy expiry calls
/// too, so a breakpoint there stops for both.
impl storage::expire::ExpireHost for Server {
    fn dbs(&mut self) -> &mut [storage::db::Db] {
        &mut self.dbs
    }
    fn delete_expired_key(&mut self, dbid: usize, key: &[u8]) {
        db::delete_expired_key(self, dbid, key);
    }
}
