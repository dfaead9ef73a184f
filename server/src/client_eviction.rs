//! Client eviction, `maxmemory-clients` (Redis 7.0's networking.c and
//! server.c: getClientMemoryUsage, updateClientMemUsageAndBucket,
//! removeClientFromMemUsageBucket, evictClients).
//!
//! Key eviction (evict.rs) frees *data* when used memory passes maxmemory.
//! Client eviction frees *connections* when the memory all normal and
//! pub/sub clients hold together (their buffers, argv, MULTI queue,
//! watched keys, subscriptions, tracking prefixes) passes
//! `maxmemory-clients` (bytes, or a percentage of maxmemory). The biggest
//! clients go first; a client with CLIENT NO-EVICT ON, a replica, our
//! master and a MONITOR never go.
//!
//! How it stays cheap, as in Redis:
//! - Each client remembers what it was last measured at
//!   (`last_memory_usage`), and the server keeps the running sum per client
//!   type (`type_memory`, Redis's stat_clients_type_memory). A measure is a
//!   handful of additions (`get_client_memory_usage`), taken only where a
//!   client's memory changes: after its input is processed, after each
//!   command, after a write, when a pub/sub or tracking message is queued
//!   for it, and once a second in clientsCron.
//! - Evictable clients sit in *memory usage buckets* by the log2 of their
//!   size: bucket 0 holds everything up to 32 KB, then one bucket per power
//!   of two up to 4 GB and over. Moving a client between buckets is O(log N)
//!   (a BTreeMap keyed by insertion number, which keeps Redis's list order).
//!   `evict_clients` starts from the top bucket and frees clients until the
//!   sum is under the limit: it never looks at a client it does not free,
//!   except the ones it must skip (running, or already closing).
//!
//! The buckets exist only while maxmemory-clients is non-zero
//! (`apply_client_max_memory_usage`, the CONFIG SET hook). DEBUG
//! CLIENT-EVICTION prints them.
//!
//! The client running a command is out of `srv.clients` (networking.rs),
//! so it is passed in: if it is the one to go, it is marked
//! CLIENT_CLOSE_ASAP and its command does not run (Redis frees it and
//! processCommand returns with server.current_client NULL).

use std::collections::BTreeMap;

use mio::Token;

use crate::config::{Config, CLIENT_TYPE_NORMAL, CLIENT_TYPE_PUBSUB, CLIENT_TYPE_SLAVE};
use crate::log::{server_log, LogLevel};
use crate::networking::{
    Client, CLIENT_CLOSE_ASAP, CLIENT_MASTER, CLIENT_MONITOR, CLIENT_NO_EVICT, CLIENT_PUBSUB,
    CLIENT_SLAVE,
};
use crate::server::Server;

/// CLIENT_MEM_USAGE_BUCKET_MIN_LOG: the first bucket holds every client up
/// to 32 KB (2^15): below that there is nothing worth telling apart (an
/// idle client alone is ~20 KB of buffers).
pub const CLIENT_MEM_USAGE_BUCKET_MIN_LOG: u32 = 15;
/// CLIENT_MEM_USAGE_BUCKET_MAX_LOG: the last bucket holds every client of
/// 4 GB (2^32) and more.
pub const CLIENT_MEM_USAGE_BUCKET_MAX_LOG: u32 = 33;
/// CLIENT_MEM_USAGE_BUCKETS: 19 buckets.
pub const CLIENT_MEM_USAGE_BUCKETS: usize =
    (1 + CLIENT_MEM_USAGE_BUCKET_MAX_LOG - CLIENT_MEM_USAGE_BUCKET_MIN_LOG) as usize;
/// CLIENT_TYPE_MASTER: Redis's fourth client type. It has no output
/// buffer class (config.rs knows normal, replica, pubsub), but its memory
/// is summed on its own so that it never counts against the limit.
pub const CLIENT_TYPE_MASTER: usize = 3;
/// CLIENT_TYPE_COUNT.
pub const CLIENT_TYPE_COUNT: usize = 4;
/// getClientEvictionLimit's floor: a maxmemory-clients under 128 KB counts
/// as 128 KB, so a bad setting cannot cut off every connection (the one
/// that would fix it included).
pub const CLIENT_EVICTION_MIN_LIMIT: usize = 128 * 1024;

/// clientMemUsageBucket: the clients of one size class and their sum.
#[derive(Debug, Default)]
pub struct ClientMemUsageBucket {
    pub mem_usage_sum: usize,
    /// Insertion number -> client, so iteration goes oldest first, as
    /// Redis walks its list from the head.
    pub clients: BTreeMap<u64, Token>,
}

/// The server's side: the buckets (server.client_mem_usage_buckets, None
/// while maxmemory-clients is 0) and the per-type sums
/// (server.stat_clients_type_memory).
#[derive(Debug, Default)]
pub struct ClientMemState {
    pub buckets: Option<Vec<ClientMemUsageBucket>>,
    pub type_memory: [usize; CLIENT_TYPE_COUNT],
    /// The next insertion number (a client's listNode, in Redis).
    next_node: u64,
}

/// getClientType with the master as its own type (Redis's
/// CLIENT_TYPE_MASTER), for the memory sums.
pub fn client_mem_type(c: &Client) -> usize {
    if c.has_flag(CLIENT_MASTER) {
        return CLIENT_TYPE_MASTER;
    }
    if c.has_flag(CLIENT_SLAVE) && !c.has_flag(CLIENT_MONITOR) {
        return CLIENT_TYPE_SLAVE;
    }
    if c.has_flag(CLIENT_PUBSUB) {
        return CLIENT_TYPE_PUBSUB;
    }
    CLIENT_TYPE_NORMAL
}

/// The reply buffer's allocation: Redis's buf_usable_size plus its reply
/// list (getClientOutputBufferMemoryUsage), and the list's own array. A
/// command running under CLIENT REPLY OFF keeps the real buffer aside
/// (`reply_stash`): both count.
pub fn client_reply_memory(c: &Client) -> usize {
    c.reply.allocated() + c.reply_stash.as_ref().map_or(0, |s| s.allocated())
}

/// getClientMemoryUsage: everything one client holds, in Redis's terms:
/// the output buffer, the query buffer's allocation, the client struct,
/// the current command's arguments (their lengths plus one pointer each),
/// the MULTI queue and watched keys, the subscriptions and the tracking
/// prefixes (the per-client overhead only: the names themselves are shared
/// with the server's tables). CLIENT LIST's tot-mem is this number.
pub fn get_client_memory_usage(c: &Client) -> usize {
    let mut mem = client_reply_memory(c);
    // sdsZmallocSize: the allocation, header and size class included.
    mem += crate::networking::querybuf_alloc_size(&c.querybuf);
    mem += std::mem::size_of::<Client>();
    // Like Redis, only the argument lengths (argv_len_sum), not the unused
    // space around them: enough to spot a problematic client.
    let (argv_len_sum, argc) = crate::networking::client_argv_mem(c);
    mem += argv_len_sum + std::mem::size_of::<bytes::Bytes>() * argc;
    mem += crate::multi::multi_state_mem_overhead(c);
    mem += crate::pubsub::pubsub_mem_overhead(c);
    mem += crate::tracking::tracking_prefixes_mem_overhead(c);
    mem
}

/// getMemUsageBucket: the bucket of a client using `mem` bytes, by the
/// number of bits of `mem` (log2), clamped to the first and last bucket.
pub fn get_mem_usage_bucket(mem: usize) -> usize {
    let bits = usize::BITS - mem.leading_zeros();
    let idx = bits.clamp(
        CLIENT_MEM_USAGE_BUCKET_MIN_LOG,
        CLIENT_MEM_USAGE_BUCKET_MAX_LOG,
    );
    (idx - CLIENT_MEM_USAGE_BUCKET_MIN_LOG) as usize
}

/// updateClientMemoryUsage: measure the client again and move the
/// difference into the per-type sums.
pub fn update_client_memory_usage(st: &mut ClientMemState, c: &mut Client) {
    let mem = get_client_memory_usage(c);
    let t = client_mem_type(c);
    st.type_memory[c.last_memory_type] =
        st.type_memory[c.last_memory_type].saturating_sub(c.last_memory_usage);
    st.type_memory[t] += mem;
    c.last_memory_type = t;
    c.last_memory_usage = mem;
}

/// clientEvictionAllowed: client eviction is on, the client did not ask
/// for CLIENT NO-EVICT, and it is a normal or pub/sub client (a fake
/// client, a replica, our master are never evicted).
pub fn client_eviction_allowed(maxmemory_clients: i64, c: &Client) -> bool {
    if maxmemory_clients == 0 || c.has_flag(CLIENT_NO_EVICT) || c.stream.is_none() {
        return false;
    }
    matches!(client_mem_type(c), CLIENT_TYPE_NORMAL | CLIENT_TYPE_PUBSUB)
}

/// removeClientFromMemUsageBucket: take the client's last measure out of
/// its bucket's sum; unless it stays evictable (it is about to be put
/// back), out of the bucket too. A bucket entry from before the buckets
/// were last freed is simply not found.
pub fn remove_client_from_mem_usage_bucket(
    st: &mut ClientMemState,
    c: &mut Client,
    allow_eviction: bool,
) {
    let Some((b, node)) = c.mem_usage_bucket else {
        return;
    };
    if let Some(bucket) = st.buckets.as_mut().map(|v| &mut v[b]) {
        if bucket.clients.contains_key(&node) {
            bucket.mem_usage_sum = bucket.mem_usage_sum.saturating_sub(c.last_memory_usage);
            if !allow_eviction {
                bucket.clients.remove(&node);
            }
        } else {
            c.mem_usage_bucket = None;
        }
    }
    if !allow_eviction || st.buckets.is_none() {
        c.mem_usage_bucket = None;
    }
}

/// updateClientMemUsageAndBucket: measure the client and put it in the
/// bucket of its new size. Called wherever a client's memory changed
/// (see the top of the file). Returns whether the client is evictable;
/// when it is not, its measure is left as it was (clientsCron refreshes
/// it with `update_client_memory_usage`). A client already marked for
/// closing is left alone: it is on its way out, and an evicted one must
/// not come back into a bucket.
pub fn update_client_mem_usage_and_bucket(
    st: &mut ClientMemState,
    maxmemory_clients: i64,
    c: &mut Client,
) -> bool {
    if c.has_flag(CLIENT_CLOSE_ASAP) {
        return false;
    }
    let allow_eviction = client_eviction_allowed(maxmemory_clients, c) && st.buckets.is_some();
    remove_client_from_mem_usage_bucket(st, c, allow_eviction);
    if !allow_eviction {
        return false;
    }
    update_client_memory_usage(st, c);
    let b = get_mem_usage_bucket(c.last_memory_usage);
    let Some(buckets) = st.buckets.as_mut() else {
        return false;
    };
    buckets[b].mem_usage_sum += c.last_memory_usage;
    match c.mem_usage_bucket {
        Some((old, _)) if old == b => {}
        old => {
            if let Some((old, node)) = old {
                buckets[old].clients.remove(&node);
            }
            let node = st.next_node;
            st.next_node += 1;
            buckets[b].clients.insert(node, c.token);
            c.mem_usage_bucket = Some((b, node));
        }
    }
    true
}

/// The same for the client running now, which is out of `srv.clients`.
pub fn update_client_mem_usage(srv: &mut Server, c: &mut Client) -> bool {
    update_client_mem_usage_and_bucket(&mut srv.client_mem, srv.config.maxmemory_clients, c)
}

/// freeClient's part: the client leaves the sums and its bucket.
pub fn free_client_mem_usage(st: &mut ClientMemState, c: &mut Client) {
    remove_client_from_mem_usage_bucket(st, c, false);
    st.type_memory[c.last_memory_type] =
        st.type_memory[c.last_memory_type].saturating_sub(c.last_memory_usage);
    c.last_memory_usage = 0;
}

/// getClientEvictionLimit: maxmemory-clients in bytes (a percentage is of
/// maxmemory, and means nothing without it); 0 when there is no limit.
pub fn get_client_eviction_limit(config: &Config) -> usize {
    let limit = if config.maxmemory_clients < 0 && config.maxmemory > 0 {
        // The percentage is stored negated (config.rs PERCENT_CONFIG).
        let bytes = config.maxmemory as f64 * -(config.maxmemory_clients as f64) / 100.0;
        if bytes <= usize::MAX as f64 {
            bytes as usize
        } else {
            usize::MAX
        }
    } else if config.maxmemory_clients > 0 {
        config.maxmemory_clients as usize
    } else {
        return 0;
    };
    limit.max(CLIENT_EVICTION_MIN_LIMIT)
}

/// evictClients: while normal and pub/sub clients together hold at least
/// the limit, free the biggest evictable client, bucket by bucket from the
/// top. `current` is the client running a command (out of `srv.clients`):
/// returns true when it was the one evicted (it is then marked
/// CLIENT_CLOSE_ASAP and must not run its command).
pub fn evict_clients(srv: &mut Server, mut current: Option<&mut Client>) -> bool {
    if srv.client_mem.buckets.is_none() {
        return false;
    }
    let limit = get_client_eviction_limit(&srv.config);
    if limit == 0 {
        return false;
    }
    let mut evicted_current = false;
    let mut curr_bucket = CLIENT_MEM_USAGE_BUCKETS - 1;
    // The next insertion number to look at in the current bucket: clients
    // skipped stay in it, so the walk goes on after them.
    let mut cursor = 0u64;
    loop {
        let st = &srv.client_mem;
        if st.type_memory[CLIENT_TYPE_NORMAL] + st.type_memory[CLIENT_TYPE_PUBSUB] < limit {
            break;
        }
        let Some(buckets) = st.buckets.as_ref() else {
            break;
        };
        let next = buckets[curr_bucket]
            .clients
            .range(cursor..)
            .next()
            .map(|(n, t)| (*n, *t));
        let Some((node, token)) = next else {
            if curr_bucket == 0 {
                server_log(
                    LogLevel::Warning,
                    "Over client maxmemory after evicting all evictable clients",
                );
                break;
            }
            curr_bucket -= 1;
            cursor = 0;
            continue;
        };
        cursor = node + 1;
        if let Some(c) = current.as_deref_mut().filter(|c| c.token == token) {
            if c.has_flag(CLIENT_CLOSE_ASAP) {
                continue;
            }
            log_evicting(c);
            free_client_mem_usage(&mut srv.client_mem, c);
            c.flags |= CLIENT_CLOSE_ASAP;
            evicted_current = true;
        } else if let Some(c) = srv.clients.get(&token) {
            if c.has_flag(CLIENT_CLOSE_ASAP) {
                continue; // already going: its memory leaves when it is freed
            }
            log_evicting(c);
            // freeClient: gone at once, its memory with it.
            crate::networking::free_client(srv, token);
        } else {
            // Running further up the stack (a script's caller): not ours
            // to free here.
            continue;
        }
        srv.stats.evictedclients += 1;
    }
    evicted_current
}

fn log_evicting(c: &Client) {
    let info = crate::networking::client_info_string(c);
    server_log(
        LogLevel::Notice,
        &format!("Evicting client: {}", String::from_utf8_lossy(&info)),
    );
}

/// applyClientMaxMemoryUsage, the maxmemory-clients CONFIG SET hook:
/// turning eviction on creates the buckets and measures every client into
/// them; turning it off takes every client out and drops the buckets.
/// O(clients), once per change, as in Redis. The client running CONFIG
/// SET is measured right after its command (networking.rs).
pub fn apply_client_max_memory_usage(srv: &mut Server) {
    let on = srv.config.maxmemory_clients != 0;
    if on && srv.client_mem.buckets.is_some() {
        return; // it was on already: the buckets stand
    }
    if on {
        srv.client_mem.buckets = Some(
            (0..CLIENT_MEM_USAGE_BUCKETS)
                .map(|_| ClientMemUsageBucket::default())
                .collect(),
        );
    }
    let limit = srv.config.maxmemory_clients;
    for c in srv.clients.values_mut() {
        if on {
            update_client_mem_usage_and_bucket(&mut srv.client_mem, limit, c);
        } else {
            remove_client_from_mem_usage_bucket(&mut srv.client_mem, c, false);
        }
    }
    if !on {
        srv.client_mem.buckets = None;
    }
}

/// DEBUG CLIENT-EVICTION: each bucket's range, the memory of its clients
/// and how many they are.
// redis: debug.c debugCommand ("client-eviction")
pub fn debug_client_eviction(srv: &mut Server, c: &mut Client) {
    let Some(buckets) = srv.client_mem.buckets.as_ref() else {
        c.add_reply_error("ERR maxmemory-clients is disabled.");
        return;
    };
    let mut info = String::new();
    for (j, b) in buckets.iter().enumerate() {
        if j == 0 {
            info.push_str("bucket          0");
        } else {
            let from = 1usize << (j as u32 - 1 + CLIENT_MEM_USAGE_BUCKET_MIN_LOG);
            info.push_str(&format!("bucket {from:10}"));
        }
        if j == CLIENT_MEM_USAGE_BUCKETS - 1 {
            info.push_str("+            : ");
        } else {
            let to = (1usize << (j as u32 + CLIENT_MEM_USAGE_BUCKET_MIN_LOG)) - 1;
            info.push_str(&format!(" - {to:10}: "));
        }
        info.push_str(&format!(
            "tot-mem: {:10}, clients: {}\n",
            b.mem_usage_sum,
            b.clients.len()
        ));
    }
    c.add_reply_verbatim(info.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mem_usage_bucket_is_log2_clamped() {
        assert_eq!(get_mem_usage_bucket(0), 0);
        assert_eq!(get_mem_usage_bucket(1), 0);
        assert_eq!(get_mem_usage_bucket(32 * 1024 - 1), 0);
        assert_eq!(get_mem_usage_bucket(32 * 1024), 1);
        assert_eq!(get_mem_usage_bucket(64 * 1024 - 1), 1);
        assert_eq!(get_mem_usage_bucket(64 * 1024), 2);
        assert_eq!(get_mem_usage_bucket(1 << 32), CLIENT_MEM_USAGE_BUCKETS - 1);
        assert_eq!(
            get_mem_usage_bucket(usize::MAX),
            CLIENT_MEM_USAGE_BUCKETS - 1
        );
    }

    #[test]
    fn eviction_limit_has_a_floor_and_percentages() {
        let mut cfg = Config::default();
        assert_eq!(get_client_eviction_limit(&cfg), 0);
        cfg.maxmemory_clients = 1000;
        assert_eq!(get_client_eviction_limit(&cfg), CLIENT_EVICTION_MIN_LIMIT);
        cfg.maxmemory_clients = 3_000_000;
        assert_eq!(get_client_eviction_limit(&cfg), 3_000_000);
        // 7% of 6 MB, as the Tcl unit computes it.
        cfg.maxmemory_clients = -7;
        assert_eq!(get_client_eviction_limit(&cfg), 0);
        cfg.maxmemory = 6 * 1024 * 1024;
        assert_eq!(get_client_eviction_limit(&cfg), 440_401);
    }
}
