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

/// Give this thread's cached free blocks back to their arenas
/// ("thread.tcache.flush"): blocks in the cache still count as allocated,
/// so a measurement meant to be exact (used_memory_startup) flushes first.
pub fn thread_cache_flush() {
    // SAFETY: a void mallctl: no old or new value.
    unsafe {
        tikv_jemalloc_sys::mallctl(
            c"thread.tcache.flush".as_ptr(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
        );
    }
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

/// zmalloc_get_allocator_info: jemalloc's `stats.allocated`, `stats.active`
/// and `stats.resident`, read after one epoch advance so the three belong
/// to the same snapshot. allocated counts every allocation of the process
/// (Lua's too); active adds the unused parts of the pages those sit in
/// (fragmentation inside the allocator); resident adds the dirty pages
/// jemalloc keeps for reuse, which MEMORY PURGE gives back.
pub fn allocator_info() -> (usize, usize, usize) {
    let _ = epoch::advance();
    (
        stats::allocated::read().unwrap_or(0),
        stats::active::read().unwrap_or(0),
        stats::resident::read().unwrap_or(0),
    )
}

/// MALLCTL_ARENAS_ALL: the arena index that means "every arena" in
/// `arena.<i>.*` mallctl names (jemalloc.h).
pub const MALLCTL_ARENAS_ALL: u32 = 4096;

/// jemalloc_purge: hand every arena's dirty and muzzy pages back to the OS
/// (`arena.<MALLCTL_ARENAS_ALL>.purge`). Err when jemalloc refuses.
pub fn jemalloc_purge() -> Result<(), i32> {
    let name = format!("arena.{MALLCTL_ARENAS_ALL}.purge\0");
    // SAFETY: a void mallctl: no old value to read, no new value to write,
    // so all four pointers are null, as jemalloc requires for this name.
    let rc = unsafe {
        tikv_jemalloc_sys::mallctl(
            name.as_ptr().cast(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(rc)
    }
}

/// je_malloc_stats_print(NULL options): jemalloc's own human-readable
/// report (MEMORY MALLOC-STATS), collected into a string the way Redis's
/// inputCatSds callback does.
pub fn malloc_stats_print() -> String {
    /// Called by jemalloc with each piece of the report, NUL-terminated.
    extern "C" fn input_cat(out: *mut std::ffi::c_void, text: *const std::ffi::c_char) {
        // SAFETY: `out` is the Vec passed below, alive for the whole call;
        // jemalloc passes a valid C string.
        unsafe {
            let out = &mut *(out as *mut Vec<u8>);
            out.extend_from_slice(std::ffi::CStr::from_ptr(text).to_bytes());
        }
    }
    let mut out: Vec<u8> = Vec::new();
    // SAFETY: the callback only appends to `out`; null options = defaults.
    unsafe {
        tikv_jemalloc_sys::malloc_stats_print(
            Some(input_cat),
            (&mut out as *mut Vec<u8>).cast(),
            std::ptr::null(),
        );
    }
    String::from_utf8_lossy(&out).into_owned()
}
