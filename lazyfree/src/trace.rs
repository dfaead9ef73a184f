//! The lazy-free worker's own track for the loop flight recorder
//! (server/src/recorder.rs).
//!
//! The recorder lives on the main thread; the `bio_lazy_free` worker is
//! another thread, so it keeps its own bounded list of the jobs it ran,
//! behind a mutex only it and a DUMP touch. While recording is off (the
//! default) the worker and `free_object_async` pay one relaxed load of
//! [`RECORDING`] per job and nothing else.
//!
//! Both tracks count microseconds from one [`epoch`], so that a trace
//! shows the UNLINK on the main thread and its free on the worker on one
//! time axis.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

/// Whether jobs are recorded: set by DEBUG RECORDER START / STOP.
pub static RECORDING: AtomicBool = AtomicBool::new(false);

/// BIO_TRACE_MAX_JOBS: the worker's list keeps the most recent this many
/// jobs (about 100 bytes each), so its memory is bounded however many
/// keys a client UNLINKs while recording.
pub const BIO_TRACE_MAX_JOBS: usize = 16 * 1024;

/// One job the worker ran, as the trace shows it.
#[derive(Clone, Debug)]
pub struct BioJobRecord {
    /// "set/hashtable", "database" (FLUSHALL ASYNC), ...
    pub what: String,
    /// The free effort (lazyfree_get_free_effort, or the key count).
    pub effort: u64,
    /// Microseconds since [`epoch`] when the main thread queued it.
    pub queued_us: u64,
    /// When the worker took it off the queue (queue wait = start - queued).
    pub start_us: u64,
    pub duration_us: u64,
}

static JOBS: Mutex<VecDeque<BioJobRecord>> = Mutex::new(VecDeque::new());
static EPOCH: OnceLock<Instant> = OnceLock::new();

/// The instant every trace timestamp counts from (first use fixes it).
pub fn epoch() -> Instant {
    *EPOCH.get_or_init(Instant::now)
}

/// Microseconds from [`epoch`] to `t` (0 for an instant before it).
pub fn micros_since_epoch(t: Instant) -> u64 {
    t.saturating_duration_since(epoch()).as_micros() as u64
}

/// Whether the recorder is on (one relaxed load).
#[inline]
pub fn recording() -> bool {
    RECORDING.load(Ordering::Relaxed)
}

/// The worker's side: append one finished job, dropping the oldest past
/// BIO_TRACE_MAX_JOBS.
pub fn record_job(job: BioJobRecord) {
    let mut jobs = JOBS.lock().unwrap_or_else(|e| e.into_inner());
    if jobs.len() == BIO_TRACE_MAX_JOBS {
        jobs.pop_front();
    }
    jobs.push_back(job);
}

/// A copy of the recorded jobs, oldest first (DEBUG RECORDER DUMP).
pub fn recorded_jobs() -> Vec<BioJobRecord> {
    let jobs = JOBS.lock().unwrap_or_else(|e| e.into_inner());
    jobs.iter().cloned().collect()
}

/// Forget the recorded jobs (DEBUG RECORDER RESET).
pub fn reset_jobs() {
    JOBS.lock().unwrap_or_else(|e| e.into_inner()).clear();
}
