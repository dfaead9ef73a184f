//! MEMORY STATS, MEMORY DOCTOR, MEMORY MALLOC-STATS and MEMORY PURGE
//! (server/src/object_memory.rs) against a real redis-server 7.0.15: the
//! same fields in the same order with the same reply types in RESP2 and
//! RESP3, values that add up, Redis's doctor text, jemalloc's own report,
//! and a purge that really gives memory back.

mod common;

use common::{run_on_both, split_aggregate, Conn, Process, Server};

/// A bulk reply's payload.
fn bulk(reply: &[u8]) -> String {
    let start = reply.iter().position(|&b| b == b'\n').map_or(0, |i| i + 1);
    String::from_utf8_lossy(&reply[start..reply.len().saturating_sub(2)]).into_owned()
}

/// MEMORY STATS as (name, reply type byte) in order; the db.N maps
/// contribute "db.N/<field>" entries.
fn stats_shape(c: &mut Conn) -> Vec<(String, char)> {
    let reply = c.must(&["MEMORY", "STATS"]);
    let (_, elems) = split_aggregate(&reply).expect("MEMORY STATS is an aggregate");
    let mut out = Vec::new();
    for pair in elems.chunks(2) {
        let name = bulk(&pair[0]);
        out.push((name.clone(), pair[1][0] as char));
        if let Some((_, inner)) = split_aggregate(&pair[1]) {
            for p in inner.chunks(2) {
                out.push((format!("{name}/{}", bulk(&p[0])), p[1][0] as char));
            }
        }
    }
    out
}

/// MEMORY STATS as name -> integer value (RESP2; doubles are bulks).
fn stats_values(c: &mut Conn) -> std::collections::HashMap<String, f64> {
    let reply = c.must(&["MEMORY", "STATS"]);
    let (_, elems) = split_aggregate(&reply).expect("aggregate");
    let mut m = std::collections::HashMap::new();
    for pair in elems.chunks(2) {
        let v = &pair[1];
        let n = match v[0] {
            b':' => bulk_line(v).parse().unwrap_or(f64::NAN),
            b'$' => bulk(v).parse().unwrap_or(f64::NAN),
            _ => continue,
        };
        m.insert(bulk(&pair[0]), n);
    }
    m
}

fn bulk_line(reply: &[u8]) -> String {
    String::from_utf8_lossy(&reply[1..reply.len() - 2]).into_owned()
}

#[test]
fn memory_stats_has_redis_fields_in_order_with_redis_types() {
    let shape = run_on_both(|p: &Process| {
        let mut c = p.connect();
        c.must(&["SET", "a", "1"]);
        c.must(&["SELECT", "3"]);
        c.must(&["SET", "b", "2", "EX", "100"]);
        let resp2 = stats_shape(&mut c);
        c.must(&["HELLO", "3"]);
        let resp3 = stats_shape(&mut c);
        (resp2, resp3)
    });
    let names: Vec<&str> = shape.0.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "peak.allocated",
            "total.allocated",
            "startup.allocated",
            "replication.backlog",
            "clients.slaves",
            "clients.normal",
            "cluster.links",
            "aof.buffer",
            "lua.caches",
            "functions.caches",
            "db.0",
            "db.0/overhead.hashtable.main",
            "db.0/overhead.hashtable.expires",
            "db.0/overhead.hashtable.slot-to-keys",
            "db.3",
            "db.3/overhead.hashtable.main",
            "db.3/overhead.hashtable.expires",
            "db.3/overhead.hashtable.slot-to-keys",
            "overhead.total",
            "keys.count",
            "keys.bytes-per-key",
            "dataset.bytes",
            "dataset.percentage",
            "peak.percentage",
            "allocator.allocated",
            "allocator.active",
            "allocator.resident",
            "allocator-fragmentation.ratio",
            "allocator-fragmentation.bytes",
            "allocator-rss.ratio",
            "allocator-rss.bytes",
            "rss-overhead.ratio",
            "rss-overhead.bytes",
            "fragmentation",
            "fragmentation.bytes",
        ]
    );
    // RESP2: doubles are bulk strings; RESP3: a map with `,` doubles.
    let kind = |v: &[(String, char)], name: &str| v.iter().find(|(n, _)| n == name).unwrap().1;
    assert_eq!(kind(&shape.0, "dataset.percentage"), '$');
    assert_eq!(kind(&shape.1, "dataset.percentage"), ',');
    assert_eq!(kind(&shape.1, "db.0"), '%');
}

#[test]
fn memory_stats_values_add_up_and_follow_the_dataset() {
    let p = Server::start();
    let mut c = p.connect();
    c.must(&["DEBUG", "POPULATE", "100"]);
    c.must(&["SELECT", "1"]);
    c.must(&["DEBUG", "POPULATE", "50"]);
    let before = stats_values(&mut c);
    assert_eq!(
        before["keys.count"], 150.0,
        "keys.count = DBSIZE of all dbs"
    );
    assert!(before["startup.allocated"] > 0.0);
    assert!(before["peak.allocated"] >= before["total.allocated"]);
    assert!(before["allocator.active"] >= before["allocator.allocated"]);
    assert!(before["allocator.resident"] >= before["allocator.active"]);
    assert_eq!(
        before["overhead.total"] + before["dataset.bytes"],
        before["total.allocated"],
        "overhead + dataset = used memory"
    );
    // INFO memory reports the same split.
    let info = bulk(&c.must(&["INFO", "memory"]));
    assert!(
        info.contains(&format!(
            "used_memory_startup:{}\r\n",
            before["startup.allocated"]
        )),
        "{info}"
    );

    c.must(&["DEBUG", "POPULATE", "20000", "big", "100"]);
    let after = stats_values(&mut c);
    assert_eq!(after["keys.count"], 20150.0);
    // 20000 values of 100 bytes: at least 2 MB more data.
    assert!(
        after["dataset.bytes"] > before["dataset.bytes"] + 2_000_000.0,
        "{} -> {}",
        before["dataset.bytes"],
        after["dataset.bytes"]
    );
    let bpk = after["keys.bytes-per-key"];
    assert!(bpk > 100.0 && bpk < 1000.0, "bytes per key {bpk}");
}

const DOCTOR_EMPTY: &str = "Hi Sam, this instance is empty or is using very little memory, my issues detector can't be used in these conditions. Please, leave for your mission on Earth and fill it with some data. The new Sam and I will be back to our programming as soon as I finished rebooting.\n";

#[test]
fn memory_doctor_on_an_empty_instance_is_redis_text() {
    let replies = run_on_both(|p: &Process| {
        let mut c = p.connect();
        let resp2 = c.must(&["MEMORY", "DOCTOR"]);
        c.must(&["HELLO", "3"]);
        let resp3 = c.must(&["MEMORY", "DOCTOR"]);
        (resp2, resp3)
    });
    assert_eq!(
        replies.0,
        format!("${}\r\n{DOCTOR_EMPTY}\r\n", DOCTOR_EMPTY.len()).into_bytes()
    );
    assert_eq!(
        replies.1,
        format!("={}\r\ntxt:{DOCTOR_EMPTY}\r\n", DOCTOR_EMPTY.len() + 4).into_bytes()
    );
}

#[test]
fn memory_malloc_stats_is_jemallocs_report() {
    let p = Server::start();
    let mut c = p.connect();
    let text = bulk(&c.must(&["MEMORY", "MALLOC-STATS"]));
    assert!(
        text.starts_with("___ Begin jemalloc statistics ___\n"),
        "{text}"
    );
    assert!(text.contains("\nAllocated: "), "{text}");
    assert!(text.trim_end().ends_with("--- End jemalloc statistics ---"));
    // Errors as Redis's.
    let errs = run_on_both(|p: &Process| {
        let mut c = p.connect();
        (
            c.must(&["MEMORY", "STATS", "x"]),
            c.must(&["MEMORY", "PURGE", "x"]),
            c.must(&["MEMORY", "NOPE"]),
        )
    });
    assert!(errs.0.starts_with(b"-ERR wrong number of arguments"));
}

#[test]
fn memory_purge_gives_dirty_pages_back_after_a_big_flushall() {
    // Without jemalloc's background threads, which would purge the same
    // pages on their own clock while the test looks.
    let p = Server::start_with(&["--jemalloc-bg-thread", "no"]);
    let mut c = p.connect();
    c.must(&["DEBUG", "POPULATE", "200000", "k", "100"]);
    c.must(&["FLUSHALL", "SYNC"]);
    let before = stats_values(&mut c);
    assert_eq!(c.must(&["MEMORY", "PURGE"]), b"+OK\r\n");
    let after = stats_values(&mut c);
    let frag = |m: &std::collections::HashMap<String, f64>| {
        m["allocator.active"] - m["allocator.allocated"]
    };
    // Only the direction, generously: the freed pages were resident and
    // are not any more; active - allocated does not grow.
    assert!(
        after["allocator.resident"] < before["allocator.resident"],
        "resident {} -> {}",
        before["allocator.resident"],
        after["allocator.resident"]
    );
    assert!(
        frag(&after) <= frag(&before) + 65536.0,
        "active - allocated {} -> {}",
        frag(&before),
        frag(&after)
    );
}

/// jemalloc's "Background threads: N" line in MEMORY MALLOC-STATS.
fn background_threads(c: &mut Conn) -> u64 {
    let text = bulk(&c.must(&["MEMORY", "MALLOC-STATS"]));
    text.lines()
        .find_map(|l| l.strip_prefix("Background threads: "))
        .and_then(|rest| rest.split(',').next())
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no background threads line in\n{text}"))
}

/// jemalloc-bg-thread (default yes) really runs jemalloc's background
/// purging threads, and CONFIG SET stops and restarts them, as Redis's
/// set_jemalloc_bg_thread: jemalloc's own report counts them on both
/// servers. (That they give a FLUSHALL's pages back within seconds with
/// no traffic is a timing, measured outside cargo test.)
#[test]
fn jemalloc_bg_thread_runs_jemallocs_background_threads() {
    let states = run_on_both(|p: &Process| {
        let mut c = p.connect();
        let mut seen = vec![background_threads(&mut c) > 0];
        for value in ["no", "yes", "no"] {
            c.must(&["CONFIG", "SET", "jemalloc-bg-thread", value]);
            seen.push(background_threads(&mut c) > 0);
        }
        seen
    });
    assert_eq!(states, vec![true, false, true, false]);
    // Off from the command line: none at start.
    let p = Server::start_with(&["--jemalloc-bg-thread", "no"]);
    assert_eq!(background_threads(&mut p.connect()), 0);
}

/// An integer field of INFO memory.
fn info_memory_field(c: &mut Conn, field: &str) -> i64 {
    let info = bulk(&c.must(&["INFO", "memory"]));
    let prefix = format!("{field}:");
    info.lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("no {field} in INFO memory"))
        .trim()
        .parse()
        .unwrap_or_else(|e| panic!("{field}: {e}"))
}

/// How far used_memory may be from its earlier value once everything a
/// scenario allocated is freed: a few small allocations (stats, INFO's own
/// reply) may come and go, jemalloc's thread caches (hundreds of KB) may
/// not count.
const USED_MEMORY_SLACK: i64 = 16 * 1024;

/// Create a 1 MB value and delete it: used_memory comes back to where it
/// was, at once, as zmalloc_used_memory does (the value is built with
/// SETRANGE so no 1 MB query buffer stays behind).
fn used_memory_drift_after_big_value(p: &Process) -> bool {
    let mut c = p.connect();
    // Once, so lazily created structures (dict tables, stats) exist.
    c.must(&["SETRANGE", "big", "1048575", "x"]);
    c.must(&["DEL", "big"]);
    // The first INFO grows the client's reply buffer: not this test's point.
    info_memory_field(&mut c, "used_memory");
    let before = info_memory_field(&mut c, "used_memory");
    c.must(&["SETRANGE", "big", "1048575", "x"]);
    let with = info_memory_field(&mut c, "used_memory");
    assert!(
        with - before >= 1 << 20,
        "{before} -> {with}: the value shows"
    );
    c.must(&["DEL", "big"]);
    let after = info_memory_field(&mut c, "used_memory");
    let drift = (after - before).abs();
    assert!(drift < USED_MEMORY_SLACK, "{}: {before} -> {after}", p.name);
    drift < USED_MEMORY_SLACK
}

#[test]
fn used_memory_returns_to_its_value_after_a_big_value_is_deleted() {
    assert!(run_on_both(used_memory_drift_after_big_value));
}

/// A client reads a 1 MB reply and disconnects: once it is gone, the
/// memory of its output buffer (16 KB blocks, the kind jemalloc caches per
/// thread) no longer counts.
fn used_memory_drift_after_big_reply_client(p: &Process) -> bool {
    let mut c = p.connect();
    c.must(&["SETRANGE", "big", "1048575", "x"]);
    let round = |c: &mut Conn| {
        let mut reader = p.connect();
        let reply = reader.must(&["GET", "big"]);
        assert!(reply.len() > 1 << 20);
        drop(reader);
        // Wait for the server to notice the close (connected_clients).
        for _ in 0..500 {
            let info = bulk(&c.must(&["INFO", "clients"]));
            if info.contains("connected_clients:1\r\n") {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        panic!("the reader never went away");
    };
    round(&mut c); // warm up
    let before = info_memory_field(&mut c, "used_memory");
    round(&mut c);
    let after = info_memory_field(&mut c, "used_memory");
    let drift = (after - before).abs();
    assert!(drift < USED_MEMORY_SLACK, "{}: {before} -> {after}", p.name);
    drift < USED_MEMORY_SLACK
}

#[test]
fn used_memory_returns_to_its_value_after_a_big_reply_client_leaves() {
    assert!(run_on_both(used_memory_drift_after_big_reply_client));
}

/// Without replication or AOF nothing is exempt from maxmemory, and the
/// replication fields are 0, as on redis-server.
#[test]
fn not_counted_memory_is_zero_without_replicas_or_aof() {
    let fields = run_on_both(|p: &Process| {
        let mut c = p.connect();
        [
            "mem_not_counted_for_evict",
            "mem_replication_backlog",
            "mem_clients_slaves",
            "mem_total_replication_buffers",
            "mem_aof_buffer",
        ]
        .map(|f| info_memory_field(&mut c, f))
    });
    assert_eq!(fields, [0; 5]);
}

/// With AOF on, the AOF buffer is not counted for eviction; after a write
/// it is part of mem_not_counted_for_evict (at the next loop pass it is
/// written and emptied, so only its capacity may remain).
#[test]
fn aof_buffer_is_not_counted_for_evict() {
    let p = Server::start_with(&["--appendonly", "yes", "--appendfsync", "no"]);
    let mut c = p.connect();
    c.must(&["SET", "k", "v"]);
    let not_counted = info_memory_field(&mut c, "mem_not_counted_for_evict");
    let aof_buffer = info_memory_field(&mut c, "mem_aof_buffer");
    assert!(not_counted >= aof_buffer, "{not_counted} < {aof_buffer}");
}

/// A replica connected to a master with a backlog: the master's INFO
/// reports a replication buffer (the stream it keeps for the replica and
/// the backlog), counted as backlog (up to repl-backlog-size) and not
/// subtracted from used_memory while within the backlog size, as Redis
/// 7.0 does.
#[test]
fn replication_buffers_show_in_info_memory() {
    let master = Server::start();
    let replica = Server::start();
    let mut r = replica.connect();
    r.must(&["REPLICAOF", "127.0.0.1", &master.port.to_string()]);
    let mut m = master.connect();
    for _ in 0..500 {
        let info = bulk(&m.must(&["INFO", "replication"]));
        if info.contains("state=online") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    m.must(&["SET", "k", "v"]);
    let total = info_memory_field(&mut m, "mem_total_replication_buffers");
    let backlog = info_memory_field(&mut m, "mem_replication_backlog");
    let slaves = info_memory_field(&mut m, "mem_clients_slaves");
    assert!(total > 0, "the backlog holds the stream");
    assert_eq!(backlog + slaves, total);
    assert_eq!(slaves, 0, "within repl-backlog-size it is the backlog's");
}
