//! The lazy-free log: a redis-lite extension, no Redis twin
//! (`DEBUG LAZYFREE-LOG`, server/src/debug.rs).
//!
//! Every value that leaves the keyspace (DEL, UNLINK, FLUSH*, expiry,
//! eviction, an overwrite) is freed in one of two places, and the log says
//! which and why: on the main thread, because its free effort is at most
//! LAZYFREE_THRESHOLD or because lazy freeing is off for that path (DEL,
//! `lazyfree-lazy-server-del no`, ...), while every client waits; or on
//! the `bio_lazy_free` thread, which fills in its own duration when it has
//! freed the value. An entry whose job is still queued shows no duration.
//!
//! Bounded (the oldest entries go first) and off by default: the server's
//! `free_object` tests one relaxed atomic ([`on`]) and does nothing more.
//! The ring sits behind a mutex because two threads write it; the worker
//! finds its entry by id in O(1) (ids are consecutive).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// LAZYFREE_LOG_MAX_LEN: entries kept. A FLUSHALL SYNC of a million keys
/// is one entry (the database), not a million.
pub const LAZYFREE_LOG_MAX_LEN: usize = 1024;
/// Bytes of a key kept in an entry.
const LAZYFREE_LOG_MAX_KEY: usize = 128;

static ON: AtomicBool = AtomicBool::new(false);

/// Whether frees are logged (one relaxed load).
#[inline]
pub fn on() -> bool {
    ON.load(Ordering::Relaxed)
}

/// DEBUG LAZYFREE-LOG ON / OFF.
pub fn set_on(on: bool) {
    ON.store(on, Ordering::Relaxed);
}

/// Where a value was freed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FreedIn {
    /// Inline, while the command (or the cycle) ran.
    Main,
    /// Handed to `bio_lazy_free`.
    Bio,
}

impl FreedIn {
    pub fn name(self) -> &'static str {
        match self {
            FreedIn::Main => "main",
            FreedIn::Bio => crate::BIO_LAZY_FREE_THREAD_NAME,
        }
    }
}

/// One freed value.
#[derive(Clone, Debug)]
pub struct LazyfreeLogEntry {
    pub id: u64,
    /// Unix time in microseconds when it left the keyspace.
    pub time_us: i64,
    /// The key ("" for a whole database).
    pub key: Vec<u8>,
    /// "set", "hash", ..., "database" for FLUSHDB/FLUSHALL.
    pub type_name: &'static str,
    pub encoding: &'static str,
    /// lazyfree_get_free_effort (the key count for a database).
    pub effort: u64,
    /// "del", "overwrite", "expire", "evict", "server-del", "flush".
    pub cause: &'static str,
    /// The running command ("" for the expire cycle, evictions before a
    /// command runs, and the like).
    pub command: &'static str,
    pub freed_in: FreedIn,
    /// Why there: "effort 1 <= LAZYFREE_THRESHOLD 64", "lazyfree-lazy-user-del no".
    pub why: String,
    /// How long the free took where it ran; None while a bio job waits.
    pub duration_us: Option<u64>,
    /// For a bio job: from the hand-over to the worker taking it.
    pub queue_wait_us: Option<u64>,
    /// When it was handed over (the worker's queue wait counts from here).
    queued: Instant,
}

struct Log {
    next_id: u64,
    entries: VecDeque<LazyfreeLogEntry>,
}

static LOG: Mutex<Log> = Mutex::new(Log {
    next_id: 0,
    entries: VecDeque::new(),
});

fn log() -> std::sync::MutexGuard<'static, Log> {
    LOG.lock().unwrap_or_else(|e| e.into_inner())
}

/// What the main thread knows of a free (the rest is filled in here).
pub struct FreeNote {
    pub key: Vec<u8>,
    pub type_name: &'static str,
    pub encoding: &'static str,
    pub effort: u64,
    pub cause: &'static str,
    pub command: &'static str,
    pub freed_in: FreedIn,
    pub why: String,
    pub duration_us: Option<u64>,
}

/// Append one entry; returns its id (for [`finish`]).
pub fn push(note: FreeNote) -> u64 {
    let time_us = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0);
    let mut key = note.key;
    key.truncate(LAZYFREE_LOG_MAX_KEY);
    let mut log = log();
    let id = log.next_id;
    log.next_id += 1;
    if log.entries.len() >= LAZYFREE_LOG_MAX_LEN {
        log.entries.pop_front();
    }
    log.entries.push_back(LazyfreeLogEntry {
        id,
        time_us,
        key,
        type_name: note.type_name,
        encoding: note.encoding,
        effort: note.effort,
        cause: note.cause,
        command: note.command,
        freed_in: note.freed_in,
        why: note.why,
        duration_us: note.duration_us,
        queue_wait_us: None,
        queued: Instant::now(),
    });
    id
}

/// The worker's side: job `id` started at `start` and took `duration_us`.
/// Nothing happens when the entry already left the ring (or RESET).
pub fn finish(id: u64, start: Instant, duration_us: u64) {
    let mut log = log();
    let Some(first) = log.entries.front().map(|e| e.id) else {
        return;
    };
    let Some(idx) = id.checked_sub(first) else {
        return;
    };
    if let Some(e) = log.entries.get_mut(idx as usize) {
        if e.id == id {
            e.duration_us = Some(duration_us);
            e.queue_wait_us = Some(start.saturating_duration_since(e.queued).as_micros() as u64);
        }
    }
}

/// The entries, newest first (DEBUG LAZYFREE-LOG).
pub fn entries() -> Vec<LazyfreeLogEntry> {
    log().entries.iter().rev().cloned().collect()
}

/// DEBUG LAZYFREE-LOG RESET (ids keep counting).
pub fn reset() {
    log().entries.clear();
}
