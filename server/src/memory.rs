//! Memory accounting from jemalloc's own counters (Redis's zmalloc.c with
//! jemalloc): `used_memory` is what the allocator says is allocated, not an
//! estimate, so MEMORY USAGE and INFO memory tell the truth about encodings.

use tikv_jemalloc_ctl::{epoch, stats};

/// zmalloc_used_memory: bytes currently allocated by the process.
pub fn used_memory() -> usize {
    // jemalloc caches its statistics; advancing the epoch refreshes them.
    let _ = epoch::advance();
    stats::allocated::read().unwrap_or(0)
}

/// Bytes this thread allocated minus bytes it freed, since it started
/// (jemalloc's "thread.allocated" - "thread.deallocated"). Exact per
/// allocation and a plain memory read, like Redis's zmalloc counter; but
/// memory freed on another thread (lazyfree) does not show here.
pub fn thread_net_allocated() -> i64 {
    use tikv_jemalloc_ctl::thread::{allocatedp, deallocatedp, ThreadLocal};
    thread_local! {
        // Pointers to this thread's two counters, looked up once.
        static COUNTERS: Option<(ThreadLocal<u64>, ThreadLocal<u64>)> =
            allocatedp::read().ok().zip(deallocatedp::read().ok());
    }
    COUNTERS.with(|c| c.map_or(0, |(a, d)| a.get().wrapping_sub(d.get()) as i64))
}

/// Turn this thread's jemalloc cache on or off ("thread.tcache.enabled").
/// Blocks freed into that cache still count as allocated, and refilling it
/// takes many blocks at once, so with the cache `used_memory` moves in
/// steps of tens of KB. Redis counts every allocation itself (zmalloc); to
/// be as exact, evict.rs turns the cache off while maxmemory is set.
pub fn set_thread_cache(enabled: bool) {
    // SAFETY: "thread.tcache.enabled" is a bool.
    let _ = unsafe { tikv_jemalloc_ctl::raw::write(b"thread.tcache.enabled\0", enabled) };
}

/// Bytes in active pages (allocator_active).
pub fn allocator_active() -> usize {
    let _ = epoch::advance();
    stats::active::read().unwrap_or(0)
}

/// Bytes mapped from the OS and resident (allocator_resident).
pub fn allocator_resident() -> usize {
    let _ = epoch::advance();
    stats::resident::read().unwrap_or(0)
}

/// zmalloc_get_rss: resident set size from /proc/self/stat.
pub fn rss() -> usize {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0;
    };
    // Field 24 (1-based) is rss in pages; the command name may contain
    // spaces, so count from after the closing parenthesis.
    let after = match stat.rfind(')') {
        Some(i) => &stat[i + 1..],
        None => return 0,
    };
    let pages: usize = after
        .split_whitespace()
        .nth(21)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    pages * page_size()
}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as usize
    } else {
        4096
    }
}

/// Total physical memory (total_system_memory).
pub fn total_system_memory() -> usize {
    // SAFETY: sysconf has no preconditions.
    let pages = unsafe { libc::sysconf(libc::_SC_PHYS_PAGES) };
    if pages > 0 {
        pages as usize * page_size()
    } else {
        0
    }
}

/// bytesToHuman: `<n>B` under 1 KB, else two decimals and K/M/G/T/P.
pub fn bytes_to_human(n: u64) -> String {
    let d = n as f64;
    const K: f64 = 1024.0;
    if d < K {
        format!("{n}B")
    } else if d < K * K {
        format!("{:.2}K", d / K)
    } else if d < K * K * K {
        format!("{:.2}M", d / (K * K))
    } else if d < K * K * K * K {
        format!("{:.2}G", d / (K * K * K))
    } else if d < K * K * K * K * K {
        format!("{:.2}T", d / (K * K * K * K))
    } else {
        format!("{:.2}P", d / (K * K * K * K * K))
    }
}
