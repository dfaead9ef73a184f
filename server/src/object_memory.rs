//! MEMORY STATS, MEMORY DOCTOR, MEMORY MALLOC-STATS and MEMORY PURGE
//! (Redis's object.c: getMemoryOverheadData, getMemoryDoctorReport and the
//! rest of memoryCommand; MEMORY USAGE lives in object.rs).
//!
//! Everything starts from one snapshot of the allocator (`memory.rs`): what
//! jemalloc says is allocated, active and resident, and the process RSS.
//! `get_memory_overhead_data` then splits `used_memory` the way Redis does:
//!
//! ```text
//! used_memory = startup + clients + lua/functions caches + per-db dict
//!               overhead (the "overhead")  +  the dataset (the rest)
//! ```
//!
//! The overhead is counted from the structures themselves: the bytes the
//! clients' buffers hold, the script caches as eval.rs/function.rs count
//! them, and for each database the entries and bucket arrays of its two
//! dicts (`Dict::mem_usage`: our real entry and bucket sizes, where Redis
//! writes `sizeof(dictEntry)` and `sizeof(dictEntry*)`). What no structure
//! claims is the dataset: keys and values. The replication buffer and the
//! AOF buffer count as Redis 7.0 counts them (evict.rs repl_buffer_mem);
//! cluster links are 0.
//!
//! INFO memory reports the same split (used_memory_overhead,
//! used_memory_startup, used_memory_dataset), from the same function.

use crate::memory;
use crate::networking::Client;
use crate::server::Server;

/// One database's share of the overhead (mh->db[i]).
pub struct DbOverhead {
    pub dbid: usize,
    /// The main dict: its entries (key pointer, the value, the chain link)
    /// and its bucket array.
    pub overhead_ht_main: usize,
    /// The expires dict: its entries and bucket array.
    pub overhead_ht_expires: usize,
    /// Cluster mode's slot-to-keys metadata: no cluster, so 0.
    pub overhead_ht_slot_to_keys: usize,
}

/// struct redisMemOverhead.
pub struct MemOverhead {
    pub peak_allocated: usize,
    pub total_allocated: usize,
    pub startup_allocated: usize,
    pub repl_backlog: usize,
    pub clients_slaves: usize,
    pub clients_normal: usize,
    pub cluster_links: usize,
    pub aof_buffer: usize,
    pub lua_caches: usize,
    pub functions_caches: usize,
    pub overhead_total: usize,
    pub dataset: usize,
    pub total_keys: usize,
    pub bytes_per_key: usize,
    /// Percentages and ratios are C floats in Redis; kept as f32 so the
    /// replies show the same digits (`(float)a / b` printed with %.17g).
    pub dataset_perc: f32,
    pub peak_perc: f32,
    pub total_frag: f32,
    pub total_frag_bytes: i64,
    pub allocator_allocated: usize,
    pub allocator_active: usize,
    pub allocator_resident: usize,
    pub allocator_frag: f32,
    pub allocator_frag_bytes: i64,
    pub allocator_rss: f32,
    pub allocator_rss_bytes: i64,
    pub rss_extra: f32,
    pub rss_extra_bytes: i64,
    pub db: Vec<DbOverhead>,
}

/// getMemoryOverheadData: where `used_memory` goes, from one allocator
/// snapshot. O(databases + clients).
pub fn get_memory_overhead_data(srv: &Server) -> MemOverhead {
    let (allocated, active, resident) = memory::allocator_info();
    let rss = memory::rss();
    // zmalloc_used_memory: exact, unlike jemalloc's allocated (memory.rs).
    let zmalloc_used = memory::used_memory();
    let peak = srv.stat_peak_memory.max(zmalloc_used);
    let ratio = |a: usize, b: usize| a as f32 / b as f32;
    let diff = |a: usize, b: usize| a as i64 - b as i64;

    let mut mem_total = srv.initial_memory_usage;
    // The backlog and the replicas share Redis 7.0's replication buffer:
    // what exceeds repl-backlog-size (with replicas connected) is theirs.
    let repl_buffer_mem = crate::evict::repl_buffer_mem(srv);
    let backlog_size = crate::evict::repl_backlog_size(srv);
    let (repl_backlog, clients_slaves) =
        if !srv.repl.slaves.is_empty() && repl_buffer_mem > backlog_size {
            (backlog_size, repl_buffer_mem - backlog_size)
        } else {
            (repl_buffer_mem, 0)
        };
    mem_total += repl_backlog + clients_slaves;
    // Replicas are not normal clients (getClientType).
    let clients_normal: usize = srv
        .clients
        .values()
        .filter(|c| !crate::evict::is_replica_client(c))
        .map(|c| crate::client_eviction::get_client_memory_usage(c))
        .sum();
    mem_total += clients_normal;
    let cluster_links = 0;
    let aof_buffer = if srv.aof.state != crate::aof::AofStatus::Off {
        srv.aof.buf.capacity()
    } else {
        0
    };
    mem_total += aof_buffer;
    let lua_caches = srv.lctx.as_deref().map_or(0, |l| l.scripts_memory());
    mem_total += lua_caches;
    let functions_caches = srv.functions.memory_engine();
    mem_total += functions_caches;

    let mut total_keys = 0;
    let mut db = Vec::new();
    for d in &srv.dbs {
        let keyscount = d.dict.len();
        if keyscount == 0 {
            continue;
        }
        total_keys += keyscount;
        let main = d.dict.mem_usage();
        let expires = d.expires.mem_usage();
        mem_total += main + expires;
        db.push(DbOverhead {
            dbid: d.id,
            overhead_ht_main: main,
            overhead_ht_expires: expires,
            overhead_ht_slot_to_keys: 0,
        });
    }

    let dataset = zmalloc_used.saturating_sub(mem_total);
    // The per-key figures leave out what an empty server uses already.
    let net_usage = if zmalloc_used > srv.initial_memory_usage {
        zmalloc_used - srv.initial_memory_usage
    } else {
        1
    };
    MemOverhead {
        peak_allocated: peak,
        total_allocated: zmalloc_used,
        startup_allocated: srv.initial_memory_usage,
        repl_backlog,
        clients_slaves,
        clients_normal,
        cluster_links,
        aof_buffer,
        lua_caches,
        functions_caches,
        overhead_total: mem_total,
        dataset,
        total_keys,
        bytes_per_key: net_usage.checked_div(total_keys).unwrap_or(0),
        dataset_perc: dataset as f32 * 100.0 / net_usage as f32,
        peak_perc: zmalloc_used as f32 * 100.0 / peak as f32,
        total_frag: ratio(rss, zmalloc_used),
        total_frag_bytes: diff(rss, zmalloc_used),
        allocator_allocated: allocated,
        allocator_active: active,
        allocator_resident: resident,
        allocator_frag: ratio(active, allocated),
        allocator_frag_bytes: diff(active, allocated),
        allocator_rss: ratio(resident, active),
        allocator_rss_bytes: diff(resident, active),
        rss_extra: ratio(rss, resident),
        rss_extra_bytes: diff(rss, resident),
        db,
    }
}

/// MEMORY STATS
// redis: object.c memoryCommand (stats)
pub fn memory_stats_command(srv: &mut Server, c: &mut Client) {
    let mh = get_memory_overhead_data(srv);
    c.add_reply_map_len(27 + mh.db.len());
    let int = |c: &mut Client, name: &str, v: i64| {
        c.add_reply_bulk(name.as_bytes());
        c.add_reply_integer(v);
    };
    int(c, "peak.allocated", mh.peak_allocated as i64);
    int(c, "total.allocated", mh.total_allocated as i64);
    int(c, "startup.allocated", mh.startup_allocated as i64);
    int(c, "replication.backlog", mh.repl_backlog as i64);
    int(c, "clients.slaves", mh.clients_slaves as i64);
    int(c, "clients.normal", mh.clients_normal as i64);
    int(c, "cluster.links", mh.cluster_links as i64);
    int(c, "aof.buffer", mh.aof_buffer as i64);
    int(c, "lua.caches", mh.lua_caches as i64);
    int(c, "functions.caches", mh.functions_caches as i64);
    for d in &mh.db {
        c.add_reply_bulk(format!("db.{}", d.dbid).as_bytes());
        c.add_reply_map_len(3);
        int(c, "overhead.hashtable.main", d.overhead_ht_main as i64);
        int(
            c,
            "overhead.hashtable.expires",
            d.overhead_ht_expires as i64,
        );
        int(
            c,
            "overhead.hashtable.slot-to-keys",
            d.overhead_ht_slot_to_keys as i64,
        );
    }
    int(c, "overhead.total", mh.overhead_total as i64);
    int(c, "keys.count", mh.total_keys as i64);
    int(c, "keys.bytes-per-key", mh.bytes_per_key as i64);
    int(c, "dataset.bytes", mh.dataset as i64);
    let double = |c: &mut Client, name: &str, v: f32| {
        c.add_reply_bulk(name.as_bytes());
        c.add_reply_double(f64::from(v));
    };
    double(c, "dataset.percentage", mh.dataset_perc);
    double(c, "peak.percentage", mh.peak_perc);
    int(c, "allocator.allocated", mh.allocator_allocated as i64);
    int(c, "allocator.active", mh.allocator_active as i64);
    int(c, "allocator.resident", mh.allocator_resident as i64);
    double(c, "allocator-fragmentation.ratio", mh.allocator_frag);
    int(c, "allocator-fragmentation.bytes", mh.allocator_frag_bytes);
    double(c, "allocator-rss.ratio", mh.allocator_rss);
    int(c, "allocator-rss.bytes", mh.allocator_rss_bytes);
    double(c, "rss-overhead.ratio", mh.rss_extra);
    int(c, "rss-overhead.bytes", mh.rss_extra_bytes);
    // The total RSS overhead, fragmentation included (kept by Redis for
    // backwards compatibility under this name).
    double(c, "fragmentation", mh.total_frag);
    int(c, "fragmentation.bytes", mh.total_frag_bytes);
}

/// MEMORY DOCTOR
// redis: object.c memoryCommand (doctor)
pub fn memory_doctor_command(srv: &mut Server, c: &mut Client) {
    // The caller is out of srv.clients while its command runs: count it.
    let numclients = srv.clients.len() + 1;
    let cached_scripts = srv.lctx.as_deref().map_or(0, |l| l.scripts.len());
    let mh = get_memory_overhead_data(srv);
    let report = get_memory_doctor_report(&mh, numclients, 0, cached_scripts);
    c.add_reply_verbatim(report.as_bytes());
}

/// Below this much allocated memory the instance is "empty" and the doctor
/// gives no advice (5 MB).
const DOCTOR_EMPTY_BYTES: usize = 1024 * 1024 * 5;

/// The fragmentation and RSS rules fire only past this many extra bytes
/// (10 MB), whatever the ratio.
const DOCTOR_MIN_EXTRA_BYTES: i64 = 10 << 20;

/// ZMALLOC_LIB: the allocator's name and version, as INFO mem_allocator.
const ZMALLOC_LIB: &str = "jemalloc-5.3.0";

/// getMemoryDoctorReport: Redis's rules, in its order, with its texts.
pub fn get_memory_doctor_report(
    mh: &MemOverhead,
    numclients: usize,
    numslaves: usize,
    cached_scripts: usize,
) -> String {
    let mut empty = false;
    let mut big_peak = false;
    let mut high_frag = false;
    let mut high_alloc_frag = false;
    let mut high_alloc_rss = false;
    let mut high_proc_rss = false;
    let mut big_slave_buf = false;
    let mut big_client_buf = false;
    let mut many_scripts = false;
    let mut num_reports = 0;

    if mh.total_allocated < DOCTOR_EMPTY_BYTES {
        empty = true;
        num_reports += 1;
    } else {
        // Peak is more than 150% of the memory used now?
        if mh.peak_allocated as f32 / mh.total_allocated as f32 > 1.5 {
            big_peak = true;
            num_reports += 1;
        }
        // Fragmentation (RSS / allocated) above 1.4 and 10 MB?
        if mh.total_frag > 1.4 && mh.total_frag_bytes > DOCTOR_MIN_EXTRA_BYTES {
            high_frag = true;
            num_reports += 1;
        }
        // External fragmentation (active / allocated) above 1.1 and 10 MB?
        if mh.allocator_frag > 1.1 && mh.allocator_frag_bytes > DOCTOR_MIN_EXTRA_BYTES {
            high_alloc_frag = true;
            num_reports += 1;
        }
        // The allocator's RSS (resident / active) above 1.1 and 10 MB?
        if mh.allocator_rss > 1.1 && mh.allocator_rss_bytes > DOCTOR_MIN_EXTRA_BYTES {
            high_alloc_rss = true;
            num_reports += 1;
        }
        // RSS outside the allocator (rss / resident) above 1.1 and 10 MB?
        if mh.rss_extra > 1.1 && mh.rss_extra_bytes > DOCTOR_MIN_EXTRA_BYTES {
            high_proc_rss = true;
            num_reports += 1;
        }
        // Clients using more than 200 KB each on average?
        let normal_clients = numclients.saturating_sub(numslaves).max(1);
        if mh.clients_normal / normal_clients > 1024 * 200 {
            big_client_buf = true;
            num_reports += 1;
        }
        // Replicas using more than 10 MB each?
        if numslaves > 0 && mh.clients_slaves > 1024 * 1024 * 10 {
            big_slave_buf = true;
            num_reports += 1;
        }
        // Too many cached scripts?
        if cached_scripts > 1000 {
            many_scripts = true;
            num_reports += 1;
        }
    }

    if num_reports == 0 {
        return "Hi Sam, I can't find any memory issue in your instance. \
                I can only account for what occurs on this base.\n"
            .to_string();
    }
    if empty {
        return "Hi Sam, this instance is empty or is using very little memory, \
                my issues detector can't be used in these conditions. \
                Please, leave for your mission on Earth and fill it with some data. \
                The new Sam and I will be back to our programming as soon as I \
                finished rebooting.\n"
            .to_string();
    }
    let mut s =
        String::from("Sam, I detected a few issues in this Redis instance memory implants:\n\n");
    if big_peak {
        s.push_str(" * Peak memory: In the past this instance used more than 150% the memory that is currently using. The allocator is normally not able to release memory after a peak, so you can expect to see a big fragmentation ratio, however this is actually harmless and is only due to the memory peak, and if the Redis instance Resident Set Size (RSS) is currently bigger than expected, the memory will be used as soon as you fill the Redis instance with more data. If the memory peak was only occasional and you want to try to reclaim memory, please try the MEMORY PURGE command, otherwise the only other option is to shutdown and restart the instance.\n\n");
    }
    if high_frag {
        s.push_str(&format!(" * High total RSS: This instance has a memory fragmentation and RSS overhead greater than 1.4 (this means that the Resident Set Size of the Redis process is much larger than the sum of the logical allocations Redis performed). This problem is usually due either to a large peak memory (check if there is a peak memory entry above in the report) or may result from a workload that causes the allocator to fragment memory a lot. If the problem is a large peak memory, then there is no issue. Otherwise, make sure you are using the Jemalloc allocator and not the default libc malloc. Note: The currently used allocator is \"{ZMALLOC_LIB}\".\n\n"));
    }
    if high_alloc_frag {
        s.push_str(" * High allocator fragmentation: This instance has an allocator external fragmentation greater than 1.1. This problem is usually due either to a large peak memory (check if there is a peak memory entry above in the report) or may result from a workload that causes the allocator to fragment memory a lot. You can try enabling 'activedefrag' config option.\n\n");
    }
    if high_alloc_rss {
        s.push_str(" * High allocator RSS overhead: This instance has an RSS memory overhead is greater than 1.1 (this means that the Resident Set Size of the allocator is much larger than the sum what the allocator actually holds). This problem is usually due to a large peak memory (check if there is a peak memory entry above in the report), you can try the MEMORY PURGE command to reclaim it.\n\n");
    }
    if high_proc_rss {
        s.push_str(" * High process RSS overhead: This instance has non-allocator RSS memory overhead is greater than 1.1 (this means that the Resident Set Size of the Redis process is much larger than the RSS the allocator holds). This problem may be due to Lua scripts or Modules.\n\n");
    }
    if big_slave_buf {
        s.push_str(" * Big replica buffers: The replica output buffers in this instance are greater than 10MB for each replica (on average). This likely means that there is some replica instance that is struggling receiving data, either because it is too slow or because of networking issues. As a result, data piles on the master output buffers. Please try to identify what replica is not receiving data correctly and why. You can use the INFO output in order to check the replicas delays and the CLIENT LIST command to check the output buffers of each replica.\n\n");
    }
    if big_client_buf {
        s.push_str(" * Big client buffers: The clients output buffers in this instance are greater than 200K per client (on average). This may result from different causes, like Pub/Sub clients subscribed to channels bot not receiving data fast enough, so that data piles on the Redis instance output buffer, or clients sending commands with large replies or very large sequences of commands in the same pipeline. Please use the CLIENT LIST command in order to investigate the issue if it causes problems in your instance, or to understand better why certain clients are using a big amount of memory.\n\n");
    }
    if many_scripts {
        s.push_str(" * Many scripts: There seem to be many cached scripts in this instance (more than 1000). This may be because scripts are generated and `EVAL`ed, instead of being parameterized (with KEYS and ARGV), `SCRIPT LOAD`ed and `EVALSHA`ed. Unless `SCRIPT FLUSH` is called periodically, the scripts' caches may end up consuming most of your memory.\n\n");
    }
    s.push_str("I'm here to keep you safe, Sam. I want to help you.\n");
    s
}

/// MEMORY MALLOC-STATS
// redis: object.c memoryCommand (malloc-stats)
pub fn memory_malloc_stats_command(_srv: &mut Server, c: &mut Client) {
    let info = memory::malloc_stats_print();
    c.add_reply_verbatim(info.as_bytes());
}

/// MEMORY PURGE
// redis: object.c memoryCommand (purge) -> zmalloc.c jemalloc_purge
pub fn memory_purge_command(_srv: &mut Server, c: &mut Client) {
    match memory::jemalloc_purge() {
        Ok(()) => c.add_reply_ok(),
        Err(_) => c.add_reply_error("ERR Error purging dirty pages"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn overhead(total: usize) -> MemOverhead {
        MemOverhead {
            peak_allocated: total,
            total_allocated: total,
            startup_allocated: 0,
            repl_backlog: 0,
            clients_slaves: 0,
            clients_normal: 0,
            cluster_links: 0,
            aof_buffer: 0,
            lua_caches: 0,
            functions_caches: 0,
            overhead_total: 0,
            dataset: total,
            total_keys: 0,
            bytes_per_key: 0,
            dataset_perc: 100.0,
            peak_perc: 100.0,
            total_frag: 1.0,
            total_frag_bytes: 0,
            allocator_allocated: total,
            allocator_active: total,
            allocator_resident: total,
            allocator_frag: 1.0,
            allocator_frag_bytes: 0,
            allocator_rss: 1.0,
            allocator_rss_bytes: 0,
            rss_extra: 1.0,
            rss_extra_bytes: 0,
            db: Vec::new(),
        }
    }

    #[test]
    fn doctor_says_empty_below_5mb() {
        let r = get_memory_doctor_report(&overhead(1 << 20), 1, 0, 0);
        assert!(r.starts_with("Hi Sam, this instance is empty"));
    }

    #[test]
    fn doctor_finds_nothing_on_a_healthy_instance() {
        let r = get_memory_doctor_report(&overhead(100 << 20), 1, 0, 0);
        assert!(r.starts_with("Hi Sam, I can't find any memory issue"));
    }

    #[test]
    fn doctor_reports_peak_and_big_client_buffers_in_order() {
        let mut mh = overhead(100 << 20);
        mh.peak_allocated = 200 << 20;
        mh.clients_normal = 10 << 20;
        let r = get_memory_doctor_report(&mh, 2, 0, 1001);
        let peak = r.find(" * Peak memory").unwrap();
        let clients = r.find(" * Big client buffers").unwrap();
        let scripts = r.find(" * Many scripts").unwrap();
        assert!(peak < clients && clients < scripts);
        assert!(r.ends_with("I'm here to keep you safe, Sam. I want to help you.\n"));
    }

    #[test]
    fn doctor_fragmentation_needs_both_ratio_and_bytes() {
        let mut mh = overhead(100 << 20);
        mh.allocator_frag = 1.5;
        mh.allocator_frag_bytes = 1 << 20; // ratio high, bytes small
        let r = get_memory_doctor_report(&mh, 1, 0, 0);
        assert!(!r.contains("High allocator fragmentation"));
        mh.allocator_frag_bytes = 20 << 20;
        let r = get_memory_doctor_report(&mh, 1, 0, 0);
        assert!(r.contains("High allocator fragmentation"));
    }
}
