//! DUMP and RESTORE: one key as an RDB payload (Redis keeps these in
//! cluster.c, next to MIGRATE, which moves keys between nodes with them;
//! redis-lite has no cluster yet, so they live here, named after what they
//! do). The payload format is `rdb::dump`; the LRU/LFU and TTL handling is
//! restoreCommand's.
//!
//! RESTORE reads bytes a client sent, so it is the hostile-input path:
//! the checksum is verified first, then the whole value is decoded into a
//! fresh object *before* the keyspace is touched. A corrupt payload is an
//! error reply and nothing changes.

use bytes::Bytes;

use crate::db::{db_add, db_delete, lookup_key_read, lookup_key_write, signal_modified_key};
use crate::networking::Client;
use crate::notify::notify_keyspace_event;
use crate::server::Server;
use crate::shared;
use storage::object::RObj;

/// DUMP key
// redis: cluster.c dumpCommand
pub fn dump_command(srv: &mut Server, c: &mut Client) {
    let compress = crate::rdb::rdb_compression(srv);
    let Some(o) = lookup_key_read(srv, c.db, c.arg(1)) else {
        return c.add_reply_null();
    };
    let payload = rdb::dump::create_dump_payload(o, compress);
    c.add_reply_bulk(&payload);
}

/// getLongLongFromObjectOrReply's strict parse.
fn parse_ll(c: &mut Client, i: usize) -> Option<i64> {
    match storage::util::string2ll(c.arg(i)) {
        Some(v) => Some(v),
        None => {
            c.add_reply_error(shared::NOT_INTEGER_ERR);
            None
        }
    }
}

/// RESTORE key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency]
// redis: cluster.c restoreCommand
pub fn restore_command(srv: &mut Server, c: &mut Client) {
    let (mut replace, mut absttl) = (false, false);
    let (mut lfu_freq, mut lru_idle, mut lru_clock) = (-1i64, -1i64, -1i64);
    let mut j = 4;
    while j < c.argc() {
        let additional = c.argc() - j - 1;
        let a = c.arg(j);
        if a.eq_ignore_ascii_case(b"replace") {
            replace = true;
        } else if a.eq_ignore_ascii_case(b"absttl") {
            absttl = true;
        } else if a.eq_ignore_ascii_case(b"idletime") && additional >= 1 && lfu_freq == -1 {
            let Some(v) = parse_ll(c, j + 1) else { return };
            if v < 0 {
                return c.add_reply_error("ERR Invalid IDLETIME value, must be >= 0");
            }
            lru_idle = v;
            lru_clock = i64::from(crate::server::lru_clock(srv));
            j += 1;
        } else if a.eq_ignore_ascii_case(b"freq") && additional >= 1 && lru_idle == -1 {
            let Some(v) = parse_ll(c, j + 1) else { return };
            if !(0..=255).contains(&v) {
                return c.add_reply_error("ERR Invalid FREQ value, must be >= 0 and <= 255");
            }
            lfu_freq = v;
            j += 1;
        } else {
            return c.add_reply_syntax_error();
        }
        j += 1;
    }

    // Make sure this key does not already exist here...
    let key = c.argv[1].clone();
    if !replace && lookup_key_write(srv, c.db, &key).is_some() {
        return c.add_reply_error("BUSYKEY Target key name already exists.");
    }
    let Some(mut ttl) = parse_ll(c, 2) else {
        return;
    };
    if ttl < 0 {
        return c.add_reply_error("ERR Invalid TTL value, must be >= 0");
    }

    // Verify the RDB version and the checksum, then decode it all.
    let skip = srv.rdb.skip_checksum_validation;
    if rdb::dump::verify_dump_payload(c.arg(3), skip).is_none() {
        return c.add_reply_error("ERR DUMP payload version or checksum are wrong");
    }
    let limits = crate::rdb::load_limits(srv);
    let deep = crate::rdb::deep_sanitize(srv, true);
    let (loaded, sanitized) = rdb::dump::load_dump_payload_counted(c.arg(3), limits, deep);
    srv.stats.dump_payload_sanitizations += sanitized;
    let value = match loaded {
        Ok(Some(v)) => v,
        // An empty collection or any decoding error.
        _ => return c.add_reply_error("ERR Bad data format"),
    };
    let mut obj = RObj::new(value, crate::evict::object_lru_init(srv));

    // Remove the old key if needed.
    let deleted = replace && db_delete(srv, c.db, &key);
    if ttl != 0 && !absttl {
        ttl += srv.cmd_time_snapshot;
        // Propagated with the absolute time: RESTORE key <ms> ... ABSTTL.
        crate::propagate::rewrite_client_command_argument(c, 2, Bytes::from(ttl.to_string()));
        let argc = c.argc();
        crate::propagate::rewrite_client_command_argument(c, argc, Bytes::from_static(b"ABSTTL"));
    }
    // checkAlreadyExpired: a TTL in the past restores nothing (but a
    // replaced key is still gone, seen as a DEL).
    if ttl != 0 && ttl <= srv.cmd_time_snapshot {
        if deleted {
            signal_modified_key(srv, c.db, &key);
            notify_keyspace_event(srv, crate::config::NOTIFY_GENERIC, "del", &key, c.db);
            srv.dirty += 1;
        }
        return c.add_reply_ok();
    }
    crate::object::object_set_lru_or_lfu(srv, &mut obj, lfu_freq, lru_idle, lru_clock, 1000);
    db_add(srv, c.db, &key, obj);
    if ttl != 0 {
        crate::db::set_expire(srv, c.db, &key, ttl);
    }
    signal_modified_key(srv, c.db, &key);
    notify_keyspace_event(srv, crate::config::NOTIFY_GENERIC, "restore", &key, c.db);
    c.add_reply_ok();
    srv.dirty += 1;
}
