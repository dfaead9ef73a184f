//! The child info pipe (Redis's childinfo.c): how a fork child tells its
//! parent how far it got and how much memory the fork is costing.
//!
//! A BGSAVE child, a diskless-replication child and a BGREWRITEAOF child
//! all share the parent's pages copy-on-write: every page the parent
//! writes while the child runs is copied, and that copy is the fork's real
//! memory cost. Only the child can measure it (its own `Private_Dirty`
//! pages in /proc/self/smaps), so it sends the figure to the parent through
//! one pipe that `redis_fork` opens for every persistence child:
//!
//! - while it works, about once a second (every 1024 keys, throttled so
//!   reading smaps costs at most 1/CHILD_COW_DUTY_CYCLE of its time), a
//!   CURRENT_INFO message: keys written so far and the current CoW. INFO
//!   persistence shows it as `current_cow_size`, `current_fork_perc`,
//!   `current_save_keys_processed`;
//! - when it is done, an RDB_COW_SIZE or AOF_COW_SIZE message: the parent
//!   keeps the peak as `rdb_last_cow_size` / `aof_last_cow_size`.
//!
//! The parent reads without blocking once a second from `server_cron`, and
//! once more when it reaps the child. A message is four little-endian u64s:
//! `[type, keys, cow bytes, when the CoW was measured (monotonic µs)]`.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicI32, Ordering};

use crate::log::{server_log, LogLevel};
use crate::server::Server;

/// The message types (childinfo.c childInfoType).
pub const CHILD_INFO_TYPE_CURRENT_INFO: u64 = 0;
pub const CHILD_INFO_TYPE_AOF_COW_SIZE: u64 = 1;
pub const CHILD_INFO_TYPE_RDB_COW_SIZE: u64 = 2;

/// CHILD_COW_DUTY_CYCLE: measuring CoW (reading smaps) may take at most
/// 1/100 of the child's time; the next measurement waits 100x the last
/// one's cost.
const CHILD_COW_DUTY_CYCLE: u64 = 100;

/// One message: type, keys, cow, cow_updated.
const MSG_LEN: usize = 32;

/// The write end, for the child (server.child_info_pipe[1]).
static CHILD_INFO_WRITE_FD: AtomicI32 = AtomicI32::new(-1);

/// The parent's view of the running child (server.stat_current_*).
#[derive(Default)]
pub struct CurrentChildInfo {
    /// The read end (server.child_info_pipe[0]).
    pipe: Option<OwnedFd>,
    /// A partial message left over from the last read.
    buf: Vec<u8>,
    pub cow_peak: u64,
    pub cow_bytes: u64,
    /// When the child measured `cow_bytes` (monotonic µs; 0: never).
    pub cow_updated_us: u64,
    pub save_keys_processed: u64,
    /// Keys in every db at the fork (dbTotalServerKeyCount).
    pub save_keys_total: u64,
}

/// The monotonic clock in µs; parent and child read the same clock.
pub fn monotonic_us() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime fills the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000 + ts.tv_nsec as u64 / 1000
}

/// openChildInfoPipe (before the fork): a non-blocking pipe. Failing is
/// not fatal: the child's reports are then lost, as in Redis.
pub fn open_child_info_pipe(srv: &mut Server) {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe2 fills `fds` with two new descriptors on success.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0 {
        close_child_info_pipe(srv);
        return;
    }
    // SAFETY: fds[0] is a fresh descriptor that nothing else owns.
    srv.child_info.pipe = Some(unsafe { OwnedFd::from_raw_fd(fds[0]) });
    srv.child_info.buf.clear();
    CHILD_INFO_WRITE_FD.store(fds[1], Ordering::Relaxed);
}

/// closeChildInfoPipe + the stat_current_* half of resetChildState.
pub fn close_child_info_pipe(srv: &mut Server) {
    let w = CHILD_INFO_WRITE_FD.swap(-1, Ordering::Relaxed);
    if w >= 0 {
        // SAFETY: the write end is ours (opened above) and used by no one
        // else in this process.
        unsafe { libc::close(w) };
    }
    srv.child_info = CurrentChildInfo::default();
}

/// The parent after a fork: start counting for the new child.
pub fn child_forked(srv: &mut Server) {
    let total = srv.dbs.iter().map(|d| d.size() as u64).sum();
    let ci = &mut srv.child_info;
    ci.cow_peak = 0;
    ci.cow_bytes = 0;
    ci.cow_updated_us = 0;
    ci.save_keys_processed = 0;
    ci.save_keys_total = total;
}

/// zmalloc_get_private_dirty(-1): the bytes of this process's pages that
/// were written since the fork (the copy-on-write cost).
pub fn private_dirty_bytes() -> u64 {
    let Ok(smaps) = std::fs::read_to_string("/proc/self/smaps") else {
        return 0;
    };
    smaps
        .lines()
        .filter_map(|l| l.strip_prefix("Private_Dirty:"))
        .filter_map(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .sum::<u64>()
        * 1024
}

/// The child's side: what sendChildInfoGeneric keeps in statics.
pub struct ChildInfoSender {
    /// "RDB" or "AOF rewrite", for the log line.
    pname: &'static str,
    cow: u64,
    peak: u64,
    sum: u64,
    updates: u64,
    cow_updated_us: u64,
    cow_cost_us: u64,
    last_progress_ms: u64,
}

impl ChildInfoSender {
    pub fn new(pname: &'static str) -> ChildInfoSender {
        ChildInfoSender {
            pname,
            cow: 0,
            peak: 0,
            sum: 0,
            updates: 0,
            cow_updated_us: 0,
            cow_cost_us: 0,
            last_progress_ms: 0,
        }
    }

    /// The save loop's hook (rdbSaveDb, rewriteAppendOnlyFileRio), called
    /// with the keys written so far: on the first key and then every 1024,
    /// at most once a second, report progress.
    pub fn progress(&mut self, keys: u64) {
        if keys.wrapping_sub(1) & 1023 != 0 {
            return;
        }
        let now = monotonic_us() / 1000;
        if now - self.last_progress_ms >= 1000 {
            self.send(CHILD_INFO_TYPE_CURRENT_INFO, keys);
            self.last_progress_ms = now;
        }
    }

    /// sendChildInfoGeneric: measure CoW (throttled for progress reports,
    /// always for the final one), log it, and send the message.
    pub fn send(&mut self, info_type: u64, keys: u64) {
        let fd = CHILD_INFO_WRITE_FD.load(Ordering::Relaxed);
        if fd < 0 {
            return;
        }
        let now = monotonic_us();
        let final_info = info_type != CHILD_INFO_TYPE_CURRENT_INFO;
        let due = self.cow_updated_us == 0
            || now - self.cow_updated_us > self.cow_cost_us * CHILD_COW_DUTY_CYCLE;
        if final_info || due {
            self.cow = private_dirty_bytes();
            self.cow_updated_us = monotonic_us();
            self.cow_cost_us = self.cow_updated_us - now;
            self.peak = self.peak.max(self.cow);
            self.sum += self.cow;
            self.updates += 1;
            if self.cow > 0 || final_info {
                server_log(
                    if final_info {
                        LogLevel::Notice
                    } else {
                        LogLevel::Verbose
                    },
                    &format!(
                        "Fork CoW for {}: current {} MB, peak {} MB, average {} MB",
                        self.pname,
                        self.cow >> 20,
                        self.peak >> 20,
                        (self.sum / self.updates) >> 20
                    ),
                );
            }
        }
        let mut msg = [0u8; MSG_LEN];
        for (i, v) in [info_type, keys, self.cow, self.cow_updated_us]
            .into_iter()
            .enumerate()
        {
            msg[i * 8..i * 8 + 8].copy_from_slice(&v.to_le_bytes());
        }
        // One write of less than PIPE_BUF bytes is atomic; a full pipe (the
        // parent not reading) drops the report, as in Redis.
        // SAFETY: writing a stack buffer to our own pipe descriptor.
        unsafe {
            libc::write(fd, msg.as_ptr().cast(), msg.len());
        }
    }
}

/// receiveChildInfo + updateChildInfo: drain the pipe without blocking.
pub fn receive_child_info(srv: &mut Server) {
    let Some(fd) = srv.child_info.pipe.as_ref().map(|f| f.as_raw_fd()) else {
        return;
    };
    let mut buf = [0u8; MSG_LEN * 16];
    loop {
        // SAFETY: reading into a stack buffer from our own descriptor.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n <= 0 {
            break;
        }
        srv.child_info.buf.extend_from_slice(&buf[..n as usize]);
    }
    while srv.child_info.buf.len() >= MSG_LEN {
        let m: Vec<u8> = srv.child_info.buf.drain(..MSG_LEN).collect();
        let word = |i: usize| u64::from_le_bytes(m[i * 8..i * 8 + 8].try_into().unwrap_or([0; 8]));
        update_child_info(srv, word(0), word(1), word(2), word(3));
    }
}

/// updateChildInfo: a progress report updates the current figures; the
/// final report records the fork's peak CoW for its kind.
fn update_child_info(srv: &mut Server, info_type: u64, keys: u64, cow: u64, cow_updated_us: u64) {
    let ci = &mut srv.child_info;
    ci.cow_peak = ci.cow_peak.max(cow);
    match info_type {
        CHILD_INFO_TYPE_CURRENT_INFO => {
            ci.cow_bytes = cow;
            ci.cow_updated_us = cow_updated_us;
            ci.save_keys_processed = keys;
        }
        CHILD_INFO_TYPE_AOF_COW_SIZE => srv.aof.stat_aof_cow_bytes = ci.cow_peak,
        CHILD_INFO_TYPE_RDB_COW_SIZE => srv.rdb.stat_rdb_cow_bytes = ci.cow_peak,
        _ => {}
    }
}

/// INFO persistence's current_* fields (genRedisInfoString).
pub fn info_fields(srv: &Server) -> [(&'static str, String); 6] {
    let ci = &srv.child_info;
    let fork_perc = if ci.save_keys_total > 0 {
        ci.save_keys_processed as f64 * 100.0 / ci.save_keys_total as f64
    } else {
        0.0
    };
    let age = if ci.cow_updated_us > 0 {
        monotonic_us().saturating_sub(ci.cow_updated_us) / 1_000_000
    } else {
        0
    };
    [
        ("current_cow_peak", ci.cow_peak.to_string()),
        ("current_cow_size", ci.cow_bytes.to_string()),
        ("current_cow_size_age", age.to_string()),
        ("current_fork_perc", format!("{fork_perc:.2}")),
        (
            "current_save_keys_processed",
            ci.save_keys_processed.to_string(),
        ),
        ("current_save_keys_total", ci.save_keys_total.to_string()),
    ]
}
