//! maxmemory: the memory limit and key eviction (Redis's evict.c).
//!
//! With `maxmemory` set, `process_command` calls `perform_evictions` before
//! every command. It asks the allocator how much is in use
//! (`get_maxmemory_state`); over the limit it deletes keys chosen by
//! `maxmemory-policy` until enough is freed, or, under `noeviction` (the
//! default), reports EVICT_FAIL so that commands flagged deny-oom are
//! rejected with `-OOM command not allowed when used memory > 'maxmemory'.`
//!
//! How a victim is chosen, per policy:
//! - `allkeys-random` / `volatile-random`: a random key of the next db (the
//!   main dict, or only keys with a TTL from the expires dict).
//! - `*-lru`, `*-lfu`, `volatile-ttl`: Redis's approximation. There is no
//!   sorted index of keys by age; instead every round samples
//!   `maxmemory-samples` keys of each db (dictGetSomeKeys) into the
//!   *eviction pool*, EVPOOL_SIZE candidates kept sorted by "idle" score
//!   (idle time for LRU, 255 - frequency for LFU, -expire time for TTL).
//!   The best candidate (the pool's last entry) is evicted. The pool lives
//!   between calls, so good candidates from earlier samples are remembered.
//!
//! Each object carries a 24-bit `lru` field (storage::object::RObj). For LRU
//! it is the LRU clock (seconds) of the last access. Under an LFU policy it
//! is split as in Redis: the upper 16 bits are the last decrement time in
//! minutes, the lower 8 bits a logarithmic access counter (LFU_INIT_VAL for
//! new keys). `ObjectTouch` updates it on every key lookup (db.rs).
//!
//! Memory numbers come from memory.rs's `used_memory`, exact like Redis's
//! zmalloc_used_memory: the sum of jemalloc's per-thread allocated and
//! freed counters over every thread, so a free shows at once (blocks
//! resting in jemalloc's thread caches are not counted, unlike its
//! `stats.allocated`). Reading it is a lock and a few memory reads, cheap
//! enough before every command.
//!
//! Not counted against the limit (`free_memory_get_not_counted_memory`,
//! Redis 7.0's rules): the replication buffer beyond what the backlog
//! holds, and the AOF buffer.
//!
//! Client eviction (maxmemory-clients) frees connections, not keys: see
//! client_eviction.rs.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use storage::object::RObj;

use crate::config::MaxmemoryPolicy;
use crate::notify::{notify_keyspace_event, NOTIFY_EVICTED};
use crate::server::Server;

/// EVPOOL_SIZE: eviction candidates kept between rounds. 16 is Redis's
/// trade-off: big enough to remember good candidates from past samples,
/// small enough that the sorted insert is a few memmoves.
pub const EVPOOL_SIZE: usize = 16;

/// LFU_INIT_VAL: the counter of a new key. Not 0, so a new key is not the
/// first victim before it had a chance to be accessed.
pub const LFU_INIT_VAL: u32 = 5;

/// performEvictions' answer (EVICT_OK / EVICT_RUNNING / EVICT_FAIL).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EvictResult {
    /// Under the limit (or freed enough, or evicting is not safe now).
    Ok,
    /// Over the limit still, but `eviction_time_proc` keeps evicting
    /// between event-loop passes.
    Running,
    /// Over the limit and nothing can be freed (noeviction, no candidates).
    Fail,
}

/// struct evictionPoolEntry: one candidate, by name (the key may be gone by
/// the time it is picked).
#[derive(Debug)]
pub struct EvictionPoolEntry {
    /// Idle time, or 255 - frequency (LFU), or -expire time (TTL).
    pub idle: u64,
    pub key: Box<[u8]>,
    pub dbid: usize,
}

/// The eviction state kept on the server between calls.
#[derive(Debug, Default)]
pub struct EvictState {
    /// EvictionPoolLRU: candidates sorted by ascending `idle`; the best one
    /// is last. Redis keeps a fixed array with empty slots at the right end;
    /// here the filled prefix is the Vec itself (never above EVPOOL_SIZE).
    pub pool: Vec<EvictionPoolEntry>,
    /// The random policies visit the dbs round-robin (`static next_db`).
    pub next_db: usize,
    /// isEvictionProcRunning: eviction stopped at its time limit and goes
    /// on from the event loop (ae.rs calls `eviction_time_proc`).
    pub time_proc_running: bool,
}

// ---- policy flags (MAXMEMORY_FLAG_*) ----

/// MAXMEMORY_FLAG_LRU.
pub fn policy_is_lru(p: MaxmemoryPolicy) -> bool {
    matches!(
        p,
        MaxmemoryPolicy::VolatileLru | MaxmemoryPolicy::AllkeysLru
    )
}

/// MAXMEMORY_FLAG_LFU.
pub fn policy_is_lfu(p: MaxmemoryPolicy) -> bool {
    matches!(
        p,
        MaxmemoryPolicy::VolatileLfu | MaxmemoryPolicy::AllkeysLfu
    )
}

/// MAXMEMORY_FLAG_ALLKEYS: candidates come from every key, not only the
/// ones with a TTL.
pub fn policy_is_allkeys(p: MaxmemoryPolicy) -> bool {
    matches!(
        p,
        MaxmemoryPolicy::AllkeysLru | MaxmemoryPolicy::AllkeysLfu | MaxmemoryPolicy::AllkeysRandom
    )
}

/// MAXMEMORY_FLAG_NO_SHARED_INTEGERS: with maxmemory and an LRU/LFU policy
/// Redis does not hand out its shared 0..9999 integer objects, since every
/// key needs its own `lru` field (object.c tryObjectEncoding).
pub fn can_use_shared_integers(srv: &Server) -> bool {
    let p = srv.config.maxmemory_policy;
    !(srv.config.maxmemory != 0 && (policy_is_lru(p) || policy_is_lfu(p)))
}

// ---- LFU (Redis's "LFU (Least Frequently Used) implementation") ----

/// LFUGetTimeInMinutes: unix time in minutes, 16 bits.
pub fn lfu_get_time_in_minutes(unix_ms: i64) -> u32 {
    ((unix_ms / 1000 / 60) as u32) & 65535
}

/// LFUTimeElapsed: minutes since `ldt`, across one wrap of the 16 bits.
pub fn lfu_time_elapsed(now: u32, ldt: u32) -> u32 {
    if now >= ldt {
        now - ldt
    } else {
        65535 - ldt + now
    }
}

/// LFULogIncr: bump the counter with probability 1/((counter-5)*factor+1),
/// so it grows logarithmically (255 takes ~1M hits with factor 10).
pub fn lfu_log_incr(counter: u32, lfu_log_factor: i64) -> u32 {
    if counter >= 255 {
        return 255;
    }
    let r: f64 = rand::random::<f64>();
    let baseval = counter.saturating_sub(LFU_INIT_VAL) as f64;
    let p = 1.0 / (baseval * lfu_log_factor as f64 + 1.0);
    if r < p {
        counter + 1
    } else {
        counter
    }
}

/// LFUDecrAndReturn: the counter after decaying it by one per
/// `lfu-decay-time` minutes since the last decrement (the object itself is
/// not changed; `update_lfu` stores the result).
pub fn lfu_decr_and_return(lru: u32, now_min: u32, lfu_decay_time: i64) -> u32 {
    let ldt = lru >> 8;
    let counter = lru & 255;
    let num_periods = if lfu_decay_time > 0 {
        i64::from(lfu_time_elapsed(now_min, ldt)) / lfu_decay_time
    } else {
        0
    };
    if num_periods > 0 {
        if num_periods > i64::from(counter) {
            0
        } else {
            counter - num_periods as u32
        }
    } else {
        counter
    }
}

/// What a key lookup does to the object's `lru` field (db.c lookupKey):
/// under an LFU policy decay then bump the counter (updateLFU), otherwise
/// stamp the LRU clock. Computed before the lookup borrows the dict.
#[derive(Clone, Copy, Debug)]
pub struct ObjectTouch {
    lfu: bool,
    lruclock: u32,
    now_min: u32,
    lfu_log_factor: i64,
    lfu_decay_time: i64,
}

impl ObjectTouch {
    pub fn of(srv: &Server) -> ObjectTouch {
        ObjectTouch {
            lfu: policy_is_lfu(srv.config.maxmemory_policy),
            lruclock: srv.lruclock,
            now_min: lfu_get_time_in_minutes(srv.cmd_time_snapshot),
            lfu_log_factor: srv.config.lfu_log_factor,
            lfu_decay_time: srv.config.lfu_decay_time,
        }
    }

    /// Apply the access to `o`.
    pub fn touch(self, o: &mut RObj) {
        if self.lfu {
            // updateLFU
            let counter = lfu_decr_and_return(o.lru, self.now_min, self.lfu_decay_time);
            let counter = lfu_log_incr(counter, self.lfu_log_factor);
            o.lru = (self.now_min << 8) | counter;
        } else {
            o.lru = self.lruclock;
        }
    }
}

/// The `lru` field of a new object (object.c createObject): LFU time and
/// LFU_INIT_VAL under an LFU policy, the LRU clock otherwise.
pub fn object_lru_init(srv: &Server) -> u32 {
    if policy_is_lfu(srv.config.maxmemory_policy) {
        (lfu_get_time_in_minutes(srv.cmd_time_snapshot) << 8) | LFU_INIT_VAL
    } else {
        srv.lruclock
    }
}

// ---- the memory state ----

/// PROTO_REPLY_CHUNK_BYTES: Redis 7.0 allocates replication buffer blocks
/// of at least this many bytes.
pub const PROTO_REPLY_CHUNK_BYTES: usize = 16 * 1024;

/// sizeof(replBufBlock) (refcount, id, repl_offset, size, used: 40 bytes
/// on 64-bit) and sizeof(listNode) (3 pointers): what Redis 7.0 adds to
/// every replication buffer block.
pub const REPL_BUF_BLOCK_HEADER: usize = 40;
pub const LIST_NODE_SIZE: usize = 24;

/// CONFIG_REPL_BACKLOG_MIN_SIZE: server.repl_backlog_size is never below it.
const CONFIG_REPL_BACKLOG_MIN_SIZE: usize = 16 * 1024;

/// server.repl_backlog_size.
pub fn repl_backlog_size(srv: &Server) -> usize {
    (srv.config.repl_backlog_size.max(0) as usize).max(CONFIG_REPL_BACKLOG_MIN_SIZE)
}

/// Whether `c` is a replica (getClientType == CLIENT_TYPE_SLAVE: a MONITOR
/// client carries the slave flag too, and is not one).
pub fn is_replica_client(c: &crate::networking::Client) -> bool {
    use crate::networking::{CLIENT_MONITOR, CLIENT_SLAVE};
    c.flags & CLIENT_SLAVE != 0 && c.flags & CLIENT_MONITOR == 0
}

/// server.repl_buffer_mem as Redis 7.0 would count it for the same stream.
///
/// Redis 7.0 keeps the stream once, in a list of blocks the backlog and
/// every replica point into; repl_buffer_mem is those blocks' memory. Here
/// the backlog is a circular buffer (replication/mod.rs) and each replica
/// has its own output buffer, so the same figure is rebuilt from what each
/// holds: the shared list spans the last `max(backlog history, the largest
/// replica's unsent bytes)` bytes of the stream, in blocks of
/// PROTO_REPLY_CHUNK_BYTES plus header (jemalloc rounds that allocation up
/// to its size class, and Redis fills the rounding too), each also costing
/// a list node. No backlog: Redis 7.0 has no replication buffer either.
pub fn repl_buffer_mem(srv: &Server) -> usize {
    let Some(backlog) = srv.repl.backlog.as_ref() else {
        return 0;
    };
    let replicas_unsent = srv
        .repl
        .slaves
        .iter()
        .filter_map(|t| srv.clients.get(t))
        .map(|c| c.reply.len())
        .max()
        .unwrap_or(0);
    let held = backlog.histlen.max(replicas_unsent);
    if held == 0 {
        return 0;
    }
    let usable = crate::memory::usable_size_of(PROTO_REPLY_CHUNK_BYTES + REPL_BUF_BLOCK_HEADER);
    let per_block = usable - REPL_BUF_BLOCK_HEADER;
    held.div_ceil(per_block) * (usable + LIST_NODE_SIZE)
}

/// freeMemoryGetNotCountedMemory: memory that does not count against
/// maxmemory (INFO mem_not_counted_for_evict), by Redis 7.0's rules:
///
/// - The replication buffer beyond what the backlog accounts for
///   (repl-backlog-size plus an estimate of its block headers): that part
///   is the replicas' and would otherwise make evictions feed more DELs to
///   the replicas, growing their buffers further.
/// - The AOF buffer, while AOF is on.
///
/// With this server's layout (each replica has its own copy of the stream
/// in its output buffer, and the backlog is allocated at full size up
/// front) the allocator holds more than Redis 7.0 would: every replica's
/// output buffer and the backlog's unfilled part. Those are not counted
/// either, so that `used_memory - not counted` is what Redis 7.0 would
/// compare with maxmemory for the same clients and stream.
pub fn free_memory_get_not_counted_memory(srv: &Server) -> usize {
    let mut overhead = 0;
    let repl_buffer_mem = repl_buffer_mem(srv);
    let backlog_size = repl_backlog_size(srv);
    if repl_buffer_mem > backlog_size {
        let extra_approx_size =
            (backlog_size / PROTO_REPLY_CHUNK_BYTES + 1) * (REPL_BUF_BLOCK_HEADER + LIST_NODE_SIZE);
        let counted_mem = backlog_size + extra_approx_size;
        overhead += repl_buffer_mem.saturating_sub(counted_mem);
    }
    overhead += layout_excess_over_redis(srv, repl_buffer_mem);
    if srv.aof.state != crate::aof::AofStatus::Off {
        overhead += srv.aof.buf.capacity();
    }
    overhead
}

/// What this server's replication layout allocates beyond Redis 7.0's
/// repl_buffer_mem (see free_memory_get_not_counted_memory): the replicas'
/// own output buffers plus the backlog's allocation, less the shared
/// buffer Redis would hold, which used_memory does count.
fn layout_excess_over_redis(srv: &Server, repl_buffer_mem: usize) -> usize {
    let backlog = srv.repl.backlog.as_ref().map_or(0, |b| b.buf.capacity());
    let replicas: usize = srv
        .repl
        .slaves
        .iter()
        .filter_map(|t| srv.clients.get(t))
        .map(|c| crate::networking::client_output_memory(c))
        .sum();
    (backlog + replicas).saturating_sub(repl_buffer_mem)
}

/// maxmemory as the config last set it, and the not-counted overhead (the
/// replication buffers) as the last maxmemory check measured it: what
/// dictExpandAllowed, asked from deep inside the keyspace with no server at
/// hand, compares used_memory with.
static MAXMEMORY: AtomicUsize = AtomicUsize::new(0);
static NOT_COUNTED: AtomicUsize = AtomicUsize::new(0);

/// Called whenever the config's maxmemory is (re)read.
pub fn publish_maxmemory(maxmemory: u64) {
    MAXMEMORY.store(maxmemory as usize, Ordering::Relaxed);
}

/// HASHTABLE_MAX_LOAD_FACTOR: past this many entries per bucket a keyspace
/// dict grows whatever the memory (lookups would get slow).
const HASHTABLE_MAX_LOAD_FACTOR: f64 = 1.618;

/// overMaxmemoryAfterAlloc: would allocating `moremem` more bytes put
/// used_memory (less what maxmemory does not count) over the limit?
fn over_maxmemory_after_alloc(moremem: usize) -> bool {
    let maxmemory = MAXMEMORY.load(Ordering::Relaxed);
    if maxmemory == 0 {
        return false;
    }
    let mem_used = crate::memory::used_memory();
    if mem_used.saturating_add(moremem) <= maxmemory {
        return false;
    }
    let mem_used = mem_used.saturating_sub(NOT_COUNTED.load(Ordering::Relaxed));
    mem_used.saturating_add(moremem) > maxmemory
}

/// dictExpandAllowed: a keyspace dict that is not yet overfull (at most
/// HASHTABLE_MAX_LOAD_FACTOR entries per bucket) does not grow when its new
/// bucket array would push used_memory over maxmemory: the allocation
/// itself would make the next command evict (or refuse writes).
pub fn dict_expand_allowed(more_mem: usize, used_ratio: f64) -> bool {
    if used_ratio <= HASHTABLE_MAX_LOAD_FACTOR {
        !over_maxmemory_after_alloc(more_mem)
    } else {
        true
    }
}

/// getMaxmemoryState: Ok when under the limit (or no limit), else Err with
/// how many bytes must be freed.
pub fn get_maxmemory_state(srv: &mut Server) -> Result<(), usize> {
    let maxmemory = srv.config.maxmemory as usize;
    if maxmemory == 0 {
        return Ok(());
    }
    let mem_reported = crate::memory::used_memory();
    if mem_reported <= maxmemory {
        return Ok(());
    }
    let overhead = free_memory_get_not_counted_memory(srv);
    NOT_COUNTED.store(overhead, Ordering::Relaxed);
    let mem_used = mem_reported.saturating_sub(overhead);
    if mem_used <= maxmemory {
        return Ok(());
    }
    Err(mem_used - maxmemory)
}

/// isSafeToPerformEvictions: not from inside a timed-out script (its
/// writes and the evictions would interleave), not while clients are
/// paused (the dataset must not change). No loading or replicas here.
fn is_safe_to_perform_evictions(srv: &mut Server) -> bool {
    if crate::script::script_is_timedout(srv) {
        return false;
    }
    !crate::networking::check_client_pause_timeout_and_return_if_paused(srv)
}

/// evictionTimeLimitUs: how long one call may evict, from
/// maxmemory-eviction-tenacity: 0..10 is 0..500 µs linearly, then +15% per
/// step, and 100 means no limit.
pub fn eviction_time_limit_us(tenacity: i64) -> u64 {
    let t = tenacity.clamp(0, 100);
    if t <= 10 {
        return 50 * t as u64;
    }
    if t < 100 {
        return (500.0 * 1.15f64.powf(t as f64 - 10.0)) as u64;
    }
    u64::MAX
}

// ---- the eviction pool ----

/// evictionPoolPopulate: sample keys of one db and insert the ones that
/// beat the pool's worst into the pool, keeping it sorted by `idle`.
fn eviction_pool_populate(srv: &mut Server, dbid: usize) {
    let policy = srv.config.maxmemory_policy;
    let count = srv.config.maxmemory_samples.max(1) as usize;
    let lruclock = srv.lruclock;
    let now_min = lfu_get_time_in_minutes(srv.cmd_time_snapshot);
    let decay = srv.config.lfu_decay_time;
    let idle_of = |o: &RObj| -> u64 {
        if policy_is_lru(policy) {
            crate::object::estimate_object_idle_time(lruclock, o.lru)
        } else {
            255 - u64::from(lfu_decr_and_return(o.lru, now_min, decay))
        }
    };

    // dictGetSomeKeys on the main dict (allkeys-*) or the expires dict.
    let db = &mut srv.dbs[dbid];
    let samples: Vec<(Box<[u8]>, u64)> = if policy_is_allkeys(policy) {
        db.dict
            .some_entries(count)
            .into_iter()
            .map(|(k, o)| (k.clone(), idle_of(o)))
            .collect()
    } else {
        let dict = &db.dict;
        db.expires
            .some_entries(count)
            .into_iter()
            .map(|(k, &when)| {
                let idle = match (policy, dict.get(k)) {
                    // volatile-ttl: the sooner it expires, the better.
                    (MaxmemoryPolicy::VolatileTtl, _) => u64::MAX.wrapping_sub(when as u64),
                    (_, Some(o)) => idle_of(o),
                    (_, None) => 0,
                };
                (k.clone(), idle)
            })
            .collect()
    };

    let pool = &mut srv.evict.pool;
    for (key, idle) in samples {
        // The first slot whose idle is not smaller than ours.
        let k = pool
            .iter()
            .position(|e| e.idle >= idle)
            .unwrap_or(pool.len());
        let entry = EvictionPoolEntry { idle, key, dbid };
        if k == 0 && pool.len() == EVPOOL_SIZE {
            // Worse than every candidate and no free slot: skip it.
            continue;
        } else if pool.len() < EVPOOL_SIZE {
            // A free slot: shift the better ones right and insert.
            pool.insert(k, entry);
        } else {
            // Full: drop the worst (first) candidate, shifting left.
            pool.remove(0);
            pool.insert(k - 1, entry);
        }
    }
}

/// The best key for the pool policies (LRU, LFU, volatile-ttl): populate
/// the pool from every db, then take candidates from the best end until one
/// still exists. None when no db has candidates.
fn pick_from_pool(srv: &mut Server) -> Option<(usize, Box<[u8]>)> {
    let allkeys = policy_is_allkeys(srv.config.maxmemory_policy);
    loop {
        let mut total_keys = 0;
        for i in 0..srv.dbs.len() {
            let db = &srv.dbs[i];
            let keys = if allkeys {
                db.dict.len()
            } else {
                db.expires.len()
            };
            if keys != 0 {
                eviction_pool_populate(srv, i);
                total_keys += keys;
            }
        }
        if total_keys == 0 {
            return None; // no keys to evict
        }
        // From the best candidate down: the key may have been deleted since
        // it entered the pool (a ghost), then try the next one.
        while let Some(e) = srv.evict.pool.pop() {
            let db = &srv.dbs[e.dbid];
            let exists = if allkeys {
                db.dict.contains_key(&e.key)
            } else {
                db.expires.contains_key(&e.key)
            };
            if exists {
                return Some((e.dbid, e.key));
            }
        }
    }
}

/// The random policies: a random key of the next non-empty db.
fn pick_random(srv: &mut Server) -> Option<(usize, Box<[u8]>)> {
    let allkeys = srv.config.maxmemory_policy == MaxmemoryPolicy::AllkeysRandom;
    let dbnum = srv.dbs.len();
    for _ in 0..dbnum {
        srv.evict.next_db = srv.evict.next_db.wrapping_add(1);
        let j = srv.evict.next_db % dbnum;
        let db = &mut srv.dbs[j];
        let key = if allkeys {
            db.dict.random_entry_unfair().map(|(k, _)| k.clone())
        } else {
            db.expires.random_entry_unfair().map(|(k, _)| k.clone())
        };
        if let Some(key) = key {
            return Some((j, key));
        }
    }
    None
}

// ---- performEvictions ----

/// Delete one evicted key: lazily with lazyfree-lazy-eviction, then the
/// bookkeeping of a deletion (stats, WATCH, the `evicted` event). Returns
/// what the delete itself gave back, as Redis measures it: used memory
/// before minus after the delete only (a lazy free gives back later, on
/// the lazyfree thread). The invalidation messages, notifications and
/// propagation that follow are not subtracted, or tracking clients'
/// growing replies would make every eviction look like no gain and drain
/// the keyspace (the feedback loop Redis avoids the same way).
fn evict_key(srv: &mut Server, dbid: usize, key: &[u8]) -> i64 {
    let start = Instant::now();
    let lazy = srv.config.lazyfree_lazy_eviction;
    let before = crate::memory::used_memory() as i64;
    crate::db::db_generic_delete(srv, dbid, key, lazy, crate::db::FreeCause::Evict);
    let freed = before - crate::memory::used_memory() as i64;
    let threshold = srv.config.latency_monitor_threshold;
    let ms = start.elapsed().as_millis() as u64;
    srv.latency
        .add_sample_if_needed(threshold, "eviction-del", ms);
    srv.stats.evictedkeys += 1;
    crate::db::signal_modified_key(srv, dbid, key);
    notify_keyspace_event(srv, NOTIFY_EVICTED, "evicted", key, dbid);
    crate::propagate::propagate_deletion(srv, dbid, key, lazy);
    freed
}

/// performEvictions: if over maxmemory, evict keys per the policy until
/// under it again, or until the tenacity time limit (then the event loop
/// goes on with `eviction_time_proc`).
pub fn perform_evictions(srv: &mut Server) -> EvictResult {
    if !is_safe_to_perform_evictions(srv) {
        return EvictResult::Ok;
    }
    let mem_tofree = match get_maxmemory_state(srv) {
        Ok(()) => return update_metrics(srv, EvictResult::Ok),
        Err(n) => n as i64,
    };
    if srv.config.maxmemory_policy == MaxmemoryPolicy::NoEviction {
        // We need to free memory, but the policy forbids it.
        return update_metrics(srv, EvictResult::Fail);
    }

    let time_limit_us = eviction_time_limit_us(srv.config.maxmemory_eviction_tenacity);
    let timer = Instant::now();
    let lazy = srv.config.lazyfree_lazy_eviction;
    let mut mem_freed: i64 = 0;
    let mut keys_freed: u64 = 0;
    let mut result = EvictResult::Fail;
    let mut cant_free = false;
    while mem_freed < mem_tofree {
        let policy = srv.config.maxmemory_policy;
        let best = if policy_is_lru(policy)
            || policy_is_lfu(policy)
            || policy == MaxmemoryPolicy::VolatileTtl
        {
            pick_from_pool(srv)
        } else {
            pick_random(srv)
        };
        let Some((dbid, key)) = best else {
            cant_free = true; // nothing to free...
            break;
        };

        mem_freed += evict_key(srv, dbid, &key);
        keys_freed += 1;

        // Every 16 keys: with lazy freeing the memory goes back on another
        // thread, so ask again; and stop at the time limit.
        if keys_freed.is_multiple_of(16) {
            if lazy && get_maxmemory_state(srv).is_ok() {
                break;
            }
            if timer.elapsed().as_micros() as u64 > time_limit_us {
                start_eviction_time_proc(srv);
                break;
            }
        }
    }
    if !cant_free {
        result = if srv.evict.time_proc_running {
            EvictResult::Running
        } else {
            EvictResult::Ok
        };
    }

    if result == EvictResult::Fail {
        // Nothing left to evict: maybe the lazy-free thread is about to
        // give back enough. Wait for it, within the time limit.
        let wait_start = Instant::now();
        while srv.lazyfree.pending_objects() > 0
            && (timer.elapsed().as_micros() as u64) < time_limit_us
        {
            if get_maxmemory_state(srv).is_ok() {
                result = EvictResult::Ok;
                break;
            }
            std::thread::sleep(std::time::Duration::from_micros(time_limit_us.min(1000)));
        }
        let threshold = srv.config.latency_monitor_threshold;
        let ms = wait_start.elapsed().as_millis() as u64;
        srv.latency
            .add_sample_if_needed(threshold, "eviction-lazyfree", ms);
    }
    let threshold = srv.config.latency_monitor_threshold;
    let ms = timer.elapsed().as_millis() as u64;
    srv.latency
        .add_sample_if_needed(threshold, "eviction-cycle", ms);
    update_metrics(srv, result)
}

/// performEvictions' update_metrics: time spent over the limit (INFO
/// total_eviction_exceeded_time / current_eviction_exceeded_time).
fn update_metrics(srv: &mut Server, result: EvictResult) -> EvictResult {
    let st = &mut srv.stats;
    match result {
        EvictResult::Running | EvictResult::Fail => {
            if st.last_eviction_exceeded_time.is_none() {
                st.last_eviction_exceeded_time = Some(Instant::now());
            }
        }
        EvictResult::Ok => {
            if let Some(since) = st.last_eviction_exceeded_time.take() {
                st.total_eviction_exceeded_time += since.elapsed().as_micros() as u64;
            }
        }
    }
    result
}

/// startEvictionTimeProc: go on evicting from the event loop (Redis adds a
/// 0 ms time event; ae.rs runs `eviction_time_proc` on every pass and does
/// not sleep while this is set).
fn start_eviction_time_proc(srv: &mut Server) {
    srv.evict.time_proc_running = true;
}

/// evictionTimeProc: one more slice of evictions; done when under the limit
/// or when nothing can be evicted.
pub fn eviction_time_proc(srv: &mut Server) {
    srv.evict.time_proc_running = false;
    if perform_evictions(srv) == EvictResult::Running {
        srv.evict.time_proc_running = true; // keep evicting
    }
}

/// updateMaxmemory (CONFIG SET maxmemory): warn when the new limit is below
/// what is in use, and start evicting from the event loop
/// (startEvictionTimeProc, as Redis 7.0.15): not inside CONFIG SET itself,
/// so a CONFIG SET inside MULTI evicts nothing under EXEC's feet, and the
/// DELs reach replicas and the AOF each on its own, not wrapped in the
/// command's MULTI.
pub fn update_maxmemory(srv: &mut Server) {
    if srv.config.maxmemory == 0 {
        return;
    }
    let used = crate::memory::used_memory().saturating_sub(free_memory_get_not_counted_memory(srv));
    if (srv.config.maxmemory as usize) < used {
        crate::log::server_log(
            crate::log::LogLevel::Warning,
            &format!(
                "WARNING: the new maxmemory value set via CONFIG SET ({}) is smaller than the current memory usage ({}). This will result in key eviction and/or the inability to accept new write commands depending on the maxmemory-policy.",
                srv.config.maxmemory, used
            ),
        );
    }
    start_eviction_time_proc(srv);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tenacity_time_limits() {
        assert_eq!(eviction_time_limit_us(0), 0);
        assert_eq!(eviction_time_limit_us(10), 500);
        assert_eq!(eviction_time_limit_us(11), 575);
        assert_eq!(eviction_time_limit_us(100), u64::MAX);
    }

    #[test]
    fn lfu_counter_decays_per_period() {
        // Counter 10 stamped at minute 100, decay time 1: 3 minutes later 7.
        let lru = (100 << 8) | 10;
        assert_eq!(lfu_decr_and_return(lru, 103, 1), 7);
        assert_eq!(lfu_decr_and_return(lru, 103, 0), 10);
        assert_eq!(lfu_decr_and_return(lru, 200, 1), 0);
        // The minutes wrap at 16 bits.
        assert_eq!(lfu_time_elapsed(2, 65534), 3);
    }

    #[test]
    fn lfu_log_incr_is_certain_at_init_and_capped() {
        assert_eq!(lfu_log_incr(LFU_INIT_VAL, 10), LFU_INIT_VAL + 1);
        assert_eq!(lfu_log_incr(255, 10), 255);
    }
}
