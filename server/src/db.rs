//! The keyspace API and the key commands (Redis's db.c).
//!
//! Every command reaches keys through the lookup functions at the top of this
//! file, never through the dicts directly, because a lookup is where Redis
//! does its bookkeeping: lazy expiry (a key past its TTL is deleted on the
//! spot), keyspace hits/misses, and the LRU clock of the object.
//!
//! Below the lookups come the key commands, in db.c's order: DEL/UNLINK
//! (one loop, `del_generic_command`, freeing through `db_generic_delete`,
//! where UNLINK hands big values to `bio_lazy_free`), EXISTS/TYPE/TOUCH,
//! KEYS/SCAN/RANDOMKEY/DBSIZE,
//! RENAME/COPY/MOVE and SELECT/SWAPDB/FLUSHDB/FLUSHALL.
//!
//! Who expires what, as in Redis 7.0 -- worth a breakpoint each:
//! - KEYS walks the whole dict and *hides* expired keys (keyIsExpired);
//!   it never deletes, so it never writes.
//! - SCAN, EXISTS, TYPE, TOUCH, RANDOMKEY, DEL and the write commands
//!   *delete* an expired key when they meet it (expireIfNeeded).
//! - DBSIZE counts expired keys that nobody has deleted yet.

use storage::object::{RObj, ScanStep};

use crate::networking::{Client, CLIENT_CLOSE_ASAP};
use crate::notify::{
    notify_keyspace_event, NOTIFY_EXPIRED, NOTIFY_GENERIC, NOTIFY_KEY_MISS, NOTIFY_NEW,
};
use crate::server::Server;
use crate::shared;

// ---- lookups (db.c lookupKey*) ----

/// expireIfNeeded: delete `key` if its TTL has passed. Returns true when the
/// key is (now) gone because it had expired.
pub fn expire_if_needed(srv: &mut Server, dbid: usize, key: &[u8]) -> bool {
    expire_if_needed_ext(srv, dbid, key, false)
}

/// expireIfNeeded with its `force_delete_expired` argument (only a replica
/// looks at it).
pub fn expire_if_needed_ext(srv: &mut Server, dbid: usize, key: &[u8], force_delete: bool) -> bool {
    // Nothing expires while a dataset loads (keyIsExpired with
    // server.loading): later commands in an AOF saw these keys, and the
    // expire cycles wait for the load to end.
    if srv.loading.loading {
        return false;
    }
    let now = srv.cmd_time_snapshot;
    if !srv.dbs[dbid].key_is_expired(key, now) {
        return false;
    }
    // A replica leaves expiring to its master (replication/replica.rs).
    if let Some(expired) = crate::replication::replica::replica_expire_verdict(srv, force_delete) {
        return expired;
    }
    // While clients are paused the dataset stays as it is: the key reads as
    // missing but is deleted only after the pause.
    if crate::networking::check_client_pause_timeout_and_return_if_paused(srv) {
        return true;
    }
    delete_expired_key(srv, dbid, key);
    true
}

/// setExpire: give `key` a TTL. On a writable replica a client's key is
/// remembered, as only the replica itself will expire it
/// (replication/replica.rs expire_slave_keys).
// redis: db.c setExpire
pub fn set_expire(srv: &mut Server, dbid: usize, key: &[u8], when_ms: i64) {
    srv.dbs[dbid].set_expire(key, when_ms);
    crate::replication::replica::remember_slave_key_with_expire(srv, dbid, key);
}

/// deleteExpiredKeyAndPropagate: the key expired; remove it and count it.
/// The one place an expired key dies, whoever found it: lazy expiry
/// (`expire_if_needed`, from a lookup) and the active cycle
/// (`expire::active_expire_cycle`, through `storage::expire::ExpireHost`).
/// Timing the delete feeds the `expire-del` latency event: freeing a big
/// value inline is exactly the stall lazyfree-lazy-expire exists to avoid.
// redis: db.c deleteExpiredKeyAndPropagate
pub fn delete_expired_key(srv: &mut Server, dbid: usize, key: &[u8]) {
    let start = std::time::Instant::now();
    let lazy = srv.config.lazyfree_lazy_expire;
    db_generic_delete(srv, dbid, key, lazy, FreeCause::Expire);
    let ms = start.elapsed().as_millis() as u64;
    let threshold = srv.config.latency_monitor_threshold;
    srv.latency
        .add_sample_if_needed(threshold, "expire-del", ms);
    notify_keyspace_event(srv, NOTIFY_EXPIRED, "expired", key, dbid);
    signal_modified_key(srv, dbid, key);
    srv.stats.expiredkeys += 1;
    crate::propagate::propagate_deletion(srv, dbid, key, lazy);
}

// Flags of `lookup_key` (server.h LOOKUP_*), a plain bit set as in Redis.
/// No special behaviour: a read that counts, touches and notifies.
pub const LOOKUP_NONE: u32 = 0;
/// Leave the object's LRU clock / LFU counter alone: asking whether a key
/// exists (EXISTS, TYPE, OBJECT) is not "using" it.
pub const LOOKUP_NOTOUCH: u32 = 1 << 0;
/// No `keymiss` keyspace event on a miss (introspection).
pub const LOOKUP_NONOTIFY: u32 = 1 << 1;
/// Leave keyspace_hits / keyspace_misses alone.
pub const LOOKUP_NOSTATS: u32 = 1 << 2;
/// A lookup for writing: no hit/miss statistics and no `keymiss` event
/// (Redis reserves separate write stats for later).
pub const LOOKUP_WRITE: u32 = 1 << 3;
/// Report an expired key as missing but do not delete it.
pub const LOOKUP_NOEXPIRE: u32 = 1 << 4;

/// lookupKey: THE key lookup; every read and write of a key passes here
/// (set one breakpoint to see them all). In order: lazy expiry (a key past
/// its TTL is deleted now and reads as missing), the keymiss event and
/// hit/miss statistics, and the touch of the object's LRU clock (or LFU
/// counter), each switched off by one of the LOOKUP_* `flags`.
// redis: db.c lookupKey
pub fn lookup_key<'a>(
    srv: &'a mut Server,
    dbid: usize,
    key: &[u8],
    flags: u32,
) -> Option<&'a mut RObj> {
    let notify = flags & (LOOKUP_NONOTIFY | LOOKUP_WRITE) == 0;
    let stats = flags & (LOOKUP_NOSTATS | LOOKUP_WRITE) == 0;
    let expired = if flags & LOOKUP_NOEXPIRE != 0 {
        srv.dbs[dbid].key_is_expired(key, srv.cmd_time_snapshot)
    } else {
        // A write on a writable replica deletes the expired key (a read
        // only hides it): force_delete_expired.
        expire_if_needed_ext(srv, dbid, key, flags & LOOKUP_WRITE != 0)
    };
    if expired {
        if notify {
            notify_keyspace_event(srv, NOTIFY_KEY_MISS, "keymiss", key, dbid);
        }
        if stats {
            srv.stats.keyspace_misses += 1;
        }
        return None;
    }
    // The LRU clock, or the LFU counter under an LFU policy (evict.rs).
    let touch = (flags & LOOKUP_NOTOUCH == 0).then(|| crate::evict::ObjectTouch::of(srv));
    // A miss is notified before the lookup: the borrow it returns cannot be
    // released in its None arm. The flag test keeps hits at one dict probe.
    let keymiss = notify && srv.config.notify_keyspace_events & NOTIFY_KEY_MISS != 0;
    if keymiss && srv.dbs[dbid].dict.get(key).is_none() {
        notify_keyspace_event(srv, NOTIFY_KEY_MISS, "keymiss", key, dbid);
    }
    match srv.dbs[dbid].dict.find(key) {
        Some(o) => {
            if stats {
                srv.stats.keyspace_hits += 1;
            }
            if let Some(touch) = touch {
                touch.touch(o);
            }
            Some(o)
        }
        None => {
            if stats {
                srv.stats.keyspace_misses += 1;
            }
            None
        }
    }
}

/// lookupKeyRead: `lookup_key` for a read, no flags.
// redis: db.c lookupKeyRead
pub fn lookup_key_read<'a>(srv: &'a mut Server, dbid: usize, key: &[u8]) -> Option<&'a mut RObj> {
    lookup_key(srv, dbid, key, LOOKUP_NONE)
}

/// lookupKeyReadWithFlags: a read with some LOOKUP_* flags (never
/// LOOKUP_WRITE). EXISTS, TYPE and SCAN's TYPE filter pass LOOKUP_NOTOUCH.
// redis: db.c lookupKeyReadWithFlags
pub fn lookup_key_read_with_flags<'a>(
    srv: &'a mut Server,
    dbid: usize,
    key: &[u8],
    flags: u32,
) -> Option<&'a mut RObj> {
    debug_assert!(flags & LOOKUP_WRITE == 0);
    lookup_key(srv, dbid, key, flags)
}

/// lookupKeyWrite: `lookup_key` with LOOKUP_WRITE (no hit/miss accounting).
// redis: db.c lookupKeyWrite
pub fn lookup_key_write<'a>(srv: &'a mut Server, dbid: usize, key: &[u8]) -> Option<&'a mut RObj> {
    lookup_key(srv, dbid, key, LOOKUP_WRITE)
}

/// setKey: store `val` under `key` (replacing any value). The TTL is removed
/// unless `keep_ttl`. The old value, if any, is freed here.
pub fn set_key(srv: &mut Server, dbid: usize, key: &[u8], mut val: RObj, keep_ttl: bool) {
    // dbOverwrite: under an LFU policy the new value keeps the old one's
    // access frequency.
    if crate::evict::policy_is_lfu(srv.config.maxmemory_policy) {
        if let Some(old) = srv.dbs[dbid].dict.get(key) {
            val.lru = old.lru;
        }
    }
    let old = srv.dbs[dbid].set_value(key, val, keep_ttl);
    if let Some(old) = &old {
        crate::blocked::signal_deleted_key_as_ready(srv, dbid, key, &old.value);
    }
    if old.is_none() {
        // setKey -> dbAdd: the key is new.
        notify_keyspace_event(srv, NOTIFY_NEW, "new", key, dbid);
    }
    if let Some(old) = old {
        // dbSetValue: the overwritten value goes to the lazy-free thread
        // with lazyfree-lazy-server-del (if it is big enough).
        let lazy = srv.config.lazyfree_lazy_server_del;
        free_object(srv, key, old, lazy, FreeCause::Overwrite);
    }
    signal_modified_key(srv, dbid, key);
}

/// Free a value that left the keyspace: on the `bio_lazy_free` thread when
/// `lazy` and its free effort is over LAZYFREE_THRESHOLD (freeObjAsync),
/// here and now otherwise (decrRefCount). `key` and `cause` are for the
/// lazy-free log only (one relaxed load while it is off).
pub fn free_object(srv: &Server, key: &[u8], val: RObj, lazy: bool, cause: FreeCause) {
    if lazyfree::log::on() {
        return free_object_logged(srv, key, val, lazy, cause);
    }
    if lazy {
        srv.lazyfree.free_object_async(val, None);
    } else {
        drop(val);
    }
}

/// Why a value leaves the keyspace, as the lazy-free log names it, and the
/// config that decides whether that path frees lazily.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FreeCause {
    /// DEL, UNLINK, GETDEL.
    Del,
    /// A command's implicit delete (RENAME's target, an emptied collection).
    ServerDel,
    /// SET and the like replaced the value.
    Overwrite,
    Expire,
    Evict,
    /// FLUSHDB / FLUSHALL (one entry per database).
    Flush,
}

impl FreeCause {
    pub fn name(self) -> &'static str {
        match self {
            FreeCause::Del => "del",
            FreeCause::ServerDel => "server-del",
            FreeCause::Overwrite => "overwrite",
            FreeCause::Expire => "expire",
            FreeCause::Evict => "evict",
            FreeCause::Flush => "flush",
        }
    }

    /// The config that makes this path lazy.
    pub fn config(self) -> &'static str {
        match self {
            FreeCause::Del => "lazyfree-lazy-user-del",
            FreeCause::ServerDel | FreeCause::Overwrite => "lazyfree-lazy-server-del",
            FreeCause::Expire => "lazyfree-lazy-expire",
            FreeCause::Evict => "lazyfree-lazy-eviction",
            FreeCause::Flush => "lazyfree-lazy-user-flush",
        }
    }

    /// Why a free ran on the main thread although it could have been lazy.
    fn why_sync(self) -> String {
        match self {
            FreeCause::Flush => "SYNC (or lazyfree-lazy-user-flush no)".to_string(),
            _ => format!("lazy free off ({} no)", self.config()),
        }
    }
}

/// `free_object` while the lazy-free log is on: the same decision, timed
/// when it runs here, and one entry in the log (lazyfree/src/log.rs).
fn free_object_logged(srv: &Server, key: &[u8], val: RObj, lazy: bool, cause: FreeCause) {
    use lazyfree::log::{self, FreeNote, FreedIn};
    let effort = lazyfree::lazyfree_get_free_effort(&val) as u64;
    let note = |freed_in, why, duration_us| FreeNote {
        key: key.to_vec(),
        type_name: val.type_name(),
        encoding: val.encoding_name(),
        effort,
        cause: cause.name(),
        command: storage::encoding_log::context_command(),
        freed_in,
        why,
        duration_us,
    };
    let (bio, main) = (
        note(
            FreedIn::Bio,
            format!(
                "effort {effort} > LAZYFREE_THRESHOLD {}",
                lazyfree::LAZYFREE_THRESHOLD
            ),
            None,
        ),
        note(
            FreedIn::Main,
            if lazy {
                format!(
                    "effort {effort} <= LAZYFREE_THRESHOLD {}",
                    lazyfree::LAZYFREE_THRESHOLD
                )
            } else {
                cause.why_sync()
            },
            None,
        ),
    );
    let start = std::time::Instant::now();
    if lazy {
        // Inline when the effort is small: then false, and timed below.
        if srv.lazyfree.free_object_async(val, Some(bio)) {
            return;
        }
    } else {
        drop(val);
    }
    log::push(FreeNote {
        duration_us: Some(start.elapsed().as_micros() as u64),
        ..main
    });
}

/// dbAdd: the caller checked that the key is absent.
pub fn db_add(srv: &mut Server, dbid: usize, key: &[u8], val: RObj) {
    srv.dbs[dbid].add(key.into(), val);
    signal_modified_key(srv, dbid, key);
    // A new key may be what a blocked client waits for (signalKeyAsReady).
    crate::blocked::signal_key_as_ready(srv, dbid, key);
    notify_keyspace_event(srv, NOTIFY_NEW, "new", key, dbid);
}

/// dbSyncDelete: remove the key and free its value on this thread.
/// Returns whether the key existed.
pub fn db_sync_delete(srv: &mut Server, dbid: usize, key: &[u8]) -> bool {
    match srv.dbs[dbid].delete(key) {
        Some(val) => {
            crate::blocked::signal_deleted_key_as_ready(srv, dbid, key, &val.value);
            drop(val);
            true
        }
        None => false,
    }
}

/// signalModifiedKey: every write to a key passes through here. It makes
/// the EXEC of clients WATCHing the key fail, and tells the clients that
/// may cache the key (tracking.rs trackingInvalidateKey).
pub fn signal_modified_key(srv: &mut Server, dbid: usize, key: &[u8]) {
    crate::multi::touch_watched_key(srv, dbid, key);
    crate::tracking::tracking_invalidate_key(srv, key, true);
}

/// checkType: the value of the wanted type out of a looked-up object.
/// Ok(None) when the key is missing; a WRONGTYPE reply and Err(()) when it
/// holds another type. `project` picks the type (e.g. `Value::Hash`).
pub(crate) fn check_type<'a, T>(
    c: &mut Client,
    o: Option<&'a mut RObj>,
    project: fn(&mut RObj) -> Option<&mut T>,
) -> Result<Option<&'a mut T>, ()> {
    match o.map(project) {
        None => Ok(None),
        Some(Some(v)) => Ok(Some(v)),
        Some(None) => {
            c.add_reply_wrongtype();
            Err(())
        }
    }
}

/// A new object with the current LRU clock (or a fresh LFU counter under
/// an LFU policy: createObject).
pub fn new_object(srv: &Server, value: storage::object::Value) -> RObj {
    RObj::new(value, crate::evict::object_lru_init(srv))
}

/// dbGenericDelete: remove `key` from the keyspace (and its TTL). Returns
/// whether the key existed. `lazy` is the DEL / UNLINK difference; the key
/// and its dict entry are always freed synchronously.
pub fn db_generic_delete(
    srv: &mut Server,
    dbid: usize,
    key: &[u8],
    lazy: bool,
    cause: FreeCause,
) -> bool {
    let Some(val) = srv.dbs[dbid].delete(key) else {
        return false;
    };
    crate::blocked::signal_deleted_key_as_ready(srv, dbid, key, &val.value);
    // UNLINK (lazy): a value whose free effort is over LAZYFREE_THRESHOLD
    // goes to `bio_lazy_free` (lazyfree.c freeObjAsync); anything cheaper,
    // and everything for DEL, is freed right here: for a 1M-member set that
    // is a million deallocations while every other client waits.
    free_object(srv, key, val, lazy, cause);
    true
}

/// dbDelete: an implicit delete done by a command (RENAME's target, a
/// *STORE destination, a collection that became empty): freed lazily when
/// `lazyfree-lazy-server-del` is on, as Redis does.
pub fn db_delete(srv: &mut Server, dbid: usize, key: &[u8]) -> bool {
    let lazy = srv.config.lazyfree_lazy_server_del;
    db_generic_delete(srv, dbid, key, lazy, FreeCause::ServerDel)
}

/// getIntFromObjectOrReply with no custom message: a long long that must
/// also fit in a C int (SELECT, MOVE, COPY ... DB).
pub fn get_int_from_arg(arg: &[u8]) -> Result<i32, &'static str> {
    let v = storage::util::string2ll(arg).ok_or(shared::NOT_INTEGER_ERR)?;
    i32::try_from(v)
        .map_err(|_| "ERR value is out of range, value must between -2147483648 and 2147483647")
}

/// Parse a db index argument the way SELECT/MOVE/COPY do: an int
/// (getIntFromObjectOrReply), then selectDb's range check.
pub fn parse_db_index(srv: &Server, arg: &[u8]) -> Result<usize, &'static str> {
    let id = get_int_from_arg(arg)?;
    if id < 0 || id as usize >= srv.dbs.len() {
        return Err("ERR DB index is out of range");
    }
    Ok(id as usize)
}

/// shared.sameobjecterr.
const SAME_OBJECT_ERR: &str = "ERR source and destination objects are the same";

// ---- DEL / UNLINK / EXISTS / TYPE / TOUCH ----

/// delGenericCommand: the loop shared by DEL (`lazy = false`) and UNLINK
/// (`lazy = true`). Each key is first given the chance to expire, so a
/// logically expired key counts as "not deleted" (and as an expired key).
pub fn del_generic_command(srv: &mut Server, c: &mut Client, lazy: bool) {
    let dbid = c.db;
    let mut numdel = 0;
    // One key per iteration, in argument order: DEL a b c is three
    // deletions, each finished (events, WATCH) before the next starts.
    for key in &c.argv[1..] {
        // Expire first: a key whose TTL passed is already gone for every
        // reader, so DEL must not count it. On a master expireIfNeeded
        // deletes it as an expiry ("expired" event, expired_keys, a DEL
        // propagated on its own), which is what replicas and the AOF must
        // see; DEL then finds nothing and answers 0 for it.
        expire_if_needed(srv, dbid, key);
        // `lazy` only decides who frees the value: this thread now, or
        // bio_lazy_free later (free_object_async, for a big value). The key
        // leaves the keyspace now either way, so the next command misses it.
        if db_generic_delete(srv, dbid, key, lazy, FreeCause::Del) {
            // The three things every write does: make WATCHers' EXEC fail
            // and tell tracking clients (signalModifiedKey), tell keyspace
            // subscribers, and count a change for `save` points and for
            // call()'s "did this command write?" propagation test.
            signal_modified_key(srv, dbid, key);
            notify_keyspace_event(srv, NOTIFY_GENERIC, "del", key, dbid);
            srv.dirty += 1;
            numdel += 1;
        }
    }
    c.add_reply_integer(numdel);
}

/// DEL key [key ...]
// redis: db.c delCommand
pub fn del_command(srv: &mut Server, c: &mut Client) {
    // lazyfree-lazy-user-del yes makes DEL behave as UNLINK.
    let lazy = srv.config.lazyfree_lazy_user_del;
    del_generic_command(srv, c, lazy);
}

/// UNLINK key [key ...]
// redis: db.c unlinkCommand
pub fn unlink_command(srv: &mut Server, c: &mut Client) {
    del_generic_command(srv, c, true);
}

/// EXISTS key [key ...]
// redis: db.c existsCommand
pub fn exists_command(srv: &mut Server, c: &mut Client) {
    // A key named twice counts twice: EXISTS a a -> 2.
    let mut count = 0;
    for key in &c.argv[1..] {
        if lookup_key_read_with_flags(srv, c.db, key, LOOKUP_NOTOUCH).is_some() {
            count += 1;
        }
    }
    c.add_reply_integer(count);
}

/// TYPE key
// redis: db.c typeCommand
pub fn type_command(srv: &mut Server, c: &mut Client) {
    let name = match lookup_key_read_with_flags(srv, c.db, &c.argv[1], LOOKUP_NOTOUCH) {
        Some(o) => o.type_name(),
        None => "none",
    };
    c.add_reply_status(name.as_bytes());
}

/// TOUCH key [key ...]
// redis: db.c touchCommand
pub fn touch_command(srv: &mut Server, c: &mut Client) {
    // A normal read lookup: it is the LRU update that TOUCH is for.
    let mut touched = 0;
    for key in &c.argv[1..] {
        if lookup_key_read(srv, c.db, key).is_some() {
            touched += 1;
        }
    }
    c.add_reply_integer(touched);
}

// ---- KEYS / SCAN / RANDOMKEY / DBSIZE ----

/// KEYS pattern
// redis: db.c keysCommand
pub fn keys_command(srv: &mut Server, c: &mut Client) {
    // A clone of the pattern (a refcount bump, not a copy): the loop borrows
    // the db from `srv` while the reply is written to `c`.
    let pattern = c.argv[1].clone();
    // `*` alone matches everything: skip the matcher (the walk stays O(N)).
    let allkeys = &pattern[..] == b"*";
    // The command's time, taken once in process_command: every key is
    // judged against the same "now", so one KEYS is one consistent view
    // even if the walk takes seconds.
    let now = srv.cmd_time_snapshot;
    // A shared borrow: KEYS only reads, and the compiler holds us to it.
    // This walk is the lesson: O(N) in the number of keys, with no yield to
    // the event loop, so every other client waits until it ends (SCAN cuts
    // the same walk into slices).
    let db = &srv.dbs[c.db];

    // The reply length is only known at the end: a deferred length, a
    // placeholder the header replaces once the walk is over. Each key goes
    // straight into the reply list, so the output buffer limits are checked
    // as the reply grows, key by key, as in Redis.
    let replylen = c.add_reply_deferred_len();
    let mut numkeys = 0;
    // Walk the whole dict: one key per iteration, whatever the pattern.
    for (key, _val) in db.dict.iter() {
        if allkeys || storage::util::string_match(&pattern, key, false) {
            // A logically expired key is hidden, but NOT deleted: KEYS
            // never writes (keyIsExpired, not expireIfNeeded).
            if !db.key_is_expired(key, now) {
                c.add_reply_bulk(key);
                numkeys += 1;
            }
        }
        // Over its output buffer limit the client is closed: stop the walk
        // mid-run, nobody will read the rest.
        if c.has_flag(CLIENT_CLOSE_ASAP) {
            break;
        }
    }
    c.set_deferred_array_len(replylen, numkeys);
}

/// parseScanCursorOrReply: the cursor is read with C's strtoul, so "-1"
/// wraps to 2^64-1, "+3" and "007" are accepted and "" is 0; a leading
/// space, trailing junk or overflow is an invalid cursor.
pub fn parse_scan_cursor(arg: &[u8]) -> Option<u64> {
    let (negative, digits) = match arg.first() {
        Some(b'-') => (true, &arg[1..]),
        Some(b'+') => (false, &arg[1..]),
        _ => (false, arg),
    };
    let mut v: u64 = 0;
    for &b in digits {
        if !b.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
    }
    // strtoul("") and strtoul("-") parse nothing and return 0.
    Some(if negative { v.wrapping_neg() } else { v })
}

/// SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]
// redis: db.c scanCommand
pub fn scan_command(srv: &mut Server, c: &mut Client) {
    let Some(cursor) = parse_scan_cursor(c.arg(1)) else {
        c.add_reply_error(shared::INVALID_CURSOR_ERR);
        return;
    };
    scan_generic_command(srv, c, None, cursor);
}

/// The empty reply of SSCAN/HSCAN/ZSCAN on a missing key: cursor 0, no
/// elements (Redis: shared.emptyscan).
pub fn add_reply_empty_scan(c: &mut Client) {
    c.add_reply_array_len(2);
    c.add_reply_bulk(b"0");
    c.add_reply_array_len(0);
}

/// scanGenericCommand: the one SCAN loop, for SCAN (`key` None: the
/// keyspace) and for SSCAN, HSCAN and ZSCAN (`key`: a set, hash or sorted
/// set the caller already looked up and type-checked, as Redis's callers
/// do before passing `o`). Four steps, as in Redis:
/// 1. parse MATCH / COUNT / TYPE;
/// 2. collect: dictScan steps until COUNT elements were gathered, the
///    cursor wrapped to 0, or COUNT*10 steps found too little (a sparse
///    table must not block the server). A compact encoding comes back
///    whole in one step (`storage::object::ScanStep::Whole`);
/// 3. filter what was collected: MATCH, then for SCAN the TYPE and expiry;
/// 4. reply [cursor, [elements...]].
///
/// COUNT is a hint about work, not a promise about the reply: a step emits
/// whole buckets (while a dict rehashes, a small-table bucket and all its
/// expansions in the big table), and MATCH filters after collecting.
// redis: db.c scanGenericCommand
pub fn scan_generic_command(srv: &mut Server, c: &mut Client, key: Option<&[u8]>, cursor: u64) {
    // Step 1: options start after the cursor (and the key, if any).
    let opts = match parse_scan_options_from(c, if key.is_none() { 2 } else { 3 }, key.is_none()) {
        Ok(o) => o,
        Err(e) => return c.add_reply_error(e),
    };
    let dbid = c.db;

    // Step 2: collect. The value is borrowed plainly (dict.get): the
    // caller's lookup already expired it and counted the hit.
    let mut cursor = cursor;
    let mut items: Vec<Vec<u8>> = Vec::new();
    let db = &srv.dbs[dbid];
    let value = key.and_then(|k| db.dict.get(k)).map(|o| &o.value);
    let per_element = value.map_or(1, storage::object::object_scan_items_per_element);
    let step = |cursor: u64, out: &mut Vec<Vec<u8>>| match value {
        None => ScanStep::Bucket(db.dict.scan(cursor, |k, _| out.push(k.to_vec()))),
        Some(v) => storage::object::object_scan(v, cursor, out).unwrap_or(ScanStep::Whole),
    };
    // COUNT counts elements; a hash or zset element is two items.
    let count = opts.count.saturating_mul(per_element as i64);
    let mut maxiterations = count.saturating_mul(10);
    loop {
        match step(cursor, &mut items) {
            ScanStep::Whole => {
                cursor = 0;
                break;
            }
            ScanStep::Bucket(next) => cursor = next,
        }
        if cursor == 0 || maxiterations == 0 || items.len() as i64 >= count {
            break;
        }
        maxiterations -= 1;
    }

    // Step 3: filter. MATCH looks at the key, member or field; a field's
    // value (a member's score) goes with it.
    let mut reply: Vec<Vec<u8>> = Vec::with_capacity(items.len());
    for element in items.chunks_exact(per_element) {
        let name = &element[0];
        if let Some(pat) = &opts.pattern {
            if !storage::util::string_match(pat, name, false) {
                continue;
            }
        }
        if key.is_none() {
            if let Some(want) = &opts.typename {
                // 7.0: an unknown type name simply matches nothing.
                let found = lookup_key_read_with_flags(srv, dbid, name, LOOKUP_NOTOUCH)
                    .map_or("none", |o| o.type_name());
                if !want.eq_ignore_ascii_case(found.as_bytes()) {
                    continue;
                }
            }
            // Unlike KEYS, SCAN deletes the expired keys it meets.
            if expire_if_needed(srv, dbid, name) {
                continue;
            }
        }
        reply.extend_from_slice(element);
    }

    // Step 4: [cursor, [elements...]].
    c.add_reply_array_len(2);
    c.add_reply_bulk(cursor.to_string().as_bytes());
    c.add_reply_array_len(reply.len());
    for item in &reply {
        c.add_reply_bulk(item);
    }
}

/// SCAN's options after the cursor.
pub struct ScanOptions {
    pub count: i64,
    /// None when there is no MATCH or the pattern is `*`.
    pub pattern: Option<bytes::Bytes>,
    pub typename: Option<bytes::Bytes>,
}

/// The options loop of scanGenericCommand from argument `first` on; TYPE
/// only for SCAN itself (`keyspace`), as in 7.0 (SSCAN/HSCAN/ZSCAN: syntax
/// error).
fn parse_scan_options_from(
    c: &Client,
    first: usize,
    keyspace: bool,
) -> Result<ScanOptions, &'static str> {
    let mut opts = ScanOptions {
        count: 10,
        pattern: None,
        typename: None,
    };
    let mut i = first;
    while i < c.argc() {
        let opt = c.arg(i);
        let has_value = i + 1 < c.argc();
        if opt.eq_ignore_ascii_case(b"count") && has_value {
            let n = storage::util::string2ll(c.arg(i + 1)).ok_or(shared::NOT_INTEGER_ERR)?;
            if n < 1 {
                return Err(shared::SYNTAX_ERR);
            }
            opts.count = n;
        } else if opt.eq_ignore_ascii_case(b"match") && has_value {
            let pat = c.argv[i + 1].clone();
            opts.pattern = if &pat[..] == b"*" { None } else { Some(pat) };
        } else if opt.eq_ignore_ascii_case(b"type") && has_value && keyspace {
            opts.typename = Some(c.argv[i + 1].clone());
        } else {
            return Err(shared::SYNTAX_ERR);
        }
        i += 2;
    }
    Ok(opts)
}

/// RANDOMKEY
// redis: db.c randomkeyCommand / dbRandomKey
pub fn randomkey_command(srv: &mut Server, c: &mut Client) {
    let dbid = c.db;
    // Draw until the key drawn is not logically expired; an expired one is
    // deleted on the way (so this loop ends: the dict shrinks each time).
    // On a replica expired keys stay: after 100 of them, return one anyway
    // (Redis's maxtries for an all-volatile replica).
    let mut maxtries = 100;
    let key = loop {
        let Some((key, _)) = srv.dbs[dbid].dict.random_entry() else {
            break None;
        };
        let key = key.to_vec();
        if srv.repl.masterhost.is_some() {
            maxtries -= 1;
            if maxtries == 0 {
                break Some(key);
            }
        }
        if srv.dbs[dbid].get_expire(&key).is_some() && expire_if_needed(srv, dbid, &key) {
            continue;
        }
        break Some(key);
    };
    match key {
        Some(k) => c.add_reply_bulk(&k),
        None => c.add_reply_null(),
    }
}

/// DBSIZE
// redis: db.c dbsizeCommand
pub fn dbsize_command(srv: &mut Server, c: &mut Client) {
    // Logically expired keys not yet deleted are counted.
    c.add_reply_integer(srv.dbs[c.db].size() as i64);
}

// ---- RENAME / RENAMENX / COPY / MOVE ----

/// renameGenericCommand: RENAME (`nx = false`) and RENAMENX.
fn rename_generic_command(srv: &mut Server, c: &mut Client, nx: bool) {
    let dbid = c.db;
    let (src, dst) = (c.argv[1].clone(), c.argv[2].clone());
    if lookup_key_write(srv, dbid, &src).is_none() {
        c.add_reply_error(shared::NO_SUCH_KEY_ERR);
        return;
    }
    // Renaming a key to itself: nothing to do (but it had to exist).
    if src == dst {
        if nx {
            c.add_reply_integer(0)
        } else {
            c.add_reply_ok()
        }
        return;
    }
    let expire = srv.dbs[dbid].get_expire(&src);
    if lookup_key_write(srv, dbid, &dst).is_some() {
        if nx {
            c.add_reply_integer(0);
            return;
        }
        // Overwrite: the old destination value is deleted first.
        db_delete(srv, dbid, &dst);
    }
    // The value object moves as is (same LRU); the TTL moves with it.
    let Some(val) = srv.dbs[dbid].delete(&src) else {
        return;
    };
    crate::blocked::signal_deleted_key_as_ready(srv, dbid, &src, &val.value);
    db_add(srv, dbid, &dst, val);
    if let Some(when) = expire {
        crate::db::set_expire(srv, dbid, &dst, when);
    }
    signal_modified_key(srv, dbid, &src);
    notify_keyspace_event(srv, NOTIFY_GENERIC, "rename_from", &src, dbid);
    notify_keyspace_event(srv, NOTIFY_GENERIC, "rename_to", &dst, dbid);
    srv.dirty += 1;
    if nx {
        c.add_reply_integer(1)
    } else {
        c.add_reply_ok()
    }
}

/// RENAME key newkey
// redis: db.c renameCommand
pub fn rename_command(srv: &mut Server, c: &mut Client) {
    rename_generic_command(srv, c, false);
}

/// RENAMENX key newkey
// redis: db.c renamenxCommand
pub fn renamenx_command(srv: &mut Server, c: &mut Client) {
    rename_generic_command(srv, c, true);
}

/// COPY source destination [DB destination-db] [REPLACE]
// redis: db.c copyCommand
pub fn copy_command(srv: &mut Server, c: &mut Client) {
    let (srcid, mut dstid, mut replace) = (c.db, c.db, false);
    let mut j = 3;
    while j < c.argc() {
        if c.arg(j).eq_ignore_ascii_case(b"replace") {
            replace = true;
        } else if c.arg(j).eq_ignore_ascii_case(b"db") && j + 1 < c.argc() {
            match parse_db_index(srv, c.arg(j + 1)) {
                Ok(id) => dstid = id,
                Err(e) => return c.add_reply_error(e),
            }
            j += 1;
        } else {
            return c.add_reply_syntax_error();
        }
        j += 1;
    }
    if srv.cluster.is_some() && (srcid != 0 || dstid != 0) {
        return c.add_reply_error("ERR Copying to another database is not allowed in cluster mode");
    }
    let (src, dst) = (c.argv[1].clone(), c.argv[2].clone());
    if srcid == dstid && src == dst {
        return c.add_reply_error(SAME_OBJECT_ERR);
    }
    // dupStringObject & co: a fresh object (new LRU, refcount 1).
    let lru = crate::evict::object_lru_init(srv);
    let Some(newobj) = lookup_key_read(srv, srcid, &src).map(|o| dup_object(o, lru)) else {
        return c.add_reply_integer(0);
    };
    let expire = srv.dbs[srcid].get_expire(&src);
    if lookup_key_write(srv, dstid, &dst).is_some() {
        if !replace {
            return c.add_reply_integer(0);
        }
        db_delete(srv, dstid, &dst);
    }
    db_add(srv, dstid, &dst, newobj);
    if let Some(when) = expire {
        crate::db::set_expire(srv, dstid, &dst, when);
    }
    notify_keyspace_event(srv, NOTIFY_GENERIC, "copy_to", &dst, dstid);
    srv.dirty += 1;
    c.add_reply_integer(1);
}

/// A deep copy of a value with a fresh LRU clock (COPY's per-type dup).
pub fn dup_object(o: &RObj, lru: u32) -> RObj {
    let value = match &o.value {
        storage::object::Value::Str(s) => storage::object::Value::Str(s.clone()),
        storage::object::Value::List(ql) => crate::t_list::list_dup(ql),
        storage::object::Value::Set(s) => {
            storage::object::Value::Set(storage::t_set::set_type_dup(s))
        }
        storage::object::Value::ZSet(z) => storage::object::Value::ZSet(z.dup()),
        storage::object::Value::Hash(h) => {
            storage::object::Value::Hash(storage::t_hash::hash_type_dup(h))
        }
        storage::object::Value::Stream(s) => crate::t_stream::stream_dup(s),
    };
    RObj::new(value, lru)
}

/// MOVE key db
// redis: db.c moveCommand
pub fn move_command(srv: &mut Server, c: &mut Client) {
    if srv.cluster.is_some() {
        return c.add_reply_error("ERR MOVE is not allowed in cluster mode");
    }
    let srcid = c.db;
    let dstid = match parse_db_index(srv, c.arg(2)) {
        Ok(id) => id,
        Err(e) => return c.add_reply_error(e),
    };
    if srcid == dstid {
        return c.add_reply_error(SAME_OBJECT_ERR);
    }
    let key = c.argv[1].clone();
    if lookup_key_write(srv, srcid, &key).is_none() {
        return c.add_reply_integer(0);
    }
    let expire = srv.dbs[srcid].get_expire(&key);
    // The target must not have the key already.
    if lookup_key_write(srv, dstid, &key).is_some() {
        return c.add_reply_integer(0);
    }
    // The same object changes db: no copy, LRU kept.
    let Some(val) = srv.dbs[srcid].delete(&key) else {
        return c.add_reply_integer(0);
    };
    crate::blocked::signal_deleted_key_as_ready(srv, srcid, &key, &val.value);
    db_add(srv, dstid, &key, val);
    if let Some(when) = expire {
        crate::db::set_expire(srv, dstid, &key, when);
    }
    signal_modified_key(srv, srcid, &key);
    notify_keyspace_event(srv, NOTIFY_GENERIC, "move_from", &key, srcid);
    notify_keyspace_event(srv, NOTIFY_GENERIC, "move_to", &key, dstid);
    srv.dirty += 1;
    c.add_reply_integer(1);
}

// ---- SELECT / SWAPDB / FLUSHDB / FLUSHALL ----

/// SELECT index
// redis: db.c selectCommand
pub fn select_command(srv: &mut Server, c: &mut Client) {
    // Cluster mode has db 0 only.
    if srv.cluster.is_some() {
        match get_int_from_arg(c.arg(1)) {
            Err(e) => return c.add_reply_error(e),
            Ok(id) if id != 0 => {
                return c.add_reply_error("ERR SELECT is not allowed in cluster mode")
            }
            Ok(_) => {}
        }
    }
    match parse_db_index(srv, c.arg(1)) {
        Ok(id) => {
            c.db = id;
            c.add_reply_ok();
        }
        Err(e) => c.add_reply_error(e),
    }
}

/// SWAPDB index1 index2
// redis: db.c swapdbCommand / dbSwapDatabases
pub fn swapdb_command(srv: &mut Server, c: &mut Client) {
    // Not allowed in cluster mode: there is db 0 only.
    if srv.cluster.is_some() {
        return c.add_reply_error("ERR SWAPDB is not allowed in cluster mode");
    }
    // Any parse failure gets SWAPDB's own message, not the generic one.
    let Ok(id1) = get_int_from_arg(c.arg(1)) else {
        return c.add_reply_error("ERR invalid first DB index");
    };
    let Ok(id2) = get_int_from_arg(c.arg(2)) else {
        return c.add_reply_error("ERR invalid second DB index");
    };
    let n = srv.dbs.len() as i32;
    if id1 < 0 || id1 >= n || id2 < 0 || id2 >= n {
        return c.add_reply_error("ERR DB index is out of range");
    }
    let (a, b) = (id1 as usize, id2 as usize);
    if a != b {
        // Swap the contents, not the db numbers: clients that SELECTed db a
        // now see what was in db b.
        // WATCHers of keys in either db see them change.
        crate::multi::touch_all_watched_keys_in_db(srv, a, Some(b));
        crate::multi::touch_all_watched_keys_in_db(srv, b, Some(a));
        // XREADGROUP readers of a stream that goes away get their error.
        crate::blocked::scan_database_for_deleted_streams(srv, a, Some(b));
        crate::blocked::scan_database_for_deleted_streams(srv, b, Some(a));
        let (lo, hi) = (a.min(b), a.max(b));
        let (left, right) = srv.dbs.split_at_mut(hi);
        let (x, y) = (&mut left[lo], &mut right[0]);
        std::mem::swap(&mut x.dict, &mut y.dict);
        std::mem::swap(&mut x.expires, &mut y.expires);
        std::mem::swap(&mut x.avg_ttl, &mut y.avg_ttl);
        std::mem::swap(&mut x.expires_cursor, &mut y.expires_cursor);
        // Clients blocked on keys of either db may find data now.
        crate::blocked::scan_database_for_ready_keys(srv, a);
        crate::blocked::scan_database_for_ready_keys(srv, b);
    }
    srv.dirty += 1;
    c.add_reply_ok();
}

/// getFlushCommandFlags: `[ASYNC|SYNC]`, nothing else. Returns whether to
/// flush asynchronously; with no argument, lazyfree-lazy-user-flush decides.
fn get_flush_command_flags(srv: &Server, c: &Client) -> Option<bool> {
    match c.argc() {
        1 => Some(srv.config.lazyfree_lazy_user_flush),
        2 if c.arg(1).eq_ignore_ascii_case(b"sync") => Some(false),
        2 if c.arg(1).eq_ignore_ascii_case(b"async") => Some(true),
        _ => None,
    }
}

/// emptyDb for one database: SYNC frees every key right here, on the main
/// thread (everyone waits); ASYNC swaps in empty tables at once and hands
/// the old ones to `bio_lazy_free` (emptyDbAsync). Returns the key count.
fn empty_db(srv: &mut Server, dbid: usize, lazy: bool) -> usize {
    // signalFlushedDb: WATCHers of keys in this db see them change.
    crate::multi::touch_all_watched_keys_in_db(srv, dbid, None);
    crate::blocked::scan_database_for_deleted_streams(srv, dbid, None);
    let removed = srv.dbs[dbid].size();
    if lazyfree::log::on() && removed > 0 {
        return empty_db_logged(srv, dbid, lazy, removed);
    }
    if lazy {
        let (dict, expires) = srv.dbs[dbid].take_tables();
        srv.lazyfree.free_database_async(dict, expires, None);
    } else {
        srv.dbs[dbid].empty();
    }
    removed
}

/// `empty_db`'s free with the lazy-free log on: one entry for the whole
/// database (its key count as the effort), not one per key.
fn empty_db_logged(srv: &mut Server, dbid: usize, lazy: bool, removed: usize) -> usize {
    use lazyfree::log::{self, FreeNote, FreedIn};
    let note = FreeNote {
        key: format!("(db {dbid})").into_bytes(),
        type_name: "database",
        encoding: "dict",
        effort: removed as u64,
        cause: FreeCause::Flush.name(),
        command: storage::encoding_log::context_command(),
        freed_in: if lazy { FreedIn::Bio } else { FreedIn::Main },
        why: if lazy {
            "ASYNC (or lazyfree-lazy-user-flush yes)".to_string()
        } else {
            FreeCause::Flush.why_sync()
        },
        duration_us: None,
    };
    if lazy {
        let (dict, expires) = srv.dbs[dbid].take_tables();
        srv.lazyfree.free_database_async(dict, expires, Some(note));
    } else {
        let start = std::time::Instant::now();
        srv.dbs[dbid].empty();
        log::push(FreeNote {
            duration_us: Some(start.elapsed().as_micros() as u64),
            ..note
        });
    }
    removed
}

/// FLUSHDB [ASYNC|SYNC]
// redis: db.c flushdbCommand
pub fn flushdb_command(srv: &mut Server, c: &mut Client) {
    let Some(lazy) = get_flush_command_flags(srv, c) else {
        return c.add_reply_syntax_error();
    };
    // signalFlushedDb: tracking clients get the "all keys" null.
    crate::tracking::tracking_invalidate_keys_on_flush(srv);
    let removed = empty_db(srv, c.db, lazy);
    srv.dirty += removed as u64;
    // Propagated even when the db was already empty.
    crate::propagate::force_command_propagation(
        srv,
        crate::propagate::PROPAGATE_AOF | crate::propagate::PROPAGATE_REPL,
    );
    c.add_reply_ok();
}

/// FLUSHALL [ASYNC|SYNC]
// redis: db.c flushallCommand / flushAllDataAndResetRDB
pub fn flushall_command(srv: &mut Server, c: &mut Client) {
    let Some(lazy) = get_flush_command_flags(srv, c) else {
        return c.add_reply_syntax_error();
    };
    // signalFlushedDb(-1): one "all keys" null for tracking clients.
    crate::tracking::tracking_invalidate_keys_on_flush(srv);
    let mut removed = 0;
    for dbid in 0..srv.dbs.len() {
        removed += empty_db(srv, dbid, lazy);
    }
    srv.dirty += removed as u64;
    // Stop a BGSAVE of the old data and, with save points, save the empty
    // dataset now (which resets the dirty counter), as Redis does.
    crate::rdb::flushall_reset_rdb(srv);
    crate::propagate::force_command_propagation(
        srv,
        crate::propagate::PROPAGATE_AOF | crate::propagate::PROPAGATE_REPL,
    );
    c.add_reply_ok();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scan_cursor_follows_strtoul() {
        assert_eq!(parse_scan_cursor(b"0"), Some(0));
        assert_eq!(parse_scan_cursor(b""), Some(0));
        assert_eq!(parse_scan_cursor(b"+3"), Some(3));
        assert_eq!(parse_scan_cursor(b"007"), Some(7));
        assert_eq!(parse_scan_cursor(b"-1"), Some(u64::MAX));
        assert_eq!(parse_scan_cursor(b"-0"), Some(0));
        assert_eq!(parse_scan_cursor(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_scan_cursor(b"-18446744073709551615"), Some(1));
        assert_eq!(parse_scan_cursor(b"18446744073709551616"), None);
        assert_eq!(parse_scan_cursor(b" 1"), None);
        assert_eq!(parse_scan_cursor(b"1 "), None);
        assert_eq!(parse_scan_cursor(b"0x10"), None);
    }

    #[test]
    fn db_index_errors_match_get_int_from_object() {
        assert_eq!(get_int_from_arg(b"15"), Ok(15));
        assert_eq!(get_int_from_arg(b"-1"), Ok(-1));
        assert_eq!(
            get_int_from_arg(b"x"),
            Err("ERR value is not an integer or out of range")
        );
        assert_eq!(
            get_int_from_arg(b"01"),
            Err("ERR value is not an integer or out of range")
        );
        assert!(get_int_from_arg(b"4294967296")
            .unwrap_err()
            .contains("must between"));
    }
}
