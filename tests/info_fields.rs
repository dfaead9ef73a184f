//! INFO's field names and their order must be Redis 7.0.15's: the values
//! differ between two servers, the names and sections must not. Activity
//! lines (cmdstat_*, latency_percentiles_usec_*, errorstat_*, db*) are
//! compared as sets, since Redis lists commands in hash order.

mod common;

use common::{RealRedis, Server};

/// The reply's text without the bulk/verbatim header.
fn text(reply: &[u8]) -> String {
    let s = String::from_utf8_lossy(reply).into_owned();
    let body = s
        .split_once("\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    body.strip_prefix("txt:")
        .map(str::to_string)
        .unwrap_or(body)
}

/// (ordered fixed names, sorted activity names) of an INFO text.
fn names(info: &str) -> (Vec<String>, Vec<String>) {
    let mut fixed = Vec::new();
    let mut activity = Vec::new();
    for line in info.split("\r\n") {
        let name = line.split(':').next().unwrap_or("").to_string();
        let is_activity = ["cmdstat_", "latency_percentiles_usec_", "errorstat_", "db"]
            .iter()
            .any(|p| name.starts_with(p));
        if is_activity {
            activity.push(name);
        } else {
            fixed.push(name);
        }
    }
    activity.sort();
    (fixed, activity)
}

#[test]
fn info_field_names_match_redis() {
    let Some(real) = RealRedis::start() else {
        return;
    };
    let lite = Server::start();
    let mut infos = Vec::new();
    for p in [&real, &lite] {
        let mut c = p.connect();
        // The same activity on both: a key with a TTL, a miss, an error.
        c.must(&["SET", "k", "v"]);
        c.must(&["EXPIRE", "k", "100"]);
        c.must(&["GET", "nokey"]);
        c.must(&["NOSUCHCOMMAND"]);
        let mut per_arg = Vec::new();
        for args in [
            vec!["INFO"],
            vec!["INFO", "everything"],
            vec!["INFO", "all"],
            vec!["INFO", "keyspace", "CPU"],
            vec!["INFO", "bogus"],
        ] {
            per_arg.push(names(&text(&c.must(&args))));
        }
        infos.push(per_arg);
    }
    assert_eq!(
        infos[0], infos[1],
        "INFO field names differ (left: redis-server, right: redis-lite)"
    );
}

/// INFO's values, not only its names: after the same deterministic
/// activity on both servers, every field that does not measure time,
/// memory, ports, pids or ids must read the same (the counters the server
/// keeps: hits, misses, errors, expiries, clients, blocked clients,
/// pub/sub, functions, dirty, role...). Command statistics are compared
/// without their timings.
#[test]
fn info_values_after_the_same_activity_match_redis() {
    // Fields whose value is the same for the same activity.
    const FIELDS: &[&str] = &[
        "redis_version",
        "redis_mode",
        "arch_bits",
        "multiplexing_api",
        "atomicvar_api",
        "io_threads_active",
        "connected_clients",
        "cluster_connections",
        "maxclients",
        "blocked_clients",
        "tracking_clients",
        "clients_in_timeout_table",
        "maxmemory",
        "maxmemory_human",
        "maxmemory_policy",
        "mem_not_counted_for_evict",
        "mem_clients_slaves",
        "lazyfree_pending_objects",
        "lazyfreed_objects",
        "number_of_cached_scripts",
        "number_of_functions",
        "number_of_libraries",
        "loading",
        "async_loading",
        "rdb_changes_since_last_save",
        "rdb_bgsave_in_progress",
        "rdb_last_bgsave_status",
        "aof_enabled",
        "aof_rewrite_in_progress",
        "aof_rewrite_scheduled",
        "aof_last_bgrewrite_status",
        "aof_last_write_status",
        "module_fork_in_progress",
        "total_connections_received",
        "rejected_connections",
        "sync_full",
        "sync_partial_ok",
        "sync_partial_err",
        "expired_keys",
        "expired_stale_perc",
        "evicted_keys",
        "evicted_clients",
        "total_eviction_exceeded_time",
        "keyspace_hits",
        "keyspace_misses",
        "pubsub_channels",
        "pubsub_patterns",
        "pubsubshard_channels",
        "latest_fork_usec",
        "total_forks",
        "migrate_cached_sockets",
        "slave_expires_tracked_keys",
        "active_defrag_hits",
        "active_defrag_misses",
        "tracking_total_keys",
        "tracking_total_items",
        "tracking_total_prefixes",
        "unexpected_error_replies",
        "total_error_replies",
        "dump_payload_sanitizations",
        "io_threaded_reads_processed",
        "io_threaded_writes_processed",
        "role",
        "connected_slaves",
        "master_failover_state",
        "master_repl_offset",
        "second_repl_offset",
        "repl_backlog_active",
        "repl_backlog_size",
        "repl_backlog_first_byte_offset",
        "repl_backlog_histlen",
        "cluster_enabled",
    ];
    let Some(real) = RealRedis::start() else {
        common::skipped("redis-server not on PATH: INFO values not compared");
        return;
    };
    let lite = Server::start();
    let mut seen = Vec::new();
    for p in [&real, &lite] {
        let mut c = p.connect();
        let mut sub = p.connect();
        sub.must(&["SUBSCRIBE", "ch1", "ch2"]);
        sub.must(&["PSUBSCRIBE", "p*"]);
        let mut blocked = p.connect();
        blocked.send_cmd(&["BLPOP", "nolist", "100"]).unwrap();
        c.must(&["SET", "k", "v"]);
        c.must(&["SET", "gone", "v", "PX", "1"]);
        std::thread::sleep(std::time::Duration::from_millis(5));
        c.must(&["GET", "gone"]); // expired on access: a miss and an expiry
        c.must(&["GET", "k"]);
        c.must(&["GET", "nokey"]);
        c.must(&["LPUSH", "k", "x"]); // WRONGTYPE
        c.must(&["NOSUCHCOMMAND"]);
        c.must(&["EVAL", "return 1", "0"]);
        c.must(&[
            "FUNCTION",
            "LOAD",
            "#!lua name=lib\nredis.register_function('f', function() return 1 end)",
        ]);
        c.must(&["HSET", "h", "a", "1", "b", "2"]);
        c.must(&["EXPIRE", "h", "1000"]);
        // Wait until BLPOP has parked on both servers.
        let info = |c: &mut common::Conn| text(&c.must(&["INFO", "everything"]));
        // Each extra pass of the wait is one more INFO: taken off below.
        let start = std::time::Instant::now();
        let mut extra: i64 = 0;
        while !info(&mut c).contains("blocked_clients:1\r\n") {
            assert!(start.elapsed() < std::time::Duration::from_secs(10));
            std::thread::sleep(std::time::Duration::from_millis(5));
            extra += 1;
        }
        let text = info(&mut c);
        let minus_extra = |v: &str| (v.parse::<i64>().unwrap() - extra).to_string();
        let mut vals = Vec::new();
        for line in text.split("\r\n") {
            let Some((name, value)) = line.split_once(':') else {
                continue;
            };
            if name == "total_commands_processed" || name == "total_reads_processed" {
                vals.push(format!("{name}:{}", minus_extra(value)));
            } else if FIELDS.contains(&name) {
                vals.push(format!("{name}:{value}"));
            } else if name.starts_with("cmdstat_") {
                // calls, rejected and failed calls; usec varies.
                let mut kept: Vec<String> = value
                    .split(',')
                    .filter(|f| !f.starts_with("usec"))
                    .map(String::from)
                    .collect();
                if name == "cmdstat_info" {
                    kept[0] = format!("calls={}", minus_extra(&kept[0]["calls=".len()..]));
                }
                vals.push(format!("{name}:{}", kept.join(",")));
            } else if name.starts_with("errorstat_") || name.starts_with("db") {
                let kept: Vec<&str> = value
                    .split(',')
                    .filter(|f| !f.starts_with("avg_ttl"))
                    .collect();
                vals.push(format!("{name}:{}", kept.join(",")));
            }
        }
        vals.sort();
        seen.push(vals);
    }
    let (real_vals, lite_vals) = (&seen[0], &seen[1]);
    let diff: Vec<String> = real_vals
        .iter()
        .filter(|v| !lite_vals.contains(v))
        .map(|v| {
            let name = v.split(':').next().unwrap();
            let lite = lite_vals.iter().find(|l| l.split(':').next() == Some(name));
            format!(
                "redis {v} | lite {}",
                lite.map_or("(missing)", |s| s.as_str())
            )
        })
        .collect();
    assert!(diff.is_empty(), "INFO values differ:\n{}", diff.join("\n"));
    assert_eq!(real_vals.len(), lite_vals.len());
}

/// CONFIG RESETSTAT clears the counters that live beside their subsystem
/// (resetServerStats): sync_full / sync_partial_err from a raw PSYNC,
/// rdb_saves, aof_rewrites, total_forks, as redis-server does.
#[test]
fn config_resetstat_clears_sync_save_and_rewrite_counters_like_redis() {
    let fields = [
        "sync_full",
        "sync_partial_ok",
        "sync_partial_err",
        "rdb_saves",
        "aof_rewrites",
        "total_forks",
    ];
    let run = |p: &common::Process| -> Vec<(String, String)> {
        let mut c = p.connect();
        // A full sync for a replica that knows nothing (counted as
        // sync_full and, for `?`, as sync_partial_err too).
        let mut fake = p.connect();
        let _ = fake.send_cmd(&["PSYNC", "?", "-1"]);
        let mut before = Vec::new();
        for _ in 0..200 {
            let info = text(&c.must(&["INFO", "stats"]));
            if info.contains("sync_full:1") {
                before.push("synced".to_string());
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        assert_eq!(before, ["synced"], "the raw PSYNC got a full sync");
        drop(fake);
        c.must(&["SAVE"]);
        c.must(&["CONFIG", "RESETSTAT"]);
        let info = text(&c.must(&["INFO", "everything"]));
        let mut out = Vec::new();
        for f in fields {
            let v = info
                .lines()
                .find_map(|l| l.strip_prefix(&format!("{f}:")))
                .unwrap_or("missing")
                .trim()
                .to_string();
            out.push((f.to_string(), v));
        }
        out
    };
    let lite = Server::start_with(&["--repl-diskless-sync-delay", "0"]);
    let ours = run(&lite);
    assert!(ours.iter().all(|(_, v)| v == "0"), "{ours:?}");
    match RealRedis::start_with(&["--repl-diskless-sync-delay", "0"]) {
        Some(real) => assert_eq!(ours, run(&real), "redis-lite vs redis-server"),
        None => common::skipped("redis-server not installed: ran on redis-lite only"),
    }
}
