//! DEBUG (Redis's debug.c): the test suite's back door into the server.
//!
//! The subcommands implemented are the ones a workshop (and Redis's own
//! tests) lean on:
//! - `POPULATE` fills a db fast, without the protocol in the way;
//! - `SLEEP` freezes the single thread on purpose: while it sleeps nobody
//!   is served, nothing expires, no cron runs -- the point of the demo;
//! - `OBJECT` shows an object's header fields (address, refcount, encoding,
//!   RDB size, LRU clock);
//! - `DIGEST` / `DIGEST-VALUE` fingerprint the dataset with SHA1 so two
//!   servers (or one before and after a reload) can be compared;
//! - `HTSTATS` / `HTSTATS-KEY` print the shape of the keyspace hash tables
//!   or of one value's table;
//! - `SET-ACTIVE-EXPIRE` turns the active expiry cycles off;
//! - `SET-DISABLE-DENY-SCRIPTS` lets scripts call `noscript` commands;
//! - `PROTOCOL` answers one sample of each RESP2/RESP3 reply type.
//!
//! Access is checked before we get here (`enable-debug-command`, in
//! process_command). Any other subcommand, or a known one with the wrong
//! number of arguments, gets addReplySubcommandSyntaxError.

use storage::object::{RObj, Value};
use storage::t_hash::HashValue;
use storage::t_set::SetValue;
use storage::t_zset::ZSetValue;
use util::atoi;

use crate::db::{db_add, lookup_key_write};
use crate::networking::Client;
use crate::object::{estimate_object_idle_time, object_command_lookup, object_refcount};
use crate::server::Server;
use crate::shared;

/// DEBUG REPLYBUFFER PEAK-RESET-TIME <NEVER|RESET|time> | RESIZING <0|1>:
/// how often (ms) the client cron restarts a static reply buffer's peak,
/// and whether it resizes the buffer at all (server.rs
/// clients_cron_resize_output_buffer, reply_buffer.rs cron_resize).
// redis: debug.c debugCommand ("replybuffer")
fn debug_replybuffer(srv: &mut Server, c: &mut Client) {
    let what = c.arg(2).to_ascii_lowercase();
    match &what[..] {
        b"peak-reset-time" => {
            let v = c.arg(3);
            if v.eq_ignore_ascii_case(b"never") {
                srv.reply_buffer_peak_reset_time = -1;
            } else if v.eq_ignore_ascii_case(b"reset") {
                srv.reply_buffer_peak_reset_time = REPLY_BUFFER_DEFAULT_PEAK_RESET_TIME;
            } else {
                match std::str::from_utf8(v)
                    .ok()
                    .and_then(|s| s.parse::<i64>().ok())
                {
                    Some(n) => srv.reply_buffer_peak_reset_time = n,
                    None => {
                        return c.add_reply_error(shared::NOT_INTEGER_ERR);
                    }
                }
            }
        }
        b"resizing" => srv.reply_buffer_resizing_enabled = atoi(c.arg(3)) != 0,
        _ => return c.add_reply_subcommand_syntax_error(),
    }
    c.add_reply_ok();
}

/// REPLY_BUFFER_DEFAULT_PEAK_RESET_TIME: Redis resets a client's reply
/// buffer peak every 5 seconds (ms).
pub const REPLY_BUFFER_DEFAULT_PEAK_RESET_TIME: i64 = 5000;

/// DEBUG <subcommand> ...
// redis: debug.c debugCommand
pub fn debug_command(srv: &mut Server, c: &mut Client) {
    let sub = c.arg(1).to_ascii_lowercase();
    let argc = c.argc();
    match (&sub[..], argc) {
        (b"help", 2) => debug_help(c),
        (b"populate", 3..=5) => debug_populate(srv, c),
        (b"sleep", 3) => debug_sleep(c),
        // A marker in the log (the suite's tests use it; DEBUG runs while
        // loading too, so it is also a way to talk to a loading server).
        (b"log", 3) => {
            let msg = String::from_utf8_lossy(c.arg(2)).into_owned();
            crate::log::server_log(crate::log::LogLevel::Warning, &format!("DEBUG LOG: {msg}"));
            c.add_reply_ok();
        }
        // serverPanic on purpose: the bug report in the log, then abort
        // (shutdown.rs install_panic_hook). DEBUG is protected: `local` by
        // default in redis-lite.
        (b"panic", 2) => {
            let now = crate::server::mstime() / 1000;
            panic!("DEBUG PANIC called at Unix time {now}");
        }
        (b"object", 3) => debug_object(srv, c),
        (b"reload", _) => crate::rdb::debug_reload(srv, c),
        (b"loadaof", _) => crate::aof::debug_loadaof(srv, c),
        (b"config-rewrite-force-all", 2) => crate::config::debug_config_rewrite_force_all(srv, c),
        (b"set-skip-checksum-validation", 3) => {
            srv.rdb.skip_checksum_validation = atoi(c.arg(2)) != 0;
            c.add_reply_ok();
        }
        (b"aof-flush-sleep", 3) => {
            // atoi() microseconds; 0 turns it off.
            srv.aof.flush_sleep_us = atoi(c.arg(2)).max(0) as u64;
            c.add_reply_ok();
        }
        (b"pause-cron", 3) => {
            // atoi(), like the others: serverCron skips its work while set.
            srv.pause_cron = atoi(c.arg(2)) != 0;
            c.add_reply_ok();
        }
        (b"set-active-expire", 3) => {
            // atoi(): "2" enables, "x" disables, as in Redis.
            srv.active_expire_enabled = atoi(c.arg(2)) != 0;
            c.add_reply_ok();
        }
        (b"set-disable-deny-scripts", 3) => {
            // Lets scripts call `noscript` commands (atoi, like above).
            srv.script_disable_deny_script = atoi(c.arg(2)) != 0;
            c.add_reply_ok();
        }
        (b"protocol", 3) => debug_protocol(c),
        (b"client-eviction", 2) => crate::client_eviction::debug_client_eviction(srv, c),
        (b"replybuffer", 4) => debug_replybuffer(srv, c),
        (b"clusterlink", 5) if c.arg(2).eq_ignore_ascii_case(b"kill") => {
            crate::cluster::commands::debug_clusterlink_kill(srv, c)
        }
        // DEBUG REPLICATE cmd [args...]: straight into the stream, in the
        // db last selected there (no SELECT), not executed here.
        (b"replicate", 3..) => {
            let argv: Vec<_> = (2..argc).map(|i| c.argv[i].clone()).collect();
            let db = srv.repl.slaveseldb;
            crate::replication::master::replication_feed_slaves(srv, db, &argv);
            c.add_reply_ok();
        }
        (b"digest", 2) => {
            let digest = compute_dataset_digest(srv);
            c.add_reply_status(hex(&digest).as_bytes());
        }
        (b"digest-value", _) => debug_digest_value(srv, c),
        (b"htstats", 3) => debug_htstats(srv, c),
        (b"htstats-key", 3) => debug_htstats_key(srv, c),
        (b"quicklist-packed-threshold", 3) => {
            // Elements this large or larger get a PLAIN quicklist node.
            let sz = std::str::from_utf8(c.arg(2))
                .ok()
                .and_then(crate::config::memtoull);
            match sz {
                Some(sz) if storage::quicklist::set_packed_threshold(sz) => c.add_reply_ok(),
                _ => c.add_reply_error(
                    "ERR argument must be a memory value bigger than 1 and smaller than 4gb",
                ),
            }
        }
        // redis-lite extensions (recorder.rs): not in DEBUG HELP, whose
        // reply stays Redis's. Built without the feature `recorder`, these
        // two are unknown subcommands, as in Redis.
        #[cfg(feature = "recorder")]
        (b"recorder", 3..=4) => crate::recorder::debug_recorder_command(srv, c),
        #[cfg(feature = "recorder")]
        (b"blame", 2..=3) => crate::recorder::debug_blame_command(c),
        // ... and the lazy-free and encoding logs (instrument_logs.rs).
        (b"lazyfree-log", 2..=3) => crate::instrument_logs::debug_lazyfree_log_command(c),
        (b"encoding-log", 2..=3) => crate::instrument_logs::debug_encoding_log_command(c),
        _ => c.add_reply_subcommand_syntax_error(),
    }
}

/// DEBUG HELP: Redis's whole text, including the subcommands redis-lite
/// does not implement (they answer with the subcommand syntax error).
fn debug_help(c: &mut Client) {
    c.add_reply_help("DEBUG", DEBUG_HELP);
}

/// DEBUG POPULATE count [prefix] [size]
// redis: debug.c debugCommand (populate)
fn debug_populate(srv: &mut Server, c: &mut Client) {
    let Some(count) = storage::util::string2ll(c.arg(2)).filter(|n| *n >= 0) else {
        return c.add_reply_error(shared::MUST_BE_POSITIVE_ERR);
    };
    let dbid = c.db;
    // dictTryExpand: size the table once instead of doubling all the way.
    // Redis dies of OOM when the bucket array cannot be allocated; we
    // refuse instead of aborting.
    let buckets = (count as u64)
        .checked_next_power_of_two()
        .unwrap_or(u64::MAX);
    if buckets.saturating_mul(8) > crate::memory::total_system_memory() as u64 {
        return c.add_reply_error("ERR OOM in dictTryExpand");
    }
    srv.dbs[dbid].dict.expand(count as usize);
    let mut valsize = 0usize;
    if c.argc() == 5 {
        let Some(n) = storage::util::string2ll(c.arg(4)).filter(|n| *n >= 0) else {
            return c.add_reply_error(shared::MUST_BE_POSITIVE_ERR);
        };
        // Same guard for the values themselves (count * size bytes).
        if (n as u128) * (count as u128) > crate::memory::total_system_memory() as u128 {
            return c.add_reply_error("ERR OOM in dictTryExpand");
        }
        valsize = n as usize;
    }
    // snprintf("%s:%lu") into a 128-byte buffer: the prefix ends at a NUL
    // and the whole key is cut at 127 bytes.
    let prefix: Vec<u8> = match c.argc() {
        3 => b"key".to_vec(),
        _ => c.arg(3).split(|&b| b == 0).next().unwrap_or(b"").to_vec(),
    };
    for j in 0..count {
        let mut key = prefix.clone();
        key.extend_from_slice(format!(":{j}").as_bytes());
        key.truncate(127);
        // Existing keys are left alone (an expired one is replaced).
        if lookup_key_write(srv, dbid, &key).is_some() {
            continue;
        }
        let text = format!("value:{j}").into_bytes();
        // With a size the value is exactly `size` bytes: the text cut or
        // padded with NULs. Never int-encoded: embstr or raw by length.
        let val = if valsize == 0 {
            storage::t_string::create_string_object(&text)
        } else {
            let mut buf = vec![0u8; valsize];
            let n = valsize.min(text.len());
            buf[..n].copy_from_slice(&text[..n]);
            storage::t_string::create_string_object(&buf)
        };
        let obj = crate::db::new_object(srv, Value::Str(val));
        db_add(srv, dbid, &key, obj);
    }
    c.add_reply_ok();
}

/// DEBUG SLEEP seconds: the main thread sleeps and the whole server with
/// it. strtod semantics: "0.5" is half a second, junk is 0, negative is 0.
// redis: debug.c debugCommand (sleep)
fn debug_sleep(c: &mut Client) {
    let micros = strtod_prefix(c.arg(2)) * 1_000_000.0;
    // Redis converts to long long; on x86-64 NaN, inf and anything out of
    // range become LLONG_MIN, a negative time that nanosleep refuses. So
    // only a finite, positive, in-range time sleeps.
    if micros >= 1.0 && micros < i64::MAX as f64 {
        std::thread::sleep(std::time::Duration::from_micros(micros as u64));
    }
    c.add_reply_ok();
}

/// DEBUG OBJECT key
// redis: debug.c debugCommand (object)
fn debug_object(srv: &mut Server, c: &mut Client) {
    let lruclock = srv.lruclock;
    let compress = crate::rdb::rdb_compression(srv);
    // A raw dictFind: no expiry, no statistics, no LRU touch.
    let Some(o) = srv.dbs[c.db].dict.find(c.arg(2)) else {
        return c.add_reply_error(shared::NO_SUCH_KEY_ERR);
    };
    let o: &RObj = o;
    let mut line = format!(
        "Value at:{:p} refcount:{} encoding:{} serializedlength:{} lru:{} lru_seconds_idle:{}",
        o as *const RObj,
        object_refcount(o),
        o.encoding_name(),
        rdb::save::saved_object_len(o, compress),
        o.lru,
        estimate_object_idle_time(lruclock, o.lru) / 1000
    );
    if let Value::List(ql) = &o.value {
        line.push_str(&crate::t_list::debug_object_extra(ql));
    }
    c.add_reply_status(line.as_bytes());
}

/// DEBUG PROTOCOL type: one sample reply of each RESP type.
// redis: debug.c debugCommand (protocol)
fn debug_protocol(c: &mut Client) {
    use protocol::reply;
    let name = c.arg(2).to_ascii_lowercase();
    let resp3 = c.resp == protocol::reply::Resp::V3;
    match &name[..] {
        b"string" => c.add_reply_bulk(b"Hello World"),
        b"integer" => c.add_reply_integer(12345),
        // Redis's sample value, not an approximation of pi.
        #[allow(clippy::approx_constant)]
        b"double" => c.add_reply_double(3.141),
        b"bignum" => reply::big_number(&mut c.reply, b"1234567999999999999999999999999999999", c.resp),
        b"null" => c.add_reply_null(),
        b"array" | b"set" | b"map" => {
            match &name[..] {
                b"array" => c.add_reply_array_len(3),
                b"set" => c.add_reply_set_len(3),
                _ => c.add_reply_map_len(3),
            }
            for j in 0..3 {
                c.add_reply_integer(j);
                if &name[..] == b"map" {
                    c.add_reply_bool(j == 1);
                }
            }
        }
        b"attrib" => {
            // Attributes exist only in RESP3; a real reply always follows.
            if resp3 {
                c.reply.extend_from_slice(b"|1\r\n");
                c.add_reply_bulk(b"key-popularity");
                c.add_reply_array_len(2);
                c.add_reply_bulk(b"key:123");
                c.add_reply_integer(90);
            }
            c.add_reply_bulk(b"Some real reply following the attribute");
        }
        b"push" => {
            if !resp3 {
                return c.add_reply_error("ERR RESP2 is not supported by this command");
            }
            reply::push_len(&mut c.reply, 2, c.resp);
            c.add_reply_bulk(b"server-cpu-usage");
            c.add_reply_integer(42);
            c.add_reply_bulk(b"Some real reply following the push reply");
        }
        b"verbatim" => c.add_reply_verbatim(b"This is a verbatim\nstring"),
        b"true" => c.add_reply_bool(true),
        b"false" => c.add_reply_bool(false),
        _ => c.add_reply_error(
            "ERR Wrong protocol type name. Please use one of the following: string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false",
        ),
    }
}

/// DEBUG DIGEST-VALUE key [key ...]: the digest of each value (type, value,
/// TTL flag; not the key name); all zeroes for a missing key.
// redis: debug.c debugCommand (digest-value)
fn debug_digest_value(srv: &mut Server, c: &mut Client) {
    let dbid = c.db;
    c.add_reply_array_len(c.argc() - 2);
    for j in 2..c.argc() {
        let key = c.argv[j].clone();
        let mut digest = [0u8; 20];
        // A raw lookup: logically expired keys are still digested.
        let db = &srv.dbs[dbid];
        if let Some(o) = db.dict.get(&key) {
            xor_object_digest(&mut digest, o, db.get_expire(&key).is_some());
        }
        c.add_reply_status(hex(&digest).as_bytes());
    }
}

/// DEBUG HTSTATS dbid: the keyspace and expires tables of one db.
// redis: debug.c debugCommand (htstats)
fn debug_htstats(srv: &mut Server, c: &mut Client) {
    let Some(dbid) = storage::util::string2ll(c.arg(2)) else {
        return c.add_reply_error(shared::NOT_INTEGER_ERR);
    };
    if dbid < 0 || dbid as usize >= srv.dbs.len() {
        return c.add_reply_error("ERR Out of range database");
    }
    let db = &srv.dbs[dbid as usize];
    let mut stats = String::from("[Dictionary HT]\n");
    stats.push_str(truncate_stats(&db.dict.stats(true)));
    stats.push_str("[Expires HT]\n");
    stats.push_str(truncate_stats(&db.expires.stats(true)));
    c.add_reply_verbatim(stats.as_bytes());
}

const ERR_NOT_HASHTABLE: &str =
    "ERR The value stored at the specified key is not represented using an hash table";

/// DEBUG HTSTATS-KEY key: the table of a hashtable-encoded set or hash, or
/// the member -> score table of a skiplist-encoded zset. Strings, lists and
/// the compact encodings have none.
// redis: debug.c debugCommand (htstats-key)
fn debug_htstats_key(srv: &mut Server, c: &mut Client) {
    let Some(o) = object_command_lookup(srv, c) else {
        return c.add_reply_error(shared::NO_SUCH_KEY_ERR);
    };
    let stats = match &o.value {
        Value::Set(SetValue::Hashtable(d)) => d.stats(true),
        Value::Hash(HashValue::Hashtable(d)) => d.stats(true),
        Value::ZSet(ZSetValue::Skiplist(zs)) => zs.dict.stats(true),
        _ => return c.add_reply_error(ERR_NOT_HASHTABLE),
    };
    c.add_reply_verbatim(truncate_stats(&stats).as_bytes());
}

/// dictGetStats writes into a 4096-byte buffer (snprintf: 4095 + NUL).
fn truncate_stats(s: &str) -> &str {
    let mut end = s.len().min(4095);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

// ---- DIGEST ----

/// OBJ_STRING: the type number mixed into a value's digest.
const OBJ_STRING: u32 = 0;

/// computeDatasetDigest: for each non-empty db, mix its number into the
/// result; then XOR in (through SHA1) one digest per key, so the order of
/// the keys in the dict does not matter.
pub fn compute_dataset_digest(srv: &Server) -> [u8; 20] {
    let mut fin = [0u8; 20];
    for (j, db) in srv.dbs.iter().enumerate() {
        if db.dict.is_empty() {
            continue;
        }
        // The same data in another db gives another digest.
        mix_digest(&mut fin, &(j as u32).to_be_bytes());
        for (key, o) in db.dict.iter() {
            let mut digest = [0u8; 20];
            mix_digest(&mut digest, key);
            xor_object_digest(&mut digest, o, db.get_expire(key).is_some());
            xor_digest(&mut fin, &digest);
        }
    }
    fin
}

/// xorObjectDigest: mix the type, then the value; flag a TTL (its value
/// does not matter, only that there is one).
pub fn xor_object_digest(digest: &mut [u8; 20], o: &RObj, has_expire: bool) {
    match &o.value {
        Value::Str(s) => {
            mix_digest(digest, &OBJ_STRING.to_be_bytes());
            // mixStringObjectDigest: an int is digested as its decimal text.
            mix_digest(digest, &s.as_bytes());
        }
        Value::Set(s) => crate::t_set::set_digest(digest, s),
        Value::List(ql) => crate::t_list::list_digest(digest, ql),
        Value::ZSet(z) => crate::t_zset::zset_digest(digest, z),
        Value::Hash(h) => crate::t_hash::hash_digest(digest, h),
        Value::Stream(s) => crate::t_stream::stream_digest(digest, s),
    }
    if has_expire {
        xor_digest(digest, b"!!expire!!");
    }
}

/// xorDigest: digest ^= SHA1(data). Order-independent ("adding" elements).
pub fn xor_digest(digest: &mut [u8; 20], data: &[u8]) {
    let hash = sha1(data);
    for (d, h) in digest.iter_mut().zip(hash) {
        *d ^= h;
    }
}

/// mixDigest: digest = SHA1(digest ^ SHA1(data)). Order-dependent.
pub fn mix_digest(digest: &mut [u8; 20], data: &[u8]) {
    xor_digest(digest, data);
    *digest = sha1(&digest[..]);
}

fn hex(d: &[u8]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// SHA-1 (FIPS 180-1), as Redis's sha1.c. Only used for digests, where a
/// fingerprint is wanted, not security.
pub fn sha1(data: &[u8]) -> [u8; 20] {
    let mut h: [u32; 5] = [0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0];
    // Padding: 0x80, zeros, then the bit length as a big-endian u64.
    let mut msg = data.to_vec();
    msg.push(0x80);
    while msg.len() % 64 != 56 {
        msg.push(0);
    }
    msg.extend_from_slice(&((data.len() as u64).wrapping_mul(8)).to_be_bytes());
    for block in msg.chunks_exact(64) {
        let mut w = [0u32; 80];
        for (i, word) in block.chunks_exact(4).enumerate() {
            w[i] = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
        }
        for i in 16..80 {
            w[i] = (w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]).rotate_left(1);
        }
        let [mut a, mut b, mut c, mut d, mut e] = h;
        for (i, wi) in w.iter().enumerate() {
            let (f, k) = match i {
                0..=19 => ((b & c) | (!b & d), 0x5A827999),
                20..=39 => (b ^ c ^ d, 0x6ED9EBA1),
                40..=59 => ((b & c) | (b & d) | (c & d), 0x8F1BBCDC),
                _ => (b ^ c ^ d, 0xCA62C1D6),
            };
            let t = a
                .rotate_left(5)
                .wrapping_add(f)
                .wrapping_add(e)
                .wrapping_add(k)
                .wrapping_add(*wi);
            e = d;
            d = c;
            c = b.rotate_left(30);
            b = a;
            a = t;
        }
        for (hv, v) in h.iter_mut().zip([a, b, c, d, e]) {
            *hv = hv.wrapping_add(v);
        }
    }
    let mut out = [0u8; 20];
    for (i, v) in h.iter().enumerate() {
        out[i * 4..i * 4 + 4].copy_from_slice(&v.to_be_bytes());
    }
    out
}

// ---- small C-compatible parsers ----

/// strtod(s, NULL): the longest prefix that reads as a float, 0 if none.
fn strtod_prefix(s: &[u8]) -> f64 {
    let s = trim_leading_space(s);
    // Floats longer than this are not worth a quadratic search.
    let s = &s[..s.len().min(64)];
    for end in (1..=s.len()).rev() {
        if let Some(v) = std::str::from_utf8(&s[..end])
            .ok()
            .and_then(|t| t.parse::<f64>().ok())
        {
            return v;
        }
    }
    0.0
}

fn trim_leading_space(s: &[u8]) -> &[u8] {
    let start = s
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(s.len());
    &s[start..]
}

/// The body of DEBUG HELP in Redis 7.0.15 (addReplyHelp adds the header
/// and the HELP lines).
const DEBUG_HELP: &[&str] = &[
    "AOF-FLUSH-SLEEP <microsec>",
    "    Server will sleep before flushing the AOF, this is used for testing.",
    "ASSERT",
    "    Crash by assertion failed.",
    "CHANGE-REPL-ID",
    "    Change the replication IDs of the instance.",
    "    Dangerous: should be used only for testing the replication subsystem.",
    "CONFIG-REWRITE-FORCE-ALL",
    "    Like CONFIG REWRITE but writes all configuration options, including",
    "    keywords not listed in original configuration file or default values.",
    "CRASH-AND-RECOVER [<milliseconds>]",
    "    Hard crash and restart after a <milliseconds> delay (default 0).",
    "DIGEST",
    "    Output a hex signature representing the current DB content.",
    "DIGEST-VALUE <key> [<key> ...]",
    "    Output a hex signature of the values of all the specified keys.",
    "ERROR <string>",
    "    Return a Redis protocol error with <string> as message. Useful for clients",
    "    unit tests to simulate Redis errors.",
    "LEAK <string>",
    "    Create a memory leak of the input string.",
    "LOG <message>",
    "    Write <message> to the server log.",
    "HTSTATS <dbid>",
    "    Return hash table statistics of the specified Redis database.",
    "HTSTATS-KEY <key>",
    "    Like HTSTATS but for the hash table stored at <key>'s value.",
    "LOADAOF",
    "    Flush the AOF buffers on disk and reload the AOF in memory.",
    "REPLICATE <string>",
    "    Replicates the provided string to replicas, allowing data divergence.",
    "MALLCTL <key> [<val>]",
    "    Get or set a malloc tuning integer.",
    "MALLCTL-STR <key> [<val>]",
    "    Get or set a malloc tuning string.",
    "OBJECT <key>",
    "    Show low level info about `key` and associated value.",
    "DROP-CLUSTER-PACKET-FILTER <packet-type>",
    "    Drop all packets that match the filtered type. Set to -1 allow all packets.",
    "OOM",
    "    Crash the server simulating an out-of-memory error.",
    "PANIC",
    "    Crash the server simulating a panic.",
    "POPULATE <count> [<prefix>] [<size>]",
    "    Create <count> string keys named key:<num>. If <prefix> is specified then",
    "    it is used instead of the 'key' prefix. These are not propagated to",
    "    replicas. Cluster slots are not respected so keys not belonging to the",
    "    current node can be created in cluster mode.",
    "PROTOCOL <type>",
    "    Reply with a test value of the specified type. <type> can be: string,",
    "    integer, double, bignum, null, array, set, map, attrib, push, verbatim,",
    "    true, false.",
    "RELOAD [option ...]",
    "    Save the RDB on disk and reload it back to memory. Valid <option> values:",
    "    * MERGE: conflicting keys will be loaded from RDB.",
    "    * NOFLUSH: the existing database will not be removed before load, but",
    "      conflicting keys will generate an exception and kill the server.",
    "    * NOSAVE: the database will be loaded from an existing RDB file.",
    "    Examples:",
    "    * DEBUG RELOAD: verify that the server is able to persist, flush and reload",
    "      the database.",
    "    * DEBUG RELOAD NOSAVE: replace the current database with the contents of an",
    "      existing RDB file.",
    "    * DEBUG RELOAD NOSAVE NOFLUSH MERGE: add the contents of an existing RDB",
    "      file to the database.",
    "RESTART [<milliseconds>]",
    "    Graceful restart: save config, db, restart after a <milliseconds> delay (default 0).",
    "SDSLEN <key>",
    "    Show low level SDS string info representing `key` and value.",
    "SEGFAULT",
    "    Crash the server with sigsegv.",
    "SET-ACTIVE-EXPIRE <0|1>",
    "    Setting it to 0 disables expiring keys in background when they are not",
    "    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
    "    default.",
    "QUICKLIST-PACKED-THRESHOLD <size>",
    "    Sets the threshold for elements to be inserted as plain vs packed nodes",
    "    Default value is 1GB, allows values up to 4GB. Setting to 0 restores to default.",
    "SET-SKIP-CHECKSUM-VALIDATION <0|1>",
    "    Enables or disables checksum checks for RDB files and RESTORE's payload.",
    "SLEEP <seconds>",
    "    Stop the server for <seconds>. Decimals allowed.",
    "STRINGMATCH-TEST",
    "    Run a fuzz tester against the stringmatchlen() function.",
    "STRUCTSIZE",
    "    Return the size of different Redis core C structures.",
    "LISTPACK <key>",
    "    Show low level info about the listpack encoding of <key>.",
    "QUICKLIST <key> [<0|1>]",
    "    Show low level info about the quicklist encoding of <key>.",
    "    The optional argument (0 by default) sets the level of detail",
    "CLIENT-EVICTION",
    "    Show low level client eviction pools info (maxmemory-clients).",
    "PAUSE-CRON <0|1>",
    "    Stop periodic cron job processing.",
    "REPLYBUFFER PEAK-RESET-TIME <NEVER||RESET|time>",
    "    Sets the time (in milliseconds) to wait between client reply buffer peak resets.",
    "    In case NEVER is provided the last observed peak will never be reset",
    "    In case RESET is provided the peak reset time will be restored to the default value",
    "REPLYBUFFER RESIZING <0|1>",
    "    Enable or disable the reply buffer resize cron job",
    "CLUSTERLINK KILL <to|from|all> <node-id>",
    "    Kills the link based on the direction to/from (both) with the provided node.",
];

/// debugDelay: sleep `usec` microseconds (key-load-delay,
/// rdb-key-save-delay). Even the shortest sleep is a system call and a
/// context switch, so a negative value -N means "sleep 1 us once in N
/// calls", on average: a finer slow-down than 1 us per key.
// redis: debug.c debugDelay
pub fn debug_delay(usec: i64) {
    use rand::RngExt;
    let usec = if usec < 0 {
        // One chance in N (N = -usec) of a 1 us sleep.
        u64::from(rand::rng().random_range(0..usec.unsigned_abs()) == 0)
    } else {
        usec as u64
    };
    if usec > 0 {
        std::thread::sleep(std::time::Duration::from_micros(usec));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use storage::object::StrValue;
    use storage::t_string::{create_string_object, create_string_object_encoded};

    fn obj(v: StrValue) -> RObj {
        RObj::new(Value::Str(v), 0)
    }

    #[test]
    fn sha1_known_vectors() {
        assert_eq!(hex(&sha1(b"")), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
        assert_eq!(
            hex(&sha1(b"abc")),
            "a9993e364706816aba3e25717850c26c9cd0d89d"
        );
        let long = b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
        assert_eq!(hex(&sha1(long)), "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
    }

    // Values printed by DEBUG DIGEST-VALUE on Redis 7.0.15.
    #[test]
    fn digest_value_matches_redis() {
        let mut d = [0u8; 20];
        xor_object_digest(&mut d, &obj(create_string_object(b"hello")), false);
        assert_eq!(hex(&d), "36b23a1456b2dce2c3ed252c456761301dba8060");
        let mut d = [0u8; 20];
        xor_object_digest(&mut d, &obj(create_string_object_encoded(b"12345")), true);
        assert_eq!(hex(&d), "074a6e8892a0b0b4fcf085794cb69322c36c9d00");
    }

    #[test]
    fn serialized_length_of_strings() {
        // serializedlength comes from the real encoder (rdb crate).
        let len = |o: RObj| rdb::save::saved_object_len(&o, true);
        assert_eq!(len(obj(StrValue::Int(5))), 2);
        assert_eq!(len(obj(StrValue::Int(-5))), 2);
        assert_eq!(len(obj(StrValue::Int(100000))), 5);
        assert_eq!(len(obj(StrValue::Int(12345678901234))), 15);
        assert_eq!(len(obj(create_string_object(b"hello"))), 6);
        assert_eq!(len(obj(create_string_object(b""))), 1);
        assert_eq!(len(obj(create_string_object(b"123"))), 2);
        let s36 = b"abcdefghijklmnopqrstuvwxyz0123456789";
        assert_eq!(len(obj(create_string_object(s36))), 37);
        // Compressible strings over 20 bytes are LZF'd, as in Redis.
        assert_eq!(len(obj(create_string_object(&[b'a'; 100]))), 13);
    }

    #[test]
    fn c_number_parsers() {
        assert_eq!(atoi(b"2"), 2);
        assert_eq!(atoi(b"x"), 0);
        assert_eq!(atoi(b" -3z"), -3);
        assert_eq!(strtod_prefix(b"0.5"), 0.5);
        assert_eq!(strtod_prefix(b"1.5abc"), 1.5);
        assert_eq!(strtod_prefix(b"x"), 0.0);
    }
}
