//! Memory accounting from jemalloc's own counters (Redis's zmalloc.c with
//! jemalloc): `used_memory` is what the allocator says is allocated, not an
//! estimate, so MEMORY USAGE and INFO memory tell the truth about encodings.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Mutex;

use tikv_jemalloc_ctl::{epoch, stats};

/// zmalloc_used_memory: the sum of the usable sizes of every live
/// allocation, exact at every moment like Redis's counter.
///
/// jemalloc's `stats.allocated` is not that: it counts blocks resting in
/// each thread's cache (tcache) as allocated, and moves in steps of tens of
/// KB as the cache fills and drains. jemalloc also keeps, per thread, the
/// bytes that thread allocated and freed ("thread.allocated" /
/// "thread.deallocated", in usable sizes, updated on every malloc and free
/// at no extra cost). Every thread that allocates registers its two
/// counters here when it starts (`register_thread`), and folds its net
/// total into `EXITED_NET` when it ends; the sum over all of them is the
/// exact live total. Memory one thread allocates and another frees
/// (lazyfree) shows up as +n on one and -n on the other: the sum is right.
pub fn used_memory() -> usize {
    let threads = THREADS.lock().unwrap_or_else(|e| e.into_inner());
    if threads.is_empty() {
        // Nothing registered (a tool or a test linking this crate).
        drop(threads);
        let _ = epoch::advance();
        return stats::allocated::read().unwrap_or(0);
    }
    let mut net = EXITED_NET.load(Ordering::Relaxed);
    for t in threads.iter() {
        net = net.wrapping_add(t.net());
    }
    net.max(0) as usize
}

/// One registered thread's jemalloc counters (pointers into that thread's
/// jemalloc state, valid until the thread exits, when it unregisters).
struct ThreadCounters {
    id: u64,
    allocated: *const u64,
    deallocated: *const u64,
}

// SAFETY: the pointers are only read, and only while the owning thread is
// registered (it unregisters under the same lock before it goes away).
unsafe impl Send for ThreadCounters {}

impl ThreadCounters {
    /// allocated - deallocated. Another thread may be updating the counters:
    /// each is one aligned 64-bit word, so the read sees an old or a new
    /// value, never a torn one; a read a few frees behind is as good as
    /// Redis's relaxed atomic load.
    fn net(&self) -> i64 {
        // SAFETY: valid while registered (see above).
        let (a, d) = unsafe {
            (
                std::ptr::read_volatile(self.allocated),
                std::ptr::read_volatile(self.deallocated),
            )
        };
        a.wrapping_sub(d) as i64
    }
}

/// The threads whose counters `used_memory` sums.
static THREADS: Mutex<Vec<ThreadCounters>> = Mutex::new(Vec::new());
/// The net totals of the threads that exited.
static EXITED_NET: AtomicI64 = AtomicI64::new(0);
static NEXT_THREAD_ID: AtomicU64 = AtomicU64::new(1);

/// This thread's registration: dropped when the thread exits (a thread
/// local's destructor), which folds its total into EXITED_NET.
struct Registration(u64);

impl Drop for Registration {
    fn drop(&mut self) {
        let mut threads = THREADS.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = threads.iter().position(|t| t.id == self.0) {
            let t = threads.swap_remove(i);
            EXITED_NET.fetch_add(t.net(), Ordering::Relaxed);
        }
    }
}

thread_local! {
    static REGISTRATION: std::cell::Cell<Option<Registration>> =
        const { std::cell::Cell::new(None) };
}

/// Count this thread's allocations in `used_memory`. Every thread that
/// allocates calls this first (the main thread in `run`, the bio and
/// lazyfree threads as they start); calling it twice does nothing. The
/// counters run from the thread's start, so what it allocated before the
/// call counts too.
pub fn register_thread() {
    REGISTRATION.with(|r| {
        let old = r.take();
        if old.is_some() {
            r.set(old);
            return;
        }
        // SAFETY: both names yield a `uint64_t *` into this thread's state.
        let read = |name: &[u8]| unsafe { tikv_jemalloc_ctl::raw::read::<*const u64>(name) };
        let (Ok(a), Ok(d)) = (read(b"thread.allocatedp\0"), read(b"thread.deallocatedp\0")) else {
            return;
        };
        let id = NEXT_THREAD_ID.fetch_add(1, Ordering::Relaxed);
        let counters = ThreadCounters {
            id,
            allocated: a,
            deallocated: d,
        };
        THREADS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(counters);
        r.set(Some(Registration(id)));
    });
}

/// The usable size jemalloc gives a request of `size` bytes (nallocx):
/// its size class.
pub fn usable_size_of(size: usize) -> usize {
    // SAFETY: nallocx only computes; flags 0 = default alignment.
    let n = unsafe { tikv_jemalloc_sys::nallocx(size, 0) };
    if n == 0 {
        size
    } else {
        n
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
/// to the same snapshot. allocated counts every jemalloc allocation of the
/// process (not Lua's, which uses libc's heap: script_lua::LuaVm); active adds the unused parts of the pages those sit in
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

/// set_jemalloc_bg_thread: start or stop jemalloc's background threads
/// (`background_thread`), which purge dirty pages on their own clock
/// (`dirty_decay_ms` / `muzzy_decay_ms`, 10 s by default) even when the
/// server is idle. Without them jemalloc purges only while it allocates or
/// frees, so after a FLUSHALL with no traffic RSS would stay up. Redis
/// calls this in InitServerLast and when `jemalloc-bg-thread` changes.
/// Err when jemalloc refuses (it then keeps its previous state).
pub fn set_jemalloc_bg_thread(enable: bool) -> Result<(), i32> {
    let mut val = enable;
    // SAFETY: "background_thread" is a bool mallctl: a new value of
    // sizeof(bool), no old value read.
    let rc = unsafe {
        tikv_jemalloc_sys::mallctl(
            c"background_thread".as_ptr(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            (&mut val as *mut bool).cast(),
            std::mem::size_of::<bool>(),
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(rc)
    }
}

/// Whether jemalloc's background threads are on (`background_thread`).
pub fn jemalloc_bg_thread() -> bool {
    // SAFETY: reads a bool mallctl.
    unsafe { tikv_jemalloc_ctl::raw::read::<bool>(b"background_thread\0") }.unwrap_or(false)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// This thread's entry in THREADS, by its registration id.
    fn own_net() -> i64 {
        let id = REGISTRATION.with(|r| {
            let reg = r.take();
            let id = reg.as_ref().map(|g| g.0);
            r.set(reg);
            id
        });
        let threads = THREADS.lock().unwrap();
        threads
            .iter()
            .find(|t| Some(t.id) == id)
            .map(|t| t.net())
            .expect("registered")
    }

    #[test]
    fn a_registered_threads_counters_follow_its_mallocs_and_frees() {
        let id = std::thread::spawn(|| {
            register_thread();
            register_thread(); // twice: still one entry
            let before = own_net();
            let v = vec![1u8; 1 << 20];
            let with = own_net();
            assert!(with - before >= 1 << 20, "{before} -> {with}");
            drop(v);
            assert_eq!(own_net(), before, "the free shows at once");
            let id = REGISTRATION.with(|r| {
                let reg = r.take();
                let id = reg.as_ref().map(|g| g.0);
                r.set(reg);
                id
            });
            let n = THREADS
                .lock()
                .unwrap()
                .iter()
                .filter(|t| Some(t.id) == id)
                .count();
            assert_eq!(n, 1);
            id.unwrap()
        })
        .join()
        .unwrap();
        // Gone from the list once the thread ended (its total folded in).
        assert!(!THREADS.lock().unwrap().iter().any(|t| t.id == id));
    }

    #[test]
    fn background_threads_follow_the_switch() {
        set_jemalloc_bg_thread(true).expect("jemalloc has background threads on Linux");
        assert!(jemalloc_bg_thread());
        set_jemalloc_bg_thread(false).unwrap();
        assert!(!jemalloc_bg_thread());
    }

    #[test]
    fn usable_size_is_jemallocs_size_class() {
        assert_eq!(usable_size_of(16 * 1024 + 40), 20480);
        let big = usable_size_of(100_000);
        assert!(big >= 100_000 && big.is_multiple_of(4096), "{big}");
    }
}
