//! maxmemory (evict.rs), against a real redis-server 7.0.15 where the
//! outcome is deterministic.
//!
//! - Under `noeviction` an over-limit server refuses deny-oom commands, any
//!   command queued in MULTI, EXEC after such a refusal (EXECABORT), and
//!   scripts / functions by their flags: the replies and the error
//!   statistics must be byte-identical. `maxmemory 1` puts both servers over
//!   the limit whatever their real sizes.
//! - Eviction is sampled and random, and the two servers' memory sizes
//!   differ, so the eviction tests check behaviour on each server alone:
//!   keys go, `evicted_keys` counts them, used memory stays near the limit,
//!   volatile-* policies never touch keys without a TTL. The `evicted`
//!   notification and WATCH are compared as sets / replies.
//! - OBJECT FREQ under allkeys-lfu: with lfu-log-factor 0 every access
//!   bumps the counter, so the numbers are deterministic.
//!
//! No assertion depends on timing.

mod common;

use common::{escape, Conn, Process, RealRedis, Server};

/// Both servers, or None (skip message printed) without redis-server.
fn both() -> Option<(Process, Process)> {
    let real = RealRedis::start()?;
    Some((Server::start(), real))
}

/// Run `script` (one command per line, whitespace-separated arguments,
/// `\n` inside an argument is a newline) on a fresh connection to each
/// server and require identical replies.
fn compare(lite: &Process, real: &Process, script: &[&[&str]]) {
    let (mut l, mut r) = (lite.connect(), real.connect());
    // A real redis-server loads any dump.rdb in its working directory.
    l.must(&["FLUSHALL"]);
    r.must(&["FLUSHALL"]);
    for args in script {
        let args: Vec<String> = args.iter().map(|a| a.replace("\\n", "\n")).collect();
        let (got, want) = (l.must(&args), r.must(&args));
        assert_eq!(
            escape(&got),
            escape(&want),
            "reply to {:?} differs (left: redis-lite, right: redis-server)",
            args
        );
    }
}

/// One INFO field as a number.
fn info_field(c: &mut Conn, field: &str) -> i64 {
    let reply = c.must(&["INFO", "everything"]);
    let text = String::from_utf8_lossy(&reply).to_string();
    let prefix = format!("{field}:");
    text.lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no INFO field {field}"))
}

fn int_reply(reply: &[u8]) -> i64 {
    let s = String::from_utf8_lossy(reply);
    s.trim_start_matches(':')
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("not an integer reply: {}", escape(reply)))
}

/// shared.oomerr.
const OOM_ERR: &[u8] = b"-OOM command not allowed when used memory > 'maxmemory'.\r\n";

/// Send many commands at once, then read all replies (pipelining keeps the
/// fill loops fast). Returns how many replies were errors.
fn pipeline(c: &mut Conn, cmds: &[Vec<String>]) -> usize {
    let mut errors = 0;
    for chunk in cmds.chunks(500) {
        let mut buf = Vec::new();
        for cmd in chunk {
            buf.extend_from_slice(&common::encode_command(cmd));
        }
        c.send(&buf).expect("send");
        for _ in chunk {
            let reply = c.read_reply().expect("reply");
            if reply.first() == Some(&b'-') {
                assert!(
                    reply.starts_with(OOM_ERR),
                    "unexpected error {}",
                    escape(&reply)
                );
                errors += 1;
            }
        }
    }
    errors
}

/// Set maxmemory to what is in use now plus `extra` bytes, under `policy`.
fn limit_to_used_plus(c: &mut Conn, extra: i64, policy: &str) -> i64 {
    let limit = info_field(c, "used_memory") + extra;
    c.must(&["CONFIG", "SET", "maxmemory-policy", policy]);
    c.must(&["CONFIG", "SET", "maxmemory", &limit.to_string()]);
    limit
}

#[test]
fn noeviction_refuses_denyoom_commands_like_redis() {
    let Some((lite, real)) = both() else { return };
    compare(
        &lite,
        &real,
        &[
            &["SET", "k", "v"],
            &["CONFIG", "SET", "maxmemory", "1"],
            // deny-oom commands are refused, others run.
            &["SET", "k", "v2"],
            &["APPEND", "k", "x"],
            &["GET", "k"],
            &["DEL", "k"],
            &["SET", "k", "v"],
            // In MULTI everything but EXEC/DISCARD/QUIT/RESET is refused,
            // and the refusal dooms the transaction.
            &["MULTI"],
            &["GET", "k"],
            &["PING"],
            &["EXEC"],
            &["MULTI"],
            &["DISCARD"],
            &["EXEC"],
            // A transaction queued before the limit: EXEC is deny-oom
            // because it holds a deny-oom command.
            &["CONFIG", "SET", "maxmemory", "0"],
            &["MULTI"],
            &["SET", "a", "1"],
            &["GET", "a"],
            &["CONFIG", "SET", "maxmemory", "1"],
            &["EXEC"],
            &["MULTI"],
            &["GET", "a"],
            &["EXEC"],
            &["CONFIG", "SET", "maxmemory", "0"],
            &["INFO", "errorstats"],
            &["CONFIG", "SET", "maxmemory", "1"],
            // Without a shebang the script runs and its first deny-oom
            // command fails; redis.pcall gets the error as a table.
            &["EVAL", "return redis.call('set','x','y')", "0"],
            &["EVAL", "return redis.pcall('set','x','y')", "0"],
            &["EVAL", "return redis.pcall('set','x','y')['err']", "0"],
            &["EVAL", "return redis.call('get','x')", "0"],
            // With a shebang the flags decide before it runs.
            &["EVAL", "#!lua\\nreturn redis.call('set','x','y')", "0"],
            &[
                "EVAL",
                "#!lua flags=allow-oom\\nreturn redis.call('set','x','y')",
                "0",
            ],
            &[
                "EVAL",
                "#!lua flags=no-writes\\nreturn redis.call('get','x')",
                "0",
            ],
            &["EVAL_RO", "return redis.call('get','x')", "0"],
            &["CONFIG", "SET", "maxmemory", "0"],
            &["INFO", "errorstats"],
        ],
    );
}

#[test]
fn fcall_respects_function_flags_when_oom() {
    let Some((lite, real)) = both() else { return };
    let lib = "#!lua name=lib\n\
        redis.register_function('f', function() return redis.call('set','x','y') end)\n\
        redis.register_function{function_name='g', callback=function() return redis.call('set','x','y') end, flags={'allow-oom'}}\n\
        redis.register_function{function_name='h', callback=function() return redis.call('get','x') end, flags={'no-writes'}}";
    compare(
        &lite,
        &real,
        &[
            &["FUNCTION", "LOAD", lib],
            &["CONFIG", "SET", "maxmemory", "1"],
            &["FCALL", "f", "0"],
            &["FCALL", "g", "0"],
            &["FCALL", "h", "0"],
            &["FCALL_RO", "h", "0"],
            &["FCALL_RO", "f", "0"],
            &["CONFIG", "SET", "maxmemory", "0"],
            // The OOM state of the last command that saw a limit, checked
            // by a script that starts inside EXEC once a limit is back.
            &["CONFIG", "SET", "maxmemory", "1"],
            &["PING"],
            &["CONFIG", "SET", "maxmemory", "0"],
            &["MULTI"],
            &["CONFIG", "SET", "maxmemory", "1"],
            &["FCALL", "f", "0"],
            &["CONFIG", "SET", "maxmemory", "0"],
            &["EXEC"],
            &["INFO", "errorstats"],
        ],
    );
}

#[test]
fn object_freq_and_idletime_follow_the_policy() {
    let Some((lite, real)) = both() else { return };
    compare(
        &lite,
        &real,
        &[
            &["SET", "foo", "bar"],
            &["OBJECT", "FREQ", "foo"],
            &["CONFIG", "SET", "maxmemory-policy", "allkeys-lfu"],
            &["CONFIG", "SET", "lfu-log-factor", "0"],
            &["OBJECT", "IDLETIME", "foo"],
            &["SET", "bar", "baz"],
            // A new key starts at LFU_INIT_VAL; OBJECT does not touch it.
            &["OBJECT", "FREQ", "bar"],
            &["OBJECT", "FREQ", "bar"],
            // With lfu-log-factor 0 every access counts.
            &["GET", "bar"],
            &["OBJECT", "FREQ", "bar"],
            &["GET", "bar"],
            &["GET", "bar"],
            &["OBJECT", "FREQ", "bar"],
            // An overwrite keeps the counter.
            &["SET", "bar", "other"],
            &["OBJECT", "FREQ", "bar"],
            &["OBJECT", "FREQ", "nokey"],
            &["CONFIG", "SET", "maxmemory-policy", "volatile-lfu"],
            &["OBJECT", "FREQ", "bar"],
            &["CONFIG", "SET", "maxmemory-policy", "noeviction"],
            &["OBJECT", "FREQ", "bar"],
            // Shared integers: not with maxmemory and an LRU/LFU policy.
            &["CONFIG", "SET", "maxmemory", "1073741824"],
            &["CONFIG", "SET", "maxmemory-policy", "allkeys-random"],
            &["SET", "a", "1"],
            &["OBJECT", "REFCOUNT", "a"],
            &["CONFIG", "SET", "maxmemory-policy", "allkeys-lru"],
            &["SET", "b", "1"],
            &["OBJECT", "REFCOUNT", "b"],
            &["CONFIG", "SET", "maxmemory", "0"],
        ],
    );
}

/// allkeys-*: filling past maxmemory evicts keys and keeps memory near the
/// limit, on both servers.
#[test]
fn allkeys_policies_evict_to_stay_under_maxmemory() {
    let Some((lite, real)) = both() else { return };
    for server in [&lite, &real] {
        for policy in ["allkeys-lru", "allkeys-lfu", "allkeys-random"] {
            let mut c = server.connect();
            c.must(&["FLUSHALL"]);
            c.must(&["CONFIG", "SET", "maxmemory", "0"]);
            c.must(&["CONFIG", "RESETSTAT"]);
            let limit = limit_to_used_plus(&mut c, 512 * 1024, policy);
            let n = 10_000;
            let cmds: Vec<Vec<String>> = (0..n)
                .map(|i| vec!["SET".into(), format!("key:{i}"), "x".repeat(100)])
                .collect();
            let errors = pipeline(&mut c, &cmds);
            let ctx = format!("{} {policy}", server.name);
            assert_eq!(errors, 0, "{ctx}: allkeys-* never refuses a SET");
            // Every command evicts first while maxmemory is set: read the
            // used memory, then lift the limit before counting.
            let used = info_field(&mut c, "used_memory");
            assert!(used < limit + 64 * 1024, "{ctx}: used {used} limit {limit}");
            c.must(&["CONFIG", "SET", "maxmemory", "0"]);
            let dbsize = int_reply(&c.must(&["DBSIZE"]));
            let evicted = info_field(&mut c, "evicted_keys");
            assert!(dbsize < n && dbsize > 0, "{ctx}: dbsize {dbsize}");
            assert_eq!(evicted, n - dbsize, "{ctx}: every missing key was evicted");
            c.must(&["CONFIG", "SET", "maxmemory-policy", "noeviction"]);
        }
    }
}

/// volatile-*: only keys with a TTL are evicted; once none is left, writes
/// are refused as under noeviction.
#[test]
fn volatile_policies_only_evict_keys_with_a_ttl() {
    let Some((lite, real)) = both() else { return };
    for server in [&lite, &real] {
        for policy in [
            "volatile-lru",
            "volatile-lfu",
            "volatile-random",
            "volatile-ttl",
        ] {
            let mut c = server.connect();
            c.must(&["FLUSHALL"]);
            c.must(&["CONFIG", "SET", "maxmemory", "0"]);
            c.must(&["CONFIG", "RESETSTAT"]);
            let limit = limit_to_used_plus(&mut c, 512 * 1024, policy);
            let ctx = format!("{} {policy}", server.name);
            // 1000 persistent keys fit easily; then 10000 with a TTL do not.
            let persistent: Vec<Vec<String>> = (0..1000)
                .map(|i| vec!["SET".into(), format!("p:{i}"), "x".repeat(100)])
                .collect();
            assert_eq!(pipeline(&mut c, &persistent), 0, "{ctx}");
            let volatile: Vec<Vec<String>> = (0..10_000)
                .map(|i| {
                    let ttl = (10_000 + i).to_string();
                    vec![
                        "SET".into(),
                        format!("v:{i}"),
                        "x".repeat(100),
                        "EX".into(),
                        ttl,
                    ]
                })
                .collect();
            assert_eq!(pipeline(&mut c, &volatile), 0, "{ctx}");
            assert!(info_field(&mut c, "evicted_keys") > 0, "{ctx}");
            let mut exists = vec!["EXISTS".to_string()];
            exists.extend((0..1000).map(|i| format!("p:{i}")));
            assert_eq!(
                int_reply(&c.must(&exists)),
                1000,
                "{ctx}: a key without TTL went"
            );
            let used = info_field(&mut c, "used_memory");
            assert!(used < limit + 64 * 1024, "{ctx}: used {used} limit {limit}");
            // Persistent keys only from here: the volatile ones run out.
            let more: Vec<Vec<String>> = (0..20_000)
                .map(|i| vec!["SET".into(), format!("q:{i}"), "x".repeat(100)])
                .collect();
            assert!(
                pipeline(&mut c, &more) > 0,
                "{ctx}: no OOM once TTL keys ran out"
            );
            c.must(&["CONFIG", "SET", "maxmemory", "0"]);
            c.must(&["CONFIG", "SET", "maxmemory-policy", "noeviction"]);
        }
    }
}

/// Evicted keys emit `evicted` (keyevent and keyspace) and fail the EXEC of
/// clients WATCHing them. CONFIG SET maxmemory evicts at once.
#[test]
fn eviction_notifies_subscribers_and_watchers() {
    let Some((lite, real)) = both() else { return };
    let mut results = Vec::new();
    for server in [&lite, &real] {
        let mut c = server.connect();
        let mut sub = server.connect();
        let mut watcher = server.connect();
        c.must(&["FLUSHALL"]);
        c.must(&["CONFIG", "SET", "notify-keyspace-events", "KEe"]);
        sub.must(&["PSUBSCRIBE", "__key*__:*"]);
        for k in ["a", "b", "c"] {
            c.must(&["SET", k, "v"]);
        }
        watcher.must(&["WATCH", "b"]);
        c.must(&["CONFIG", "SET", "maxmemory-policy", "allkeys-lru"]);
        c.must(&["CONFIG", "SET", "maxmemory", "1"]);
        let dbsize = c.must(&["DBSIZE"]);
        c.must(&["CONFIG", "SET", "maxmemory", "0"]);
        let evicted = info_field(&mut c, "evicted_keys");
        let mut messages: Vec<String> = (0..6)
            .map(|_| escape(&sub.read_reply().expect("evicted notification")))
            .collect();
        messages.sort();
        watcher.must(&["MULTI"]);
        watcher.must(&["PING"]);
        let exec = watcher.must(&["EXEC"]);
        results.push((escape(&dbsize), evicted, messages, escape(&exec)));
    }
    assert_eq!(results[0].1, 3, "redis-lite evicted_keys");
    assert_eq!(
        results[0], results[1],
        "left: redis-lite, right: redis-server"
    );
}

/// The eviction decision matches redis-server's in a deterministic case:
/// volatile-ttl over 20 keys of 100 KB with growing TTLs, and a limit
/// lowered to 5.5 keys (as each server measures one) below the memory in
/// use. Exact accounting makes both evict the same 6 keys, the 6 with the
/// shortest TTLs: a used_memory that counted jemalloc's thread caches would
/// be off by about a value's size and evict one key more or fewer.
///
/// What would make the outcome random on either server is kept out:
/// - all evictions happen in one performEvictions, whose first
///   evictionPoolPopulate samples every key (`maxmemory-samples 64`, more
///   than the 20 keys) and leaves the 16 shortest TTLs in the pool. Filling
///   up against the limit key by key would sample a few keys at a time from
///   a shrinking dict, and dictGetSomeKeys jumps to a random bucket after a
///   run of empty ones, so either server could pick a longer TTL.
/// - each value is grown in place by SETRANGE from a one-byte SET, so no
///   100 KB query buffer is held when used_memory is read.
#[test]
fn volatile_ttl_eviction_keeps_the_same_keys_as_redis() {
    let Some((lite, real)) = both() else { return };
    let mut survivors = Vec::new();
    for server in [&lite, &real] {
        let mut c = server.connect();
        c.must(&["CONFIG", "SET", "maxmemory-samples", "64"]);
        let set_key = |c: &mut Conn, key: &str, ttl: &str| {
            c.must(&["SET", key, "v", "EX", ttl]);
            c.must(&["SETRANGE", key, "99999", "v"]);
        };
        // Warm up: the client's buffers and the dict reach their sizes.
        for i in 0..20 {
            set_key(&mut c, &format!("key:{i}"), "100000");
        }
        c.must(&["FLUSHALL"]);
        // What one key with its 100 KB value costs this server, on average
        // over the 20.
        let before = info_field(&mut c, "used_memory");
        for i in 0..20 {
            let ttl = (1000 + i).to_string();
            set_key(&mut c, &format!("key:{i}"), &ttl);
        }
        let per_key = (info_field(&mut c, "used_memory") - before) / 20;
        limit_to_used_plus(&mut c, -(5 * per_key + per_key / 2), "volatile-ttl");
        // Evicts (from the eviction time event or before this command)
        // until used_memory is under the limit again.
        c.must(&["PING"]);
        c.must(&["CONFIG", "SET", "maxmemory", "0"]);
        let keys: Vec<i64> = (0..20)
            .filter(|i| int_reply(&c.must(&["EXISTS", &format!("key:{i}")])) == 1)
            .collect();
        survivors.push(keys);
    }
    assert_eq!(survivors[0], (6..20).collect::<Vec<i64>>(), "redis-lite");
    assert_eq!(survivors[0], survivors[1], "redis-lite vs redis-server");
}

/// CONFIG SET maxmemory does not evict inside the command (Redis 7.0.15's
/// updateMaxmemory only starts the eviction time event): a CONFIG SET
/// queued in MULTI leaves the transaction's keys alone until EXEC is over,
/// and the eviction comes after it.
#[test]
fn config_set_maxmemory_in_multi_evicts_after_exec() {
    let outcome = common::run_on_both(|p| {
        let mut c = p.connect();
        c.must(&["CONFIG", "SET", "maxmemory-policy", "allkeys-lru"]);
        c.must(&["MULTI"]);
        c.must(&["INCR", "x"]);
        c.must(&["CONFIG", "SET", "maxmemory", "1"]);
        c.must(&["INCR", "x"]);
        let exec = c.must(&["EXEC"]);
        // Then the key goes, from the event loop.
        let mut emptied = false;
        for _ in 0..500 {
            if c.must(&["DBSIZE"]) == b":0\r\n" {
                emptied = true;
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        c.must(&["CONFIG", "SET", "maxmemory", "0"]);
        (exec, emptied)
    });
    assert_eq!(outcome, (b"*3\r\n:1\r\n+OK\r\n:2\r\n".to_vec(), true));
}

/// dictExpandAllowed: 4096 keys fill the keyspace's 4096 buckets; with
/// maxmemory 10 KB above what is used, doubling the table (8192 buckets,
/// 64 KB) is refused, so two more SETs evict nothing and the dict stays
/// (over)full. Unit/maxmemory's "Don't rehash if used memory exceeds
/// maxmemory after rehash", on both servers.
fn keys_after_a_refused_rehash(p: &Process) -> (i64, i64) {
    let mut c = p.connect();
    c.must(&["FLUSHALL"]);
    c.must(&["CONFIG", "SET", "latency-tracking", "no"]);
    let cmds: Vec<Vec<String>> = (0..4096)
        .map(|i| vec!["SET".into(), format!("key:{i}"), i.to_string()])
        .collect();
    assert_eq!(pipeline(&mut c, &cmds), 0);
    limit_to_used_plus(&mut c, 10 * 1024, "allkeys-random");
    c.must(&["SET", "k1", "v1"]);
    c.must(&["SET", "k2", "v2"]);
    let dbsize = int_reply(&c.must(&["DBSIZE"]));
    let evicted = info_field(&mut c, "evicted_keys");
    c.must(&["CONFIG", "SET", "maxmemory", "0"]);
    (dbsize, evicted)
}

#[test]
fn keyspace_does_not_grow_past_maxmemory_by_rehashing() {
    let ours = keys_after_a_refused_rehash(&Server::start());
    assert_eq!(ours, (4098, 0));
    if let Some(real) = RealRedis::start() {
        assert_eq!(
            ours,
            keys_after_a_refused_rehash(&real),
            "redis-lite vs redis-server"
        );
    }
}

/// What one server did when a script and a function left their garbage in
/// Lua under a tight maxmemory: whether that garbage was really there (so
/// the test would catch it being counted), then every reply and counter
/// that the limit decides.
#[derive(Debug, PartialEq)]
struct LuaGarbageOutcome {
    lua_heap_grew: bool,
    replies: Vec<Vec<u8>>,
    dbsize: Vec<u8>,
    evicted_keys: i64,
}

/// Redis's Lua heap is outside used_memory (Lua calls libc's allocator,
/// zmalloc jemalloc), so maxmemory never refuses a write or evicts a key
/// because a script left garbage: with a limit 4 MB above the dataset, a
/// script that leaves ~35 MB of unreachable tables in the EVAL state
/// and a function that does the same in the functions' state change
/// nothing, under noeviction and under allkeys-lru, on both servers.
#[test]
fn lua_garbage_is_not_counted_by_maxmemory() {
    // Builds 300k small tables (about 35 MB) and drops them: garbage. (Tables,
    // not long strings: Lua 5.1 hashes only some characters of a long
    // string, so strings differing in a few digits would all collide.)
    let garbage = "local t = {} for i = 1, 300000 do t[i] = {i, i} end return #t";
    let lib = format!("#!lua name=junk\nredis.register_function('junk', function() {garbage} end)");
    let outcome = common::run_on_both(|p| {
        let mut c = p.connect();
        c.must(&["DEBUG", "POPULATE", "2000", "key", "100"]);
        c.must(&["FUNCTION", "LOAD", &lib]);
        let lua_before = info_field(&mut c, "used_memory_lua");
        let vm_fn_before = info_field(&mut c, "used_memory_vm_functions");
        let mut replies = Vec::new();
        for policy in ["noeviction", "allkeys-lru"] {
            limit_to_used_plus(&mut c, 4 << 20, policy);
            replies.push(c.must(&["EVAL", garbage, "0"]));
            replies.push(c.must(&["FCALL", "junk", "0"]));
            replies.push(c.must(&["SET", &format!("after:{policy}"), "v"]));
            replies.push(c.must(&["EVAL", "return redis.call('incr', 'n')", "0"]));
            c.must(&["CONFIG", "SET", "maxmemory", "0"]);
        }
        let lua_heap_grew = info_field(&mut c, "used_memory_lua") > lua_before + (10 << 20)
            && info_field(&mut c, "used_memory_vm_functions") > vm_fn_before + (10 << 20);
        LuaGarbageOutcome {
            lua_heap_grew,
            replies,
            dbsize: c.must(&["DBSIZE"]),
            evicted_keys: info_field(&mut c, "evicted_keys"),
        }
    });
    assert!(outcome.lua_heap_grew, "{outcome:?}");
    assert_eq!(outcome.dbsize, b":2003\r\n", "{outcome:?}");
    assert_eq!(outcome.evicted_keys, 0);
}
