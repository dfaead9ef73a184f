//! INFO [section ...] (Redis's server.c genRedisInfoString / infoCommand).
//!
//! INFO is one text: sections in a fixed order, each a `# Title` line and
//! `field:value` lines, all ending in CRLF, with an empty line between two
//! sections. The field names and their order are Redis 7.0.15's, so tools
//! that parse INFO (redis-cli --stat, monitoring agents, client libraries
//! reading redis_version) work unchanged.
//!
//! Values are real where redis-lite has the thing (memory from jemalloc,
//! CPU from getrusage, counters from `srv.stats`, clients, keyspace,
//! command and error statistics) and Redis's idle values where the feature
//! does not exist (persistence, replication, modules, cluster).
//!
//! Section selection (genInfoSectionDict): no argument or `default` gives
//! the default sections; `all` adds commandstats and latencystats;
//! `everything` is all (no module sections here). Names are
//! case-insensitive, several may be given, unknown ones add nothing.

use crate::memory;
use crate::networking::Client;
use crate::server::{Server, REDIS_VERSION};

/// Every section in output order (the order genRedisInfoString writes them).
const SECTIONS: &[&str] = &[
    "server",
    "clients",
    "memory",
    "persistence",
    "stats",
    "replication",
    "cpu",
    "modules",
    "commandstats",
    "errorstats",
    "latencystats",
    "cluster",
    "keyspace",
];

/// The sections of a bare INFO / INFO default.
const DEFAULT_SECTIONS: &[&str] = &[
    "server",
    "clients",
    "memory",
    "persistence",
    "stats",
    "replication",
    "cpu",
    "modules",
    "errorstats",
    "cluster",
    "keyspace",
];

/// INFO [section [section ...]]
// redis: server.c infoCommand
pub fn info_command(srv: &mut Server, c: &mut Client) {
    let sections: Vec<String> = (1..c.argc())
        .map(|i| String::from_utf8_lossy(c.arg(i)).to_ascii_lowercase())
        .collect();
    let info = gen_info_string(srv, &sections);
    // Bulk string in RESP2, verbatim `txt` string in RESP3.
    c.add_reply_verbatim(info.as_bytes());
}

/// genRedisInfoString: the INFO text for the requested section names
/// (lower-case or not; empty means "default").
pub fn gen_info_string(srv: &Server, sections: &[String]) -> String {
    let wanted = |name: &str| -> bool {
        if sections.is_empty() {
            return DEFAULT_SECTIONS.contains(&name);
        }
        sections.iter().any(|s| {
            let s = s.to_ascii_lowercase();
            s == name
                || (s == "default" && DEFAULT_SECTIONS.contains(&name))
                || s == "all"
                || s == "everything"
        })
    };
    let mut out = String::new();
    for &name in SECTIONS {
        if !wanted(name) {
            continue;
        }
        if !out.is_empty() {
            out.push_str("\r\n");
        }
        let body = match name {
            "server" => server_section(srv),
            "clients" => clients_section(srv),
            "memory" => memory_section(srv),
            "persistence" => persistence_section(srv),
            "stats" => stats_section(srv),
            "replication" => replication_section(srv),
            "cpu" => cpu_section(),
            "modules" => "# Modules\r\n".to_string(),
            "commandstats" => commandstats_section(srv),
            "errorstats" => errorstats_section(srv),
            "latencystats" => format!(
                "# Latencystats\r\n{}",
                crate::latency::latencystats_info(srv)
            ),
            "cluster" => format!(
                "# Cluster\r\ncluster_enabled:{}\r\n",
                srv.cluster.is_some() as u8
            ),
            _ => keyspace_section(srv),
        };
        out.push_str(&body);
    }
    out
}

/// Append `field:value\r\n` lines.
macro_rules! fields {
    ($out:expr, $($name:literal => $val:expr),* $(,)?) => {
        $( $out.push_str(&format!(concat!($name, ":{}\r\n"), $val)); )*
    };
}

/// `uname -s -r -m`, as INFO's os field.
fn os_string() -> String {
    // SAFETY: uname fills the zeroed struct; fields are NUL-terminated.
    unsafe {
        let mut u: libc::utsname = std::mem::zeroed();
        if libc::uname(&mut u) != 0 {
            return "Linux".into();
        }
        let f = |p: &[libc::c_char]| {
            std::ffi::CStr::from_ptr(p.as_ptr())
                .to_string_lossy()
                .into_owned()
        };
        format!("{} {} {}", f(&u.sysname), f(&u.release), f(&u.machine))
    }
}

fn server_section(srv: &Server) -> String {
    let uptime = srv.start_time.elapsed().as_secs();
    let mut s = String::from("# Server\r\n");
    fields!(s,
        "redis_version" => REDIS_VERSION,
        "redis_git_sha1" => "00000000",
        "redis_git_dirty" => 0,
        "redis_build_id" => crate::config::REDIS_BUILD_ID,
        "redis_mode" => "standalone",
        "os" => os_string(),
        "arch_bits" => 64,
        "monotonic_clock" => "POSIX clock_gettime",
        "multiplexing_api" => "epoll",
        "atomicvar_api" => "c11-builtin",
        "gcc_version" => "0.0.0",
        "process_id" => std::process::id(),
        "process_supervised" => "no",
        "run_id" => srv.run_id,
        "tcp_port" => srv.config.port,
        "server_time_usec" => crate::server::ustime(),
        "uptime_in_seconds" => uptime,
        "uptime_in_days" => uptime / 86400,
        "hz" => srv.hz,
        "configured_hz" => srv.config.hz,
        "lru_clock" => srv.lruclock,
        "executable" => srv.executable,
        "config_file" => srv.config_file,
        "io_threads_active" => 0,
    );
    // Only while a shutdown waits for its replicas.
    if let Some(ms) = crate::shutdown::shutdown_in_milliseconds() {
        s.push_str(&format!("shutdown_in_milliseconds:{ms}\r\n"));
    }
    s
}

fn clients_section(srv: &Server) -> String {
    // The caller is out of srv.clients while its command runs: count it.
    // Replicas are not clients here (listLength(clients) - listLength(slaves)).
    let connected = (srv.clients.len() + 1).saturating_sub(srv.repl.slaves.len());
    let max_in = srv
        .clients
        .values()
        .map(|c| c.querybuf_peak)
        .max()
        .unwrap_or(0);
    let max_out = srv
        .clients
        .values()
        .map(|c| c.reply.output_memory())
        .max()
        .unwrap_or(0);
    let mut s = String::from("# Clients\r\n");
    fields!(s,
        "connected_clients" => connected,
        "cluster_connections" => 0,
        "maxclients" => srv.config.maxclients,
        "client_recent_max_input_buffer" => max_in,
        "client_recent_max_output_buffer" => max_out,
        "blocked_clients" => srv.blocked_clients,
        "tracking_clients" => srv.tracking.clients,
        "clients_in_timeout_table" => srv.clients_timeout_table.len(),
    );
    s
}

/// `%.2f` of a ratio, 0 when the divisor is 0.
fn ratio(a: usize, b: usize) -> String {
    if b == 0 {
        "0.00".into()
    } else {
        format!("{:.2}", a as f64 / b as f64)
    }
}

fn memory_section(srv: &Server) -> String {
    let used = memory::used_memory();
    let rss = memory::rss();
    let peak = srv.stat_peak_memory.max(used);
    let active = memory::allocator_active();
    let resident = memory::allocator_resident();
    let total = memory::total_system_memory();
    // The same split MEMORY STATS shows (object_memory.rs).
    let mh = crate::object_memory::get_memory_overhead_data(srv);
    let clients_mem = mh.clients_normal;
    let overhead = mh.overhead_total;
    let dataset = mh.dataset;
    let maxmemory = srv.config.maxmemory;
    let human = |n: usize| memory::bytes_to_human(n as u64);
    // LUA_IDLE_VM_BYTES: what Redis 7.0.15 reports for a Lua VM with no
    // script loaded yet (ours is created on the first EVAL).
    const LUA_IDLE_VM_BYTES: usize = 32768;
    let (lua_vm, scripts_eval, cached_scripts) = match srv.lctx.as_deref() {
        Some(l) => (l.used_memory(), l.scripts_memory(), l.scripts.len()),
        None => (LUA_IDLE_VM_BYTES, 0, 0),
    };
    let pct = |a: usize, b: usize| {
        if b == 0 {
            "0.00%".to_string()
        } else {
            format!("{:.2}%", a as f64 * 100.0 / b as f64)
        }
    };
    let mut s = String::from("# Memory\r\n");
    fields!(s,
        "used_memory" => used,
        "used_memory_human" => human(used),
        "used_memory_rss" => rss,
        "used_memory_rss_human" => human(rss),
        "used_memory_peak" => peak,
        "used_memory_peak_human" => human(peak),
        "used_memory_peak_perc" => pct(used, peak),
        "used_memory_overhead" => overhead,
        "used_memory_startup" => mh.startup_allocated,
        "used_memory_dataset" => dataset,
        "used_memory_dataset_perc" => format!("{:.2}%", mh.dataset_perc),
        "allocator_allocated" => used,
        "allocator_active" => active,
        "allocator_resident" => resident,
        "total_system_memory" => total,
        "total_system_memory_human" => human(total),
        // The EVAL Lua VM and script cache (the VM is created on first
        // use; before that, the size of Redis's idle VM).
        "used_memory_lua" => lua_vm,
        "used_memory_vm_eval" => lua_vm,
        "used_memory_lua_human" => memory::bytes_to_human(lua_vm as u64),
        "used_memory_scripts_eval" => scripts_eval,
        "number_of_cached_scripts" => cached_scripts,
        "number_of_functions" => srv.functions.functions_num(),
        "number_of_libraries" => srv.functions.lib_ctx.libraries.len(),
        "used_memory_vm_functions" => srv.functions.memory_vm(),
        "used_memory_vm_total" => lua_vm + srv.functions.memory_vm(),
        "used_memory_vm_total_human" =>
            memory::bytes_to_human((lua_vm + srv.functions.memory_vm()) as u64),
        "used_memory_functions" => srv.functions.memory_engine(),
        "used_memory_scripts" => scripts_eval + srv.functions.memory_engine(),
        "used_memory_scripts_human" =>
            memory::bytes_to_human((scripts_eval + srv.functions.memory_engine()) as u64),
        "maxmemory" => maxmemory,
        "maxmemory_human" => memory::bytes_to_human(maxmemory),
        "maxmemory_policy" => srv.config.maxmemory_policy.name(),
        "allocator_frag_ratio" => ratio(active, used),
        "allocator_frag_bytes" => active as i64 - used as i64,
        "allocator_rss_ratio" => ratio(resident, active),
        "allocator_rss_bytes" => resident as i64 - active as i64,
        "rss_overhead_ratio" => ratio(rss, resident),
        "rss_overhead_bytes" => rss as i64 - resident as i64,
        "mem_fragmentation_ratio" => ratio(rss, used),
        "mem_fragmentation_bytes" => rss as i64 - used as i64,
        "mem_not_counted_for_evict" => crate::evict::free_memory_get_not_counted_memory(srv),
        "mem_replication_backlog" => mh.repl_backlog,
        "mem_total_replication_buffers" => crate::evict::repl_buffer_mem(srv),
        "mem_clients_slaves" => mh.clients_slaves,
        "mem_clients_normal" => clients_mem,
        "mem_cluster_links" => 0,
        "mem_aof_buffer" => mh.aof_buffer,
        "mem_allocator" => "jemalloc-5.3.0",
        "active_defrag_running" => 0,
        "lazyfree_pending_objects" => srv.lazyfree.pending_objects(),
        "lazyfreed_objects" => srv.lazyfree.freed_objects(),
    );
    s
}

fn persistence_section(srv: &Server) -> String {
    // RDB fields from rdb.rs, then the AOF's from aof.rs, then (while a
    // dataset loads, rdb.rs start_loading) the loading progress.
    let st = &srv.rdb;
    let now = crate::server::mstime() / 1000;
    let child = st.has_active_child();
    let mut s = String::from("# Persistence\r\n");
    fields!(s,
        "loading" => i32::from(srv.loading.loading && !srv.loading.async_loading),
        "async_loading" => i32::from(srv.loading.async_loading),
    );
    // The running fork child's report (childinfo.rs), any kind of child.
    for (name, value) in crate::childinfo::info_fields(srv) {
        s.push_str(&format!("{name}:{value}\r\n"));
    }
    fields!(s,
        "rdb_changes_since_last_save" => srv.dirty,
        "rdb_bgsave_in_progress" => i32::from(child),
        "rdb_last_save_time" => srv.lastsave,
        "rdb_last_bgsave_status" => if st.lastbgsave_ok { "ok" } else { "err" },
        "rdb_last_bgsave_time_sec" => st.save_time_last,
        "rdb_current_bgsave_time_sec" => if child { now - st.save_time_start } else { -1 },
        "rdb_saves" => st.stat_rdb_saves,
        "rdb_last_cow_size" => st.stat_rdb_cow_bytes,
        "rdb_last_load_keys_expired" => st.last_load_keys_expired,
        "rdb_last_load_keys_loaded" => st.last_load_keys_loaded,
    );
    // The AOF fields (aof.rs), and the aof_enabled block.
    for (name, value) in crate::aof::info_persistence_fields(srv) {
        s.push_str(&format!("{name}:{value}\r\n"));
    }
    if srv.loading.loading {
        loading_fields(&mut s, &srv.loading);
    }
    s
}

/// The loading_* block of INFO persistence: how far the load got, and a
/// guess of the seconds left (elapsed time scaled by the bytes left; a
/// fake 1 in the first second).
fn loading_fields(s: &mut String, l: &crate::rdb::LoadingState) {
    let mut perc = 0.0;
    let mut remaining: i64 = 1;
    if l.total_bytes != 0 {
        perc = l.loaded_bytes as f64 / l.total_bytes as f64 * 100.0;
        remaining = l.total_bytes as i64 - l.loaded_bytes as i64;
    } else if l.rdb_used_mem != 0 {
        // used-mem is a poor estimate of the size: never past 100%.
        perc = (l.loaded_bytes as f64 / l.rdb_used_mem as f64 * 100.0).min(99.99);
        remaining = (l.rdb_used_mem as i64 - l.loaded_bytes as i64).max(1);
    }
    let elapsed = crate::server::mstime() / 1000 - l.start_time;
    let eta = if elapsed == 0 {
        1
    } else {
        elapsed * remaining / (l.loaded_bytes as i64 + 1)
    };
    fields!(s,
        "loading_start_time" => l.start_time,
        "loading_total_bytes" => l.total_bytes,
        "loading_rdb_used_mem" => l.rdb_used_mem,
        "loading_loaded_bytes" => l.loaded_bytes,
        "loading_loaded_perc" => format!("{perc:.2}"),
        "loading_eta_seconds" => eta,
    );
}

fn stats_section(srv: &Server) -> String {
    let st = &srv.stats;
    let current_eviction_exceeded = st
        .last_eviction_exceeded_time
        .map_or(0, |t| t.elapsed().as_micros() as u64);
    let kbps = |m: &crate::server::InstMetric| format!("{:.2}", m.value() as f64 / 1024.0);
    let mut s = String::from("# Stats\r\n");
    fields!(s,
        "total_connections_received" => st.numconnections,
        "total_commands_processed" => st.numcommands,
        "instantaneous_ops_per_sec" => srv.inst_ops.value(),
        "total_net_input_bytes" => st.net_input_bytes + st.net_repl_input_bytes,
        "total_net_output_bytes" => st.net_output_bytes + st.net_repl_output_bytes,
        "total_net_repl_input_bytes" => st.net_repl_input_bytes,
        "total_net_repl_output_bytes" => st.net_repl_output_bytes,
        "instantaneous_input_kbps" => kbps(&srv.inst_net_input),
        "instantaneous_output_kbps" => kbps(&srv.inst_net_output),
        "instantaneous_input_repl_kbps" => kbps(&srv.inst_net_repl_input),
        "instantaneous_output_repl_kbps" => kbps(&srv.inst_net_repl_output),
        "rejected_connections" => st.rejected_conn,
        "sync_full" => srv.repl.stat_sync_full,
        "sync_partial_ok" => srv.repl.stat_sync_partial_ok,
        "sync_partial_err" => srv.repl.stat_sync_partial_err,
        "expired_keys" => st.expiredkeys,
        "expired_stale_perc" => format!("{:.2}", srv.expire_state.stale_perc * 100.0),
        "expired_time_cap_reached_count" => srv.expire_state.time_cap_reached_count,
        "expire_cycle_cpu_milliseconds" => srv.expire_state.cycle_time_used_us / 1000,
        "evicted_keys" => st.evictedkeys,
        "evicted_clients" => st.evictedclients,
        "total_eviction_exceeded_time" => (st.total_eviction_exceeded_time + current_eviction_exceeded) / 1000,
        "current_eviction_exceeded_time" => current_eviction_exceeded / 1000,
        "keyspace_hits" => st.keyspace_hits,
        "keyspace_misses" => st.keyspace_misses,
        "pubsub_channels" => srv.pubsub_channels.len(),
        "pubsub_patterns" => srv.pubsub_patterns.len(),
        "pubsubshard_channels" => srv.pubsubshard_channels.len(),
        "latest_fork_usec" => st.fork_time_us,
        "total_forks" => st.total_forks,
        "migrate_cached_sockets" => srv.migrate_sockets.len(),
        "slave_expires_tracked_keys" => 0,
        "active_defrag_hits" => 0,
        "active_defrag_misses" => 0,
        "active_defrag_key_hits" => 0,
        "active_defrag_key_misses" => 0,
        "total_active_defrag_time" => 0,
        "current_active_defrag_time" => 0,
        "tracking_total_keys" => crate::tracking::tracking_get_total_keys(srv),
        "tracking_total_items" => crate::tracking::tracking_get_total_items(srv),
        "tracking_total_prefixes" => crate::tracking::tracking_get_total_prefixes(srv),
        "unexpected_error_replies" => srv.stats.unexpected_error_replies,
        "total_error_replies" => st.total_error_replies,
        "dump_payload_sanitizations" => srv.stats.dump_payload_sanitizations,
        "total_reads_processed" => st.total_reads_processed,
        "total_writes_processed" => st.total_writes_processed,
        "io_threaded_reads_processed" => 0,
        "io_threaded_writes_processed" => 0,
        "reply_buffer_shrinks" => st.reply_buffer_shrinks,
        "reply_buffer_expands" => st.reply_buffer_expands,
    );
    s
}

fn replication_section(srv: &Server) -> String {
    let mut s = String::from("# Replication\r\n");
    if srv.repl.masterhost.is_some() {
        // The replica's own lines (replication/replica.rs).
        s.push_str("role:slave\r\n");
        s.push_str(&crate::replication::replica::info_replica_fields(srv));
    } else {
        fields!(s, "role" => "master");
    }
    // connected_slaves, the slaveN lines, the ids, offsets and backlog
    // (replication/master.rs).
    crate::replication::master::info_replication_master(srv, &mut s);
    s
}

/// getrusage() as `seconds.micros`.
fn rusage(who: libc::c_int) -> (String, String) {
    // SAFETY: getrusage fills the zeroed struct.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(who, &mut ru);
        ru
    };
    let t = |tv: libc::timeval| format!("{}.{:06}", tv.tv_sec, tv.tv_usec);
    (t(ru.ru_stime), t(ru.ru_utime))
}

fn cpu_section() -> String {
    let (sys, user) = rusage(libc::RUSAGE_SELF);
    let (csys, cuser) = rusage(libc::RUSAGE_CHILDREN);
    let (tsys, tuser) = rusage(libc::RUSAGE_THREAD);
    let mut s = String::from("# CPU\r\n");
    fields!(s,
        "used_cpu_sys" => sys,
        "used_cpu_user" => user,
        "used_cpu_sys_children" => csys,
        "used_cpu_user_children" => cuser,
        "used_cpu_sys_main_thread" => tsys,
        "used_cpu_user_main_thread" => tuser,
    );
    s
}

/// One line per command (subcommands as `config|get`) with any activity.
fn commandstats_section(srv: &Server) -> String {
    let mut s = String::from("# Commandstats\r\n");
    for cmd in &srv.commands.commands {
        let st = &cmd.stats;
        if st.calls == 0 && st.failed_calls == 0 && st.rejected_calls == 0 {
            continue;
        }
        let per_call = if st.calls == 0 {
            0.0
        } else {
            st.microseconds as f64 / st.calls as f64
        };
        s.push_str(&format!(
            "cmdstat_{}:calls={},usec={},usec_per_call={:.2},rejected_calls={},failed_calls={}\r\n",
            cmd.fullname, st.calls, st.microseconds, per_call, st.rejected_calls, st.failed_calls
        ));
    }
    s
}

/// `errorstat_<CODE>:count=N`, sorted by code (Redis keeps them in a rax).
fn errorstats_section(srv: &Server) -> String {
    let mut codes: Vec<(&String, &u64)> = srv.stats.errors.iter().collect();
    codes.sort();
    let mut s = String::from("# Errorstats\r\n");
    for (code, count) in codes {
        s.push_str(&format!("errorstat_{code}:count={count}\r\n"));
    }
    s
}

/// `db<N>:keys=..,expires=..,avg_ttl=..` for every non-empty database.
fn keyspace_section(srv: &Server) -> String {
    let mut s = String::from("# Keyspace\r\n");
    for (i, db) in srv.dbs.iter().enumerate() {
        let keys = db.dict.len();
        if keys == 0 {
            continue;
        }
        s.push_str(&format!(
            "db{i}:keys={keys},expires={},avg_ttl={}\r\n",
            db.expires.len(),
            db.avg_ttl
        ));
    }
    s
}
