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
    let p = Server::start();
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
